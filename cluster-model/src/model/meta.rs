//! Metadata shared by the objects of the listeners and policies: how template and listener
//! labels and annotations combine with Strimzi's own labels, and the labels of a pool's
//! objects; the scope of an object (namespace, owner, propagating labels); the RBAC API
//! group the Roles and bindings name.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use strimzi_api::common::{MetadataTemplate, ResourceTemplate};
use strimzi_api::labels;
use strimzi_api::selectors::ComponentLabels;

use super::{KafkaCluster, ModelConfig, NodePool};

/// The API group of Roles, ClusterRoles and their bindings.
pub(crate) const RBAC_API_GROUP: &str = "rbac.authorization.k8s.io";

/// A label or annotation map.
pub type StringMap = BTreeMap<String, String>;

/// The labels of a metadata template (empty without one).
pub fn template_labels(template: Option<&MetadataTemplate>) -> StringMap {
    template
        .and_then(|metadata| metadata.labels.clone())
        .unwrap_or_default()
}

/// The annotations of a metadata template (empty without one).
pub fn template_annotations(template: Option<&MetadataTemplate>) -> StringMap {
    template
        .and_then(|metadata| metadata.annotations.clone())
        .unwrap_or_default()
}

/// Later maps win over earlier ones.
pub fn merged<'a>(maps: impl IntoIterator<Item = &'a StringMap>) -> StringMap {
    maps.into_iter()
        .flat_map(|map| map.iter())
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

/// `base` with `extra` added; `extra` may override every label except Strimzi's own
/// (`strimzi.io/...`), which stay as the operator sets them.
pub fn with_additional_labels(base: &StringMap, extra: &StringMap) -> StringMap {
    let mut all = base.clone();
    all.extend(
        extra
            .iter()
            .filter(|(key, _)| !key.starts_with(labels::STRIMZI_DOMAIN))
            .map(|(key, value)| (key.clone(), value.clone())),
    );
    all
}

/// `None` for an empty map, as the API server stores it.
pub fn non_empty(map: StringMap) -> Option<StringMap> {
    (!map.is_empty()).then_some(map)
}

/// The per-node objects whose metadata a pool's template (or else the Kafka's) sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerPodTemplate {
    /// `perPodService`.
    Service,
    /// `perPodRoute` (also used for TLSRoutes).
    Route,
    /// `perPodIngress`.
    Ingress,
}

impl KafkaCluster {
    /// The template of a pool's per-node objects of one kind: the pool's own, else the
    /// Kafka's.
    pub fn per_pod_template<'a>(
        &'a self,
        pool: &'a NodePool,
        kind: PerPodTemplate,
    ) -> Option<&'a ResourceTemplate> {
        let from_pool = pool.template.as_ref().and_then(|template| match kind {
            PerPodTemplate::Service => template.per_pod_service.as_ref(),
            PerPodTemplate::Route => template.per_pod_route.as_ref(),
            PerPodTemplate::Ingress => template.per_pod_ingress.as_ref(),
        });
        from_pool.or_else(|| {
            self.kafka_template().and_then(|template| match kind {
                PerPodTemplate::Service => template.per_pod_service.as_ref(),
                PerPodTemplate::Route => template.per_pod_route.as_ref(),
                PerPodTemplate::Ingress => template.per_pod_ingress.as_ref(),
            })
        })
    }

    /// Metadata of a cluster object, owned by the Kafka: its name, namespace, owner, labels
    /// and annotations.
    pub fn object_meta(&self, name: &str, labels: StringMap, annotations: StringMap) -> ObjectMeta {
        self.object_meta_owned_by(self.owner.as_ref(), name, labels, annotations)
    }

    /// Metadata of an object in the cluster's namespace owned by `owner` (the Kafka, or the
    /// KafkaNodePool for a pool's per-node objects).
    pub fn object_meta_owned_by(
        &self,
        owner: Option<&OwnerReference>,
        name: &str,
        labels: StringMap,
        annotations: StringMap,
    ) -> ObjectMeta {
        ObjectScope {
            owner,
            ..self.scope()
        }
        .object_meta(name, labels, annotations)
    }

    /// Labels of the objects that belong to one pool (its per-node Services, Routes and
    /// Ingresses): the pool's propagating user labels, Strimzi's labels with
    /// `strimzi.io/name: <cluster>-kafka` (so the cluster selector finds them) and
    /// `strimzi.io/pool-name`.
    pub fn pool_labels(&self, pool: &NodePool) -> StringMap {
        let mut pool_labels = self
            .component_labels()
            .labels(&pool.resource_labels, &self.config.label_exclusion);
        pool_labels.insert(labels::POOL_NAME.to_owned(), pool.name.clone());
        pool_labels
    }
}

