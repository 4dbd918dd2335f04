//! What a command-line user expects: shell completions and a manual page
//! from the same definitions as `--help`, progress on a terminal and never in a pipe,
//! `--quiet`, errors that name the file once, grammatical counts.

use std::process::{Command, Stdio};

fn tfreq() -> Command {
    crate::common::bin()
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
    let o = Command::new("bash")
        .args(["-c", &probe])
        .output()
        .expect("bash runs (the completion script is tried in it)");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "inspect",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
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
    if let Ok(o) = Command::new("man").arg("--version").output()
        && o.status.success()
    {
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

/// A bare EAS request just over 100 MB (the progress threshold).
fn big_file(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("big.bin");
    std::fs::write(&p, crate::common::bigreq::big_request(27_000_000)).unwrap(); // 108 MB
    p
}

/// Runs `tfreq CMD FILE EXTRA` with stderr on a pseudo-terminal; returns its output and
/// what the terminal received.
fn with_stderr_on_a_terminal(
    cmd: &[&str],
    file: &std::path::Path,
    extra: &[&str],
) -> (std::process::Output, String) {
    let p = crate::common::pty::open();
    let reader = crate::common::pty::read_master(p.master, None);
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
    let prod = crate::common::data_dir().join("eas/faq_prod.bin");
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

/// Standard input can be read once. `diff - - < file` once read it twice (the
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
            .stdin(std::fs::File::open(crate::common::data("eas/faq_prod.bin")).unwrap())
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
        .stdin(std::fs::File::open(crate::common::data("eas/faq_prod.bin")).unwrap())
        .output()
        .unwrap();
    assert_ne!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `tfreq ARGS`, feeding `stdin` to standard input: (exit code, stdout, stderr).
fn run_with_stdin(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    use std::io::Write;
    let mut child = tfreq()
        .args(args)
        .current_dir(crate::common::root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut i = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = i.write_all(&data);
    });
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const GOOD: &str = "tests/data/eas/faq_prod.bin";
const MODEL: &str = "tests/data/models/faq.metadata.json";

/// How each command is run on inputs `FILES`: the arguments before and after them.
fn command_lines(out: &str) -> Vec<(&'static str, Vec<String>, Vec<String>)> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        ("inspect", s(&["inspect"]), s(&[])),
        ("diff", s(&["diff", GOOD]), s(&[])),
        ("check", s(&["check", "--model", MODEL]), s(&[])),
        ("keys", s(&["keys"]), s(&[])),
        (
            "warmup",
            s(&["warmup", "--wire", "tfrecord", "-o", out]),
            s(&[]),
        ),
    ]
}

/// Every command that reads requests takes `--max-size`, reads `-`, and goes
/// on past a file it cannot read (reporting it in its place, exit 2). The commands of one
/// input (convert, scrub, build) take `--max-size` and `-` the same way; send and replay
/// are held to it against a loopback server in cli/tests/net/net.rs.
#[test]
fn every_command_takes_max_size_stdin_and_goes_on_past_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.bin");
    std::fs::write(&bad, b"not a request\n").unwrap();
    let bad = bad.to_str().unwrap().to_string();
    let out = dir.path().join("out.tfrecord");
    let out = out.to_str().unwrap().to_string();
    let good = std::fs::read(crate::common::root().join(GOOD)).unwrap();
    for (name, before, after) in command_lines(&out) {
        let args = |files: &[&str], extra: &[&str]| -> Vec<String> {
            let mut v = before.clone();
            v.extend(files.iter().map(|f| f.to_string()));
            v.extend(after.iter().cloned());
            v.extend(extra.iter().map(|f| f.to_string()));
            v
        };
        // A bad file among good ones: reported by name, the good one still read.
        let a = args(&[&bad, GOOD], &[]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run_with_stdin(&a, b"");
        assert_eq!(code, 2, "{name}: {stderr}");
        assert!(stderr.contains("bad.bin"), "{name}: {stderr}");
        match name {
            "warmup" => assert!(std::fs::metadata(&out).is_ok_and(|m| m.len() > 0), "{name}"),
            _ => assert!(
                stdout.contains("faq_prod") || stdout.contains("input_holder"),
                "{name}: {stdout}"
            ),
        }
        // Standard input.
        let a = args(&["-"], &[]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run_with_stdin(&a, &good);
        assert!(code == 0 || code == 1, "{name} -: {code} {stderr}");
        assert!(
            name == "warmup" || !stdout.is_empty(),
            "{name} -: no output"
        );
        // The size cap.
        let a = args(&[GOOD], &["--max-size", "10"]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, _, stderr) = run_with_stdin(&a, b"");
        assert_eq!(code, 2, "{name} --max-size: {stderr}");
        assert!(stderr.contains("size limit"), "{name} --max-size: {stderr}");
    }
    // One input: `-` and the cap.
    for cmd in [
        vec!["convert", "-", "--wire", "tfrecord", "-o", &out],
        vec!["scrub", "-", "-o", &out],
    ] {
        let (code, _, stderr) = run_with_stdin(&cmd, &good);
        assert_eq!(code, 0, "{cmd:?}: {stderr}");
        let mut capped = cmd.clone();
        capped.extend(["--max-size", "10"]);
        let (code, _, stderr) = run_with_stdin(&capped, &good);
        assert_eq!(code, 2, "{cmd:?} --max-size: {stderr}");
        assert!(stderr.contains("size limit"), "{cmd:?}: {stderr}");
    }
    let body = br#"{"signature_name": "serving_default", "inputs": {"x": [1.0, 2.0]}}"#;
    let (code, _, stderr) = run_with_stdin(
        &[
            "build",
            "-",
            "--from",
            "json",
            "--dtype",
            "x=DT_FLOAT",
            "-o",
            &out,
        ],
        body,
    );
    assert_eq!(code, 0, "build -: {stderr}");
    let (code, _, stderr) = run_with_stdin(
        &[
            "build",
            "-",
            "--from",
            "json",
            "--dtype",
            "x=DT_FLOAT",
            "-o",
            &out,
            "--max-size",
            "10",
        ],
        body,
    );
    assert_eq!(code, 2, "build --max-size: {stderr}");
}

/// A directory given as an input stands for the files under it, in name order.
#[test]
fn a_directory_is_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = crate::common::root().join("tests/data/eas");
    for f in ["faq_prod.bin", "faq_prod_batch4.bin"] {
        std::fs::copy(d.join(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(dir.path().join(".hidden"), b"junk").unwrap();
    let p = dir.path().to_str().unwrap();
    let (code, stdout, stderr) = run_with_stdin(&["keys", "--format", "json", p], b"");
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["requests"], 2, "{v:#}");
    assert_eq!(v["files"].as_array().unwrap().len(), 2, "{v:#}");
    let (code, stdout, _) = run_with_stdin(&["inspect", p], b"");
    assert_eq!(code, 0);
    let a = stdout.find("faq_prod.bin").unwrap();
    let b = stdout.find("faq_prod_batch4.bin").unwrap();
    assert!(a < b, "{stdout}");
    assert!(!stdout.contains(".hidden"), "{stdout}");
}
