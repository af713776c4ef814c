//! Rust types for Strimzi's custom resources, `kafka.strimzi.io/v1` and `core.strimzi.io/v1`
//! as in Strimzi 1.2, usable without a Kubernetes client.
//!
//! - One module per kind: [`kafka`], [`node_pool`], [`topic`], [`user`], [`connect`],
//!   [`connector`], [`mirror_maker2`], [`bridge`], [`rebalance`], [`pod_set`]; what several
//!   kinds embed (templates, logging, metrics, client authentication, ...) is in [`common`].
//!   Every JSON field of Strimzi's CRDs is here under the same name, with its type, enum values,
//!   required-ness and bounds; the schemas derived from these types become our CRDs.
//! - `type`-discriminated choices (listener authentication, storage, logging, ...) are enums
//!   declared with [`tagged_union!`]: `match` on them in Rust, same JSON on the wire.
//! - [`document`] reads YAML or JSON with errors that name the failing field's path and lists
//!   fields a document has that the types do not know; [`resource`] picks the kind of a
//!   document by its `apiVersion` and `kind`.
//! - [`labels`], [`annotations`], [`conditions`] and [`naming`] hold the names Strimzi users and
//!   tools rely on: label and annotation keys, condition types and reasons, and the names of
//!   the objects an operator creates, such as `<cluster>-kafka-bootstrap`.
//! - [`selectors`] builds the labels and owner references of the objects an operator creates
//!   (and the selectors that find them); [`redact`] keeps secrets out of what is printed. Both
//!   are shared by the operators and their pure model.
//!
//! # Example
//!
//! A Kafka cluster with a controller pool and a broker pool, printed as YAML (this is
//! `cargo run -p strimzi-api --example kafka_with_node_pools`):
//!
#![doc = concat!("```rust\n", include_str!("../examples/kafka_with_node_pools.rs"), "\n```")]

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
pub mod finalizers;
pub mod labels;
pub mod naming;
pub mod redact;
pub mod resource;
pub mod selectors;

/// The version of this workspace (`[workspace.package]` in its `Cargo.toml`), which every
/// crate and binary of it shares: what `--version` and the operators' first log line state.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Our operator image as the `Dockerfile` at the workspace root builds it and the install
/// bundles name it: the repository users tag it with when they build it themselves, and
/// [`VERSION`]. It holds the three operators and the Kafka init program.
pub const OPERATOR_IMAGE: &str =
    concat!("localhost/strimzi-rs/operator:", env!("CARGO_PKG_VERSION"));

#[cfg(test)]
mod test_support;
