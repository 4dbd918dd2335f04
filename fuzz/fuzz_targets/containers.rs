#![no_main]
// Body in tfreq::fuzzing::containers, shared with tests/library/fuzz_corpus.rs (the corpus replay).
libfuzzer_sys::fuzz_target!(|data: &[u8]| tfreq::fuzzing::containers(data));
