//! The Kafka reconciler: turns a `Kafka` and its `KafkaNodePool`s into a running cluster, as a
//! readable chain of named steps (`Reconciliation::run`), much like Strimzi's
//! `KafkaReconciler`:
//!
//! 0. Claim (module `claim`): while another cluster operator claims the Kafka too, nothing
//!    else runs and both report `NotReady` `ConflictingOperator`.
//! 1. CAs: create or renew the cluster and clients CAs (module `ca`).
//! 2. Model: keep each pool's storage where the desired change is one its volumes cannot
//!    follow (module `storage`, a `KafkaStorage` warning), validate the resources, assign
//!    node IDs, collect warnings.
//!    When the controllers change, or the Kafka asks for a dynamic KRaft quorum, the quorum
//!    is read (module `quorum`): a static quorum's controllers never change (`NotReady`
//!    `ControllerScalingRefused`) unless it first moves to the dynamic form, and the nodes of
//!    a dynamic quorum's voters still to be removed keep running.
//! 3. List the objects labelled for the Kafka component, once per kind; apply the listener
//!    Services/Ingresses/Routes and read their addresses (none yet: the reconciliation ends
//!    pending, `WaitingForListenerAddresses`).
//! 4. Issue or reuse the node certificates and build every desired object with
//!    `model::desired::build`, the only builder (module `objects`).
//! 5. Apply them in Strimzi's order: trust bundle, NetworkPolicy, claims (created, grown,
//!    never shrunk: module `storage`), ServiceAccount, init ClusterRoleBinding, Role,
//!    RoleBinding, node certificate Secrets, ConfigMaps, JMX Secret, PodDisruptionBudget,
//!    StrimziPodSets; write the node pool statuses.
//! 6. One cleanup pass deletes what is labelled for the component and no longer desired
//!    (objects of removed nodes and pools, a dropped NetworkPolicy or JMX Secret, the init
//!    ClusterRoleBinding when no longer needed).
//! 7. Check that the pods and the bootstrap Service's endpoints are ready; if not, the
//!    reconciliation ends pending (`WaitingForPods`, `WaitingForEndpoints`). Stuck pods
//!    (unschedulable, image pull failing, crash looping) of an older definition are deleted,
//!    so that their StrimziPodSet recreates them as now desired.
//! 8. Quorum (module `quorum`): with every pod ready, one voter change of a dynamic quorum
//!    (a caught-up new controller added, else an undesired voter removed while a caught-up
//!    majority stays), ending pending (`ControllerQuorumChange`).
//!    Roll (module `roll`): with every pod ready, restart the next nodes that must restart
//!    (outdated definition, manual rolling update) when it is safe, controllers first (the
//!    active controller last of them) and then brokers, and end pending (`RollingUpdate`, `RollingUpdateBlocked`,
//!    `WaitingForNodesToRejoin`); with nothing to restart, apply the dynamically updatable
//!    options to the running brokers.
//! 9. Components (module `components`): with nothing left to roll, apply the entity operator
//!    and Kafka Exporter the Kafka asks for, delete those it no longer asks for, and end
//!    pending (`WaitingForDeployments`) until their Deployments are ready.
//! 10. Automatic rebalancing (module `auto_rebalance`): with everything ready, the next step
//!     of `spec.cruiseControl.autoRebalance` on the auto-rebalancing KafkaRebalances. (Added
//!     brokers are recorded after step 2; a scale-down of brokers that hold replicas waits,
//!     the pools' nodes kept, when a `remove-brokers` rebalance is configured.)
//! 11. Delete the claims of removed nodes with `deleteClaim: true`; report the status.
//!
//! While the spec is invalid (the model's error, or windows that do not parse), the CA step
//! still runs, then the certificates of the nodes the StrimziPodSets run are renewed where due
//! (module `renewal`) and nothing else is applied; the controller brings such a Kafka back at
//! every periodic reconciliation, not only when it changes.
//!
//! No step waits: what takes time ends the reconciliation with
//! [`Reconciled::pending`], which reports a `Reconciling` condition with what is awaited
//! (`Ready` kept on a cluster that was Ready, `NotReady` `Creating` on a new one) and looks
//! again after a few seconds, or at once when a watched object changes (StrimziPodSet status
//! counts, Services getting load balancer addresses, EndpointSlices). So a change the user
//! makes meanwhile, e.g. a corrected image, is applied by the next reconciliation. What only
//! the user can end (a pod stuck on its current definition, an admin client that cannot be
//! created, another operator's claim) ends with [`Reconciled::stalled`]: `NotReady` at once.

