//! The two wire formats and the two message kinds, re-exported at the crate root
//! (`tfreq::WireFormat`, `tfreq::Kind`).

use std::fmt;

/// The two protobuf wire formats tfreq reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WireFormat {
    /// PAI-EAS `PredictRequest` / `PredictResponse` (values in `ArrayProto`).
    Eas,
    /// TF Serving `tensorflow.serving.PredictRequest` / `PredictResponse` (`TensorProto`).
    TfServing,
}

impl WireFormat {
    /// The name used on the command line and in JSON (`eas`, `tf-serving`).
    pub fn as_str(self) -> &'static str {
        match self {
            WireFormat::Eas => "eas",
            WireFormat::TfServing => "tf-serving",
        }
    }
}

impl fmt::Display for WireFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WireFormat::Eas => "EAS",
            WireFormat::TfServing => "TF Serving",
        })
    }
}

/// Request or response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A `PredictRequest`.
    Request,
    /// A `PredictResponse`.
    Response,
}

impl Kind {
    /// `request` or `response`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Response => "response",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Request => "PredictRequest",
            Kind::Response => "PredictResponse",
        })
    }
}
