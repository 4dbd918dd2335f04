//! Findings: what a command says about a file, a request, a pair of requests or a
//! request and a model. Detection ([`crate::formats`]) and the verdicts
//! ([`crate::analysis`]) make them, the renderers print them. Every finding has a
//! stable [`Code`] (`FETCH_ADDED`, `VALUES_REPEAT_LAST`, …) so a pipeline can match on
//! it, a severity, the name it is about, and a sentence.

mod code;

use std::fmt;

use serde::Serialize;

pub use code::{Code, Commands, Rule};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    /// Worth knowing; never fails a run.
    Note,
    /// Probably wrong; fails only under a strict flag.
    Warning,
    /// Fails the run (exit 1).
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One finding about a request, a pair of requests, or a request and a model.
///
/// ```
/// use tfreq::analysis::{Code, Finding, Severity};
/// let f = Finding::new(Code::FeedAdded, Severity::Error, "production also feeds \"k\"").name("k");
/// assert_eq!(f.code.as_str(), "FEED_ADDED");
/// assert_eq!(
///     serde_json::to_string(&f)?,
///     r#"{"code":"FEED_ADDED","severity":"error","name":"k","message":"production also feeds \"k\""}"#
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// Its rule (serialized as the stable id, `UPPER_SNAKE`).
    pub code: Code,
    /// How much it matters.
    pub severity: Severity,
    /// The feed, fetch or signature name it is about, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The value on the first side (warm-up, request), if it compares two.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left: Option<String>,
    /// The value on the second side (production, model), if it compares two.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right: Option<String>,
    /// One sentence for a person.
    pub message: String,
}

impl Finding {
    /// A finding with no name or sides.
    pub fn new(code: Code, severity: Severity, message: impl Into<String>) -> Self {
        Finding {
            code,
            severity,
            name: None,
            left: None,
            right: None,
            message: message.into(),
        }
    }

    /// Sets the name it is about.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the two sides compared.
    pub fn sides(mut self, left: Option<String>, right: Option<String>) -> Self {
        self.left = left;
        self.right = right;
        self
    }
}
