//! Writes the seed document's `warm_up.bin` with tfreq — byte-identical to what the
//! `eas_prediction` Python SDK writes for the same calls (tests/data/eas/seed_warm_up.bin).
//!
//! ```sh
//! cargo run --example seed_warmup -- /tmp/warm_up.bin && cmp /tmp/warm_up.bin tests/data/eas/seed_warm_up.bin
//! ```

use tfreq::{DType, TFRequest};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "warm_up.bin".into());
    let mut req = TFRequest::new("serving_default");
    req.add_feed("sentence1", &[200, 15], DType::Int32, vec![1i32; 200 * 15])?;
    req.add_feed("sentence2", &[200, 15], DType::Int32, vec![1i32; 200 * 15])?;
    req.add_feed("y", &[200, 2], DType::Int32, vec![2i32; 200 * 2])?;
    req.add_feed("keep_rate", &[], DType::Float, vec![0.2f32])?;
    req.add_feed("images", &[1, 784], DType::Float, vec![1.0f32; 784])?;
    req.add_fetch("sorted_labels");
    req.add_fetch("sorted_probs");
    std::fs::write(out, req.to_bytes()?)?;
    Ok(())
}
