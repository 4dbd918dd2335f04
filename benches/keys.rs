//! Throughput of `tfreq keys` on a TFRecord request log (framing, CRC, decode, key
//! counting; two workers), built in memory from the SDK/TensorFlow test files.
//!
//!     cargo bench --bench keys
//!
//! For a multi-gigabyte file on disk (memory-mapped), see the measurement in the
//! README's `tfreq keys` section.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tfreq::formats::{prediction_log::encode_predict_log, tfrecord, Hint};
use tfreq::scan::count_bytes;

fn log() -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let reqs: Vec<Vec<u8>> = [
        "tfs/faq_prod.bin",
        "tfs/faq_prod_batch4.bin",
        "tfs/seed_content.bin",
        "tfs/seed_typed.bin",
    ]
    .iter()
    .map(|f| encode_predict_log(&std::fs::read(dir.join(f)).expect("test data")))
    .collect();
    let mut out = Vec::new();
    let mut i = 0usize;
    while out.len() < 64 << 20 {
        tfrecord::write_record(&mut out, &reqs[(i * 7 + i / 5) % reqs.len()]);
        i += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let data = Bytes::from(log());
    let mut g = c.benchmark_group("keys");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function("count_bytes 64 MiB TFRecord log", |b| {
        b.iter(|| count_bytes(data.clone(), 0, Hint::Auto, false).expect("counts"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
