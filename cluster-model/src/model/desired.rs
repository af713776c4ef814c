//! Every object of the Kafka component in one go: [`build`] runs the model's steps (listener
//! addresses, configuration and its hashes, certificate Secrets, pod sets, claims) on values
//! the caller already read, and returns the objects in the order Strimzi 1.2 applies them. It
//! is the only way objects are built: the reconciler applies what it returns (after issuing
//! the node certificates with [`certificate_requests`] and `leaf::issue_or_reuse`, one node
//! per thread), snapshot tests and the benchmark check it as a whole.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod, Secret, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, Role, RoleBinding};
use kube::Resource;
use serde::Serialize;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_certificate_manager::authority::CertificateAuthority;
use strimzi_certificate_manager::leaf::{
    self, ExistingLeaf, IssueContext, IssuedCertificate, LeafError, LeafSpec,
};

use super::listeners::{ListenerAddresses, ListenerObjects, ObservedListeners};
use super::{KafkaCluster, ModelError, ModelWarning};
use crate::model::config::ExternalConfiguration;
use crate::model::nodes::pods::{CaGenerations, PodInputs};
use crate::model::security::certificates::{
    CustomListenerCertificates, cluster_operator_certificate_spec,
};

/// One node's certificate request: what its certificate must say, and the certificate its
/// Secret holds now, if any.
#[derive(Clone, Debug)]
pub struct CertificateRequest {
    /// Names and validity the certificate needs.
    pub spec: LeafSpec,
    /// The certificate and key in the node's Secret, to be reused while still good.
    pub existing: Option<ExistingLeaf>,
}

/// The certificate request of every node, given the listener addresses (the names brokers
/// are reached by) and the existing node certificate Secrets by name (the pod name).
pub fn certificate_requests(
    cluster: &KafkaCluster,
    addresses: &ListenerAddresses,
    existing: &BTreeMap<String, Secret>,
) -> Vec<CertificateRequest> {
    cluster
        .node_certificate_specs(addresses)
        .into_iter()
        .map(|spec| CertificateRequest {
            existing: existing
                .get(&spec.name)
                .map(|secret| ExistingLeaf::from_secret(secret, &spec.name)),
            spec,
        })
        .collect()
}

/// The certificate request of every running node (`pods`: the pod names the cluster's
/// StrimziPodSets list) whose Secret (among `existing`, by name) holds a readable certificate,
/// with the names that certificate has ([`LeafSpec::kafka_node_as_issued`]): issued with
/// [`issue_certificate`], they keep the running nodes' certificates valid while the Kafka's
/// spec is invalid and the names the nodes should have cannot be worked out. A node whose
/// Secret is missing or unreadable is left out: nothing is issued without its names.
pub fn running_certificate_requests<'a>(
    cluster: &str,
    pods: impl IntoIterator<Item = &'a String>,
    existing: &BTreeMap<String, Secret>,
) -> Vec<CertificateRequest> {
    pods.into_iter()
        .filter_map(|pod| {
            let existing = ExistingLeaf::from_secret(existing.get(pod)?, pod);
            Some(CertificateRequest {
                spec: LeafSpec::kafka_node_as_issued(cluster, pod, &existing)?,
                existing: Some(existing),
            })
        })
        .collect()
}

/// The request of the operator's own client certificate, with the certificate its Secret
/// (`<cluster>-cluster-operator-certs`, among `existing` by name) holds now.
pub fn cluster_operator_certificate_request(
    cluster: &KafkaCluster,
    existing: &BTreeMap<String, Secret>,
) -> CertificateRequest {
    let spec = cluster_operator_certificate_spec();
    CertificateRequest {
        existing: existing
            .get(&strimzi_api::naming::cluster_operator_certs_secret(
                &cluster.name,
            ))
            .map(|secret| ExistingLeaf::from_secret(secret, &spec.name)),
        spec,
    }
}

