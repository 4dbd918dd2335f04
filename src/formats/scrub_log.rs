//! Scrubbing a TFRecord record of any `PredictionLog` kind at the wire level: the
//! values of its requests replaced as [`crate::scrub::scrub`] replaces a request's,
//! everything else kept or named. Message-level scrubbing is [`crate::scrub`]; this walk
//! knows the `PredictionLog` schema, so it lives with the other container formats.

use bytes::Bytes;

use crate::formats::prediction_log::{LogKind, raw_fields};
use crate::model::{Kind, Message, WireFormat};
use crate::scrub::{FillMode, Rng, ScrubError, left_out, replacement_string, scrub, unknown_name};
use crate::wire::reader::{WireValue, count_varints};
use crate::wire::writer::{
    put_bytes_field, put_len_header, put_tag, put_varint, put_varint_field, varint_len,
};

/// One TFRecord record (a `PredictionLog` of any kind) scrubbed, and what was left
/// out of it, in words.
///
/// Requests keep everything that decides which signature runs and how (`log_metadata`,
/// `model_spec`, tasks, feed and fetch names, dtypes, shapes, `tensor_name_is_alias`,
/// run options); values are replaced as [`scrub`] replaces them: the predict requests of
/// `predict_log` / `predict_streamed_log`, the feeds of a `SessionRunRequest`, and
/// every feature of the `tf.Example` inputs of classify, regress and multi-inference
/// requests (floats and integers by the fill, bytes by strings of the same length).
/// Responses (production outputs) and unknown fields are left out and named.
///
/// (`tfreq::formats::convert_file` with a scrub is the public way in.)
pub fn scrub_log_record(
    data: &Bytes,
    fill: FillMode,
) -> Result<(Vec<u8>, Vec<String>), ScrubError> {
    let mut w = Walk {
        fill,
        rng: match fill {
            FillMode::Random { seed } => Some(Rng(seed)),
            _ => None,
        },
        gone: Vec::new(),
    };
    let mut out = Vec::with_capacity(data.len());
    for (v, n, raw) in w.fields(data, "PredictionLog")? {
        match (n, v) {
            (1, _) => out.extend_from_slice(&raw),
            (2..=7, WireValue::Len(body)) => {
                let kind = LogKind::from_field(n).map_or("log", |k| k.name());
                let b = w.log(&body, n, kind)?;
                put_bytes_field(&mut out, n, &b);
            }
            (n, _) => w.gone.push(format!("PredictionLog field {n} (unknown)")),
        }
    }
    Ok((out, w.gone))
}

/// The state of a wire-level scrub of one log record.
struct Walk {
    fill: FillMode,
    rng: Option<Rng>,
    gone: Vec<String>,
}

type RawField = (WireValue, u32, Bytes);

impl Walk {
    fn fields(&self, b: &Bytes, what: &str) -> Result<Vec<RawField>, ScrubError> {
        raw_fields(b).map_err(|source| ScrubError::Malformed {
            what: what.to_string(),
            source,
        })
    }

    /// Drops a field, naming it.
    fn drop(&mut self, path: &str, n: u32) {
        self.gone.push(format!("{path} field {n} (unknown)"));
    }

    /// A `*Log` body: `request` (1) scrubbed, `response` (2) left out.
    fn log(&mut self, body: &Bytes, field: u32, kind: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(body.len());
        for (v, n, raw) in self.fields(body, kind)? {
            let path = format!("{kind}.request");
            match (n, v) {
                (1, WireValue::Len(req)) => {
                    let b = match field {
                        2..=4 => self.examples_request(&req, &path)?,
                        5 => self.session_run(&req, &path)?,
                        _ => self.predict(&req, &path)?,
                    };
                    put_bytes_field(&mut out, 1, &b);
                }
                (2, _) => self.gone.push(format!("{kind}.response")),
                (1, _) => out.extend_from_slice(&raw),
                (n, _) => self.drop(kind, n),
            }
        }
        Ok(out)
    }

    /// A TF Serving `PredictRequest`, decoded, scrubbed and re-encoded.
    fn predict(&mut self, req: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let m = crate::decode::decode_as(req, WireFormat::TfServing, Kind::Request).map_err(
            |source| ScrubError::Malformed {
                what: path.to_string(),
                source,
            },
        )?;
        self.gone
            .extend(left_out(&m).into_iter().map(|g| format!("{path}: {g}")));
        let s = scrub(&m, self.next_fill())?;
        Ok(crate::encode::encode(
            &s,
            WireFormat::TfServing,
            crate::encode::TfsEncoding::Python,
        )?)
    }

