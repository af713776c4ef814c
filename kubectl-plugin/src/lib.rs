//! `kubectl strimzi`: a kubectl plugin for Kafka clusters run by this operator (or Strimzi's),
//! built on the operator's own crates. `plan` computes, offline and read-only, what the cluster
//! operator would do with a changed `Kafka` or `KafkaNodePool`: the objects that change, the
//! pods that restart (in order, with the reasons the operator's Events give), what applies
//! without a restart, and what would be refused. The other commands read a cluster's state
//! (`status`, `certs`, `support-bundle`) or set Strimzi's annotations (`pause`, `resume`,
//! `roll`, `rebalance`, `certs --renew`).
//!
//! Every command uses the user's kubeconfig and credentials; only the commands that change
//! something write, and only annotations.

pub mod annotate;
pub mod bundle;
pub mod certs;
pub mod cli;
pub mod connection;
pub mod error;
pub mod operator;
pub mod options;
pub mod plan;
pub mod status;
pub mod text;

pub use error::PluginError;
