//! Pure logic of the user operator: what a KafkaUser asks for (its Kafka user names, ACL
//! bindings, quotas and credentials), what must change in Kafka to get there, and the Secret
//! that holds the user's credentials. Nothing here talks to Kafka or Kubernetes.
//!
//! Names follow Strimzi: a user with `tls` or `tls-external` authentication is `CN=<name>` in
//! Kafka, any other user is `<name>`. The operator keeps both names in line for every
//! KafkaUser: the one in use gets the ACLs and quotas of the spec, the other none.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use rand::Rng;
use strimzi_api::labels;
use strimzi_api::user::{
    AclOperation as SpecOperation, AclResourcePatternType, AclRule, AclRuleResource, AclRuleType,
    KafkaUser, KafkaUserAuthentication, KafkaUserAuthorization, KafkaUserQuotas,
};
use strimzi_operator_common::kafka::{
    AclBinding, AclOperation, AclPermission, AclResourceType, PatternType,
};

use crate::error::UserError;

/// The operator's name in labels (`app.kubernetes.io/name`, `app.kubernetes.io/managed-by`).
pub const OPERATOR_NAME: &str = "strimzi-user-operator";
/// The kind whose Secrets carry `strimzi.io/kind`.
pub const KIND: &str = "KafkaUser";
/// Longest common name of a certificate, and so of a `tls` user's name.
pub const MAX_COMMON_NAME_LENGTH: usize = 64;
/// Longest name of a Secret.
pub const MAX_SECRET_NAME_LENGTH: usize = 253;
/// The resource name Kafka gives the cluster in ACLs.
pub const CLUSTER_RESOURCE_NAME: &str = "kafka-cluster";
/// Secret data key of a SCRAM user's password.
pub const PASSWORD_KEY: &str = "password";
/// Secret data key of a SCRAM user's JAAS configuration.
pub const SASL_JAAS_CONFIG_KEY: &str = "sasl.jaas.config";
/// Secret data key of the clients CA certificate in a `tls` user's Secret.
pub const CA_CERT_KEY: &str = "ca.crt";
/// Kafka's quota keys, in the order of [`KafkaUserQuotas`]' fields.
pub const QUOTA_KEYS: [&str; 4] = [
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
];

/// The Kafka name of a user with certificate authentication.
pub fn tls_user_name(name: &str) -> String {
    format!("CN={name}")
}

/// Why the KafkaUser `name` is not reconciled while the KafkaUser `owner` (Strimzi's
/// `Ref{namespace='…', name='…'}`) of the same name in another namespace owns the Kafka user.
pub fn conflict_message(name: &str, owner: &str) -> String {
    format!(
        "Kafka user {name} (and CN={name}) is managed by {owner}; no certificate, password, ACL or quota is written for this KafkaUser"
    )
}

/// The KafkaUser name of a Kafka user name: the common name of `CN=...` names (the first
/// `CN` of a distinguished name), the name itself otherwise.
pub fn decode_user_name(kafka_name: &str) -> String {
    kafka_name
        .split(',')
        .map(str::trim)
        .find_map(|part| {
            let (key, value) = part.split_once('=')?;
            key.trim().eq_ignore_ascii_case("CN").then(|| value.trim())
        })
        .filter(|_| kafka_name.contains('='))
        .unwrap_or(kafka_name)
        .to_owned()
}

/// The ACL principal of a Kafka user name.
pub fn principal(kafka_name: &str) -> String {
    format!("User:{kafka_name}")
}

/// The Kafka user name of an ACL principal of type `User`, `None` for other types.
pub fn kafka_name_of_principal(principal: &str) -> Option<&str> {
    principal.strip_prefix("User:")
}

/// How the user authenticates, as the operator handles it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credentials {
    /// A certificate issued from the clients CA, kept in the user's Secret.
    Tls {
        /// Validity in days, overriding the operator's setting.
        validity_days: Option<u32>,
        /// Renewal period in days, overriding the operator's setting.
        renewal_days: Option<u32>,
    },
    /// A certificate issued elsewhere: no Secret.
    TlsExternal,
    /// A SCRAM-SHA-512 password, generated or read from `(secret, key)`.
    Scram {
        /// The Secret and data key holding the password the user chose.
        chosen: Option<(String, String)>,
    },
    /// No credentials; ACLs and quotas still apply.
    None,
}

