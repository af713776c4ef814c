//! The KafkaConnect controller: runs Kafka Connect clusters from the model of
//! [`crate::model::connect`], and the KafkaConnector controller ([`connector`]) that manages
//! their connectors through the REST API ([`rest`]).
//!
//! A reconciliation reads what the model needs (the Secrets of `spec.tls`, the logging and
//! metrics ConfigMaps), applies every object, deletes what it labelled for the cluster and no
//! longer wants (a trusted certificates or JMX Secret, a NetworkPolicy, a Dockerfile
//! ConfigMap),
//! replaces one worker at a time whose definition changed (only while the others are ready),
//! and reports `Reconciling` with `WaitingForPods` until every worker of the current
//! definition is ready (`NotReady` when one of them is stuck: its image cannot be pulled, it
//! keeps crashing); then it asks the REST API for the connector plugins (`status.connectorPlugins`)
//! and, with `strimzi.io/use-connector-resources: "true"`, removes the connectors no
//! KafkaConnector describes. Owner references make deleting the KafkaConnect delete
//! everything. With `spec.build` the workers' image is built first ([`build`]): the
//! reconciliation reports `ConnectBuildRunning` while the builder pod runs (its changes wake
//! the controller), and the workers change only once the image is pushed.

mod build;
pub mod connector;
#[cfg(test)]
mod decisions;
pub mod mirror_maker2;
pub mod rest;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference, Pod, Secret};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{Api, DeleteParams, ListParams};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use strimzi_api::annotations;
use strimzi_api::common::MetricsConfig;
use strimzi_api::connect::{ConnectorPlugin, KafkaConnect, KafkaConnectStatus};
use strimzi_api::connector::KafkaConnector;
use strimzi_api::labels;
use strimzi_api::mirror_maker2::KafkaMirrorMaker2;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::apply::ApplyError;
use strimzi_operator_common::cache::CacheError;
use strimzi_operator_common::controller::{ControllerBuilder, Reconciled, Reconciler};
use strimzi_operator_common::events::Severity;
use strimzi_operator_common::kafka::HostResolution;
use strimzi_operator_common::labels::selector_string;
use strimzi_operator_common::referenced;
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_operator_common::sync::{Listed, ObjectSync};

use crate::bindings::{InitBindingKind, delete_init_binding};
use crate::config::ClusterOperatorConfig;
use crate::model::connect::build::ConnectBuild;
use crate::model::connect::{
    ConnectCluster, ConnectInputs, ConnectObjects, external_logging_reference, jmx_secret_name,
};
use crate::model::nodes::pods::definition_revisions;
use crate::model::{ModelConfig, ModelError};
use build::BuildProgress;
use rest::{ConnectApi, RestError, api_host};

/// How soon a cluster waiting for its workers is looked at again (a StrimziPodSet's ready
/// count changing wakes it sooner).
const PODS_RECHECK: Duration = Duration::from_secs(10);

/// Why a KafkaConnect could not be reconciled.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The spec cannot be turned into a cluster.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// An object could not be applied or deleted.
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// The API server could not be asked.
    #[error(transparent)]
    Api(#[from] ApiCallError),
    /// The REST API refused or failed a call.
    #[error(transparent)]
    Rest(#[from] RestError),
    /// A pod with the builder's name exists that this KafkaConnect does not own.
    #[error(
        "pod {pod} exists but was not created for this KafkaConnect: it is neither replaced nor \
         deleted; remove it so that the build can run"
    )]
    BuilderPodNotOurs {
        /// The pod.
        pod: String,
    },
}

