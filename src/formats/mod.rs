//! File formats that hold requests: a bare protobuf message (EAS `warm_up.bin`, a
//! captured TF Serving request) and, as readers are added, TFRecord warm-up files of
//! `PredictionLog`, EAS text warm-ups and request logs.
//!
//! [`load`] is the one entry point commands use: it detects the container and returns
//! every request (or response) in it, each with a label saying where it came from.

pub mod savedmodel;

use bytes::Bytes;

use crate::decode::{decode_with, DecodeOptions};
use crate::error::Error;
use crate::model::Message;

/// One message found in a file.
#[derive(Debug, Clone)]
pub struct Record {
    /// Where it came from inside the file (`""` for a bare message, `record 3`, ...).
    pub label: String,
    /// The message.
    pub message: Message,
}

/// Reads every request or response in `bytes`.
///
/// ```
/// let bytes = tfreq::io::read_input("tests/data/eas/seed_warm_up.bin".as_ref())?;
/// let records = tfreq::formats::load(bytes, Default::default())?;
/// assert_eq!(records.len(), 1);
/// assert_eq!(records[0].message.tensors.len(), 5);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn load(bytes: Bytes, opts: DecodeOptions) -> Result<Vec<Record>, Error> {
    let (message, _) = decode_with(bytes, opts)?;
    Ok(vec![Record {
        label: String::new(),
        message,
    }])
}
