#![no_main]
// Body in tfreq::fuzzing::decode_auto, shared with tests/library/fuzz_corpus.rs (the corpus replay).
libfuzzer_sys::fuzz_target!(|data: &[u8]| tfreq::fuzzing::decode_auto(data));