    /// The fill for the next request: a random fill draws a fresh seed from the walk.
    fn next_fill(&mut self) -> FillMode {
        match (self.fill, self.rng.as_mut()) {
            (FillMode::Random { .. }, Some(r)) => FillMode::Random { seed: r.next() },
            (f, _) => f,
        }
    }

    /// `ClassificationRequest`, `RegressionRequest` (model_spec 1, input 2) and
    /// `MultiInferenceRequest` (tasks 1, input 2): field 1 kept, the input scrubbed.
    fn examples_request(&mut self, req: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(req.len());
        for (v, n, raw) in self.fields(req, path)? {
            match (n, v) {
                (2, WireValue::Len(input)) => {
                    let b = self.input(&input, &format!("{path}.input"))?;
                    put_bytes_field(&mut out, 2, &b);
                }
                (1, _) => out.extend_from_slice(&raw),
                (n, _) => self.drop(path, n),
            }
        }
        Ok(out)
    }

    /// `Input`: `example_list` (1: examples 1) or `example_list_with_context` (2:
    /// examples 1, context 2).
    fn input(&mut self, input: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(input.len());
        for (v, n, _) in self.fields(input, path)? {
            let WireValue::Len(list) = v else {
                self.drop(path, n);
                continue;
            };
            if n != 1 && n != 2 {
                self.drop(path, n);
                continue;
            }
            let lpath = format!(
                "{path}.{}",
                if n == 1 {
                    "example_list"
                } else {
                    "example_list_with_context"
                }
            );
            let mut l = Vec::with_capacity(list.len());
            for (v, m, _) in self.fields(&list, &lpath)? {
                match (m, v) {
                    (1, WireValue::Len(ex)) => {
                        let b = self.example(&ex, &format!("{lpath}.examples"))?;
                        put_bytes_field(&mut l, 1, &b);
                    }
                    (2, WireValue::Len(ex)) if n == 2 => {
                        let b = self.example(&ex, &format!("{lpath}.context"))?;
                        put_bytes_field(&mut l, 2, &b);
                    }
                    (m, _) => self.drop(&lpath, m),
                }
            }
            put_bytes_field(&mut out, n, &l);
        }
        Ok(out)
    }

    /// `tf.Example`: features (1) → feature map (1) → entries of key (1) and `Feature` (2).
    fn example(&mut self, ex: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(ex.len());
        for (v, n, _) in self.fields(ex, path)? {
            let (1, WireValue::Len(features)) = (n, v) else {
                self.drop(path, n);
                continue;
            };
            let fpath = format!("{path}.features");
            let mut fo = Vec::with_capacity(features.len());
            for (v, m, _) in self.fields(&features, &fpath)? {
                let (1, WireValue::Len(entry)) = (m, v) else {
                    self.drop(&fpath, m);
                    continue;
                };
                let mut eo = Vec::with_capacity(entry.len());
                let mut key = String::new();
                for (v, k, raw) in self.fields(&entry, &fpath)? {
                    if let (1, WireValue::Len(b)) = (k, &v) {
                        key = String::from_utf8_lossy(b).into_owned();
                        eo.extend_from_slice(&raw);
                    }
                }
                let epath = format!("{fpath}.feature[{key:?}]");
                for (v, k, _) in self.fields(&entry, &epath)? {
                    match (k, v) {
                        (1, _) => {}
                        (2, WireValue::Len(feat)) => {
                            let b = self.feature(&feat, &epath)?;
                            put_bytes_field(&mut eo, 2, &b);
                        }
                        (k, _) => self.drop(&epath, k),
                    }
                }
                put_bytes_field(&mut fo, 1, &eo);
            }
            put_bytes_field(&mut out, 1, &fo);
        }
        Ok(out)
    }

    /// `Feature`: bytes_list (1), float_list (2) or int64_list (3), each a `value`
    /// field 1 (packed or not); the values are replaced, their count kept.
    fn feature(&mut self, feat: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(feat.len());
        for (v, n, _) in self.fields(feat, path)? {
            let WireValue::Len(list) = v else {
                self.drop(path, n);
                continue;
            };
            let mut lo = Vec::with_capacity(list.len());
            for (v, m, _) in self.fields(&list, path)? {
                match (n, m, v) {
                    (1, 1, WireValue::Len(b)) => {
                        let s = replacement_string(&b, self.rng.as_mut());
                        put_bytes_field(&mut lo, 1, &s);
                    }
                    (2, 1, WireValue::Len(b)) => {
                        let count = b.len() / 4;
                        put_len_header(&mut lo, 1, count * 4);
                        for _ in 0..count {
                            lo.extend_from_slice(&(self.number() as f32).to_le_bytes());
                        }
                    }
                    (2, 1, WireValue::I32(_)) => {
                        put_tag(&mut lo, 1, 5);
                        lo.extend_from_slice(&(self.number() as f32).to_le_bytes());
                    }
                    (3, 1, WireValue::Len(b)) => {
                        let count =
                            count_varints(&b, 0).map_err(|source| ScrubError::Malformed {
                                what: format!("{path}.int64_list"),
                                source,
                            })?;
                        let vals: Vec<u64> = (0..count)
                            .map(|_| self.integer(path))
                            .collect::<Result<_, _>>()?;
                        let len = vals.iter().map(|&x| varint_len(x)).sum();
                        put_len_header(&mut lo, 1, len);
                        vals.into_iter().for_each(|x| put_varint(&mut lo, x));
                    }
                    (3, 1, WireValue::Varint(_)) => {
                        let x = self.integer(path)?;
                        put_varint_field(&mut lo, 1, x);
                    }
                    (_, m, _) => self.drop(path, m),
                }
            }
            if (1..=3).contains(&n) {
                put_bytes_field(&mut out, n, &lo);
            } else {
                self.drop(path, n);
            }
        }
        Ok(out)
    }