/// Issues or reuses the certificate of one request with `cluster_ca`: by its name (the pod
/// name, or `cluster-operator`). The reconciler runs it for each request on a thread of its
/// own.
pub fn issue_certificate(
    cluster_ca: &CertificateAuthority,
    request: &CertificateRequest,
    context: &IssueContext<'_>,
) -> Result<(String, IssuedCertificate), LeafError> {
    let issued = leaf::issue_or_reuse(
        cluster_ca,
        &request.spec,
        request.existing.as_ref(),
        context,
    )?;
    Ok((request.spec.name.clone(), issued))
}

/// Issues or reuses the certificate of every request in turn ([`issue_certificate`]), by
/// name.
pub fn issue_certificates(
    cluster_ca: &CertificateAuthority,
    requests: &[CertificateRequest],
    context: &IssueContext<'_>,
) -> Result<BTreeMap<String, IssuedCertificate>, LeafError> {
    requests
        .iter()
        .map(|request| issue_certificate(cluster_ca, request, context))
        .collect()
}

/// Whether some of `pods` (the Kafka pods) still runs with an older cluster CA certificate
/// generation while `cluster_ca` keeps older certificates trusted (its key was replaced): the
/// nodes' and the operator's certificates then stay signed by the old key until every node
/// has restarted trusting the new certificate (`IssueContext::trust_pending`).
pub fn cluster_ca_trust_pending<'a>(
    cluster_ca: &CertificateAuthority,
    pods: impl IntoIterator<Item = &'a Pod>,
) -> bool {
    if cluster_ca.trusted_certificates().len() < 2 {
        return false;
    }
    let generation = cluster_ca.cert_generation().to_string();
    pods.into_iter().any(|pod| {
        pod.metadata.annotations.as_ref().and_then(|annotations| {
            annotations.get(strimzi_api::annotations::CLUSTER_CA_CERT_GENERATION)
        }) != Some(&generation)
    })
}

/// What [`build`] needs besides the resolved cluster.
#[derive(Clone, Debug)]
pub struct BuildInputs<'a> {
    /// The listener objects as Kubernetes has them (with load balancer addresses, node
    /// ports, route hosts).
    pub observed: &'a ObservedListeners,
    /// The cluster CA, which signs the node certificates; its trusted certificates go into
    /// the trust bundle and its generations onto the pods.
    pub cluster_ca: &'a CertificateAuthority,
    /// The clients CA, whose trusted certificates go into the trust bundle and whose
    /// certificate generation goes onto the pods.
    pub clients_ca: &'a CertificateAuthority,
    /// Every node's certificate, issued or reused, by pod name ([`issue_certificates`]).
    pub node_certificates: &'a BTreeMap<String, IssuedCertificate>,
    /// The operator's own client certificate, issued or reused
    /// ([`cluster_operator_certificate_request`]).
    pub cluster_operator_certificate: &'a IssuedCertificate,
    /// External logging and metrics configuration the Kafka refers to.
    pub external: &'a ExternalConfiguration,
    /// The existing JMX Secret, whose credentials are kept.
    pub jmx_secret: Option<&'a Secret>,
    /// The custom listener certificates (`brokerCertChainAndKey`), which every node's
    /// certificate Secret carries and whose thumbprints roll the brokers when they change.
    pub custom_certificates: &'a CustomListenerCertificates,
}

/// Why the objects cannot be built yet or at all.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Some listeners have no address yet (e.g. a load balancer being provisioned).
    #[error("the addresses of listeners {} are not assigned yet", .0.join(", "))]
    ListenersPending(Vec<String>),
    /// No certificate was given for a node.
    #[error("no server certificate was issued for {0}")]
    CertificateMissing(String),
    /// The resources or the configuration they refer to are invalid.
    #[error(transparent)]
    Model(#[from] ModelError),
}

impl BuildError {
    /// Stable reason for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::ListenersPending(_) => "ListenerAddressesPending",
            Self::CertificateMissing(_) => "CertificateMissing",
            Self::Model(error) => error.reason(),
        }
    }
}

