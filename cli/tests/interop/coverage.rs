//! `keys` / `warmup` counting on a generated mixed log (several executor keys and
//! shapes, other log kinds, more records than one worker batch) and on SDK-written files.

use crate::common::data_dir;
use bytes::Bytes;
use tfreq::analysis::KeyCounts;
use tfreq::formats::{self, InputOptions, encode_predict_log};
use tfreq::{DType, Error, TFRequest, WireFormat};

/// `scan::count` over `paths` read as `opts` says; the first unreadable file's error.
fn count_with(
    paths: &[&std::path::Path],
    opts: &InputOptions,
    keep: bool,
) -> Result<KeyCounts, Error> {
    let c = tfreq::scan::count(paths, opts, keep);
    match c.errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(c.counts),
    }
}

fn count_files(paths: &[&std::path::Path], keep: bool) -> Result<KeyCounts, Error> {
    count_with(paths, &InputOptions::new(), keep)
}

/// Counts a log held in memory, written to a file first.
fn count_bytes(log: Bytes, keep: bool) -> Result<KeyCounts, Error> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log.tfrecord");
    std::fs::write(&p, &log).unwrap();
    count_files(&[p.as_path()], keep)
}

fn request(kind: usize) -> Vec<u8> {
    let mut r = TFRequest::for_wire("serving_default", WireFormat::TfServing);
    match kind {
        0 => {
            r.add_feed("x", &[1, 2], DType::Float, vec![1.0f32, 2.0])
                .unwrap();
            r.add_fetch("y");
        }
        1 => {
            r.add_feed("x", &[3, 2], DType::Float, vec![0.5f32; 6])
                .unwrap();
            r.add_fetch("y");
        }
        2 => {
            r.add_feed("x", &[1, 2], DType::Float, vec![1.0f32, 2.0])
                .unwrap();
            r.add_feed("ids", &[2], DType::Int64, vec![7i64, 8])
                .unwrap();
            r.add_fetch("y").add_fetch("z");
        }
        _ => {
            r.add_feed("q", &[1], DType::String, vec!["private text"])
                .unwrap();
        }
    }
    r.to_tf_serving_bytes("m").unwrap()
}

/// A log of `n` records: kinds chosen by a fixed pattern, every 10th a classify_log.
fn mixed_log(n: usize) -> (Vec<u8>, [u64; 4], u64) {
    let reqs: Vec<Vec<u8>> = (0..4).map(|k| encode_predict_log(&request(k))).collect();
    let classify = [0x12u8, 0x00]; // PredictionLog{classify_log{}}
    let mut out = Vec::new();
    let mut counts = [0u64; 4];
    let mut skipped = 0;
    for i in 0..n {
        if i % 10 == 9 {
            formats::write_record(&mut out, &classify);
            skipped += 1;
            continue;
        }
        let k = (i * 7 + i / 3) % 4;
        counts[k] += 1;
        formats::write_record(&mut out, &reqs[k]);
    }
    (out, counts, skipped)
}

#[test]
fn counts_each_key_of_a_mixed_log() {
    let (log, counts, skipped) = mixed_log(5000);
    let cov = count_bytes(Bytes::from(log), true).unwrap();
    assert_eq!(cov.requests, counts.iter().sum::<u64>());
    assert_eq!(cov.skipped, skipped);
    assert_eq!(cov.keys.len(), 4);
    let groups = cov.executor_keys();
    assert_eq!(groups.len(), 3); // kinds 0 and 1 share an executor key
    for (k, want) in counts.iter().enumerate() {
        let msg = tfreq::decode(&request(k)).unwrap();
        let key = tfreq::analysis::ShapeKey::of(&msg);
        assert_eq!(cov.keys[&key].count, *want, "kind {k}");
    }
    let xy = groups
        .iter()
        .find(|g| g.key.feeds.len() == 1 && g.key.feeds.contains("x"))
        .unwrap();
    assert_eq!(xy.count, counts[0] + counts[1]);
    assert_eq!(xy.shapes.len(), 2);
    // The representative is the first occurrence in file order, whatever the threads did.
    let first: Vec<usize> = (0..4)
        .map(|k| {
            (0..5000)
                .find(|i| i % 10 != 9 && (i * 7 + i / 3) % 4 == k)
                .unwrap()
        })
        .collect();
    for (k, s) in cov.shape_keys() {
        let kind = (0..4)
            .find(|&j| tfreq::analysis::ShapeKey::of(&tfreq::decode(&request(j)).unwrap()) == *k)
            .unwrap();
        assert_eq!(s.first.entry, first[kind]);
        assert!(s.representative.is_some());
    }
}

