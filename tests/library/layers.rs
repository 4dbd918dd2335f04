//! The library's layers only look down: each top-level module of `src/` may name (`crate::x`)
//! only modules of a lower layer. This test fails on a new upward or cyclic import, and on a
//! top-level module the table below does not place.
//!
//! The order (README, "The pipeline"): wire → model → decode / encode / builder → formats →
//! analysis → render; `cli/` (the command line, the crate `tfreq-cli`) sits on top and, being
//! another crate, can use the public API only.

use std::collections::BTreeMap;
use std::path::Path;

/// Layer of every top-level module, lowest first. A module may use modules of a strictly
/// lower layer.
const LAYERS: &[(&str, u32)] = &[
    // Field numbers: constants only (checked against the descriptor set in its tests).
    ("fields", 0),
    ("par", 1),
    ("crc32c", 1),
    ("dtype", 1),
    ("pyfloat", 1),
    ("digits", 1),
    ("escape", 1),
    ("minifloat", 2),
    ("wire", 2),
    ("model", 3),
    ("signature", 3),
    ("finding", 3),
    ("error", 4),
    ("io", 5),
    ("decode", 5),
    ("encode", 5),
    ("builder", 6),
    ("scrub", 7),
    ("formats", 8),
    ("analysis", 9),
    ("render", 10),
    ("scan", 10),
    ("net", 11),
];

/// Pairs the order alone would allow but the design does not: analysis is pure (no files,
/// no threads: the CLI reads inputs and hands over bytes or models).
const FORBIDDEN: &[(&str, &str)] = &[("analysis", "io"), ("analysis", "par"), ("render", "io")];

/// Not layers: the crate root (re-exports) and the fuzzing entry points (tests of everything).
const OUTSIDE: &[&str] = &["lib", "fuzzing"];

fn top_module(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.strip_suffix(".rs").unwrap_or(&first).to_string()
}

/// The code of a file without comments, without the contents of its string and character
/// literals, and without its `#[cfg(test)]` items: each such attribute takes out the one
/// item (or statement) it is on — a `mod tests { … }`, a helper `fn`, a `use` — and the
/// code after it stays checked. (Cutting the file at its first `#[cfg(test)]` hid every line
/// below a test-only helper from the check.) A file whose first line is `#![cfg(test)]` is
/// all test code.
fn code_of(text: &str) -> String {
    let code = lex(text);
    if code.trim_start().starts_with("#![cfg(test)]") {
        return String::new();
    }
    let mut out = String::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        rest = &rest[i + "#[cfg(test)]".len()..];
        rest = &rest[item_end(rest)..];
    }
    out.push_str(rest);
    out
}