/// Everything a KafkaUser asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct DesiredUser {
    /// Namespace of the KafkaUser.
    pub namespace: String,
    /// Name of the KafkaUser.
    pub name: String,
    /// Authentication.
    pub credentials: Credentials,
    /// ACL bindings of the Kafka user name in use; `None` when the operator may not manage
    /// ACLs (`STRIMZI_ACLS_ADMIN_API_SUPPORTED=false`).
    pub acls: Option<BTreeSet<AclBinding>>,
    /// Quota key to value for the Kafka user name in use.
    pub quotas: BTreeMap<String, f64>,
    /// Name of the user's Secret.
    pub secret_name: String,
}

impl DesiredUser {
    /// What `user` asks for, with Secrets named `<secret_prefix><name>`; refuses what cannot
    /// be done with [`UserError::InvalidResource`].
    pub fn of(
        user: &KafkaUser,
        secret_prefix: &str,
        acls_supported: bool,
    ) -> Result<Self, UserError> {
        let name = user.name_any();
        let credentials = credentials(&name, user.spec.authentication.as_ref())?;
        let secret_name = format!("{secret_prefix}{name}");
        if secret_name.len() > MAX_SECRET_NAME_LENGTH {
            return Err(UserError::InvalidResource(format!(
                "The Secret name {secret_name:?} (STRIMZI_SECRET_PREFIX followed by the KafkaUser name) is longer than {MAX_SECRET_NAME_LENGTH} characters; use a shorter KafkaUser name"
            )));
        }
        let kafka_name = match credentials {
            Credentials::Tls { .. } | Credentials::TlsExternal => tls_user_name(&name),
            Credentials::Scram { .. } | Credentials::None => name.clone(),
        };
        let acls = match (&user.spec.authorization, acls_supported) {
            (Some(KafkaUserAuthorization::Simple(_)), false) => {
                return Err(UserError::InvalidResource(
                    "spec.authorization sets simple ACL rules, but STRIMZI_ACLS_ADMIN_API_SUPPORTED=false says the Kafka cluster's ACLs are not managed through the Admin API".to_owned(),
                ));
            }
            (_, false) => None,
            (Some(KafkaUserAuthorization::Simple(simple)), true) => {
                Some(acl_bindings(&principal(&kafka_name), &simple.acls)?)
            }
            (None, true) => Some(BTreeSet::new()),
        };
        Ok(Self {
            namespace: user.namespace().unwrap_or_default(),
            name,
            credentials,
            acls,
            quotas: quotas(user.spec.quotas.as_ref()),
            secret_name,
        })
    }

    /// The Kafka user name in use: `CN=<name>` for certificate users, `<name>` otherwise.
    pub fn kafka_name(&self) -> String {
        match self.credentials {
            Credentials::Tls { .. } | Credentials::TlsExternal => tls_user_name(&self.name),
            Credentials::Scram { .. } | Credentials::None => self.name.clone(),
        }
    }

    /// The Kafka user name not in use, which must have no ACLs or quotas.
    pub fn unused_kafka_name(&self) -> String {
        match self.credentials {
            Credentials::Tls { .. } | Credentials::TlsExternal => self.name.clone(),
            Credentials::Scram { .. } | Credentials::None => tls_user_name(&self.name),
        }
    }

    /// Whether the user has a Secret (`tls` and `scram-sha-512` users).
    pub fn has_secret(&self) -> bool {
        matches!(
            self.credentials,
            Credentials::Tls { .. } | Credentials::Scram { .. }
        )
    }
}

