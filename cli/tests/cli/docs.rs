//! README.md and docs/*.md stay true to the repository and the binary:
//!
//! - every relative link `[text](path#anchor)` names a file that exists, and an anchor names
//!   a heading of that page (GitHub's slugs);
//! - every `tfreq …` command in a `sh` code block runs as shown: the block is read as a
//!   small shell script (see [`Seg`]) and each `tfreq` command is run with the built binary
//!   from the repository root;
//! - the sample outputs listed in [`OUTPUTS`] are what the commands print;
//! - the README's GitHub Actions recipe installs the command line alone, cached, runs
//!   `check` after a failed `diff`, and its `tfreq` commands work on files of this
//!   repository.
//!
//! How a `tfreq` command in a shell block is judged:
//!
//! - **Synopsis** (it holds a placeholder: `[`…`]`, `...`/`…`, an upper-case word such as
//!   `FILE`, `URL`, `M`, or alternatives `a|b`): nothing is run on files; the subcommand must
//!   exist and every `--flag`/`-x` it shows must be in `tfreq SUB --help`, and so must each
//!   lower-case alternative of `--flag a|b|c`.
//! - **Runnable** (every input path it names exists in the repository, no URL): it is run
//!   and must exit 0 or 1, with no clap usage error on stderr. `$out` is a temporary
//!   directory (one per page, shared by its blocks in order, so a file written by one
//!   command is read by the next); `-o`, `--output` and `--save` must write into it (or to
//!   `-`, `/dev/null`), so the test never writes into the repository; `> FILE` writes the
//!   command's stdout there when FILE is in `$out` and drops it otherwise (e.g.
//!   `~/.local/...`); `< FILE` feeds FILE to stdin; unquoted `*` globs in the last path
//!   component are expanded.
//! - **Illustrative** (it names a file that is not shipped — only the names in
//!   [`NOT_SHIPPED`], paths under `/tmp/` made by benchmark scripts, paths built from a
//!   shell variable other than `$out` — or a URL, which is pointed at `http://127.0.0.1:1`,
//!   where nothing listens): it is run and must print no clap usage error (clap parses every
//!   argument before a file is opened or a connection tried), whatever its exit code. Any
//!   other missing path fails the test: a renamed file in `tests/data` breaks the docs.
//!
//! Skipped: every pipeline stage, `&&`/`||`/`;` part and line without a word `tfreq` (or a
//! path ending in `/tfreq`, as in `taskset -c 0 target/release/tfreq keys …`, whose
//! arguments are judged) and not `cargo run [--release] -- …`, e.g. `cargo`, `pip`,
//! `python`, `man -l -`, the assignments `out=$(mktemp -d)`, `export X=…`, and commands
//! inside quotes (`hyperfine '… tfreq …'`); a `tfreq` stage after a `|` is judged as illustrative (its piped input is
//! not reproduced). `cmp A B` is run in-process: the two files must be equal. Not run:
//! commands in prose code spans, and the `$ tfreq …` lines of `text` blocks (outputs shown
//! as text; those in [`OUTPUTS`] are compared with what the command prints).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TFREQ: &str = env!("CARGO_BIN_EXE_tfreq");

/// Input files the docs name as examples of the reader's own files, not shipped here.
const NOT_SHIPPED: &[&str] = &["warm_up.bin", "prod_request.bin", "model/1"];

fn root() -> &'static Path {
    crate::common::root()
}

/// README.md, CHANGELOG.md and every docs/*.md, sorted.
fn pages() -> Vec<PathBuf> {
    let mut v = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// A fenced code block: its info string (`sh`, `text`, …), the 1-based line of its first
/// content line, and its lines.
struct Block {
    info: String,
    line: usize,
    lines: Vec<String>,
}

/// The fenced code blocks of `text` and its lines outside them (with their numbers).
fn split_fences(text: &str) -> (Vec<Block>, Vec<(usize, &str)>) {
    let (mut blocks, mut prose) = (Vec::new(), Vec::new());
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match open.take() {
            None if t.starts_with("```") => {
                open = Some(Block {
                    info: t.trim_start_matches('`').trim().to_string(),
                    line: i + 2,
                    lines: Vec::new(),
                })
            }
            None => prose.push((i + 1, line)),
            Some(b) if t.starts_with("```") => blocks.push(b),
            Some(mut b) => {
                b.lines.push(line.to_string());
                open = Some(b);
            }
        }
    }
    assert!(open.is_none(), "a code block is never closed");
    (blocks, prose)
}

