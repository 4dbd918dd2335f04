//! EAS text warm-ups (`.txt`, one string request per line).

mod common;

use bytes::Bytes;
use common::{data_dir, read};
use tfreq::formats::{load, load_detailed, text, ContainerKind, Content, Hint};

#[test]
fn text_warmup_lines_and_lengths() {
    let bytes = Bytes::from(read("text", "warm_up.txt"));
    for hint in [
        Hint::for_path(&data_dir().join("text/warm_up.txt")),
        Hint::Auto,
    ] {
        let c = load_detailed(bytes.clone(), Default::default(), hint).unwrap();
        assert_eq!(c.kind, ContainerKind::Text);
        let lines: Vec<&[u8]> = c
            .entries
            .iter()
            .map(|e| match &e.content {
                Content::Line(l) => &l[..],
                _ => panic!("not a line"),
            })
            .collect();
        let s = text::summary(&lines);
        assert_eq!((s.lines, s.min_len, s.max_len), (3, 26, 40));
        assert_eq!(lines[2], "what is the delivery time to 上海".as_bytes());
        assert_eq!(c.entries[2].label(c.kind), "line 4");
    }
    // Not requests: load() returns no messages.
    assert!(load(bytes, Default::default()).unwrap().is_empty());
}

#[test]
fn binary_requests_are_not_text() {
    for f in [
        "spec_vector.bin",
        "faq_prod.bin",
        "unicode_names.bin",
        "seed_warm_up.bin",
    ] {
        let c = load_detailed(Bytes::from(read("eas", f)), Default::default(), Hint::Auto).unwrap();
        assert_eq!(c.kind, ContainerKind::Bare, "{f}");
    }
}
