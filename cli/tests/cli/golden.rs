//! Golden tests of the command line: for each case in `tests/golden/*.golden`, the
//! built `tfreq` is run from the repository root and its exit code, stdout and stderr
//! must equal what the case file records, byte for byte (in the manner of buf's and
//! ripgrep's CLI tests). `TFREQ_BLESS=1 cargo test --test cli golden::` rewrites the
//! recorded outputs from the current binary; read the diff before committing it
//! (`tests/golden/README.md`).
//!
//! A case file:
//!
//! ```text
//! # Comment lines: what the case pins and why the output is right.
//! $ tfreq inspect tests/data/eas/seed_warm_up.bin
//! same-stdout: tests/data/eas/seed_warm_up.txt      (optional, never rewritten)
//! exit: 0
//! ----- stdout -----
//! ...
//! ----- stderr -----
//! ...
//! ```
//!
//! The command is split on spaces (`'...'` quotes a word with spaces); a final
//! `< FILE` feeds FILE to standard input. `same-stdout:` names a file written by other
//! software (the EAS SDK, TensorFlow) that stdout must equal: such a case records no
//! stdout section of its own. Output that is not printable UTF-8 is recorded as a hex
//! dump (`----- stdout (hex) -----`). Output not ending in a newline is followed by the
//! line `\ no newline at end`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

const CMD: &str = "$ ";
const SAME: &str = "same-stdout: ";
const EXIT: &str = "exit: ";
const NO_NEWLINE: &str = "\\ no newline at end";

fn root() -> PathBuf {
    crate::common::root().to_path_buf()
}

/// One case file, parsed.
struct Case {
    /// Comment lines and the command, kept as written (the bless rewrite keeps them).
    header: Vec<String>,
    args: Vec<String>,
    stdin: Option<String>,
    same_stdout: Option<String>,
    exit: Option<i32>,
    stdout: Option<Vec<u8>>,
    stderr: Option<Vec<u8>>,
}

/// What one run of the binary gave.
struct Run {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn split_command(line: &str) -> Result<(Vec<String>, Option<String>), String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        let mut word = String::new();
        if c == '\'' {
            chars.next();
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some(c) => word.push(c),
                    None => return Err(format!("unclosed quote in {line:?}")),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ' ' {
                    break;
                }
                word.push(c);
                chars.next();
            }
        }
        words.push(word);
    }
    if words.first().map(String::as_str) != Some("tfreq") {
        return Err(format!("a command starts with `tfreq`: {line:?}"));
    }
    words.remove(0);
    let mut stdin = None;
    if words.len() >= 2 && words[words.len() - 2] == "<" {
        stdin = words.pop();
        words.pop();
    }
    Ok((words, stdin))
}

fn section_name(line: &str) -> Option<(&str, bool)> {
    let inner = line.strip_prefix("----- ")?.strip_suffix(" -----")?;
    match inner {
        "stdout" | "stderr" => Some((inner, false)),
        "stdout (hex)" => Some(("stdout", true)),
        "stderr (hex)" => Some(("stderr", true)),
        _ => None,
    }
}

fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        // "00000010: 0a0b 0c0d ...  |printable|": the part between ':' and '|'.
        let body = line.split_once(": ").map(|(_, b)| b).unwrap_or(line);
        let body = body.split("  |").next().unwrap_or("");
        let digits: String = body.chars().filter(|c| !c.is_whitespace()).collect();
        if !digits.len().is_multiple_of(2) {
            return Err(format!("odd hex digit count in {line:?}"));
        }
        for i in (0..digits.len()).step_by(2) {
            out.push(
                u8::from_str_radix(&digits[i..i + 2], 16)
                    .map_err(|e| format!("bad hex in {line:?}: {e}"))?,
            );
        }
    }
    Ok(out)
}

