//! `tfreq record`: a transparent proxy that turns the traffic passing through it into a
//! warm-up file (docs/live.md, "`record`: a warm-up from live traffic").
//!
//! Two parts. [`Recorder`] has no sockets: it is given each request's protocol, path and
//! body, decodes it, and keeps the first request of every distinct key ([`By`](crate::analysis::By)), with
//! counts, up to [`Recorder::max_records`]; [`Recorder::file`] writes what it kept as a
//! warm-up. [`serve`] is the proxy. It takes HTTP/1.1 (EAS, TF Serving REST) and
//! cleartext HTTP/2 (TF Serving gRPC) on one port:
//! - cleartext HTTP/2 to a cleartext upstream is relayed byte for byte, each request read
//!   on the side once its bytes are on their way (src/net/tap.rs);
//! - the rest goes through a hyper server, which reads each request body (up to
//!   [`ProxyOptions::max_size`]; the rest of a larger one follows as it comes), forwards
//!   the request unchanged and streams the answer back unchanged (status, headers, body,
//!   gRPC trailers).
//!
//! Either way each body is queued for a [`Recorder`] running on its own thread, so
//! decoding never delays or breaks the pass-through.
//!
//! Only the request messages are recorded: no header (so no `Authorization` or EAS
//! token) and no answer ever reaches the recorder.
//!
//! ```
//! use tfreq::analysis::By;
//! use tfreq::net::{Recorder, RecordOptions, Wire};
//! use tfreq::net::Protocol;
//! let mut r = Recorder::new(RecordOptions::default());
//! let body = std::fs::read("tests/data/eas/faq_prod.bin")?;
//! let batch4 = std::fs::read("tests/data/eas/faq_prod_batch4.bin")?;
//! assert!(r.add(Protocol::Eas, "/api/predict/faq", &body).is_new());
//! assert!(!r.add(Protocol::Eas, "/api/predict/faq", &batch4).is_new()); // same executor key
//! assert_eq!((r.requests(), r.recorded()), (2, 1));
//! let file = r.file()?; // one bare EAS request: the EAS processor's warm-up
//! assert_eq!(tfreq::decode(&file)?.tensors.len(), 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod activity;
mod body;
mod events;
mod proxy;
mod recorder;

