//! The runtime every operator shares: configuration, controllers, status, leader election.

pub mod apply;
pub mod cache;
pub mod config;
pub mod controller;
pub mod events;
pub mod http;
pub mod labels;
pub mod leader;
pub mod logging;
pub mod metrics;
pub mod runtime;
pub mod status;

/// An error with a stable CamelCase reason, used as the `reason` of `NotReady` conditions
/// and Events and as a metric label. Every error enum of the operators implements it.
pub trait ErrorReason: std::error::Error {
    /// The error's category, e.g. `InvalidConfig`.
    fn reason(&self) -> &'static str;
}
