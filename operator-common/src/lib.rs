//! The runtime every operator shares: configuration, controllers, status, leader election.

pub mod apply;
pub mod config;
pub mod events;
pub mod http;
pub mod labels;
pub mod leader;
pub mod logging;
pub mod metrics;
pub mod status;
