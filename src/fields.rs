//! Field numbers of the messages the hand-written codec reads and writes.
//!
//! The codec in `decode.rs`, `encode.rs` and `formats/prediction_log.rs` walks the
//! wire format itself (to keep offsets, unknown fields and packed views), so it
//! needs field numbers as constants it can `match` on. They are written here once,
//! each beside its field name, and a test looks every one up by message and name in
//! the descriptor set `build.rs` compiles from `proto/` ([`crate::wire::pool`]): a
//! `.proto` change that moves or renames a field fails that test.
//!
//! The typed value fields of `TensorProto` / `ArrayProto` (`float_val` …) are named
//! by meaning by [`crate::ValueField`], whose numbers are these constants.

/// Declares one module per message: a constant per field, `FIELDS` (number, name)
/// for error messages that name a field, and `MESSAGE` (the full protobuf name).
macro_rules! messages {
    ($( $(#[$doc:meta])* $module:ident = $full:literal {
        $( $konst:ident = $num:literal $name:literal, )*
    } )*) => {
        $(
            $(#[$doc])*
            #[allow(dead_code)]
            pub(crate) mod $module {
                $(
                    #[doc = concat!("`", $name, "`")]
                    pub(crate) const $konst: u32 = $num;
                )*
                /// Every field listed here, as (number, name).
                pub(crate) const FIELDS: &[(u32, &str)] = &[$(($num, $name)),*];
                /// The message's full protobuf name.
                pub(crate) const MESSAGE: &str = $full;
            }
        )*
        /// Every message above, for the test against the descriptor set.
        #[cfg(test)]
        const ALL: &[(&str, &[(u32, &str)])] = &[$(($full, $module::FIELDS)),*];
    };
}

messages! {
    /// EAS `PredictRequest` (`proto/eas/tf_predict.proto`).
    eas_request = "tfreq.eas.PredictRequest" {
        SIGNATURE_NAME = 1 "signature_name",
        INPUTS = 2 "inputs",
        OUTPUT_FILTER = 3 "output_filter",
    }
    /// EAS `PredictResponse`.
    eas_response = "tfreq.eas.PredictResponse" {
        OUTPUTS = 1 "outputs",
    }
    /// EAS `ArrayProto` (its value fields by meaning are [`crate::ValueField`]).
    array_proto = "tfreq.eas.ArrayProto" {
        DTYPE = 1 "dtype",
        ARRAY_SHAPE = 2 "array_shape",
        FLOAT_VAL = 3 "float_val",
        DOUBLE_VAL = 4 "double_val",
        INT_VAL = 5 "int_val",
        STRING_VAL = 6 "string_val",
        INT64_VAL = 7 "int64_val",
        BOOL_VAL = 8 "bool_val",
    }
    /// EAS `ArrayShape`.
    array_shape = "tfreq.eas.ArrayShape" {
        DIM = 1 "dim",
    }
    /// TF Serving `PredictRequest` (`proto/tensorflow_serving/apis/predict.proto`).
    predict_request = "tensorflow.serving.PredictRequest" {
        MODEL_SPEC = 1 "model_spec",
        INPUTS = 2 "inputs",
        OUTPUT_FILTER = 3 "output_filter",
        PREDICT_STREAMED_OPTIONS = 5 "predict_streamed_options",
        CLIENT_ID = 6 "client_id",
        REQUEST_OPTIONS = 7 "request_options",
    }
    /// TF Serving `PredictResponse`.
    predict_response = "tensorflow.serving.PredictResponse" {
        OUTPUTS = 1 "outputs",
        MODEL_SPEC = 2 "model_spec",
    }
    /// The entry of a `map<string, TensorProto>` (`inputs` / `outputs`); every map
    /// entry has these two numbers.
    map_entry = "tensorflow.serving.PredictRequest.InputsEntry" {
        KEY = 1 "key",
        VALUE = 2 "value",
    }
    /// TF Serving `ModelSpec` (`proto/tensorflow_serving/apis/model.proto`).
    model_spec = "tensorflow.serving.ModelSpec" {
        NAME = 1 "name",
        VERSION = 2 "version",
        SIGNATURE_NAME = 3 "signature_name",
        VERSION_LABEL = 4 "version_label",
    }
    /// `google.protobuf.Int64Value`, the type of `ModelSpec.version`.
    int64_value = "google.protobuf.Int64Value" {
        VALUE = 1 "value",
    }
    /// `tensorflow.TensorProto` (its value fields by meaning are [`crate::ValueField`]).
    tensor_proto = "tensorflow.TensorProto" {
        DTYPE = 1 "dtype",
        TENSOR_SHAPE = 2 "tensor_shape",
        VERSION_NUMBER = 3 "version_number",
        TENSOR_CONTENT = 4 "tensor_content",
        FLOAT_VAL = 5 "float_val",
        DOUBLE_VAL = 6 "double_val",
        INT_VAL = 7 "int_val",
        STRING_VAL = 8 "string_val",
        SCOMPLEX_VAL = 9 "scomplex_val",
        INT64_VAL = 10 "int64_val",
        BOOL_VAL = 11 "bool_val",
        DCOMPLEX_VAL = 12 "dcomplex_val",
        HALF_VAL = 13 "half_val",
        RESOURCE_HANDLE_VAL = 14 "resource_handle_val",
        VARIANT_VAL = 15 "variant_val",
        UINT32_VAL = 16 "uint32_val",
        UINT64_VAL = 17 "uint64_val",
        FLOAT8_VAL = 18 "float8_val",
    }
    /// `tensorflow.TensorShapeProto`.
    tensor_shape = "tensorflow.TensorShapeProto" {
        DIM = 2 "dim",
        UNKNOWN_RANK = 3 "unknown_rank",
    }
    /// `tensorflow.TensorShapeProto.Dim`.
    dim = "tensorflow.TensorShapeProto.Dim" {
        SIZE = 1 "size",
        NAME = 2 "name",
    }
    /// TF Serving `PredictionLog` (`proto/tensorflow_serving/apis/prediction_log.proto`).
    prediction_log = "tensorflow.serving.PredictionLog" {
        LOG_METADATA = 1 "log_metadata",
        CLASSIFY_LOG = 2 "classify_log",
        REGRESS_LOG = 3 "regress_log",
        MULTI_INFERENCE_LOG = 4 "multi_inference_log",
        SESSION_RUN_LOG = 5 "session_run_log",
        PREDICT_LOG = 6 "predict_log",
        PREDICT_STREAMED_LOG = 7 "predict_streamed_log",
    }
    /// TF Serving `LogMetadata`.
    log_metadata = "tensorflow.serving.LogMetadata" {
        MODEL_SPEC = 1 "model_spec",
    }
    /// TF Serving `PredictLog` (`PredictStreamedLog` has the same two numbers,
    /// repeated; the test checks both).
    predict_log = "tensorflow.serving.PredictLog" {
        REQUEST = 1 "request",
        RESPONSE = 2 "response",
    }
    /// TF Serving `PredictStreamedLog`.
    predict_streamed_log = "tensorflow.serving.PredictStreamedLog" {
        REQUEST = 1 "request",
        RESPONSE = 2 "response",
    }
    /// TF Serving `ClassifyLog` (`RegressLog` and `MultiInferenceLog` have the same two
    /// numbers; the test checks them).
    classify_log = "tensorflow.serving.ClassifyLog" {
        REQUEST = 1 "request",
        RESPONSE = 2 "response",
    }
    /// TF Serving `RegressLog`.
    regress_log = "tensorflow.serving.RegressLog" {
        REQUEST = 1 "request",
        RESPONSE = 2 "response",
    }
    /// TF Serving `MultiInferenceLog`.
    multi_inference_log = "tensorflow.serving.MultiInferenceLog" {
        REQUEST = 1 "request",
        RESPONSE = 2 "response",
    }
    /// TF Serving `ClassificationRequest`
    /// (`proto/tensorflow_serving/apis/classification.proto`).
    classification_request = "tensorflow.serving.ClassificationRequest" {
        MODEL_SPEC = 1 "model_spec",
        INPUT = 2 "input",
    }
    /// TF Serving `RegressionRequest`: the same numbers as `ClassificationRequest`.
    regression_request = "tensorflow.serving.RegressionRequest" {
        MODEL_SPEC = 1 "model_spec",
        INPUT = 2 "input",
    }
    /// TF Serving `MultiInferenceRequest` (`proto/tensorflow_serving/apis/inference.proto`).
    multi_inference_request = "tensorflow.serving.MultiInferenceRequest" {
        TASKS = 1 "tasks",
        INPUT = 2 "input",
    }
    /// TF Serving `InferenceTask`.
    inference_task = "tensorflow.serving.InferenceTask" {
        MODEL_SPEC = 1 "model_spec",
        METHOD_NAME = 2 "method_name",
    }
    /// TF Serving `Input` (`proto/tensorflow_serving/apis/input.proto`).
    input = "tensorflow.serving.Input" {
        EXAMPLE_LIST = 1 "example_list",
        EXAMPLE_LIST_WITH_CONTEXT = 2 "example_list_with_context",
    }
    /// TF Serving `ExampleListWithContext` (`ExampleList` has `examples` = 1 alone).
    example_list_with_context = "tensorflow.serving.ExampleListWithContext" {
        EXAMPLES = 1 "examples",
        CONTEXT = 2 "context",
    }
    /// TF Serving `ExampleList`.
    example_list = "tensorflow.serving.ExampleList" {
        EXAMPLES = 1 "examples",
    }
    /// `tensorflow.Example` (`proto/tensorflow/core/example/example.proto`).
    example = "tensorflow.Example" {
        FEATURES = 1 "features",
    }
    /// `tensorflow.Features`: a map of name to `Feature`, whose entries are
    /// [`map_entry`]'s two numbers.
    features = "tensorflow.Features" {
        FEATURE = 1 "feature",
    }
    /// `tensorflow.Feature` (`proto/tensorflow/core/example/feature.proto`).
    feature = "tensorflow.Feature" {
        BYTES_LIST = 1 "bytes_list",
        FLOAT_LIST = 2 "float_list",
        INT64_LIST = 3 "int64_list",
    }
    /// `tensorflow.FloatList` (`BytesList` and `Int64List` have `value` = 1 too).
    float_list = "tensorflow.FloatList" {
        VALUE = 1 "value",
    }
    /// `tensorflow.BytesList`.
    bytes_list = "tensorflow.BytesList" {
        VALUE = 1 "value",
    }
    /// `tensorflow.Int64List`.
    int64_list = "tensorflow.Int64List" {
        VALUE = 1 "value",
    }
    /// The entry of `Features.feature`.
    features_entry = "tensorflow.Features.FeatureEntry" {
        KEY = 1 "key",
        VALUE = 2 "value",
    }
}

/// The TF Serving `PredictRequest` fields the codec keeps as raw bytes without
/// interpreting them (`Message::extra`), by number and name.
pub(crate) const KEPT_RAW: &[(u32, &str)] = &[
    (
        predict_request::PREDICT_STREAMED_OPTIONS,
        "predict_streamed_options",
    ),
    (predict_request::CLIENT_ID, "client_id"),
    (predict_request::REQUEST_OPTIONS, "request_options"),
];

/// The name of a kept-raw `PredictRequest` field number.
pub(crate) fn kept_raw_name(n: u32) -> Option<&'static str> {
    KEPT_RAW
        .iter()
        .find(|(m, _)| *m == n)
        .map(|(_, name)| *name)
}

