//! A Kafka admin client in pure Rust on the `kafka-protocol` crate: topics, configs, ACLs,
//! SCRAM credentials, quotas, cluster, quorum and feature state, partition reassignments, replica
//! sizes in the log directories.
//!
//! [`AdminClient`] implements [`KafkaAdmin`]. It keeps one connection per broker (TLS with
//! rustls and SASL PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER as configured), negotiates the highest API version
//! both sides support, discovers brokers from metadata, sends each request where Kafka wants
//! it (any broker, the controller, or one broker for its own configs) and retries retriable
//! failures with backoff until the operation timeout. Configure it from Strimzi's
//! environment variables with [`AdminConfig::from_env`] (see [`config`]).

pub mod agent;
pub mod client;
pub mod config;
mod connection;
pub mod custom_sasl;
mod env;
/// The admin client's errors (in `strimzi-kafka-model`, which the pure cluster model uses too).
pub use strimzi_kafka_model::error;
mod jks;
/// The data the admin operations take and return (in `strimzi-kafka-model`).
pub use strimzi_kafka_model::model;
pub mod oauth;
mod operations;
pub mod scram;
mod stores;
pub(crate) mod tls;

pub use client::{AdminClient, KafkaAdmin};
pub use config::{
    AdminConfig, ClientCredentialsGrant, HostResolution, OAuthBearerConfig, SaslConfig,
    SaslCredentials, SaslMechanism, SecurityProtocol, TlsConfig, TokenEndpoint,
};
pub use error::AdminError;
pub use model::*;
