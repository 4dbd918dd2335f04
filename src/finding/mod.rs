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
    /// The option that would settle or change it, when one would; the message does not
    /// name it, so each front end words it in its own terms (the command line names
    /// its flag). Not serialized.
    #[serde(skip)]
    pub hint: Option<Hint>,
}

/// An option of the analysis that would settle a finding or change its severity,
/// named by what it does, not by how a front end spells it ([`Finding::hint`]).
///
/// ```
/// use tfreq::analysis::Hint;
/// assert_eq!(Hint::StrictShapes.to_string(), "an error with strict shapes");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Hint {
    /// A warning that strict shapes (`DiffOptions::strict_shapes`,
    /// `CheckOptions::strict_shapes`) make an error.
    StrictShapes,
    /// The model's signatures (a SavedModel, its metadata JSON or `saved_model_cli`
    /// output) would settle it.
    Model,
    /// The model's graph (a SavedModel's `saved_model.pb`, whose `ParseExample` ops
    /// hold the feature spec) would settle it.
    ModelGraph,
}

impl fmt::Display for Hint {
    /// The hint in the library's terms.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Hint::StrictShapes => "an error with strict shapes",
            Hint::Model => "the model's signatures would tell",
            Hint::ModelGraph => "the model's graph (its saved_model.pb) would tell",
        })
    }
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
            hint: None,
        }
    }

    /// Sets the option that would settle it ([`Finding::hint`]).
    pub fn hint(self, hint: Hint) -> Self {
        self.with_hint(Some(hint))
    }

    /// Sets or clears the option that would settle it ([`Finding::hint`]).
    pub fn with_hint(mut self, hint: Option<Hint>) -> Self {
        self.hint = hint;
        self
    }

    /// Puts the hint into the message in a front end's words: `word` gives the text
    /// for a hint (`None` leaves the finding as it is), which goes after the message,
    /// before a closing full stop; the hint is then cleared.
    ///
    /// ```
    /// use tfreq::analysis::{Code, Finding, Hint, Severity};
    /// let mut f = Finding::new(Code::ShapeChanged, Severity::Warning, "not warmed")
    ///     .hint(Hint::StrictShapes);
    /// f.word_hint(|h| (h == Hint::StrictShapes).then_some(" (an error with strict_shapes=True)"));
    /// assert_eq!(f.message, "not warmed (an error with strict_shapes=True)");
    /// assert_eq!(f.hint, None);
    /// ```
    pub fn word_hint(&mut self, word: impl Fn(Hint) -> Option<&'static str>) {
        let Some(text) = self.hint.and_then(word) else {
            return;
        };
        self.hint = None;
        self.message = match self.message.strip_suffix('.') {
            Some(m) => format!("{m}{text}."),
            None => format!("{}{text}", self.message),
        };
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