fn credentials(
    name: &str,
    authentication: Option<&KafkaUserAuthentication>,
) -> Result<Credentials, UserError> {
    let days = |value: Option<i32>| value.and_then(|days| u32::try_from(days).ok());
    Ok(match authentication {
        None => Credentials::None,
        Some(KafkaUserAuthentication::Tls(tls)) => {
            if name.len() > MAX_COMMON_NAME_LENGTH {
                return Err(UserError::InvalidResource(format!(
                    "A KafkaUser with tls authentication becomes the common name of a certificate, which is at most {MAX_COMMON_NAME_LENGTH} characters; {name:?} has {}",
                    name.len()
                )));
            }
            if tls.validity_days.is_some() != tls.renewal_days.is_some() {
                return Err(UserError::InvalidResource(
                    "spec.authentication.validityDays and renewalDays must be set together"
                        .to_owned(),
                ));
            }
            if let (Some(validity), Some(renewal)) = (tls.validity_days, tls.renewal_days)
                && renewal >= validity
            {
                return Err(UserError::InvalidResource(format!(
                    "spec.authentication.renewalDays ({renewal}) must be less than validityDays ({validity})"
                )));
            }
            Credentials::Tls {
                validity_days: days(tls.validity_days),
                renewal_days: days(tls.renewal_days),
            }
        }
        Some(KafkaUserAuthentication::TlsExternal(_)) => Credentials::TlsExternal,
        Some(KafkaUserAuthentication::ScramSha512(scram)) => {
            let chosen = match &scram.password {
                None => None,
                Some(source) => {
                    let selector = source.value_from.secret_key_ref.as_ref();
                    match selector {
                        Some(selector) if !selector.name.is_empty() && !selector.key.is_empty() => {
                            Some((selector.name.clone(), selector.key.clone()))
                        }
                        _ => {
                            return Err(UserError::InvalidResource(
                                "spec.authentication.password must name a Secret and a key in valueFrom.secretKeyRef".to_owned(),
                            ));
                        }
                    }
                }
            };
            Credentials::Scram { chosen }
        }
    })
}

fn quotas(spec: Option<&KafkaUserQuotas>) -> BTreeMap<String, f64> {
    let Some(spec) = spec else {
        return BTreeMap::new();
    };
    #[allow(clippy::cast_precision_loss)]
    let values = [
        spec.producer_byte_rate.map(|value| value as f64),
        spec.consumer_byte_rate.map(|value| value as f64),
        spec.request_percentage.map(f64::from),
        spec.controller_mutation_rate
            .as_ref()
            .and_then(serde_json::Number::as_f64),
    ];
    QUOTA_KEYS
        .iter()
        .zip(values)
        .filter_map(|(key, value)| value.map(|value| ((*key).to_owned(), value)))
        .collect()
}

/// The ACL bindings of `rules` for `principal`: one per rule and operation. A rule without
/// operations, a topic, group or transactional ID rule without a name, and a cluster rule
/// with one are refused, naming the rule.
pub fn acl_bindings(principal: &str, rules: &[AclRule]) -> Result<BTreeSet<AclBinding>, UserError> {
    let mut bindings = BTreeSet::new();
    for (index, rule) in rules.iter().enumerate() {
        let invalid = |why: &str| {
            UserError::InvalidResource(format!(
                "spec.authorization.acls[{index}] is invalid: {why}"
            ))
        };
        let (resource_type, resource_name, pattern_type) = match &rule.resource {
            AclRuleResource::Cluster(cluster) => {
                if let Some(name) = &cluster.name {
                    return Err(invalid(&format!(
                        "a cluster resource has no name, but the rule names {name:?}; use a topic, group or transactionalId resource for it"
                    )));
                }
                (
                    AclResourceType::Cluster,
                    CLUSTER_RESOURCE_NAME.to_owned(),
                    PatternType::Literal,
                )
            }
            named => {
                let resource_type = match named {
                    AclRuleResource::Topic(_) => AclResourceType::Topic,
                    AclRuleResource::Group(_) => AclResourceType::Group,
                    _ => AclResourceType::TransactionalId,
                };
                let name = named
                    .name()
                    .filter(|name| !name.is_empty())
                    .ok_or_else(|| {
                        invalid("a topic, group or transactionalId resource needs a name")
                    })?;
                let pattern_type = match named.pattern_type() {
                    Some(AclResourcePatternType::Prefix) => PatternType::Prefixed,
                    _ => PatternType::Literal,
                };
                (resource_type, name.to_owned(), pattern_type)
            }
        };
        if rule.operations.is_empty() {
            return Err(invalid("it lists no operations"));
        }
        let permission = match rule.r#type {
            Some(AclRuleType::Deny) => AclPermission::Deny,
            _ => AclPermission::Allow,
        };
        for operation in &rule.operations {
            bindings.insert(AclBinding {
                resource_type,
                resource_name: resource_name.clone(),
                pattern_type,
                principal: principal.to_owned(),
                host: rule.host.clone().unwrap_or_else(|| "*".to_owned()),
                operation: operation_of(*operation),
                permission,
            });
        }
    }
    Ok(bindings)
}

