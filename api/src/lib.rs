//! Rust types for Strimzi's custom resources (`kafka.strimzi.io/v1` and `core.strimzi.io/v1`,
//! as in Strimzi 1.2), usable without a Kubernetes client.

pub mod common;
pub mod document;
pub mod schema;
pub mod union;

pub mod bridge;
pub mod connect;
pub mod connector;
pub mod kafka;
pub mod mirror_maker2;
pub mod node_pool;
pub mod pod_set;
pub mod rebalance;
pub mod storage;
pub mod topic;
pub mod user;

pub mod annotations;
pub mod conditions;
pub mod labels;
pub mod naming;
pub mod resource;

#[cfg(test)]
mod test_support;
