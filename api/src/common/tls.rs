//! TLS settings of a Kafka client such as Connect or the Bridge.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::secrets::CertSecretSource;

/// Turns on TLS towards Kafka and lists the certificates to trust.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientTls {
    /// Certificates trusted when checking the brokers' identity.
    pub trusted_certificates: Option<Vec<CertSecretSource>>,
}
