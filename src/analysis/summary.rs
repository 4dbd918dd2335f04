//! The `tfreq keys` summary: a stable, documented JSON document of which executor keys
//! and shape keys a set of logs holds, that summaries of parts of the logs merge into
//! exactly (`tfreq keys merge`, the Apache Beam pipeline's combiner).
//!
//! Everything in it is order-free, so merging is associative and commutative and a
//! merge of the summaries of any split of a set of logs equals the summary of one run
//! over all of them:
//!
//! - `files` (path and byte count of each file read) and `unreadable` are sorted by path;
//! - each shape key's `first` is its earliest request in (file path, record) order;
//! - keys are sorted by count (most first), then by their first request, then by the
//!   key itself; each key's shapes the same way.
//!
//! ```
//! use tfreq::analysis::{KeyCounts, Origin};
//! use tfreq::analysis::Summary;
//! let count = |files: &[&str]| {
//!     let mut cov = KeyCounts::default();
//!     for (i, f) in files.iter().enumerate() {
//!         let m = tfreq::decode(&std::fs::read(f).unwrap()).unwrap();
//!         cov.add(&m, Origin { file: i, entry: 0, record: false }, false);
//!         cov.files.push(f.to_string());
//!     }
//!     Summary::of(&cov)
//! };
//! let (a, b) = ("tests/data/eas/faq_prod.bin", "tests/data/eas/faq_prod_batch4.bin");
//! let whole = count(&[a, b]);
//! let mut merged = count(&[b]);
//! merged.merge(count(&[a]));
//! assert_eq!(merged, whole);
//! assert_eq!((whole.requests, whole.executor_keys, whole.shape_keys), (2, 1, 2));
//! let text = whole.to_json();
//! assert_eq!(Summary::from_json(&text)?, whole);
//! # Ok::<(), tfreq::Error>(())
//! ```

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::analysis::coverage::{KeyCounts, Origin};
use crate::analysis::key::{ExecutorKey, ShapeKey};
use crate::analysis::report::Unreadable;
use crate::error::Error;
use crate::model::Method;

/// The summary format's version: `schema` in every document. A reader refuses other
/// versions rather than misreading them.
pub const SCHEMA: u32 = 1;

/// A `tfreq keys` summary (see the module documentation for its rules).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// The format's version, [`SCHEMA`].
    pub schema: u32,
    /// Requests counted.
    pub requests: u64,
    /// Entries that hold no request (log records with no `log_type`, session-run logs,
    /// a log without its request, text lines), passed over.
    pub skipped: u64,
    /// How many executor keys `keys` lists.
    pub executor_keys: usize,
    /// How many shape keys the executor keys hold in all.
    pub shape_keys: usize,
    /// The files read, sorted by path.
    pub files: Vec<FileRead>,
    /// Files that could not be read, sorted by path, each with why.
    #[serde(default)]
    pub unreadable: Vec<Unreadable>,
    /// The executor keys.
    pub keys: Vec<KeySummary>,
    /// `keys --allowed-batch-sizes` / `--batching-parameters-file`: the padded batch
    /// sizes the requests run at ([`crate::analysis::count_sizes`]); merging
    /// recomputes it from the merged keys when every summary that has it used the
    /// same rule, and leaves it out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batching: Option<crate::analysis::batch::BatchSizes>,
}

/// A file read: its path as given and its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRead {
    /// The path, as given on the command line (`-` for standard input).
    pub path: String,
    /// Bytes read.
    pub bytes: u64,
}

