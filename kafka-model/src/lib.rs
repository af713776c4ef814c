//! What the Kafka admin client of `strimzi-operator-common` (`kafka::AdminClient`) takes and
//! returns — topics, configs, ACLs, SCRAM credentials, quotas, the quorum, reassignments — and
//! its error, [`AdminError`], free of I/O and of the wire format's details.
//!
//! A crate of its own so that pure code deciding from Kafka's answers (the cluster model's
//! rolling decisions in `strimzi-cluster-model`) can use these types without the client, its
//! connections and its async runtime. `strimzi_operator_common::kafka` re-exports both modules
//! at their former paths.

pub mod error;
pub mod model;

pub use error::AdminError;
pub use model::*;
