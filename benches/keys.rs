//! Throughput of `tfreq keys` on a TFRecord request log (framing, CRC, decode, key
//! counting; two workers), built from the SDK/TensorFlow test files and read from the page cache.
//!
//!     cargo bench --bench keys
//!
//! For a multi-gigabyte file on disk (memory-mapped), see the measurement in the
//! README's `tfreq keys` section.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tfreq::formats::{prediction_log::encode_predict_log, tfrecord, InputOptions};

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
    // Written to a file once: the bench reads it from the page cache, as `keys` does.
    let data = log();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("log.tfrecord");
    std::fs::write(&path, &data).expect("written");
    let opts = InputOptions::new();
    let mut g = c.benchmark_group("keys");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function("scan::count 64 MiB TFRecord log", |b| {
        b.iter(|| {
            let c = tfreq::scan::count(&[path.as_path()], &opts, false);
            assert!(c.errors.is_empty(), "{:?}", c.errors);
            c.counts
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
