//! How a Kafka client such as Connect, MirrorMaker 2 or the Bridge authenticates to brokers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::secrets::{CertAndKeySecretSource, PasswordSecretSource};
use crate::schema::FreeFormMap;

/// Mutual TLS with a client certificate.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaClientAuthenticationTls {
    /// The client certificate and its key. Needed for this authentication type.
    pub certificate_and_key: Option<CertAndKeySecretSource>,
}

/// SASL authentication with a user name and a password from a Secret; used by the
/// `scram-sha-256`, `scram-sha-512` and `plain` mechanisms alike.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaClientAuthenticationPassword {
    /// User name to log in with.
    pub username: Option<String>,
    /// Secret key holding the password.
    pub password_secret: Option<PasswordSecretSource>,
}

/// Authentication set up entirely through client configuration options.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaClientAuthenticationCustom {
    /// Whether the mechanism is SASL (otherwise it is TLS-based). Defaults to false.
    pub sasl: Option<bool>,
    /// Client configuration options that implement the authentication.
    pub config: Option<FreeFormMap>,
}

crate::tagged_union! {
    /// How a Kafka client proves its identity to the brokers.
    pub enum KafkaClientAuthentication {
        /// Mutual TLS.
        Tls("tls") => KafkaClientAuthenticationTls,
        /// SASL SCRAM-SHA-256.
        ScramSha256("scram-sha-256") => KafkaClientAuthenticationPassword,
        /// SASL SCRAM-SHA-512.
        ScramSha512("scram-sha-512") => KafkaClientAuthenticationPassword,
        /// SASL PLAIN.
        Plain("plain") => KafkaClientAuthenticationPassword,
        /// Custom mechanism configured by options.
        Custom("custom") => KafkaClientAuthenticationCustom,
    }
}