#[test]
fn a_bad_record_in_a_big_log_is_reported_by_number() {
    let (mut log, _, _) = mixed_log(3000);
    // Find record 2100's offset by walking the framing, then flip a data byte.
    let rec = formats::Records::new(Bytes::from(log.clone()))
        .nth(2100)
        .unwrap()
        .unwrap();
    log[rec.data_offset() + 3] ^= 0x10;
    let err = count_bytes(Bytes::from(log), false).unwrap_err();
    assert!(err.to_string().contains("record 2100"), "{err}");
}

#[test]
fn counts_sdk_files() {
    let files: Vec<std::path::PathBuf> = [
        "eas/faq_prod.bin",
        "eas/faq_prod_reordered.bin",
        "eas/faq_prod_batch4.bin",
        "eas/faq_warmup.bin",
        "tfrecord/warmup_predict.tfrecord",
        "tfrecord/warmup_mixed.tfrecord",
    ]
    .iter()
    .map(|f| data_dir().join(f))
    .collect();
    let paths: Vec<&std::path::Path> = files.iter().map(|p| p.as_path()).collect();
    let cov = count_files(&paths, false).unwrap();
    // 4 bare requests, 3 + 1 predict_log records, and warmup_mixed's classify, regress
    // and multi-inference records (counted beside predict keys); its 2 records without a
    // log_type are skipped.
    assert_eq!(cov.requests, 11);
    assert_eq!(cov.skipped, 2);
    let groups = cov.executor_keys();
    let counts: Vec<u64> = groups.iter().map(|g| g.count).collect();
    assert_eq!(counts.iter().sum::<u64>(), 11);
    let examples: Vec<String> = groups
        .iter()
        .filter(|g| g.key.method != tfreq::Method::Predict)
        .map(|g| g.key.to_string())
        .collect();
    assert_eq!(
        examples,
        [
            "model \"m\", classify classify_x_to_y: (the signature's serialized-examples input) -> (its outputs)",
            "model \"m\", regress regress_x_to_y: (the signature's serialized-examples input) -> (its outputs)",
            "model \"m\", multi_inference classify_x_to_y,regress_x_to_y: (the signature's serialized-examples input) -> (its outputs)",
        ]
    );
    // faq_prod, its reordered copy and batch4 share a key: the set, not the order, counts.
    let faq = groups
        .iter()
        .find(|g| g.key.feeds.contains("input_holder") && g.key.feeds.len() == 3)
        .unwrap();
    assert_eq!((faq.count, faq.shapes.len()), (3, 2), "{faq:?}");
    assert_eq!(groups.len(), 7);
    assert_eq!(cov.keys.len(), 9);
}

#[test]
fn counts_rest_json_lines_with_model_dtypes() {
    let meta = std::fs::read(data_dir().join("models/faq.metadata.json")).unwrap();
    let d = tfreq::formats::dtypes_from_metadata(&meta, "serving_default").unwrap();
    let p = data_dir().join("rest/faq_prod_log.jsonl");
    let cov = count_with(&[p.as_path()], &InputOptions::new().dtypes(d), false).unwrap();
    assert_eq!(cov.requests, 4);
    let groups = cov.executor_keys();
    assert_eq!(groups.len(), 1);
    let counts: Vec<u64> = groups[0].shapes.iter().map(|s| s.1).collect();
    assert_eq!(counts, vec![2, 1, 1]);
    assert!(
        groups[0].key.fetch_all,
        "REST requests have no output_filter"
    );
    // Without dtypes, JSON cannot be read.
    assert!(count_files(&[p.as_path()], false).is_err());
}

#[test]
fn many_files_the_first_bad_one_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let good = data_dir().join("eas/faq_prod.bin");
    let mut paths = Vec::new();
    for i in 0..9 {
        let p = dir.path().join(format!("f{i}.bin"));
        if i == 4 || i == 7 {
            std::fs::write(&p, [0x12u8, 0x05, 0x0a]).unwrap(); // truncated
        } else {
            std::fs::copy(&good, &p).unwrap();
        }
        paths.push(p);
    }
    let refs: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
    let err = count_files(&refs, false).unwrap_err().to_string();
    assert!(err.contains("f4.bin"), "{err}");
    let ok: Vec<&std::path::Path> = refs
        .iter()
        .copied()
        .filter(|p| !p.ends_with("f4.bin") && !p.ends_with("f7.bin"))
        .collect();
    let c = count_files(&ok, true).unwrap();
    assert_eq!(c.requests, 7);
    let (_, s) = c.shape_keys()[0];
    assert_eq!(
        s.first.file, 0,
        "representative is the first file's, whatever the threads did"
    );
}