// ---------------------------------------------------------------------------------------
// Links and anchors

/// The targets of `[text](target)` links in prose lines (code blocks and code spans are not
/// links).
fn links(prose: &[(usize, &str)]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for &(n, line) in prose {
        // Drop code spans: `a](b)` inside backticks is not a link.
        let text: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            if let Some(end) = rest.find(')') {
                out.push((n, rest[..end].to_string()));
            }
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, letters, digits, `-` and `_` kept, spaces to
/// `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (a repeated heading gets `-1`, `-2`, … as on GitHub).
fn anchors(text: &str) -> BTreeSet<String> {
    let (_, prose) = split_fences(text);
    let mut seen = BTreeSet::new();
    for (_, line) in prose {
        let Some(h) = line.strip_prefix('#') else {
            continue;
        };
        let h = h.trim_start_matches('#');
        if !h.starts_with(' ') {
            continue;
        }
        let base = slug(h);
        let mut s = base.clone();
        let mut k = 0;
        while seen.contains(&s) {
            k += 1;
            s = format!("{base}-{k}");
        }
        seen.insert(s);
    }
    seen
}

#[test]
fn relative_links_resolve() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        let (_, prose) = split_fences(&text);
        for (n, target) in links(&prose) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("page in a folder").join(file)
            };
            let at = format!("{}:{n}: ({target})", rel(&page));
            if !path.exists() {
                bad.push(format!("{at}: no file {}", path.display()));
                continue;
            }
            if let Some(a) = anchor
                && path.extension().is_some_and(|x| x == "md")
                && !anchors(&read(&path)).contains(a)
            {
                bad.push(format!("{at}: no heading with anchor #{a}"));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: is the reader broken?"
    );
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn link_and_anchor_readers() {
    let (_, prose) =
        split_fences("see [a](docs/a.md) and [b](b.md#x).\n```\n[c](c.md)\n```\n`[d](d.md)`");
    assert_eq!(
        links(&prose),
        [(1, "docs/a.md".to_string()), (1, "b.md#x".to_string())]
    );
    assert_eq!(
        slug(" `inspect` on a TFRecord warm-up"),
        "inspect-on-a-tfrecord-warm-up"
    );
    assert_eq!(
        slug(" Limits: a server is not trusted either"),
        "limits-a-server-is-not-trusted-either"
    );
    let a = anchors("# T\n## A b\n```sh\n# not a heading\n```\n## A b\n");
    assert_eq!(
        a,
        ["a-b", "a-b-1", "t"]
            .map(String::from)
            .into_iter()
            .collect()
    );
}

// ---------------------------------------------------------------------------------------
// Shell blocks

/// One word of a shell line: its text after quote removal and `$out` expansion.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    /// An unquoted `*` to expand.
    glob: bool,
    /// A `$VAR` other than `$out`, or a `$(…)`: the value is not known.
    unknown_var: bool,
}

/// What separates two words when it stands alone (outside quotes and `[…]`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Pipe,
    And,
    Or,
    Semi,
    Out,
    Append,
    In,
}

#[derive(Debug, Clone)]
enum Tok {
    Word(Word),
    Op(Op),
}

