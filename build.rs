//! Compiles `proto/` with protox (pure Rust, no system `protoc`) and generates the
//! prost types. The encoded descriptor set is kept too: the text-format printer and
//! the JSON readers walk messages through it.

use std::path::PathBuf;

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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let files: Vec<PathBuf> = PROTOS
        .iter()
        .map(|p| PathBuf::from("proto").join(p))
        .collect();
    let fds = protox::compile(&files, ["proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("descriptors.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    prost_build::Config::new()
        .bytes(["."])
        .btree_map(["."])
        // GetModelMetadataResponse's one well-known type, defined in src/wire/mod.rs
        // (so no prost-types dependency for two fields).
        .extern_path(".google.protobuf.Any", "crate::wire::Any")
        .compile_fds(fds)?;
    Ok(())
}
