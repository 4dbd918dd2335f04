//! Runs over many files: one unreadable file does not stop the run. Every
//! command reports the others, names the bad one in every output format (JSON stays one
//! valid document), and exits 2.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn tfreq() -> Command {
    crate::common::bin()
}

fn data(rel: &str) -> String {
    crate::common::data_dir().join(rel).display().to_string()
}

/// A file that does not exist, in a directory that does.
fn bad() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let p: PathBuf = dir.path().join("bad.bin");
    (dir, p.display().to_string())
}

fn run(args: &[&str]) -> Output {
    tfreq().args(args).output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// stderr says what was wrong with the bad file, once.
fn assert_error_line(o: &Output, bad: &str) {
    let e = err(o);
    let line = format!("tfreq: error: {bad}: No such file or directory (os error 2)");
    assert_eq!(e.matches(&line).count(), 1, "{e}");
    assert_eq!(e.matches(bad).count(), 1, "file named more than once: {e}");
}

#[test]
fn inspect_reports_every_file_in_every_format() {
    let (_d, bad) = bad();
    let a = data("eas/spec_vector.bin");
    let c = data("eas/faq_prod.bin");
    let files = [a.as_str(), bad.as_str(), c.as_str()];

    let o = run(&[&["inspect"][..], &files].concat());
    assert_eq!(o.status.code(), Some(2));
    let s = out(&o);
    assert!(s.contains(&format!("{a}: EAS PredictRequest")), "{s}");
    assert!(s.contains(&format!("{c}: EAS PredictRequest")), "{s}");
    assert_error_line(&o, &bad);

    let o = run(&[&["inspect", "-f", "json"][..], &files].concat());
    assert_eq!(o.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one valid JSON document");
    let entries = doc.as_array().expect("an array, one entry per file");
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["file"], a.as_str());
    assert_eq!(entries[1]["file"], bad.as_str());
    assert_eq!(
        entries[1]["error"],
        "No such file or directory (os error 2)"
    );
    assert_eq!(entries[2]["file"], c.as_str());
    assert!(entries[2]["inputs"].is_array(), "{}", entries[2]);
    assert_error_line(&o, &bad);

    // One file alone still gives a valid document.
    let o = run(&["inspect", "-f", "json", &bad]);
    assert_eq!(o.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(doc["file"], bad.as_str());

    let o = run(&[&["inspect", "-f", "github"][..], &files].concat());
    assert_eq!(o.status.code(), Some(2));
    let s = out(&o);
    assert!(
        s.contains(&format!(
            "::error file={},title=UNREADABLE::No such file or directory (os error 2)",
            bad.replace(':', "%3A").replace(',', "%2C")
        )),
        "{s}"
    );
    assert!(s.contains("tfreq inspect: 3 files (1 unreadable)"), "{s}");

    let o = run(&[&["inspect", "-f", "text"][..], &files].concat());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        out(&o)
            .matches("signature_name: \"serving_default\"")
            .count(),
        2
    );
    assert_error_line(&o, &bad);
}

#[test]
fn diff_and_check_report_the_unreadable_file() {
    let (_d, bad) = bad();
    let warm = data("eas/faq_warmup.bin");
    let prod = data("eas/faq_prod.bin");
    let model = data("models/faq");
    let runs: [Vec<&str>; 2] = [
        vec!["diff", &warm, &prod, &bad],
        vec!["check", &prod, &bad, "--model", &model],
    ];
    for args in runs {
        let o = run(&[&args[..], &["-f", "json"]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        let doc: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
        assert_eq!(doc["unreadable"][0]["file"], bad.as_str());
        assert_eq!(doc["requests"].as_array().unwrap().len(), 1, "{doc}");
        assert_error_line(&o, &bad);

        let o = run(&[&args[..], &["-f", "github"]].concat());
        assert_eq!(o.status.code(), Some(2));
        let s = out(&o);
        assert!(s.contains("title=UNREADABLE::No such file"), "{s}");
        assert!(s.contains("; 1 unreadable file)"), "{s}");

        let o = run(&args);
        assert_eq!(o.status.code(), Some(2));
        let s = out(&o);
        assert!(s.contains(&format!("{bad}: unreadable")), "{s}");
        assert!(s.contains(&format!("{prod}: ")), "{s}");
        assert!(s.contains("result: unreadable ("), "{s}");
    }
}

#[test]
fn keys_counts_what_it_could_read_and_says_what_it_skipped() {
    let (_d, bad) = bad();
    let a = data("eas/faq_prod.bin");
    let b = data("eas/faq_prod_batch4.bin");
    let o = run(&["keys", &a, &bad, &b]);
    assert_eq!(o.status.code(), Some(2));
    let s = out(&o);
    assert!(
        s.starts_with(&format!(
            "2 requests in 3 files: 1 executor key, 2 shape keys (1 unreadable file skipped: {bad})"
        )),
        "{s}"
    );
    assert_error_line(&o, &bad);

    let o = run(&["keys", "-f", "json", &a, &bad, &b]);
    assert_eq!(o.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(doc["requests"], 2);
    assert_eq!(doc["unreadable"][0]["file"], bad.as_str());
}

#[test]
fn warmup_writes_what_it_could_read_and_exits_2() {
    let (d, bad) = bad();
    let out_file = d.path().join("warmup.tfrecord");
    let o = tfreq()
        .args(["warmup", &data("eas/faq_prod.bin"), &bad, "-o"])
        .arg(&out_file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert_error_line(&o, &bad);
    assert!(
        err(&o).contains("wrote 1 request covering 1 of 1 request"),
        "{}",
        err(&o)
    );
    assert!(std::fs::metadata(&out_file).unwrap().len() > 0);
}
