//! The bootstrap and headless brokers Services and the per-listener Services. Owner: listeners
//! and services.
