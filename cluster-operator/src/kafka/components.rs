//! The components step, run once the Kafka nodes are ready and rolled: the entity operator,
//! Kafka Exporter and Cruise Control. Each kind of object they own is listed once (by the cluster's labels and
//! the components' types) in the Kafka's namespace, Roles and RoleBindings also in every
//! namespace the entity operator watches or watched: the lists are what applies compare with
//! (no read per object), where the existing certificates come from, and what the cleanup pass
//! deletes from. The certificates are issued or reused with the cluster CA, the objects built
//! by the model and applied; then the objects of a component no longer asked for (or the
//! Roles and RoleBindings left in a namespace no longer watched) are deleted, and the
//! Deployments checked: while one is not ready the reconciliation ends pending, and a change of
//! a Deployment (watched) wakes it. An entity operator refused for watching another namespace
//! ([`KafkaCluster::check_entity_operator_namespaces`]) is removed that way, and the step
//! then fails with the refusal.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::ResourceExt;
use strimzi_api::labels;
use strimzi_certificate_manager::leaf::IssuedCertificate;
use strimzi_operator_common::sync::{Listed, ObjectSync, SyncReport};

use super::{ClusterCas, ReconcileError, Reconciliation, Waiting};
use crate::model::components::cruise_control::{self, CruiseControlInputs, CruiseControlObjects};
use crate::model::components::entity_operator::{
    self, EntityOperatorInputs, EntityOperatorObjects,
};
use crate::model::components::kafka_exporter::{self, KafkaExporterObjects};
use crate::model::components::{self, ComponentCertificateRequest};
use crate::model::{KafkaCluster, ModelError};
use crate::readiness::{deployment_ready, wanted_replicas};

/// How soon a Kafka whose components are not ready yet is looked at again; a change of their
/// Deployments reconciles it sooner.
const COMPONENTS_RECHECK: Duration = Duration::from_secs(10);

/// The component types whose objects this step owns, for the cleanup pass.
fn owned_types() -> [&'static str; 5] {
    [
        entity_operator::COMPONENT_TYPE,
        components::TOPIC_OPERATOR_TYPE,
        entity_operator::USER_OPERATOR_TYPE,
        kafka_exporter::COMPONENT_TYPE,
        cruise_control::COMPONENT_TYPE,
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

/// What this step owns now, one field per kind, each listed once in this reconciliation.
struct ListedComponents {
    deployments: Listed<Deployment>,
    services: Listed<Service>,
    service_accounts: Listed<ServiceAccount>,
    secrets: Listed<Secret>,
    config_maps: Listed<ConfigMap>,
    network_policies: Listed<NetworkPolicy>,
    roles: Listed<Role>,
    role_bindings: Listed<RoleBinding>,
}

/// The desired objects of every component.
struct DesiredComponents {
    entity_operator: Option<EntityOperatorObjects>,
    kafka_exporter: Option<KafkaExporterObjects>,
    cruise_control: Option<CruiseControlObjects>,
}

/// The step's desired set: the desired objects of every component, one field per kind the
/// step owns (the fields of [`ListedComponents`]).
#[derive(Default)]
struct ComponentKinds<'a> {
    deployments: Vec<&'a Deployment>,
    services: Vec<&'a Service>,
    service_accounts: Vec<&'a ServiceAccount>,
    secrets: Vec<&'a Secret>,
    config_maps: Vec<&'a ConfigMap>,
    network_policies: Vec<&'a NetworkPolicy>,
    roles: Vec<&'a Role>,
    role_bindings: Vec<&'a RoleBinding>,
}

impl DesiredComponents {
    /// The desired objects by kind; each component's objects are destructured whole, so an
    /// object added to a component and not sorted here fails to compile.
    fn by_kind(&self) -> ComponentKinds<'_> {
        let mut kinds = ComponentKinds::default();
        if let Some(EntityOperatorObjects {
            service_account,
            roles,
            role_bindings,
            network_policy,
            config_maps,
            secrets,
            deployment,
        }) = &self.entity_operator
        {
            kinds.service_accounts.push(service_account);
            kinds.roles.extend(roles);
            kinds.role_bindings.extend(role_bindings);
            kinds.network_policies.extend(network_policy);
            kinds.config_maps.extend(config_maps);
            kinds.secrets.extend(secrets);
            kinds.deployments.push(deployment);
        }
        if let Some(KafkaExporterObjects {
            service_account,
            secret,
            deployment,
        }) = &self.kafka_exporter
        {
            kinds.service_accounts.push(service_account);
            kinds.secrets.push(secret);
            kinds.deployments.push(deployment);
        }
        if let Some(CruiseControlObjects {
            service_account,
            service,
            config_map,
            secrets,
            network_policy,
            deployment,
        }) = &self.cruise_control
        {
            kinds.service_accounts.push(service_account);
            kinds.services.push(service);
            kinds.config_maps.push(config_map);
            kinds.secrets.extend(secrets);
            kinds.network_policies.extend(network_policy);
            kinds.deployments.push(deployment);
        }
        kinds
    }
}