fn operation_of(operation: SpecOperation) -> AclOperation {
    match operation {
        SpecOperation::Read => AclOperation::Read,
        SpecOperation::Write => AclOperation::Write,
        SpecOperation::Create => AclOperation::Create,
        SpecOperation::Delete => AclOperation::Delete,
        SpecOperation::Alter => AclOperation::Alter,
        SpecOperation::Describe => AclOperation::Describe,
        SpecOperation::ClusterAction => AclOperation::ClusterAction,
        SpecOperation::AlterConfigs => AclOperation::AlterConfigs,
        SpecOperation::DescribeConfigs => AclOperation::DescribeConfigs,
        SpecOperation::IdempotentWrite => AclOperation::IdempotentWrite,
        SpecOperation::All => AclOperation::All,
    }
}

/// The ACL bindings to create and to delete to go from `actual` to `desired`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AclChanges {
    /// Bindings Kafka lacks.
    pub create: Vec<AclBinding>,
    /// Bindings Kafka has and should not.
    pub delete: Vec<AclBinding>,
}

impl AclChanges {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.create.is_empty() && self.delete.is_empty()
    }
}

/// Only the difference between `desired` and `actual`.
pub fn acl_changes(desired: &BTreeSet<AclBinding>, actual: &BTreeSet<AclBinding>) -> AclChanges {
    AclChanges {
        create: desired.difference(actual).cloned().collect(),
        delete: actual.difference(desired).cloned().collect(),
    }
}

/// Quota key to new value (`None` removes it) to go from `actual` to `desired`.
pub fn quota_changes(
    desired: &BTreeMap<String, f64>,
    actual: &BTreeMap<String, f64>,
) -> BTreeMap<String, Option<f64>> {
    let mut changes: BTreeMap<String, Option<f64>> = desired
        .iter()
        .filter(|(key, value)| actual.get(*key) != Some(value))
        .map(|(key, value)| (key.clone(), Some(*value)))
        .collect();
    for key in actual.keys() {
        if !desired.contains_key(key) {
            changes.insert(key.clone(), None);
        }
    }
    changes
}

/// Kafka clients' `sasl.jaas.config` for a SCRAM user.
pub fn sasl_jaas_config(user: &str, password: &str) -> String {
    format!(
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"{user}\" password=\"{password}\";"
    )
}

/// A random password of `length` ASCII letters and digits, starting with a letter.
pub fn generate_password(length: usize) -> String {
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const ALPHANUMERIC: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    (0..length.max(1))
        .map(|index| {
            let alphabet = if index == 0 { LETTERS } else { ALPHANUMERIC };
            char::from(alphabet[rng.random_range(0..alphabet.len())])
        })
        .collect()
}

/// A password as read from a Secret: UTF-8 without control characters or quotes (which
/// would break `sasl.jaas.config`), and not empty.
pub fn read_password(bytes: &[u8], location: &str) -> Result<String, UserError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| UserError::InvalidSecret(format!("{location} is not UTF-8 text")))?;
    if text.is_empty() {
        return Err(UserError::InvalidSecret(format!("{location} is empty")));
    }
    if text
        .chars()
        .any(|c| c.is_control() || c == '"' || c == '\\')
    {
        return Err(UserError::InvalidSecret(format!(
            "{location} holds control characters, quotes or backslashes, which a JAAS configuration cannot carry"
        )));
    }
    Ok(text.to_owned())
}

