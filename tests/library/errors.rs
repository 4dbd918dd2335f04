//! Every public error type of the library converts into `tfreq::Error` with `?`, keeps its
//! message, is classified, and can be had back whole (a `From` for every public error into
//! `tfreq::Error`). A missing `From` fails to compile here.

use std::error::Error as _;

use tfreq::{Category, Error, ErrorDetail, Kind, WireFormat};

fn via_question_mark<E>(r: Result<(), E>) -> Result<(), Error>
where
    Error: From<E>,
{
    r?;
    Ok(())
}

#[test]
fn decode_error_of_decode_as() {
    let e = tfreq::decode_as(&[0x12, 0x05, 0x0a], WireFormat::Eas, Kind::Request)
        .map(|_| ())
        .unwrap_err();
    let text = e.to_string();
    let err = via_question_mark(Err(e)).unwrap_err();
    assert_eq!(err.to_string(), text);
    assert_eq!(err.classify(), Category::Decode);
    assert_eq!(err.offset(), Some(2));
    assert_eq!(err.field_path().as_deref(), Some("inputs"));
    assert!(matches!(err.root(), ErrorDetail::Wire(_)));
}

#[test]
fn model_error_of_read_model() {
    let e = tfreq::formats::read_model("tests/data/no such model".as_ref())
        .map(|_| ())
        .unwrap_err();
    let text = e.to_string();
    let err = via_question_mark(Err(e)).unwrap_err();
    assert_eq!(err.to_string(), text);
    assert_eq!(err.classify(), Category::Io);
    let back = err.source().expect("the ModelError is the source");
    assert!(back.downcast_ref::<tfreq::formats::ModelError>().is_some());

    // A file that is not a model at all: a model error, not an I/O one.
    let e = tfreq::formats::read_model("tests/data/eas/spec_vector.bin".as_ref())
        .map(|_| ())
        .unwrap_err();
    assert_eq!(Error::from(e).classify(), Category::Model);
}

#[test]
fn scrub_error_of_scrub() {
    // A constant that is not an integer, for an int32 feed.
    let bytes = std::fs::read("tests/data/eas/seed_warm_up.bin").unwrap();
    let msg = tfreq::decode(&bytes).unwrap();
    let e = tfreq::scrub(&msg, tfreq::FillMode::Constant(0.5))
        .map(|_| ())
        .unwrap_err();
    let err = via_question_mark(Err(e)).unwrap_err();
    assert_eq!(err.classify(), Category::Build);
    assert!(err.to_string().contains("not an integer"), "{err}");
    assert!(
        err.source()
            .and_then(|s| s.downcast_ref::<tfreq::ScrubError>())
            .is_some()
    );
}

#[test]
fn build_tfrecord_and_detail_errors() {
    let mut req = tfreq::TFRequest::new("s");
    let e = req
        .add_feed("x", &[2], tfreq::DType::Float, vec![1.0f32])
        .unwrap_err();
    assert_eq!(
        via_question_mark(Err(e)).unwrap_err().classify(),
        Category::Build
    );
    let e = tfreq::formats::Records::new(bytes::Bytes::from_static(b"\x01\x02\x03"))
        .next()
        .expect("a truncated header is one error")
        .unwrap_err();
    assert_eq!(
        via_question_mark(Err(e)).unwrap_err().classify(),
        Category::Container
    );
    assert_eq!(
        via_question_mark(Err(ErrorDetail::Empty))
            .unwrap_err()
            .classify(),
        Category::Unrecognised
    );
}

#[cfg(feature = "net")]
#[test]
fn net_error() {
    let e = tfreq::net::NetError::BadUrl("ftp://x".into());
    let err = via_question_mark(Err(e)).unwrap_err();
    assert_eq!(err.classify(), Category::Network);
    assert_eq!(err.to_string(), "bad URL: ftp://x");
}