fn parse_case(text: &str) -> Result<Case, String> {
    let mut case = Case {
        header: Vec::new(),
        args: Vec::new(),
        stdin: None,
        same_stdout: None,
        exit: None,
        stdout: None,
        stderr: None,
    };
    let mut lines = text.split_inclusive('\n').peekable();
    let mut have_cmd = false;
    // Header: comments, the command, same-stdout, exit.
    while let Some(&line) = lines.peek() {
        let l = line.trim_end_matches('\n');
        if section_name(l).is_some() {
            break;
        }
        lines.next();
        if let Some(cmd) = l.strip_prefix(CMD) {
            if have_cmd {
                return Err("two commands in one case".into());
            }
            (case.args, case.stdin) = split_command(cmd)?;
            have_cmd = true;
            case.header.push(l.to_string());
        } else if let Some(path) = l.strip_prefix(SAME) {
            case.same_stdout = Some(path.trim().to_string());
            case.header.push(l.to_string());
        } else if let Some(code) = l.strip_prefix(EXIT) {
            case.exit = Some(code.trim().parse().map_err(|e| format!("exit: {e}"))?);
        } else if l.starts_with('#') || l.trim().is_empty() {
            case.header.push(l.to_string());
        } else {
            return Err(format!("unexpected header line {l:?}"));
        }
    }
    if !have_cmd {
        return Err("no `$ tfreq ...` line".into());
    }
    // Sections.
    while let Some(line) = lines.next() {
        let l = line.trim_end_matches('\n');
        let (name, hex) =
            section_name(l).ok_or_else(|| format!("expected a section, got {l:?}"))?;
        let mut body = String::new();
        while let Some(&next) = lines.peek() {
            if section_name(next.trim_end_matches('\n')).is_some() {
                break;
            }
            body.push_str(next);
            lines.next();
        }
        let bytes = if hex {
            parse_hex(&body)?
        } else if let Some(cut) = body.strip_suffix(&format!("\n{NO_NEWLINE}\n")) {
            cut.as_bytes().to_vec()
        } else {
            body.into_bytes()
        };
        let slot = if name == "stdout" {
            &mut case.stdout
        } else {
            &mut case.stderr
        };
        if slot.replace(bytes).is_some() {
            return Err(format!("two {name} sections"));
        }
    }
    Ok(case)
}

fn is_text(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes)
        .is_ok_and(|s| s.chars().all(|c| c == '\n' || c == '\t' || !c.is_control()))
}

fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (i, chunk) in bytes.chunks(16).enumerate() {
        let _ = write!(out, "{:08x}:", i * 16);
        for pair in chunk.chunks(2) {
            out.push(' ');
            for b in pair {
                let _ = write!(out, "{b:02x}");
            }
        }
        let width = 9 + 5 * 8;
        let used = 9 + chunk.len() * 2 + chunk.len().div_ceil(2);
        out.push_str(&" ".repeat(width - used));
        out.push_str("  |");
        out.extend(chunk.iter().map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        }));
        out.push_str("|\n");
    }
    out
}

fn write_section(out: &mut String, name: &str, bytes: &[u8]) {
    if is_text(bytes) {
        let text = std::str::from_utf8(bytes).expect("checked");
        let _ = writeln!(out, "----- {name} -----");
        out.push_str(text);
        if !text.is_empty() && !text.ends_with('\n') {
            out.push('\n');
            out.push_str(NO_NEWLINE);
            out.push('\n');
        }
    } else {
        let _ = writeln!(out, "----- {name} (hex) -----");
        out.push_str(&hex_dump(bytes));
    }
}

fn render_case(case: &Case, run: &Run) -> String {
    let mut out = String::new();
    for line in &case.header {
        out.push_str(line);
        out.push('\n');
    }
    let _ = writeln!(out, "{EXIT}{}", run.code);
    if case.same_stdout.is_none() {
        write_section(&mut out, "stdout", &run.stdout);
    }
    write_section(&mut out, "stderr", &run.stderr);
    out
}

