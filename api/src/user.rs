//! `KafkaUser`: a Kafka user with its credentials, ACLs and quotas, managed by the User
//! Operator.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{Condition, PasswordSource, ResourceTemplate};

/// Mutual TLS with a client certificate issued by the User Operator from the clients CA.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaUserTlsClientAuthentication {
    /// How many days the user certificate is valid. Set together with `renewalDays`; when
    /// both are unset the clients CA settings apply.
    #[schemars(range(min = 1))]
    pub validity_days: Option<i32>,
    /// How many days before expiry the user certificate is renewed. Must be less than
    /// `validityDays` and set together with it.
    #[schemars(range(min = 1))]
    pub renewal_days: Option<i32>,
}

/// Mutual TLS with a certificate issued outside the User Operator; no Secret is created and
/// the user's name in ACLs and quotas is `CN=<username>`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KafkaUserTlsExternalClientAuthentication {}

/// SASL SCRAM-SHA-512 with a password kept in a Secret.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaUserScramSha512ClientAuthentication {
    /// A password chosen by the user; when unset the User Operator generates one.
    pub password: Option<PasswordSource>,
}

crate::tagged_union! {
    /// How the user proves its identity to Kafka. Without it no credentials are created.
    pub enum KafkaUserAuthentication {
        /// Client certificate issued by the User Operator.
        Tls("tls") => KafkaUserTlsClientAuthentication,
        /// Client certificate issued elsewhere.
        TlsExternal("tls-external") => KafkaUserTlsExternalClientAuthentication,
        /// SCRAM-SHA-512 password.
        ScramSha512("scram-sha-512") => KafkaUserScramSha512ClientAuthentication,
    }
}

/// Whether an ACL rule grants or refuses its operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum AclRuleType {
    /// Grants the operations.
    #[serde(rename = "allow")]
    Allow,
    /// Refuses the operations.
    #[serde(rename = "deny")]
    Deny,
}

/// How a resource name in an ACL rule is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum AclResourcePatternType {
    /// The name must match exactly (`*` matches every name).
    #[serde(rename = "literal")]
    Literal,
    /// The name is a prefix of the matching names.
    #[serde(rename = "prefix")]
    Prefix,
}

/// A Kafka operation an ACL rule can cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum AclOperation {
    /// Read, for example consume from a topic.
    Read,
    /// Write, for example produce to a topic.
    Write,
    /// Create, for example a topic.
    Create,
    /// Delete, for example a topic.
    Delete,
    /// Alter, for example a topic's partitions.
    Alter,
    /// Describe, for example a topic or group.
    Describe,
    /// Inter-broker cluster actions.
    ClusterAction,
    /// Change configurations.
    AlterConfigs,
    /// Read configurations.
    DescribeConfigs,
    /// Produce idempotently.
    IdempotentWrite,
    /// Every operation.
    All,
}

/// A topic, or topics matched by name.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AclRuleTopicResource {
    /// Topic name, or prefix when `patternType` is `prefix`.
    pub name: Option<String>,
    /// How `name` is matched. Defaults to `literal`.
    pub pattern_type: Option<AclResourcePatternType>,
}

/// A consumer group, or groups matched by name.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AclRuleGroupResource {
    /// Group name, or prefix when `patternType` is `prefix`.
    pub name: Option<String>,
    /// How `name` is matched. Defaults to `literal`.
    pub pattern_type: Option<AclResourcePatternType>,
}

/// The Kafka cluster itself.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AclRuleClusterResource {
    /// The cluster has no name. Kept when a rule sets one anyway, so that the User Operator
    /// refuses the rule instead of granting its operations on the whole cluster.
    pub name: Option<String>,
}

/// A transactional ID, or IDs matched by name.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AclRuleTransactionalIdResource {
    /// Transactional ID, or prefix when `patternType` is `prefix`.
    pub name: Option<String>,
    /// How `name` is matched. Defaults to `literal`.
    pub pattern_type: Option<AclResourcePatternType>,
}