/// One executor key: what TensorFlow compiles an executor for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySummary {
    /// The model the requests name (TF Serving's `model_spec.name`); absent (or `null`)
    /// where they name none, as EAS requests never do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The request's method (`classify`, `regress`, `classify_or_regress`,
    /// `multi_inference`); absent for predict.
    #[serde(default, skip_serializing_if = "Method::is_predict")]
    pub method: Method,
    /// The signature run (a multi-inference key: every task's, sorted, joined by `,`).
    pub signature: String,
    /// The feed names, sorted.
    pub feeds: Vec<String>,
    /// The fetch names, sorted, a name fetched twice listed twice (empty with `fetch_all`).
    pub fetches: Vec<String>,
    /// TF Serving with an empty `output_filter`: every output of the signature.
    pub fetch_all: bool,
    /// Requests with this key.
    pub count: u64,
    /// Its shape keys.
    pub shapes: Vec<ShapeSummary>,
}

impl KeySummary {
    /// The executor key this entry stands for (its fetches sorted again, so a summary
    /// written by hand keys as `keys` would).
    pub fn key(&self) -> ExecutorKey {
        ExecutorKey {
            model: self.model.clone(),
            method: self.method,
            signature: self.signature.clone(),
            feeds: self.feeds.iter().cloned().collect::<BTreeSet<_>>(),
            fetches: crate::analysis::key::sorted(self.fetches.iter().cloned()),
            fetch_all: self.fetch_all,
        }
    }
}

/// One shape key of an executor key: each feed's dtype and shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeSummary {
    /// Feed name → its dtype and shape.
    pub feeds: BTreeMap<String, FeedShape>,
    /// Requests with this shape key.
    pub count: u64,
    /// Its earliest request.
    pub first: First,
}

/// A feed's dtype and dims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedShape {
    /// `DT_FLOAT`, ...
    pub dtype: String,
    /// Dim sizes (`-1` where unknown).
    pub shape: Vec<i64>,
}

/// Where a request is: a file, and its record number when the file holds several.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct First {
    /// The file's path.
    pub file: String,
    /// The record (from 0) in a multi-record file; absent for a file of one request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<u64>,
}

impl Summary {
    /// The summary of counts made by [`crate::scan`] (or by hand): `cov.files` names the
    /// files the origins number, `cov.file_sizes` their sizes (0 where not given).
    pub fn of(cov: &KeyCounts) -> Summary {
        let first_of = |at: Origin| First {
            file: cov.files.get(at.file).cloned().unwrap_or_default(),
            record: at.record.then_some(at.entry as u64),
        };
        let mut table = Table::default();
        for (k, s) in &cov.keys {
            table.add(k.clone(), s.count, first_of(s.first));
        }
        let files = cov
            .files
            .iter()
            .enumerate()
            .map(|(i, p)| FileRead {
                path: p.clone(),
                bytes: cov.file_sizes.get(i).copied().unwrap_or(0),
            })
            .collect();
        table
            .into_summary(cov.requests, cov.skipped, files, cov.unreadable.clone())
            .summary
    }

    /// Adds another summary into this one: counts summed, each key's earliest request
    /// kept, files and unreadable files joined. A count past 2^64 − 1 stays at
    /// 2^64 − 1 (never wraps); [`Summary::try_merge`] refuses it instead.
    pub fn merge(&mut self, other: Summary) {
        let (merged, _) = self.merged(other);
        *self = merged;
    }

    /// [`Summary::merge`], refusing a count that would not fit in 64 bits (two
    /// summaries of 2^63 requests each): the error names what overflowed, and `self`
    /// is left as it was.
    ///
    /// ```
    /// use tfreq::analysis::Summary;
    /// let mut a = Summary::empty();
    /// a.requests = 1 << 63;
    /// let e = a.clone().try_merge(a.clone()).unwrap_err();
    /// assert!(e.to_string().contains("requests"), "{e}");
    /// ```
    pub fn try_merge(&mut self, other: Summary) -> Result<(), Error> {
        let (merged, overflow) = self.merged(other);
        match overflow {
            Some(what) => Err(invalid(SummaryError::MergeOverflow { what })),
            None => {
                *self = merged;
                Ok(())
            }
        }
    }

