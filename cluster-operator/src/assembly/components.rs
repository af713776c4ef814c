//! The components step, run once the Kafka nodes are ready and rolled: the entity operator
//! and Kafka Exporter. Their client certificates are issued or reused with the cluster CA,
//! their objects built by the model and applied, and one cleanup pass deletes the objects of
//! a component that is no longer asked for (or, for the entity operator, the Roles and
//! RoleBindings left in a namespace it no longer watches). Then their Deployments are
//! checked: while one is not ready the reconciliation ends pending, and a change of the
//! Deployment (watched) wakes it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::ResourceExt;
use strimzi_api::labels;
use strimzi_certificate_manager::leaf::{self, IssueContext, IssuedCertificate};
use strimzi_operator_common::apply::Applicable;

use super::{ClusterCas, ReconcileError, Reconciliation, Waiting, off_the_async_workers};
use crate::model::KafkaCluster;
use crate::model::components::entity_operator::{
    self, EntityOperatorInputs, EntityOperatorObjects,
};
use crate::model::components::kafka_exporter::{self, KafkaExporterObjects};
use crate::model::components::{self, ComponentCertificateRequest};

/// How soon a Kafka whose components are not ready yet is looked at again; a change of their
/// Deployments reconciles it sooner.
const COMPONENTS_RECHECK: Duration = Duration::from_secs(10);

/// The component types whose objects this step owns, for the cleanup pass.
fn owned_types() -> [&'static str; 4] {
    [
        entity_operator::COMPONENT_TYPE,
        entity_operator::TOPIC_OPERATOR_TYPE,
        entity_operator::USER_OPERATOR_TYPE,
        kafka_exporter::COMPONENT_TYPE,
    ]
}

/// The label selector of the objects this step owns for `cluster`.
fn owned_selector(cluster: &str) -> String {
    format!(
        "{}={cluster},{}=Kafka,{} in ({})",
        labels::CLUSTER,
        labels::KIND,
        labels::COMPONENT_TYPE,
        owned_types().join(",")
    )
}

/// The desired objects of both components.
struct DesiredComponents {
    entity_operator: Option<EntityOperatorObjects>,
    kafka_exporter: Option<KafkaExporterObjects>,
}

impl DesiredComponents {
    /// The names of the desired objects of kind `K` in `namespace`.
    fn names<K: Applicable>(&self, namespace: &str, objects: &[&K]) -> Vec<String> {
        objects
            .iter()
            .filter(|object| object.namespace().as_deref() == Some(namespace))
            .map(|object| object.name_any())
            .collect()
    }

    fn deployments(&self) -> Vec<&Deployment> {
        let mut all = Vec::new();
        all.extend(self.entity_operator.iter().map(|eo| &eo.deployment));
        all.extend(self.kafka_exporter.iter().map(|ke| &ke.deployment));
        all
    }
}