crate::tagged_union! {
    /// The Kafka resource an ACL rule is about.
    pub enum AclRuleResource {
        /// Topics.
        Topic("topic") => AclRuleTopicResource,
        /// Consumer groups.
        Group("group") => AclRuleGroupResource,
        /// The cluster.
        Cluster("cluster") => AclRuleClusterResource,
        /// Transactional IDs.
        TransactionalId("transactionalId") => AclRuleTransactionalIdResource,
    }
}

impl AclRuleResource {
    /// The resource name or prefix; `None` for the cluster.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::Topic(resource) => resource.name.as_deref(),
            Self::Group(resource) => resource.name.as_deref(),
            Self::Cluster(_) => None,
            Self::TransactionalId(resource) => resource.name.as_deref(),
        }
    }

    /// How the name is matched, `literal` when unset; `None` for the cluster.
    pub fn pattern_type(&self) -> Option<AclResourcePatternType> {
        let pattern_type = match self {
            Self::Topic(resource) => resource.pattern_type,
            Self::Group(resource) => resource.pattern_type,
            Self::Cluster(_) => return None,
            Self::TransactionalId(resource) => resource.pattern_type,
        };
        Some(pattern_type.unwrap_or(AclResourcePatternType::Literal))
    }
}

/// One ACL rule of a user.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AclRule {
    /// Whether the rule allows or denies. Defaults to `allow`.
    pub r#type: Option<AclRuleType>,
    /// What the rule applies to.
    pub resource: AclRuleResource,
    /// Host the rule applies to. Defaults to `*`, every host.
    pub host: Option<String>,
    /// The operations allowed or denied.
    pub operations: Vec<AclOperation>,
}

/// ACLs managed through Kafka's Admin API.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaUserAuthorizationSimple {
    /// The user's ACL rules.
    pub acls: Vec<AclRule>,
}

crate::tagged_union! {
    /// What the user may do in Kafka.
    pub enum KafkaUserAuthorization {
        /// ACL rules kept in Kafka.
        Simple("simple") => KafkaUserAuthorizationSimple,
    }
}

/// Limits on the broker resources the user's clients may consume, enforced per broker.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaUserQuotas {
    /// Bytes per second the user's clients may produce to one broker before being throttled.
    #[schemars(range(min = 0))]
    pub producer_byte_rate: Option<i64>,
    /// Bytes per second the user's clients may fetch from one broker before being throttled.
    #[schemars(range(min = 0))]
    pub consumer_byte_rate: Option<i64>,
    /// Share of the broker's network and I/O threads the user's clients may occupy, in percent.
    #[schemars(range(min = 0))]
    pub request_percentage: Option<i32>,
    /// Partitions per second the user may create or delete through topic and partition
    /// requests. Kept as written (`10` stays `10`, not `10.0`).
    #[schemars(range(min = 0))]
    pub controller_mutation_rate: Option<serde_json::Number>,
}

/// Customisation of the resources the User Operator creates for a user.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaUserTemplate {
    /// Labels and annotations of the Secret holding the user's credentials.
    pub secret: Option<ResourceTemplate>,
}

/// The desired state of a Kafka user.
#[skip_serializing_none]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    kind = "KafkaUser",
    namespaced,
    status = "KafkaUserStatus",
    shortname = "ku",
    category = "strimzi",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct KafkaUserSpec {
    /// How the user authenticates.
    pub authentication: Option<KafkaUserAuthentication>,
    /// What the user is allowed to do.
    pub authorization: Option<KafkaUserAuthorization>,
    /// Limits on the user's use of the brokers.
    pub quotas: Option<KafkaUserQuotas>,
    /// Customisation of the generated Secret.
    pub template: Option<KafkaUserTemplate>,
}