mod auto_rebalance;
mod ca;
mod claim;
mod components;
#[cfg(test)]
mod decisions;
mod objects;
mod quorum;
mod reload;
mod renewal;
mod roll;
mod scale_down;
mod settings;
mod status;
mod storage;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::core::{DeserializeGuard, NamespaceResourceScope, PartialObjectMeta};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use strimzi_api::common::Condition;
use strimzi_api::kafka::{Kafka, KafkaAutoRebalanceStatus, KafkaStatus};
use strimzi_api::labels;
use strimzi_api::node_pool::{KafkaNodePool, ProcessRole};
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::rebalance::KafkaRebalance;
use strimzi_certificate_manager::leaf;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::apply::ApplyError;
use strimzi_operator_common::claim::{ClaimError, ClaimTiming, Claims, Verdict};
use strimzi_operator_common::controller::{ControllerBuilder, Reconciled, Reconciler};
use strimzi_operator_common::events::Severity;
use strimzi_operator_common::runtime::OperatorRuntime;

use crate::config::ClusterOperatorConfig;
use crate::model::desired::BuildError;
use crate::model::listeners::ListenerAddresses;
use crate::model::nodes::pods::definition_revisions;
use crate::model::{self, KafkaCluster, ModelError, ModelInput};
use crate::rolling::unchecked::{PodStanding, restarts_without_checks};
use strimzi_operator_common::blocking::{BlockingError, CpuPool};
use strimzi_operator_common::cache::{CacheScope, log_watch_failures};
use strimzi_operator_common::scoped_cache::ScopedCache;

pub use ca::ClusterCas;
use roll::RollingState;