pub use events::*;
pub use proxy::*;
pub use recorder::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::plan::By;
    use crate::formats;
    use crate::model::{Method, WireFormat};
    use crate::net::Protocol;
    use bytes::Bytes;

    fn data(p: &str) -> Vec<u8> {
        std::fs::read(p).unwrap()
    }

    fn grpc_frame(b: &[u8]) -> Vec<u8> {
        let mut v = vec![0];
        v.extend_from_slice(&(b.len() as u32).to_be_bytes());
        v.extend_from_slice(b);
        v
    }

    #[test]
    fn one_request_per_executor_key_with_counts() {
        let mut r = Recorder::new(RecordOptions {
            wire: Wire::TfRecord,
            model_name: Some("faq".into()),
            ..RecordOptions::default()
        });
        let prod = data("tests/data/eas/faq_prod.bin");
        assert_eq!(r.add(Protocol::Eas, "/api/predict/faq", &prod), Added::New);
        assert_eq!(
            r.add(
                Protocol::Eas,
                "/api/predict/faq",
                &data("tests/data/eas/faq_prod_batch4.bin")
            ),
            Added::Counted
        );
        let tfs = data("tests/data/tfs/faq_warmup.bin");
        let a = r.add(
            Protocol::Grpc,
            "/tensorflow.serving.PredictionService/Predict",
            &grpc_frame(&tfs),
        );
        assert_eq!(a, Added::New);
        assert_eq!(r.recorded(), 2);
        assert_eq!(r.requests(), 3);
        assert_eq!(r.kept()[0].count, 2);
        assert_eq!(r.counts().keys.len(), 3);
        // The file reads back as a TFRecord of the two kept requests.
        let back = formats::read(r.file().unwrap().into(), &formats::InputOptions::new())
            .unwrap()
            .into_records()
            .unwrap();
        assert_eq!(back.len(), 2);
    }

    /// A warm-up file belongs to one model: `--model-name`'s, else the first named; the
    /// requests of another model are passed through, counted and named, not recorded.
    #[test]
    fn one_model_is_recorded() {
        let faq = data("tests/data/tfs/faq_warmup.bin");
        let mut other = crate::decode(&faq).unwrap();
        other.model_spec.as_mut().unwrap().name = "faq_v2".into();
        let other = crate::encode::encode(
            &other,
            WireFormat::TfServing,
            crate::encode::TfsEncoding::default(),
        )
        .unwrap();
        let path = "/tensorflow.serving.PredictionService/Predict";
        for (model_name, kept, refused) in
            [(None, "faq", "faq_v2"), (Some("faq_v2"), "faq_v2", "faq")]
        {
            let mut r = Recorder::new(RecordOptions {
                wire: Wire::TfRecord,
                model_name: model_name.map(str::to_string),
                ..RecordOptions::default()
            });
            r.add(Protocol::Grpc, path, &grpc_frame(&faq));
            r.add(Protocol::Grpc, path, &grpc_frame(&other));
            // An EAS request names no model: recorded beside either.
            r.add(
                Protocol::Eas,
                "/api/predict/faq",
                &data("tests/data/eas/faq_prod.bin"),
            );
            assert_eq!(r.requests(), 3, "{model_name:?}");
            assert_eq!(r.recorded(), 2, "{model_name:?}");
            let models: Vec<_> = r
                .kept()
                .iter()
                .filter_map(|k| k.message.model_spec.as_ref().map(|s| s.name.clone()))
                .collect();
            assert!(models.iter().all(|m| m == kept), "{models:?}");
            let named: Vec<&String> = r.not_recorded().values().flat_map(|(_, w)| w).collect();
            assert_eq!(named, [&format!("model {refused:?}")], "{model_name:?}");
        }
    }

    #[test]
    fn by_shape_and_batch_keep_more() {
        for (by, n) in [(By::Executor, 1), (By::Shape, 2), (By::Batch, 2)] {
            let mut r = Recorder::new(RecordOptions {
                by,
                ..RecordOptions::default()
            });
            for f in [
                "faq_prod.bin",
                "faq_prod_batch4.bin",
                "faq_prod_reordered.bin",
            ] {
                r.add(
                    Protocol::Eas,
                    "/api/predict/faq",
                    &data(&format!("tests/data/eas/{f}")),
                );
            }
            assert_eq!(r.recorded(), n, "{by:?}");
        }
    }

    #[test]
    fn by_batch_keeps_one_per_batch_size() {
        let req = |dims: &[i64]| {
            let n = dims.iter().product::<i64>() as usize;
            let mut r = crate::TFRequest::new("s");
            r.add_feed("x", dims, crate::DType::Float, vec![0f32; n])
                .unwrap()
                .add_fetch("y");
            r.message().clone()
        };
        let mut r = Recorder::new(RecordOptions {
            by: By::Batch,
            wire: Wire::TfRecord,
            ..RecordOptions::default()
        });
        // [2, 3] and [2, 5]: one batch size; [4, 3] another.
        assert_eq!(r.add_message(req(&[2, 3])), Added::New);
        assert_eq!(r.add_message(req(&[2, 5])), Added::Counted);
        assert_eq!(r.add_message(req(&[4, 3])), Added::New);
        assert_eq!(r.recorded(), 2);
        assert!(
            r.kept()[1].key.ends_with("(batch 4)"),
            "{}",
            r.kept()[1].key
        );
    }

    #[test]
    fn cap_and_bad_input_are_counted_not_recorded() {
        let mut r = Recorder::new(RecordOptions {
            max_records: 1,
            wire: Wire::TfRecord,
            ..RecordOptions::default()
        });
        r.add(
            Protocol::Eas,
            "/api/predict/faq",
            &data("tests/data/eas/faq_prod.bin"),
        );
        let tfs = data("tests/data/tfs/faq_warmup.bin");
        let p = "/tensorflow.serving.PredictionService/Predict";
        assert!(matches!(
            r.add(Protocol::Grpc, p, &grpc_frame(&tfs)),
            Added::NotRecorded(_)
        ));
        assert!(matches!(
            r.add(Protocol::Grpc, p, b"\0\0\0"),
            Added::NotRecorded(_)
        ));
        assert!(matches!(
            r.add(Protocol::Eas, "/api/predict/faq", b"\xff\xff\xff"),
            Added::NotRecorded(_)
        ));
        assert_eq!(
            r.add(
                Protocol::Grpc,
                "/tensorflow.serving.PredictionService/GetModelMetadata",
                b""
            ),
            Added::Ignored
        );
        assert_eq!(r.recorded(), 1);
        let n: u64 = r.not_recorded().values().map(|v| v.0).sum();
        assert_eq!(n, 3, "{:?}", r.not_recorded());
        assert!(
            r.not_recorded()
                .contains_key("past the record limit (key not recorded)")
        );
    }

    #[test]
    fn classify_regress_and_multi_inference_over_grpc() {
        let mut r = Recorder::new(RecordOptions::default());
        let dir = "tests/data/examples/requests";
        for (method, file) in [
            ("Classify", "classify_valid.pb"),
            ("Classify", "classify_valid_context.pb"),
            ("Regress", "regress_valid.pb"),
            ("MultiInference", "multi_valid.pb"),
        ] {
            let body = grpc_frame(&data(&format!("{dir}/{file}")));
            let path = format!("/tensorflow.serving.PredictionService/{method}");
            let a = r.add(Protocol::Grpc, &path, &body);
            assert!(!matches!(a, Added::NotRecorded(_)), "{file}: {a:?}");
        }
        // Two classify requests share their key (the signature's); the regress and the
        // multi-inference ones are others.
        assert_eq!((r.requests(), r.recorded()), (4, 3));
        assert_eq!(r.kept()[0].message.method, Method::Classify);
        assert_eq!(r.kept()[1].message.method, Method::Regress);
        assert_eq!(r.kept()[2].message.method, Method::MultiInference);
        let back = formats::read(r.file().unwrap().into(), &formats::InputOptions::new())
            .unwrap()
            .into_records()
            .unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[1].message.method, Method::Regress);
        assert_eq!(back[2].message.method, Method::MultiInference);
    }

    /// A REST `:classify` / `:regress` body is recorded as the request TF Serving
    /// makes of it (the bytes `tensorflow-serving-api` wrote for the same examples,
    /// tests/data/examples/rest/), its method and model from the URL; a body TF Serving
    /// refuses is named as not recorded.
    #[test]
    fn rest_classify_and_regress_bodies() {
        let mut r = Recorder::new(RecordOptions::default());
        let body = data("tests/data/examples/rest/classify_context.json");
        assert!(
            r.add(Protocol::Rest, "/v1/models/tf1_examples:classify", &body)
                .is_new()
        );
        let body = data("tests/data/examples/rest/regress_context.json");
        assert!(
            r.add(Protocol::Rest, "/v1/models/tf1_examples:regress", &body)
                .is_new()
        );
        assert_eq!((r.requests(), r.recorded()), (2, 2));
        let (c, g) = (&r.kept()[0].message, &r.kept()[1].message);
        assert_eq!((c.method, g.method), (Method::Classify, Method::Regress));
        assert_eq!(c.model_spec.as_ref().unwrap().name, "tf1_examples");
        let want = data("tests/data/examples/rest/classify_context.pb");
        let got = crate::encode(c, WireFormat::TfServing, crate::TfsEncoding::AsIs).unwrap();
        assert_eq!(got, want);
        r.add(
            Protocol::Rest,
            "/v1/models/tf1_examples:classify",
            br#"{"examples": [{"x": [1.0, 2]}]}"#,
        );
        assert!(r.not_recorded()["undecodable request"].1[0].contains("expecting type: float"));
    }

    /// Past `max_models` REST models, a new model's requests are counted as not
    /// recorded (no metadata is awaited or kept for them); known models still record.
    #[test]
    fn rest_models_past_the_cap_are_counted_not_kept() {
        let mut r = Recorder::new(RecordOptions {
            max_models: 2,
            ..RecordOptions::default()
        });
        let body = br#"{"inputs": {"input_holder": ["hi"], "model_id": "m", "threshold": 0.5}}"#;
        for m in ["a", "b", "c", "d", "a"] {
            r.add(Protocol::Rest, &format!("/v1/models/{m}:predict"), body);
        }
        assert_eq!(r.awaited().len(), 2);
        let json = Bytes::from(data("tests/data/models/faq.metadata.json"));
        for m in ["a", "b", "c"] {
            r.metadata(m, Ok(json.clone()));
        }
        assert_eq!(r.metadata.len(), 2);
        assert_eq!(r.requests(), 3);
        let (n, names) = r
            .not_recorded()
            .iter()
            .find(|(why, _)| why.contains("past the first 2 (the model limit"))
            .map(|(_, v)| v.clone())
            .unwrap();
        assert_eq!(
            (n, names),
            (2, vec!["REST c:predict".into(), "REST d:predict".into()])
        );
    }

    #[test]
    fn rest_waits_for_metadata() {
        let mut r = Recorder::new(RecordOptions::default());
        let body = br#"{"inputs": {"input_holder": ["hi"], "model_id": "m", "threshold": 0.5}}"#;
        assert_eq!(
            r.add(Protocol::Rest, "/v1/models/faq:predict", body),
            Added::Waiting
        );
        assert_eq!(r.requests(), 0);
        let json = Bytes::from(data("tests/data/models/faq.metadata.json"));
        assert!(r.metadata("faq", Ok(json)));
        assert_eq!((r.requests(), r.recorded()), (1, 1));
        let m = &r.kept()[0].message;
        assert_eq!(m.model_spec.as_ref().unwrap().name, "faq");
        assert_eq!(m.tensor("threshold").unwrap().dtype.to_string(), "DT_FLOAT");
        // A model whose metadata failed: its requests are named as not recorded.
        r.add(Protocol::Rest, "/v1/models/nope:predict", body);
        r.metadata("nope", Err("HTTP 404".into()));
        assert!(r.not_recorded()["undecodable request"].1[0].contains("no model metadata"));
    }
}
