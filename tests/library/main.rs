//! The library's own guarantees: decoding bounded in memory and time on adversarial
//! bytes, round-trip properties, the fuzz corpus replayed, errors that convert and keep their
//! message, a host process left alone, the layers of `src/`, one public item a name, the code tables of `docs/`,
//! and summaries that merge exactly.

#[path = "../common/mod.rs"]
mod common;

mod adversarial;
mod alloc;
mod api;
mod big_logs;
mod bounded;
mod codes;
mod errors;
mod fuzz_corpus;
mod layers;
mod process_state;
mod properties;
mod summary;