/// Comments taken out (a newline kept for each line comment), string literals (`"…"`,
/// `r#"…"#`, byte strings) emptied to `""`, character literals to `' '`: what is left is code,
/// with braces that balance.
fn lex(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |j: usize| j > 0 && (c[j - 1].is_alphanumeric() || c[j - 1] == '_');
    while i < c.len() {
        match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(' ');
            }
            'r' if !ident(i) || c[i - 1] == 'b' && !ident(i - 1) => {
                // A raw string `r"…"`, `r#"…"#` (or `br…`), else an identifier's `r`.
                let hashes = c[i + 1..].iter().take_while(|&&h| h == '#').count();
                if c.get(i + 1 + hashes) != Some(&'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                i += hashes + 2;
                let closes =
                    |j: usize| c[j] == '"' && c[j + 1..].iter().take(hashes).all(|&h| h == '#');
                while i < c.len() && !closes(i) {
                    i += 1;
                }
                i += 1 + hashes;
                out.push_str("\"\"");
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    i += if c[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' if c.get(i + 1) == Some(&'\\') => {
                // `'\n'`, `'\''`, `'\u{…}'`: past the escaped character, to the closing quote.
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            }
            '\'' if c.get(i + 2) == Some(&'\'') => {
                i += 3;
                out.push_str("' '");
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

/// Where the item that starts `code` ends (after its further attributes): after its `;`, or
/// after the `}` that closes its first top-level `{`.
fn item_end(code: &str) -> usize {
    let b = code.as_bytes();
    let mut i = 0;
    let mut depth = 0i32;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b';' if depth == 0 => return i + 1,
            b'{' if depth == 0 => {
                let mut braces = 0;
                while i < b.len() {
                    match b[i] {
                        b'{' => braces += 1,
                        b'}' => {
                            braces -= 1;
                            if braces == 0 {
                                return i + 1;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// What the crate root re-exports: `pub use module::{A, b::C};` maps `A` and `C` to `module`.
fn root_reexports(lib_rs: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for stmt in code_of(lib_rs).split(';') {
        let Some(path) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = path.split_once("::") else {
            continue;
        };
        for item in items.split([',', '{', '}']) {
            let name = item.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    map
}

/// Top-level modules named as `crate::name` or inside `crate::{a, b::c}` (names the crate
/// root re-exports, such as `crate::Message`, are kept as written and resolved by the caller).
fn used_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `.rs` file of `src/`: its path under `src/`, its top-level module, its text.
fn src_files() -> Vec<(std::path::PathBuf, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap().to_path_buf();
            let from = top_module(&rel);
            let text = std::fs::read_to_string(&f).unwrap();
            (rel, from, text)
        })
        .collect()
}

#[test]
fn layers_only_look_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let reexports = root_reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let problems = layer_problems(&src_files(), &reexports);
    assert!(
        problems.is_empty(),
        "upward or unplaced imports:\n{}",
        problems.join("\n")
    );
}

/// The imports of `files` (path under `src/`, top-level module, text) that look up or sideways,
/// or name what is not a layer.
fn layer_problems(
    files: &[(std::path::PathBuf, String, String)],
    reexports: &BTreeMap<String, String>,
) -> Vec<String> {
    let layer: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let mut problems = Vec::new();
    for (rel, from, text) in files {
        if OUTSIDE.contains(&from.as_str()) {
            continue;
        }
        let Some(&lf) = layer.get(from.as_str()) else {
            problems.push(format!(
                "{}: module `{from}` has no layer in tests/library/layers.rs",
                rel.display()
            ));
            continue;
        };
        for name in used_modules(&code_of(text)) {
            let to = reexports.get(&name).cloned().unwrap_or(name);
            if to == *from || to == "self" || OUTSIDE.contains(&to.as_str()) && to != "fuzzing" {
                continue;
            }
            match layer.get(to.as_str()) {
                Some(_) if FORBIDDEN.contains(&(from.as_str(), to.as_str())) => problems.push(format!(
                    "{}: `{from}` uses `crate::{to}`, which tests/library/layers.rs forbids",
                    rel.display()
                )),
                Some(&lt) if lt < lf => {}
                Some(&lt) => problems.push(format!(
                    "{}: `{from}` (layer {lf}) uses `crate::{to}` (layer {lt}): layers only look down",
                    rel.display()
                )),
                None if to.starts_with(|c: char| c.is_ascii_uppercase()) => problems.push(format!(
                    "{}: `{from}` uses `crate::{to}`, which the crate root does not re-export from a layer",
                    rel.display()
                )),
                None => problems.push(format!(
                    "{}: `{from}` uses `crate::{to}`, which is not a layer",
                    rel.display()
                )),
            }
        }
    }
    problems
}

/// The check reads past a `#[cfg(test)]` helper in the middle of a file. `src/scan.rs` had
/// one (a test-only `fn` with its doc comment) above 450 lines of the module; when the check
/// stopped at the first `#[cfg(test)]`, the upward import below it passed unseen.
#[test]
fn an_upward_import_below_a_test_only_item_fails_the_check() {
    let scan = r#"use crate::formats::tfrecord;

#[cfg(test)]
/// Counts walks in tests (`}` in a doc comment).
pub(crate) fn walks(chunk: usize) -> usize {
    let close = "}"; let brace = '}'; let raw = r"}";
    chunk + close.len() + raw.len() + brace.len_utf8()
}

pub fn count_tfrecord() {
    #[cfg(test)]
    tests::WALKS.with(|w| w.set(w.get() + 1));
    crate::net::send(); /* } */
}

#[cfg(test)]
mod tests {
    use crate::render::json;
}
"#;
    let files = vec![(
        std::path::PathBuf::from("scan.rs"),
        "scan".to_string(),
        scan.to_string(),
    )];
    assert_eq!(
        layer_problems(&files, &BTreeMap::new()),
        ["scan.rs: `scan` (layer 10) uses `crate::net` (layer 11): layers only look down"]
    );
    // The same file with its upward import inside the test module passes.
    let fine = scan.replace("crate::net::send();", "");
    assert_eq!(
        layer_problems(
            &[(files[0].0.clone(), files[0].1.clone(), fine)],
            &BTreeMap::new()
        ),
        Vec::<String>::new()
    );
}

#[test]
fn test_only_items_are_cut_one_at_a_time() {
    let code = code_of(
        "#![allow(x)]\n#[cfg(test)]\nuse crate::net::a;\nuse crate::wire::b;\n#[cfg(test)]\n#[derive(Debug)]\nstruct T { a: [u8; 2] }\nfn f() { crate::model::g(\"crate::net\", '\\'', '{'); }\n",
    );
    assert_eq!(used_modules(&code), ["wire", "model"]);
    assert_eq!(code_of("#![cfg(test)]\nuse crate::net::a;\n"), "");
}

/// What the pure layer must not name even through `std` or a dependency: file access and
/// threads (the callers above it read files and spread work over cores).
const IMPURE: &[(&str, &[&str])] = &[(
    "analysis",
    &[
        "std::fs",
        "std::thread",
        "thread::scope",
        "thread::spawn",
        "std::sync::mpsc",
        "memmap2",
        "File::open",
    ],
)];

#[test]
fn analysis_is_pure() {
    let mut problems = Vec::new();
    for (rel, from, text) in src_files() {
        let Some((_, names)) = IMPURE.iter().find(|(m, _)| *m == from) else {
            continue;
        };
        let code = code_of(&text);
        for name in names.iter().filter(|n| code.contains(*n)) {
            problems.push(format!("{}: `{from}` names `{name}`", rel.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "file access or threads in a pure layer:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_sees_imports() {
    let code = code_of(
        "use crate::{model::Message, wire::reader::Reader};\nlet x = crate::render::x(); // crate::io\n",
    );
    assert_eq!(used_modules(&code), ["model", "wire", "render"]);
}

/// The files of one folder that a file names: `super::x`, `crate::folder::x` or
/// `crate::folder::{x, …}` (for `cli/src/`, the command line's crate, whose root is
/// its `lib.rs`, `crate::x`). A folder's `mod.rs` (its root) is left out: it declares its
/// files and re-exports them, so every file "uses" it.
fn sibling_uses(code: &str, folder: &str, siblings: &[String], own: &str) -> Vec<String> {
    let mut prefixes = vec!["super::".to_string()];
    if folder.is_empty() {
        prefixes.push("crate::".to_string());
    } else {
        prefixes.push(format!("crate::{}::", folder.replace('/', "::")));
    }
    let mut out = Vec::new();
    for prefix in &prefixes {
        let mut rest = code;
        while let Some(i) = rest.find(prefix.as_str()) {
            // Not a longer path that merely ends with the prefix (`a::super::`).
            let ok = i == 0
                || !rest.as_bytes()[i - 1].is_ascii_alphanumeric()
                    && rest.as_bytes()[i - 1] != b':';
            rest = &rest[i + prefix.len()..];
            if !ok {
                continue;
            }
            let names: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => group[..group.find('}').unwrap_or(group.len())]
                    .split(',')
                    .map(|s| {
                        s.trim()
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect()
                    })
                    .collect(),
                None => vec![
                    rest.chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect(),
                ],
            };
            for n in names {
                if n != own && siblings.contains(&n) && !out.contains(&n) {
                    out.push(n);
                }
            }
        }
    }
    out
}

/// Within each folder of `src/` (a module's files), and in `cli/src/` (the command
/// line's), no two files use each other, directly or round a longer circle: each
/// folder's files are layered too.
#[test]
fn no_cycles_between_the_files_of_a_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    // (folder, its path as `crate::` names it, its path for a message)
    let mut folders = vec![(root.join("cli/src"), String::new(), "cli/src".to_string())];
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            let rel = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            folders.push((p, rel.clone(), format!("src/{rel}")));
        }
    }
    // Files that are modules in their own right next to a folder of their parts
    // (`src/scan.rs` and `src/scan/`) have those parts as siblings too.
    let mut problems = Vec::new();
    for (dir, crate_rel, shown) in folders {
        let mut files: Vec<(String, String)> = Vec::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let text = if p.is_dir() {
                std::fs::read_to_string(p.join("mod.rs")).unwrap_or_default()
            } else if p.extension().is_some_and(|x| x == "rs") {
                std::fs::read_to_string(&p).unwrap()
            } else {
                continue;
            };
            if name != "mod" && name != "main" && name != "lib" {
                files.push((name, code_of(&text)));
            }
        }
        let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
        let edges: BTreeMap<String, Vec<String>> = files
            .iter()
            .map(|(n, code)| (n.clone(), sibling_uses(code, &crate_rel, &names, n)))
            .collect();
        // A circle: a file reached again from itself.
        for start in &names {
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = std::collections::BTreeSet::new();
            while let Some((at, path)) = stack.pop() {
                for next in edges.get(&at).into_iter().flatten() {
                    if next == start {
                        let mut circle = path.clone();
                        circle.push(next.clone());
                        problems.push(format!("{shown}: {}", circle.join(" -> ")));
                    } else if seen.insert(next.clone()) {
                        let mut p = path.clone();
                        p.push(next.clone());
                        stack.push((next.clone(), p));
                    }
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "files of one folder that use each other:\n{}",
        problems.join("\n")
    );
}