impl ComponentKinds<'_> {
    /// Every namespace the desired Roles and RoleBindings are in.
    fn namespaces(&self) -> BTreeSet<String> {
        let roles = self.roles.iter().filter_map(|role| role.namespace());
        let bindings = self
            .role_bindings
            .iter()
            .filter_map(|binding| binding.namespace());
        roles.chain(bindings).collect()
    }
}

/// Content of the user's objects Cruise Control's model reads.
#[derive(Default)]
struct CruiseControlConfiguration {
    api_users: Option<String>,
    metrics: Option<String>,
}

/// The namespaces the entity operator's containers watch (their `STRIMZI_NAMESPACE`), as its
/// listed Deployment says: where its Roles and RoleBindings may have to be deleted.
fn watched_namespaces(deployments: &Listed<Deployment>) -> BTreeSet<String> {
    deployments
        .iter()
        .filter_map(|deployment| deployment.spec.as_ref()?.template.spec.as_ref())
        .flat_map(|pod| &pod.containers)
        .flat_map(|container| container.env.iter().flatten())
        .filter(|var| var.name == "STRIMZI_NAMESPACE")
        .filter_map(|var| var.value.clone())
        .collect()
}

impl Reconciliation<'_> {
    /// Lists what this step owns: every kind in the Kafka's namespace, Roles and RoleBindings
    /// also in the namespaces the entity operator watched and will watch.
    async fn listed_components(
        &self,
        cluster: &KafkaCluster,
        desired_namespaces: &BTreeSet<String>,
    ) -> Result<ListedComponents, ReconcileError> {
        let selector = owned_selector(&cluster.name);
        let client = self.client();
        let own = [cluster.namespace.as_str()];
        let deployments = Listed::list(&client, own, &selector).await?;
        let mut rbac_namespaces = watched_namespaces(&deployments);
        rbac_namespaces.extend(desired_namespaces.iter().cloned());
        rbac_namespaces.insert(cluster.namespace.clone());
        let rbac = rbac_namespaces.iter().map(String::as_str);
        Ok(ListedComponents {
            services: Listed::list(&client, own, &selector).await?,
            service_accounts: Listed::list(&client, own, &selector).await?,
            secrets: Listed::list(&client, own, &selector).await?,
            config_maps: Listed::list(&client, own, &selector).await?,
            network_policies: Listed::list(&client, own, &selector).await?,
            roles: Listed::list(&client, rbac.clone(), &selector).await?,
            role_bindings: Listed::list(&client, rbac, &selector).await?,
            deployments,
        })
    }

    /// Issues or reuses the components' client certificates, one per blocking task, keyed by
    /// the name of their Secret. As in Strimzi, a certificate signed by an older generation
    /// of the cluster CA certificate is issued again, so that a CA renewal reaches them.
    async fn component_certificates(
        &self,
        cluster: &KafkaCluster,
        cas: &ClusterCas,
        secrets: &Listed<Secret>,
    ) -> Result<BTreeMap<String, IssuedCertificate>, ReconcileError> {
        let generation = cas.cluster.authority.cert_generation().to_string();
        let current: BTreeMap<String, Secret> = secrets
            .iter()
            .filter(|secret| {
                secret.namespace().as_ref() == Some(&cluster.namespace)
                    && secret
                        .annotations()
                        .get(strimzi_api::annotations::CLUSTER_CA_CERT_GENERATION)
                        == Some(&generation)
            })
            .map(|secret| (secret.name_any(), secret.clone()))
            .collect();
        let trust_pending = self
            .cluster_ca_trust_pending(&cluster.component_labels().selector_string(), cas)
            .await?;
        let issue = |component: ComponentCertificateRequest| async move {
            let (_, issued) = cas.issue(component.request, trust_pending).await?;
            Ok::<_, ReconcileError>((component.secret_name, issued))
        };
        let issued = futures::future::try_join_all(
            components::certificate_requests(cluster, &current)
                .into_iter()
                .map(issue),
        )
        .await?;
        Ok(issued.into_iter().collect())
    }

    /// What Cruise Control's objects need from the user's own objects: the extra API users
    /// (the Secret `apiUsers` refers to, which must exist and be valid) and the metrics
    /// ConfigMap's content.
    async fn cruise_control_configuration(
        &self,
        cluster: &KafkaCluster,
    ) -> Result<CruiseControlConfiguration, ReconcileError> {
        let Some(spec) = &cluster.kafka.spec.cruise_control else {
            return Ok(CruiseControlConfiguration::default());
        };
        let api_users = match cruise_control::user_api_users_reference(spec) {
            Some((name, key)) => {
                let secret = self
                    .api::<Secret>()
                    .get_opt(&name)
                    .await
                    .map_err(|source| ReconcileError::api("get Secret", &name, source))?;
                let content = secret
                    .and_then(|secret| secret.data)
                    .and_then(|mut data| data.remove(&key))
                    .and_then(|bytes| String::from_utf8(bytes.0).ok())
                    .ok_or_else(|| {
                        ModelError::InvalidConfiguration(format!(
                            "The Cruise Control API users refer to Secret {name} with key {key}, \
                             which does not exist"
                        ))
                    })?;
                cruise_control::validate_user_api_users(&content)?;
                Some(content)
            }
            None => None,
        };
        let metrics = match &spec.metrics_config {
            Some(strimzi_api::common::MetricsConfig::JmxPrometheusExporter(exporter)) => {
                let metrics = self.config_map_value(exporter.value_from.as_ref()).await?;
                if metrics.is_none() {
                    return Err(ModelError::InvalidConfiguration(
                        "The ConfigMap of spec.cruiseControl.metricsConfig does not exist or \
                         lacks the key it names"
                            .to_owned(),
                    )
                    .into());
                }
                metrics
            }
            _ => None,
        };
        Ok(CruiseControlConfiguration { api_users, metrics })
    }

    /// The components step (see the module docs): what is awaited, if anything.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn reconcile_components(
        &self,
        cluster: &KafkaCluster,
        cas: &ClusterCas,
    ) -> Result<Option<Waiting>, ReconcileError> {
        // The namespaces come from the spec alone, so the model is built twice: once without
        // certificates to know where to list, once with them.
        let unsigned = cluster
            .entity_operator(&EntityOperatorInputs {
                cluster_ca_cert_generation: 0,
                cluster_ca_key_generation: 0,
                topic_operator_certificate: None,
                user_operator_certificate: None,
            })
            .ok()
            .flatten();
        let namespaces = DesiredComponents {
            entity_operator: unsigned,
            kafka_exporter: None,
            cruise_control: None,
        }
        .by_kind()
        .namespaces();
        let listed = self.listed_components(cluster, &namespaces).await?;
        let certificates = self
            .component_certificates(cluster, cas, &listed.secrets)
            .await?;
        let authority = &cas.cluster.authority;
        let (topic_secret, _) = entity_operator::topic_operator_certificate(&cluster.name);
        let (user_secret, _) = entity_operator::user_operator_certificate(&cluster.name);
        let (exporter_secret, _) = kafka_exporter::certificate(&cluster.name);
        let (cruise_control_secret, _) = cruise_control::certificate(cluster);
        let cruise_control_config = self.cruise_control_configuration(cluster).await?;
        let listed_secret = |name: String| listed.secrets.get(&cluster.namespace, &name);
        // A refused entity operator is removed like one no longer asked for, and the
        // refusal reported once everything else is done, as Strimzi does.
        let (entity_operator, refusal) = match cluster.entity_operator(&EntityOperatorInputs {
            cluster_ca_cert_generation: authority.cert_generation(),
            cluster_ca_key_generation: authority.key_generation(),
            topic_operator_certificate: certificates.get(&topic_secret),
            user_operator_certificate: certificates.get(&user_secret),
        }) {
            Ok(objects) => (objects, None),
            Err(refusal) => (None, Some(refusal)),
        };
        let desired = DesiredComponents {
            entity_operator,
            kafka_exporter: cluster.kafka_exporter(
                certificates.get(&exporter_secret),
                authority.cert_generation(),
                authority.key_generation(),
            ),
            cruise_control: cluster.cruise_control(&CruiseControlInputs {
                certificate: certificates.get(&cruise_control_secret),
                cluster_ca_cert_generation: authority.cert_generation(),
                cluster_ca_key_generation: authority.key_generation(),
                api_secret: listed_secret(strimzi_api::naming::cruise_control_api_secret(
                    &cluster.name,
                )),
                topic_operator_api_secret: listed_secret(
                    strimzi_api::naming::entity_topic_operator_cc_api_secret(&cluster.name),
                ),
                user_api_users: cruise_control_config.api_users.as_deref(),
                metrics: cruise_control_config.metrics.as_deref(),
            }),
        };
        let kinds = desired.by_kind();
        let report = self.sync_components(&kinds, &listed).await?;
        if let Some(refusal) = refusal {
            return Err(refusal.into());
        }
        Ok(check_components_ready(
            &kinds.deployments,
            &listed.deployments,
            report.wrote::<Deployment>(),
        ))
    }

    /// Applies every desired object of the components, the Deployments last, then deletes
    /// the listed objects that are not desired: those of a component no longer asked for,
    /// and Roles and RoleBindings in namespaces no longer watched.
    async fn sync_components(
        &self,
        desired: &ComponentKinds<'_>,
        listed: &ListedComponents,
    ) -> Result<SyncReport, ReconcileError> {
        let ComponentKinds {
            deployments,
            services,
            service_accounts,
            secrets,
            config_maps,
            network_policies,
            roles,
            role_bindings,
        } = desired;
        let ListedComponents {
            deployments: listed_deployments,
            services: listed_services,
            service_accounts: listed_service_accounts,
            secrets: listed_secrets,
            config_maps: listed_config_maps,
            network_policies: listed_network_policies,
            roles: listed_roles,
            role_bindings: listed_role_bindings,
        } = listed;
        let mut sync = ObjectSync::new(self.operator.runtime.applier());
        sync.apply(service_accounts.iter().copied(), listed_service_accounts)
            .await?;
        sync.apply(services.iter().copied(), listed_services)
            .await?;
        sync.apply(roles.iter().copied(), listed_roles).await?;
        sync.apply(role_bindings.iter().copied(), listed_role_bindings)
            .await?;
        sync.apply(network_policies.iter().copied(), listed_network_policies)
            .await?;
        sync.apply(config_maps.iter().copied(), listed_config_maps)
            .await?;
        sync.apply(secrets.iter().copied(), listed_secrets).await?;
        sync.apply(deployments.iter().copied(), listed_deployments)
            .await?;
        sync.prune(listed_deployments, deployments.iter().copied())
            .await?;
        sync.prune(listed_service_accounts, service_accounts.iter().copied())
            .await?;
        sync.prune(listed_services, services.iter().copied())
            .await?;
        sync.prune(listed_secrets, secrets.iter().copied()).await?;
        sync.prune(listed_config_maps, config_maps.iter().copied())
            .await?;
        sync.prune(listed_network_policies, network_policies.iter().copied())
            .await?;
        sync.prune(listed_roles, roles.iter().copied()).await?;
        sync.prune(listed_role_bindings, role_bindings.iter().copied())
            .await?;
        Ok(sync.finish())
    }
}

/// Whether every desired Deployment has rolled out and its pod is ready, from the listed
/// Deployments; if not, or if a Deployment was just written, what is awaited.
fn check_components_ready(
    desired: &[&Deployment],
    listed: &Listed<Deployment>,
    written: bool,
) -> Option<Waiting> {
    let not_ready: Vec<String> = desired
        .iter()
        .filter(|wanted| {
            written
                || !listed
                    .copy_of(wanted)
                    .is_some_and(|live| deployment_ready(live, wanted_replicas(live)))
        })
        .map(|wanted| wanted.name_any())
        .collect();
    (!not_ready.is_empty()).then(|| Waiting {
        reason: "WaitingForDeployments",
        message: format!(
            "waiting for Deployment(s) {} to be ready",
            not_ready.join(", ")
        ),
        recheck_after: COMPONENTS_RECHECK,
        stalled: false,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_cleanup_selector_names_every_component_type() {
        assert_eq!(
            owned_selector("c"),
            "strimzi.io/cluster=c,strimzi.io/kind=Kafka,strimzi.io/component-type in \
             (entity-operator,entity-topic-operator,entity-user-operator,kafka-exporter,\
             cruise-control)"
        );
    }
}