    /// This summary and `other` merged, counts saturating, with what overflowed first.
    fn merged(&self, other: Summary) -> (Summary, Option<String>) {
        let mut table = Table::default();
        let rules: Vec<(crate::analysis::batch::BatchRule, String)> = [self, &other]
            .iter()
            .filter_map(|s| s.batching.as_ref())
            .map(|b| (b.rule.clone(), b.source.clone()))
            .collect();
        let rule = rules
            .first()
            .filter(|(r, _)| rules.iter().all(|(o, _)| o == r))
            .cloned();
        table.add_summary(self);
        table.add_summary(&other);
        let requests = table.sum(self.requests, other.requests, || "requests".into());
        let skipped = table.sum(self.skipped, other.skipped, || "skipped entries".into());
        let mut files = self.files.clone();
        files.extend(other.files);
        let mut unreadable = self.unreadable.clone();
        unreadable.extend(other.unreadable);
        let mut merged = table.into_summary(requests, skipped, files, unreadable);
        let overflow = merged.overflow.take();
        if let Some((rule, source)) = rule {
            merged.batching = Some(merged.batch_sizes(&rule, &source));
        }
        (merged.summary, overflow)
    }

    /// The padded batch sizes of this summary's requests under `rule`.
    pub fn batch_sizes(
        &self,
        rule: &crate::analysis::batch::BatchRule,
        source: &str,
    ) -> crate::analysis::batch::BatchSizes {
        let cov = self.counts();
        crate::analysis::batch::count_sizes(
            rule,
            source,
            cov.keys.iter().map(|(k, s)| (k, s.count)),
        )
    }

    /// The counts again, as [`crate::scan`] makes them (for the human table): origins
    /// number [`Summary::files`] in their order.
    pub fn counts(&self) -> KeyCounts {
        let index: HashMap<&str, usize> = self
            .files
            .iter()
            .enumerate()
            .rev()
            .map(|(i, f)| (f.path.as_str(), i))
            .collect();
        let mut cov = KeyCounts {
            requests: self.requests,
            skipped: self.skipped,
            files: self.files.iter().map(|f| f.path.clone()).collect(),
            file_sizes: self.files.iter().map(|f| f.bytes).collect(),
            unreadable: self.unreadable.clone(),
            ..KeyCounts::default()
        };
        for k in &self.keys {
            let key = k.key();
            for sh in &k.shapes {
                let sk = ShapeKey {
                    key: key.clone(),
                    shapes: sh
                        .feeds
                        .iter()
                        .map(|(n, f)| (n.clone(), (f.dtype.clone(), f.shape.clone())))
                        .collect(),
                };
                let first = Origin {
                    file: index
                        .get(sh.first.file.as_str())
                        .copied()
                        .unwrap_or(usize::MAX),
                    entry: sh.first.record.unwrap_or(0) as usize,
                    record: sh.first.record.is_some(),
                };
                cov.add_stat(
                    sk,
                    crate::analysis::coverage::KeyStat {
                        count: sh.count,
                        first,
                        representative: None,
                    },
                );
            }
        }
        cov
    }

    /// A summary of nothing.
    pub fn empty() -> Summary {
        Table::default()
            .into_summary(0, 0, Vec::new(), Vec::new())
            .summary
    }

    /// The JSON document (one line).
    pub fn to_json(&self) -> String {
        crate::escape::json_string(self, false)
    }

    /// Reads a summary document, refusing another `schema` and anything that is not a
    /// summary (the error names the line and column), one of more than
    /// [`DEFAULT_MAX_KEYS`] shape keys and one whose counts add up past 2^64 − 1.
    pub fn from_json(text: &str) -> Result<Summary, Error> {
        Summary::from_json_capped(text, DEFAULT_MAX_KEYS)
    }