/// The observed state of a Kafka user.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaUserStatus {
    /// The operator's latest observations, such as `Ready`.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// The user name in Kafka, for example `CN=<name>` for TLS users.
    pub username: Option<String>,
    /// Name of the Secret holding the user's credentials.
    pub secret: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DocumentError, from_value};
    use serde_json::json;

    fn document() -> serde_json::Value {
        json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaUser",
            "metadata": {"name": "my-user"},
            "spec": {
                "authentication": {"type": "tls", "validityDays": 365, "renewalDays": 30},
                "authorization": {
                    "type": "simple",
                    "acls": [
                        {"resource": {"type": "topic", "name": "my-", "patternType": "prefix"},
                         "operations": ["Read", "Describe", "Write", "Create"], "host": "*"},
                        {"type": "deny", "resource": {"type": "group", "name": "g"},
                         "operations": ["Read"]},
                        {"type": "allow", "resource": {"type": "cluster"},
                         "operations": ["ClusterAction", "AlterConfigs", "DescribeConfigs",
                                        "IdempotentWrite", "Alter", "Delete", "All"]},
                        {"resource": {"type": "transactionalId", "name": "tx",
                                      "patternType": "literal"},
                         "operations": ["Write"]}
                    ]
                },
                "quotas": {
                    "producerByteRate": 1_048_576,
                    "consumerByteRate": 2_097_152,
                    "requestPercentage": 55,
                    "controllerMutationRate": 10.5
                },
                "template": {"secret": {"metadata": {"labels": {"a": "b"}}}}
            },
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "observedGeneration": 1,
                "username": "CN=my-user",
                "secret": "my-user"
            }
        })
    }

    #[test]
    fn round_trips() {
        let user: KafkaUser = from_value(document()).unwrap();
        let Some(KafkaUserAuthorization::Simple(simple)) = &user.spec.authorization else {
            panic!("expected simple authorization");
        };
        assert_eq!(simple.acls[0].resource.name(), Some("my-"));
        assert_eq!(
            simple.acls[1].resource.pattern_type(),
            Some(AclResourcePatternType::Literal)
        );
        assert_eq!(simple.acls[2].resource.pattern_type(), None);
        assert_eq!(serde_json::to_value(&user).unwrap(), document());
    }

    #[test]
    fn numbers_come_back_as_written() {
        for written in [json!(10), json!(10.5), json!(0.25)] {
            let quotas: KafkaUserQuotas =
                from_value(json!({"controllerMutationRate": written.clone()})).unwrap();
            assert_eq!(
                serde_json::to_value(&quotas).unwrap()["controllerMutationRate"],
                written
            );
        }
        let plugin: crate::kafka::QuotasPluginStrimzi =
            from_value(json!({"minAvailableRatioPerVolume": 1})).unwrap();
        assert_eq!(
            serde_json::to_value(&plugin).unwrap(),
            json!({"minAvailableRatioPerVolume": 1})
        );
    }

    #[test]
    fn other_authentications_round_trip() {
        for document in [
            json!({"type": "tls-external"}),
            json!({"type": "scram-sha-512"}),
            json!({"type": "scram-sha-512",
                   "password": {"valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}}),
        ] {
            let parsed: KafkaUserAuthentication = from_value(document.clone()).unwrap();
            assert_eq!(serde_json::to_value(&parsed).unwrap(), document);
        }
    }

    #[test]
    fn wrong_values_name_the_field() {
        let error = from_value::<KafkaUserSpec>(json!({"authentication": {"type": "plain"}}))
            .expect_err("unknown authentication");
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "authentication");

        let error = from_value::<KafkaUserSpec>(json!({"authorization": {
            "type": "simple",
            "acls": [{"resource": {"type": "topic"}, "operations": ["Fly"]}]
        }}))
        .expect_err("unknown operation");
        assert!(
            error.to_string().contains("acls[0].operations[0]"),
            "{error}"
        );
    }

    #[test]
    fn schema_has_bounds() {
        let schema = serde_json::to_value(schemars::schema_for!(KafkaUserQuotas)).unwrap();
        assert_eq!(schema["properties"]["controllerMutationRate"]["minimum"], 0);
        let schema = serde_json::to_value(schemars::schema_for!(KafkaUserAuthentication)).unwrap();
        assert_eq!(schema["properties"]["renewalDays"]["minimum"], 1);
        assert_eq!(
            schema["properties"]["type"]["enum"],
            json!(["tls", "tls-external", "scram-sha-512"])
        );
    }
}