impl ErrorReason for ConnectError {
    fn reason(&self) -> &'static str {
        match self {
            Self::Model(error) => error.reason(),
            Self::Apply(error) => error.reason(),
            Self::Api(_) => "KubernetesApiError",
            Self::Rest(error) => error.reason(),
            Self::BuilderPodNotOurs { .. } => "ConnectBuildPodConflict",
        }
    }

    /// A Secret or ConfigMap the spec names may appear later, so only the version and what
    /// the spec refuses outright wait for a change of the KafkaConnect; the rest is retried
    /// with backoff.
    fn is_permanent(&self) -> bool {
        matches!(
            self,
            Self::Model(ModelError::UnsupportedKafkaVersion(_) | ModelError::InvalidResource(_))
        )
    }
}

/// Reconciles KafkaConnects.
pub struct ConnectReconciler {
    runtime: OperatorRuntime,
    model: ModelConfig,
    host_resolution: HostResolution,
    call_timeout: Duration,
    /// When a failed image build is tried again: at the periodic reconciliation, as Strimzi
    /// tries it.
    build_retry: Duration,
}

/// The selector of every object the operator makes for Connect clusters.
fn owned_selector() -> String {
    format!("{}=KafkaConnect", labels::KIND)
}

impl ConnectReconciler {
    /// The KafkaConnect controller on `runtime`, woken by changes of the StrimziPodSets it
    /// owns (their ready counts) and of the KafkaConnectors that name a KafkaConnect.
    pub fn controller(
        runtime: &OperatorRuntime,
        config: &ClusterOperatorConfig,
    ) -> Result<BoxFuture<'static, ()>, CacheError> {
        ControllerBuilder::new(runtime, Self::new(runtime, config))
            .concurrency(config.concurrency)
            .owns_metadata::<StrimziPodSet>(&owned_selector())
            // A builder pod progressing, finishing or going.
            .owns_metadata::<Pod>(&build::builder_pods_selector())
            // A KafkaConnector created or deleted: its connector may have to go.
            .watches_metadata::<KafkaConnector, _>(labels::CLUSTER, |connector| {
                let namespace = connector.metadata.namespace.as_ref()?;
                let connect = connector.metadata.labels.as_ref()?.get(labels::CLUSTER)?;
                Some(ObjectRef::new(connect).within(namespace))
            })
            .build()
    }

    /// The reconciler's steps, shared with the KafkaMirrorMaker2 controller.
    pub(crate) fn new(runtime: &OperatorRuntime, config: &ClusterOperatorConfig) -> Self {
        Self {
            runtime: runtime.clone(),
            model: config.model.clone(),
            host_resolution: config.kafka_host_resolution,
            call_timeout: config.rest_call_timeout(),
            build_retry: config.operator.full_reconciliation_interval,
        }
    }

    fn api<K>(&self, namespace: &str) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.runtime.client().clone(), namespace)
    }

    /// The value of `key` in ConfigMap `name`, if both exist.
    async fn config_map_value(
        &self,
        namespace: &str,
        name: &str,
        key: &str,
    ) -> Result<Option<String>, ConnectError> {
        let value =
            referenced::config_map_value(self.runtime.client(), namespace, name, key).await?;
        Ok(value.ok())
    }

    /// What the model needs from the user's Secrets and ConfigMaps.
    pub(crate) async fn inputs(
        &self,
        cluster: &ConnectCluster,
    ) -> Result<ConnectInputs, ConnectError> {
        let namespace = &cluster.namespace;
        let mut inputs = ConnectInputs::default();
        for source in cluster.trusted_certificate_sources() {
            if inputs
                .trusted_certificate_secrets
                .contains_key(&source.secret_name)
            {
                continue;
            }
            let secret = self
                .api::<Secret>(namespace)
                .get_opt(&source.secret_name)
                .await
                .map_err(|error| {
                    ApiCallError::of::<Secret>("get", namespace, &source.secret_name, error)
                })?;
            if let Some(secret) = secret {
                inputs
                    .trusted_certificate_secrets
                    .insert(source.secret_name.clone(), secret.data.unwrap_or_default());
            }
        }
        if cluster.spec.jmx_options.is_some() {
            let name = jmx_secret_name(&cluster.component_name);
            inputs.jmx_secret = self
                .api::<Secret>(namespace)
                .get_opt(&name)
                .await
                .map_err(|error| ApiCallError::of::<Secret>("get", namespace, &name, error))?;
        }
        if let Some((name, key)) = external_logging_reference(cluster.spec.logging.as_ref()) {
            inputs.external_logging = self.config_map_value(namespace, &name, &key).await?;
        }
        if let Some(MetricsConfig::JmxPrometheusExporter(exporter)) = &cluster.spec.metrics_config
            && let Some(reference) = exporter
                .value_from
                .as_ref()
                .and_then(|value_from| value_from.config_map_key_ref.as_ref())
        {
            inputs.external_metrics = self
                .config_map_value(namespace, &reference.name, &reference.key)
                .await?;
        }
        Ok(inputs)
    }

    /// Applies every object but the StrimziPodSet (the init ClusterRoleBinding only with a
    /// topology-label rack, deleting it otherwise), then deletes the Secrets, ConfigMaps and
    /// NetworkPolicies labelled for the cluster that are no longer wanted.
    pub(crate) async fn apply_objects(
        &self,
        cluster: &ConnectCluster,
        objects: &ConnectObjects,
    ) -> Result<(), ConnectError> {
        let ConnectObjects {
            service_account,
            role,
            role_binding,
            trusted_certificates,
            config_map,
            jmx_secret,
            api_service,
            headless_service,
            network_policy,
            pod_disruption_budget,
            // Applied once the workers may change ([`Self::run_workers`]).
            pod_set: _,
            init_cluster_role_binding,
            warnings: _,
        } = objects;
        let selector = selector_string(&cluster.selector());
        let client = self.runtime.client();
        let namespace = [cluster.namespace.as_str()];
        let listed_secrets: Listed<Secret> = Listed::list(client, namespace, &selector).await?;
        let listed_config_maps: Listed<ConfigMap> =
            Listed::list(client, namespace, &selector).await?;
        let listed_policies: Listed<NetworkPolicy> =
            Listed::list(client, namespace, &selector).await?;
        let secrets = || trusted_certificates.iter().chain(jmx_secret);
        let config_maps = || std::iter::once(config_map);
        let mut sync = ObjectSync::new(self.runtime.applier());
        sync.apply_read([service_account]).await?;
        sync.apply_read([role]).await?;
        sync.apply_read([role_binding]).await?;
        match init_cluster_role_binding {
            Some(binding) => {
                self.runtime.applier().apply_cluster_scoped(binding).await?;
            }
            None => {
                let kind = if cluster.kind == KafkaMirrorMaker2::kind(&()) {
                    InitBindingKind::MIRROR_MAKER_2
                } else {
                    InitBindingKind::CONNECT
                };
                if delete_init_binding(&self.runtime, kind, &cluster.namespace, &cluster.name)
                    .await?
                {
                    tracing::info!("deleted the init ClusterRoleBinding no longer needed");
                }
            }
        }
        sync.apply(secrets(), &listed_secrets).await?;
        sync.apply(config_maps(), &listed_config_maps).await?;
        sync.apply_read([api_service, headless_service]).await?;
        sync.apply(network_policy, &listed_policies).await?;
        sync.apply_read(pod_disruption_budget).await?;
        sync.prune(&listed_secrets, secrets()).await?;
        sync.prune(&listed_config_maps, config_maps()).await?;
        sync.prune(&listed_policies, network_policy).await?;
        Ok(())
    }

    /// The workers of the cluster.
    async fn pods(&self, cluster: &ConnectCluster) -> Result<Vec<Pod>, ConnectError> {
        let selector = selector_string(&cluster.selector());
        self.api::<Pod>(&cluster.namespace)
            .list(&ListParams::default().labels(&selector))
            .await
            .map(|list| list.items)
            .map_err(|error| ApiCallError::of::<Pod>("list", &cluster.namespace, "", error).into())
    }

    /// Deletes one worker whose definition is outdated, if every other worker is ready, so
    /// that its StrimziPodSet creates it again as now desired; returns whether it did.
    async fn roll_one(
        &self,
        owner: &ObjectReference,
        desired: &BTreeMap<String, BTreeMap<String, String>>,
        pods: &[Pod],
    ) -> Result<bool, ConnectError> {
        let outdated = pods.iter().find(|pod| {
            pod.metadata.deletion_timestamp.is_none() && runs_desired(pod, desired) == Some(false)
        });
        let Some(outdated) = outdated else {
            return Ok(false);
        };
        let others_ready = pods
            .iter()
            .filter(|pod| pod.name_any() != outdated.name_any())
            .all(|pod| pod.metadata.deletion_timestamp.is_none() && crate::pod_set::is_ready(pod));
        if !others_ready {
            return Ok(false);
        }
        let name = outdated.name_any();
        let namespace = outdated.namespace().unwrap_or_default();
        match self
            .api::<Pod>(&namespace)
            .delete(&name, &DeleteParams::default())
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(false),
            Err(error) => {
                return Err(ApiCallError::of::<Pod>("delete", &namespace, &name, error).into());
            }
        }
        self.runtime.metrics().count_write("Pod", "delete");
        self.runtime
            .events()
            .publish_logged(
                owner,
                Severity::Normal,
                "PodRestarted",
                "RestartPod",
                &format!("Pod {name} was restarted because its definition changed"),
            )
            .await;
        Ok(true)
    }

    /// Applies the StrimziPodSet, replaces an outdated worker, and tells whether every worker
    /// of the current definition is ready, with the REST API client when one can be named
    /// (none without workers).
    pub(crate) async fn run_workers(
        &self,
        owner: &ObjectReference,
        cluster: &ConnectCluster,
        objects: &ConnectObjects,
    ) -> Result<Workers, ConnectError> {
        self.runtime.applier().apply(&objects.pod_set, None).await?;
        let namespace = cluster.namespace.clone();
        let pod_set = self
            .api::<StrimziPodSet>(&namespace)
            .get(&cluster.component_name)
            .await
            .map_err(|error| {
                ApiCallError::of::<StrimziPodSet>("get", &namespace, &cluster.component_name, error)
            })?;
        let desired = crate::pod_set::described_annotations(std::slice::from_ref(&objects.pod_set));
        let pods = self.pods(cluster).await?;
        if self.roll_one(owner, &desired, &pods).await? {
            return Ok(Workers::Pending {
                message: "restarting a Connect worker whose definition changed".to_owned(),
                stuck: false,
            });
        }
        let replicas = usize::try_from(cluster.replicas()).unwrap_or_default();
        let set_status = pod_set.status.clone().unwrap_or_default();
        let current = set_status.observed_generation == pod_set.metadata.generation;
        let ready_current = pods
            .iter()
            .filter(|pod| {
                pod.metadata.deletion_timestamp.is_none()
                    && crate::pod_set::is_ready(pod)
                    && runs_desired(pod, &desired) == Some(true)
            })
            .count();
        let extra = pods
            .iter()
            .filter(|pod| !desired.contains_key(&pod.name_any()))
            .count();
        if !current || ready_current < replicas || extra > 0 {
            let mut message = format!(
                "waiting for the Connect workers to be ready (StrimziPodSet {}: {ready_current} of \
                 {replicas} ready)",
                cluster.component_name
            );
            // A worker of the current definition that is stuck waits for the user.
            let stuck = crate::pod_set::stuck_pods(
                pods.iter()
                    .filter(|pod| runs_desired(pod, &desired) == Some(true)),
            );
            if !stuck.is_empty() {
                message.push_str(&format!("; stuck: {}", stuck.join(", ")));
            }
            return Ok(Workers::Pending {
                message,
                stuck: !stuck.is_empty(),
            });
        }
        if replicas == 0 {
            return Ok(Workers::Ready(None));
        }
        Ok(match self.rest_api(cluster, &pods) {
            Some(api) => Workers::Ready(Some(api)),
            None => Workers::Pending {
                message: "waiting for a ready Connect worker to ask its REST API".to_owned(),
                stuck: false,
            },
        })
    }

    /// The REST API client of the cluster, `None` while no host can be named.
    fn rest_api(&self, cluster: &ConnectCluster, pods: &[Pod]) -> Option<ConnectApi> {
        api_host(
            &cluster.api_service_name,
            &cluster.namespace,
            self.host_resolution,
            pods,
        )
        .map(|host| ConnectApi::new(host, self.host_resolution, self.call_timeout))
    }

    /// Deletes the connectors of the cluster that no KafkaConnector describes.
    async fn remove_unmanaged_connectors(
        &self,
        connect: &KafkaConnect,
        api: &ConnectApi,
    ) -> Result<(), ConnectError> {
        let namespace = connect.namespace().unwrap_or_default();
        let selector = format!("{}={}", labels::CLUSTER, connect.name_any());
        let wanted: Vec<String> = self
            .api::<KafkaConnector>(&namespace)
            .list_metadata(&ListParams::default().labels(&selector))
            .await
            .map_err(|error| ApiCallError::of::<KafkaConnector>("list", &namespace, "", error))?
            .items
            .into_iter()
            .map(|connector| connector.name_any())
            .collect();
        for name in api.connectors().await? {
            if !wanted.contains(&name) {
                api.delete_connector(&name).await?;
                self.runtime
                    .events()
                    .publish_logged(
                        &connect.object_ref(&()),
                        Severity::Normal,
                        "ConnectorDeleted",
                        "DeleteConnector",
                        &format!(
                            "Connector {name} was deleted: no KafkaConnector describes it and \
                             the KafkaConnect uses connector resources"
                        ),
                    )
                    .await;
            }
        }
        Ok(())
    }
}