    /// [`Summary::from_json`] refusing a summary of more than `max_keys` shape keys.
    /// The keys are counted by a first pass over the text that allocates nothing per
    /// key, so a summary over the limit is refused before it takes memory.
    ///
    /// ```
    /// use tfreq::analysis::Summary;
    /// let text = Summary::empty().to_json();
    /// assert!(Summary::from_json_capped(&text, 0).is_ok());
    /// let two = r#"{"schema": 1, "keys": [{"shapes": [{}, {}]}]}"#;
    /// let e = Summary::from_json_capped(two, 1).unwrap_err().to_string();
    /// assert!(e.contains("2 shape keys, over the limit of 1"), "{e}");
    /// ```
    pub fn from_json_capped(text: &str, max_keys: usize) -> Result<Summary, Error> {
        let bad = |e: serde_json::Error| {
            invalid(SummaryError::NotJson {
                why: e.to_string(),
                line: e.line(),
                column: e.column(),
            })
        };
        let v: Outline = serde_json::from_str(text).map_err(bad)?;
        match v.schema {
            Some(SCHEMA) if v.keys.0 > max_keys => Err(Error::other(
                crate::error::Category::Limit,
                TooManyShapeKeys {
                    found: v.keys.0,
                    limit: max_keys,
                },
            )),
            Some(SCHEMA) => {
                let s: Summary = serde_json::from_str(text).map_err(bad)?;
                s.check_counts()?;
                Ok(s)
            }
            Some(found) => Err(invalid(SummaryError::Schema { found })),
            None => Err(invalid(SummaryError::NoSchema)),
        }
    }
}

impl Summary {
    /// Refuses counts that add up past 2^64 − 1 (each executor key's shapes, the keys):
    /// no summary of real requests has them, and the tables built from a summary sum them.
    fn check_counts(&self) -> Result<(), Error> {
        let over = |what: &str| {
            invalid(SummaryError::CountsOverflow {
                what: what.to_string(),
            })
        };
        let mut all: u64 = 0;
        for k in &self.keys {
            let mut n: u64 = 0;
            for sh in &k.shapes {
                n = n.checked_add(sh.count).ok_or_else(|| {
                    over(&format!("the counts of the shapes of {:?}", k.signature))
                })?;
            }
            all = all
                .checked_add(n.max(k.count))
                .ok_or_else(|| over("the counts of the keys"))?;
        }
        Ok(())
    }
}

/// Distinct shape keys a summary may hold ([`Summary::from_json`]) and a count may
/// hold (`crate::analysis::DEFAULT_MAX_KEYS`, the command line's `--max-keys`): 100,000.
/// A one-feed key costs about 5 KB at the peak of `tfreq keys` (its tables, then the
/// summary or table written from them) and about 4 KB in `tfreq keys merge`, so at the
/// limit either stays near half a gigabyte (`cli/tests/cli/hostile_inputs.rs` measures it);
/// the real logs of docs/performance.md hold about 3,000.
pub const DEFAULT_MAX_KEYS: usize = 100_000;

/// Why a `tfreq keys` summary cannot be read or merged (besides [`TooManyShapeKeys`]).
///
/// ```
/// use tfreq::analysis::{Summary, SummaryError};
///
/// let e = Summary::from_json(r#"{"schema": 7}"#).unwrap_err();
/// let why = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<SummaryError>());
/// assert!(matches!(why, Some(SummaryError::Schema { found: 7 })));
/// assert_eq!(e.to_string(), "a tfreq keys summary of schema 7; this tfreq reads schema 1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SummaryError {
    /// Not JSON, or JSON not of a summary's form.
    #[error("not a tfreq keys summary: {why} (line {line}, column {column})")]
    NotJson {
        /// What the JSON reader said.
        why: String,
        /// The line it stopped at, from 1.
        line: usize,
        /// The column it stopped at, from 1.
        column: usize,
    },
    /// A JSON object without the `schema` field every summary has.
    #[error("not a tfreq keys summary: no \"schema\" field")]
    NoSchema,
    /// A summary of a schema this version does not read ([`SCHEMA`] is the one it reads).
    #[error("a tfreq keys summary of schema {found}; this tfreq reads schema {SCHEMA}")]
    Schema {
        /// The summary's schema.
        found: u32,
    },
    /// Counts that add up past 2^64 − 1, which no summary of real requests has.
    #[error("not a tfreq keys summary: {what} add up past 2^64 - 1")]
    CountsOverflow {
        /// Which counts.
        what: String,
    },
    /// Two summaries whose counts sum past 2^64 − 1.
    #[error("merging: {what}: the sum is past the largest count, 2^64 - 1 ({max})", max = u64::MAX)]
    MergeOverflow {
        /// Which count.
        what: String,
    },
}

