//! `KafkaNodePool`: a group of Kafka nodes that share roles, storage and pod settings.

use k8s_openapi::api::core::v1::ResourceRequirements;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{
    Condition, ContainerTemplate, JvmOptions, PodSetPodTemplate, ResourceTemplate,
};
use crate::storage::Storage;

/// A role a Kafka node takes in KRaft mode.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum ProcessRole {
    /// Member of the KRaft quorum that manages cluster metadata.
    #[serde(rename = "controller")]
    Controller,
    /// Serves client requests and stores partition data.
    #[serde(rename = "broker")]
    Broker,
}

impl ProcessRole {
    /// The role as written in the resource and in Kafka's `process.roles`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Controller => "controller",
            Self::Broker => "broker",
        }
    }
}

impl std::fmt::Display for ProcessRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Customisation of the Kubernetes resources created for the pool's nodes.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaNodePoolTemplate {
    /// Metadata of the StrimziPodSet that runs the pool's pods.
    pub pod_set: Option<ResourceTemplate>,
    /// The Kafka pods.
    pub pod: Option<PodSetPodTemplate>,
    /// Metadata of the per-node Services used by external listeners.
    pub per_pod_service: Option<ResourceTemplate>,
    /// Metadata of the per-node OpenShift Routes used by `route` listeners.
    pub per_pod_route: Option<ResourceTemplate>,
    /// Metadata of the per-node Ingresses used by `ingress` listeners.
    pub per_pod_ingress: Option<ResourceTemplate>,
    /// Metadata of the PersistentVolumeClaims of the nodes' volumes.
    pub persistent_volume_claim: Option<ResourceTemplate>,
    /// The Kafka container.
    pub kafka_container: Option<ContainerTemplate>,
    /// The init container that prepares the node, for example its rack label.
    pub init_container: Option<ContainerTemplate>,
}

/// The desired state of a node pool.
#[skip_serializing_none]
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    kind = "KafkaNodePool",
    namespaced,
    status = "KafkaNodePoolStatus",
    shortname = "knp",
    category = "strimzi",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct KafkaNodePoolSpec {
    /// How many nodes the pool has.
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// The nodes' disks. Cannot be changed after the nodes exist.
    pub storage: Storage,
    /// Whether the nodes are controllers, brokers, or both.
    pub roles: Vec<ProcessRole>,
    /// CPU and memory requested by and allowed to each node.
    pub resources: Option<ResourceRequirements>,
    /// Options of the nodes' Java virtual machine.
    pub jvm_options: Option<JvmOptions>,
    /// Customisation of the resources created for the pool.
    pub template: Option<KafkaNodePoolTemplate>,
}

impl KafkaNodePoolSpec {
    /// Whether the pool's nodes take `role`.
    pub fn has_role(&self, role: ProcessRole) -> bool {
        self.roles.contains(&role)
    }
}

