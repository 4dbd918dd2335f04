//! Hand-made wire bytes that parsers read in surprising ways (a known field of another
//! wire type, a field or map key that occurs twice, oneof members in turn, groups,
//! packed and unpacked values mixed, bad UTF-8, truncation), each with what Python's
//! pure protobuf 3.20 printed for it, or refused: `tests/data/gen/make_text_cases.py`.
//! The streaming text printer must print exactly that, or refuse the same bytes.

#[test]
fn text_printer_reads_odd_bytes_as_python_does() {
    let cases: serde_json::Value =
        serde_json::from_slice(&crate::common::read("text_cases", "cases.json"))
            .expect("cases.json is JSON");
    let cases = cases.as_array().expect("a list of cases");
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let message = c["message"].as_str().unwrap();
        let hex = c["hex"].as_str().unwrap();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let ours = tfreq::render::to_text(&bytes, message);
        match c.get("text").and_then(|t| t.as_str()) {
            Some(python) => assert_eq!(ours.as_deref().ok(), Some(python), "{name}: {ours:?}"),
            None => assert!(
                ours.is_err(),
                "{name}: Python refused ({}), tfreq printed {ours:?}",
                c["error"]
            ),
        }
    }
}