/// The password kept in the user's existing Secret: `None` when the Secret or its
/// `password` key is absent (a new password is generated then), an error when the key is
/// there but unreadable (nothing is regenerated: the user must fix or delete the Secret).
pub fn stored_password(existing: Option<&Secret>) -> Result<Option<String>, UserError> {
    let Some(secret) = existing else {
        return Ok(None);
    };
    let Some(bytes) = secret.data.as_ref().and_then(|data| data.get(PASSWORD_KEY)) else {
        return Ok(None);
    };
    let location = format!("The {PASSWORD_KEY} key of Secret {}", secret.name_any());
    read_password(&bytes.0, &location).map(Some).map_err(|error| {
        UserError::InvalidSecret(format!(
            "{error}; the password in Kafka was left unchanged. Fix the key, or delete it to have a new password generated"
        ))
    })
}

/// The KafkaUser name of a user Secret: its name without the prefix; `None` when the name
/// does not start with the prefix.
pub fn user_of_secret<'a>(secret_name: &'a str, prefix: &str) -> Option<&'a str> {
    secret_name
        .strip_prefix(prefix)
        .filter(|name| !name.is_empty())
}

/// The user's Secret with `data`: the KafkaUser's labels, the template's labels and
/// annotations, Strimzi's labels (which win), and an owner reference to the KafkaUser so
/// that deleting it deletes the Secret.
pub fn user_secret(
    user: &KafkaUser,
    desired: &DesiredUser,
    data: BTreeMap<String, ByteString>,
) -> Secret {
    let template = user
        .spec
        .template
        .as_ref()
        .and_then(|template| template.secret.as_ref())
        .and_then(|secret| secret.metadata.as_ref());
    let mut all_labels = user.labels().clone();
    if let Some(template_labels) = template.and_then(|metadata| metadata.labels.as_ref()) {
        all_labels.extend(
            template_labels
                .iter()
                .filter(|(key, _)| labels::is_propagatable_user_label(key))
                .map(|(key, value)| (key.clone(), value.clone())),
        );
    }
    all_labels.extend(secret_labels(&desired.name));
    let annotations = template
        .and_then(|metadata| metadata.annotations.clone())
        .filter(|annotations| !annotations.is_empty());
    Secret {
        metadata: ObjectMeta {
            name: Some(desired.secret_name.clone()),
            namespace: Some(desired.namespace.clone()),
            labels: Some(all_labels),
            annotations,
            owner_references: strimzi_operator_common::labels::owner_reference(user)
                .map(|reference| vec![reference]),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".to_owned()),
        data: Some(data),
        ..Secret::default()
    }
}

/// Strimzi's labels of a user's Secret; `strimzi.io/kind=KafkaUser` is how the operator
/// recognises the Secrets it made.
pub fn secret_labels(user: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (labels::KIND.to_owned(), KIND.to_owned()),
        (labels::KUBERNETES_NAME.to_owned(), OPERATOR_NAME.to_owned()),
        (labels::KUBERNETES_INSTANCE.to_owned(), user.to_owned()),
        (labels::KUBERNETES_PART_OF.to_owned(), user.to_owned()),
        (
            labels::KUBERNETES_MANAGED_BY.to_owned(),
            OPERATOR_NAME.to_owned(),
        ),
    ])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;
    use strimzi_api::document::from_value;

    fn user(spec: serde_json::Value) -> KafkaUser {
        from_value(json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaUser",
            "metadata": {"name": "alice", "namespace": "ns", "uid": "u-1",
                         "labels": {"strimzi.io/cluster": "my-cluster"}},
            "spec": spec
        }))
        .unwrap()
    }

    #[test]
    fn names_follow_the_authentication() {
        let tls =
            DesiredUser::of(&user(json!({"authentication": {"type": "tls"}})), "", true).unwrap();
        assert_eq!(tls.kafka_name(), "CN=alice");
        assert_eq!(tls.unused_kafka_name(), "alice");
        assert!(tls.has_secret());
        let external = DesiredUser::of(
            &user(json!({"authentication": {"type": "tls-external"}})),
            "p-",
            true,
        )
        .unwrap();
        assert_eq!(external.kafka_name(), "CN=alice");
        assert!(!external.has_secret());
        assert_eq!(external.secret_name, "p-alice");
        let none = DesiredUser::of(&user(json!({})), "", true).unwrap();
        assert_eq!(none.kafka_name(), "alice");
        assert_eq!(none.acls, Some(BTreeSet::new()));
        assert_eq!(decode_user_name("CN=alice"), "alice");
        assert_eq!(decode_user_name("O=io.strimzi, CN=bob"), "bob");
        assert_eq!(decode_user_name("carol"), "carol");
        assert_eq!(kafka_name_of_principal("User:CN=alice"), Some("CN=alice"));
        assert_eq!(kafka_name_of_principal("Group:x"), None);
    }

    #[test]
    fn acl_rules_become_one_binding_per_operation() {
        let desired = DesiredUser::of(
            &user(json!({
                "authentication": {"type": "scram-sha-512"},
                "authorization": {"type": "simple", "acls": [
                    {"resource": {"type": "topic", "name": "orders", "patternType": "prefix"},
                     "operations": ["Read", "Describe"]},
                    {"type": "deny", "resource": {"type": "group", "name": "g"},
                     "operations": ["Read"], "host": "10.0.0.1"},
                    {"resource": {"type": "cluster"}, "operations": ["IdempotentWrite"]}
                ]}
            })),
            "",
            true,
        )
        .unwrap();
        let acls = desired.acls.unwrap();
        assert_eq!(acls.len(), 4);
        assert!(acls.iter().all(|binding| binding.principal == "User:alice"));
        assert!(acls.contains(&AclBinding {
            resource_type: AclResourceType::Topic,
            resource_name: "orders".into(),
            pattern_type: PatternType::Prefixed,
            principal: "User:alice".into(),
            host: "*".into(),
            operation: AclOperation::Describe,
            permission: AclPermission::Allow,
        }));
        assert!(acls.contains(&AclBinding {
            resource_type: AclResourceType::Group,
            resource_name: "g".into(),
            pattern_type: PatternType::Literal,
            principal: "User:alice".into(),
            host: "10.0.0.1".into(),
            operation: AclOperation::Read,
            permission: AclPermission::Deny,
        }));
        assert!(
            acls.iter()
                .any(|binding| binding.resource_type == AclResourceType::Cluster
                    && binding.resource_name == CLUSTER_RESOURCE_NAME)
        );
    }

    #[test]
    fn invalid_input_is_refused_with_a_reason() {
        let refused = |spec: serde_json::Value, acls_supported: bool| {
            let error = DesiredUser::of(&user(spec), "", acls_supported).unwrap_err();
            assert!(matches!(error, UserError::InvalidResource(_)), "{error:?}");
            error.to_string()
        };
        let message = refused(
            json!({"authorization": {"type": "simple", "acls": [
                {"resource": {"type": "cluster", "name": "my-topic"}, "operations": ["Read"]}]}}),
            true,
        );
        assert!(
            message.contains("acls[0]") && message.contains("my-topic"),
            "{message}"
        );
        let message = refused(
            json!({"authorization": {"type": "simple", "acls": [
                {"resource": {"type": "topic"}, "operations": ["Read"]}]}}),
            true,
        );
        assert!(message.contains("needs a name"), "{message}");
        refused(
            json!({"authorization": {"type": "simple", "acls": []}}),
            false,
        );
        refused(
            json!({"authentication": {"type": "scram-sha-512",
                   "password": {"valueFrom": {}}}}),
            true,
        );
        refused(
            json!({"authentication": {"type": "tls", "validityDays": 10}}),
            true,
        );
        let mut long = user(json!({"authentication": {"type": "tls"}}));
        long.metadata.name = Some("a".repeat(65));
        assert!(DesiredUser::of(&long, "", true).is_err());
        long.spec.authentication = None;
        assert!(DesiredUser::of(&long, "", true).is_ok());
        assert!(DesiredUser::of(&long, &"p".repeat(200), true).is_err());
    }

    #[test]
    fn only_the_difference_changes() {
        let binding = |name: &str| AclBinding {
            resource_type: AclResourceType::Topic,
            resource_name: name.into(),
            pattern_type: PatternType::Literal,
            principal: "User:alice".into(),
            host: "*".into(),
            operation: AclOperation::Read,
            permission: AclPermission::Allow,
        };
        let desired = BTreeSet::from([binding("a"), binding("b")]);
        let actual = BTreeSet::from([binding("b"), binding("c")]);
        let changes = acl_changes(&desired, &actual);
        assert_eq!(changes.create, vec![binding("a")]);
        assert_eq!(changes.delete, vec![binding("c")]);
        assert!(acl_changes(&desired, &desired).is_empty());

        let desired = quotas(Some(&KafkaUserQuotas {
            producer_byte_rate: Some(1024),
            request_percentage: Some(50),
            ..KafkaUserQuotas::default()
        }));
        let actual = BTreeMap::from([
            ("producer_byte_rate".to_owned(), 1024.0),
            ("consumer_byte_rate".to_owned(), 10.0),
        ]);
        let changes = quota_changes(&desired, &actual);
        assert_eq!(
            changes,
            BTreeMap::from([
                ("consumer_byte_rate".to_owned(), None),
                ("request_percentage".to_owned(), Some(50.0)),
            ])
        );
        assert!(quota_changes(&desired, &desired).is_empty());
    }

    #[test]
    fn passwords_are_generated_or_kept_never_replaced_when_unreadable() {
        let password = generate_password(32);
        assert_eq!(password.len(), 32);
        assert!(password.chars().next().unwrap().is_ascii_alphabetic());
        assert!(password.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(password, generate_password(32));

        let secret = |value: &[u8]| Secret {
            metadata: ObjectMeta {
                name: Some("alice".into()),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([(
                PASSWORD_KEY.to_owned(),
                ByteString(value.to_vec()),
            )])),
            ..Secret::default()
        };
        assert_eq!(stored_password(None).unwrap(), None);
        assert_eq!(
            stored_password(Some(&secret(b"s3cret")))
                .unwrap()
                .as_deref(),
            Some("s3cret")
        );
        for bad in [&b"\xff\xfe"[..], b"", b"with\"quote"] {
            let error = stored_password(Some(&secret(bad))).unwrap_err();
            assert!(matches!(error, UserError::InvalidSecret(_)), "{error:?}");
        }
        assert!(sasl_jaas_config("alice", "pw").contains("username=\"alice\" password=\"pw\";"));
    }

    #[test]
    fn the_secret_carries_strimzi_labels_template_and_owner() {
        let kafka_user = user(json!({
            "authentication": {"type": "scram-sha-512"},
            "template": {"secret": {"metadata": {
                "labels": {"team": "a", "strimzi.io/kind": "Other"},
                "annotations": {"note": "x"}}}}
        }));
        let desired = DesiredUser::of(&kafka_user, "", true).unwrap();
        let secret = user_secret(&kafka_user, &desired, BTreeMap::new());
        let secret_labels = secret.metadata.labels.unwrap();
        assert_eq!(secret_labels["strimzi.io/kind"], "KafkaUser");
        assert_eq!(secret_labels["strimzi.io/cluster"], "my-cluster");
        assert_eq!(secret_labels["team"], "a");
        assert_eq!(secret_labels["app.kubernetes.io/instance"], "alice");
        assert_eq!(secret_labels["app.kubernetes.io/managed-by"], OPERATOR_NAME);
        assert_eq!(secret.metadata.annotations.unwrap()["note"], "x");
        let owner = &secret.metadata.owner_references.unwrap()[0];
        assert_eq!(owner.kind, "KafkaUser");
        assert_eq!(owner.uid, "u-1");
        assert_eq!(user_of_secret("p-alice", "p-"), Some("alice"));
        assert_eq!(user_of_secret("other", "p-"), None);
    }
}