/// Splits a shell line into words and operators. Quotes ('…', "…") group; `$out` and
/// `${out}` expand to `out` outside single quotes; a word starting with `#` starts a
/// comment. Operators count only as whole words (`a | b`, `> FILE`), never inside `[…]`,
/// so a synopsis `[--dtype X | --model P]` or `human|json` is not a pipeline.
fn tokenize(line: &str, out: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut chars = line.chars().peekable();
    let mut depth = 0i32;
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else { break };
        if first == '#' {
            break;
        }
        let (mut text, mut raw) = (String::new(), String::new());
        let (mut glob, mut unknown_var) = (false, false);
        let mut quote: Option<char> = None;
        while let Some(&c) = chars.peek() {
            if quote.is_none() && c.is_whitespace() {
                break;
            }
            chars.next();
            raw.push(c);
            match (quote, c) {
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (q, '$') if q != Some('\'') => {
                    let mut name = String::new();
                    if chars.peek() == Some(&'{') {
                        chars.next();
                        for c in chars.by_ref() {
                            if c == '}' {
                                break;
                            }
                            name.push(c);
                        }
                    } else if chars.peek() == Some(&'(') {
                        unknown_var = true;
                        name.push('(');
                    } else {
                        while let Some(&c) = chars.peek() {
                            if !(c.is_ascii_alphanumeric() || c == '_') {
                                break;
                            }
                            name.push(c);
                            chars.next();
                        }
                    }
                    if name == "out" {
                        text.push_str(out);
                    } else {
                        unknown_var |= !name.is_empty();
                        text.push('$');
                        text.push_str(&name);
                    }
                }
                (None, '*') => {
                    glob = true;
                    text.push(c);
                }
                (None, '[') => {
                    depth += 1;
                    text.push(c);
                }
                (None, ']') => {
                    depth -= 1;
                    text.push(c);
                }
                _ => text.push(c),
            }
        }
        let op = match raw.as_str() {
            _ if depth > 0 || raw.contains(']') => None,
            "|" => Some(Op::Pipe),
            "&&" => Some(Op::And),
            "||" => Some(Op::Or),
            ";" => Some(Op::Semi),
            ">" => Some(Op::Out),
            ">>" => Some(Op::Append),
            "<" => Some(Op::In),
            _ => None,
        };
        toks.push(match op {
            Some(op) => Tok::Op(op),
            None => Tok::Word(Word {
                text,
                glob,
                unknown_var,
            }),
        });
    }
    toks
}

/// One stage of a line: its words, its redirections, and whether it reads a pipe.
#[derive(Debug, Default)]
struct Seg {
    words: Vec<Word>,
    stdout_to: Option<Word>,
    stdin_from: Option<Word>,
    after_pipe: bool,
}

fn segments(toks: Vec<Tok>) -> Vec<Seg> {
    let mut segs = vec![Seg::default()];
    let mut redirect: Option<Op> = None;
    for t in toks {
        let seg = segs.last_mut().expect("one segment");
        match t {
            Tok::Op(op @ (Op::Out | Op::Append | Op::In)) => redirect = Some(op),
            Tok::Op(op) => segs.push(Seg {
                after_pipe: op == Op::Pipe,
                ..Seg::default()
            }),
            Tok::Word(w) => match redirect.take() {
                Some(Op::In) => seg.stdin_from = Some(w),
                Some(_) => seg.stdout_to = Some(w),
                None => seg.words.push(w),
            },
        }
    }
    segs
}

/// The lines of a shell block, `\`-continued lines joined, with their line numbers.
fn shell_lines(b: &Block) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut cont = false;
    for (i, line) in b.lines.iter().enumerate() {
        let (body, more) = match line.trim_end().strip_suffix('\\') {
            Some(s) => (s.to_string(), true),
            None => (line.clone(), false),
        };
        match out.last_mut() {
            Some(last) if cont => {
                last.1.push(' ');
                last.1.push_str(body.trim());
            }
            _ => out.push((b.line + i, body)),
        }
        cont = more;
    }
    out
}

/// The arguments of a `tfreq` stage: after a word `tfreq` (or `…/tfreq`) that starts the
/// stage, or after `cargo run [--release] --` (not `cargo run --example NAME --`, which runs
/// an example program, e.g. benches/make_realistic_log.rs).
fn tfreq_args(words: &[Word]) -> Option<Vec<Word>> {
    let first = &words.first()?.text;
    if first == "cargo" && words.get(1).is_some_and(|w| w.text == "run") {
        let dd = words.iter().position(|w| w.text == "--")?;
        if words[..dd].iter().any(|w| w.text == "--example") {
            return None;
        }
        return Some(words[dd + 1..].to_vec());
    }
    if first == "cargo" {
        return None; // `cargo build --bin tfreq`, `cargo install`
    }
    // `tfreq …`, or a wrapper's: `taskset -c 0 target/release/tfreq …`, `/usr/bin/time -v …`.
    let at = words
        .iter()
        .position(|w| w.text == "tfreq" || w.text.ends_with("/tfreq"))?;
    Some(words[at + 1..].to_vec())
}

