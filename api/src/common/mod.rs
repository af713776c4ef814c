//! Types shared by several custom resources: status conditions, probes, JVM options, logging,
//! metrics, templates, secret references, client authentication and TLS, tracing, rack.

pub mod status;

pub use status::Condition;
