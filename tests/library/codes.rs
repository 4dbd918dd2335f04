//! The finding-code tables of docs/codes.md (and the warm-up loader's table of
//! docs/warmup.md) against [`Code::ALL`]: every code the library can report is in
//! docs/codes.md with its default severity and the commands that report it, and every code
//! the tables name exists.

use std::collections::BTreeSet;

use tfreq::analysis::{Code, Severity};

/// The page with every finding code: the table of `inspect`/`diff`/`check` codes and the
/// table of the live commands' codes.
const CODES: &str = include_str!("../../docs/codes.md");
/// The page with the TFRecord warm-up loader's codes (`| code | when |`).
const WARMUP: &str = include_str!("../../docs/warmup.md");

/// The rows of the Markdown table of `page` whose header line is `header`.
fn table(page: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = page.lines().skip_while(|l| l.trim() != header);
    assert!(lines.next().is_some(), "no table {header:?} on the page");
    let sep = lines.next().unwrap_or_default();
    assert!(sep.starts_with("|---"), "{header:?}: no separator line");
    lines
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The codes in a cell: `` `FEED_ADDED` / `FEED_MISSING` ``.
fn codes(cell: &str) -> Vec<&str> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            s.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .collect()
}

/// `Some(severity)` for a cell that starts with one (`error (warning on EAS)`,
/// `error; note when ...`), `None` for `—` (the command does not report it).
fn severity(cell: &str, code: &str) -> Option<Severity> {
    let word: String = cell.chars().take_while(|c| c.is_alphabetic()).collect();
    match word.as_str() {
        "error" => Some(Severity::Error),
        "warning" => Some(Severity::Warning),
        "note" => Some(Severity::Note),
        "" if cell.starts_with('—') => None,
        _ => panic!("{code}: cell {cell:?} starts with neither a severity nor —"),
    }
}

#[test]
fn docs_code_table_matches_the_rules() {
    let mut seen: BTreeSet<Code> = BTreeSet::new();
    for row in table(CODES, "| code | inspect | diff | check | meaning |") {
        assert_eq!(row.len(), 5, "{row:?}");
        for id in codes(&row[0]) {
            let code = Code::from_id(id).unwrap_or_else(|| panic!("docs name {id}, no such code"));
            assert!(seen.insert(code), "{id} twice in the docs/codes.md table");
            let rule = code.rule();
            let cells = [
                ("inspect", &row[1], rule.commands.inspect),
                ("diff", &row[2], rule.commands.diff),
                ("check", &row[3], rule.commands.check),
            ];
            for (cmd, cell, reports) in cells {
                let sev = severity(cell, id);
                assert_eq!(
                    sev.is_some(),
                    reports,
                    "{id}: docs/codes.md says {cmd} {cell:?}"
                );
                if let Some(sev) = sev {
                    assert_eq!(
                        sev, rule.severity,
                        "{id}: docs/codes.md says {cmd} {cell:?}"
                    );
                }
            }
        }
    }
    for row in table(CODES, "| code | severity | meaning |") {
        assert_eq!(row.len(), 3, "{row:?}");
        let [id] = codes(&row[0])[..] else {
            panic!("{row:?}: not one code");
        };
        let code = Code::from_id(id).unwrap_or_else(|| panic!("docs name {id}, no such code"));
        assert!(seen.insert(code), "{id} twice in the docs/codes.md tables");
        let rule = code.rule();
        assert!(
            rule.commands.live,
            "{id}: in the live table, not a live code"
        );
        assert_eq!(severity(&row[1], id), Some(rule.severity), "{id}: {row:?}");
    }
    let missing: Vec<&str> = Code::ALL
        .iter()
        .filter(|c| !seen.contains(*c))
        .map(|c| c.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "not in docs/codes.md's code tables: {missing:?}"
    );
}

#[test]
fn docs_warmup_table_matches_the_rules() {
    let rows = table(WARMUP, "| code | when |");
    assert!(rows.len() >= 5, "{rows:?}");
    for row in rows {
        // `TOO_MANY_RECORDS` (error)
        let [id] = codes(&row[0])[..] else {
            panic!("{row:?}: not one code");
        };
        let code = Code::from_id(id).unwrap_or_else(|| panic!("docs name {id}, no such code"));
        let sev = row[0].split('(').nth(1).unwrap_or_default();
        assert_eq!(severity(sev, id), Some(code.rule().severity), "{row:?}");
        assert!(
            code.rule().commands.inspect,
            "{id}: inspect does not report it"
        );
    }
}

/// The table the test reads is the one it claims: a code with a wrong severity or a
/// command too many fails.
#[test]
fn a_wrong_row_fails() {
    let r = Code::ShapeChanged.rule();
    assert_eq!(
        severity("warning (error with `--strict-shapes`)", "x"),
        Some(r.severity)
    );
    assert_ne!(severity("error", "x"), Some(r.severity));
    assert_eq!(severity("— (said by `EMPTY_OUTPUT_FILTER`)", "x"), None);
    assert_eq!(
        codes("`FEED_ADDED` / `FEED_MISSING`"),
        ["FEED_ADDED", "FEED_MISSING"]
    );
}
