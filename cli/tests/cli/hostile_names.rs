//! Names that carry terminal escapes, a forged CI annotation and bidirectional overrides
//! never reach a terminal or a CI log raw, in any output, and are a finding. The request was written by the real eas-prediction SDK
//! (tests/data/gen/make_hostile.py): feed `x\x1b[2J\x1b[31mPWNED\x1b]0;title\x07\r\n::error::fake`,
//! fetches `\xc2\x9bred\nline2` (U+009B, a one-character CSI) and `rtl\u{202e}ok`, signature
//! `sig\x1b[0m`.

use serde_json::Value;

const FILE: &str = "tests/data/hostile/names.bin";
const FEED: &str = "x\x1b[2J\x1b[31mPWNED\x1b]0;title\x07\r\n::error::fake";
const FETCHES: [&str; 2] = ["\u{9b}red\nline2", "rtl\u{202e}ok"];

fn run(args: &[&str]) -> (i32, String, String) {
    let o = crate::common::bin().args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8(o.stdout).expect("output is UTF-8"),
        String::from_utf8(o.stderr).expect("errors are UTF-8"),
    )
}

/// The text without tfreq's own colour codes (`ESC [ digits m`).
fn without_our_colours(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("\x1b[") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let n = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[n..].starts_with('m') {
            rest = &after[n + 1..];
        } else {
            // Not one of ours: keep the ESC so the check below sees it.
            out.push('\x1b');
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// No control character but line ends, no bidirectional control, no line separator.
fn assert_inert(what: &str, s: &str) {
    let s = without_our_colours(s);
    for (i, c) in s.char_indices() {
        let bad = (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' | '\u{2028}' | '\u{2029}');
        assert!(!bad, "{what}: raw {c:?} at byte {i}: {s}");
    }
    // No line of the output is a forged workflow command.
    for l in s.lines() {
        assert!(!l.starts_with("::error::fake"), "{what}: forged line {l:?}");
    }
}

#[test]
fn inspect_in_every_format() {
    for args in [
        vec!["inspect", FILE],
        vec!["inspect", "--color", "always", FILE],
        vec!["inspect", "--format", "github", FILE],
        vec!["inspect", "--format", "text", FILE],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_inert(&format!("{args:?} stdout"), &out);
        assert_inert(&format!("{args:?} stderr"), &err);
    }
    let (_, out, _) = run(&["inspect", FILE]);
    assert!(out.contains("warning UNSAFE_NAME"), "{out}");
    assert!(!out.contains("problems: none"), "{out}");
    // Shown escaped, so a newline and a backslash-n never look alike.
    assert!(out.contains(r"x\u{1b}[2J"), "{out}");
}

#[test]
fn github_annotations_are_one_line_each_and_none_forged() {
    let (_, out, _) = run(&["inspect", "--format", "github", FILE]);
    let commands: Vec<&str> = out.lines().filter(|l| l.starts_with("::")).collect();
    // One warning per unsafe name: the feed, both fetches and the signature.
    assert_eq!(commands.len(), 4, "{out}");
    assert!(
        commands.iter().all(|l| l.starts_with("::warning ")),
        "{out}"
    );
    let (code, out, _) = run(&[
        "diff",
        "--format",
        "github",
        FILE,
        "tests/data/eas/faq_prod.bin",
    ]);
    assert_eq!(code, 1);
    assert_inert("diff github", &out);
    for l in out.lines() {
        assert!(
            l.starts_with("::error ")
                || l.starts_with("::warning ")
                || l.starts_with("::notice ")
                || l.starts_with("tfreq diff: "),
            "{l:?}"
        );
    }
}

#[test]
fn json_keeps_the_exact_names() {
    let (code, out, _) = run(&["inspect", "--format", "json", FILE]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["inputs"][0]["name"], FEED);
    assert_eq!(v["fetches"][0], FETCHES[0]);
    assert_eq!(v["fetches"][1], FETCHES[1]);
    let codes: Vec<&str> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["code"].as_str())
        .collect();
    assert!(codes.contains(&"UNSAFE_NAME"), "{codes:?}");
}

#[test]
fn diff_check_keys_and_errors() {
    let faq = "tests/data/eas/faq_prod.bin";
    for args in [
        vec!["diff", "--color", "always", FILE, faq],
        vec!["diff", "--color", "always", faq, FILE],
        vec!["diff", "--format", "json", FILE, faq],
        vec![
            "check",
            "--color",
            "always",
            FILE,
            "--model",
            "tests/data/models/faq.metadata.json",
        ],
        vec!["keys", "--color", "always", FILE],
        vec!["keys", "--format", "json", FILE],
    ] {
        let (_, out, err) = run(&args);
        assert_inert(&format!("{args:?} stdout"), &out);
        assert_inert(&format!("{args:?} stderr"), &err);
    }
    let (_, out, _) = run(&["diff", FILE, faq]);
    assert!(out.contains("UNSAFE_NAME"), "{out}");
    let (_, out, _) = run(&[
        "check",
        FILE,
        "--model",
        "tests/data/models/faq.metadata.json",
    ]);
    assert!(out.contains("UNSAFE_NAME"), "{out}");
    // An error message naming a hostile file name is escaped too.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad\x1b[31m\rname.bin");
    std::fs::write(&p, b"\x12\x05\x0a").unwrap();
    let (code, _, err) = run(&["inspect", p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_inert("error message", &err);
    assert!(err.contains(r"bad\u{1b}[31m\rname.bin"), "{err}");
}
