//! EAS text warm-ups (`.txt`, one string request per line).

use crate::common::{data_dir, read};
use bytes::Bytes;
use tfreq::formats::{
    self, Container, ContainerKind, Content, InputFormat, InputOptions, read as read_input,
};

fn load_detailed(b: Bytes, src: &InputOptions) -> Result<Container, tfreq::Error> {
    read_input(b, src).and_then(|e| e.into_container())
}

#[test]
fn text_warmup_lines_and_lengths() {
    let bytes = Bytes::from(read("text", "warm_up.txt"));
    for src in [
        InputOptions::new().for_path(&data_dir().join("text/warm_up.txt")),
        InputOptions::new()
            .format(InputFormat::EasText)
            .for_path("warm_up".as_ref()),
    ] {
        let c = load_detailed(bytes.clone(), &src).unwrap();
        assert_eq!(c.kind, ContainerKind::Text);
        let lines: Vec<&[u8]> = c
            .entries
            .iter()
            .map(|e| match &e.content {
                Content::Line(l) => &l[..],
                _ => panic!("not a line"),
            })
            .collect();
        let s = formats::summary(&lines);
        assert_eq!((s.lines, s.min_len, s.max_len), (3, 26, 40));
        assert_eq!(lines[2], "what is the delivery time to 上海".as_bytes());
        assert_eq!(c.entries[2].label(c.kind), "line 4");
    }
    // Not requests: load() returns no messages.
    let src = InputOptions::new().for_path("warm_up.txt".as_ref());
    assert!(
        read_input(bytes.clone(), &src)
            .and_then(|e| e.into_records())
            .unwrap()
            .is_empty()
    );
    // Not named *.txt and not said to be one: text lines are no request file.
    let err = load_detailed(bytes, &InputOptions::new()).unwrap_err();
    assert!(
        matches!(err.detail(), tfreq::ErrorDetail::NotRequestText(_)),
        "{err}"
    );
    assert_eq!(err.classify(), tfreq::Category::Unrecognised);
    let err = err.to_string();
    assert!(err.contains("not a request file"), "{err}");
    // The command line adds "or read with --from eas-text"; the library names no option.
    assert!(err.ends_with("must be named *.txt"), "{err}");
}

#[test]
fn binary_requests_are_not_text() {
    for f in [
        "spec_vector.bin",
        "faq_prod.bin",
        "unicode_names.bin",
        "seed_warm_up.bin",
    ] {
        let c = load_detailed(Bytes::from(read("eas", f)), &InputOptions::new()).unwrap();
        assert_eq!(c.kind, ContainerKind::Bare, "{f}");
    }
}

#[test]
fn python_text_format_files_load_as_their_requests() {
    // Every .txt next to a request .bin is Python's text_format of it: formats::load
    // reads it as that request (not as a text warm-up).
    let mut n = 0;
    for (dir, wire) in [
        ("eas", tfreq::WireFormat::Eas),
        ("tfs", tfreq::WireFormat::TfServing),
    ] {
        let mut paths: Vec<_> = std::fs::read_dir(data_dir().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for p in paths
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        {
            let bin = p.with_extension("bin");
            let Ok(b) = std::fs::read(&bin) else { continue };
            let opts = tfreq::DecodeOptions {
                wire: Some(wire),
                ..Default::default()
            };
            let Ok((orig, _)) = tfreq::decode_with(Bytes::from(b), opts) else {
                continue;
            };
            if orig.kind != tfreq::Kind::Request {
                continue; // responses: text format of a response is not a request file
            }
            let mut src = InputOptions::new().for_path(p);
            src.decode = opts;
            let c = load_detailed(Bytes::from(std::fs::read(p).unwrap()), &src)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(c.kind, ContainerKind::TextFormat, "{}", p.display());
            let Content::Message(m) = &c.entries[0].content else {
                panic!()
            };
            assert_eq!(
                tfreq::analysis::ShapeKey::of(m),
                tfreq::analysis::ShapeKey::of(&orig),
                "{}",
                p.display()
            );
            n += 1;
        }
    }
    assert!(n > 40, "{n}");
}

/// A text-format request with a misspelt field (`strng_val:` for
/// `string_val:`) was taken for an EAS string warm-up of its lines (exit 0). Text that
/// reads as protobuf text (fields, braces, quoted strings) but does not parse is an
/// error naming the line and column, whatever the file's name; text that does not look
/// like text format (`query: shoes`) is still a string warm-up when named *.txt.
#[test]
fn text_format_with_a_typo_is_an_error_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let good =
        std::fs::read_to_string(crate::common::data_dir().join("eas/dtype_string.txt")).unwrap();
    assert!(good.contains("    string_val: \"a\""));
    let typo = good.replace("string_val:", "strng_val:");
    for name in ["typo.txt", "typo.pbtxt", "typo"] {
        let f = dir.path().join(name);
        std::fs::write(&f, &typo).unwrap();
        let r = crate::common::run(&["inspect", &f.display().to_string()]);
        assert_eq!(r.code, 2, "{name}: {}{}", r.out, r.err);
        assert!(
            r.err
                .contains("line 10 column 5: field 'strng_val' not found"),
            "{name}: {}",
            r.err
        );
        assert!(!r.out.contains("EAS text warm-up"), "{name}: {}", r.out);
    }
    // An unclosed block: the parser's error, not a warm-up of three lines.
    let f = dir.path().join("open.txt");
    std::fs::write(&f, "inputs {\n  key: \"x\"\n  value { dtype: DT_FLOAT\n").unwrap();
    let r = crate::common::run(&["inspect", &f.display().to_string()]);
    assert_eq!(r.code, 2, "{}{}", r.out, r.err);
    assert!(
        r.err.contains("not a PredictRequest in text format"),
        "{}",
        r.err
    );
    // Lines of `word: words` are strings, as before.
    let f = dir.path().join("queries.txt");
    std::fs::write(&f, "query: shoes\nquery: red hat\nNote: see {this}\n").unwrap();
    let r = crate::common::run(&["inspect", &f.display().to_string()]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert!(
        r.out.contains("EAS text warm-up, 3 request lines"),
        "{}",
        r.out
    );
}
