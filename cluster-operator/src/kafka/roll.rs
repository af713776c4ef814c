//! The rolling step: once every pod is ready, restart the nodes whose pods are outdated or
//! asked to restart, then the nodes that run a static Kafka option other than the desired
//! one, one step per reconciliation and only when it is safe; with nothing to restart, keep
//! the settings of the running cluster (module `settings`).
//!
//! Static options are not in the pods' configuration hash (see
//! [`crate::model::config::hash`]): each node is asked for its configuration (DescribeConfigs
//! of its own broker resource) and compared with its desired `server.config`
//! ([`crate::rolling::config_diff`]). Brokers (combined nodes too) answer through the admin
//! client; a controller-only node through a connection of its own to its controller listener
//! (9090), which accepts the operator's certificate. Once every node was found as desired and
//! the live settings applied, the fingerprint of all of it is remembered, so that a
//! reconciliation where nothing changed connects to nothing.
//!
//! The operator talks to the brokers as itself: over the replication listener (9091) of
//! the bootstrap Service, with mutual TLS, its client certificate being the
//! `<cluster>-cluster-operator-certs` Secret and its trust the cluster CA. Every admin call
//! is bounded by `STRIMZI_OPERATION_TIMEOUT_MS` (at most [`MAX_ADMIN_OPERATION`]). With the
//! same certificate it asks the kafka-agent of a broker pod that runs but is not ready
//! whether the broker is recovering its logs, and says how far it got.
//!
//! A ready node restarts only through the quorum and `min.insync.replicas` checks: when the
//! brokers cannot be reached or the admin client not created, nothing restarts and the Kafka
//! says why (a Warning Event too): `NotReady` at once when the admin client cannot be created,
//! `Reconciling` while the brokers cannot be reached (a restarting broker cannot be, for a
//! while) until the operation timeout; only a TLS authentication failure
//! restarts the next node unchecked ([`crate::rolling::unchecked`]).
//!
//! The decisions are the pure ones of [`crate::rolling`]; here the pods are listed, the
//! cluster described, the chosen pods deleted (their StrimziPodSet recreates them as now
//! desired) and the reconciliation ends pending until they are ready and back in the
//! cluster, when the next reconciliation takes the next step.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use prometheus::{IntCounterVec, Opts};
use strimzi_api::annotations;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::events::Severity;
use strimzi_operator_common::kafka::agent::{self, BrokerState};
use strimzi_operator_common::kafka::{
    AdminClient, AdminConfig, AdminError, ConfigEntry, ConfigResource, ConfigSource,
    HostResolution, KafkaAdmin, QuorumInfo, SecurityProtocol, TlsConfig, TopicDescription,
};
use strimzi_operator_common::metrics::{Metrics, MetricsError};

use super::{ClusterCas, ReconcileError, Reconciliation, Waiting};
use crate::model::desired::DesiredObjects;
use crate::model::listeners::services::{CONTROL_PLANE_PORT, REPLICATION_PORT};
use crate::model::{KafkaCluster, KafkaNode};
use crate::rolling::config_diff::{NodeConfiguration, StaticChange, static_changes};
use crate::rolling::safety::{
    DEFAULT_QUORUM_FETCH_TIMEOUT_MS, availability_blockers, quorum_blocker,
};
use crate::rolling::unchecked::{Unchecked, next_step};
use crate::rolling::{
    self, AvailabilityCheck, NodeToRoll, RESTART_REASON_NAMES, RestartReason, RollDecision,
};

