//! The public API names each item once: no two public items (functions, types, traits,
//! constants) share a name across the crate's public modules, so a name in the docs, in
//! an import or in an error means one thing. And the public modules stay few: each
//! top-level module is one namespace, its files private modules whose public items it
//! re-exports (`pub use`), so an item's path does not follow how its code is split.
//!
//! Read from the source, as rustdoc lists it: the modules `src/lib.rs` makes public, and
//! theirs; in each, the items declared `pub` at its top level, the names its `pub use`
//! lines re-export, and the public items of a private child it re-exports whole
//! (`pub use child::*`). Items marked `#[doc(hidden)]` are not part of it: so the
//! `fuzzing` module (the fuzz targets' bodies, `#[doc(hidden)]` and behind the feature
//! `fuzzing`, not a stable API) is neither read nor counted.
//!
//! The protobuf types generated from `proto/` (build.rs: prost's output, `include!`d by
//! modules written inline in `src/wire/mod.rs`) are reached through one module per
//! protobuf package, `wire::eas` (`tfreq.eas`), `wire::tf` (`tensorflow`) and
//! `wire::tf::serving` (`tensorflow.serving`, also `wire::tfs`): they keep the schema's
//! names, so they cannot be folded into one namespace (`PredictRequest` is in two
//! packages). These three count as public modules; their items are not read. The modules
//! prost nests inside them, one per message with a nested type or a `oneof`
//! (`wire::tf::tensor_shape_proto::Dim`), are part of those messages' schema names, are
//! not in `src/`, and are not counted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The public modules there may be, at most: the top-level namespaces and the protobuf
/// packages under `wire` (`public_modules_stay_few` lists them when it fails).
const MAX_PUBLIC_MODULES: usize = 20;

/// A module's file and its directory of child modules.
fn child_file(dir: &Path, name: &str) -> PathBuf {
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

fn child_dir(file: &Path) -> PathBuf {
    let stem = file.file_stem().unwrap().to_str().unwrap();
    if stem == "mod" || stem == "lib" {
        file.parent().unwrap().to_path_buf()
    } else {
        file.with_extension("")
    }
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The names a `pub use` statement brings in (its last path segment, or its alias),
/// with `*` for a glob of the named child.
fn use_names(stmt: &str) -> Vec<String> {
    let body = stmt
        .trim_start_matches("pub use ")
        .trim_end_matches(';')
        .replace(char::is_whitespace, " ");
    let (prefix, list) = match body.split_once('{') {
        Some((p, l)) => (p.to_string(), l.trim_end_matches('}').to_string()),
        None => {
            let (p, last) = body.rsplit_once("::").unwrap_or(("", &body));
            (format!("{p}::"), last.to_string())
        }
    };
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "self")
        .map(|s| match s.split_once(" as ") {
            Some((_, alias)) => alias.trim().to_string(),
            None if s == "*" => format!("*{}", prefix.trim_end_matches("::")),
            None => s.rsplit("::").next().unwrap().to_string(),
        })
        .collect()
}

const ITEM_KINDS: &[&str] = &[
    "fn ",
    "const fn ",
    "struct ",
    "enum ",
    "trait ",
    "type ",
    "const ",
    "static ",
    "union ",
];

/// Public items by name, each with the modules that hold one; and the public modules.
#[derive(Default)]
struct Surface {
    items: BTreeMap<String, Vec<String>>,
    modules: Vec<String>,
}

impl Surface {
    /// Reads the module in `file` as `path` (`""` for the crate root); `public` is false
    /// for a private child read for a glob re-export (its items count in `path`).
    fn read(&mut self, file: &Path, path: &str) {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let dir = child_dir(file);
        let lines: Vec<&str> = text.lines().collect();
        // The inline modules (protobuf packages) the line is in: their indent and path.
        let mut inline: Vec<(usize, String)> = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            let hidden = i > 0 && lines[i - 1].trim() == "#[doc(hidden)]";
            i += 1;
            if line.starts_with("#[cfg(test)]") {
                break; // a test module ends every file that has one
            }
            let code = line.trim_start();
            if let Some(m) = code.strip_prefix("pub mod ") {
                let name = ident(m);
                if m[name.len()..].trim_start().starts_with('{') {
                    // A module written inline: a protobuf package, counted, not read.
                    let indent = line.len() - code.len();
                    inline.retain(|(at, _)| *at < indent);
                    if !hidden {
                        let outer = inline.last().map_or(path, |(_, p)| p.as_str());
                        let sub = join(outer, name);
                        self.modules.push(sub.clone());
                        inline.push((indent, sub));
                    }
                    continue;
                }
            }
            let Some(rest) = line.strip_prefix("pub ") else {
                continue;
            };
            if hidden {
                continue;
            }
            if let Some(m) = rest.strip_prefix("mod ") {
                let sub = join(path, ident(m));
                let name = ident(m);
                self.modules.push(sub.clone());
                self.read(&child_file(&dir, name), &sub);
            } else if rest.starts_with("use ") {
                let mut stmt = line.to_string();
                while !stmt.trim_end().ends_with(';') {
                    stmt.push(' ');
                    stmt.push_str(lines[i]);
                    i += 1;
                }
                for name in use_names(&stmt) {
                    if let Some(child) = name.strip_prefix('*') {
                        let child = child.trim_start_matches("self::");
                        assert!(
                            !child.contains("::"),
                            "{file:?}: a glob re-export of {child} is not read"
                        );
                        self.read(&child_file(&dir, child), path);
                    } else {
                        self.add(&name, path);
                    }
                }
            } else if let Some(kind) = ITEM_KINDS.iter().find(|k| rest.starts_with(**k)) {
                self.add(ident(&rest[kind.len()..]), path);
            }
        }
    }

    fn add(&mut self, name: &str, module: &str) {
        let at = if module.is_empty() { "tfreq" } else { module };
        let holders = self.items.entry(name.to_string()).or_default();
        if !holders.iter().any(|h| h == at) {
            holders.push(at.to_string());
        }
    }
}

