//! The network clients and `tfreq record` against servers written here (in-process
//! HTTP/1.1 and gRPC servers, hostile peers) and, ignored by a plain `cargo test`, against
//! the TensorFlow-backed services of tests/live/ (`live`, run by tests/live/run.sh).

#[path = "../common/mod.rs"]
mod common;

mod hostile_grpc;
mod hostile_record;
mod live;
mod net;
