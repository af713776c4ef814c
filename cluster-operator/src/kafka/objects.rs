//! The objects step: the desired objects are built once by [`desired::build`], applied in
//! Strimzi's order, and then one cleanup pass deletes every object labelled for the cluster's
//! Kafka component that is no longer desired (listener Services and Ingresses, node
//! certificate and JMX Secrets, node ConfigMaps, NetworkPolicy, PodDisruptionBudget,
//! StrimziPodSets, the init ClusterRoleBinding).
//!
//! Each kind is listed once per reconciliation by the component's labels: the list is both
//! what an apply compares with (no read per object) and what the cleanup pass deletes from.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod, Secret, Service};
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::ResourceExt;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::{labels, naming};
use strimzi_operator_common::apply::Applicable;
use strimzi_operator_common::referenced;
use strimzi_operator_common::sync::{Listed, ObjectSync};

use super::{ClusterCas, ReconcileError, Reconciliation};
use crate::bindings::{InitBindingKind, delete_init_binding};
use crate::model::KafkaCluster;
use crate::model::config::ExternalConfiguration;
use crate::model::desired::{self, BuildInputs, CertificateRequest, DesiredObjects};
use crate::model::listeners::{ListenerAddresses, ListenerObjects, ObservedListeners};

/// What the cluster has now of each kind the cleanup pass looks after.
pub(super) struct LiveObjects {
    services: Listed<Service>,
    ingresses: Listed<Ingress>,
    secrets: Listed<Secret>,
    config_maps: Listed<ConfigMap>,
    network_policies: Listed<NetworkPolicy>,
    disruption_budgets: Listed<PodDisruptionBudget>,
    pod_sets: Listed<StrimziPodSet>,
    claims: Listed<PersistentVolumeClaim>,
    /// `<cluster>-cluster-operator-certs` by name, if it exists (not labelled for the
    /// component: read by name).
    operator_secret: BTreeMap<String, Secret>,
}

impl LiveObjects {
    /// The cluster's claims as listed.
    pub(super) fn claims(&self) -> &Listed<PersistentVolumeClaim> {
        &self.claims
    }

    /// The operator's own certificate Secret, if it exists yet.
    pub(super) fn operator_secret(&self) -> Option<&Secret> {
        self.operator_secret.values().next()
    }

    /// The node IDs of the pods the listed StrimziPodSets run with the broker role.
    pub(super) fn broker_node_ids(&self) -> BTreeSet<i32> {
        self.node_ids_with_role(labels::BROKER_ROLE)
    }

    /// The node IDs of the controllers the live StrimziPodSets run.
    pub(super) fn controller_node_ids(&self) -> BTreeSet<i32> {
        self.node_ids_with_role(labels::CONTROLLER_ROLE)
    }

    /// The node IDs each live node ConfigMap's `server.config` lists in
    /// `controller.quorum.voters` (one set per ConfigMap that has the option).
    pub(super) fn configured_voter_ids(&self) -> Vec<BTreeSet<i32>> {
        self.config_maps
            .iter()
            .filter_map(|map| {
                crate::quorum::listed_voter_ids(map.data.as_ref()?.get("server.config")?)
            })
            .collect()
    }

    /// The node IDs of the pods of the live StrimziPodSets labelled with `role_label`
    /// `true`.
    fn node_ids_with_role(&self, role_label: &str) -> BTreeSet<i32> {
        self.pod_sets
            .iter()
            .flat_map(|set| &set.spec.pods)
            .filter_map(|pod| {
                let metadata = pod.0.get("metadata")?;
                let has_role = metadata.get("labels")?.get(role_label)?.as_str()? == "true";
                let name = metadata.get("name")?.as_str()?;
                let id = name.rsplit('-').next()?.parse().ok()?;
                has_role.then_some(id)
            })
            .collect()
    }
}

