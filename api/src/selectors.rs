//! Strimzi's labels on the objects an operator creates, the user labels copied onto them, and
//! owner references.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;

use crate::labels;

/// Strimzi's default `STRIMZI_LABELS_EXCLUSION_PATTERN`: every `app.kubernetes.io/` label
/// except `part-of`.
pub const DEFAULT_LABELS_EXCLUSION_PATTERN: &str = "^app.kubernetes.io/(?!part-of).*";

/// User labels that are not copied from a custom resource to the objects created for it:
/// `strimzi.io/` labels always, and those matching the configured pattern
/// (`STRIMZI_LABELS_EXCLUSION_PATTERN`).
#[derive(Debug, Clone)]
pub struct LabelExclusion {
    pattern: fancy_regex::Regex,
}

impl LabelExclusion {
    /// An exclusion by `pattern`, a regular expression that may use look-around, as Strimzi's
    /// default `^app.kubernetes.io/(?!part-of).*` does.
    /// An invalid pattern gives the parser's message.
    pub fn new(pattern: &str) -> Result<Self, String> {
        let pattern = fancy_regex::Regex::new(pattern).map_err(|error| error.to_string())?;
        Ok(Self { pattern })
    }

    /// Whether the user label `key` stays on the custom resource only.
    pub fn excludes(&self, key: &str) -> bool {
        key.starts_with(labels::STRIMZI_DOMAIN) || self.pattern.is_match(key).unwrap_or(true)
    }

    /// The labels of `resource_labels` that are copied to created objects.
    pub fn propagated(
        &self,
        resource_labels: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        resource_labels
            .iter()
            .filter(|(key, _)| !self.excludes(key))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    }
}

/// Who an object belongs to, which gives its Strimzi labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentLabels {
    /// Kind of the owning custom resource, e.g. `Kafka` (`strimzi.io/kind`).
    pub kind: String,
    /// Name of the cluster (`strimzi.io/cluster`, `app.kubernetes.io/instance`).
    pub cluster: String,
    /// Name of the component, e.g. `my-cluster-kafka` (`strimzi.io/name`).
    pub component_name: String,
    /// Type of the component, e.g. `kafka` (`strimzi.io/component-type`,
    /// `app.kubernetes.io/name`).
    pub component_type: String,
    /// The operator, e.g. `strimzi-cluster-operator` (`app.kubernetes.io/managed-by`).
    pub managed_by: String,
}

impl ComponentLabels {
    /// Labels that select every object of this component, to find what an operator owns.
    pub fn selector(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (labels::CLUSTER.to_owned(), self.cluster.clone()),
            (labels::KIND.to_owned(), self.kind.clone()),
            (labels::NAME.to_owned(), self.component_name.clone()),
        ])
    }

    /// [`Self::selector`] as a Kubernetes label selector string.
    pub fn selector_string(&self) -> String {
        selector_string(&self.selector())
    }

    /// Every label of an object of this component: the user labels that propagate, then
    /// Strimzi's and the Kubernetes recommended labels (which win over user labels).
    pub fn labels(
        &self,
        user_labels: &BTreeMap<String, String>,
        exclusion: &LabelExclusion,
    ) -> BTreeMap<String, String> {
        let mut all = exclusion.propagated(user_labels);
        all.extend(self.selector());
        all.extend([
            (
                labels::COMPONENT_TYPE.to_owned(),
                self.component_type.clone(),
            ),
            (
                labels::KUBERNETES_NAME.to_owned(),
                self.component_type.clone(),
            ),
            (labels::KUBERNETES_INSTANCE.to_owned(), self.cluster.clone()),
            (
                labels::KUBERNETES_PART_OF.to_owned(),
                format!("strimzi-{}", self.cluster),
            ),
            (
                labels::KUBERNETES_MANAGED_BY.to_owned(),
                self.managed_by.clone(),
            ),
        ]);
        all
    }
}