/// A word that shows a placeholder rather than a value.
fn is_placeholder(w: &str) -> bool {
    let caps = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && !s.starts_with("DT_")
            && s.chars().all(|c| !c.is_ascii_lowercase())
    };
    w.contains('[')
        || w.contains(']')
        || w.contains("...")
        || w.contains('…')
        || (w.contains('|') && !w.contains("://"))
        || caps(w)
        || w.split_once('=').is_some_and(|(k, _)| caps(k))
}

/// Paths of the repository or the machine that a command reads: not flags, not URLs; a
/// word with a `/` or a data-file extension.
fn looks_like_path(w: &str) -> bool {
    const EXT: &[&str] = &[
        ".bin",
        ".json",
        ".jsonl",
        ".tfrecord",
        ".txt",
        ".pb",
        ".gz",
        ".zz",
        ".pem",
    ];
    !w.starts_with('-')
        && !w.contains("://")
        && !w.contains('=')
        && (w.contains('/') || EXT.iter().any(|e| w.ends_with(e)))
}

/// Expands an unquoted `*` in the last path component (relative to the repository root).
fn expand_glob(pat: &str) -> Vec<String> {
    let (dir, name) = pat.rsplit_once('/').unwrap_or((".", pat));
    let parts: Vec<&str> = name.split('*').collect();
    let mut out: Vec<String> = std::fs::read_dir(root().join(dir))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|f| {
                    let mut rest = f.as_str();
                    for (i, p) in parts.iter().enumerate() {
                        if i == 0 {
                            let Some(r) = rest.strip_prefix(p) else {
                                return false;
                            };
                            rest = r;
                        } else if i == parts.len() - 1 {
                            return rest.ends_with(p);
                        } else if let Some(k) = rest.find(p) {
                            rest = &rest[k + p.len()..];
                        } else {
                            return false;
                        }
                    }
                    rest.is_empty()
                })
                .map(|f| format!("{dir}/{f}"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Runs the binary from the repository root (stdin from `stdin` or empty), at most two
/// minutes. Returns (exit code, stdout, stderr).
fn run(args: &[String], stdin: Option<&Path>) -> (i32, Vec<u8>, String) {
    let mut cmd = Command::new(TFREQ);
    cmd.args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("TFREQ_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match stdin {
        Some(p) => cmd.stdin(std::fs::File::open(root().join(p)).expect("stdin file")),
        None => cmd.stdin(Stdio::null()),
    };
    let mut child = cmd.spawn().expect("start tfreq");
    let (mut so, mut se) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).ok();
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut se, &mut s).ok();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().ok();
            panic!("tfreq {args:?} still running after 120 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (o, e) = (out_t.join().unwrap(), err_t.join().unwrap());
    (status.code().unwrap_or(-1), o, e)
}

/// A clap usage error on stderr: `error: unexpected argument …`, `error: invalid value …`,
/// `Usage: …` (tfreq's own errors start with `tfreq:`).
fn usage_error(stderr: &str) -> Option<&str> {
    stderr
        .lines()
        .find(|l| l.starts_with("error:") || l.starts_with("Usage:"))
}

/// `tfreq SUB [SUBSUB] --help`: the help text of the subcommand a synopsis shows.
fn help_of(args: &[Word]) -> Result<(String, String), String> {
    let sub = args.first().map(|w| w.text.clone()).unwrap_or_default();
    if let Some(second) = args.get(1).map(|w| &w.text)
        && second.chars().all(|c| c.is_ascii_lowercase())
        && !second.is_empty()
    {
        let (code, out, _) = run(&[sub.clone(), second.clone(), "--help".into()], None);
        if code == 0 {
            return Ok((
                format!("{sub} {second}"),
                String::from_utf8_lossy(&out).into(),
            ));
        }
    }
    let (code, out, err) = run(&[sub.clone(), "--help".into()], None);
    if code != 0 {
        return Err(format!("`tfreq {sub} --help` fails: {err}"));
    }
    Ok((sub, String::from_utf8_lossy(&out).into()))
}

/// `flag` appears in `help` as a whole word (`--format`, not `--format-x`).
fn help_has(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(i, _)| {
        let before = help[..i].chars().next_back();
        let after = help[i + flag.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
    })
}

/// A synopsis: the subcommand exists and takes every flag (and lower-case value choice)
/// shown.
fn check_synopsis(args: &[Word]) -> Result<(), String> {
    let (sub, help) = help_of(args)?;
    let clean = |w: &str| w.trim_matches(|c| c == '[' || c == ']').to_string();
    let mut bad = Vec::new();
    for (i, w) in args.iter().enumerate() {
        let t = clean(&w.text);
        if !(t.starts_with('-') && t.len() > 1 && t != "--") {
            continue;
        }
        let flag = t.split('=').next().unwrap_or_default();
        if !help_has(&help, flag) {
            bad.push(format!("`tfreq {sub}` has no flag {flag}"));
            continue;
        }
        if let Some(v) = args.get(i + 1).map(|v| clean(&v.text))
            && v.contains('|')
            && !v.starts_with('-')
        {
            for alt in v.split('|').filter(|a| !a.is_empty()) {
                let alt = alt.trim_end_matches("...");
                if alt.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !help_has(&help, alt)
                {
                    bad.push(format!("`tfreq {sub} {flag}` takes no value {alt:?}"));
                }
            }
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(bad.join("; "))
    }
}

/// What the check did with one command, for the summary.
#[derive(Debug, Default)]
struct Tally {
    run: usize,
    illustrative: usize,
    synopsis: usize,
    cmp: usize,
}

/// Checks every shell block of one page (`$out` is `out`). Returns the failures.
fn check_page(name: &str, text: &str, out: &Path, tally: &mut Tally) -> Vec<String> {
    let out_s = out.display().to_string();
    let in_out = |p: &str| Path::new(p).starts_with(out);
    let mut bad = Vec::new();
    let (blocks, _) = split_fences(text);
    for b in blocks
        .iter()
        .filter(|b| matches!(b.info.as_str(), "sh" | "bash" | "shell" | "console"))
    {
        for (n, line) in shell_lines(b) {
            let at = format!("{name}:{n}");
            for seg in segments(tokenize(&line, &out_s)) {
                if seg.words.first().is_some_and(|w| w.text == "cmp") {
                    let files: Vec<&Word> = seg.words[1..].iter().collect();
                    if files.len() == 2 && files.iter().all(|w| !is_placeholder(&w.text)) {
                        tally.cmp += 1;
                        let a = std::fs::read(root().join(&files[0].text));
                        let c = std::fs::read(root().join(&files[1].text));
                        match (a, c) {
                            (Ok(a), Ok(c)) if a == c => {}
                            (Ok(_), Ok(_)) => bad.push(format!("{at}: `{line}`: files differ")),
                            _ => bad.push(format!("{at}: `{line}`: a file is missing")),
                        }
                    }
                    continue;
                }
                let Some(args) = tfreq_args(&seg.words) else {
                    continue;
                };
                if args.iter().any(|w| is_placeholder(&w.text)) {
                    tally.synopsis += 1;
                    eprintln!("{at}: synopsis: {line}");
                    if let Err(e) = check_synopsis(&args) {
                        bad.push(format!("{at}: `{line}`: {e}"));
                    }
                    continue;
                }
                // A concrete command: globs, URLs, outputs, missing inputs.
                let mut argv = Vec::new();
                let mut illustrative = seg.after_pipe;
                let mut next_is_output = false;
                let mut writes_outside = false;
                for w in &args {
                    let t = &w.text;
                    if next_is_output {
                        next_is_output = false;
                        if !(t == "-" || t == "/dev/null" || in_out(t)) {
                            writes_outside = true;
                            bad.push(format!("{at}: `{line}`: writes {t} outside \"$out\""));
                        }
                        argv.push(t.clone());
                        continue;
                    }
                    if matches!(t.as_str(), "-o" | "--output" | "--save") {
                        next_is_output = true;
                        argv.push(t.clone());
                        continue;
                    }
                    if w.glob {
                        let found = expand_glob(t);
                        if found.is_empty() {
                            bad.push(format!("{at}: `{line}`: {t} matches no file"));
                        }
                        argv.extend(found);
                        continue;
                    }
                    if let Some((_, rest)) = t.split_once("://") {
                        illustrative = true;
                        let path = rest.find('/').map(|i| &rest[i..]).unwrap_or("");
                        argv.push(format!("http://127.0.0.1:1{path}"));
                        continue;
                    }
                    if looks_like_path(t) && !root().join(t).exists() {
                        if in_out(t) {
                            bad.push(format!("{at}: `{line}`: {t} was not written before"));
                        } else if NOT_SHIPPED.contains(&t.as_str())
                            || t.starts_with("/tmp/")
                            || w.unknown_var
                        {
                            illustrative = true;
                        } else {
                            bad.push(format!("{at}: `{line}`: {t} does not exist"));
                        }
                    }
                    argv.push(t.clone());
                }
                if writes_outside {
                    continue; // not run: it would write into the repository
                }
                let stdin = seg.stdin_from.as_ref().map(|w| PathBuf::from(&w.text));
                let (code, stdout, stderr) = run(&argv, stdin.as_deref());
                if let Some(l) = usage_error(&stderr) {
                    bad.push(format!("{at}: `{line}`: usage error: {l}"));
                    continue;
                }
                eprintln!(
                    "{at}: {} (exit {code}): tfreq {}",
                    if illustrative { "illustrative" } else { "run" },
                    argv.join(" ")
                );
                if illustrative {
                    tally.illustrative += 1;
                } else {
                    tally.run += 1;
                    if !(code == 0 || code == 1) {
                        bad.push(format!(
                            "{at}: `{line}`: exit {code}: {}",
                            stderr.lines().next().unwrap_or_default()
                        ));
                    }
                }
                if let Some(to) = seg.stdout_to.as_ref().filter(|w| in_out(&w.text)) {
                    std::fs::write(&to.text, &stdout).expect("write redirected stdout");
                }
            }
        }
    }
    bad
}

#[test]
fn every_tfreq_command_in_the_docs_runs() {
    let mut bad = Vec::new();
    let mut tally = Tally::default();
    for page in pages() {
        let out = tempfile::tempdir().expect("temp dir");
        bad.extend(check_page(
            &rel(&page),
            &read(&page),
            out.path(),
            &mut tally,
        ));
    }
    eprintln!("{tally:?}");
    assert!(
        tally.run >= 20 && tally.synopsis >= 10 && tally.cmp >= 2,
        "too few commands found ({tally:?}): is the block reader broken?"
    );
    assert!(
        bad.is_empty(),
        "commands in the docs that do not run as shown:\n{}",
        bad.join("\n")
    );
}

/// The checker fails on what it must: a flag the command does not have (in a runnable
/// command and in a synopsis), a value it does not take, a file that is not there, an
/// output into the repository, files that differ.
#[test]
fn the_command_check_can_fail() {
    let out = tempfile::tempdir().expect("temp dir");
    let page = |s: &str| format!("```sh\n{s}\n```\n");
    let fails = |s: &str| {
        let mut t = Tally::default();
        !check_page("x.md", &page(s), out.path(), &mut t).is_empty()
    };
    assert!(!fails(
        "tfreq inspect tests/data/eas/scalar.bin   # a comment"
    ));
    assert!(!fails("tfreq inspect FILE... [--format human|json]"));
    assert!(fails(
        "tfreq inspect --frobnicate tests/data/eas/scalar.bin"
    ));
    assert!(fails("tfreq inspect FILE... [--frobnicate]"));
    assert!(fails("tfreq inspect FILE... [--format human|yaml]"));
    assert!(fails(
        "tfreq inspect --format yaml tests/data/eas/scalar.bin"
    ));
    assert!(fails("tfreq inspect tests/data/eas/no_such_file.bin"));
    assert!(fails("tfreq nosuchcommand tests/data/eas/scalar.bin"));
    assert!(fails(
        "tfreq convert tests/data/eas/scalar.bin --wire tfrecord -o tests/written.tfrecord"
    ));
    assert!(!root().join("tests/written.tfrecord").exists());
    assert!(fails(
        "cmp tests/data/eas/scalar.bin tests/data/eas/faq_prod.bin"
    ));
    // Exit 2 on a shipped file is a failure; on an illustrative one it is expected.
    assert!(fails("tfreq inspect Cargo.toml"));
    assert!(!fails(
        "tfreq diff warm_up.bin prod_request.bin --format github"
    ));
    assert!(!fails(
        "tfreq send tests/data/eas/faq_prod.bin --to https://example.com/api/predict/faq --timeout 5"
    ));
    // A piped synopsis alternative is not a pipeline; a real pipe skips its other stages.
    assert!(!fails(
        "tfreq keys FILES... [--dtype NAME=DT_... | --model PATH]"
    ));
    assert!(!fails("tfreq man | man -l -"));
    // Globs, `$out`, redirections and continuation lines.
    assert!(!fails(
        "tfreq keys tests/data/eas/faq_prod*.bin \\\n  --format json > \"$out/k.json\"\ntfreq keys merge \"$out/k.json\""
    ));
}

// ---------------------------------------------------------------------------------------
// The CI recipe

/// The README's workflow: the YAML block that starts with `# .github/workflows/`.
fn ci_recipe() -> String {
    let readme = read(&root().join("README.md"));
    let (blocks, _) = split_fences(&readme);
    let b = blocks
        .into_iter()
        .find(|b| {
            b.info == "yaml"
                && b.lines
                    .first()
                    .is_some_and(|l| l.starts_with("# .github/workflows/"))
        })
        .expect("README has the CI recipe");
    b.lines.join("\n")
}

/// `key: value` lines under `with:` in a YAML text (the README's step), in order.
fn with_inputs(yaml: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut inside = None;
    for line in yaml.lines() {
        let indent = line.len() - line.trim_start().len();
        if line.trim() == "with:" {
            inside = Some(indent);
            continue;
        }
        let Some(at) = inside else { continue };
        if indent <= at || line.trim().is_empty() {
            inside = None;
            continue;
        }
        let l = line.trim();
        let l = l.split(" #").next().unwrap_or(l).trim();
        if let Some((k, v)) = l.split_once(':') {
            out.push((k.trim().to_string(), v.trim().trim_matches('"').to_string()));
        }
    }
    out
}

/// The inputs action.yml declares (the keys under `inputs:`).
fn action_inputs(action: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in action.lines() {
        if line.starts_with("inputs:") {
            inside = true;
            continue;
        }
        if inside && !line.starts_with(' ') && !line.trim().is_empty() {
            break;
        }
        if inside
            && line.starts_with("  ")
            && !line.starts_with("   ")
            && line.trim_end().ends_with(':')
        {
            out.push(line.trim().trim_end_matches(':').to_string());
        }
    }
    out
}

/// The README's workflow uses the action at the repository's root with inputs it declares;
/// the action builds the command line alone, only on a cache miss, and runs action/run.sh.
#[test]
fn ci_recipe_uses_the_action_which_builds_the_cli_alone_cached() {
    let recipe = ci_recipe();
    let action = read(&root().join("action.yml"));
    let declared = action_inputs(&action);
    assert!(
        ["warmup", "production", "model", "strict-shapes", "format"]
            .iter()
            .all(|i| declared.iter().any(|d| d == i)),
        "{declared:?}"
    );
    let given = with_inputs(&recipe);
    assert!(!given.is_empty(), "no `with:` in the recipe:\n{recipe}");
    for (k, _) in &given {
        assert!(
            declared.contains(k),
            "the recipe gives {k:?}, which action.yml does not declare"
        );
    }
    assert!(recipe.contains("uses: OWNER/tfreq@"), "{recipe}");
    let cache = action
        .find("actions/cache@")
        .expect("action.yml caches the build");
    let install = action
        .find("cargo install --locked --no-default-features --path")
        .expect("action.yml builds the command line alone");
    assert!(cache < install);
    let step = &action[..install];
    let cond = step.rfind("if: steps.cache.outputs.cache-hit != 'true'");
    assert!(
        cond.is_some_and(|c| c > cache),
        "the build runs on a cache hit too"
    );
    assert!(action.contains("action/run.sh\" check"), "{action}");
}

/// The recipe's inputs, on files of this repository standing for the reader's (the
/// README's `diff` example and the SavedModel they were made for), run through
/// action/run.sh as the action runs it: `diff` fails (exit 1) with an annotation, and
/// `check` still runs and passes.
#[test]
fn ci_recipe_runs_on_shipped_files() {
    let subst = [
        ("warm_up.bin", "tests/data/eas/faq_warmup.bin"),
        ("prod_request.bin", "tests/data/eas/faq_prod.bin"),
        ("model/1", "tests/data/models/faq"),
    ];
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("action/run.sh"))
        .arg("check")
        .current_dir(root())
        .env("TFREQ", TFREQ);
    for (k, v) in with_inputs(&ci_recipe()) {
        let v = subst
            .iter()
            .find(|(a, _)| *a == v)
            .map_or(v.clone(), |(_, b)| b.to_string());
        cmd.env(format!("INPUT_{}", k.to_uppercase().replace('-', "_")), v);
    }
    let o = cmd.output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("::error file=tests/data/eas/faq_prod.bin,title=FETCH_ADDED::"),
        "{out}"
    );
    assert!(out.contains("tfreq diff: new-executor"), "{out}");
    assert!(
        out.contains("tfreq check: ok"),
        "check did not run after the failed diff: {out}"
    );
}

