//! The runtime every operator shares: configuration, controllers, status, leader election.
//!
//! Not implemented yet: this crate is filled in by the `operator-common` issue.

pub mod kafka;