/// A label map as a Kubernetes label selector string (`a=1,b=2`).
pub fn selector_string(selector: &BTreeMap<String, String>) -> String {
    selector
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// An owner reference to `owner`, as Strimzi 1.2 sets them: garbage collection deletes the
/// object with its owner, and a foreground deletion of the owner waits for it; the owner is
/// not its controller. `None` if the owner has no name or uid yet.
pub fn owner_reference<K: Resource<DynamicType = ()>>(owner: &K) -> Option<OwnerReference> {
    let mut reference = owner.owner_ref(&())?;
    reference.block_owner_deletion = Some(true);
    reference.controller = Some(false);
    Some(reference)
}

/// Whether `key` is a valid label key: an optional DNS subdomain prefix and `/`, then a name
/// of at most 63 alphanumerics, `-`, `_` or `.`, starting and ending alphanumeric.
pub fn is_label_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    let prefix_ok = prefix.is_none_or(|prefix| {
        !prefix.is_empty()
            && prefix.len() <= 253
            && prefix.split('.').all(|part| {
                !part.is_empty()
                    && part.bytes().all(|byte| {
                        byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-'
                    })
                    && !part.starts_with('-')
                    && !part.ends_with('-')
            })
    });
    prefix_ok && !name.is_empty() && is_label_value(name)
}

/// Whether `value` is a valid label value: empty, or at most 63 alphanumerics, `-`, `_` or
/// `.`, starting and ending alphanumeric.
pub fn is_label_value(value: &str) -> bool {
    value.is_empty()
        || (value.len() <= 63
            && value
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
            && value
                .bytes()
                .next()
                .is_some_and(|byte| byte.is_ascii_alphanumeric())
            && value
                .bytes()
                .last()
                .is_some_and(|byte| byte.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    fn component() -> ComponentLabels {
        ComponentLabels {
            kind: "Kafka".into(),
            cluster: "my-cluster".into(),
            component_name: "my-cluster-kafka".into(),
            component_type: "kafka".into(),
            managed_by: "strimzi-cluster-operator".into(),
        }
    }

    #[test]
    fn labels_are_strimzi_labels_plus_propagated_user_labels() {
        let exclusion = LabelExclusion::new(DEFAULT_LABELS_EXCLUSION_PATTERN).unwrap();
        let user = BTreeMap::from([
            ("team".to_owned(), "a".to_owned()),
            ("strimzi.io/cluster".to_owned(), "other".to_owned()),
            ("app.kubernetes.io/version".to_owned(), "1".to_owned()),
            ("app.kubernetes.io/part-of".to_owned(), "mine".to_owned()),
        ]);
        let labels = component().labels(&user, &exclusion);
        let expected = BTreeMap::from([
            ("team", "a"),
            ("strimzi.io/cluster", "my-cluster"),
            ("strimzi.io/kind", "Kafka"),
            ("strimzi.io/name", "my-cluster-kafka"),
            ("strimzi.io/component-type", "kafka"),
            ("app.kubernetes.io/name", "kafka"),
            ("app.kubernetes.io/instance", "my-cluster"),
            ("app.kubernetes.io/part-of", "strimzi-my-cluster"),
            ("app.kubernetes.io/managed-by", "strimzi-cluster-operator"),
        ]);
        let expected: BTreeMap<String, String> = expected
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect();
        assert_eq!(labels, expected);
        assert_eq!(
            component().selector_string(),
            "strimzi.io/cluster=my-cluster,strimzi.io/kind=Kafka,strimzi.io/name=my-cluster-kafka"
        );
        let propagated = exclusion.propagated(&user);
        assert!(propagated.contains_key("app.kubernetes.io/part-of"));
        assert!(!propagated.contains_key("app.kubernetes.io/version"));
    }

    #[test]
    fn owner_reference_blocks_a_foreground_deletion_without_controlling() {
        let owner = ConfigMap {
            metadata: ObjectMeta {
                name: Some("owner".into()),
                uid: Some("123".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let reference = owner_reference(&owner).unwrap();
        assert_eq!(reference.kind, "ConfigMap");
        assert_eq!(reference.uid, "123");
        assert_eq!(reference.block_owner_deletion, Some(true));
        assert_eq!(reference.controller, Some(false));
        assert!(owner_reference(&ConfigMap::default()).is_none());
    }

    #[test]
    fn label_syntax() {
        assert!(is_label_key("strimzi.io/cluster"));
        assert!(is_label_key("team"));
        assert!(!is_label_key("/x"));
        assert!(!is_label_key("a b"));
        assert!(!is_label_key("Bad_Prefix/x"));
        assert!(is_label_value(""));
        assert!(is_label_value("a.b-c_d"));
        assert!(!is_label_value("-a"));
        assert!(!is_label_value(&"a".repeat(64)));
    }
}