/// Whether a Connect cluster's workers are ready.
pub(crate) enum Workers {
    /// Not yet.
    Pending {
        /// What is awaited.
        message: String,
        /// Whether a worker of the current definition is stuck (its image cannot be pulled,
        /// it keeps crashing, it cannot be scheduled): only the user can end the wait.
        stuck: bool,
    },
    /// Ready, with the REST API client unless the cluster has no workers.
    Ready(Option<ConnectApi>),
}

/// A reconciliation that waits for the workers (`WaitingForPods`, `message` what is awaited):
/// progress, or stalled when a worker is `stuck`.
pub(crate) fn waiting_for_workers<S>(status: S, message: &str, stuck: bool) -> Reconciled<S> {
    let waiting = if stuck {
        Reconciled::stalled
    } else {
        Reconciled::pending
    };
    waiting(status, "WaitingForPods", message, PODS_RECHECK)
}

/// Whether `connect` lets KafkaConnectors manage its connectors.
pub fn uses_connector_resources(connect: &KafkaConnect) -> bool {
    connect
        .annotations()
        .get(annotations::USE_CONNECTOR_RESOURCES)
        .is_some_and(|value| value.trim().eq_ignore_ascii_case("true"))
}

/// Whether `pod` runs the definition its StrimziPodSet now describes (`desired`, by pod
/// name); `None` for a pod the set does not describe.
fn runs_desired(pod: &Pod, desired: &BTreeMap<String, BTreeMap<String, String>>) -> Option<bool> {
    let wanted = desired.get(&pod.name_any())?;
    Some(
        definition_revisions(Some(wanted))
            == definition_revisions(pod.metadata.annotations.as_ref()),
    )
}

