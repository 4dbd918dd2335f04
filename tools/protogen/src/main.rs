//! Regenerates `src/wire/generated/` from `proto/`: the prost types the library
//! includes (`src/wire/mod.rs`) and the encoded `FileDescriptorSet` the text printer
//! and the JSON readers walk.
//!
//! The output is committed, so building or testing tfreq compiles neither protox
//! nor prost-build (nor their parser, regex and graph crates), and needs no `protoc`.
//! After a change under `proto/`:
//!
//! ```text
//! cargo run -p tfreq-protogen            # rewrite src/wire/generated/
//! cargo run -p tfreq-protogen -- --check # exit 1 if it is not what proto/ gives (.ci/run)
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Every `.proto` the library uses, under `proto/`.
const PROTOS: &[&str] = &[
    "eas/tf_predict.proto",
    "tensorflow/core/framework/types.proto",
    "tensorflow/core/framework/tensor_shape.proto",
    "tensorflow/core/framework/resource_handle.proto",
    "tensorflow/core/framework/tensor.proto",
    "tensorflow/core/protobuf/meta_graph.proto",
    "tensorflow_serving/apis/model.proto",
    "tensorflow_serving/apis/predict.proto",
    "tensorflow/core/example/feature.proto",
    "tensorflow/core/example/example.proto",
    "tensorflow_serving/apis/input.proto",
    "tensorflow_serving/apis/classification.proto",
    "tensorflow_serving/apis/regression.proto",
    "tensorflow_serving/apis/inference.proto",
    "tensorflow_serving/apis/prediction_log.proto",
    "tensorflow_serving/apis/get_model_metadata.proto",
];

/// The files `src/wire/mod.rs` includes, all written by [`generate`].
const OUTPUTS: &[&str] = &[
    "descriptors.bin",
    "tensorflow.rs",
    "tensorflow.serving.rs",
    "tfreq.eas.rs",
];

fn main() -> ExitCode {
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(other) => {
            eprintln!("tfreq-protogen: unknown argument {other:?}; expected nothing or --check");
            return ExitCode::from(2);
        }
    };
    match run(check) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("tfreq-protogen: {e}");
            ExitCode::from(2)
        }
    }
}

/// Generates into a fresh directory, then either compares with or replaces
/// `src/wire/generated/`. Returns whether the committed files were (or now are) current.
fn run(check: bool) -> Result<bool, Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let committed = root.join("src/wire/generated");
    let fresh = std::env::temp_dir().join(format!("tfreq-protogen-{}", std::process::id()));
    std::fs::create_dir_all(&fresh)?;
    let result = generate(&root.join("proto"), &fresh).and_then(|()| {
        let mut current = true;
        for name in OUTPUTS {
            let new = std::fs::read(fresh.join(name))?;
            let old = std::fs::read(committed.join(name)).unwrap_or_default();
            if new == old {
                continue;
            }
            if check {
                eprintln!(
                    "src/wire/generated/{name} is not what proto/ gives: run `cargo run -p tfreq-protogen`"
                );
                current = false;
            } else {
                std::fs::write(committed.join(name), new)?;
                println!("wrote src/wire/generated/{name}");
            }
        }
        Ok(current)
    });
    let _ = std::fs::remove_dir_all(&fresh);
    result
}

/// Compiles [`PROTOS`] with protox (pure Rust, no system `protoc`) and writes the
/// descriptor set and the prost types into `out`.
fn generate(proto: &Path, out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let files: Vec<PathBuf> = PROTOS.iter().map(|p| proto.join(p)).collect();
    let fds = protox::compile(&files, [proto])?;
    std::fs::write(
        out.join("descriptors.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    prost_build::Config::new()
        .out_dir(out)
        .bytes(["."])
        .btree_map(["."])
        // GetModelMetadataResponse's one well-known type, defined in src/wire/mod.rs
        // (so no prost-types dependency for two fields).
        .extern_path(".google.protobuf.Any", "crate::wire::Any")
        .compile_fds(fds)?;
    Ok(())
}
