//! Local test environment: a real Kubernetes control plane and a real Kafka broker.
//!
//! Not implemented yet: this crate is filled in by the `tests` issue.
