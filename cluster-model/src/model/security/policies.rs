//! The ServiceAccount, PodDisruptionBudget, NetworkPolicy and JMX Secret of the Kafka
//! component.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::networking::v1::{
    NetworkPolicy, NetworkPolicyIngressRule, NetworkPolicyPeer, NetworkPolicyPort,
    NetworkPolicySpec,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::api::rbac::v1::{
    ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use rand::Rng;
use rand::distr::Alphanumeric;
use strimzi_api::common::{KafkaJmxAuthentication, MetadataTemplate, RackType};
use strimzi_api::kafka::KafkaListenerType;
use strimzi_api::{labels, naming};

use crate::model::listeners::services::{
    CONTROL_PLANE_PORT, JMX_PORT, KAFKA_AGENT_PORT, METRICS_PORT, REPLICATION_PORT,
};
use crate::model::meta::{
    RBAC_API_GROUP, StringMap, java_hash_set_order, template_annotations, template_labels,
    with_additional_labels,
};
use crate::model::{KafkaCluster, ModelConfig};

/// The Secret with the CA certificates the Kafka nodes trust (`<cluster>-trustbundle`).
pub fn trust_bundle_secret(cluster: &str) -> String {
    format!("{cluster}-trustbundle")
}

/// Pods a voluntary disruption may take down at once unless the template says otherwise.
const DEFAULT_MAX_UNAVAILABLE: i32 = 1;
/// Key of the JMX user name in the JMX Secret.
pub const JMX_USERNAME_KEY: &str = "jmx-username";
/// Key of the JMX password in the JMX Secret.
pub const JMX_PASSWORD_KEY: &str = "jmx-password";
/// Length of generated JMX user names and passwords.
const JMX_CREDENTIAL_LENGTH: usize = 16;

/// A random JMX credential: a letter followed by letters and digits.
fn random_credential() -> String {
    let mut rng = rand::rng();
    let first = loop {
        let candidate = char::from(rng.sample(Alphanumeric));
        if candidate.is_ascii_alphabetic() {
            break candidate;
        }
    };
    std::iter::once(first)
        .chain(
            (&mut rng)
                .sample_iter(Alphanumeric)
                .take(JMX_CREDENTIAL_LENGTH - 1)
                .map(char::from),
        )
        .collect()
}

/// A peer selecting pods by labels, optionally in other namespaces.
pub(crate) fn peer(
    pod_labels: StringMap,
    namespace_selector: Option<LabelSelector>,
) -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        pod_selector: Some(LabelSelector {
            match_labels: Some(pod_labels),
            ..LabelSelector::default()
        }),
        namespace_selector,
        ..NetworkPolicyPeer::default()
    }
}

/// A rule opening a TCP `port` to `peers` (to everyone when empty).
pub(crate) fn ingress_rule(port: i32, peers: Vec<NetworkPolicyPeer>) -> NetworkPolicyIngressRule {
    NetworkPolicyIngressRule {
        ports: Some(vec![NetworkPolicyPort {
            port: Some(IntOrString::Int(port)),
            protocol: Some("TCP".to_owned()),
            ..NetworkPolicyPort::default()
        }]),
        from: (!peers.is_empty()).then_some(peers),
    }
}

/// The JMX user name and password of a JMX Secret: those of `existing`, else new ones.
pub(crate) fn jmx_credentials(existing: Option<&Secret>) -> BTreeMap<String, ByteString> {
    let existing_data = existing.and_then(|secret| secret.data.as_ref());
    let credential = |key: &str| {
        existing_data
            .and_then(|data| data.get(key))
            .cloned()
            .unwrap_or_else(|| ByteString(random_credential().into_bytes()))
    };
    BTreeMap::from([
        (JMX_USERNAME_KEY.to_owned(), credential(JMX_USERNAME_KEY)),
        (JMX_PASSWORD_KEY.to_owned(), credential(JMX_PASSWORD_KEY)),
    ])
}
/// Namespaces the cluster operator may connect from to pods in `namespace`: none needed in
/// its own namespace; elsewhere those with the configured labels, or every namespace.
pub(crate) fn operator_namespace_selector(
    config: &ModelConfig,
    namespace: &str,
) -> Option<LabelSelector> {
    (config.operator_namespace != namespace).then(|| LabelSelector {
        match_labels: config
            .operator_namespace_labels
            .clone()
            .filter(|labels| !labels.is_empty()),
        ..LabelSelector::default()
    })
}