impl Reconciliation<'_> {
    /// Lists the objects of kind `K` labelled for the cluster's Kafka component.
    async fn listed<K: Applicable>(
        &self,
        cluster: &KafkaCluster,
    ) -> Result<Listed<K>, ReconcileError> {
        let selector = cluster.component_labels().selector_string();
        Ok(Listed::list(&self.client(), [self.namespace.as_str()], &selector).await?)
    }

    /// Lists every kind the objects step compares with and cleans up.
    pub(super) async fn live_objects(
        &self,
        cluster: &KafkaCluster,
    ) -> Result<LiveObjects, ReconcileError> {
        Ok(LiveObjects {
            services: self.listed(cluster).await?,
            ingresses: self.listed(cluster).await?,
            secrets: self.listed(cluster).await?,
            config_maps: self.listed(cluster).await?,
            network_policies: self.listed(cluster).await?,
            disruption_budgets: self.listed(cluster).await?,
            pod_sets: self.listed(cluster).await?,
            claims: self.listed(cluster).await?,
            operator_secret: self
                .by_name(&naming::cluster_operator_certs_secret(&cluster.name))
                .await?,
        })
    }

    /// The Secret `name`, if it exists, keyed by its name.
    async fn by_name(&self, name: &str) -> Result<BTreeMap<String, Secret>, ReconcileError> {
        let secret = self
            .api::<Secret>()
            .get_opt(name)
            .await
            .map_err(|source| ReconcileError::api("get Secret", name, source))?;
        Ok(secret
            .map(|secret| (name.to_owned(), secret))
            .into_iter()
            .collect())
    }

    /// Applies the listener Services, Ingresses, Routes and TLSRoutes and reads back what
    /// Kubernetes assigned to them (load balancer addresses, node ports, route hosts).
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn apply_listeners(
        &self,
        cluster: &KafkaCluster,
        live: &mut LiveObjects,
    ) -> Result<ObservedListeners, ReconcileError> {
        let objects = cluster.listener_objects();
        let mut sync = ObjectSync::new(self.operator.runtime.applier());
        sync.apply(&objects.services, &live.services).await?;
        sync.apply(&objects.ingresses, &live.ingresses).await?;
        // What Kubernetes assigns to them is read from the objects as written.
        if sync.report().wrote::<Service>() {
            live.services = self.listed(cluster).await?;
        }
        if sync.report().wrote::<Ingress>() {
            live.ingresses = self.listed(cluster).await?;
        }
        if !objects.routes.is_empty() && !cluster.config.platform.openshift {
            return Err(ReconcileError::RouteApiUnavailable);
        }
        let mut routes = Vec::new();
        for route in objects.routes.iter().chain(&objects.tls_routes) {
            routes.push(self.apply_dynamic(route).await?);
        }
        Ok(ObservedListeners {
            services: live.services.iter().cloned().collect(),
            ingresses: live.ingresses.iter().cloned().collect(),
            routes,
        })
    }

    /// Reads what the model needs besides the listeners (custom listener certificates,
    /// external logging and metrics, the JMX Secret), issues or reuses every node's
    /// certificate, one node per blocking thread, and builds the desired objects.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn build_desired(
        &self,
        cluster: &KafkaCluster,
        cas: &ClusterCas,
        observed: &ObservedListeners,
        addresses: &ListenerAddresses,
        live: &LiveObjects,
    ) -> Result<DesiredObjects, ReconcileError> {
        let mut custom_secrets = Vec::new();
        for name in cluster.custom_certificate_secret_names() {
            custom_secrets.extend(self.by_name(&name).await?.into_values());
        }
        let custom = cluster.custom_listener_certificates(&custom_secrets)?;
        let external = self.external_configuration(cluster).await?;
        let secrets: BTreeMap<String, Secret> = live
            .secrets
            .iter()
            .map(|secret| (secret.name_any(), secret.clone()))
            .collect();
        let requests = desired::certificate_requests(cluster, addresses, &secrets);
        let operator_request =
            desired::cluster_operator_certificate_request(cluster, &live.operator_secret);
        let trust_pending = self
            .cluster_ca_trust_pending(&cluster.component_labels().selector_string(), cas)
            .await?;
        let issue = |request: CertificateRequest| cas.issue(request, trust_pending);
        // One certificate per blocking task, so that new keys are generated on every core.
        let (issued, (_, operator_certificate)) = futures::try_join!(
            futures::future::try_join_all(requests.into_iter().map(issue)),
            issue(operator_request)
        )?;
        let issued: BTreeMap<_, _> = issued.into_iter().collect();
        let jmx_name = naming::kafka_jmx_secret(&cluster.name);
        let inputs = BuildInputs {
            observed,
            cluster_ca: &cas.cluster.authority,
            clients_ca: &cas.clients.authority,
            node_certificates: &issued,
            cluster_operator_certificate: &operator_certificate,
            external: &external,
            jmx_secret: live.secrets.get(&cluster.namespace, &jmx_name),
            custom_certificates: &custom,
        };
        Ok(desired::build(cluster, &inputs)?)
    }

    /// Whether some Kafka pod still runs with an older cluster CA certificate generation
    /// while the CA keeps older certificates trusted ([`desired::cluster_ca_trust_pending`]).
    /// Lists the pods (by `selector`, the Kafka component's) only when the CA keeps older
    /// certificates.
    pub(super) async fn cluster_ca_trust_pending(
        &self,
        selector: &str,
        cas: &ClusterCas,
    ) -> Result<bool, ReconcileError> {
        let authority = &cas.cluster.authority;
        if authority.trusted_certificates().len() < 2 {
            return Ok(false);
        }
        let pods = self.list::<Pod>(selector).await?;
        Ok(desired::cluster_ca_trust_pending(authority, &pods))
    }

    /// Applies the desired objects in Strimzi's order (the listener objects were applied
    /// before their addresses were read, [`Self::apply_listeners`]).
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn apply_desired(
        &mut self,
        desired: &DesiredObjects,
        live: &LiveObjects,
    ) -> Result<(), ReconcileError> {
        let DesiredObjects {
            trust_bundle,
            cluster_operator_certificate,
            network_policy,
            claims,
            service_account,
            init_cluster_role_binding,
            role,
            role_binding,
            listeners: _,
            node_certificates,
            config_maps,
            // Plain data, not objects: each ConfigMap holds its node's.
            server_configs: _,
            // Plain data, not objects: each StrimziPodSet holds its pool's.
            pods: _,
            jmx_secret,
            pod_disruption_budget,
            pod_sets,
            addresses: _,
            custom_certificates: _,
            warnings: _,
        } = desired;
        let applier = self.operator.runtime.applier().clone();
        let mut sync = ObjectSync::new(&applier);
        sync.apply_read([trust_bundle]).await?;
        let operator_secret = live
            .operator_secret
            .get(&cluster_operator_certificate.name_any());
        applier
            .apply_cached(cluster_operator_certificate, operator_secret)
            .await?;
        sync.apply(network_policy, &live.network_policies).await?;
        self.apply_claims(claims, &live.claims).await?;
        sync.apply_read([service_account]).await?;
        if let Some(binding) = init_cluster_role_binding {
            applier.apply_cluster_scoped(binding).await?;
        }
        sync.apply_read([role]).await?;
        sync.apply_read([role_binding]).await?;
        sync.apply(node_certificates, &live.secrets).await?;
        sync.apply(config_maps, &live.config_maps).await?;
        sync.apply(jmx_secret, &live.secrets).await?;
        sync.apply(pod_disruption_budget, &live.disruption_budgets)
            .await?;
        sync.apply(pod_sets, &live.pod_sets).await?;
        Ok(())
    }

    /// The cleanup pass: deletes every listed object of the cluster's Kafka component that
    /// `desired` does not have, and the init ClusterRoleBinding when it is not desired. So
    /// the per-node Services, Secrets and ConfigMaps of removed nodes go, as do the
    /// StrimziPodSets of removed pools (their pods with them), a NetworkPolicy no longer
    /// generated or a JMX Secret no longer used. PodDisruptionBudgets are left alone while
    /// they are not generated. Claims are not among them: they are only
    /// deleted with `deleteClaim` ([`Self::delete_removed_claims`]).
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn delete_undesired(
        &self,
        cluster: &KafkaCluster,
        desired: &DesiredObjects,
        live: &LiveObjects,
    ) -> Result<(), ReconcileError> {
        let DesiredObjects {
            // Read by name and never deleted: the trust bundle and the operator's certificate
            // are the cluster's, not a node's; the ServiceAccount, Role and RoleBinding go
            // with the Kafka.
            trust_bundle: _,
            cluster_operator_certificate: _,
            service_account: _,
            role: _,
            role_binding: _,
            // Deleted only with `deleteClaim`.
            claims: _,
            network_policy,
            init_cluster_role_binding,
            listeners,
            node_certificates,
            config_maps,
            // Plain data, not objects: each ConfigMap holds its node's.
            server_configs: _,
            // Plain data, not objects: each StrimziPodSet holds its pool's.
            pods: _,
            jmx_secret,
            pod_disruption_budget,
            pod_sets,
            addresses: _,
            custom_certificates: _,
            warnings: _,
        } = desired;
        let ListenerObjects {
            services,
            ingresses,
            // Their kinds are optional APIs, deleted with the Kafka.
            routes: _,
            tls_routes: _,
        } = listeners;
        let mut sync = ObjectSync::new(self.operator.runtime.applier());
        sync.prune(&live.services, services).await?;
        sync.prune(&live.ingresses, ingresses).await?;
        sync.prune(&live.secrets, node_certificates.iter().chain(jmx_secret))
            .await?;
        sync.prune(&live.config_maps, config_maps).await?;
        sync.prune(&live.network_policies, network_policy).await?;
        // Without PodDisruptionBudget generation, existing ones are left alone, as Strimzi
        // leaves them.
        if pod_disruption_budget.is_some() {
            sync.prune(&live.disruption_budgets, pod_disruption_budget)
                .await?;
        }
        sync.prune(&live.pod_sets, pod_sets).await?;
        if init_cluster_role_binding.is_none() {
            let runtime = &self.operator.runtime;
            if delete_init_binding(
                runtime,
                InitBindingKind::KAFKA,
                &cluster.namespace,
                &cluster.name,
            )
            .await?
            {
                tracing::info!("deleted the init ClusterRoleBinding no longer needed");
            }
        }
        Ok(())
    }

    /// The user ConfigMaps the Kafka's logging and metrics configuration refer to.
    async fn external_configuration(
        &self,
        cluster: &KafkaCluster,
    ) -> Result<ExternalConfiguration, ReconcileError> {
        let sources = cluster.external_configuration_sources();
        Ok(ExternalConfiguration {
            logging: self.config_map_value(sources.logging).await?,
            metrics: self.config_map_value(sources.metrics).await?,
        })
    }

    /// The value of one key of a user ConfigMap; `None` when the ConfigMap or key is missing.
    pub(super) async fn config_map_value(
        &self,
        reference: Option<&strimzi_api::common::ExternalConfigurationReference>,
    ) -> Result<Option<String>, ReconcileError> {
        let Some(selector) = reference.and_then(|reference| reference.config_map_key_ref.as_ref())
        else {
            return Ok(None);
        };
        let value = referenced::config_map_value(
            &self.client(),
            &self.namespace,
            &selector.name,
            &selector.key,
        )
        .await?;
        Ok(value.ok())
    }
}