/// The plugins as the status lists them.
fn plugins(answer: Vec<serde_json::Value>) -> Vec<ConnectorPlugin> {
    answer
        .into_iter()
        .map(|plugin| ConnectorPlugin {
            class: plugin["class"].as_str().map(str::to_owned),
            r#type: plugin["type"].as_str().map(str::to_owned),
            version: plugin["version"].as_str().map(str::to_owned),
        })
        .collect()
}

impl Reconciler for ConnectReconciler {
    type Resource = KafkaConnect;
    type Status = KafkaConnectStatus;
    type Error = ConnectError;

    async fn reconcile(
        &self,
        connect: Arc<KafkaConnect>,
    ) -> Result<Reconciled<KafkaConnectStatus>, ConnectError> {
        let cluster = ConnectCluster::from_kafka_connect(&connect, &self.model)?;
        let image_build = ConnectBuild::of(&cluster)?;
        let mut inputs = self.inputs(&cluster).await?;
        cluster.validate(&inputs)?;
        let previous = connect.status.clone().unwrap_or_default();
        let mut status = with_cluster_fields(
            KafkaConnectStatus {
                connector_plugins: previous.connector_plugins.clone(),
                ..KafkaConnectStatus::default()
            },
            &cluster,
        );
        // The build goes first: its image is what the workers run.
        let progress = match &image_build {
            Some(image_build) => Some(
                self.build_step(&connect, &cluster, image_build, self.build_retry)
                    .await?,
            ),
            None => {
                self.remove_build(&connect, &cluster).await?;
                None
            }
        };
        let mut finished_build = false;
        if let Some(BuildProgress::Ready { built, finished }) = &progress {
            inputs.built = Some(built.clone());
            finished_build = *finished;
        }
        let objects = cluster.objects(&inputs)?;
        self.apply_objects(&cluster, &objects).await?;
        let warn = |mut reconciled: Reconciled<KafkaConnectStatus>| {
            for warning in &objects.warnings {
                reconciled = reconciled.warn(&warning.reason, &warning.message);
            }
            reconciled
        };
        // Until the image is pushed, the workers stay as they are.
        if let Some(BuildProgress::Waiting(waiting)) = progress {
            return Ok(warn(waiting.reconciled(status)));
        }
        let workers = self
            .run_workers(&connect.object_ref(&()), &cluster, &objects)
            .await?;
        // The StrimziPodSet records the pushed image now: its builder pod may go.
        if finished_build {
            self.finish_build(&cluster).await?;
        }
        let api = match workers {
            Workers::Pending { message, stuck } => {
                return Ok(warn(waiting_for_workers(status, &message, stuck)));
            }
            Workers::Ready(api) => api,
        };
        if let Some(api) = api {
            // The plugins only change with the workers' definition: asked again for a new
            // generation, not on every wake-up (a KafkaConnector's status changing is one).
            let known = previous.connector_plugins.is_some()
                && previous.observed_generation == connect.metadata.generation;
            if !known {
                status.connector_plugins = Some(plugins(api.connector_plugins().await?));
            }
            if uses_connector_resources(&connect) {
                self.remove_unmanaged_connectors(&connect, &api).await?;
            }
        }
        Ok(warn(Reconciled::new(status)))
    }

    fn failure_status(
        &self,
        connect: &KafkaConnect,
        previous: KafkaConnectStatus,
    ) -> KafkaConnectStatus {
        match ConnectCluster::from_kafka_connect(connect, &self.model) {
            Ok(cluster) => with_cluster_fields(previous, &cluster),
            Err(_) => previous,
        }
    }
}

/// `status` with the fields a KafkaConnect reports whatever the reconciliation's outcome,
/// as Strimzi does: the REST API's URL, the replicas and the workers' selector.
fn with_cluster_fields(status: KafkaConnectStatus, cluster: &ConnectCluster) -> KafkaConnectStatus {
    KafkaConnectStatus {
        url: cluster.reported_url(),
        replicas: Some(cluster.replicas()),
        label_selector: Some(selector_string(&cluster.selector())),
        ..status
    }
}