fn name_peer(name: String) -> NetworkPolicyPeer {
    peer(StringMap::from([(labels::NAME.to_owned(), name)]), None)
}

impl KafkaCluster {
    /// Labels and annotations of a cluster object with a metadata template.
    fn templated_meta(
        &self,
        name: &str,
        template: Option<&MetadataTemplate>,
    ) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        self.object_meta(
            name,
            with_additional_labels(&self.labels(), &template_labels(template)),
            template_annotations(template),
        )
    }

    /// `<cluster>-kafka`: the ServiceAccount of the Kafka pods.
    pub fn service_account(&self) -> ServiceAccount {
        let template = self
            .kafka_template()
            .and_then(|template| template.service_account.as_ref())
            .and_then(|template| template.metadata.as_ref());
        ServiceAccount {
            metadata: self.templated_meta(&naming::kafka_component(&self.name), template),
            ..ServiceAccount::default()
        }
    }

    /// The subject the Kafka pods run as: the `<cluster>-kafka` ServiceAccount.
    fn kafka_service_account_subject(&self) -> Subject {
        Subject {
            kind: "ServiceAccount".to_owned(),
            name: naming::kafka_component(&self.name),
            namespace: Some(self.namespace.clone()),
            ..Subject::default()
        }
    }

    /// `<cluster>-kafka`: lets the Kafka pods read the Secrets their configuration refers to
    /// through the Kubernetes API: the cluster CA certificate, the trust bundle (which also
    /// holds the clients CA) and each node's certificate, listed in the order of Strimzi's
    /// Java hash set of names.
    pub fn kafka_role(&self) -> Role {
        let mut secrets: Vec<String> = vec![
            naming::cluster_ca_cert_secret(&self.name),
            trust_bundle_secret(&self.name),
        ];
        secrets.extend(self.nodes().map(|node| node.pod_name));
        let secrets = java_hash_set_order(secrets);
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

    /// `<cluster>-kafka-role`: binds [`Self::kafka_role`] to the Kafka ServiceAccount.
    pub fn kafka_role_binding(&self) -> RoleBinding {
        RoleBinding {
            metadata: self.object_meta(
                &format!("{}-kafka-role", self.name),
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

    /// `strimzi-<namespace>-<cluster>-kafka-init`: lets the brokers' init container read
    /// their Kubernetes node (for its rack label or its addresses) through the
    /// `strimzi-kafka-broker` ClusterRole. Only when a topology-label rack or a `nodeport`
    /// listener needs it. Cluster-scoped, so without owner.
    pub fn init_cluster_role_binding(&self) -> Option<ClusterRoleBinding> {
        let rack_from_node = self.spec.rack.as_ref().is_some_and(|rack| {
            rack.r#type.unwrap_or(RackType::TopologyLabel) == RackType::TopologyLabel
        });
        let node_port = self
            .spec
            .listeners
            .iter()
            .any(|listener| listener.r#type == KafkaListenerType::NodePort);
        if !rack_from_node && !node_port {
            return None;
        }
        let template = self
            .kafka_template()
            .and_then(|template| template.cluster_role_binding.as_ref())
            .and_then(|template| template.metadata.as_ref());
        Some(crate::model::rack::init_cluster_role_binding(
            self.templated_meta(
                &strimzi_api::naming::kafka_init_cluster_role_binding(&self.namespace, &self.name),
                template,
            ),
            crate::model::rack::BROKER_CLUSTER_ROLE,
            &naming::kafka_component(&self.name),
            &self.namespace,
        ))
    }

    /// `<cluster>-kafka`: keeps all but `maxUnavailable` (default 1) Kafka pods running
    /// during voluntary disruptions. StrimziPodSets are a custom controller, for which
    /// Kubernetes only supports an absolute `minAvailable`. `None` when PodDisruptionBudgets
    /// are not generated.
    pub fn pod_disruption_budget(&self) -> Option<PodDisruptionBudget> {
        if !self.config.pod_disruption_budget_generation {
            return None;
        }
        let template = self
            .kafka_template()
            .and_then(|template| template.pod_disruption_budget.as_ref());
        let max_unavailable = template
            .and_then(|template| template.max_unavailable)
            .unwrap_or(DEFAULT_MAX_UNAVAILABLE);
        let nodes = i32::try_from(self.nodes().count()).unwrap_or(i32::MAX);
        Some(PodDisruptionBudget {
            metadata: self.templated_meta(
                &naming::kafka_component(&self.name),
                template.and_then(|template| template.metadata.as_ref()),
            ),
            spec: Some(PodDisruptionBudgetSpec {
                min_available: Some(IntOrString::Int((nodes - max_unavailable).max(0))),
                selector: Some(LabelSelector {
                    match_labels: Some(self.selector()),
                    ..LabelSelector::default()
                }),
                ..PodDisruptionBudgetSpec::default()
            }),
            ..PodDisruptionBudget::default()
        })
    }

    /// Namespaces the cluster operator may connect from ([`operator_namespace_selector`]).
    pub(crate) fn operator_namespace_selector(&self) -> Option<LabelSelector> {
        operator_namespace_selector(&self.config, &self.namespace)
    }

    /// `<cluster>-network-policy-kafka`: the control plane port open to Kafka pods and the
    /// cluster operator, the replication port also to the entity operator, Kafka Exporter and
    /// Cruise Control, the agent port to the cluster operator, each listener to its
    /// `networkPolicyPeers` (everyone when unset), and the metrics and JMX ports when enabled.
    /// `None` when the operator does not generate NetworkPolicies.
    pub fn network_policy(&self) -> Option<NetworkPolicy> {
        if !self.config.network_policy_generation {
            return None;
        }
        let operator = peer(
            StringMap::from([(labels::KIND.to_owned(), "cluster-operator".to_owned())]),
            self.operator_namespace_selector(),
        );
        let kafka = peer(self.selector(), None);
        let mut rules = vec![
            ingress_rule(CONTROL_PLANE_PORT, vec![kafka.clone(), operator.clone()]),
            ingress_rule(
                REPLICATION_PORT,
                vec![
                    operator.clone(),
                    kafka,
                    name_peer(naming::entity_operator_deployment(&self.name)),
                    name_peer(naming::kafka_exporter(&self.name)),
                    name_peer(naming::cruise_control(&self.name)),
                ],
            ),
            ingress_rule(KAFKA_AGENT_PORT, vec![operator]),
        ];
        rules.extend(self.spec.listeners.iter().map(|listener| {
            ingress_rule(
                listener.port,
                listener.network_policy_peers.clone().unwrap_or_default(),
            )
        }));
        if self.spec.metrics_config.is_some() {
            rules.push(ingress_rule(METRICS_PORT, Vec::new()));
        }
        if self.jmx_enabled() {
            rules.push(ingress_rule(JMX_PORT, Vec::new()));
        }
        Some(NetworkPolicy {
            metadata: self.object_meta(
                &naming::kafka_network_policy(&self.name),
                self.labels(),
                StringMap::new(),
            ),
            spec: Some(NetworkPolicySpec {
                pod_selector: Some(LabelSelector {
                    match_labels: Some(self.selector()),
                    ..LabelSelector::default()
                }),
                ingress: Some(rules),
                policy_types: Some(vec!["Ingress".to_owned()]),
                ..NetworkPolicySpec::default()
            }),
        })
    }

    /// `<cluster>-kafka-jmx` with `jmx-username` and `jmx-password` when JMX uses password
    /// authentication: the credentials of `existing` are kept, missing ones generated.
    pub fn jmx_secret(&self, existing: Option<&Secret>) -> Option<Secret> {
        let password_auth = matches!(
            self.spec
                .jmx_options
                .as_ref()
                .and_then(|options| options.authentication.as_ref()),
            Some(KafkaJmxAuthentication::Password(_))
        );
        if !password_auth {
            return None;
        }
        let data = jmx_credentials(existing);
        let template = self
            .kafka_template()
            .and_then(|template| template.jmx_secret.as_ref())
            .and_then(|template| template.metadata.as_ref());
        Some(Secret {
            metadata: self.templated_meta(&naming::kafka_jmx_secret(&self.name), template),
            type_: Some("Opaque".to_owned()),
            data: Some(data),
            ..Secret::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_start_with_a_letter() {
        for _ in 0..50 {
            let credential = random_credential();
            assert_eq!(credential.len(), JMX_CREDENTIAL_LENGTH);
            assert!(credential.starts_with(|c: char| c.is_ascii_alphabetic()));
            assert!(credential.chars().all(|c| c.is_ascii_alphanumeric()));
        }
    }
}