fn run(case: &Case) -> Run {
    let mut cmd = crate::common::bin();
    cmd.args(&case.args)
        .current_dir(root())
        // Colour and help wrapping must not depend on the caller's environment.
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("COLUMNS")
        .env_remove("TERM")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match &case.stdin {
        Some(path) => {
            let file = std::fs::File::open(root().join(path))
                .unwrap_or_else(|e| panic!("stdin file {path}: {e}"));
            cmd.stdin(file);
        }
        None => {
            cmd.stdin(Stdio::null());
        }
    }
    let out = cmd.output().expect("the tfreq binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

/// Shows where two outputs part: the first differing line with a little context.
fn difference(what: &str, want: &[u8], got: &[u8]) -> String {
    let want = String::from_utf8_lossy(want);
    let got = String::from_utf8_lossy(got);
    let w: Vec<&str> = want.split_inclusive('\n').collect();
    let g: Vec<&str> = got.split_inclusive('\n').collect();
    let first = w
        .iter()
        .zip(&g)
        .position(|(a, b)| a != b)
        .unwrap_or(w.len().min(g.len()));
    let mut out = format!(
        "  {what} differs from line {} ({} lines recorded, {} now):\n",
        first + 1,
        w.len(),
        g.len()
    );
    let from = first.saturating_sub(2);
    for line in w.iter().skip(from).take(first - from) {
        let _ = write!(out, "    {line}");
    }
    for line in w.iter().skip(first).take(5) {
        let _ = writeln!(out, "  - {line:?}");
    }
    for line in g.iter().skip(first).take(5) {
        let _ = writeln!(out, "  + {line:?}");
    }
    out
}

fn check(case: &Case, run: &Run) -> Vec<String> {
    let mut problems = Vec::new();
    if case.exit != Some(run.code) {
        problems.push(format!(
            "  exit code {} recorded, {} now",
            case.exit.map_or("none".into(), |c| c.to_string()),
            run.code
        ));
    }
    match &case.same_stdout {
        Some(path) => {
            let want = std::fs::read(root().join(path))
                .unwrap_or_else(|e| panic!("same-stdout file {path}: {e}"));
            if want != run.stdout {
                problems.push(difference(
                    &format!("stdout (against {path})"),
                    &want,
                    &run.stdout,
                ));
            }
        }
        None => match &case.stdout {
            Some(want) if *want == run.stdout => {}
            Some(want) => problems.push(difference("stdout", want, &run.stdout)),
            None => problems.push("  no stdout section recorded".into()),
        },
    }
    match &case.stderr {
        Some(want) if *want == run.stderr => {}
        Some(want) => problems.push(difference("stderr", want, &run.stderr)),
        None => problems.push("  no stderr section recorded".into()),
    }
    problems
}

fn case_files() -> Vec<PathBuf> {
    let dir = root().join("tests/golden");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/golden exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "golden"))
        .collect();
    files.sort();
    files
}

fn name(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn cli_outputs_match_the_recorded_ones() {
    let bless = std::env::var_os("TFREQ_BLESS").is_some_and(|v| v == "1");
    let files = case_files();
    assert!(files.len() >= 40, "only {} golden cases found", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("case file reads");
        let case = parse_case(&text).unwrap_or_else(|e| panic!("{}: {e}", name(path)));
        let got = run(&case);
        let problems = check(&case, &got);
        if problems.is_empty() {
            continue;
        }
        if bless {
            if let Some(p) = &case.same_stdout {
                let want = std::fs::read(root().join(p)).expect("same-stdout file reads");
                if want != got.stdout {
                    failures.push(format!(
                        "{}: stdout is not {p} (a reference file, never blessed)",
                        name(path)
                    ));
                }
            }
            std::fs::write(path, render_case(&case, &got)).expect("case file writes");
            eprintln!("blessed {}", name(path));
        } else {
            failures.push(format!("{}:\n{}", name(path), problems.join("\n")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden cases fail (TFREQ_BLESS=1 rewrites them; read the diff):\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn case_format_round_trips() {
    let case = Case {
        header: vec!["# c".into(), "$ tfreq x".into()],
        args: vec!["x".into()],
        stdin: None,
        same_stdout: None,
        exit: Some(2),
        stdout: None,
        stderr: None,
    };
    for (stdout, stderr) in [
        (&b"a\nb\n"[..], &b""[..]),
        (b"no newline", b"err\n"),
        (b"\x00\x01binary\xff\n", b"----- stdout\n"),
        (b"", b"x"),
    ] {
        let run = Run {
            code: 2,
            stdout: stdout.to_vec(),
            stderr: stderr.to_vec(),
        };
        let text = render_case(&case, &run);
        let back = parse_case(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(back.stdout.as_deref(), Some(stdout), "{text}");
        assert_eq!(back.stderr.as_deref(), Some(stderr), "{text}");
        assert_eq!(back.exit, Some(2));
        assert!(check(&back, &run).is_empty(), "{text}");
    }
    let (args, stdin) = split_command("tfreq a 'b c' < d").unwrap();
    assert_eq!(args, ["a", "b c"]);
    assert_eq!(stdin.as_deref(), Some("d"));
}