/// Why a Kafka could not be reconciled; the reason becomes the `NotReady` condition's.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The Kafka and its node pools do not describe a valid cluster.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A CA Secret is unusable.
    #[error(transparent)]
    Ca(#[from] strimzi_certificate_manager::authority::CaError),
    /// A node certificate could not be issued.
    #[error(transparent)]
    Certificate(#[from] leaf::LeafError),
    /// The desired objects could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// `spec.maintenanceTimeWindows` has an invalid expression.
    #[error(transparent)]
    MaintenanceWindow(#[from] strimzi_certificate_manager::maintenance::MaintenanceWindowError),
    /// Writing an object failed.
    #[error(transparent)]
    Write(#[from] ApplyError),
    /// The Kafka's claim could not be checked.
    #[error(transparent)]
    Claim(#[from] ClaimError),
    /// Brokers to be removed still hold partition replicas (or cannot be checked).
    #[error("{0}")]
    ScaleDownBlocked(String),
    /// The controllers cannot change now (module `quorum`).
    #[error(transparent)]
    Quorum(#[from] crate::quorum::QuorumRefusal),
    /// The brokers answered an admin request with an error, or not in time.
    #[error("Kafka admin request failed: {0}")]
    Kafka(#[from] strimzi_operator_common::kafka::AdminError),
    /// Reading from the API server failed.
    #[error(transparent)]
    Api(#[from] ApiCallError),
    /// The operator stopped before certificate work it had queued could start.
    #[error("the operator is stopping")]
    Stopping,
    /// `route` listeners on a cluster that served no OpenShift Route API when the operator
    /// started: refused, as Strimzi refuses them.
    #[error(
        "route listeners need OpenShift's Route API (route.openshift.io/v1), which this \
         cluster did not serve when the operator started"
    )]
    RouteApiUnavailable,
}

/// Runs certificate work on the blocking threads of the process-wide [`CpuPool`], as many
/// at once as there are cores: generating an RSA key takes about half a second, and on the
/// async workers it would stall every watch and reconciliation of the operator meanwhile. A
/// panic in `work` panics here.
async fn off_the_async_workers<T, E>(
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, ReconcileError>
where
    T: Send + 'static,
    E: Into<ReconcileError> + Send + 'static,
{
    match CpuPool::global().run(work).await {
        Ok(result) => result.map_err(Into::into),
        Err(BlockingError::Panicked(message)) => panic!("certificate work panicked: {message}"),
        Err(BlockingError::Cancelled) => Err(ReconcileError::Stopping),
    }
}

impl ReconcileError {
    /// `what` (`get Secret`, `delete Pod`, ...) on `name` failed with `source`.
    fn api(what: &'static str, name: &str, source: kube::Error) -> Self {
        ApiCallError::new(what, name, source).into()
    }
}

impl ErrorReason for ReconcileError {
    fn reason(&self) -> &'static str {
        match self {
            Self::Model(error) => error.reason(),
            Self::Ca(error) => error.reason(),
            Self::Certificate(error) => error.reason(),
            Self::Build(error) => error.reason(),
            Self::MaintenanceWindow(error) => error.reason(),
            Self::Write(error) => error.reason(),
            Self::Claim(error) => error.reason(),
            Self::Kafka(error) => error.reason(),
            Self::ScaleDownBlocked(_) => "InvalidResourceException",
            Self::Quorum(refusal) => refusal.reason,
            Self::Api(_) => "KubernetesApiError",
            Self::Stopping => "OperatorStopping",
            Self::RouteApiUnavailable => "RouteApiUnavailable",
        }
    }

    /// An invalid Kafka or node pool spec (or maintenance window) waits for a change of the
    /// Kafka or its pools, which wakes the reconciliation, instead of retrying with backoff.
    fn is_permanent(&self) -> bool {
        matches!(
            self,
            Self::Model(_) | Self::MaintenanceWindow(_) | Self::Build(BuildError::Model(_))
        )
    }
}

/// Reconciles Kafka resources; node pools are read from a cache of its own.
pub struct KafkaAssembly {
    runtime: OperatorRuntime,
    config: Arc<ClusterOperatorConfig>,
    pools: ScopedCache<KafkaNodePool>,
    rolling: RollingState,
    recorded_auto_rebalance: auto_rebalance::RecordedAutoRebalance,
    /// Which Kafkas this operator, and no other, acts on.
    claims: Claims,
}

impl KafkaAssembly {
    /// The Kafka controller on `runtime`: Kafkas, their node pools and the objects made for
    /// them (labelled `strimzi.io/kind=Kafka`, mapped by `strimzi.io/cluster`) trigger
    /// reconciliations (the components' Deployments among them); so do the EndpointSlices of
    /// its Services, which carry the Services' labels, and the StrimziPodSets' status changes
    /// (every change of a watched object, status included, is an event of its metadata-only
    /// watch).
    pub fn controller(
        runtime: &OperatorRuntime,
        config: ClusterOperatorConfig,
    ) -> Result<BoxFuture<'static, ()>, crate::StartError> {
        let concurrency = config.concurrency;
        let reconciler = Self::new(runtime, config)?;
        let pools = reconciler.pools.clone();
        let owned = format!("{}=Kafka", labels::KIND);
        // Mapped by their cluster label, not by owner: per-node Services and ConfigMaps
        // belong to their KafkaNodePool, and must wake the Kafka all the same.
        ControllerBuilder::new(runtime, reconciler)
            .concurrency(concurrency)
            .watches_metadata::<Service, _>(&owned, |object| kafka_of(&object))
            .watches_metadata::<Ingress, _>(&owned, |object| kafka_of(&object))
            .watches_metadata::<ConfigMap, _>(&owned, |object| kafka_of(&object))
            .watches_metadata::<EndpointSlice, _>(&owned, |object| kafka_of(&object))
            .watches_metadata::<Deployment, _>(&owned, |object| kafka_of(&object))
            .watches_metadata::<KafkaRebalance, _>(labels::CLUSTER, |object| {
                auto_rebalance::is_auto_rebalance(&object)
                    .then(|| kafka_of(&object))
                    .flatten()
            })
            .wire(move |controller, scope, runtime| {
                // StrimziPodSets belong to their node pool: found by their cluster label.
                let api: Api<PartialObjectMeta<StrimziPodSet>> =
                    runtime.api(scope.namespace.as_deref());
                let config = watcher::Config::default().labels(&owned);
                let watched = CacheScope {
                    namespace: scope.namespace.clone(),
                    selector: Some(owned.clone()),
                };
                let pod_sets = log_watch_failures::<StrimziPodSet, _, _>(
                    watcher::watcher(api, config).default_backoff(),
                    &watched,
                )
                .touched_objects();
                let api: Api<KafkaNodePool> = runtime.api(scope.namespace.as_deref());
                let pools = pools.watch(api, scope.namespace.clone(), labels::CLUSTER);
                controller
                    .watches_stream(pools, |pool| kafka_of(&pool))
                    .watches_stream(pod_sets, |pod_set| kafka_of(&pod_set))
            })
            .build()
            .map_err(Into::into)
    }

    /// The reconciler on `runtime`, its node pool cache still empty (the controller fills
    /// it).
    fn new(
        runtime: &OperatorRuntime,
        config: ClusterOperatorConfig,
    ) -> Result<Self, crate::StartError> {
        let rolling = RollingState::new(
            runtime.metrics(),
            config.kafka_host_resolution,
            config.max_parallel_broker_restarts,
        )?;
        let claims = Claims::new(
            runtime.client().clone(),
            config.claim_identity(),
            ClaimTiming::for_interval(config.operator.full_reconciliation_interval),
        );
        Ok(Self {
            runtime: runtime.clone(),
            config: Arc::new(config),
            pools: ScopedCache::new(runtime.applier().field_manager()),
            rolling,
            recorded_auto_rebalance: auto_rebalance::RecordedAutoRebalance::default(),
            claims,
        })
    }
}

/// The Kafka named by the `strimzi.io/cluster` label of `object`, in its namespace.
fn kafka_of<K: Resource>(object: &K) -> Option<ObjectRef<DeserializeGuard<Kafka>>> {
    let namespace = object.meta().namespace.as_ref()?;
    let cluster = object.meta().labels.as_ref()?.get(labels::CLUSTER)?;
    Some(ObjectRef::new(cluster).within(namespace))
}

/// How soon a Kafka whose listeners have no address yet is looked at again; a change of their
/// Services or Ingresses reconciles it sooner.
const ADDRESSES_RECHECK: Duration = Duration::from_secs(10);
/// How soon a Kafka whose pods are not ready yet is looked at again; a change of a
/// StrimziPodSet's status reconciles it sooner.
const PODS_RECHECK: Duration = Duration::from_secs(10);
/// How soon a Kafka whose bootstrap Service has no ready endpoint yet is looked at again; a
/// change of its EndpointSlices reconciles it sooner.
const ENDPOINTS_RECHECK: Duration = Duration::from_secs(5);

/// What a reconciliation that ends before `Ready` waits for: the reason and message of its
/// `Reconciling` (or `NotReady`) condition, when to look again, and whether it waits for a
/// person ([`Reconciled::pending`], [`Reconciled::stalled`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Waiting {
    reason: &'static str,
    message: String,
    recheck_after: Duration,
    /// Whether only a person (or another change) can end the wait: a pod stuck on its current
    /// definition, a client the operator cannot create.
    stalled: bool,
}

/// What is awaited while some listeners have no address yet (e.g. a LoadBalancer Service
/// without an ingress address).
fn waiting_for_addresses(addresses: &ListenerAddresses) -> Option<Waiting> {
    (!addresses.pending.is_empty()).then(|| Waiting {
        reason: "WaitingForListenerAddresses",
        message: format!(
            "waiting for Kubernetes to assign addresses to listener(s) {}",
            addresses.pending.join(", ")
        ),
        recheck_after: ADDRESSES_RECHECK,
        stalled: false,
    })
}

/// A stuck pod of the cluster (see [`stuck`]) as the pods step found it.
struct StuckPod {
    /// The pod and why it is stuck, e.g. `my-cluster-broker-0 (ImagePullBackOff)`.
    description: String,
    /// Whether it was deleted to be recreated as now desired (it ran an older definition).
    replaced: bool,
}

impl Reconciler for KafkaAssembly {
    type Resource = Kafka;
    type Status = KafkaStatus;
    type Error = ReconcileError;

    async fn reconcile(
        &self,
        kafka: Arc<Kafka>,
    ) -> Result<Reconciled<KafkaStatus>, ReconcileError> {
        let namespace = kafka.namespace().unwrap_or_default();
        let in_namespace = self.pools.list(&namespace).await;
        // Strimzi's cluster operator counts the node pools it sees while reconciling Kafkas.
        self.runtime
            .metrics()
            .reconciliations(
                "KafkaNodePool",
                &namespace,
                &self.runtime.config().selector_string().unwrap_or_default(),
            )
            .set_count(in_namespace.len());
        let mut pools: Vec<KafkaNodePool> = in_namespace
            .into_iter()
            .filter(|pool| pool.labels().get(labels::CLUSTER) == Some(&kafka.name_any()))
            .map(|pool| (*pool).clone())
            .collect();
        if !has_controllers_and_brokers(&pools) {
            // The cache may not have seen (all) the pools of a Kafka created with them yet
            // (applied together, the Kafka first, or its pools' events still on the way):
            // asked of the API server before the Kafka is refused for lacking nodes of a
            // role, which a new cluster must not flash.
            let api: Api<KafkaNodePool> = self.runtime.api(Some(&namespace));
            let selector = format!("{}={}", labels::CLUSTER, kafka.name_any());
            pools = api
                .list(&ListParams::default().labels(&selector))
                .await
                .map_err(|source| ReconcileError::api("list KafkaNodePools", &namespace, source))?
                .items;
        }
        let key = kafka_key(&kafka);
        self.recorded_auto_rebalance.set(&key, None);
        // On the heap: the chain's state is too large for a worker thread's stack.
        let reconciled = Box::pin(
            Reconciliation {
                operator: self,
                kafka: &kafka,
                name: kafka.name_any(),
                namespace: kafka.namespace().unwrap_or_default(),
                pools,
                warnings: Vec::new(),
                metadata_version: None,
                auto_rebalance: kafka
                    .status
                    .as_ref()
                    .and_then(|status| status.auto_rebalance.clone()),
                desired_controllers: BTreeSet::new(),
            }
            .run(),
        )
        .await;
        if reconciled.is_ok() {
            self.recorded_auto_rebalance.set(&key, None);
        }
        reconciled
    }

    /// The CA step and the renewal of the running nodes' certificates go on while the spec
    /// is invalid.
    fn reconciles_invalid_periodically(&self) -> bool {
        true
    }

    /// A Kafka no reconciliation has finished yet is `NotReady` `Creating` while it is being
    /// deployed, as Strimzi writes it for a new Kafka.
    fn creating_condition(&self, previous: Option<&KafkaStatus>, now: &str) -> Option<Condition> {
        previous
            .is_none_or(|status| status.operator_last_successful_version.is_none())
            .then(|| strimzi_operator_common::status::creating_kafka(now))
    }

    fn failure_status(&self, kafka: &Kafka, previous: KafkaStatus) -> KafkaStatus {
        self.recorded_auto_rebalance
            .failure_status(&kafka_key(kafka), previous)
    }
}

/// `namespace/name` of `kafka`, the key of what the operator keeps about it between
/// reconciliations.
fn kafka_key(kafka: &Kafka) -> String {
    format!(
        "{}/{}",
        kafka.namespace().unwrap_or_default(),
        kafka.name_any()
    )
}

/// One reconciliation of one Kafka: what the steps share.
pub(crate) struct Reconciliation<'a> {
    operator: &'a KafkaAssembly,
    kafka: &'a Kafka,
    name: String,
    namespace: String,
    /// The node pools labelled for this Kafka.
    pools: Vec<KafkaNodePool>,
    /// `Warning` conditions collected by the steps: reason and message.
    warnings: Vec<(String, String)>,
    /// The metadata version the brokers reported, when the rolling step asked them.
    metadata_version: Option<String>,
    /// `status.autoRebalance` as this reconciliation leaves it.
    auto_rebalance: Option<KafkaAutoRebalanceStatus>,
    /// The node IDs of the controllers the spec asks for, before any node is kept for a
    /// voter still to be removed (module `quorum`).
    desired_controllers: BTreeSet<i32>,
}

impl Reconciliation<'_> {
    /// The steps, in order. The CA step runs whatever the spec says; when the spec turns out
    /// invalid (a permanent error, which the controller still brings back at every periodic
    /// reconciliation), nothing else is applied but the renewal of the running nodes'
    /// certificates ([`Self::renew_running_certificates`]) before the error is reported.
    async fn run(mut self) -> Result<Reconciled<KafkaStatus>, ReconcileError> {
        if let Verdict::Conflict { operators } = self.check_claim().await? {
            return Ok(self.conflict_status(&operators).await);
        }
        let now = time::OffsetDateTime::now_utc();
        let windows = self.maintenance_window_open(now);
        // Windows that cannot be read hold no renewal back: the spec is invalid, so nothing
        // but certificates is written, and nothing restarts.
        let window_open = windows.as_ref().ok().copied().unwrap_or(true);
        let cas = self.reconcile_cas(now, window_open).await?;
        let reconciled = match windows {
            Ok(_) => self.reconcile_spec(&cas).await,
            Err(error) => Err(error),
        };
        match reconciled {
            Err(error) if error.is_permanent() => {
                self.renew_running_certificates(&cas).await?;
                Err(error)
            }
            reconciled => reconciled,
        }
    }

    /// The steps after the CA step, which need a valid spec.
    async fn reconcile_spec(
        &mut self,
        cas: &ClusterCas,
    ) -> Result<Reconciled<KafkaStatus>, ReconcileError> {
        self.keep_unchangeable_storage().await?;
        let warnings_before_model = self.warnings.len();
        let cluster = self.resolve_model().await?;
        let mut live = self.live_objects(&cluster).await?;
        let blocked = self.check_broker_removal(&cluster, &live, cas).await?;
        let cluster = if blocked.is_empty() {
            cluster
        } else {
            // The scale-down waits for a rebalance: the brokers stay for now.
            self.warnings.truncate(warnings_before_model);
            self.pools = auto_rebalance::undo_scale_down(&self.pools, &blocked);
            let kept = self.resolve_model().await?;
            let kept_brokers: BTreeSet<i32> = kept.brokers().map(|node| node.node_id).collect();
            if !blocked.is_subset(&kept_brokers) {
                return Err(ReconcileError::ScaleDownBlocked(format!(
                    "Cannot remove brokers {blocked:?}: they still hold partition replicas, and only a node pool's scale-down can wait for the automatic rebalance"
                )));
            }
            kept
        };
        let cluster = self
            .plan_quorum(cluster, &live, cas, warnings_before_model)
            .await?;
        self.record_added_brokers(&cluster, &live.broker_node_ids());
        let observed = self.apply_listeners(&cluster, &mut live).await?;
        let addresses = cluster.listener_addresses(&observed);
        if let Some(waiting) = waiting_for_addresses(&addresses) {
            // The certificates and the configuration need the addresses.
            return Ok(self.pending_status(&cluster, None, waiting));
        }
        let desired = self
            .build_desired(&cluster, cas, &observed, &addresses, &live)
            .await?;
        self.apply_desired(&desired, &live).await?;
        self.write_pool_statuses(&cluster).await?;
        self.delete_undesired(&cluster, &desired, &live).await?;
        let sets = self
            .list::<StrimziPodSet>(&cluster.component_labels().selector_string())
            .await?;
        let waiting = match self.check_pods_ready(&cluster, &sets).await? {
            Some(waiting) => Some(waiting),
            None => match self.check_endpoints(&cluster).await? {
                Some(waiting) => Some(waiting),
                None => match self
                    .change_quorum(&cluster, &desired.cluster_operator_certificate, cas)
                    .await?
                {
                    Some(waiting) => Some(waiting),
                    None => match self.roll(&cluster, &desired, cas, &sets).await? {
                        Some(waiting) => Some(waiting),
                        None => match self.reconcile_components(&cluster, cas).await? {
                            Some(waiting) => Some(waiting),
                            None => {
                                self.reconcile_auto_rebalance(&blocked).await?;
                                None
                            }
                        },
                    },
                },
            },
        };
        let status = self.kafka_status(&cluster, &desired, cas);
        if let Some(waiting) = waiting {
            return Ok(self.pending_status(&cluster, Some(status.status), waiting));
        }
        self.delete_removed_claims(&desired, live.claims()).await?;
        Ok(status)
    }

    fn client(&self) -> Client {
        self.operator.runtime.client().clone()
    }

    fn api<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    {
        Api::namespaced(self.client(), &self.namespace)
    }

    /// A Normal Event about the Kafka: something the operator changed on the user's behalf.
    async fn tell(&self, reason: &str, action: &str, note: &str) {
        self.publish(Severity::Normal, reason, action, note).await;
    }

    /// A Warning Event about the Kafka: something keeps the operator from going on.
    async fn alert(&self, reason: &str, action: &str, note: &str) {
        self.publish(Severity::Warning, reason, action, note).await;
    }

    async fn publish(&self, severity: Severity, reason: &str, action: &str, note: &str) {
        self.operator
            .runtime
            .events()
            .publish_logged(&self.kafka.object_ref(&()), severity, reason, action, note)
            .await;
    }

    fn warn(&mut self, reason: &str, message: &str) {
        self.warnings.push((reason.to_owned(), message.to_owned()));
    }

    /// The cluster ID: from the Kafka's status, else from a node pool's, else a new one,
    /// which is written into the Kafka's status at once so that it is generated only once.
    async fn cluster_id(&self) -> Result<String, ReconcileError> {
        let known = self
            .kafka
            .status
            .as_ref()
            .and_then(|status| status.cluster_id.clone())
            .or_else(|| {
                self.pools
                    .iter()
                    .find_map(|pool| pool.status.as_ref()?.cluster_id.clone())
            });
        if let Some(id) = known {
            return Ok(id);
        }
        let id = status::new_cluster_id();
        let body = serde_json::json!({
            "apiVersion": Kafka::api_version(&()),
            "kind": Kafka::kind(&()),
            "status": {"clusterId": id},
        });
        // A field manager of its own, so that later status writes never drop it.
        self.api::<Kafka>()
            .patch_status(
                &self.name,
                &PatchParams::apply(CLUSTER_ID_FIELD_MANAGER).force(),
                &Patch::Apply(&body),
            )
            .await
            .map_err(|source| ReconcileError::api("write the cluster ID of", &self.name, source))?;
        self.operator
            .runtime
            .metrics()
            .count_write("Kafka", "status");
        Ok(id)
    }

    /// Validates the Kafka and its pools, assigns node IDs and collects the warnings.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn resolve_model(&mut self) -> Result<KafkaCluster, ReconcileError> {
        let cluster_id = self.cluster_id().await?;
        let reported = self.reported_metadata_version();
        let cluster = model::resolve(&ModelInput {
            kafka: self.kafka,
            pools: &self.pools,
            cluster_id: &cluster_id,
            metadata_version_in_use: reported.as_deref(),
            config: &self.operator.config.model,
        })?;
        for warning in cluster.all_warnings() {
            self.warn(&warning.reason, &warning.message);
        }
        Ok(cluster)
    }

    /// Server-side applies an object of a kind this crate has no type for (OpenShift Routes,
    /// Gateway API TLSRoutes) and returns it as the API server has it.
    async fn apply_dynamic(
        &self,
        object: &kube::api::DynamicObject,
    ) -> Result<kube::api::DynamicObject, ReconcileError> {
        let types = object.types.clone().unwrap_or_default();
        let (group, version) = types
            .api_version
            .split_once('/')
            .unwrap_or(("", types.api_version.as_str()));
        let gvk = kube::api::GroupVersionKind::gvk(group, version, &types.kind);
        let resource = kube::api::ApiResource::from_gvk(&gvk);
        let api: Api<kube::api::DynamicObject> =
            Api::namespaced_with(self.client(), &self.namespace, &resource);
        let name = object.name_any();
        let applied = api
            .patch(
                &name,
                &PatchParams::apply(self.operator.runtime.applier().field_manager()).force(),
                &Patch::Apply(object),
            )
            .await
            .map_err(|source| ReconcileError::api("apply", &name, source))?;
        Ok(applied)
    }

    async fn list<K>(&self, selector: &str) -> Result<Vec<K>, ReconcileError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + DeserializeOwned
            + Clone
            + std::fmt::Debug,
    {
        Ok(self
            .api::<K>()
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|source| ReconcileError::api("list", &K::kind(&()), source))?
            .items)
    }

    /// Checks once, with the cluster's StrimziPodSets as listed, whether every pool's set
    /// reports all its pods ready; if not, what is awaited, after deleting stuck pods of an
    /// older definition ([`Self::restart_stuck_pods`]). StrimziPodSet status changes wake
    /// the reconciliation again, the recheck delay covers anything else.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn check_pods_ready(
        &mut self,
        cluster: &KafkaCluster,
        sets: &[StrimziPodSet],
    ) -> Result<Option<Waiting>, ReconcileError> {
        let mut not_ready = Vec::new();
        for pool in &cluster.pools {
            let name = strimzi_api::naming::pool_pod_set(&cluster.name, &pool.name);
            let expected = i32::try_from(pool.node_ids.len()).unwrap_or(i32::MAX);
            let observed = sets
                .iter()
                .find(|set| set.name_any() == name)
                .and_then(|set| {
                    let status = set.status.as_ref()?;
                    (status.observed_generation == set.meta().generation).then_some(status)
                });
            match observed {
                Some(status)
                    if status.pods == Some(expected) && status.ready_pods == Some(expected) => {}
                Some(status) => not_ready.push(format!(
                    "{name}: {} of {expected} ready",
                    status.ready_pods.unwrap_or(0)
                )),
                None => not_ready.push(format!("{name}: not reconciled yet")),
            }
        }
        if not_ready.is_empty() {
            return Ok(None);
        }
        let stuck = self.restart_stuck_pods(cluster, sets).await?;
        let mut message = format!(
            "waiting for the Kafka pods to be ready (StrimziPodSet {})",
            not_ready.join(", ")
        );
        if !stuck.is_empty() {
            let described: Vec<&str> = stuck.iter().map(|pod| pod.description.as_str()).collect();
            message.push_str(&format!("; stuck: {}", described.join(", ")));
        }
        Ok(Some(Waiting {
            reason: "WaitingForPods",
            message,
            recheck_after: PODS_RECHECK,
            // A stuck pod of the current definition waits for the user to change something.
            stalled: stuck.iter().any(|pod| !pod.replaced),
        }))
    }

    /// Deletes the cluster's stuck pods (see [`stuck`]) whose `strimzi.io/revision` is not
    /// the one their StrimziPodSet lists, so that the set recreates them as now desired: as
    /// Strimzi's roller does first of all, since such a pod never ran and a restart cannot
    /// make things worse. A stuck pod of the current definition is left alone: the user has
    /// to change something. Each stuck pod described, e.g. `my-cluster-broker-0
    /// (Unschedulable: ...)`.
    async fn restart_stuck_pods(
        &self,
        cluster: &KafkaCluster,
        sets: &[StrimziPodSet],
    ) -> Result<Vec<StuckPod>, ReconcileError> {
        let desired = crate::pod_set::described_annotations(sets);
        let pods = self
            .list::<Pod>(&format!("{}={}", labels::CLUSTER, cluster.name))
            .await?;
        let mut described = Vec::new();
        for pod in &pods {
            let name = pod.name_any();
            let Some(wanted) = desired.get(&name) else {
                continue;
            };
            if pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let why = crate::pod_set::stuck(pod);
            let standing = match &why {
                Some(_) => PodStanding::Stuck {
                    outdated: definition_revisions(Some(wanted))
                        != definition_revisions(pod.metadata.annotations.as_ref()),
                },
                None if crate::pod_set::is_ready(pod) => PodStanding::Ready,
                None => PodStanding::NotReady,
            };
            // Any other pod is waited for (a ready one restarts in the rolling step, with
            // the safety checks).
            let (true, Some(why)) = (restarts_without_checks(standing), why.as_ref()) else {
                if let Some(why) = &why {
                    described.push(StuckPod {
                        description: format!("{name} ({why})"),
                        replaced: false,
                    });
                }
                continue;
            };
            match self
                .api::<Pod>()
                .delete(&name, &DeleteParams::default())
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(response)) if response.code == 404 => continue,
                Err(source) => return Err(ReconcileError::api("delete Pod", &name, source)),
            }
            self.operator.runtime.metrics().count_write("Pod", "delete");
            let reason = crate::rolling::RestartReason::PodStuck(why.clone());
            tracing::info!(pod = %name, %why, "deleted a stuck pod of an older definition");
            self.restarted(pod, &reason, " and runs an older definition")
                .await;
            described.push(StuckPod {
                description: format!("{name} ({why}; deleted, to be recreated as now desired)"),
                replaced: true,
            });
        }
        Ok(described)
    }

    /// Checks once, with one list of its EndpointSlices, whether the bootstrap Service has a
    /// ready endpoint; if not, what is awaited. EndpointSlice changes wake the reconciliation
    /// again (they carry the Service's labels), the recheck delay covers anything else.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn check_endpoints(
        &self,
        cluster: &KafkaCluster,
    ) -> Result<Option<Waiting>, ReconcileError> {
        if cluster.brokers().next().is_none() {
            return Ok(None);
        }
        let service = strimzi_api::naming::bootstrap_service(&cluster.name);
        let slices = self
            .list::<EndpointSlice>(&format!("kubernetes.io/service-name={service}"))
            .await?;
        let ready = slices.iter().any(|slice| {
            slice.endpoints.iter().any(|endpoint| {
                endpoint
                    .conditions
                    .as_ref()
                    .and_then(|conditions| conditions.ready)
                    .unwrap_or(false)
            })
        });
        Ok((!ready).then(|| Waiting {
            reason: "WaitingForEndpoints",
            message: format!("waiting for a ready endpoint of Service {service}"),
            recheck_after: ENDPOINTS_RECHECK,
            stalled: false,
        }))
    }
}