// ---------------------------------------------------------------------------------------
// Sample outputs

/// Sample outputs the docs show as what a command prints: (page, the first line of the
/// `text` block, the command). The block must be the command's stdout, line for line.
const OUTPUTS: &[(&str, &str, &[&str])] = &[
    (
        "README.md",
        "tests/data/eas/seed_warm_up.bin: EAS PredictRequest, 9712 bytes",
        &["inspect", "tests/data/eas/seed_warm_up.bin"],
    ),
    (
        "README.md",
        "warm-up: tests/data/eas/faq_warmup.bin (1 request)",
        &[
            "diff",
            "tests/data/eas/faq_warmup.bin",
            "tests/data/eas/faq_prod.bin",
        ],
    ),
    (
        "docs/warmup.md",
        "10 requests in 5 files: 6 executor keys, 8 shape keys (2 entries skipped: no request in them)",
        &[
            "keys",
            "tests/data/eas/faq_prod.bin",
            "tests/data/eas/faq_prod_batch4.bin",
            "tests/data/eas/faq_prod_reordered.bin",
            "tests/data/tfrecord/warmup_mixed.tfrecord",
            "tests/data/tfrecord/warmup_predict.tfrecord",
        ],
    ),
];

#[test]
fn sample_outputs_are_what_the_commands_print() {
    for (page, first, args) in OUTPUTS {
        let (blocks, _) = split_fences(&read(&root().join(page)));
        let block = blocks
            .iter()
            .find(|b| b.info == "text" && b.lines.first().is_some_and(|l| l == first))
            .unwrap_or_else(|| panic!("{page}: no text block starting {first:?}"));
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let (_, stdout, _) = run(&args, None);
        let got = String::from_utf8(stdout).expect("UTF-8 output");
        assert_eq!(
            block.lines.join("\n").trim_end(),
            got.trim_end(),
            "{page}:{}: the sample output of `tfreq {}` is stale",
            block.line,
            args.join(" ")
        );
    }
}
