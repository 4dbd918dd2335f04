//! Rendering: the decoded model (or, for text format, the wire message) to what a
//! person or a program reads. Renderers never decode request semantics themselves.

pub(crate) mod escape;
pub mod human;
pub mod json;
pub mod report;
pub mod signature;
pub mod text;

/// Python's float text, which the model's `Display` uses too (it lives below the model).
pub(crate) use crate::pyfloat;

/// `1 error`, `2 errors`, `12,345 requests`: a count with its noun, grammatical, with
/// digit groups.
///
/// ```
/// assert_eq!(tfreq::render::plural(1, "error"), "1 error");
/// assert_eq!(tfreq::render::plural(12345, "request"), "12,345 requests");
/// ```
pub fn plural(n: u64, what: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {what}{s}", crate::digits::group_digits(n))
}
