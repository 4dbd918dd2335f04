//! Times tfreq's builder, encoders and decoder in-process on one `[1, n]` float feed and
//! prints the figures as JSON, for `benches/compare/compare.py` (which times the
//! `eas_prediction` SDK and Python protobuf on the same bytes).
//!
//! ```text
//! cargo run --release --example codec_timing -- [N] [REPS] [OUT_DIR]
//! ```
//!
//! Each figure is the median of REPS runs, in seconds. With OUT_DIR, the EAS and TF
//! Serving requests are written there (`eas.bin`, `tfs.bin`) for the Python side.
//! `memcpy` is the baseline: a new `Vec` of the payload's size filled with
//! `extend_from_slice`. The builder runs get a fresh copy of the values (made outside
//! the timing, as a caller has them); every figure follows two untimed warm-up runs.

use std::time::{Duration, Instant};

use bytes::Bytes;
use tfreq::{DType, DecodeOptions, TFRequest, decode, decode_with};

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2)
        .copied()
        .unwrap_or_default()
        .as_secs_f64()
}

/// Runs `f` `reps` times on a fresh copy of `values` (made outside the timing), and
/// drops its output outside the timing.
fn time_with_values<R>(values: &[f32], reps: usize, mut f: impl FnMut(Vec<f32>) -> R) -> f64 {
    let mut times = Vec::with_capacity(reps);
    // Two untimed runs first, so every figure sees a warmed-up heap.
    for _ in 0..2 {
        drop(std::hint::black_box(f(values.to_vec())));
    }
    for _ in 0..reps {
        let v = values.to_vec();
        let t = Instant::now();
        let out = f(v);
        times.push(t.elapsed());
        drop(std::hint::black_box(out));
    }
    median(times)
}

fn time<R>(reps: usize, mut f: impl FnMut() -> R) -> f64 {
    let mut times = Vec::with_capacity(reps);
    for _ in 0..2 {
        drop(std::hint::black_box(f()));
    }
    for _ in 0..reps {
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed());
        drop(std::hint::black_box(out));
    }
    median(times)
}

fn build(v: Vec<f32>) -> TFRequest {
    let n = v.len() as i64;
    let mut req = TFRequest::new("serving_default");
    req.add_feed("x", &[1, n], DType::Float, v)
        .expect("a valid feed");
    req.add_fetch("y");
    req
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(Ok(1_000_000), |s| s.parse())?;
    let reps: usize = args.get(2).map_or(Ok(20), |s| s.parse())?;
    let values: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let payload: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();

    // The request is returned with the bytes, so it too is dropped outside the timing.
    let eas_build = time_with_values(&values, reps, |v| {
        let req = build(v);
        let bytes = req.to_bytes().expect("built by the builder");
        (req, bytes)
    });
    let tfs_build = time_with_values(&values, reps, |v| {
        let req = build(v);
        let bytes = req.to_tf_serving_bytes("m").expect("encodes");
        (req, bytes)
    });
    let req = build(values.clone());
    let eas = req.to_bytes()?;
    let tfs = req.to_tf_serving_bytes("m")?;
    let eas_b = Bytes::from(eas.clone());
    let tfs_b = Bytes::from(tfs.clone());
    let eas_decode_slice = time(reps, || decode(&eas).expect("decodes"));
    let eas_decode_bytes = time(reps, || {
        decode_with(eas_b.clone(), DecodeOptions::default()).expect("decodes")
    });
    let tfs_decode_slice = time(reps, || decode(&tfs).expect("decodes"));
    let tfs_decode_bytes = time(reps, || {
        decode_with(tfs_b.clone(), DecodeOptions::default()).expect("decodes")
    });
    let memcpy = time(reps, || {
        let mut out = Vec::with_capacity(payload.len());
        out.extend_from_slice(std::hint::black_box(&payload));
        out
    });
    if let Some(dir) = args.get(3) {
        std::fs::write(format!("{dir}/eas.bin"), &eas)?;
        std::fs::write(format!("{dir}/tfs.bin"), &tfs)?;
    }
    let doc = serde_json::json!({
        "n": n,
        "reps": reps,
        "payload_bytes": payload.len(),
        "eas_bytes": eas.len(),
        "tfs_bytes": tfs.len(),
        "seconds": {
            "memcpy": memcpy,
            "eas_build_encode": eas_build,
            "tfs_build_encode": tfs_build,
            "eas_decode_slice": eas_decode_slice,
            "eas_decode_bytes": eas_decode_bytes,
            "tfs_decode_slice": tfs_decode_slice,
            "tfs_decode_bytes": tfs_decode_bytes,
        }
    });
    println!("{doc}");
    Ok(())
}
