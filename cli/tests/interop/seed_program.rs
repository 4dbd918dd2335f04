//! The builder API, used as a user would, writes the seed request byte-identical to the
//! `eas_prediction` SDK (tests/data/eas/seed_warm_up.bin, made by tests/data/gen/make_eas.py).

use tfreq::{DType, TFRequest};

#[test]
fn seed_request_is_byte_identical_to_the_sdk() -> Result<(), tfreq::BuildError> {
    let mut req = TFRequest::new("serving_default");
    req.add_feed("sentence1", &[200, 15], DType::Int32, vec![1i32; 3000])?;
    req.add_feed("sentence2", &[200, 15], DType::Int32, vec![1i32; 3000])?;
    req.add_feed("y", &[200, 2], DType::Int32, vec![2i32; 400])?;
    req.add_feed("keep_rate", &[], DType::Float, vec![0.2f32])?;
    req.add_feed("images", &[1, 784], DType::Float, vec![1.0f32; 784])?;
    req.add_fetch("sorted_labels");
    req.add_fetch("sorted_probs");
    assert_eq!(
        req.to_bytes().unwrap(),
        crate::common::read("eas", "seed_warm_up.bin")
    );
    // The same request for TF Serving, as tf.make_tensor_proto lays it out.
    assert_eq!(
        req.to_tf_serving_bytes("my_model")?,
        crate::common::read("tfs", "seed_content.bin")
    );
    Ok(())
}

#[test]
fn builder_refusals_are_typed() {
    use tfreq::BuildError::*;
    let mut req = TFRequest::new("s");
    assert!(matches!(
        req.add_feed("a", &[2, 2], DType::Float, vec![1.0f32; 3]),
        Err(CountMismatch {
            expected: 4,
            got: 3,
            ..
        })
    ));
    assert!(matches!(
        req.add_feed("a", &[], DType::Float, Vec::<f32>::new()),
        Err(CountMismatch {
            expected: 1,
            got: 0,
            ..
        })
    ));
    assert!(
        req.add_feed("z", &[0, 3], DType::Float, Vec::<f32>::new())
            .is_ok()
    );
    assert!(matches!(
        req.add_feed("b", &[-1], DType::Float, vec![1.0f32]),
        Err(NegativeDim { index: 0, .. })
    ));
    assert!(matches!(
        req.add_feed("c", &[1 << 40, 1 << 40], DType::Float, vec![1.0f32]),
        Err(ShapeOverflow { .. })
    ));
    assert!(matches!(
        req.add_feed("d", &[1], DType::Float, vec![1.0f64]),
        Err(WrongType { got: "f64", .. })
    ));
    assert!(matches!(
        req.add_feed("e", &[1], DType::String, vec![1i32]),
        Err(WrongType { .. })
    ));
    assert!(matches!(
        req.add_feed("f", &[2], DType::UInt8, vec![1i32, 256]),
        Err(OutOfRange {
            index: 1,
            value: 256,
            ..
        })
    ));
    assert!(matches!(
        req.add_feed("g", &[1], DType::Int16, vec![-32769i32]),
        Err(OutOfRange { .. })
    ));
    assert!(matches!(
        req.add_feed("h", &[1], DType::UInt16, vec![65536i64]),
        Err(OutOfRange { .. })
    ));
    assert!(matches!(
        req.add_feed("i", &[1], DType::Int8, vec![-129i32]),
        Err(OutOfRange { .. })
    ));
    assert!(matches!(
        req.add_feed("z", &[1], DType::Float, vec![1.0f32]),
        Err(DuplicateFeed(_))
    ));
    let err = req
        .add_feed("u", &[1], DType::UInt32, vec![1u32])
        .unwrap_err();
    assert!(matches!(err, Unsupported { .. }));
    assert!(err.to_string().contains("DT_UINT32"), "{err}");
    // TF Serving carries uint32.
    let mut tfs = TFRequest::for_wire("s", tfreq::WireFormat::TfServing);
    assert!(tfs.add_feed("u", &[1], DType::UInt32, vec![1u32]).is_ok());
    assert!(matches!(
        tfs.add_feed("r", &[1], DType::Resource, vec![1i32]),
        Err(NotBuildable { .. })
    ));
}