/// Longest bound on one admin operation with its retries, whatever
/// `STRIMZI_OPERATION_TIMEOUT_MS` says: the reconciliation must not stall on a cluster that
/// does not answer.
const MAX_ADMIN_OPERATION: Duration = Duration::from_secs(30);
/// Longest bound on one admin request.
const MAX_ADMIN_REQUEST: Duration = Duration::from_secs(10);
/// How soon a Kafka is looked at again while a pod restarts or a restart is blocked; pod
/// and StrimziPodSet changes wake it sooner.
const ROLL_RECHECK: Duration = Duration::from_secs(5);
/// Kafka's internal topics, which listing topics leaves out but whose availability counts.
const INTERNAL_TOPICS: [&str; 3] = [
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

/// What the rolling step keeps between reconciliations: the restart counter and which
/// settings (dynamic options, metadata version) were last confirmed on each Kafka's
/// brokers, so that a reconciliation with nothing new to set does not connect.
#[derive(Clone, Debug)]
pub struct RollingState {
    restarts: IntCounterVec,
    /// What was last confirmed on each Kafka's brokers, by `ns/name`.
    confirmed_settings: Arc<Mutex<BTreeMap<String, ConfirmedSettings>>>,
    /// How the admin client looks up broker names.
    host_resolution: HostResolution,
    /// How many brokers may restart at once.
    max_parallel_brokers: usize,
}

impl RollingState {
    /// Registers `strimzi_cluster_operator_pod_restarts_total{reason}` in `metrics`.
    pub fn new(
        metrics: &Metrics,
        host_resolution: HostResolution,
        max_parallel_brokers: usize,
    ) -> Result<Self, MetricsError> {
        let restarts = IntCounterVec::new(
            Opts::new(
                "strimzi_cluster_operator_pod_restarts_total",
                "Kafka pods the operator restarted, by reason",
            ),
            &["reason"],
        )?;
        metrics.register(Box::new(restarts.clone()))?;
        // Each reason's series from the start, at 0: dashboards and alerts find the metric
        // before the first restart (with certificate reloads, renewals restart nothing).
        for reason in RESTART_REASON_NAMES {
            restarts.with_label_values(&[reason]);
        }
        Ok(Self {
            restarts,
            confirmed_settings: Arc::default(),
            host_resolution,
            max_parallel_brokers,
        })
    }

    fn confirmed(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, ConfirmedSettings>> {
        self.confirmed_settings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The metadata version the brokers of Kafka `key` (`ns/name`) last reported to this
    /// operator: fresher than the Kafka's status in the cache, which may not show the
    /// operator's last status write yet.
    pub(super) fn reported_metadata_version(&self, key: &str) -> Option<String> {
        self.confirmed()
            .get(key)
            .and_then(|confirmed| confirmed.metadata_version.clone())
    }
}

/// The settings last confirmed on one Kafka's brokers.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ConfirmedSettings {
    /// [`super::settings::settings_fingerprint`] of what was confirmed; `None` while not
    /// everything is settled.
    fingerprint: Option<String>,
    /// The metadata version the brokers last reported.
    metadata_version: Option<String>,
}

/// What the admin API told about the cluster for the safety checks.
struct ClusterState {
    quorum: QuorumInfo,
    topics: Vec<TopicDescription>,
    min_isr: BTreeMap<String, i32>,
    default_min_isr: i32,
    fetch_timeout_ms: i64,
}

impl AvailabilityCheck for ClusterState {
    fn controller_blocker(&self, node_id: i32) -> Option<String> {
        quorum_blocker(node_id, &self.quorum, self.fetch_timeout_ms)
    }

    fn broker_blockers(&self, brokers: &BTreeSet<i32>) -> Vec<String> {
        availability_blockers(brokers, &self.topics, &self.min_isr, self.default_min_isr)
    }
}

/// What is awaited while a pod of the cluster is missing, being deleted or not ready (the
/// StrimziPodSets' counts may not show a restart yet): nothing restarts meanwhile.
fn waiting_for_pods(cluster: &KafkaCluster, pods: &BTreeMap<String, Pod>) -> Option<Waiting> {
    let unready: Vec<String> = cluster
        .nodes()
        .filter(|node| {
            pods.get(&node.pod_name).is_none_or(|pod| {
                pod.metadata.deletion_timestamp.is_some() || !crate::pod_set::is_ready(pod)
            })
        })
        .map(|node| node.pod_name)
        .collect();
    (!unready.is_empty()).then(|| Waiting {
        reason: "WaitingForPods",
        message: format!("waiting for pod(s) {} to be ready", unready.join(", ")),
        recheck_after: ROLL_RECHECK,
        stalled: false,
    })
}

/// Whether `pod` runs but is not ready yet (its Kafka container started): a broker then may
/// be recovering its logs, which its kafka-agent can tell.
fn may_be_recovering(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && !crate::pod_set::is_ready(pod)
        && pod
            .status
            .iter()
            .flat_map(|status| status.container_statuses.iter().flatten())
            .any(|container| {
                container
                    .state
                    .as_ref()
                    .is_some_and(|state| state.running.is_some())
            })
}

/// What a status says about broker pod `pod` recovering its logs.
fn describe_recovery(pod: &str, state: &BrokerState) -> String {
    match state.recovery {
        Some(progress) => format!(
            "{pod} is recovering its logs: {} logs and {} segments left",
            progress.remaining_logs, progress.remaining_segments
        ),
        None => format!("{pod} is recovering its logs"),
    }
}

/// The TLS settings the operator uses towards its brokers and their agents: the cluster
/// CA's trusted certificates, and its own certificate of `identity` (the
/// `<cluster>-cluster-operator-certs` Secret).
pub(super) fn operator_tls(identity: &Secret, cas: &ClusterCas) -> TlsConfig {
    let pem = |key: &str| {
        identity
            .data
            .as_ref()
            .and_then(|data| data.get(key))
            .map(|value| String::from_utf8_lossy(&value.0).into_owned())
            .unwrap_or_default()
    };
    TlsConfig {
        ca_pem: cas.cluster.authority.trusted_pem_bundle(),
        client_identity_pem: Some(format!(
            "{}{}",
            pem("cluster-operator.crt"),
            pem("cluster-operator.key")
        )),
        verify_hostname: true,
    }
}

/// The cluster's nodes whose pods must restart, with why ([`rolling::nodes_to_roll`]), at
/// `cas.now` with the cluster CA's renewal period and maintenance windows.
fn nodes_to_roll(
    cluster: &KafkaCluster,
    desired: &DesiredObjects,
    pods: &BTreeMap<String, Pod>,
    cas: &ClusterCas,
) -> Vec<NodeToRoll> {
    let clock = rolling::RollClock {
        now: cas.now,
        renewal_days: cas.cluster.authority.settings().renewal_days,
        window_open: cas.window_open,
    };
    rolling::nodes_to_roll(cluster, &desired.pods, pods, clock)
}

/// Logs (at debug level) why each broker that waits did not join the brokers restarting
/// together now.
fn log_brokers_left_out(
    decision: &Option<RollDecision>,
    nodes: &[NodeToRoll],
    state: &ClusterState,
) {
    let Some(RollDecision::Restart(chosen)) = decision else {
        return;
    };
    if chosen.iter().any(|node| node.controller) {
        return;
    }
    let together: BTreeSet<i32> = chosen.iter().map(|node| node.node_id).collect();
    for node in nodes
        .iter()
        .filter(|node| !node.controller && !together.contains(&node.node_id))
    {
        let mut with = together.clone();
        with.insert(node.node_id);
        let blockers = state.broker_blockers(&with);
        tracing::debug!(pod = %node.pod, blockers = %blockers.join("; "), "broker waits for a later step");
    }
}

/// Every topic of the cluster, Kafka's internal ones included.
pub(super) async fn describe_all_topics(
    admin: &AdminClient,
) -> Result<Vec<TopicDescription>, AdminError> {
    let mut names = admin.list_topics().await?;
    names.extend(INTERNAL_TOPICS.iter().map(|name| (*name).to_owned()));
    Ok(admin
        .describe_topics(&names)
        .await?
        .into_values()
        .filter_map(Result::ok)
        .collect())
}

/// An integer option of the user's configuration, if set and valid.
pub(super) fn user_option(cluster: &KafkaCluster, key: &str) -> Option<i64> {
    cluster
        .user_options
        .properties
        .get(key)?
        .trim()
        .parse()
        .ok()
}

impl Reconciliation<'_> {
    /// The rolling step, run when every pod is ready: restarts what must be restarted
    /// (see the module), else applies the dynamic options. Returns what is awaited while
    /// nodes restart or cannot restart yet.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn roll(
        &mut self,
        cluster: &KafkaCluster,
        desired: &DesiredObjects,
        cas: &ClusterCas,
        sets: &[StrimziPodSet],
    ) -> Result<Option<Waiting>, ReconcileError> {
        self.pass_manual_rolling_updates_to_pods(cluster, sets)
            .await?;
        let pods: BTreeMap<String, Pod> = self
            .list::<Pod>(&cluster.component_labels().selector_string())
            .await?
            .into_iter()
            .map(|pod| (pod.name_any(), pod))
            .collect();
        if let Some(mut waiting) = waiting_for_pods(cluster, &pods) {
            let identity = &desired.cluster_operator_certificate;
            let recovering = self.recovering_brokers(cluster, identity, cas, &pods).await;
            if !recovering.is_empty() {
                waiting.message = format!("{}; {}", waiting.message, recovering.join("; "));
            }
            return Ok(Some(waiting));
        }
        let nodes = nodes_to_roll(cluster, desired, &pods, cas);
        let (nodes, restart_notes) = self
            .reload_certificates(cluster, desired, cas, &pods, nodes)
            .await?;
        if nodes.is_empty() {
            self.drop_old_cluster_ca_certificates(cas, pods.values())
                .await?;
        }
        let dynamic = cluster.dynamic_configuration();
        let server_configs = &desired.server_configs;
        let key = self.rolling_key();
        let state = &self.operator.rolling;
        let fingerprint = super::settings::settings_fingerprint(cluster, &dynamic, server_configs);
        let confirmed = state
            .confirmed()
            .get(&key)
            .filter(|confirmed| confirmed.fingerprint.as_ref() == Some(&fingerprint))
            .cloned();
        if let (true, Some(confirmed)) = (nodes.is_empty(), confirmed) {
            self.metadata_version = confirmed.metadata_version;
            return Ok(None);
        }
        let identity = &desired.cluster_operator_certificate;
        let admin = self.admin_client(cluster, identity, cas);
        if !nodes.is_empty() {
            return self
                .restart_next(cluster, admin.as_ref(), nodes, &pods, &restart_notes)
                .await
                .map(Some);
        }
        let admin = admin?;
        let static_checked = match self
            .static_configuration_check(cluster, &admin, identity, cas, server_configs)
            .await
        {
            Ok(StaticCheck::Current) => true,
            Ok(StaticCheck::Differ(nodes, notes)) => {
                return self
                    .restart_next(cluster, Ok(&admin), nodes, &pods, &notes)
                    .await
                    .map(Some);
            }
            Ok(StaticCheck::NotRejoined(waiting)) => return Ok(Some(waiting)),
            Err(error) => {
                // No restart on what could not be compared; a later reconciliation asks again.
                tracing::warn!(cluster = %cluster.name, %error, "the static options of the running nodes could not be checked");
                self.warn(
                    error.reason(),
                    &format!(
                        "the static configuration options of the running nodes could not be compared with the desired ones: {error}"
                    ),
                );
                false
            }
        };
        match self.apply_live_settings(cluster, &admin, &dynamic).await {
            Ok(settled) => {
                // Unless settled (e.g. a removed broker still shutting down) and every node
                // checked, a later reconciliation checks again.
                let confirmed = ConfirmedSettings {
                    fingerprint: (settled && static_checked).then_some(fingerprint),
                    metadata_version: self.metadata_version.clone(),
                };
                state.confirmed().insert(key, confirmed);
            }
            Err(error) => {
                tracing::warn!(cluster = %cluster.name, %error, "the settings on the running cluster could not be checked");
                self.warn(
                    "KafkaSettingsNotVerified",
                    &format!(
                        "the dynamically updatable options, the metadata version, the default quotas and the registered brokers could not be checked: {error}"
                    ),
                );
            }
        }
        Ok(None)
    }

    /// The key of this Kafka in [`RollingState`].
    fn rolling_key(&self) -> String {
        super::kafka_key(self.kafka)
    }

    /// The metadata version this Kafka's brokers last reported to this operator, if they
    /// did since it started.
    pub(super) fn reported_metadata_version(&self) -> Option<String> {
        self.operator
            .rolling
            .reported_metadata_version(&self.rolling_key())
    }

    /// Moves `strimzi.io/manual-rolling-update` from each StrimziPodSet of the cluster to
    /// its pods: each pod then restarts once (its new incarnation lacks the annotation),
    /// whenever the operator stops and starts meanwhile.
    async fn pass_manual_rolling_updates_to_pods(
        &self,
        cluster: &KafkaCluster,
        sets: &[StrimziPodSet],
    ) -> Result<(), ReconcileError> {
        let annotate = serde_json::json!({"metadata": {"annotations": {
            annotations::MANUAL_ROLLING_UPDATE: "true",
        }}});
        let clear = serde_json::json!({"metadata": {"annotations": {
            annotations::MANUAL_ROLLING_UPDATE: null,
        }}});
        for set in sets {
            if !annotations::is_true(
                set.metadata.annotations.as_ref(),
                annotations::MANUAL_ROLLING_UPDATE,
            ) {
                continue;
            }
            let set_name = set.name_any();
            for pod in cluster.pods_of_pod_set(&set_name) {
                match self
                    .api::<Pod>()
                    .patch(&pod, &PatchParams::default(), &Patch::Merge(&annotate))
                    .await
                {
                    Ok(_) => self.operator.runtime.metrics().count_write("Pod", "patch"),
                    Err(kube::Error::Api(response)) if response.code == 404 => {}
                    Err(source) => return Err(ReconcileError::api("annotate Pod", &pod, source)),
                }
            }
            self.api::<StrimziPodSet>()
                .patch(&set_name, &PatchParams::default(), &Patch::Merge(&clear))
                .await
                .map_err(|source| {
                    ReconcileError::api("clear the manual rolling update of", &set_name, source)
                })?;
            self.operator
                .runtime
                .metrics()
                .count_write("StrimziPodSet", "patch");
            tracing::info!(cluster = %cluster.name, pod_set = %set_name, "manual rolling update of a StrimziPodSet passed to its pods");
        }
        Ok(())
    }

    /// What the kafka-agent of each broker pod that runs but is not ready says about its log
    /// recovery, one line per broker recovering its logs (a broker in log recovery is waited
    /// for, never restarted). A broker whose agent does not answer is left out.
    async fn recovering_brokers(
        &self,
        cluster: &KafkaCluster,
        identity: &Secret,
        cas: &ClusterCas,
        pods: &BTreeMap<String, Pod>,
    ) -> Vec<String> {
        let tls = operator_tls(identity, cas);
        let timeout = self
            .operator
            .config
            .operator
            .operation_timeout
            .min(MAX_ADMIN_REQUEST);
        let host_resolution = self.operator.rolling.host_resolution;
        let asked = cluster
            .brokers()
            .filter(|node| pods.get(&node.pod_name).is_some_and(may_be_recovering))
            .map(|node| {
                let tls = &tls;
                async move {
                    // The name Strimzi's operator asks by, which the agent's certificate has.
                    let host = cluster.pod_dns_name(&node.pod_name);
                    let state =
                        agent::broker_state(tls, &host, &host, host_resolution, timeout).await;
                    (node.pod_name, state)
                }
            });
        let mut recovering = Vec::new();
        for (pod, state) in futures::future::join_all(asked).await {
            match state {
                Ok(state) if state.is_recovering() => {
                    let progress = describe_recovery(&pod, &state);
                    tracing::info!(cluster = %cluster.name, "{progress}");
                    recovering.push(progress);
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::debug!(cluster = %cluster.name, %pod, reason = error.reason(), %error, "no broker state");
                }
            }
        }
        recovering
    }

    /// The admin client of this cluster, as the operator's own identity: the certificate
    /// and key of `identity` (its `<cluster>-cluster-operator-certs` Secret).
    pub(super) fn admin_client(
        &self,
        cluster: &KafkaCluster,
        identity: &Secret,
        cas: &ClusterCas,
    ) -> Result<AdminClient, ReconcileError> {
        let bootstrap = format!(
            "{}.{}.svc:{REPLICATION_PORT}",
            strimzi_api::naming::bootstrap_service(&cluster.name),
            cluster.namespace
        );
        Ok(self.node_admin_client(bootstrap, operator_tls(identity, cas))?)
    }

    /// An admin client bootstrapping from `address` alone, with `tls` (the operator's own
    /// identity is [`operator_tls`]).
    pub(super) fn node_admin_client(
        &self,
        address: String,
        tls: TlsConfig,
    ) -> Result<AdminClient, AdminError> {
        let timeout = self.operator.config.operator.operation_timeout;
        AdminClient::new(AdminConfig {
            bootstrap_servers: vec![address],
            security_protocol: SecurityProtocol::Ssl,
            tls: Some(tls),
            sasl: None,
            client_id: crate::config::NAME.to_owned(),
            request_timeout: timeout.min(MAX_ADMIN_REQUEST),
            operation_timeout: timeout.min(MAX_ADMIN_OPERATION),
            host_resolution: self.operator.rolling.host_resolution,
            unused_settings: Vec::new(),
        })
    }

    /// Compares the static options each node runs with its desired `server.config` (see the
    /// module), once every node is back in the cluster: the nodes to restart, with the
    /// changed option names for their Events, by pod.
    async fn static_configuration_check(
        &self,
        cluster: &KafkaCluster,
        admin: &AdminClient,
        identity: &Secret,
        cas: &ClusterCas,
        server_configs: &BTreeMap<String, String>,
    ) -> Result<StaticCheck, NodeConfigurationError> {
        if let Err(waiting) = self
            .rejoined(cluster, admin)
            .await
            .map_err(NodeConfigurationError::Cluster)?
        {
            return Ok(StaticCheck::NotRejoined(waiting));
        }
        let described = self
            .described_node_configurations(cluster, admin, identity, cas)
            .await?;
        let mut nodes = Vec::new();
        let mut notes = BTreeMap::new();
        for node in cluster.nodes() {
            let (Some(desired), Some(entries)) = (
                server_configs.get(&node.pod_name),
                described.get(&node.node_id),
            ) else {
                continue;
            };
            let changes = static_changes(&NodeConfiguration {
                node_id: node.node_id,
                controller: node.is_controller(),
                kafka_version: &cluster.version.version,
                desired,
                described: entries,
                dynamic_quorum: cluster.quorum_voters.is_some(),
            });
            if changes.is_empty() {
                continue;
            }
            tracing::info!(cluster = %cluster.name, pod = %node.pod_name, changes = %describe_changes(&changes), "static options differ from the desired ones");
            let names: Vec<&str> = changes.iter().map(|change| change.name.as_str()).collect();
            notes.insert(node.pod_name.clone(), format!(": {}", names.join(", ")));
            nodes.push(NodeToRoll {
                controller: node.is_controller(),
                broker: node.is_broker(),
                pod: node.pod_name,
                node_id: node.node_id,
                reasons: vec![RestartReason::ConfigChangeRequiresRestart],
            });
        }
        Ok(if nodes.is_empty() {
            StaticCheck::Current
        } else {
            StaticCheck::Differ(nodes, notes)
        })
    }

    /// The configuration every node describes, by node id: the brokers' (combined nodes
    /// included) through `admin`, each controller-only node's through a client of its own
    /// on its controller listener, all at once.
    async fn described_node_configurations(
        &self,
        cluster: &KafkaCluster,
        admin: &AdminClient,
        identity: &Secret,
        cas: &ClusterCas,
    ) -> Result<BTreeMap<i32, Vec<ConfigEntry>>, NodeConfigurationError> {
        let resources: Vec<ConfigResource> = cluster
            .brokers()
            .map(|node| ConfigResource::broker(node.node_id))
            .collect();
        let controllers: Vec<KafkaNode> = cluster
            .controllers()
            .filter(|node| !node.is_broker())
            .collect();
        let asked = controllers.iter().map(|node| async move {
            let address = format!(
                "{}:{CONTROL_PLANE_PORT}",
                cluster.pod_dns_name(&node.pod_name)
            );
            let entries = match self.node_admin_client(address, operator_tls(identity, cas)) {
                Ok(client) => client.describe_own_configs(node.node_id).await,
                Err(error) => Err(error),
            };
            (node.node_id, entries)
        });
        let (brokers, controllers) = futures::join!(
            admin.describe_configs(&resources),
            futures::future::join_all(asked)
        );
        let mut described = BTreeMap::new();
        for (resource, entries) in brokers.map_err(NodeConfigurationError::Cluster)? {
            let node_id = resource.name.parse().unwrap_or_default();
            let entries =
                entries.map_err(|source| NodeConfigurationError::Broker { node_id, source })?;
            described.insert(node_id, entries);
        }
        for (node_id, entries) in controllers {
            let entries =
                entries.map_err(|source| NodeConfigurationError::Controller { node_id, source })?;
            described.insert(node_id, entries);
        }
        Ok(described)
    }

    /// Chooses and restarts the next nodes of `nodes` and says what is awaited; `notes` ends
    /// the restart Events of the pods it names. The safety checks go through `admin`, or
    /// what kept it from being created (see [`crate::rolling::unchecked`]).
    async fn restart_next(
        &self,
        cluster: &KafkaCluster,
        admin: Result<&AdminClient, &ReconcileError>,
        nodes: Vec<NodeToRoll>,
        pods: &BTreeMap<String, Pod>,
        notes: &BTreeMap<String, String>,
    ) -> Result<Waiting, ReconcileError> {
        let described = match admin {
            Ok(admin) => match self.describe_for_rolling(cluster, admin).await {
                Ok(Described::Ready(state)) => Ok(state),
                Ok(Described::NotRejoined(waiting)) => return Ok(waiting),
                Err(error) => match Unchecked::from_describe_error(&error) {
                    Some(unchecked) => Err(unchecked),
                    // Kafka answered with an error: the reconciliation fails and is retried,
                    // nothing restarts.
                    None => return Err(ReconcileError::Kafka(error)),
                },
            },
            Err(error) => Err(Unchecked::ClientNotCreated(error.to_string())),
        };
        let max_parallel = self.operator.rolling.max_parallel_brokers;
        let decision = match &described {
            Ok(state) => {
                let checks = Ok((state, Some(state.quorum.leader_id)));
                let decision = next_step(nodes.clone(), checks, max_parallel);
                log_brokers_left_out(&decision, &nodes, state);
                decision
            }
            Err(unchecked) => {
                tracing::warn!(cluster = %cluster.name, reason = unchecked.reason(), "{}", unchecked.describe());
                next_step::<ClusterState>(nodes.clone(), Err(unchecked), max_parallel)
            }
        };
        let left: Vec<&str> = nodes.iter().map(|node| node.pod.as_str()).collect();
        match decision {
            Some(RollDecision::Restart(chosen)) => {
                for node in &chosen {
                    if let Some(pod) = pods.get(&node.pod) {
                        let note = notes.get(&node.pod).map_or("", String::as_str);
                        self.restart(node, pod, note).await?;
                    }
                }
                let names: Vec<&str> = chosen.iter().map(|node| node.pod.as_str()).collect();
                Ok(Waiting {
                    reason: "RollingUpdate",
                    message: format!(
                        "rolling update: restarted {} ({}); pods still to roll: {}",
                        names.join(", "),
                        chosen[0]
                            .reasons
                            .iter()
                            .map(RestartReason::name)
                            .collect::<Vec<_>>()
                            .join(", "),
                        left.join(", ")
                    ),
                    recheck_after: ROLL_RECHECK,
                    stalled: false,
                })
            }
            Some(RollDecision::Blocked(why)) => Ok(match described {
                // Nothing restarts while the safety of a restart cannot be checked.
                Err(unchecked) => {
                    self.cannot_check_safety(&unchecked, &why).await;
                    Waiting {
                        reason: unchecked.reason(),
                        message: why,
                        recheck_after: ROLL_RECHECK,
                        stalled: unchecked.stalls(),
                    }
                }
                Ok(_) => Waiting {
                    reason: "RollingUpdateBlocked",
                    message: format!("rolling update of {} waits: {why}", left.join(", ")),
                    recheck_after: ROLL_RECHECK,
                    stalled: false,
                },
            }),
            None => Ok(Waiting {
                reason: "RollingUpdate",
                message: "rolling update".to_owned(),
                recheck_after: ROLL_RECHECK,
                stalled: false,
            }),
        }
    }

    /// Says in a Warning Event on the Kafka that the rolling update waits because its
    /// safety cannot be checked (`unchecked`); `message` names the pods left.
    async fn cannot_check_safety(&self, unchecked: &Unchecked, message: &str) {
        self.alert(unchecked.reason(), "RollingUpdate", message)
            .await;
    }

    /// Restarts `node` by deleting its `pod` (that very pod: a newer one of the same name
    /// is left alone), with a Normal Event per reason on the pod, whose note ends with `more`.
    async fn restart(
        &self,
        node: &NodeToRoll,
        pod: &Pod,
        more: &str,
    ) -> Result<(), ReconcileError> {
        let pods = self.api::<Pod>();
        let precondition = DeleteParams {
            preconditions: Some(kube::api::Preconditions {
                uid: pod.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match pods.delete(&node.pod, &precondition).await {
            Ok(_) => {}
            Err(kube::Error::Api(response)) if response.code == 404 || response.code == 409 => {
                return Ok(());
            }
            Err(source) => return Err(ReconcileError::api("delete Pod", &node.pod, source)),
        }
        self.operator.runtime.metrics().count_write("Pod", "delete");
        let why = node.explanations();
        tracing::info!(pod = %node.pod, node_id = node.node_id, reasons = %why.join("; "), "restarting a Kafka node{more}");
        for reason in &node.reasons {
            self.restarted(pod, reason, more).await;
        }
        Ok(())
    }

    /// Counts a restart of `pod` for `reason` and says so in a Normal Event on the pod;
    /// `more` ends the Event's note.
    pub(super) async fn restarted(&self, pod: &Pod, reason: &RestartReason, more: &str) {
        self.operator
            .rolling
            .restarts
            .with_label_values(&[reason.name()])
            .inc();
        self.operator
            .runtime
            .events()
            .publish_logged(
                &pod.object_ref(&()),
                Severity::Normal,
                reason.name(),
                "StrimziInitiatedPodRestart",
                &format!(
                    "Pod needs to be restarted, because {}{more}",
                    reason.explanation()
                ),
            )
            .await;
    }

    /// The quorum, once every node is back in the cluster (each broker registered and
    /// unfenced, each controller a voter); else what is awaited.
    async fn rejoined(
        &self,
        cluster: &KafkaCluster,
        admin: &AdminClient,
    ) -> Result<Result<QuorumInfo, Waiting>, AdminError> {
        let described = admin.describe_cluster().await?;
        let quorum = admin.describe_metadata_quorum().await?;
        let registered: BTreeSet<i32> = described.brokers.iter().map(|broker| broker.id).collect();
        let voters: BTreeSet<i32> = quorum.voters.iter().map(|voter| voter.replica_id).collect();
        let mut missing: Vec<String> = cluster
            .brokers()
            .filter(|node| !registered.contains(&node.node_id))
            .map(|node| format!("broker {} not registered or fenced", node.node_id))
            .collect();
        missing.extend(
            cluster
                .controllers()
                .filter(|node| !voters.contains(&node.node_id))
                .map(|node| format!("controller {} not a voter", node.node_id)),
        );
        if missing.is_empty() {
            return Ok(Ok(quorum));
        }
        Ok(Err(Waiting {
            reason: "WaitingForNodesToRejoin",
            message: format!(
                "waiting for the nodes to rejoin the cluster: {}",
                missing.join(", ")
            ),
            recheck_after: ROLL_RECHECK,
            stalled: false,
        }))
    }

    /// The quorum, the topics and their minimums; or what is awaited when a ready node is
    /// not back in the cluster yet.
    async fn describe_for_rolling(
        &self,
        cluster: &KafkaCluster,
        admin: &AdminClient,
    ) -> Result<Described, AdminError> {
        let quorum = match self.rejoined(cluster, admin).await? {
            Ok(quorum) => quorum,
            Err(waiting) => return Ok(Described::NotRejoined(waiting)),
        };
        let topics = describe_all_topics(admin).await?;
        let resources: Vec<ConfigResource> = topics
            .iter()
            .map(|topic| ConfigResource::topic(topic.name.clone()))
            .collect();
        // The user's value is the brokers' default (set cluster-wide, live); a topic's own
        // value wins, and without either the value the broker describes counts.
        let user_min_isr =
            user_option(cluster, "min.insync.replicas").and_then(|value| i32::try_from(value).ok());
        let min_isr = admin
            .describe_configs(&resources)
            .await?
            .into_iter()
            .filter_map(|(resource, entries)| {
                let entry = entries
                    .ok()?
                    .into_iter()
                    .find(|entry| entry.name == "min.insync.replicas")?;
                if entry.source != ConfigSource::DynamicTopic && user_min_isr.is_some() {
                    return None;
                }
                Some((resource.name, entry.value?.trim().parse().ok()?))
            })
            .collect();
        Ok(Described::Ready(ClusterState {
            quorum,
            topics,
            min_isr,
            default_min_isr: user_min_isr.unwrap_or(1),
            fetch_timeout_ms: user_option(cluster, "controller.quorum.fetch.timeout.ms")
                .unwrap_or(DEFAULT_QUORUM_FETCH_TIMEOUT_MS),
        }))
    }
}

/// `name: running -> desired` of each change, for the log.
fn describe_changes(changes: &[StaticChange]) -> String {
    let shown = |value: &Option<String>| value.as_deref().unwrap_or("(none)").to_owned();
    changes
        .iter()
        .map(|change| {
            format!(
                "{}: {} -> {}",
                change.name,
                shown(&change.running),
                shown(&change.desired)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The outcome of comparing the static options the nodes run with the desired ones.
enum StaticCheck {
    /// Every node runs the desired static options.
    Current,
    /// These nodes must restart to take their desired static options; the notes of their
    /// restart Events by pod.
    Differ(Vec<NodeToRoll>, BTreeMap<String, String>),
    /// A ready node has not rejoined the cluster yet.
    NotRejoined(Waiting),
}

/// Why the static options of the running nodes could not be compared with the desired ones.
#[derive(Debug, thiserror::Error)]
pub enum NodeConfigurationError {
    /// The cluster could not be described (its brokers and quorum, or the brokers'
    /// configurations in one request).
    #[error("the cluster could not be described: {0}")]
    Cluster(#[source] AdminError),
    /// One broker answered its configuration with an error.
    #[error("broker {node_id} did not describe its configuration: {source}")]
    Broker {
        /// The broker's node id.
        node_id: i32,
        /// What Kafka answered.
        source: AdminError,
    },
    /// A controller could not be asked for its configuration on its controller listener.
    #[error("controller {node_id} did not describe its configuration: {source}")]
    Controller {
        /// The controller's node id.
        node_id: i32,
        /// What failed.
        source: AdminError,
    },
}

impl ErrorReason for NodeConfigurationError {
    fn reason(&self) -> &'static str {
        match self {
            Self::Cluster(_) | Self::Broker { .. } => "BrokerConfigurationNotDescribed",
            Self::Controller { .. } => "ControllerConfigurationNotDescribed",
        }
    }
}

/// The outcome of describing the cluster for a rolling step.
enum Described {
    /// Every node is back: the state for the safety checks.
    Ready(ClusterState),
    /// A ready node has not rejoined yet.
    NotRejoined(Waiting),
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use strimzi_operator_common::kafka::agent::RecoveryProgress;
    use strimzi_operator_common::kafka::{PartitionDescription, QuorumReplica};

    fn pod(ready: bool, running: bool) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c-broker-3"},
            "status": {
                "podIP": "10.0.0.7",
                "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
                "containerStatuses": [{
                    "name": "kafka", "image": "kafka", "imageID": "", "ready": ready,
                    "restartCount": 0,
                    "state": if running {
                        serde_json::json!({"running": {}})
                    } else {
                        serde_json::json!({"waiting": {"reason": "CrashLoopBackOff"}})
                    },
                }],
            },
        }))
        .unwrap()
    }

    /// Topic `orders`, replicas on brokers 3, 4 and 5, in sync on 3 and 4 only: at its
    /// minimum of 2, so neither 3 nor 4 may restart.
    fn at_minimum_isr() -> ClusterState {
        let voter = |replica_id| QuorumReplica {
            replica_id,
            directory_id: Default::default(),
            log_end_offset: 10,
            last_fetch_timestamp: -1,
            last_caught_up_timestamp: -1,
        };
        ClusterState {
            quorum: QuorumInfo {
                leader_id: 0,
                leader_epoch: 1,
                high_watermark: 10,
                voters: vec![voter(0)],
                observers: Vec::new(),
            },
            topics: vec![TopicDescription {
                name: "orders".to_owned(),
                topic_id: Default::default(),
                internal: false,
                partitions: vec![PartitionDescription {
                    partition: 0,
                    leader: 3,
                    replicas: vec![3, 4, 5],
                    isr: vec![3, 4],
                }],
            }],
            min_isr: BTreeMap::from([("orders".to_owned(), 2)]),
            default_min_isr: 1,
            fetch_timeout_ms: DEFAULT_QUORUM_FETCH_TIMEOUT_MS,
        }
    }

    fn broker(node_id: i32) -> NodeToRoll {
        NodeToRoll {
            pod: format!("c-broker-{node_id}"),
            node_id,
            controller: false,
            broker: true,
            reasons: vec![RestartReason::ManualRollingUpdate],
        }
    }

    #[tokio::test]
    async fn nothing_restarts_when_the_admin_client_cannot_connect_while_a_topic_is_at_its_minimum()
    {
        // A port nothing listens on.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = closed.local_addr().unwrap().to_string();
        drop(closed);
        let admin = AdminClient::new(AdminConfig {
            bootstrap_servers: vec![address.clone()],
            security_protocol: SecurityProtocol::Plaintext,
            tls: None,
            sasl: None,
            client_id: "test".to_owned(),
            request_timeout: Duration::from_secs(2),
            operation_timeout: Duration::from_secs(2),
            host_resolution: HostResolution::System,
            unused_settings: Vec::new(),
        })
        .unwrap();
        let error = describe_all_topics(&admin).await.unwrap_err();
        let unchecked = Unchecked::from_describe_error(&error).unwrap();
        // What the checks would say, could they run: 3 and 4 hold `orders` at its minimum.
        let state = at_minimum_isr();
        let brokers = || vec![broker(3), broker(4)];
        assert!(matches!(
            next_step(brokers(), Ok((&state, Some(0))), 1),
            Some(RollDecision::Blocked(_))
        ));
        // Unchecked, nothing restarts either, and the reason names what is unreachable.
        match next_step::<ClusterState>(brokers(), Err(&unchecked), 1) {
            Some(RollDecision::Blocked(why)) => {
                assert!(why.contains("c-broker-3, c-broker-4"), "{why}");
                assert!(why.contains(&address), "{why}");
            }
            other => panic!("a broker restarted unchecked: {other:?}"),
        }
        assert_eq!(unchecked.reason(), "KafkaBrokersUnreachable");
    }

    #[test]
    fn only_a_running_pod_that_is_not_ready_is_asked_for_its_broker_state() {
        assert!(may_be_recovering(&pod(false, true)));
        assert!(!may_be_recovering(&pod(true, true)));
        assert!(!may_be_recovering(&pod(false, false)));
    }

    #[test]
    fn recovery_progress_is_described_with_what_is_left() {
        let state = BrokerState {
            code: 2,
            recovery: Some(RecoveryProgress {
                remaining_logs: 12,
                remaining_segments: 40,
            }),
        };
        assert_eq!(
            describe_recovery("c-broker-3", &state),
            "c-broker-3 is recovering its logs: 12 logs and 40 segments left"
        );
        let unknown = BrokerState {
            recovery: None,
            ..state
        };
        assert_eq!(
            describe_recovery("c-broker-3", &unknown),
            "c-broker-3 is recovering its logs"
        );
    }
}
