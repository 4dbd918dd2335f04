//! human