    fn number(&mut self) -> f64 {
        match self.fill {
            FillMode::Zeros => 0.0,
            FillMode::Constant(v) => v,
            FillMode::Random { .. } => self.rng.as_mut().map_or(0.0, Rng::unit),
        }
    }

    fn integer(&mut self, path: &str) -> Result<u64, ScrubError> {
        match self.fill {
            FillMode::Zeros => Ok(0),
            FillMode::Constant(v) if v.fract() == 0.0 && v.is_finite() => Ok(v as i64 as u64),
            FillMode::Constant(v) => Err(ScrubError::NotIntegral {
                name: path.to_string(),
                dtype: "int64_list".into(),
                value: v,
            }),
            FillMode::Random { .. } => Ok(self.rng.as_mut().map_or(0, |r| r.next() % 101)),
        }
    }

    /// `SessionRunRequest`: every `feed` (2: `NamedTensorProto` name 1, tensor 2) has
    /// its tensor scrubbed; model_spec, fetch, target, options and
    /// tensor_name_is_alias are kept.
    fn session_run(&mut self, req: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(req.len());
        for (v, n, raw) in self.fields(req, path)? {
            match (n, v) {
                (2, WireValue::Len(feed)) => {
                    let mut fo = Vec::with_capacity(feed.len());
                    let mut name = String::new();
                    for (v, k, raw) in self.fields(&feed, &format!("{path}.feed"))? {
                        if let (1, WireValue::Len(b)) = (k, &v) {
                            name = String::from_utf8_lossy(b).into_owned();
                            fo.extend_from_slice(&raw);
                        }
                    }
                    let fpath = format!("{path}.feed[{name:?}]");
                    for (v, k, _) in self.fields(&feed, &fpath)? {
                        match (k, v) {
                            (1, _) => {}
                            (2, WireValue::Len(t)) => {
                                let b = self.tensor(&t, &name, &fpath)?;
                                put_bytes_field(&mut fo, 2, &b);
                            }
                            (k, _) => self.drop(&fpath, k),
                        }
                    }
                    put_bytes_field(&mut out, 2, &fo);
                }
                (1 | 3..=6, _) => out.extend_from_slice(&raw),
                (n, _) => self.drop(path, n),
            }
        }
        Ok(out)
    }

    fn tensor(&mut self, t: &Bytes, name: &str, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut tensor =
            crate::decode::decode_tensor(t.clone(), WireFormat::TfServing).map_err(|source| {
                ScrubError::Malformed {
                    what: path.to_string(),
                    source,
                }
            })?;
        tensor.name = name.to_string();
        for u in &tensor.unknown {
            self.gone.push(unknown_name(path, u.number));
        }
        let mut m = Message::new(WireFormat::TfServing, Kind::Request);
        m.tensors.push(tensor);
        let s = scrub(&m, self.next_fill())?;
        let Some(st) = s.tensors.first() else {
            return Ok(Vec::new());
        };
        Ok(crate::encode::encode_tensor(
            st,
            WireFormat::TfServing,
            WireFormat::TfServing,
            crate::encode::TfsEncoding::Python,
        )?)
    }
}

#[cfg(test)]
mod record_tests {
    use super::*;

    #[test]
    fn a_classify_log_keeps_its_structure() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tfrecord/warmup_mixed.tfrecord"
        );
        let bytes = Bytes::from(std::fs::read(path).unwrap());
        let rec = crate::formats::tfrecord::Records::new(bytes)
            .nth(1)
            .unwrap()
            .unwrap(); // classify_log
        let (out, gone) = scrub_log_record(&rec.data, FillMode::Constant(7.0)).unwrap();
        assert_eq!(out.len(), rec.data.len()); // same structure, same sizes
        assert!(gone.is_empty());
    }
}
