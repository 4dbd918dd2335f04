//! The keys met so far, shared by a file's workers: a record whose print was seen before
//! is counted without being decoded.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;

use crate::analysis::coverage::{KeyCounts, KeyStat, Origin};
use crate::analysis::key::ShapeKey;
use crate::error::Error;
use crate::model::Message;

use super::{overflow, too_many_keys};

/// A worker's counts by print ([`fingerprint`]), over every part of a log it walks: a
/// record whose print the worker saw before is counted without being decoded, so the
/// cost of a record does not grow with the number of distinct requests a log holds
/// (each distinct print is decoded once per worker, not once per part). The table is
/// keyed by the print's bytes under FxHash (`rustc_hash`): prints are tens to hundreds
/// of bytes and hashed once per record, where SipHash cost as much as reading them.
/// The table holds at most `max` prints (each a key, or one order of a key's inputs):
/// [`TooManyKeys`] past them.
pub(super) struct Seen {
    by_print: HashMap<Vec<u8>, KeyEntry, rustc_hash::FxBuildHasher>,
    max: usize,
    /// The examples records this worker printed, by their bytes.
    pub(super) repeats: super::repeats::Repeats,
}

/// The shape key of each print any worker of a log has decoded: a worker that meets a
/// print new to it but known to another takes its key from here instead of decoding
/// the request again, and the workers' tables share one key per print (joining them
/// then frees no key). Taken only when a worker meets a print new to it (thousands of
/// times a log, not once a record), so the lock is not contended.
pub(super) type KnownKeys =
    std::sync::Mutex<HashMap<Vec<u8>, Arc<ShapeKey>, rustc_hash::FxBuildHasher>>;

/// One print's key and count, as [`KeyCounts`] keeps them, and the part of the log its
/// first request is in (its `first.entry` counts from that part's start).
pub(super) struct KeyEntry {
    key: Arc<ShapeKey>,
    stat: KeyStat,
    part: usize,
}

impl Seen {
    /// An empty table of at most `max` prints.
    pub(super) fn new(max: usize) -> Self {
        Seen {
            by_print: HashMap::default(),
            max,
            repeats: super::repeats::Repeats::default(),
        }
    }

    /// `Err` when a new print would take the table past its limit.
    pub(super) fn room(&self) -> Result<(), Error> {
        if self.by_print.len() >= self.max {
            return Err(too_many_keys(self.max));
        }
        Ok(())
    }

    /// Counts a request of a print seen before (a worker walks its parts in file order,
    /// and each part's records in order, so its first is already the worker's
    /// earliest); `false` for a new print.
    pub(super) fn count(&mut self, print: &[u8]) -> bool {
        match self.by_print.get_mut(print) {
            Some(e) => {
                e.stat.count += 1;
                true
            }
            None => false,
        }
    }

    /// Counts the first request of a new print, decoded in full as `m`, met in `part`;
    /// its key is made known to the other workers through `known`.
    pub(super) fn insert(
        &mut self,
        print: &[u8],
        m: &Message,
        (at, part): (Origin, usize),
        keep: bool,
        known: Option<&KnownKeys>,
    ) -> Result<(), Error> {
        self.room()?;
        let key = Arc::new(ShapeKey::of(m));
        if let Some(mut k) = known.and_then(|k| k.lock().ok()) {
            // Shared by the workers of one log: as bounded as each worker's table.
            if k.len() >= self.max && !k.contains_key(print) {
                return Err(too_many_keys(self.max));
            }
            k.insert(print.to_vec(), key.clone());
        }
        let stat = KeyStat {
            count: 1,
            first: at,
            representative: keep.then(|| m.clone()),
        };
        let entry = KeyEntry { key, stat, part };
        self.by_print.insert(print.to_vec(), entry);
        Ok(())
    }

    /// Counts the first request of a print new to this worker whose key is known without
    /// reading it: found by another worker, or made from an examples request's print (no
    /// representative kept).
    pub(super) fn insert_known(
        &mut self,
        print: &[u8],
        key: Arc<ShapeKey>,
        (at, part): (Origin, usize),
    ) -> Result<(), Error> {
        self.room()?;
        let stat = KeyStat {
            count: 1,
            first: at,
            representative: None,
        };
        let entry = KeyEntry { key, stat, part };
        self.by_print.insert(print.to_vec(), entry);
        Ok(())
    }

    /// Adds another worker's table of the same log: counts are summed, and a print's
    /// first request is the one earlier in the log (parts are in file order, a part's
    /// record numbers count from its start).
    pub(super) fn absorb(&mut self, other: Seen) -> Result<(), Error> {
        use std::collections::hash_map::Entry as Slot;
        for (print, e) in other.by_print {
            let full = self.by_print.len() >= self.max;
            match self.by_print.entry(print) {
                Slot::Occupied(mut o) => {
                    let o = o.get_mut();
                    o.stat.count = o
                        .stat
                        .count
                        .checked_add(e.stat.count)
                        .ok_or_else(|| overflow("requests of one key"))?;
                    if (e.part, e.stat.first) < (o.part, o.stat.first) {
                        o.part = e.part;
                        o.stat.first = e.stat.first;
                        o.stat.representative = e.stat.representative;
                    }
                }
                Slot::Vacant(_) if full => return Err(too_many_keys(self.max)),
                Slot::Vacant(v) => {
                    v.insert(e);
                }
            }
        }
        Ok(())
    }

    /// `c` with these counts added, each first request's record number made absolute
    /// by `before` (the records of the parts before each part).
    pub(super) fn into_counts(
        self,
        mut c: KeyCounts,
        before: &[usize],
    ) -> Result<KeyCounts, Error> {
        for (_, mut e) in self.by_print {
            c.requests = c
                .requests
                .checked_add(e.stat.count)
                .ok_or_else(|| overflow("requests"))?;
            e.stat.first.entry += before.get(e.part).copied().unwrap_or(0);
            c.add_stat(Arc::unwrap_or_clone(e.key), e.stat);
        }
        Ok(c)
    }
}

/// The buffer of a file, shared by its workers under one reference count per worker:
/// slicing a [`Bytes`] bumps its count, and one count shared by every core would
/// bounce its cache line between them on each record's every field.
pub(super) struct Share(pub(super) Bytes);

impl AsRef<[u8]> for Share {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}