/// The number of a kept-raw `PredictRequest` field name.
pub(crate) fn kept_raw_number(name: &str) -> Option<u32> {
    KEPT_RAW.iter().find(|(_, m)| *m == name).map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::ALL;
    use crate::ValueField;

    fn number(message: &str, field: &str) -> u32 {
        let m = crate::wire::pool()
            .get_message_by_name(message)
            .unwrap_or_else(|| panic!("{message} is not in proto/"));
        m.get_field_by_name(field)
            .unwrap_or_else(|| panic!("{message} has no field {field}"))
            .number()
    }

    #[test]
    fn every_constant_is_the_descriptor_sets_number() {
        let mut checked = 0;
        for (message, fields) in ALL {
            for (n, name) in *fields {
                assert_eq!(number(message, name), *n, "{message}.{name}");
                checked += 1;
            }
        }
        assert!(checked >= 60, "{checked}");
        for (n, name) in super::KEPT_RAW {
            assert_eq!(
                number("tensorflow.serving.PredictRequest", name),
                *n,
                "{name}"
            );
        }
        // Every map entry the codec reads has the numbers of `map_entry`.
        for entry in [
            "tfreq.eas.PredictRequest.InputsEntry",
            "tfreq.eas.PredictResponse.OutputsEntry",
            "tensorflow.serving.PredictResponse.OutputsEntry",
        ] {
            for (n, name) in super::map_entry::FIELDS {
                assert_eq!(number(entry, name), *n, "{entry}.{name}");
            }
        }
    }

    #[test]
    fn value_fields_are_the_descriptor_sets_numbers() {
        for f in ValueField::ALL {
            assert_eq!(number("tensorflow.TensorProto", f.name()), f.tf_number());
            let eas = crate::wire::pool()
                .get_message_by_name("tfreq.eas.ArrayProto")
                .and_then(|m| m.get_field_by_name(f.name()))
                .map(|d| d.number());
            assert_eq!(eas, f.eas_number(), "{}", f.name());
        }
    }

    #[test]
    fn the_codecs_field_lists_are_the_whole_messages() {
        // Decoders name every known field in their errors: a field the .proto gains
        // must be added here.
        for (message, fields) in ALL {
            let m = crate::wire::pool().get_message_by_name(message).unwrap();
            if *message == "tensorflow.serving.LogMetadata" {
                continue; // only model_spec is read
            }
            let declared = m.fields().count();
            assert_eq!(declared, fields.len(), "{message}");
        }
    }
}