/// `items` in the order a Java `HashSet` of them iterates, which is how Strimzi's operator
/// lists some names (a Role's Secrets): by bucket of the spread `String.hashCode()` in a
/// table grown at a load of 3/4 from 16 buckets, and in insertion order within a bucket.
pub fn java_hash_set_order(items: Vec<String>) -> Vec<String> {
    let mut buckets = 16usize;
    while items.len() * 4 > buckets * 3 {
        buckets *= 2;
    }
    let bucket = |item: &String| {
        let hash = item.encode_utf16().fold(0u32, |hash, unit| {
            hash.wrapping_mul(31).wrapping_add(u32::from(unit))
        });
        usize::try_from(hash ^ (hash >> 16)).unwrap_or_default() & (buckets - 1)
    };
    let mut ordered: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        if !ordered.contains(&item) {
            ordered.push(item);
        }
    }
    // A stable sort keeps the insertion order within a bucket.
    ordered.sort_by_key(bucket);
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_in_the_order_of_a_java_hash_set() {
        // The order of Strimzi 1.2.0's Role for kafka-persistent.yaml.
        let mut names = vec![
            "my-cluster-cluster-ca-cert".to_owned(),
            "my-cluster-trustbundle".to_owned(),
        ];
        names.extend((0..3).map(|id| format!("my-cluster-broker-{id}")));
        names.extend((3..6).map(|id| format!("my-cluster-controller-{id}")));
        assert_eq!(
            java_hash_set_order(names),
            [
                "my-cluster-cluster-ca-cert",
                "my-cluster-controller-3",
                "my-cluster-controller-4",
                "my-cluster-broker-2",
                "my-cluster-trustbundle",
                "my-cluster-broker-0",
                "my-cluster-controller-5",
                "my-cluster-broker-1",
            ]
        );
    }

    fn map(entries: &[(&str, &str)]) -> StringMap {
        entries
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn additional_labels_cannot_replace_strimzi_labels() {
        let base = map(&[
            ("strimzi.io/cluster", "c"),
            ("app.kubernetes.io/name", "kafka"),
        ]);
        let extra = map(&[
            ("strimzi.io/cluster", "other"),
            ("app.kubernetes.io/name", "mine"),
            ("team", "a"),
        ]);
        assert_eq!(
            with_additional_labels(&base, &extra),
            map(&[
                ("app.kubernetes.io/name", "mine"),
                ("strimzi.io/cluster", "c"),
                ("team", "a"),
            ])
        );
    }

    #[test]
    fn later_maps_win() {
        let first = map(&[("a", "1"), ("b", "1")]);
        let second = map(&[("b", "2")]);
        assert_eq!(merged([&first, &second]), map(&[("a", "1"), ("b", "2")]));
    }
}

/// Where a component's objects live and whose they are: the namespace, the owner, the user
/// labels that propagate, and the operator's settings. The Kafka's components and a
/// KafkaBridge build their objects through it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ObjectScope<'a> {
    /// Namespace of every object.
    pub namespace: &'a str,
    /// Controller owner reference set on every object.
    pub owner: Option<&'a OwnerReference>,
    /// Labels of the owning custom resource, some of which propagate.
    pub resource_labels: &'a StringMap,
    /// Operator-wide settings.
    pub config: &'a ModelConfig,
}

impl ObjectScope<'_> {
    /// Metadata of an object: its name, namespace, owner, labels and annotations.
    pub(crate) fn object_meta(
        &self,
        name: &str,
        labels: StringMap,
        annotations: StringMap,
    ) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(self.namespace.to_owned()),
            labels: non_empty(labels),
            annotations: non_empty(annotations),
            owner_references: self.owner.map(|owner| vec![owner.clone()]),
            ..ObjectMeta::default()
        }
    }

    /// Every label of a component's object: the propagating user labels, then Strimzi's.
    pub(crate) fn labels(&self, labels: &ComponentLabels) -> StringMap {
        labels.labels(self.resource_labels, &self.config.label_exclusion)
    }
}

impl KafkaCluster {
    /// The scope of the Kafka's own objects: its namespace, owned by the Kafka.
    pub(crate) fn scope(&self) -> ObjectScope<'_> {
        ObjectScope {
            namespace: &self.namespace,
            owner: self.owner.as_ref(),
            resource_labels: &self.resource_labels,
            config: &self.config,
        }
    }
}
