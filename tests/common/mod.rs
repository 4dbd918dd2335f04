//! Helpers shared by the test binaries (`tests/library/main.rs` and, through
//! `cli/tests/common/mod.rs`, the command line's `cli/tests/*/main.rs` load this file with
//! `#[path]`): the repository's data files and their manifests, a large request made at
//! test time (`bigreq`) and a pseudo-terminal (`pty`).
#![allow(dead_code)]

pub mod bigreq;
pub mod pty;

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::Value;
use tfreq::{Complex, DType, FeedValues, bf16, f16};

/// The repository's root, which holds `tests/data/` and `tests/golden/`: the directory of
/// the package under test (the library's) or the nearest one above it (`cli/`'s).
pub fn root() -> &'static Path {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        here.ancestors()
            .find(|d| d.join("tests/data").is_dir())
            .unwrap_or_else(|| panic!("no tests/data in {} or above", here.display()))
            .to_path_buf()
    })
}

pub fn data_dir() -> PathBuf {
    root().join("tests/data")
}

/// A path under `tests/data/`.
pub fn data(p: &str) -> PathBuf {
    data_dir().join(p)
}

/// A path under `tests/data/`, as an argument.
pub fn s(p: &str) -> String {
    data(p).display().to_string()
}

pub fn manifest(dir: &str) -> Vec<Value> {
    let p = data_dir().join(dir).join("manifest.json");
    let s = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&s).expect("manifest parses")
}

pub fn read(dir: &str, file: &str) -> Vec<u8> {
    let p = data_dir().join(dir).join(file);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn num(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().expect("number"),
        Value::String(s) => match s.as_str() {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            "nan" => f64::NAN,
            other => other.parse().expect("numeric string"),
        },
        other => panic!("not a number: {other}"),
    }
}

fn int(v: &Value) -> i128 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .expect("integer"),
        Value::String(s) => s.parse().expect("integer string"),
        Value::Bool(b) => *b as i128,
        other => panic!("not an integer: {other}"),
    }
}

/// The manifest's values as the builder input of the right Rust type.
pub fn feed_values(dtype: DType, values: &[Value]) -> FeedValues {
    use DType::*;
    match dtype {
        Float => values.iter().map(|v| num(v) as f32).collect(),
        Double => values.iter().map(num).collect(),
        Half => values.iter().map(|v| f16::from_f64(num(v))).collect(),
        BFloat16 => values.iter().map(|v| bf16::from_f64(num(v))).collect(),
        Complex64 => values
            .chunks(2)
            .map(|c| Complex::new(num(&c[0]) as f32, num(&c[1]) as f32))
            .collect(),
        Complex128 => values
            .chunks(2)
            .map(|c| Complex::new(num(&c[0]), num(&c[1])))
            .collect(),
        String => values
            .iter()
            .map(|v| {
                base64::engine::general_purpose::STANDARD
                    .decode(v.as_str().expect("base64 string"))
                    .expect("base64")
            })
            .collect(),
        Bool => values.iter().map(|v| v.as_bool().expect("bool")).collect(),
        UInt64 => values.iter().map(|v| int(v) as u64).collect(),
        // Numbers, which the builder rounds as ml_dtypes does.
        d if tfreq::is_minifloat(d) => values.iter().map(num).collect(),
        _ => values.iter().map(|v| int(v) as i64).collect(),
    }
}

/// A manifest entry's fetches (`output_filter`), in order.
pub fn fetches(e: &Value) -> Vec<&str> {
    e["fetches"]
        .as_array()
        .expect("fetches")
        .iter()
        .map(|f| f.as_str().expect("fetch"))
        .collect()
}

/// A feed's shape from the manifest.
pub fn shape(f: &Value) -> Vec<i64> {
    f["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_i64().expect("dim"))
        .collect()
}

/// Replays a manifest entry's `add_feed` / `add_fetch` calls on tfreq's builder.
pub fn request_from_manifest(
    e: &Value,
    signature: &str,
    wire: tfreq::WireFormat,
) -> tfreq::TFRequest {
    let file = e["file"].as_str().unwrap_or("?");
    let mut req = tfreq::TFRequest::for_wire(signature, wire);
    for f in e["feeds"].as_array().expect("feeds") {
        let dtype = DType::from_name(f["dtype"].as_str().expect("dtype")).expect("known dtype");
        let values = feed_values(dtype, f["values"].as_array().expect("values"));
        req.add_feed(f["name"].as_str().expect("name"), &shape(f), dtype, values)
            .unwrap_or_else(|err| panic!("{file}: {err}"));
    }
    for name in e["fetches"].as_array().expect("fetches") {
        req.add_fetch(name.as_str().expect("fetch"));
    }
    req
}
