//! What a command-line user expects (issue 11 §4): shell completions and a manual page
//! from the same definitions as `--help`, progress on a terminal and never in a pipe,
//! `--quiet`, errors that name the file once, grammatical counts.

mod bigreq;
mod common;
mod pty;

use std::process::{Command, Stdio};

fn tfreq() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tfreq"))
}

const COMMANDS: [&str; 11] = [
    "inspect",
    "diff",
    "check",
    "signature",
    "build",
    "convert",
    "scrub",
    "keys",
    "warmup",
    "completions",
    "man",
];

#[test]
fn completions_for_every_shell_name_every_command() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = tfreq().args(["completions", shell]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let s = String::from_utf8(o.stdout).unwrap();
        for c in COMMANDS {
            assert!(s.contains(c), "{shell}: no {c}");
        }
        assert!(s.contains("max-size"), "{shell}: no --max-size");
    }
    // The bash script is valid bash, and completes the commands.
    let o = tfreq().args(["completions", "bash"]).output().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("tfreq.bash");
    std::fs::write(&script, &o.stdout).unwrap();
    let probe = format!(
        "source {}; COMP_WORDS=(tfreq ins); COMP_CWORD=1; COMP_LINE='tfreq ins'; COMP_POINT=9; _tfreq tfreq ins tfreq; echo \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let o = Command::new("bash").args(["-c", &probe]).output();
    match o {
        Ok(o) => {
            assert_eq!(
                String::from_utf8_lossy(&o.stdout).trim(),
                "inspect",
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        Err(e) => println!("skipped the bash probe: {e}"),
    }
    let o = tfreq().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn man_pages_for_tfreq_and_each_command() {
    let o = tfreq().arg("man").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(s.contains(".TH tfreq 1"), "{}", &s[..200.min(s.len())]);
    for c in COMMANDS {
        assert!(s.contains(c), "tfreq(1) does not list {c}");
    }
    for c in ["inspect", "convert", "keys"] {
        let o = tfreq().args(["man", c]).output().unwrap();
        assert_eq!(o.status.code(), Some(0));
        let s = String::from_utf8(o.stdout).unwrap();
        assert!(s.contains(&format!(".TH tfreq-{c} 1")), "{c}");
        assert!(s.contains("max\\-size"), "{c}: no --max-size");
    }
    let o = tfreq().args(["man", "nope"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    // `man -l` renders it, where man is installed.
    if let Ok(o) = Command::new("man").arg("--version").output() {
        if o.status.success() {
            let dir = tempfile::tempdir().unwrap();
            let page = dir.path().join("tfreq.1");
            let o = tfreq().arg("man").output().unwrap();
            std::fs::write(&page, o.stdout).unwrap();
            let o = Command::new("man")
                .arg("-l")
                .arg(&page)
                .env("MANPAGER", "cat")
                .env("PAGER", "cat")
                .output()
                .unwrap();
            let s = String::from_utf8_lossy(&o.stdout);
            assert!(s.contains("Commands:") || s.contains("SUBCOMMANDS"), "{s}");
        }
    }
}

/// A bare EAS request just over 100 MB (the progress threshold).
fn big_file(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("big.bin");
    std::fs::write(&p, bigreq::big_request(27_000_000)).unwrap(); // 108 MB
    p
}

/// Runs `tfreq CMD FILE EXTRA` with stderr on a pseudo-terminal; returns its output and
/// what the terminal received.
fn with_stderr_on_a_terminal(
    cmd: &[&str],
    file: &std::path::Path,
    extra: &[&str],
) -> (std::process::Output, String) {
    let p = pty::open();
    let reader = pty::read_master(p.master, None);
    let o = tfreq()
        .args(cmd)
        .arg(file)
        .args(extra)
        .stderr(Stdio::from(p.slave.try_clone().unwrap()))
        .output()
        .unwrap();
    drop(p.slave);
    let terminal = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    (o, terminal)
}

#[test]
fn progress_shows_on_a_terminal_and_never_in_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let big = big_file(dir.path());
    for cmd in [vec!["inspect"], vec!["keys"]] {
        // stderr is a terminal: progress is drawn there, stdout (a pipe) is clean.
        let (o, terminal) = with_stderr_on_a_terminal(&cmd, &big, &[]);
        assert_eq!(o.status.code(), Some(0), "{cmd:?}: {terminal}");
        assert!(
            terminal.contains(&big.display().to_string()) || terminal.contains("1 file"),
            "{cmd:?}: no progress: {terminal:?}"
        );
        assert!(terminal.contains("108.0 MB"), "{cmd:?}: {terminal:?}");
        assert!(
            !String::from_utf8_lossy(&o.stdout).contains('\r'),
            "{cmd:?}"
        );
        // --quiet, or JSON output: nothing on the terminal.
        for extra in [&["--quiet"][..], &["-f", "json"]] {
            let (o, terminal) = with_stderr_on_a_terminal(&cmd, &big, extra);
            assert_eq!(o.status.code(), Some(0));
            assert_eq!(terminal, "", "{cmd:?} {extra:?}");
        }
        // stderr is a pipe: nothing but results.
        let o = tfreq().args(&cmd).arg(&big).output().unwrap();
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(String::from_utf8_lossy(&o.stderr), "", "{cmd:?}");
    }
}

#[test]
fn quiet_silences_notes_but_not_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.tfrecord");
    let prod = common::data_dir().join("eas/faq_prod.bin");
    let o = tfreq()
        .arg("warmup")
        .arg(&prod)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "tfreq: wrote 1 request covering 1 of 1 request\n"
    );
    let o = tfreq()
        .arg("warmup")
        .arg(&prod)
        .arg("-o")
        .arg(&out)
        .arg("-q")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    let o = tfreq()
        .args(["inspect", "-q", "nope.bin"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "tfreq: error: nope.bin: No such file or directory (os error 2)\n"
    );
}

/// Issue 21: standard input can be read once. `diff - - < file` read it twice (the
/// second reading empty); every command taking several inputs refuses a second `-` as
/// a usage error, before reading anything.
#[test]
fn standard_input_is_named_at_most_once() {
    let cases: &[&[&str]] = &[
        &["diff", "-", "-"],
        &["diff", "tests/data/eas/faq_warmup.bin", "-", "-"],
        &["inspect", "-", "-"],
        &["keys", "-", "-"],
        &["warmup", "-", "-", "-o", "-"],
        &[
            "check",
            "-",
            "-",
            "--model",
            "tests/data/models/half_plus_two",
        ],
    ];
    for args in cases {
        let o = tfreq()
            .args(*args)
            .stdin(std::fs::File::open("tests/data/eas/faq_prod.bin").unwrap())
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains("standard input (-) is named 2 times among the inputs"),
            "{args:?}: {e}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // Once is fine.
    let o = tfreq()
        .args(["diff", "tests/data/eas/faq_warmup.bin", "-"])
        .stdin(std::fs::File::open("tests/data/eas/faq_prod.bin").unwrap())
        .output()
        .unwrap();
    assert_ne!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
