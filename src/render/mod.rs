//! Rendering: the decoded model (or, for text format, the wire message) to what a
//! person or a program reads. Renderers never decode request semantics themselves.

pub mod escape;
pub mod human;
pub mod json;
pub mod pyfloat;
pub mod report;
pub mod signature;
pub mod text;
