#![no_main]
// Body in tfreq::fuzzing::text_format_build, shared with tests/library/fuzz_corpus.rs (the corpus replay).
libfuzzer_sys::fuzz_target!(|data: &[u8]| tfreq::fuzzing::text_format_build(data));
