//! Production coverage: which executor keys (and shapes) a set of requests really
//! sends, and how often — what a warm-up has to cover. The tables only: reading files
//! and logs into them (memory-mapped, on worker threads) is [`crate::scan`]'s.
//!
//! ```
//! use tfreq::analysis::{KeyCounts, Origin};
//! let mut cov = KeyCounts::default();
//! for (i, f) in ["faq_prod.bin", "faq_prod_reordered.bin", "faq_prod_batch4.bin"].iter().enumerate() {
//!     let m = tfreq::decode(&std::fs::read(format!("tests/data/eas/{f}"))?)?;
//!     cov.add(&m, Origin { file: i, entry: 0, record: false }, false);
//! }
//! assert_eq!(cov.requests, 3);
//! assert_eq!(cov.executor_keys().len(), 1); // same feed and fetch sets
//! assert_eq!(cov.shape_keys().len(), 2);    // batch 1 and batch 4
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;

use serde::Serialize;

use crate::analysis::key::{ExecutorKey, ShapeKey};
use crate::formats::{Content, Entry};
use crate::model::Message;

/// Where a request came from: file number (in the order given) and entry index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Origin {
    /// Index of the file in the list given.
    pub file: usize,
    /// Entry (record) index in that file.
    pub entry: usize,
    /// Whether the file holds several entries (a TFRecord log), so `entry` is a record number.
    pub record: bool,
}

/// One shape key's count and its first request.
#[derive(Debug, Clone)]
pub struct KeyStat {
    /// How many requests had this key.
    pub count: u64,
    /// Where the first one is.
    pub first: Origin,
    /// The first one (kept only when asked for).
    pub representative: Option<Message>,
}

/// Counts by shape key over many requests (what `tfreq keys` prints).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct KeyCounts {
    /// Requests counted.
    pub requests: u64,
    /// Entries that hold no request (log records with no `log_type`, session-run
    /// logs, a log without its request, text lines).
    pub skipped: u64,
    /// Count per shape key. FxHash (`rustc_hash`): a log's thousands of shape keys,
    /// each with its names and shapes, are hashed again for every merge of two counts,
    /// on the one thread that joins the workers' counts, where SipHash was most of its time.
    pub keys: HashMap<ShapeKey, KeyStat, rustc_hash::FxBuildHasher>,
    /// The files read, in order.
    pub files: Vec<String>,
    /// The size in bytes of each of [`KeyCounts::files`], where known (the summary's
    /// `files[].bytes`).
    pub file_sizes: Vec<u64>,
    /// Files that could not be read, in the order given
    /// ([`crate::scan::count`]).
    pub unreadable: Vec<crate::analysis::report::Unreadable>,
}

/// An executor key with its total and its shape keys, most frequent first.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutorGroup {
    /// The key.
    pub key: ExecutorKey,
    /// Requests with it.
    pub count: u64,
    /// Its shape keys, most frequent first.
    pub shapes: Vec<(ShapeKey, u64, Origin)>,
}

impl KeyCounts {
    /// Counts one request.
    pub fn add(&mut self, msg: &Message, at: Origin, keep: bool) {
        self.requests += 1;
        let k = ShapeKey::of(msg);
        match self.keys.get_mut(&k) {
            Some(s) => {
                s.count += 1;
                if at < s.first {
                    s.first = at;
                    if keep {
                        s.representative = Some(msg.clone());
                    }
                }
            }
            None => {
                self.keys.insert(
                    k,
                    KeyStat {
                        count: 1,
                        first: at,
                        representative: keep.then(|| msg.clone()),
                    },
                );
            }
        }
    }

    /// Counts one entry of a file read by [`crate::formats`]: a message is counted at
    /// `Origin { file, entry: e.index, record }`, anything else (another log kind, a
    /// text line) is skipped.
    pub fn add_entry(&mut self, e: &Entry, file: usize, record: bool, keep: bool) {
        match &e.content {
            Content::Message(m) => self.add(
                m,
                Origin {
                    file,
                    entry: e.index,
                    record,
                },
                keep,
            ),
            _ => self.skipped += 1,
        }
    }

