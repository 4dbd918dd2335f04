//! Throughput of `tfreq keys` on a TFRecord request log (framing, CRC, decode, key
//! counting; two workers), built from the SDK/TensorFlow test files and read from the page cache,
//! and on a log of classify and regress records only (`tf.train.Example`s, each checked
//! field by field: `src/scan/fingerprint/examples.rs`), generated here.
//!
//!     cargo bench --bench keys
//!
//! For a multi-gigabyte file on disk (memory-mapped), see the measurement in the
//! README's `tfreq keys` section.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tfreq::Method;
use tfreq::formats::{self, InputOptions};
use tfreq::formats::{encode_predict_log, encode_request_log};
use tfreq::wire::put_bytes_field;

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
        formats::write_record(&mut out, &reqs[(i * 7 + i / 5) % reqs.len()]);
        i += 1;
    }
    out
}

/// A `tf.train.Feature` map entry (`kind`: 1 bytes, 2 float, 3 int64 list) holding
/// `values` as the list's field 1.
fn feature(out: &mut Vec<u8>, name: &str, kind: u32, values: &[u8]) {
    let mut list = Vec::new();
    put_bytes_field(&mut list, 1, values);
    let mut f = Vec::new();
    put_bytes_field(&mut f, kind, &list);
    let mut e = Vec::new();
    put_bytes_field(&mut e, 1, name.as_bytes());
    put_bytes_field(&mut e, 2, &f);
    put_bytes_field(out, 1, &e);
}

/// Classify and regress records of 1 to 64 examples of five features each (the
/// features of `benches/make_realistic_log.rs`'s classify requests), 3,000 distinct
/// requests drawn again and again, 48 MiB: more distinct bytes than a worker keeps of
/// the records it printed (`src/scan/repeats.rs`), so most are checked field by field.
fn examples_log() -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut requests = Vec::new();
    for i in 0..3000u64 {
        let mut list = Vec::new();
        for _ in 0..1 + next() % 64 {
            let mut fs = Vec::new();
            feature(&mut fs, "age", 3, &[(next() % 100) as u8]);
            feature(&mut fs, "country", 1, b"se");
            let floats: Vec<u8> = (0..16)
                .flat_map(|_| (next() as f32).to_le_bytes())
                .collect();
            feature(&mut fs, "embedding", 2, &floats);
            let mut history = Vec::new();
            for _ in 0..next() % 40 {
                tfreq::wire::put_varint(&mut history, next() % (1 << 20));
            }
            feature(&mut fs, "history", 3, &history);
            feature(&mut fs, "title", 1, b"a title of a few words");
            let mut example = Vec::new();
            put_bytes_field(&mut example, 1, &fs);
            put_bytes_field(&mut list, 1, &example);
        }
        let mut input = Vec::new();
        put_bytes_field(&mut input, 1, &list);
        let mut spec = Vec::new();
        put_bytes_field(&mut spec, 1, b"ranker");
        let mut request = Vec::new();
        put_bytes_field(&mut request, 1, &spec);
        put_bytes_field(&mut request, 2, &input);
        let method = if i % 3 == 0 {
            Method::Regress
        } else {
            Method::Classify
        };
        requests.push(encode_request_log(method, &request).expect("an examples method"));
    }
    let mut out = Vec::new();
    while out.len() < 48 << 20 {
        // Skewed towards the first requests, as logged traffic is.
        let a = next() % requests.len() as u64;
        let b = next() % requests.len() as u64;
        formats::write_record(&mut out, &requests[a.min(b) as usize]);
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
    let examples = examples_log();
    let path = dir.path().join("examples.tfrecord");
    std::fs::write(&path, &examples).expect("written");
    g.throughput(Throughput::Bytes(examples.len() as u64));
    g.bench_function("scan::count 48 MiB log of classify/regress records", |b| {
        b.iter(|| {
            let c = tfreq::scan::count(&[path.as_path()], &opts, false);
            assert!(c.errors.is_empty(), "{:?}", c.errors);
            assert!(c.counts.unreadable.is_empty() && c.counts.requests > 0);
            c.counts
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
