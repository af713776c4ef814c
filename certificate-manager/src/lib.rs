//! Certificate authorities and the certificates they sign for Strimzi-compatible clusters.
//!
//! Not implemented yet: this crate is filled in by the `certificate-manager` issue.