/// Every object of the Kafka component, plus the listener addresses and the warnings.
#[derive(Clone, Debug)]
pub struct DesiredObjects {
    /// `<cluster>-trustbundle`.
    pub trust_bundle: Secret,
    /// `<cluster>-cluster-operator-certs`.
    pub cluster_operator_certificate: Secret,
    /// `<cluster>-network-policy-kafka`, unless NetworkPolicies are not generated.
    pub network_policy: Option<NetworkPolicy>,
    /// The nodes' data claims.
    pub claims: Vec<PersistentVolumeClaim>,
    /// `<cluster>-kafka`.
    pub service_account: ServiceAccount,
    /// `strimzi-<namespace>-<cluster>-kafka-init`, when the init container runs.
    pub init_cluster_role_binding: Option<ClusterRoleBinding>,
    /// `<cluster>-kafka`.
    pub role: Role,
    /// `<cluster>-kafka-role`.
    pub role_binding: RoleBinding,
    /// Services, Ingresses, Routes and TLSRoutes of the listeners.
    pub listeners: ListenerObjects,
    /// The per-node certificate Secrets.
    pub node_certificates: Vec<Secret>,
    /// The per-node ConfigMaps.
    pub config_maps: Vec<ConfigMap>,
    /// Each node's `server.config`, by pod name: what its ConfigMap holds, as plain data for
    /// the roller, which compares it with the options the node runs (not an object).
    pub server_configs: BTreeMap<String, String>,
    /// `<cluster>-kafka-jmx`, when JMX uses password authentication.
    pub jmx_secret: Option<Secret>,
    /// `<cluster>-kafka`, unless PodDisruptionBudgets are not generated.
    pub pod_disruption_budget: Option<PodDisruptionBudget>,
    /// One StrimziPodSet per pool.
    pub pod_sets: Vec<StrimziPodSet>,
    /// Each node's pod, by name: what its StrimziPodSet holds, as plain data for the roller,
    /// which compares it with the running pod (not an object of its own).
    pub pods: BTreeMap<String, Pod>,
    /// The listener addresses the objects were built with (for the Kafka status).
    pub addresses: ListenerAddresses,
    /// The custom certificate (PEM) of each listener that has one, by listener name (for
    /// the Kafka status, which shows it instead of the cluster CA's).
    pub custom_certificates: BTreeMap<String, String>,
    /// Warnings of the resources and their configuration.
    pub warnings: Vec<ModelWarning>,
}

/// One object as a manifest: `apiVersion`, `kind` and the object's fields.
fn manifest<K: Resource<DynamicType = ()> + Serialize>(object: &K) -> serde_json::Value {
    let mut value = serde_json::to_value(object).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".to_owned(), K::api_version(&()).into());
        map.insert("kind".to_owned(), K::kind(&()).into());
    }
    value
}

impl DesiredObjects {
    /// Every object as a manifest, in the order Strimzi 1.2 applies them: the trust bundle
    /// and the operator's certificate (CA step), NetworkPolicy, claims, ServiceAccount, init ClusterRoleBinding, Role,
    /// RoleBinding, listener Services, Routes, TLSRoutes and Ingresses, node certificate
    /// Secrets, ConfigMaps, JMX Secret, PodDisruptionBudget and StrimziPodSets.
    pub fn manifests(&self) -> Vec<serde_json::Value> {
        let mut all = vec![
            manifest(&self.trust_bundle),
            manifest(&self.cluster_operator_certificate),
        ];
        all.extend(self.network_policy.iter().map(manifest));
        all.extend(self.claims.iter().map(manifest));
        all.push(manifest(&self.service_account));
        all.extend(self.init_cluster_role_binding.iter().map(manifest));
        all.push(manifest(&self.role));
        all.push(manifest(&self.role_binding));
        all.extend(self.listeners.services.iter().map(manifest));
        all.extend(
            self.listeners
                .routes
                .iter()
                .chain(&self.listeners.tls_routes)
                .map(|route| serde_json::to_value(route).unwrap_or_default()),
        );
        all.extend(self.listeners.ingresses.iter().map(manifest));
        all.extend(self.node_certificates.iter().map(manifest));
        all.extend(self.config_maps.iter().map(manifest));
        all.extend(self.jmx_secret.iter().map(manifest));
        all.extend(self.pod_disruption_budget.iter().map(manifest));
        all.extend(self.pod_sets.iter().map(manifest));
        all
    }
}