/// A [`SummaryError`] as the crate's error, of the same category as other unreadable
/// containers.
fn invalid(e: SummaryError) -> Error {
    Error::other(crate::error::Category::Container, e)
}

/// A summary of more shape keys than the limit it is read with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a summary of {} shape keys, over the limit of {}", crate::digits::group_digits(*found as u64), crate::digits::group_digits(*limit as u64))]
pub struct TooManyShapeKeys {
    /// Shape keys in the summary.
    pub found: usize,
    /// The limit.
    pub limit: usize,
}

/// A summary's schema and how many shape keys it holds, read without keeping them.
#[derive(Deserialize)]
struct Outline {
    schema: Option<u32>,
    #[serde(default)]
    keys: Counted<KeyOutline>,
}

/// An executor key's shape keys, counted.
#[derive(Deserialize)]
struct KeyOutline {
    #[serde(default)]
    shapes: Counted<serde::de::IgnoredAny>,
}

/// How many shape keys an array holds: its elements (`T` = ignored), or the sum of
/// their shapes (`T` = [`KeyOutline`]).
struct Counted<T>(usize, std::marker::PhantomData<T>);

impl<T> Default for Counted<T> {
    fn default() -> Self {
        Counted(0, std::marker::PhantomData)
    }
}

/// What one element of a [`Counted`] array adds.
trait Weight {
    fn weight(&self) -> usize;
}

impl Weight for serde::de::IgnoredAny {
    fn weight(&self) -> usize {
        1
    }
}

impl Weight for KeyOutline {
    fn weight(&self) -> usize {
        self.shapes.0
    }
}

impl<'de, T: Deserialize<'de> + Weight> Deserialize<'de> for Counted<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Weight> serde::de::Visitor<'de> for Visit<T> {
            type Value = usize;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<usize, A::Error> {
                let mut n = 0usize;
                while let Some(e) = a.next_element::<T>()? {
                    n = n.saturating_add(e.weight());
                }
                Ok(n)
            }
        }
        d.deserialize_seq(Visit::<T>(std::marker::PhantomData))
            .map(|n| Counted(n, std::marker::PhantomData))
    }
}

/// Shape keys with their counts and earliest requests, built up from counts or
/// summaries, then laid out in the summary's order.
#[derive(Default)]
struct Table {
    shapes: HashMap<ShapeKey, (u64, First)>,
    /// The first sum that went past `u64::MAX` (counts saturate).
    overflow: Option<String>,
}

/// A summary laid out by [`Table::into_summary`], and the first sum that overflowed.
struct Laid {
    summary: Summary,
    overflow: Option<String>,
}

impl std::ops::Deref for Laid {
    type Target = Summary;
    fn deref(&self) -> &Summary {
        &self.summary
    }
}

impl std::ops::DerefMut for Laid {
    fn deref_mut(&mut self) -> &mut Summary {
        &mut self.summary
    }
}

impl Table {
    /// `a + b`, saturating; an overflow is remembered as `what`.
    fn sum(&mut self, a: u64, b: u64, what: impl FnOnce() -> String) -> u64 {
        a.checked_add(b).unwrap_or_else(|| {
            self.overflow.get_or_insert_with(what);
            u64::MAX
        })
    }

