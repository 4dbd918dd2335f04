//! Replays what fuzzing found, on the stable toolchain: every fuzz target's body
//! (`tfreq::fuzzing`) over the committed minimized corpus (`tests/corpus/fuzz/<target>/`), the
//! seed files (`tests/data/**/*.bin`) and the inputs that once failed
//! (`tests/corpus/regressions/`). A panic here is a bug the fuzzer found.
//! `fuzz/Cargo.toml` must list every target of `tfreq::fuzzing::TARGETS`.

use std::path::{Path, PathBuf};

use tfreq::fuzzing;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn replay(target: &str, paths: &[PathBuf]) {
    for p in paths {
        let data = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let r = std::panic::catch_unwind(|| fuzzing::run(target, &data));
        match r {
            Ok(known) => assert!(known, "no fuzz target {target}"),
            Err(_) => panic!("fuzz target {target} fails on {}", p.display()),
        }
    }
}

#[test]
fn committed_corpus_replays_clean() {
    let mut total = 0;
    for t in fuzzing::TARGETS {
        let mut paths = Vec::new();
        files(&root().join("tests/corpus/fuzz").join(t), &mut paths);
        total += paths.len();
        replay(t, &paths);
    }
    assert!(total > 0, "no committed corpus under tests/corpus/fuzz");
}

/// The seed files of a target (as `fuzz/seed.sh` picks them), by extension.
fn seed_extensions(target: &str) -> &'static [&'static str] {
    match target {
        "containers" => &["bin", "tfrecord", "txt"],
        "saved_model" => &["pb"],
        "model_metadata" => &["json", "txt"],
        "rest_json_build" => &["json", "jsonl"],
        "text_format_build" => &["txt"],
        "text_detect" => &["txt", "pbtxt", "json", "md"],
        "net_response" => &["bin", "json"],
        _ => &["bin"],
    }
}

#[test]
fn seed_files_replay_clean_through_every_target() {
    let mut all = Vec::new();
    files(&root().join("tests/data"), &mut all);
    for t in fuzzing::TARGETS {
        let exts = seed_extensions(t);
        let paths: Vec<PathBuf> = all
            .iter()
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| exts.contains(&e))
            })
            .cloned()
            .collect();
        assert!(!paths.is_empty(), "no seeds for {t}");
        replay(t, &paths);
    }
}

#[test]
fn every_target_is_built_by_cargo_fuzz() {
    let manifest = std::fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap();
    for t in fuzzing::TARGETS {
        assert!(
            manifest.contains(&format!("name = \"{t}\"")),
            "{t} missing from fuzz/Cargo.toml"
        );
        assert!(root().join(format!("fuzz/fuzz_targets/{t}.rs")).exists());
    }
}

/// Each regression input is named `<target>-<what went wrong>.bin`.
fn regression(name: &str) {
    let p = root()
        .join("tests/corpus/regressions")
        .join(format!("{name}.bin"));
    let target = name.split('-').next().unwrap();
    replay(target, &[p]);
}

#[test]
fn every_regression_input_replays_clean() {
    let mut paths = Vec::new();
    files(&root().join("tests/corpus/regressions"), &mut paths);
    for p in &paths {
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        regression(&stem);
    }
}

// Found by the fuzzer, fixed in the library; one test per bug.

/// The EAS spec vector decoded as TF Serving: the shape's unknown field (EAS dims) was
/// re-encoded at the tensor level, where field 3 means something else.
#[test]
fn encode_roundtrip_keeps_nested_unknown_fields_in_place() {
    regression("encode_roundtrip-nested_unknown_flattened");
}

/// A packed `bool_val` of length 0 decoded as a present, empty field; re-encoding
/// (correctly) dropped it and the two messages differed.
#[test]
fn encode_roundtrip_empty_packed_field_is_absent() {
    regression("encode_roundtrip-empty_packed_field");
}
