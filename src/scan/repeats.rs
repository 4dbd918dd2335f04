//! Prints of classify, regress and multi-inference records met before, by their bytes.
//!
//! Such a record's print ([`super::fingerprint`]) checks every field of every
//! `tf.train.Example` it carries, about a thousand fields for a batch of 32: ten times
//! what a predict record's costs. Logs repeat their requests (a few requests are most
//! of the traffic), so a worker keeps the bytes and print of the examples records it
//! printed, up to [`BUDGET`] bytes (2 MiB), and a record equal byte for byte to one of them
//! takes its print: the same bytes read the same way. 16 MiB cost more than it saved
//! (filling it with records that never came back: page faults, the allocator's arena
//! growing, the copies; docs/performance.md, "`keys` and bytes text on the realistic
//! logs"). Looked up by length and CRC-32C
//! (the framing's, checked by the walk), then compared in full, so a record is never
//! taken for another.

use std::collections::HashMap;

use crate::fields::prediction_log;

use super::fingerprint::{self, Fields, Value};

/// Bytes of records (and their prints) a worker keeps.
const BUDGET: usize = 2 << 20;
/// Records longer than this are printed each time (they would crowd the others out).
const MAX_RECORD: usize = 256 << 10;

/// A record's bytes and its print.
type Printed = (Vec<u8>, Vec<u8>);

/// A worker's records met before.
#[derive(Default)]
pub(super) struct Repeats {
    /// By length and masked CRC-32C.
    by_crc: HashMap<(usize, u32), Printed, rustc_hash::FxBuildHasher>,
    held: usize,
}

impl Repeats {
    /// [`fingerprint::print`] of `record`, taken from an equal record printed before
    /// when it is a classify, regress or multi-inference record. `crc` is the record's
    /// masked CRC-32C ([`crate::formats::masked_crc`]), the one its framing stores and the
    /// walk checked: it is not computed again.
    pub(super) fn print(&mut self, record: &[u8], crc: u32, out: &mut Vec<u8>) -> bool {
        if record.len() > MAX_RECORD || !examples_log(record) {
            return fingerprint::print(record, out);
        }
        let key = (record.len(), crc);
        if let Some((bytes, print)) = self.by_crc.get(&key)
            && bytes == record
        {
            out.clear();
            out.extend_from_slice(print);
            return true;
        }
        let printed = fingerprint::print(record, out);
        let size = record.len() + out.len();
        if printed && self.held + size <= BUDGET && !self.by_crc.contains_key(&key) {
            self.held += size;
            self.by_crc.insert(key, (record.to_vec(), out.clone()));
        }
        printed
    }
}

/// Whether a `PredictionLog`'s top-level fields hold a classify, regress or
/// multi-inference log (a quick look: the print checks the record).
fn examples_log(record: &[u8]) -> bool {
    let mut f = Fields::new(record);
    while let Some(Some((n, v))) = f.next() {
        if let Value::Len(_) = v
            && matches!(
                n,
                prediction_log::CLASSIFY_LOG
                    | prediction_log::REGRESS_LOG
                    | prediction_log::MULTI_INFERENCE_LOG
            )
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crc(b: &[u8]) -> u32 {
        crate::formats::tfrecord::masked_crc(b)
    }

    fn request(name: &str) -> Vec<u8> {
        let b = std::fs::read(format!(
            "{}/tests/data/examples/requests/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        crate::formats::prediction_log::encode_request_log(crate::Method::Classify, &b).unwrap()
    }

    /// A repeated record takes its print from the first; a record of the same length
    /// and different bytes is printed on its own; a damaged copy is not printed.
    #[test]
    fn equal_records_share_a_print_and_others_are_read() {
        let mut r = Repeats::default();
        let a = request("classify_valid.pb");
        let (mut pa, mut again, mut plain) = (Vec::new(), Vec::new(), Vec::new());
        assert!(r.print(&a, crc(&a), &mut pa));
        assert_eq!(r.by_crc.len(), 1);
        assert!(r.print(&a, crc(&a), &mut again));
        assert_eq!(pa, again);
        assert!(fingerprint::print(&a, &mut plain));
        assert_eq!(pa, plain);
        // The same length, one byte changed near the end: another CRC, so it is read on
        // its own and printed (or declined) exactly as without the store.
        let mut bad = a.clone();
        let at = bad.len() - 3;
        bad[at] = 0xff;
        let (mut pb, mut plain_b) = (Vec::new(), Vec::new());
        let printed = r.print(&bad, crc(&bad), &mut pb);
        assert_eq!(printed, fingerprint::print(&bad, &mut plain_b));
        assert_eq!(
            pb, plain_b,
            "read on its own, not taken from the record seen before"
        );
        let kept = r.by_crc.len();
        // A predict record is printed as before, and not kept.
        let p = crate::formats::prediction_log::encode_predict_log(
            &std::fs::read(format!(
                "{}/tests/data/tfs/faq_prod.bin",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        );
        assert!(r.print(&p, crc(&p), &mut Vec::new()));
        assert_eq!(r.by_crc.len(), kept, "{kept} kept before a predict record");
    }
}
