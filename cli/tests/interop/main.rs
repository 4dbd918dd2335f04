//! Held to what the real software wrote and answered: the EAS SDK's and TensorFlow's files
//! of `tests/data/` (made by `tests/data/gen/`), TF Serving's tf.Example requests and REST
//! bodies, TensorFlow's verdicts on values, shapes, batch sizes and warm-ups, and its
//! TFRecord and compressed logs.

#[path = "../common/mod.rs"]
mod common;

mod batch;
mod build;
mod check_tf;
mod compressed;
mod convert_records;
mod coverage;
mod diff_features;
mod example_spec;
mod examples_check;
mod examples_data;
mod examples_requests;
mod interop_eas;
mod interop_tfs;
mod rest_examples;
mod scrub;
mod seed_program;
mod text_cases;
mod text_warmup;
mod tfrecord;
mod validator;
mod values;