impl Reconciliation<'_> {
    /// Issues or reuses the components' client certificates, one per blocking task, keyed by
    /// the name of their Secret. As in Strimzi, a certificate signed by an older generation
    /// of the cluster CA certificate is issued again, so that a CA renewal reaches them.
    async fn component_certificates(
        &self,
        cluster: &KafkaCluster,
        cas: &ClusterCas,
    ) -> Result<BTreeMap<String, IssuedCertificate>, ReconcileError> {
        let generation = cas.cluster.authority.cert_generation().to_string();
        let mut existing = BTreeMap::new();
        for request in components::certificate_requests(cluster, &BTreeMap::new()) {
            let secret = self
                .api::<Secret>()
                .get_opt(&request.secret_name)
                .await
                .map_err(|source| {
                    ReconcileError::api("get Secret", &request.secret_name, source)
                })?;
            let current = secret.filter(|secret| {
                secret
                    .annotations()
                    .get(strimzi_api::annotations::CLUSTER_CA_CERT_GENERATION)
                    == Some(&generation)
            });
            if let Some(secret) = current {
                existing.insert(request.secret_name.clone(), secret);
            }
        }
        let trust_pending = self.cluster_ca_trust_pending(cluster, cas).await?;
        let issue = |request: ComponentCertificateRequest| {
            let authority = cas.cluster.clone();
            let (now, window_open) = (cas.now, cas.window_open);
            off_the_async_workers(move || {
                let context = IssueContext {
                    now,
                    window_open,
                    ca_action: &authority.action,
                    trust_pending,
                };
                leaf::issue_or_reuse(
                    &authority.authority,
                    &request.spec,
                    request.existing.as_ref(),
                    &context,
                )
                .map(|issued| (request.secret_name, issued))
            })
        };
        let issued = futures::future::try_join_all(
            components::certificate_requests(cluster, &existing)
                .into_iter()
                .map(issue),
        )
        .await?;
        Ok(issued.into_iter().collect())
    }

    /// The components step (see the module docs): what is awaited, if anything.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn reconcile_components(
        &self,
        cluster: &KafkaCluster,
        cas: &ClusterCas,
    ) -> Result<Option<Waiting>, ReconcileError> {
        let certificates = self.component_certificates(cluster, cas).await?;
        let authority = &cas.cluster.authority;
        let (topic_secret, _) = entity_operator::topic_operator_certificate(&cluster.name);
        let (user_secret, _) = entity_operator::user_operator_certificate(&cluster.name);
        let (exporter_secret, _) = kafka_exporter::certificate(&cluster.name);
        let desired = DesiredComponents {
            entity_operator: cluster.entity_operator(&EntityOperatorInputs {
                cluster_ca_cert_generation: authority.cert_generation(),
                cluster_ca_key_generation: authority.key_generation(),
                topic_operator_certificate: certificates.get(&topic_secret),
                user_operator_certificate: certificates.get(&user_secret),
            }),
            kafka_exporter: cluster.kafka_exporter(
                certificates.get(&exporter_secret),
                authority.cert_generation(),
                authority.key_generation(),
            ),
        };
        let previously_watched = self.previously_watched_namespaces(cluster).await?;
        self.apply_components(&desired).await?;
        self.delete_undesired_components(cluster, &desired, &previously_watched)
            .await?;
        self.check_components_ready(&desired).await
    }

    /// The namespaces the running entity operator's containers watch (their
    /// `STRIMZI_NAMESPACE`), read from its Deployment: where its Roles and RoleBindings may
    /// have to be deleted.
    async fn previously_watched_namespaces(
        &self,
        cluster: &KafkaCluster,
    ) -> Result<BTreeSet<String>, ReconcileError> {
        let name = strimzi_api::naming::entity_operator_deployment(&cluster.name);
        let deployment = self
            .api::<Deployment>()
            .get_opt(&name)
            .await
            .map_err(|source| ReconcileError::api("get Deployment", &name, source))?;
        Ok(deployment
            .and_then(|deployment| deployment.spec)
            .map(|spec| spec.template.spec.unwrap_or_default().containers)
            .into_iter()
            .flatten()
            .flat_map(|container| container.env.unwrap_or_default())
            .filter(|var| var.name == "STRIMZI_NAMESPACE")
            .filter_map(|var| var.value)
            .filter(|namespace| *namespace != cluster.namespace)
            .collect())
    }

    /// Applies every desired object of both components, the Deployments last.
    async fn apply_components(&self, desired: &DesiredComponents) -> Result<(), ReconcileError> {
        let applier = self.operator.runtime.applier();
        if let Some(eo) = &desired.entity_operator {
            applier.apply(&eo.service_account, None).await?;
            for role in &eo.roles {
                applier.apply(role, None).await?;
            }
            for binding in &eo.role_bindings {
                applier.apply(binding, None).await?;
            }
            if let Some(policy) = &eo.network_policy {
                applier.apply(policy, None).await?;
            }
            for config_map in &eo.config_maps {
                applier.apply(config_map, None).await?;
            }
            for secret in &eo.secrets {
                applier.apply(secret, None).await?;
            }
            applier.apply(&eo.deployment, None).await?;
        }
        if let Some(ke) = &desired.kafka_exporter {
            applier.apply(&ke.service_account, None).await?;
            applier.apply(&ke.secret, None).await?;
            applier.apply(&ke.deployment, None).await?;
        }
        Ok(())
    }

    /// Deletes the objects of the components that are labelled as theirs and not desired, in
    /// the Kafka's namespace and in the namespaces the entity operator watched before.
    async fn delete_undesired_components(
        &self,
        cluster: &KafkaCluster,
        desired: &DesiredComponents,
        previously_watched: &BTreeSet<String>,
    ) -> Result<(), ReconcileError> {
        let selector = owned_selector(&cluster.name);
        let eo = desired.entity_operator.as_ref();
        let ke = desired.kafka_exporter.as_ref();
        let namespace = cluster.namespace.as_str();
        let mut service_accounts: Vec<&ServiceAccount> = Vec::new();
        service_accounts.extend(eo.map(|eo| &eo.service_account));
        service_accounts.extend(ke.map(|ke| &ke.service_account));
        let mut secrets: Vec<&Secret> = eo.iter().flat_map(|eo| &eo.secrets).collect();
        secrets.extend(ke.map(|ke| &ke.secret));
        let config_maps: Vec<&ConfigMap> = eo.iter().flat_map(|eo| &eo.config_maps).collect();
        let policies: Vec<&NetworkPolicy> = eo.iter().flat_map(|eo| &eo.network_policy).collect();
        let deployments = desired.deployments();
        self.delete_unwanted_components::<Deployment>(
            namespace,
            &selector,
            desired.names(namespace, &deployments),
        )
        .await?;
        self.delete_unwanted_components::<ServiceAccount>(
            namespace,
            &selector,
            desired.names(namespace, &service_accounts),
        )
        .await?;
        self.delete_unwanted_components::<Secret>(
            namespace,
            &selector,
            desired.names(namespace, &secrets),
        )
        .await?;
        self.delete_unwanted_components::<ConfigMap>(
            namespace,
            &selector,
            desired.names(namespace, &config_maps),
        )
        .await?;
        self.delete_unwanted_components::<NetworkPolicy>(
            namespace,
            &selector,
            desired.names(namespace, &policies),
        )
        .await?;
        let roles: Vec<&Role> = eo.iter().flat_map(|eo| &eo.roles).collect();
        let bindings: Vec<&RoleBinding> = eo.iter().flat_map(|eo| &eo.role_bindings).collect();
        let mut namespaces: BTreeSet<&str> =
            previously_watched.iter().map(String::as_str).collect();
        namespaces.insert(namespace);
        for namespace in namespaces {
            self.delete_unwanted_components::<Role>(
                namespace,
                &selector,
                desired.names(namespace, &roles),
            )
            .await?;
            self.delete_unwanted_components::<RoleBinding>(
                namespace,
                &selector,
                desired.names(namespace, &bindings),
            )
            .await?;
        }
        Ok(())
    }

    async fn delete_unwanted_components<K: Applicable>(
        &self,
        namespace: &str,
        selector: &str,
        keep: Vec<String>,
    ) -> Result<(), ReconcileError> {
        let deleted = self
            .operator
            .runtime
            .applier()
            .delete_unwanted::<K>(namespace, selector, &keep)
            .await?;
        for name in deleted {
            tracing::info!(kind = %K::kind(&()), namespace, name, "deleted an object of a component no longer desired");
        }
        Ok(())
    }

    /// Whether every desired Deployment has rolled out and its pod is ready; if not, what is
    /// awaited.
    async fn check_components_ready(
        &self,
        desired: &DesiredComponents,
    ) -> Result<Option<Waiting>, ReconcileError> {
        let mut not_ready = Vec::new();
        for wanted in desired.deployments() {
            let name = wanted.name_any();
            let live = self
                .api::<Deployment>()
                .get_opt(&name)
                .await
                .map_err(|source| ReconcileError::api("get Deployment", &name, source))?;
            if !live.as_ref().is_some_and(deployment_ready) {
                not_ready.push(name);
            }
        }
        Ok((!not_ready.is_empty()).then(|| Waiting {
            reason: "WaitingForDeployments",
            message: format!(
                "waiting for Deployment(s) {} to be ready",
                not_ready.join(", ")
            ),
            recheck_after: COMPONENTS_RECHECK,
        }))
    }
}

