#![no_main]
// Body in tfreq::fuzzing::diff_pair, shared with tests/library/fuzz_corpus.rs (the corpus replay).
libfuzzer_sys::fuzz_target!(|data: &[u8]| tfreq::fuzzing::diff_pair(data));
