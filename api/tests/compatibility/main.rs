//! Compatibility tests of the `api` crate: Strimzi's reference examples, our own examples and
//! invalid documents.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod invalid_documents;
mod own_examples;
mod reference_examples;
mod support;
