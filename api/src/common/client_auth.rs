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

/// SASL SCRAM-SHA-256 with a user name and a password from a Secret.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaClientAuthenticationScramSha256 {
    /// User name to log in with.
    pub username: Option<String>,
    /// Secret key holding the password.
    pub password_secret: Option<PasswordSecretSource>,
}

/// SASL SCRAM-SHA-512 with a user name and a password from a Secret.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaClientAuthenticationScramSha512 {
    /// User name to log in with.
    pub username: Option<String>,
    /// Secret key holding the password.
    pub password_secret: Option<PasswordSecretSource>,
}

/// SASL PLAIN with a user name and a password from a Secret.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaClientAuthenticationPlain {
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
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub config: Option<FreeFormMap>,
}

crate::tagged_union! {
    /// How a Kafka client proves its identity to the brokers.
    pub enum KafkaClientAuthentication {
        /// Mutual TLS.
        Tls("tls") => KafkaClientAuthenticationTls,
        /// SASL SCRAM-SHA-256.
        ScramSha256("scram-sha-256") => KafkaClientAuthenticationScramSha256,
        /// SASL SCRAM-SHA-512.
        ScramSha512("scram-sha-512") => KafkaClientAuthenticationScramSha512,
        /// SASL PLAIN.
        Plain("plain") => KafkaClientAuthenticationPlain,
        /// Custom mechanism configured by options.
        Custom("custom") => KafkaClientAuthenticationCustom,
    }
}
