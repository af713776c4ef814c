//! Access rights of the Kafka pods: the Role and RoleBinding that let the ServiceAccount
//! `<cluster>-kafka` read the Secrets its configuration refers to (through the
//! `${strimzisecrets:...}` config provider), and the ClusterRoleBinding that lets the init
//! container read the Kubernetes node it runs on. Owner: whole model.

use k8s_openapi::api::rbac::v1::{
    ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use strimzi_api::naming;

use super::KafkaCluster;
use super::object_meta::{
    StringMap, template_annotations, template_labels, with_additional_labels,
};
use super::trust_bundle::trust_bundle_secret_name;

/// API group of Roles and ClusterRoles.
const RBAC_API_GROUP: &str = "rbac.authorization.k8s.io";
/// The ClusterRole, installed with the operator, that lets the init container read nodes.
pub const KAFKA_BROKER_CLUSTER_ROLE: &str = "strimzi-kafka-broker";

/// `<cluster>-kafka-role`: the RoleBinding of the Kafka pods.
pub fn kafka_role_binding_name(cluster: &str) -> String {
    format!("{}-role", naming::kafka_component(cluster))
}

/// `strimzi-<namespace>-<cluster>-kafka-init`: the init container's ClusterRoleBinding (cluster
/// scoped, so the namespace is part of the name).
pub fn init_cluster_role_binding_name(cluster: &str, namespace: &str) -> String {
    format!("strimzi-{namespace}-{cluster}-kafka-init")
}

impl KafkaCluster {
    /// The ServiceAccount of the Kafka pods as a RoleBinding subject.
    fn kafka_service_account_subject(&self) -> Subject {
        Subject {
            kind: "ServiceAccount".to_owned(),
            name: naming::kafka_component(&self.name),
            namespace: Some(self.namespace.clone()),
            api_group: None,
        }
    }

    /// `<cluster>-kafka`: `get` on exactly the Secrets the nodes read, the CA certificates,
    /// the trust bundle and each node's own certificate Secret (named after its pod).
    pub fn kafka_role(&self) -> Role {
        let mut secrets = vec![
            naming::cluster_ca_cert_secret(&self.name),
            naming::clients_ca_cert_secret(&self.name),
            trust_bundle_secret_name(&self.name),
        ];
        secrets.extend(self.nodes().map(|node| node.pod_name));
        Role {
            metadata: self.object_meta(
                &naming::kafka_component(&self.name),
                self.labels(),
                StringMap::new(),
            ),
            rules: Some(vec![PolicyRule {
                api_groups: Some(vec![String::new()]),
                resources: Some(vec!["secrets".to_owned()]),
                verbs: vec!["get".to_owned()],
                resource_names: Some(secrets),
                ..PolicyRule::default()
            }]),
        }
    }

    /// `<cluster>-kafka-role`: binds [`KafkaCluster::kafka_role`] to the Kafka ServiceAccount.
    pub fn kafka_role_binding(&self) -> RoleBinding {
        RoleBinding {
            metadata: self.object_meta(
                &kafka_role_binding_name(&self.name),
                self.labels(),
                StringMap::new(),
            ),
            role_ref: RoleRef {
                api_group: RBAC_API_GROUP.to_owned(),
                kind: "Role".to_owned(),
                name: naming::kafka_component(&self.name),
            },
            subjects: Some(vec![self.kafka_service_account_subject()]),
        }
    }

    /// `strimzi-<namespace>-<cluster>-kafka-init`, binding the `strimzi-kafka-broker`
    /// ClusterRole to the Kafka ServiceAccount, when some node runs the init container
    /// (topology-label rack awareness or a `nodeport` listener). Cluster-scoped objects
    /// cannot be owned by a namespaced Kafka, so it has no owner reference. `None` when no
    /// node needs it.
    pub fn init_cluster_role_binding(&self) -> Option<ClusterRoleBinding> {
        if !self
            .pools
            .iter()
            .any(|pool| self.needs_init_container(pool))
        {
            return None;
        }
        let template = self
            .kafka_template()
            .and_then(|template| template.cluster_role_binding.as_ref())
            .and_then(|template| template.metadata.as_ref());
        let mut metadata = self.object_meta(
            &init_cluster_role_binding_name(&self.name, &self.namespace),
            with_additional_labels(&self.labels(), &template_labels(template)),
            template_annotations(template),
        );
        metadata.namespace = None;
        metadata.owner_references = None;
        Some(ClusterRoleBinding {
            metadata,
            role_ref: RoleRef {
                api_group: RBAC_API_GROUP.to_owned(),
                kind: "ClusterRole".to_owned(),
                name: KAFKA_BROKER_CLUSTER_ROLE.to_owned(),
            },
            subjects: Some(vec![self.kafka_service_account_subject()]),
        })
    }
}