/// The node certificate Secrets and the thumbprints by pod name.
fn node_certificates(
    cluster: &KafkaCluster,
    inputs: &BuildInputs<'_>,
) -> Result<(Vec<Secret>, BTreeMap<String, String>), BuildError> {
    let generation = inputs.cluster_ca.cert_generation();
    let mut secrets = Vec::new();
    let mut thumbprints = BTreeMap::new();
    for node in cluster.nodes() {
        let issued = inputs
            .node_certificates
            .get(&node.pod_name)
            .ok_or_else(|| BuildError::CertificateMissing(node.pod_name.clone()))?;
        thumbprints.insert(node.pod_name.clone(), issued.thumbprint());
        let mut data = issued.secret_data();
        data.extend(inputs.custom_certificates.secret_data.clone());
        secrets.push(cluster.node_certificate_secret(&node, data, generation));
    }
    Ok((secrets, thumbprints))
}

/// Builds every object of the Kafka component from the resolved cluster and what the caller
/// read from Kubernetes; fails while listener addresses are pending, when a node has no
/// certificate or when the external configuration is unusable.
pub fn build(
    cluster: &KafkaCluster,
    inputs: &BuildInputs<'_>,
) -> Result<DesiredObjects, BuildError> {
    let listeners = cluster.listener_objects();
    let addresses = cluster.listener_addresses(inputs.observed);
    if !addresses.pending.is_empty() {
        return Err(BuildError::ListenersPending(addresses.pending));
    }
    let (node_certificates, server_cert_hashes) = node_certificates(cluster, inputs)?;
    cluster.validate_external_configuration(inputs.external)?;
    let server_configs = cluster.server_configs(&addresses);
    let config_maps = cluster.config_maps_of(&server_configs, inputs.external);
    let pod_inputs = PodInputs {
        ca_generations: CaGenerations {
            cluster_ca_cert: inputs.cluster_ca.cert_generation(),
            cluster_ca_key: inputs.cluster_ca.key_generation(),
            clients_ca_cert: inputs.clients_ca.cert_generation(),
        },
        server_cert_hashes,
        configuration_hashes: cluster.configuration_hashes(&addresses),
        custom_listener_cert_thumbprints: inputs.custom_certificates.thumbprints_annotation(),
    };
    let pods = cluster.pods(&pod_inputs);
    Ok(DesiredObjects {
        trust_bundle: cluster.trust_bundle_secret(
            &inputs.cluster_ca.trusted_pem_bundle(),
            &inputs.clients_ca.trusted_pem_bundle(),
            &pod_inputs.ca_generations,
        ),
        cluster_operator_certificate: cluster.cluster_operator_secret(
            inputs.cluster_operator_certificate.secret_data(),
            inputs.cluster_ca.cert_generation(),
        ),
        network_policy: cluster.network_policy(),
        claims: cluster.persistent_volume_claims(),
        service_account: cluster.service_account(),
        init_cluster_role_binding: cluster.init_cluster_role_binding(),
        role: cluster.kafka_role(),
        role_binding: cluster.kafka_role_binding(),
        listeners,
        node_certificates,
        config_maps,
        server_configs,
        jmx_secret: cluster.jmx_secret(inputs.jmx_secret),
        pod_disruption_budget: cluster.pod_disruption_budget(),
        pod_sets: cluster.pod_sets_of(&pods),
        pods,
        addresses,
        custom_certificates: inputs.custom_certificates.certificates.clone(),
        warnings: cluster.all_warnings(),
    })
}