/// Whether a Deployment's controller has seen its latest spec and every replica runs it and
/// is ready.
fn deployment_ready(deployment: &Deployment) -> bool {
    let wanted = deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.replicas)
        .unwrap_or(1);
    deployment.status.as_ref().is_some_and(|status| {
        status.observed_generation >= deployment.metadata.generation
            && status.updated_replicas.unwrap_or(0) == wanted
            && status.ready_replicas.unwrap_or(0) == wanted
            && status.replicas.unwrap_or(0) == wanted
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn deployment(generation: i64, status: serde_json::Value) -> Deployment {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c-entity-operator", "generation": generation},
            "spec": {"replicas": 1, "selector": {}, "template": {}},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn a_deployment_is_ready_once_its_new_pod_is() {
        let rolled = serde_json::json!({
            "observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
        });
        assert!(deployment_ready(&deployment(2, rolled.clone())));
        assert!(!deployment_ready(&deployment(3, rolled)));
        let rolling = serde_json::json!({
            "observedGeneration": 2, "replicas": 2, "updatedReplicas": 1, "readyReplicas": 1,
        });
        assert!(!deployment_ready(&deployment(2, rolling)));
        let starting =
            serde_json::json!({"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1});
        assert!(!deployment_ready(&deployment(2, starting)));
    }

    #[test]
    fn the_cleanup_selector_names_every_component_type() {
        assert_eq!(
            owned_selector("c"),
            "strimzi.io/cluster=c,strimzi.io/kind=Kafka,strimzi.io/component-type in \
             (entity-operator,entity-topic-operator,entity-user-operator,kafka-exporter)"
        );
    }
}
