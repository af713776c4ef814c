//! Authorization of client requests by the Kafka brokers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::tagged_union;

/// Kafka's built-in ACL authorizer, with ACLs managed through `KafkaUser` resources.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaAuthorizationSimple {
    /// Principals that bypass every ACL check.
    pub super_users: Option<Vec<String>>,
}

/// An authorizer class supplied by the user, which must be on the brokers' class path.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaAuthorizationCustom {
    /// Fully qualified name of the authorizer class.
    pub authorizer_class: Option<String>,
    /// Principals that bypass every authorization check.
    pub super_users: Option<Vec<String>>,
    /// Whether the authorizer implements the Kafka Admin API for managing ACLs.
    /// Defaults to `false`.
    pub supports_admin_api: Option<bool>,
}

tagged_union! {
    /// Which authorizer the brokers use.
    pub enum KafkaAuthorization {
        /// Kafka's built-in ACL authorizer.
        Simple("simple") => KafkaAuthorizationSimple,
        /// A user-supplied authorizer class.
        Custom("custom") => KafkaAuthorizationCustom,
    }
}

impl KafkaAuthorization {
    /// The configured super users, whatever the authorizer.
    pub fn super_users(&self) -> &[String] {
        let users = match self {
            Self::Simple(simple) => &simple.super_users,
            Self::Custom(custom) => &custom.super_users,
        };
        users.as_deref().unwrap_or_default()
    }
}
