//! Every finding code, as data: one [`Code`] per rule, with its stable id, default
//! severity, the commands that report it and what it means ([`Rule`]). docs/codes.md's
//! finding-code tables are tested against [`Code::ALL`] (`tests/library/codes.rs`).
//!
//! ```
//! use tfreq::analysis::{Code, Severity};
//! let r = Code::FetchAdded.rule();
//! assert_eq!((r.id, r.severity), ("FETCH_ADDED", Severity::Error));
//! assert!(r.commands.diff && !r.commands.check && !r.commands.inspect);
//! assert_eq!(Code::from_id("FETCH_ADDED"), Some(Code::FetchAdded));
//! assert_eq!(serde_json::to_string(&Code::FetchAdded)?, "\"FETCH_ADDED\"");
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;

use serde::{Serialize, Serializer};

use crate::finding::Severity;

/// The commands that report a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Commands {
    /// `tfreq inspect`.
    pub inspect: bool,
    /// `tfreq diff`.
    pub diff: bool,
    /// `tfreq check`.
    pub check: bool,
    /// `tfreq send` / `tfreq replay`: what a live service answered or how fast.
    pub live: bool,
}

/// `inspect`, `diff` and `check`: what a file or a request carries on its own.
const ALL3: Commands = Commands {
    inspect: true,
    diff: true,
    check: true,
    live: false,
};
/// `inspect` and `diff` only (`check` says it with another code).
const NOT_CHECK: Commands = Commands {
    inspect: true,
    diff: true,
    check: false,
    live: false,
};
/// A comparison of a production request with the warm-up.
const DIFF: Commands = Commands {
    inspect: false,
    diff: true,
    check: false,
    live: false,
};
/// `diff` and `check`: what they read but do not compare.
const DIFF_CHECK: Commands = Commands {
    inspect: false,
    diff: true,
    check: true,
    live: false,
};
/// A comparison of a request with the model's signature.
const CHECK: Commands = Commands {
    inspect: false,
    diff: false,
    check: true,
    live: false,
};

/// A live service's answer or timing (`tfreq send --expect`, `tfreq replay`).
const LIVE: Commands = Commands {
    inspect: false,
    diff: false,
    check: false,
    live: true,
};

/// A rule: what one [`Code`] means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rule {
    /// The stable id, `UPPER_SNAKE` (what JSON and the annotations carry).
    pub id: &'static str,
    /// The severity on TF Serving without strict flags; `purpose` says where a wire
    /// format, a flag or the model changes it.
    pub severity: Severity,
    /// The commands that report it.
    pub commands: Commands,
    /// What it means, in one sentence.
    pub purpose: &'static str,
}

macro_rules! rules {
    ($( $variant:ident = $id:literal, $sev:ident, $cmds:ident, $purpose:literal; )*) => {
        /// A finding's code: one per rule. Serialized as its id (`FETCH_ADDED`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $(
                #[doc = concat!("`", $id, "`: ", $purpose, ".")]
                $variant,
            )*
        }

        impl Code {
            /// Every code, in the order of docs/codes.md.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// Its rule: id, default severity, commands, purpose.
            pub const fn rule(self) -> &'static Rule {
                match self {
                    $(Code::$variant => &Rule {
                        id: $id,
                        severity: Severity::$sev,
                        commands: $cmds,
                        purpose: $purpose,
                    },)*
                }
            }
        }
    };
}

