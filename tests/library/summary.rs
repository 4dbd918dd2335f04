//! `keys` summaries merge exactly (docs/keys.md): for any set of logs, any split of it into
//! shards and any order of merging, merging the shards' summaries gives the summary of one
//! run over every log — the same document, byte for byte.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tfreq::analysis::Summary;
use tfreq::formats::encode_predict_log;
use tfreq::formats::frame;

/// Requests of both wire formats, several keys and shapes.
const REQUESTS: &[&str] = &[
    "tfs/faq_prod.bin",
    "tfs/faq_prod_batch4.bin",
    "tfs/seed_typed.bin",
    "tfs/seed_content.bin",
    "eas/faq_prod.bin",
    "eas/faq_warmup.bin",
    "eas/spec_vector.bin",
];

fn data(name: &str) -> Vec<u8> {
    std::fs::read(Path::new("tests/data").join(name)).unwrap()
}

/// A file: a bare request (`Bare(i)`) or a TFRecord log of PredictionLogs of requests.
#[derive(Debug, Clone)]
enum File {
    Bare(usize),
    Log(Vec<usize>),
}

fn write(dir: &Path, i: usize, f: &File) -> PathBuf {
    let (name, bytes) = match f {
        File::Bare(r) => (format!("f{i:02}.bin"), data(REQUESTS[*r])),
        File::Log(rs) => {
            let tfs: Vec<usize> = rs.iter().map(|r| r % 4).collect();
            let logs: Vec<Vec<u8>> = tfs
                .iter()
                .map(|r| encode_predict_log(&data(REQUESTS[*r])))
                .collect();
            (
                format!("f{i:02}.tfrecord"),
                frame(logs.iter().map(Vec::as_slice)),
            )
        }
    };
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// What `tfreq keys --format json` computes: the files counted in path order.
fn summary(paths: &[PathBuf]) -> Summary {
    let mut paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    paths.sort();
    let cov = tfreq::scan::count(&paths, &Default::default(), false).counts;
    Summary::of(&cov)
}

fn file() -> impl Strategy<Value = File> {
    prop_oneof![
        (0..REQUESTS.len()).prop_map(File::Bare),
        proptest::collection::vec(0..4usize, 1..12).prop_map(File::Log),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn merged_shards_are_one_run(
        files in proptest::collection::vec(file(), 1..8),
        shard_of in proptest::collection::vec(0..4usize, 8),
        order in Just(()).prop_perturb(|_, mut rng| {
            let mut o: Vec<usize> = (0..4).collect();
            for i in (1..o.len()).rev() {
                o.swap(i, (rng.next_u32() as usize) % (i + 1));
            }
            o
        }),
        pairwise in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = files.iter().enumerate().map(|(i, f)| write(dir.path(), i, f)).collect();
        let whole = summary(&paths);

        let mut shards: Vec<Vec<PathBuf>> = vec![Vec::new(); 4];
        for (i, p) in paths.iter().enumerate() {
            shards[shard_of[i]].push(p.clone());
        }
        let mut parts: Vec<Summary> = order.iter().map(|&k| summary(&shards[k])).collect();
        let merged = if pairwise {
            // ((a + b) + (c + d)): another association than the left fold.
            while parts.len() > 1 {
                let b = parts.pop().unwrap();
                let mut a = parts.pop().unwrap();
                a.merge(b);
                parts.insert(0, a);
            }
            parts.pop().unwrap()
        } else {
            let mut m = Summary::empty();
            for p in parts {
                m.merge(p);
            }
            m
        };
        prop_assert_eq!(merged.to_json(), whole.to_json());
        prop_assert_eq!(Summary::from_json(&whole.to_json()).unwrap(), whole);
    }
}

#[test]
fn a_summary_counts_and_names_what_it_read() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), 0, &File::Log(vec![0, 0, 1, 2]));
    let b = write(dir.path(), 1, &File::Bare(4));
    let s = summary(&[b.clone(), a.clone()]);
    assert_eq!(s.schema, 1);
    assert_eq!(s.requests, 5);
    assert_eq!(
        s.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
        [a.display().to_string(), b.display().to_string()]
    );
    assert_eq!(s.files[1].bytes, data(REQUESTS[4]).len() as u64);
    // The FAQ key of model "faq": faq_prod twice in the log, faq_prod_batch4 once. The
    // bare EAS faq_prod names no model: a key of its own (one session per model).
    let top = &s.keys[0];
    assert_eq!(top.model.as_deref(), Some("faq"));
    assert_eq!(top.count, 3);
    assert_eq!(
        top.shapes.iter().map(|x| x.count).collect::<Vec<_>>(),
        [2, 1]
    );
    let eas: Vec<_> = s.keys.iter().filter(|k| k.model.is_none()).collect();
    assert_eq!(eas.len(), 1);
    assert_eq!(
        (eas[0].count, eas[0].feeds.clone(), eas[0].fetches.clone()),
        (1, top.feeds.clone(), top.fetches.clone())
    );
    assert_eq!(top.shapes[0].first.file, a.display().to_string());
    assert_eq!(top.shapes[0].first.record, Some(0));
    assert_eq!(top.shapes[1].first.record, Some(2));
    assert_eq!(s.executor_keys, s.keys.len());
}

#[test]
fn other_schemas_and_other_documents_are_refused() {
    let err = Summary::from_json(r#"{"schema": 2}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("schema 2"), "{err}");
    let err = Summary::from_json(r#"{"requests": 1}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no \"schema\""), "{err}");
    let err = Summary::from_json("[1, 2").unwrap_err().to_string();
    assert!(err.contains("line 1"), "{err}");
    let mut s = Summary::empty().to_json();
    s.insert_str(1, r#""extra": 1, "#);
    assert!(Summary::from_json(&s).is_err());
}