    fn add(&mut self, k: ShapeKey, count: u64, first: First) {
        match self.shapes.get_mut(&k) {
            Some((n, f)) => {
                *n = n.checked_add(count).unwrap_or_else(|| {
                    self.overflow.get_or_insert_with(|| {
                        format!("the requests of the shape key {}", k.key.signature)
                    });
                    u64::MAX
                });
                if first < *f {
                    *f = first;
                }
            }
            None => {
                self.shapes.insert(k, (count, first));
            }
        }
    }

    fn add_summary(&mut self, s: &Summary) {
        for k in &s.keys {
            let key = k.key();
            for sh in &k.shapes {
                let shapes = sh
                    .feeds
                    .iter()
                    .map(|(n, f)| (n.clone(), (f.dtype.clone(), f.shape.clone())))
                    .collect();
                let sk = ShapeKey {
                    key: key.clone(),
                    shapes,
                };
                self.add(sk, sh.count, sh.first.clone());
            }
        }
    }

    fn into_summary(
        self,
        requests: u64,
        skipped: u64,
        mut files: Vec<FileRead>,
        mut unreadable: Vec<Unreadable>,
    ) -> Laid {
        let mut overflow = self.overflow;
        files.sort();
        unreadable.sort_by(|a, b| a.file.cmp(&b.file).then(a.error.cmp(&b.error)));
        let mut groups: HashMap<ExecutorKey, KeySummary> = HashMap::new();
        let shape_keys = self.shapes.len();
        for (sk, (count, first)) in self.shapes {
            let g = groups.entry(sk.key.clone()).or_insert_with(|| KeySummary {
                model: sk.key.model.clone(),
                method: sk.key.method,
                signature: sk.key.signature.clone(),
                feeds: sk.key.feeds.iter().cloned().collect(),
                fetches: sk.key.fetches.clone(),
                fetch_all: sk.key.fetch_all,
                count: 0,
                shapes: Vec::new(),
            });
            g.count = g.count.checked_add(count).unwrap_or_else(|| {
                overflow.get_or_insert_with(|| {
                    format!("the requests of the executor key {}", sk.key.signature)
                });
                u64::MAX
            });
            g.shapes.push(ShapeSummary {
                feeds: sk
                    .shapes
                    .into_iter()
                    .map(|(n, (dtype, shape))| (n, FeedShape { dtype, shape }))
                    .collect(),
                count,
                first,
            });
        }
        let mut keys: Vec<KeySummary> = groups.into_values().collect();
        for k in &mut keys {
            k.shapes.sort_by(|a, b| {
                b.count
                    .cmp(&a.count)
                    .then_with(|| a.first.cmp(&b.first))
                    .then_with(|| shape_order(a, b))
            });
        }
        let first = |k: &KeySummary| k.shapes.iter().map(|s| s.first.clone()).min();
        keys.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| first(a).cmp(&first(b)))
                .then_with(|| {
                    (&a.model, &a.signature, &a.feeds, &a.fetches, a.fetch_all).cmp(&(
                        &b.model,
                        &b.signature,
                        &b.feeds,
                        &b.fetches,
                        b.fetch_all,
                    ))
                })
        });
        let summary = Summary {
            schema: SCHEMA,
            requests,
            skipped,
            executor_keys: keys.len(),
            shape_keys,
            files,
            unreadable,
            keys,
            batching: None,
        };
        Laid { summary, overflow }
    }
}

fn shape_order(a: &ShapeSummary, b: &ShapeSummary) -> Ordering {
    let flat = |s: &ShapeSummary| {
        s.feeds
            .iter()
            .map(|(n, f)| (n.clone(), f.dtype.clone(), f.shape.clone()))
            .collect::<Vec<_>>()
    };
    flat(a).cmp(&flat(b))
}
