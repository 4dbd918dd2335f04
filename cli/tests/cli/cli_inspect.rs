//! `tfreq inspect` as a user runs it: on files the real SDKs wrote, and on bad input.

use crate::common::{s as path, tfreq};

#[test]
fn seed_summary_names_signature_feeds_and_fetches() {
    let out = tfreq()
        .args(["inspect", &path("eas/seed_warm_up.bin")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("EAS PredictRequest"), "{s}");
    assert!(s.contains("signature: serving_default"), "{s}");
    for (name, dtype, shape, count) in [
        ("sentence1", "DT_INT32", "[200, 15]", "3000"),
        ("sentence2", "DT_INT32", "[200, 15]", "3000"),
        ("y", "DT_INT32", "[200, 2]", "400"),
        ("keep_rate", "DT_FLOAT", "[]", "1"),
        ("images", "DT_FLOAT", "[1, 784]", "784"),
    ] {
        let line = s
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} row: {s}"));
        for cell in [dtype, shape, count] {
            assert!(line.contains(cell), "{name}: {cell} missing in {line:?}");
        }
    }
    assert!(
        s.contains("fetches (2): sorted_labels, sorted_probs"),
        "{s}"
    );
}

#[test]
fn tf_serving_summary_shows_model_spec_and_tensor_content() {
    let out = tfreq()
        .args(["inspect", &path("tfs/seed_content.bin")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("TF Serving PredictRequest"), "{s}");
    assert!(s.contains("model: \"my_model\""), "{s}");
    let images = s
        .lines()
        .find(|l| l.trim_start().starts_with("images "))
        .unwrap();
    assert!(
        images.contains("tensor_content") && images.contains("784") && images.contains("1.0, 1.0"),
        "{images}"
    );
}

#[test]
fn text_output_is_python_print_for_both_formats() {
    for (dir, file) in [
        ("eas", "seed_warm_up"),
        ("eas", "strings_binary"),
        ("eas", "response"),
        ("eas", "unicode_names"),
        ("tfs", "seed_content"),
        ("tfs", "dtype_half_typed"),
        ("tfs", "newer_fields"),
        ("tfs", "response"),
        ("tfs", "zero_dim"),
    ] {
        let out = tfreq()
            .args([
                "inspect",
                "--format",
                "text",
                &path(&format!("{dir}/{file}.bin")),
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{file}");
        let python = crate::common::read(dir, &format!("{file}.txt"));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&python),
            "{dir}/{file}"
        );
    }
}

#[test]
fn json_output_parses_and_carries_the_request() {
    let out = tfreq()
        .args([
            "inspect",
            "--format",
            "json",
            "--values",
            "all",
            &path("tfs/faq_prod.bin"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(v["wire"], "tf-serving");
    assert_eq!(v["kind"], "request");
    assert_eq!(v["model_spec"]["name"], "faq");
    assert_eq!(
        v["fetches"],
        serde_json::json!(["sorted_labels", "sorted_probs", "model_version_id"])
    );
    let threshold = v["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "threshold")
        .unwrap();
    assert_eq!(threshold["dtype"], "DT_FLOAT");
    assert_eq!(threshold["shape"], serde_json::json!([]));
    // Several files: one array.
    let out = tfreq()
        .args([
            "inspect",
            "-f",
            "json",
            &path("eas/spec_vector.bin"),
            &path("tfs/spec_vector.bin"),
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(v.as_array().map(|a| a.len()), Some(2));
}

fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tfreq-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn bad_inputs_exit_2_with_file_and_offset() {
    // (The empty file is the valid empty request: cli/tests/cli/detect.rs.)
    let seed = crate::common::read("eas", "seed_warm_up.bin");
    let mut noise = Vec::new();
    let mut x: u32 = 12345;
    for _ in 0..4096 {
        x = x.wrapping_mul(1664525).wrapping_add(1013904223);
        noise.push((x >> 24) as u8);
    }
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated.bin", seed[..100].to_vec()),
        ("random.bin", noise),
        (
            "pdf.bin",
            b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n".to_vec(),
        ),
    ];
    for (name, bytes) in cases {
        let p = temp_file(name, &bytes);
        let out = tfreq().args(["inspect"]).arg(&p).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(name), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(err.contains("at byte"), "{name}: {err}");
    }
    let out = tfreq()
        .args(["inspect", "/nonexistent/warm_up.bin"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Forcing the wrong format is an error with a field path, not a silent mis-parse.
    let out = tfreq()
        .args([
            "inspect",
            "--wire",
            "tf-serving",
            &path("eas/seed_warm_up.bin"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn stdin_is_read_with_dash() {
    let out = tfreq()
        .args(["inspect", "-"])
        .write_stdin(crate::common::read("eas", "spec_vector.bin"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout).unwrap().contains("DT_FLOAT"));
}

// Decode errors of hand-broken bytes: one line, the file name, exit 2.

#[test]
fn the_cli_prints_decode_errors_on_one_line_with_the_file() {
    let dir = std::env::temp_dir().join(format!("tfreq-adv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut b = crate::common::read("eas", "spec_vector.bin");
    b[0x1f] = 0x80;
    let bad = dir.join("bad_dims.bin");
    std::fs::write(&bad, &b).unwrap();
    let big = dir.join("big.bin");
    std::fs::write(&big, crate::common::read("eas", "seed_warm_up.bin")).unwrap();
    let run = |args: &[&str]| {
        let out = crate::common::bin().args(args).output().unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    let bad_s = bad.to_str().unwrap();
    for args in [
        vec!["inspect", bad_s],
        vec!["inspect", "--wire", "eas", bad_s],
    ] {
        let (code, err) = run(&args);
        assert_eq!(code, Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(bad_s), "{err}");
        assert!(err.contains("at byte 31"), "{err}");
        assert!(err.contains("inputs[\"x\"].array_shape.dim[1]"), "{err}");
    }
    let (code, err) = run(&["inspect", "--max-size", "100", big.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("over the size limit of 100 bytes"), "{err}");
    let amb = dir.join("ambiguous.bin");
    std::fs::write(&amb, [0x0a, 0x00]).unwrap();
    let (code, err) = run(&["inspect", amb.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("ambiguous"), "{err}");
}