/// `module::name`, or `name` in the crate root (`""`).
fn join(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}::{name}")
    }
}

fn surface() -> Surface {
    let mut s = Surface::default();
    s.read(Path::new("src/lib.rs"), "");
    s
}

#[test]
fn no_two_public_items_share_a_name() {
    let s = surface();
    assert!(
        s.items.len() > 300,
        "only {} public names read: the reader lost its way",
        s.items.len()
    );
    for known in [
        "TFRequest",
        "decode",
        "Finding",
        "DEFAULT_MAX_KEYS",
        "to_f32",
    ] {
        assert!(s.items.contains_key(known), "{known} not read");
    }
    let shared: Vec<String> = s
        .items
        .iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(name, at)| format!("{name}: {}", at.join(", ")))
        .collect();
    assert!(
        shared.is_empty(),
        "public items of one name (rename one, or make it pub(crate)):\n{}",
        shared.join("\n")
    );
}

#[test]
fn public_modules_stay_few() {
    let s = surface();
    for known in ["analysis", "wire", "wire::tf::serving"] {
        assert!(s.modules.iter().any(|m| m == known), "{known} not read");
    }
    assert!(!s.modules.iter().any(|m| m == "fuzzing"));
    assert!(
        s.modules.len() <= MAX_PUBLIC_MODULES,
        "{} public modules, more than {MAX_PUBLIC_MODULES}: {:?}",
        s.modules.len(),
        s.modules
    );
}

#[test]
fn the_reader_sees_a_name_shared() {
    // The check above would pass on a reader that misses duplicates: feed it two.
    let dir = std::env::temp_dir().join(format!("tfreq-api-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "pub mod a;\npub mod b;\nmod c;\npub use c::{Thing as Other, read};\n\
         pub mod gen {\n    pub mod inner {\n        pub fn not_read() {}\n    }\n}\n\
         #[doc(hidden)]\npub mod hidden {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a.rs"),
        "pub fn read() {}\npub(crate) fn hidden() {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b").join("mod.rs"),
        "mod inner;\npub use inner::*;\n#[doc(hidden)]\npub fn hidden() {}\n",
    )
    .unwrap();
    std::fs::write(dir.join("b").join("inner.rs"), "pub struct Other;\n").unwrap();
    let mut s = Surface::default();
    s.read(&dir.join("lib.rs"), "");
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(s.modules, ["a", "b", "gen", "gen::inner"]);
    assert_eq!(s.items["read"], ["a", "tfreq"]);
    assert_eq!(s.items["Other"], ["b", "tfreq"]);
    assert!(!s.items.contains_key("hidden"));
    assert!(!s.items.contains_key("not_read"));
}
