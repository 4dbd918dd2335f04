//! Writes the compiled descriptor set of `proto/` to stdout, for tools outside Rust
//! (`tests/data/gen/make_text_cases.py` loads it into Python's protobuf).
use std::io::Write;

fn main() -> std::io::Result<()> {
    std::io::stdout().write_all(tfreq::wire::DESCRIPTOR_SET)
}