/// The observed state of a node pool.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaNodePoolStatus {
    /// The operator's latest observations, such as `Ready`.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// Node IDs assigned to the pool's nodes.
    pub node_ids: Option<Vec<i32>>,
    /// ID of the Kafka cluster the pool belongs to.
    pub cluster_id: Option<String>,
    /// Roles the pool's nodes currently have.
    pub roles: Option<Vec<ProcessRole>>,
    /// How many nodes the pool currently has; read by the `scale` subresource.
    pub replicas: Option<i32>,
    /// Label selector of the pool's pods, as a string, for the `scale` subresource.
    pub label_selector: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DocumentError, from_value};
    use crate::{pod_set, rebalance, topic, user};
    use serde_json::json;

    #[test]
    fn crds_carry_names_groups_and_short_names() {
        use kube::CustomResourceExt;
        let crds = [
            (KafkaNodePool::crd(), "kafka.strimzi.io", "knp"),
            (topic::KafkaTopic::crd(), "kafka.strimzi.io", "kt"),
            (user::KafkaUser::crd(), "kafka.strimzi.io", "ku"),
            (rebalance::KafkaRebalance::crd(), "kafka.strimzi.io", "kr"),
            (pod_set::StrimziPodSet::crd(), "core.strimzi.io", "sps"),
        ];
        for (crd, group, short_name) in crds {
            assert_eq!(crd.spec.group, group);
            assert_eq!(
                crd.spec.names.short_names,
                Some(vec![short_name.to_owned()])
            );
            assert_eq!(crd.spec.names.categories, Some(vec!["strimzi".to_owned()]));
            assert_eq!(crd.spec.versions[0].name, "v1");
        }
    }

    fn document() -> serde_json::Value {
        json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaNodePool",
            "metadata": {"name": "dual-role", "labels": {"strimzi.io/cluster": "my-cluster"}},
            "spec": {
                "replicas": 3,
                "roles": ["controller", "broker"],
                "storage": {"type": "jbod", "volumes": [
                    {"id": 0, "type": "persistent-claim", "size": "100Gi",
                     "deleteClaim": false, "kraftMetadata": "shared"}
                ]},
                "resources": {"requests": {"memory": "2Gi", "cpu": "500m"},
                              "limits": {"memory": "4Gi"}},
                "jvmOptions": {"-Xms": "1g", "-Xmx": "2g"},
                "template": {
                    "podSet": {"metadata": {"labels": {"a": "b"}}},
                    "pod": {"terminationGracePeriodSeconds": 60},
                    "perPodService": {"metadata": {"annotations": {"x": "y"}}},
                    "perPodRoute": {"metadata": {}},
                    "perPodIngress": {"metadata": {}},
                    "persistentVolumeClaim": {"metadata": {"labels": {"c": "d"}}},
                    "kafkaContainer": {"env": [{"name": "A", "value": "1"}]},
                    "initContainer": {"volumeMounts": [{"name": "v", "mountPath": "/v"}]}
                }
            },
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "observedGeneration": 1,
                "nodeIds": [0, 1, 2],
                "clusterId": "abc",
                "roles": ["controller", "broker"],
                "replicas": 3,
                "labelSelector": "strimzi.io/pool-name=dual-role"
            }
        })
    }

    #[test]
    fn round_trips() {
        let pool: KafkaNodePool = from_value(document()).unwrap();
        assert!(pool.spec.has_role(ProcessRole::Broker));
        assert_eq!(ProcessRole::Controller.to_string(), "controller");
        assert!(
            crate::document::unknown_fields::<KafkaNodePool>(&document())
                .unwrap()
                .is_empty()
        );
        assert_eq!(serde_json::to_value(&pool).unwrap(), document());
    }

    #[test]
    fn numeric_quantities_are_written_as_strings() {
        // k8s-openapi's `Quantity` accepts a bare number but keeps it as a string.
        let mut document = document();
        document["spec"]["resources"]["requests"]["cpu"] = json!(2);
        let pool: KafkaNodePool = from_value(document).unwrap();
        let written = serde_json::to_value(&pool).unwrap();
        assert_eq!(written["spec"]["resources"]["requests"]["cpu"], "2");
    }

    #[test]
    fn wrong_role_and_storage_name_the_field() {
        let spec = |roles: serde_json::Value, storage: serde_json::Value| {
            from_value::<KafkaNodePoolSpec>(
                json!({"replicas": 1, "roles": roles, "storage": storage}),
            )
        };
        let error = spec(json!(["broker", "zookeeper"]), json!({"type": "ephemeral"}))
            .expect_err("unknown role");
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "roles[1]");
        let error = spec(json!(["broker"]), json!({"type": "tmpfs"})).expect_err("unknown storage");
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "storage");
    }

    #[test]
    fn schema_requires_core_fields() {
        let schema = serde_json::to_value(schemars::schema_for!(KafkaNodePoolSpec)).unwrap();
        assert_eq!(schema["required"], json!(["replicas", "storage", "roles"]));
        assert_eq!(schema["properties"]["replicas"]["minimum"], 0);
    }
}