rules! {
    // TF Serving's warm-up loader limits (analysis::warmup).
    TooManyRecords = "TOO_MANY_RECORDS", Error, ALL3,
        "more than 1000 records: the model fails to load";
    UnsupportedLogType = "UNSUPPORTED_LOG_TYPE", Error, ALL3,
        "session_run_log or predict_streamed_log: the classic warm-up fails the model load";
    NoLogType = "NO_LOG_TYPE", Warning, ALL3,
        "a record with no log type: skipped (warms nothing)";
    EmptyInput = "EMPTY_INPUT", Error, ALL3,
        "a classify / regress / multi_inference request whose Input holds no examples: TF Serving answers 'Input is empty.' (in a warm-up record, that fails the model load)";
    FeatureMissing = "FEATURE_MISSING", Error, CHECK,
        "an example lacks a dense feature the signature's ParseExample requires (no default): TensorFlow answers 'Feature: x (data type: float) is required but could not be found.'";
    FeatureKind = "FEATURE_KIND", Error, CHECK,
        "an example's feature is another list kind than the signature's ParseExample reads (int64_list for a float feature): 'Data types don't match'";
    FeatureLength = "FEATURE_LENGTH", Error, CHECK,
        "an example's fixed-length feature holds another number of values than its shape: 'Number of float values != expected'";
    WarmupCompressed = "WARMUP_COMPRESSED", Error, ALL3,
        "a gzip or zlib warm-up file (given to diff or check as the warm-up, or at assets.extra/tf_serving_warmup_requests): TF Serving's warm-up loader reads uncompressed TFRecord only, so the model fails to load";
    // What detection finds about a file (formats).
    WarmupBase64 = "WARMUP_BASE64", Error, ALL3,
        "the file is base64 text of a request (PaiRec writes warm_up.bin so): read decoded, but the EAS processor parses warm_up.bin as raw protobuf and fails on it";
    EmptyWarmup = "EMPTY_WARMUP", Warning, ALL3,
        "a 0-byte warm-up file: 0 records, TF Serving loads the model and warms nothing";
    EmptyRequest = "EMPTY_REQUEST", Warning, ALL3,
        "the empty file read as the valid empty request: no feeds, no fetches, a server runs nothing";
    RecordNotCompared = "RECORD_NOT_COMPARED", Note, DIFF_CHECK,
        "a classify / regress / multi_inference request whose examples are not checked against the model's feature spec (check), or such a warm-up record without a request (diff)";
    ReadingsAgree = "READINGS_AGREE", Note, ALL3,
        "the bytes read the same as an EAS and a TF Serving request: shown as EAS";
    // What one request carries on its own (analysis::lint).
    UnsafeName = "UNSAFE_NAME", Warning, ALL3,
        "a feed, fetch, signature or model name holding control characters, bidirectional controls or bytes that are not UTF-8: it can change what a terminal or a CI log shows (tfreq shows it escaped)";
    DuplicateKey = "DUPLICATE_KEY", Warning, ALL3,
        "an input name twice in the map: the last entry wins, as in protobuf";
    UnknownField = "UNKNOWN_FIELD", Warning, ALL3,
        "a field the schema does not have: kept, not interpreted";
    DuplicateFetch = "DUPLICATE_FETCH", Error, ALL3,
        "an output listed twice: TF Serving refuses it (a warning on EAS, where Session::Run returns it twice)";
    NoFetches = "NO_FETCHES", Warning, NOT_CHECK,
        "EAS request without output_filter: the EAS processor refuses such a warm-up (check says EMPTY_OUTPUT_FILTER)";
    BadDtype = "BAD_DTYPE", Error, ALL3,
        "a dtype no TensorProto can carry, DT_INVALID, or one EAS has no field for";
    ValuesMissing = "VALUES_MISSING", Note, ALL3,
        "no values: TensorFlow fills zeros (an error on EAS, whose processor aborts)";
    ValuesRepeatLast = "VALUES_REPEAT_LAST", Note, ALL3,
        "fewer values than the shape: TensorFlow repeats the last (an error on EAS)";
    ValuesTruncated = "VALUES_TRUNCATED", Error, ALL3,
        "more values than the shape: TensorFlow silently drops the rest";
    ValueOutOfRange = "VALUE_OUT_OF_RANGE", Error, ALL3,
        "int_val / half_val outside the dtype: TensorFlow keeps the low bits (300 in an int8 is 44)";
    BadShape = "BAD_SHAPE", Error, ALL3,
        "a shape Tensor::FromProto refuses: negative dim, unknown rank, over 254 dims, element count past int64";
    BadContent = "BAD_CONTENT", Error, ALL3,
        "tensor_content of the wrong size or layout: TensorFlow refuses it";
    ValuesIgnored = "VALUES_IGNORED", Warning, ALL3,
        "values in a field the dtype does not read (or beside tensor_content)";
    // A production request against the warm-up (analysis::diff).
    SignatureChanged = "SIGNATURE_CHANGED", Error, DIFF,
        "another signature: new executors";
    FeedAdded = "FEED_ADDED", Error, DIFF,
        "production feeds a name the warm-up does not: new executor";
    FeedMissing = "FEED_MISSING", Error, DIFF,
        "the warm-up feeds a name production does not: new executor";
    FetchAdded = "FETCH_ADDED", Error, DIFF,
        "production fetches a name the warm-up does not: new executor";
    FetchMissing = "FETCH_MISSING", Error, DIFF,
        "the warm-up fetches a name production does not: new executor";
    NotWarmed = "NOT_WARMED", Error, DIFF,
        "no warm-up request has this production executor key";
    FetchAllUnresolved = "FETCH_ALL_UNRESOLVED", Error, DIFF,
        "TF Serving's empty output_filter against an explicit list: the model's signatures decide";
    DtypeChanged = "DTYPE_CHANGED", Error, DIFF,
        "the same feed with another dtype: one of the two is refused";
    RankChanged = "RANK_CHANGED", Warning, DIFF,
        "the same feed with another rank: TensorFlow runs both where the graph accepts either (as check's SHAPE_INCOMPATIBLE, held to what TensorFlow answered), shape-specialising compilers recompile; error with strict shapes";
    BatchSizeChanged = "BATCH_SIZE_CHANGED", Warning, DIFF,
        "another batch size (dim 0): shape-specialising compilers recompile; error with strict shapes";
    ShapeChanged = "SHAPE_CHANGED", Warning, DIFF,
        "another non-batch dim: shape-specialising compilers recompile; error with strict shapes";
    BatchSizeNotWarmed = "BATCH_SIZE_NOT_WARMED", Warning, DIFF,
        "with batching parameters (allowed batch sizes, or a batching parameters file): production runs at a padded batch size no warm-up request of its key and shape reaches; error with strict shapes";
    BatchTooLarge = "BATCH_TOO_LARGE", Error, DIFF,
        "with batching parameters: a request larger than max_batch_size, which TF Serving refuses ('Task size 33 is larger than maximum input batch size 32'); in the warm-up it fails the model load";
    NotBatchable = "NOT_BATCHABLE", Error, DIFF,
        "with batching parameters: a request whose inputs have no common 0th dimension (a scalar input, or two row counts), which TF Serving's batching session refuses";
    WireFormatChanged = "WIRE_FORMAT_CHANGED", Warning, DIFF,
        "one is an EAS request, the other TF Serving";
    ModelNameChanged = "MODEL_NAME_CHANGED", Note, DIFF,
        "the warm-up record names another model than production's request: TF Serving runs a warm-up file's records on the model whose directory holds it, whatever model_spec.name they carry, so the match stands if the file ships with production's model";
    FetchAllResolved = "FETCH_ALL_RESOLVED", Note, DIFF,
        "what an empty output_filter fetches, from the model";
    OrderOnly = "ORDER_ONLY", Note, DIFF,
        "the same names in another order: the same executor";
    FeaturesDiffer = "FEATURES_DIFFER", Note, DIFF,
        "the features every warm-up example and every production example carry differ (tf.Example requests): the same executor; FEATURE_NOT_IN_WARMUP / FEATURE_NOT_IN_PRODUCTION say whether ParseExample minds";
    FeatureNotInWarmup = "FEATURE_NOT_IN_WARMUP", Error, DIFF,
        "every production example carries a feature some warm-up example lacks and the model requires it (dense, no default): ParseExample refuses the warm-up request, which fails the model load; a note when the model does not require it, a warning without the model's feature spec";
    FeatureNotInProduction = "FEATURE_NOT_IN_PRODUCTION", Error, DIFF,
        "every warm-up example carries a feature some production example lacks and the model requires it: ParseExample refuses the production request; a note when not required, a warning without the model's feature spec";
    ValuesDiffer = "VALUES_DIFFER", Note, DIFF,
        "the same feed with other values: no effect on executors";
    // A request against the model (analysis::check).
    UnknownTagSet = "UNKNOWN_TAG_SET", Error, CHECK,
        "the model has no meta graph with this tag";
    UnknownSignature = "UNKNOWN_SIGNATURE", Error, CHECK,
        "the model has no signature of this name";
    UnknownFeed = "UNKNOWN_FEED", Error, CHECK,
        "the request feeds a name the signature does not have";
    MissingFeed = "MISSING_FEED", Error, CHECK,
        "the signature input is not fed (a note when it has a default)";
    DtypeMismatch = "DTYPE_MISMATCH", Error, CHECK,
        "the feed's dtype is not the signature's";
    ShapeIncompatible = "SHAPE_INCOMPATIBLE", Warning, CHECK,
        "the feed's rank or a fixed dim differs from the signature's (-1 matches any size); TF Serving does not check it, so the model may still run";
    SignatureNotCallable = "SIGNATURE_NOT_CALLABLE", Error, CHECK,
        "the signature has no tensor output (Keras' __saved_model_init_op): a prediction through it fails";
    UnknownFetch = "UNKNOWN_FETCH", Error, CHECK,
        "the request fetches a name the signature does not have";
    EmptyOutputFilter = "EMPTY_OUTPUT_FILTER", Note, CHECK,
        "what an empty output_filter fetches (a warning on EAS)";
    SignatureDefaulted = "SIGNATURE_DEFAULTED", Note, DIFF_CHECK,
        "an EAS request without a signature name, taken as serving_default by diff and check alike";
    // A live service's answer against the expected one (analysis::expect), and replay.
    OutputMissing = "OUTPUT_MISSING", Error, LIVE,
        "an expected output is not in the answer";
    OutputUnexpected = "OUTPUT_UNEXPECTED", Warning, LIVE,
        "the answer has an output the expected response does not";
    OutputDtypeChanged = "OUTPUT_DTYPE_CHANGED", Error, LIVE,
        "an output's dtype is not the expected one";
    OutputShapeChanged = "OUTPUT_SHAPE_CHANGED", Error, LIVE,
        "an output's shape is not the expected one";
    OutputValuesDiffer = "OUTPUT_VALUES_DIFFER", Error, LIVE,
        "an output's values differ from the expected ones beyond the relative and absolute tolerances";
    RequestRefused = "REQUEST_REFUSED", Error, LIVE,
        "the service refused the request (status and message in the finding)";
    MeasuredCold = "MEASURED_COLD", Error, LIVE,
        "after the warm-up ran, the request's first call was much slower than its later ones: a new executor";
    MeasuredWarm = "MEASURED_WARM", Note, LIVE,
        "after the warm-up ran, the request's first call was as fast as its later ones";
}

impl Code {
    /// The stable id (`FETCH_ADDED`).
    pub const fn as_str(self) -> &'static str {
        self.rule().id
    }

    /// The code with this id.
    pub fn from_id(id: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == id)
    }

    /// A comparison only `diff` makes (not a request's own problem).
    pub fn is_diff_only(self) -> bool {
        let c = self.rule().commands;
        c.diff && !c.inspect && !c.check
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_upper_snake_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &c in Code::ALL {
            let id = c.as_str();
            assert!(seen.insert(id), "{id} twice");
            assert!(
                id.chars()
                    .all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_'),
                "{id}"
            );
            assert_eq!(Code::from_id(id), Some(c));
            assert_eq!(format!("{c:?}").len(), id.replace('_', "").len(), "{c:?}");
        }
        assert_eq!(Code::from_id("NO_SUCH_CODE"), None);
    }
}
