//! A plain TFRecord log file is as big as it is: `keys` (`tfreq::scan::count`) walks a
//! mapped log in parts read from the file, so it is not held to the cap of an input read
//! whole; a cap on streams (`--max-size` given) still bounds it.

use tfreq::ReadOptions;
use tfreq::formats::InputOptions;
use tfreq::formats::encode_predict_log;
use tfreq::formats::write_record;

#[test]
fn a_mapped_log_is_counted_past_the_whole_input_cap_unless_a_stream_cap_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.tfrecord");
    let req = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tfs/seed_content.bin"
    ))
    .unwrap();
    let mut one = Vec::new();
    write_record(&mut one, &encode_predict_log(&req));
    // Past 64 MiB, so the file is mapped (`tfreq::MAP_THRESHOLD`).
    let n = (65 << 20) / one.len() + 1;
    std::fs::write(&path, one.repeat(n)).unwrap();
    // SAFETY: the file is this test's own; nothing truncates it while it is mapped.
    let read = unsafe { ReadOptions::default().max_size(1 << 20).map_large_files() };
    let counted = tfreq::scan::count(
        &[path.as_path()],
        &InputOptions::new().read_options(read),
        false,
    );
    assert!(counted.errors.is_empty(), "{:?}", counted.errors);
    assert_eq!(counted.counts.requests, n as u64);
    // With a cap on streams the log is refused past it.
    let capped = InputOptions::new().read_options(read.max_streamed(Some(1 << 20)));
    let counted = tfreq::scan::count(&[path.as_path()], &capped, false);
    assert_eq!(counted.errors.len(), 1);
    assert_eq!(counted.counts.requests, 0);
    // A file that is not a log keeps the cap of an input read whole.
    let bare = dir.path().join("big.bin");
    std::fs::write(&bare, vec![0u8; 65 << 20]).unwrap();
    let counted = tfreq::scan::count(
        &[bare.as_path()],
        &InputOptions::new().read_options(read),
        false,
    );
    assert_eq!(counted.errors.len(), 1, "{:?}", counted.counts.requests);
}
