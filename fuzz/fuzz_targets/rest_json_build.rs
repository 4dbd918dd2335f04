#![no_main]
// Body in tfreq::fuzzing::rest_json_build, shared with tests/library/fuzz_corpus.rs (the corpus replay).
libfuzzer_sys::fuzz_target!(|data: &[u8]| tfreq::fuzzing::rest_json_build(data));
