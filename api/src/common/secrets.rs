//! References to certificates, keys and passwords stored in Secrets.

use k8s_openapi::api::core::v1::SecretKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// Trusted certificates in a Secret, picked by one key or by a glob over the keys.
///
/// Exactly one of `certificate` and `pattern` must be set.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("oneOf" = [{"required": ["certificate"]}, {"required": ["pattern"]}]))]
pub struct CertSecretSource {
    /// Name of the Secret.
    pub secret_name: String,
    /// Key of the Secret holding one certificate.
    pub certificate: Option<String>,
    /// Glob such as `*.crt`; every matching key of the Secret is trusted.
    pub pattern: Option<String>,
}

/// A certificate and its private key, both in one Secret.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CertAndKeySecretSource {
    /// Name of the Secret.
    pub secret_name: String,
    /// Key of the Secret holding the certificate.
    pub certificate: String,
    /// Key of the Secret holding the private key.
    pub key: String,
}

/// A password kept under one key of a Secret.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordSecretSource {
    /// Name of the Secret.
    pub secret_name: String,
    /// Key of the Secret holding the password.
    pub password: String,
}

/// A password given by reference to a Secret key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordSource {
    /// Where the password is read from.
    pub value_from: PasswordValueSource,
}

/// The Secret key a [`PasswordSource`] reads.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordValueSource {
    /// Secret name and key.
    pub secret_key_ref: Option<SecretKeySelector>,
}
