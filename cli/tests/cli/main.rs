//! The command line as a user runs it: the built `tfreq` on the files in `tests/data/`, its
//! outputs, exit codes and conventions, the golden outputs of `tests/golden/`, the commands
//! the documentation shows, and hostile inputs and names.
//!
//! One test binary of several (`tests/*/main.rs`), each a module per subject: one binary
//! links the crate and its test dependencies once, where a binary per file linked them
//! fifty times.

#[path = "../common/mod.rs"]
mod common;

mod bounded_logs;
mod cli_conventions;
mod cli_inspect;
mod cli_outputs;
mod cli_runs;
mod cli_warmups;
mod detect;
mod docs;
mod fidelity;
mod golden;
mod hostile_inputs;
mod hostile_names;
mod streaming;
mod text_build;
mod verdicts;
mod warmup_model;