/// Field manager of the first write of the cluster ID.
const CLUSTER_ID_FIELD_MANAGER: &str = "strimzi-cluster-operator-cluster-id";

/// Whether `pools` have nodes of both KRaft roles, as a valid cluster's pools do.
fn has_controllers_and_brokers(pools: &[KafkaNodePool]) -> bool {
    [ProcessRole::Controller, ProcessRole::Broker]
        .into_iter()
        .all(|role| crate::model::nodes::resolve::has_nodes_with(pools, role))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn pool(roles: &[&str], replicas: i32) -> KafkaNodePool {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaNodePool",
            "metadata": {"name": "pool", "labels": {"strimzi.io/cluster": "c"}},
            "spec": {"replicas": replicas, "roles": roles,
                     "storage": {"type": "ephemeral"}},
        }))
        .unwrap()
    }

    #[test]
    fn pools_seen_before_all_arrived_are_asked_of_the_api_server() {
        // Each of these makes the cached view be checked against the API server.
        assert!(!has_controllers_and_brokers(&[]));
        assert!(!has_controllers_and_brokers(&[pool(&["controller"], 3)]));
        assert!(!has_controllers_and_brokers(&[
            pool(&["controller"], 3),
            pool(&["broker"], 0)
        ]));
        // A complete set is taken from the cache.
        assert!(has_controllers_and_brokers(&[
            pool(&["controller"], 3),
            pool(&["broker"], 3)
        ]));
        assert!(has_controllers_and_brokers(&[pool(
            &["controller", "broker"],
            1
        )]));
    }

    #[test]
    fn listeners_without_addresses_are_awaited_briefly() {
        let mut addresses = ListenerAddresses::default();
        assert_eq!(waiting_for_addresses(&addresses), None);
        addresses.pending = vec!["external".to_owned(), "lb".to_owned()];
        let waiting = waiting_for_addresses(&addresses).unwrap();
        assert_eq!(waiting.reason, "WaitingForListenerAddresses");
        assert!(waiting.message.ends_with("listener(s) external, lb"));
        assert!(waiting.recheck_after <= Duration::from_secs(10));
    }
}