    /// Adds another count (from another worker or file) into this one.
    pub fn merge(&mut self, other: KeyCounts) {
        self.requests += other.requests;
        self.skipped += other.skipped;
        for (k, s) in other.keys {
            self.add_stat(k, s);
        }
    }

    /// Adds `s.count` requests of key `k` already counted elsewhere (their first at
    /// `s.first`) to the key's count; [`KeyCounts::requests`] is the caller's to add.
    pub fn add_stat(&mut self, k: ShapeKey, s: KeyStat) {
        match self.keys.get_mut(&k) {
            Some(m) => {
                m.count += s.count;
                if s.first < m.first {
                    m.first = s.first;
                    m.representative = s.representative;
                }
            }
            None => {
                self.keys.insert(k, s);
            }
        }
    }

    /// Shape keys, most frequent first (ties: first seen first).
    pub fn shape_keys(&self) -> Vec<(&ShapeKey, &KeyStat)> {
        let mut v: Vec<_> = self.keys.iter().collect();
        v.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.1.first.cmp(&b.1.first)));
        v
    }

    /// Executor keys with their shapes, most frequent first (ties: first seen first).
    pub fn executor_keys(&self) -> Vec<ExecutorGroup> {
        let mut groups: HashMap<&ExecutorKey, ExecutorGroup, rustc_hash::FxBuildHasher> =
            HashMap::default();
        for (k, s) in self.shape_keys() {
            let g = groups.entry(&k.key).or_insert_with(|| ExecutorGroup {
                key: k.key.clone(),
                count: 0,
                shapes: Vec::new(),
            });
            g.count += s.count;
            g.shapes.push((k.clone(), s.count, s.first));
        }
        let mut v: Vec<ExecutorGroup> = groups.into_values().collect();
        let first = |g: &ExecutorGroup| g.shapes.iter().map(|s| s.2).min();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(first(a).cmp(&first(b))));
        v
    }

    /// The models the counted requests name, sorted (empty when none names one, as with
    /// EAS requests).
    pub fn models(&self) -> Vec<&str> {
        let set: std::collections::BTreeSet<&str> = self
            .keys
            .keys()
            .filter_map(|k| k.key.model.as_deref())
            .collect();
        set.into_iter().collect()
    }

    /// Keeps only the requests of model `name` and those that name no model (an EAS
    /// service serves one model, so its requests name none); returns how many requests
    /// of other models were left out, which [`KeyCounts::requests`] no longer counts.
    ///
    /// ```
    /// use tfreq::analysis::{KeyCounts, Origin};
    /// let mut cov = KeyCounts::default();
    /// for (i, f) in ["tests/data/tfs/seed_content.bin", "tests/data/eas/faq_prod.bin"].iter().enumerate() {
    ///     let m = tfreq::decode(&std::fs::read(f)?)?;
    ///     cov.add(&m, Origin { file: i, entry: 0, record: false }, false);
    /// }
    /// let named = cov.models().len();
    /// assert_eq!(named, 1);
    /// assert_eq!(cov.retain_model("another"), 1);
    /// assert_eq!(cov.requests, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retain_model(&mut self, name: &str) -> u64 {
        let mut left_out = 0;
        self.keys.retain(|k, s| {
            let keep = k.key.model.as_deref().is_none_or(|m| m == name);
            if !keep {
                left_out += s.count;
            }
            keep
        });
        self.requests -= left_out;
        left_out
    }

    /// `FILE record N` (or just `FILE` for a bare message) for an origin.
    pub fn describe(&self, at: Origin) -> String {
        let file = self.files.get(at.file).map_or("?", String::as_str);
        if at.record {
            format!("{file} record {}", at.entry)
        } else {
            file.to_string()
        }
    }
}
