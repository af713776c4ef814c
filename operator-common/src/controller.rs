//! Controllers on kube-runtime's `Controller`: the primary kind watched in the configured
//! namespaces with the custom-resource selector, owned kinds watched by label as metadata
//! only, shared caches, one reconciliation per resource at a time, a periodic full
//! reconciliation, exponential backoff with jitter after failures, reconciliations that end
//! in progress ([`Reconciled::pending`]: a `Reconciling` condition with what is awaited, `Ready`
//! kept as Strimzi keeps it while it works, looked at again after a delay or on a watch event,
//! not a failure) or stalled ([`Reconciled::stalled`]: `NotReady`), resources that do not
//! deserialize reported in their status without breaking the watch, the
//! `strimzi.io/pause-reconciliation` annotation, an optional finalizer for cleanup on
//! deletion, status written only when it changed, and reconciliation only while leading.
//! Kinds whose state is a condition type of their own (KafkaRebalance) report that condition
//! instead of `Ready` ([`Reconciled::in_state`]), and have the annotations they acted on
//! removed once the status is written.

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::core::object::HasStatus;
use kube::core::{DeserializeGuard, NamespaceResourceScope, PartialObjectMeta};
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::finalizer::{Error as FinalizerError, Event as FinalizerEvent, finalizer};
use kube::runtime::reflector::Store;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use rand::Rng;
use serde::Serialize;
use serde::de::DeserializeOwned;
use strimzi_api::annotations;
use strimzi_api::common::Condition;
use strimzi_api::conditions;
use tracing::Instrument;

use crate::ErrorReason;
use crate::cache::{CacheError, CacheScope, Subscription, WatchedKind, log_watch_failures};
use crate::config::WatchedNamespaces;
use crate::events::Severity;
use crate::runtime::OperatorRuntime;
use crate::status::{self, OperatorStatus};

/// Delay before the first retry of a failed reconciliation.
const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// Longest delay between retries.
const BACKOFF_MAX: Duration = Duration::from_secs(300);
/// How often the `strimzi_resources` gauges are refreshed.
const RESOURCE_GAUGE_PERIOD: Duration = Duration::from_secs(10);
/// Default number of resources reconciled at once by one controller.
pub const DEFAULT_CONCURRENCY: u16 = 16;
/// Reason of the `NotReady` condition of a resource that does not deserialize.
pub const INVALID_RESOURCE: &str = "InvalidResource";

/// What an operator does for one kind of custom resource.
pub trait Reconciler: Send + Sync + 'static {
    /// The custom resource kind.
    type Resource: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + HasStatus<Status = Self::Status>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static;
    /// Its status.
    type Status: OperatorStatus;
    /// Why a reconciliation failed.
    type Error: ErrorReason + Send + Sync + 'static;

    /// Brings the world in line with `resource` and returns the status to report (without
    /// `Ready`, `NotReady` and `observedGeneration`, which the controller sets). A
    /// reconciler never waits inside a reconciliation for something that takes time: it
    /// applies what it can and returns [`Reconciled::pending`], and is called again when a
    /// watch event arrives or the recheck delay has passed.
    fn reconcile(
        &self,
        resource: Arc<Self::Resource>,
    ) -> impl Future<Output = Result<Reconciled<Self::Status>, Self::Error>> + Send;

    /// A finalizer that keeps a deleted resource until [`Self::cleanup`] succeeded, for
    /// kinds whose deletion needs work outside Kubernetes; `None` (the default) otherwise.
    /// A paused resource keeps its finalizer until reconciliation resumes.
    fn finalizer(&self) -> Option<&'static str> {
        None
    }

    /// This reconciler's finalizer while it is turned off (Strimzi's
    /// `STRIMZI_USE_FINALIZERS=false`), `None` (the default) otherwise: removed from every
    /// resource that still carries it from a run with finalizers, as Strimzi removes it, so
    /// that no deleted resource (nor its namespace) stays `Terminating`. A resource being
    /// deleted then goes without [`Self::cleanup`], as without finalizers.
    fn retired_finalizer(&self) -> Option<&'static str> {
        None
    }

    /// Whether a resource whose reconciliation failed with a permanent error (an invalid
    /// spec, [`ErrorReason::is_permanent`]) is reconciled again at the periodic full
    /// reconciliation, for kinds that still keep up what already runs while their spec is
    /// invalid (a Kafka's certificates); `false` (the default): it waits for a change.
    fn reconciles_invalid_periodically(&self) -> bool {
        false
    }

    /// The condition reporting a failed reconciliation: `NotReady` (the default, as
    /// Strimzi's cluster operator writes it) or [`status::ready_false`] (as its topic
    /// operator does).
    fn failure_condition(&self, reason: &str, message: &str, now: &str) -> Condition {
        status::not_ready(reason, message, now)
    }

    /// The condition reporting a reconciliation that stalled ([`Reconciled::stalled`], or
    /// progress unchanged for longer than the operation timeout): `NotReady` with the pending
    /// reason and message (the default, Strimzi's condition for a resource that is not ready).
    fn stalled_condition(&self, reason: &str, message: &str, now: &str) -> Condition {
        status::not_ready(reason, message, now)
    }

    /// The condition a resource that has never been ready reports, beside `Reconciling`,
    /// while its reconciliation makes progress: none (the default: Strimzi writes the status
    /// of most kinds only at the end of a reconciliation), or what Strimzi writes first for
    /// the kind (a new Kafka's `NotReady` `Creating`). `previous` is the status before.
    fn creating_condition(&self, previous: Option<&Self::Status>, now: &str) -> Option<Condition> {
        let _ = (previous, now);
        None
    }

    /// The status reported, with the failure condition, when reconciling `resource` failed:
    /// `previous` unchanged (the default), or with the fields a kind reports whatever the
    /// outcome (a Connect cluster's URL and replicas, as Strimzi writes them).
    fn failure_status(&self, resource: &Self::Resource, previous: Self::Status) -> Self::Status {
        let _ = resource;
        previous
    }

    /// Removes what `resource`, now being deleted, made outside Kubernetes; retried with
    /// backoff until it succeeds, and possibly called again after it did, so it must be
    /// idempotent. Only called with a [`Self::finalizer`]. A failure is reported as a failed
    /// reconciliation is: the [`Self::failure_condition`] in the status, and a Warning Event.
    fn cleanup(
        &self,
        resource: Arc<Self::Resource>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        drop(resource);
        std::future::ready(Ok(()))
    }
}

/// The outcome of a reconciliation that did not fail: done ([`Reconciled::new`]), still in
/// progress ([`Reconciled::pending`]), waiting for something that takes time (pods to become
/// ready, a load balancer address, a rolling update) without holding the reconciliation open
/// meanwhile, or stalled ([`Reconciled::stalled`]): waiting for something only a person or
/// another change can bring (a pod whose image cannot be pulled, another operator claiming
/// the resource).
///
/// What the controller makes of it, keeping Strimzi's meaning of `Ready`, `NotReady` and
/// `observedGeneration`, which tools read (Argo CD's health checks, `kubectl wait
/// --for=condition=Ready`, alert rules): Strimzi leaves the status as it was while a
/// reconciliation works (a Ready cluster stays `Ready` while it rolls), writes `NotReady`
/// `Creating` first for a new Kafka only, and writes `observedGeneration` when a
/// reconciliation ends, successful or failed. Progress is shown in a condition of its own,
/// `Reconciling` (status `True`, the pending reason and message), which Strimzi-aware tools do
/// not misread: not `Warning`, not `NotReady`; it is the condition kstatus (Flux, kpt) reads
/// as work in progress, and it is there only while that work goes on.
///
/// | | done | progress, was `Ready` | progress, not `Ready` | stalled, or progress unchanged for the operation timeout |
/// |---|---|---|---|---|
/// | conditions | `Ready` | `Ready` (transition time kept), `Reconciling` | [`Reconciler::creating_condition`] (a new Kafka's `NotReady` `Creating`; else none), `Reconciling` | [`Reconciler::stalled_condition`]: `NotReady` with the pending reason and message (and `Reconciling` as it was, when timed out) |
/// | `Warning` conditions | written | written | written | written |
/// | `observedGeneration` | the generation | as it was | as it was | the generation |
/// | metrics | a successful reconciliation | the same | the same | the same |
/// | Warning Event | none | none | none | none |
/// | backoff after earlier failures | reset | reset | reset | reset |
/// | next reconciliation | on a watch event, else after the full reconciliation interval (less up to a fifth, at random, so that resources reconciled together spread out) | on a watch event, else [`Action::requeue`] after `recheck_after` | the same | the same |
///
/// Progress is unchanged while its reason and message stay the same (the `Reconciling`
/// condition keeps its transition time); the operation timeout is
/// `STRIMZI_OPERATION_TIMEOUT_MS` (5 minutes by default), after which Strimzi's reconciliation
/// would have failed. A failed reconciliation (an error) is `NotReady` with the error's reason
/// and writes the generation, as Strimzi does.
///
/// Kinds whose state is the type of their condition (a KafkaRebalance is `ProposalReady`,
/// `Rebalancing`, ...) report that condition instead ([`Reconciled::in_state`]), and may leave
/// `observedGeneration` as it was ([`Reconciled::keep_observed_generation`]), have request
/// annotations removed once the status is written ([`Reconciled::remove_annotation`]), or leave
/// a resource alone altogether ([`Reconciled::ignored`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reconciled<S> {
    /// The kind-specific part of the status.
    pub status: S,
    /// `Warning` conditions to report next to `Ready` (or the conditions of a pending one).
    pub warnings: Vec<Condition>,
    /// What the reconciliation still waits for; `None` when it is done.
    pub pending: Option<Pending>,
    /// The condition reported instead of `Ready` or the pending one, and when to look again.
    pub state: Option<ReportedState>,
    /// Whether `observedGeneration` stays as it was: the reconciliation could not act on the
    /// current generation yet, and the next one must see the change again.
    pub keep_observed_generation: bool,
    /// Annotations (key and value) to remove from the resource once the status is written,
    /// each only while it still has that value.
    pub remove_annotations: Vec<(String, String)>,
    /// Whether the resource is left alone: no status written, nothing published.
    pub ignored: bool,
}

/// A condition of the reconciler's own that stands for the resource's state (for example
/// `ProposalReady` with status `True`), and when to reconcile again.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportedState {
    /// The condition.
    pub condition: Condition,
    /// When to reconcile again at the latest; `None` for the periodic full reconciliation.
    pub recheck_after: Option<Duration>,
}

/// What an unfinished reconciliation waits for, and when to look again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pending {
    /// The reason of the `Reconciling` (or `NotReady`) condition, e.g. `WaitingForPods`.
    pub reason: String,
    /// Its message: what is awaited.
    pub message: String,
    /// When to reconcile again at the latest; a watch event of the resource or of what it
    /// watches reconciles it earlier.
    pub recheck_after: Duration,
    /// Whether it waits for a person rather than for the operator's own work
    /// ([`Reconciled::stalled`]).
    pub stalled: bool,
}

impl<S> Reconciled<S> {
    /// A finished reconciliation that reports `status` and no warnings.
    pub fn new(status: S) -> Self {
        Self {
            status,
            warnings: Vec::new(),
            pending: None,
            state: None,
            keep_observed_generation: false,
            remove_annotations: Vec::new(),
            ignored: false,
        }
    }

    /// A reconciliation that did what it could and now waits for something the operator's
    /// own work brings (`message` says what; `reason` is a word such as `WaitingForPods`): the
    /// resource reports `status` with a `Reconciling` condition (see the table above) and is
    /// reconciled again after `recheck_after`, or sooner when a watch event arrives. Progress,
    /// not an error: no failure is counted, no Warning Event published, and the backoff is
    /// reset.
    pub fn pending(status: S, reason: &str, message: &str, recheck_after: Duration) -> Self {
        Self::waiting(status, reason, message, recheck_after, false)
    }

    /// A reconciliation that waits for something only a person (or another change) can bring:
    /// a pod whose image cannot be pulled or that keeps crashing, another operator claiming
    /// the resource, a failed connector. Reported `NotReady` with `reason` and `message` at
    /// once, `observedGeneration` written; otherwise as [`Self::pending`] (looked at again
    /// after `recheck_after`, no failure counted, no Warning Event).
    pub fn stalled(status: S, reason: &str, message: &str, recheck_after: Duration) -> Self {
        Self::waiting(status, reason, message, recheck_after, true)
    }

    fn waiting(
        status: S,
        reason: &str,
        message: &str,
        recheck_after: Duration,
        stalled: bool,
    ) -> Self {
        Self {
            pending: Some(Pending {
                reason: reason.to_owned(),
                message: message.to_owned(),
                recheck_after,
                stalled,
            }),
            ..Self::new(status)
        }
    }

    /// A reconciliation that reports `status` with `condition` (the resource's state, such
    /// as `Rebalancing`) in place of `Ready`, and comes back after `recheck_after` (or at the
    /// periodic full reconciliation when `None`) unless a watch event comes first. Counted as
    /// a successful reconciliation.
    pub fn in_state(status: S, condition: Condition, recheck_after: Option<Duration>) -> Self {
        Self {
            state: Some(ReportedState {
                condition,
                recheck_after,
            }),
            ..Self::new(status)
        }
    }

    /// A resource this reconciler does not handle (a template, say): its status stays as it
    /// is and it is reconciled again on its next change.
    pub fn ignored() -> Self
    where
        S: Default,
    {
        Self {
            ignored: true,
            ..Self::new(S::default())
        }
    }

    /// Leaves `observedGeneration` as it was, so that the next reconciliation sees a spec
    /// change this one could not act on.
    pub fn keep_observed_generation(mut self) -> Self {
        self.keep_observed_generation = true;
        self
    }

    /// Removes annotation `key` from the resource once the status is written, if it still
    /// has `value` then: a request the user made with it was acted on, and the status now says
    /// so. A newer request of the user (another value) is left for the next reconciliation.
    pub fn remove_annotation(mut self, key: &str, value: &str) -> Self {
        self.remove_annotations
            .push((key.to_owned(), value.to_owned()));
        self
    }

    /// Adds a `Warning` condition.
    pub fn warn(mut self, reason: &str, message: &str) -> Self {
        self.warnings
            .push(status::warning(reason, message, &status::timestamp_now()));
        self
    }

    /// Whether the reconciliation still waits for something.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }
}

/// Why the controller ended a reconciliation without success.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The reconciler failed.
    #[error("{message}")]
    Reconcile {
        /// The reconciler error's reason.
        reason: &'static str,
        /// The reconciler error's text.
        message: String,
        /// Whether only a change of the resource can cure it.
        permanent: bool,
    },
    /// This replica stopped leading; the reconciliation was abandoned.
    #[error("stopped leading; reconciliation abandoned")]
    LostLeadership,
    /// Writing the status failed.
    #[error(transparent)]
    Status(#[from] crate::apply::ApplyError),
    /// Adding or removing the finalizer failed.
    #[error("{0}")]
    Finalizer(String),
}

/// The controller error of a reconciler error.
fn failure(error: &impl ErrorReason) -> ControllerError {
    ControllerError::Reconcile {
        reason: error.reason(),
        message: error.to_string(),
        permanent: error.is_permanent(),
    }
}

impl ErrorReason for ControllerError {
    fn reason(&self) -> &'static str {
        match self {
            Self::Reconcile { reason, .. } => reason,
            Self::LostLeadership => "LostLeadership",
            Self::Status(error) => error.reason(),
            Self::Finalizer(_) => "FinalizerError",
        }
    }
}

/// An operator's controllers could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Their caches could not be subscribed to.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// Their metrics could not be registered.
    #[error(transparent)]
    Metrics(#[from] crate::metrics::MetricsError),
}

type Guarded<R> = DeserializeGuard<<R as Reconciler>::Resource>;
type Wiring<R> = Box<
    dyn Fn(
            Controller<Guarded<R>>,
            &CacheScope,
            &OperatorRuntime,
            &Store<Guarded<R>>,
        ) -> Controller<Guarded<R>>
        + Send,
>;

/// Builds the controller of one reconciler on an operator's runtime.
pub struct ControllerBuilder<R: Reconciler> {
    runtime: OperatorRuntime,
    reconciler: Arc<R>,
    owned: Vec<Wiring<R>>,
    concurrency: u16,
    selected: bool,
}

impl<R: Reconciler> ControllerBuilder<R> {
    /// Reconciles at most `concurrency` resources at once (default
    /// [`DEFAULT_CONCURRENCY`]; 0 for no limit).
    pub fn concurrency(mut self, concurrency: u16) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// A builder of the controller of `reconciler`, which runs on `runtime`.
    pub fn new(runtime: &OperatorRuntime, reconciler: R) -> Self {
        Self {
            runtime: runtime.clone(),
            reconciler: Arc::new(reconciler),
            owned: Vec::new(),
            concurrency: DEFAULT_CONCURRENCY,
            selected: true,
        }
    }

    /// Reconciles every resource of the kind in the watched namespaces, whatever
    /// `STRIMZI_CUSTOM_RESOURCE_SELECTOR` says: for kinds Strimzi selects by the resource
    /// they belong to (a KafkaRebalance by its Kafka), which the reconciler then checks.
    pub fn ignore_custom_resource_selector(mut self) -> Self {
        self.selected = false;
        self
    }

    /// Reconciles the resources that name a `Parent` by the `strimzi.io/cluster` label (a
    /// KafkaRebalance its Kafka): every one in the watched namespaces, whatever
    /// `STRIMZI_CUSTOM_RESOURCE_SELECTOR` says (it selects the parents instead, which the
    /// reconciler checks), and those of a selected parent again when it changes.
    pub fn children_of<Parent>(self) -> Self
    where
        Parent: WatchedKind,
    {
        let parents = self.runtime.config().selector_string().unwrap_or_default();
        self.ignore_custom_resource_selector()
            .watches_related::<Parent>(&parents, crate::parent::names_parent::<Parent, R::Resource>)
    }

    /// Reconciles the owner of a `Child` (by owner reference) when the child is created,
    /// changed or deleted. Children are found by `selector` with a metadata-only watch and
    /// not cached, for reconcilers that read what they need when they need it.
    pub fn owns_metadata<Child>(mut self, selector: &str) -> Self
    where
        Child: WatchedKind,
    {
        let selector = selector.to_owned();
        self.owned
            .push(Box::new(move |controller, primary, runtime, _| {
                controller.owns_stream(metadata_watch::<Child>(runtime, primary, &selector))
            }));
        self
    }

    /// Reconciles the resources `mapper` names for a `Child` when the child is created,
    /// changed or deleted; children are found by `selector` with a metadata-only watch, as
    /// with [`Self::owns_metadata`], for children that belong to a resource without an owner
    /// reference to it (e.g. by a label naming it).
    pub fn watches_metadata<Child, I>(
        mut self,
        selector: &str,
        mapper: fn(PartialObjectMeta<Child>) -> I,
    ) -> Self
    where
        Child: WatchedKind,
        I: IntoIterator<Item = kube::runtime::reflector::ObjectRef<Guarded<R>>> + Send + 'static,
        I::IntoIter: Send,
    {
        let selector = selector.to_owned();
        self.owned
            .push(Box::new(move |controller, primary, runtime, _| {
                controller
                    .watches_stream(metadata_watch::<Child>(runtime, primary, &selector), mapper)
            }));
        self
    }

    /// Reconciles the resources of this controller's cache that `related` says concern an
    /// `Other` object, when that object is created, changed or deleted; the objects are found
    /// in the watched namespaces by `selector` with a metadata-only watch. For kinds that
    /// name the object they belong to without being owned by it (a KafkaRebalance names its
    /// Kafka by label).
    pub fn watches_related<Other>(
        mut self,
        selector: &str,
        related: fn(&PartialObjectMeta<Other>, &R::Resource) -> bool,
    ) -> Self
    where
        Other: WatchedKind,
    {
        let selector = selector.to_owned();
        self.owned
            .push(Box::new(move |controller, primary, runtime, store| {
                let store = store.clone();
                controller.watches_stream(
                    metadata_watch::<Other>(runtime, primary, &selector),
                    move |other| {
                        store
                            .state()
                            .into_iter()
                            .filter(|resource| {
                                resource
                                    .0
                                    .as_ref()
                                    .is_ok_and(|resource| related(&other, resource))
                            })
                            .map(|resource| {
                                kube::runtime::reflector::ObjectRef::from_obj(&*resource)
                            })
                            .collect::<Vec<_>>()
                    },
                )
            }));
        self
    }

    /// Adds triggers of the caller's to the controller of every watched scope: `wire` gets
    /// the controller, the scope (namespace and custom-resource selector) and the runtime,
    /// and returns the controller with more streams, for example `owns_stream` over a
    /// reflector whose cache the reconciler reads, or `watches_stream` mapping another kind to
    /// the resources it concerns.
    pub fn wire<F>(mut self, wire: F) -> Self
    where
        F: Fn(Controller<Guarded<R>>, &CacheScope, &OperatorRuntime) -> Controller<Guarded<R>>
            + Send
            + 'static,
    {
        self.owned
            .push(Box::new(move |controller, scope, runtime, _| {
                wire(controller, scope, runtime)
            }));
        self
    }

    /// The controller, ready to be run by [`OperatorRuntime::run`].
    pub fn build(self) -> Result<BoxFuture<'static, ()>, CacheError> {
        let scopes: Vec<Option<String>> = match &self.runtime.config().namespaces {
            WatchedNamespaces::All => vec![None],
            WatchedNamespaces::List(namespaces) => namespaces.iter().cloned().map(Some).collect(),
        };
        let selector = self
            .runtime
            .config()
            .selector_string()
            .filter(|_| self.selected);
        let shared = Arc::new(Shared {
            reconciler: self.reconciler,
            runtime: self.runtime.clone(),
            kind: R::Resource::kind(&()).into_owned(),
            selector: selector.clone().unwrap_or_default(),
            failures: Mutex::new(HashMap::new()),
            written: Mutex::new(HashMap::new()),
            periodic_due: Mutex::new(HashMap::new()),
        });
        let mut controllers = Vec::new();
        for namespace in scopes {
            let scope = CacheScope {
                namespace,
                selector: selector.clone(),
            };
            let api: Api<Guarded<R>> = self.runtime.api(scope.namespace.as_deref());
            let config = scope.watcher_config();
            let Subscription {
                store,
                events,
                filled,
            } = self
                .runtime
                .caches()
                .subscribe::<Guarded<R>>(&scope, move || watcher(api, config).boxed())?;
            let fingerprints = Fingerprints::default();
            let triggers = events.filter(skip_status_only_changes(fingerprints.clone()));
            let mut controller = Controller::for_shared_stream(triggers, store.clone())
                .with_config(ControllerConfig::default().concurrency(self.concurrency))
                .reconcile_all_on(leadership_acquired(self.runtime.leadership().clone()))
                .graceful_shutdown_on(self.runtime.shutdown_token().cancelled_owned());
            for wire in &self.owned {
                controller = wire(controller, &scope, &self.runtime, &store);
            }
            let context = shared.clone();
            let run = controller
                .run(reconcile::<R>, error_policy::<R>, context)
                .for_each(|result| async move {
                    if let Err(error) = result {
                        tracing::debug!(%error, "controller");
                    }
                });
            // Started once the cache is filled, so that kube-runtime's own wait for the store
            // returns at once (see the `cache` module on waiting for a store).
            controllers.push(
                async move {
                    filled.await;
                    run.await;
                }
                .boxed(),
            );
            controllers.push(maintain(shared.clone(), store, scope, fingerprints).boxed());
        }
        Ok(futures::future::join_all(controllers).map(|_| ()).boxed())
    }
}

/// A metadata-only watch of the `Child` objects of `scope` matching `selector` (an API of
/// partial objects makes metadata-only list and watch requests), yielding each object touched.
fn metadata_watch<Child: WatchedKind>(
    runtime: &OperatorRuntime,
    scope: &CacheScope,
    selector: &str,
) -> impl futures::Stream<Item = Result<PartialObjectMeta<Child>, watcher::Error>> + Send + 'static
{
    let api: Api<PartialObjectMeta<Child>> = runtime.api(scope.namespace.as_deref());
    let config = watcher::Config::default().labels(selector);
    let watched = CacheScope {
        namespace: scope.namespace.clone(),
        selector: Some(selector.to_owned()),
    };
    log_watch_failures::<Child, _, _>(watcher(api, config).default_backoff(), &watched)
        .touched_objects()
}

/// The fingerprint of each resource's last event, per `namespace/name`.
type Fingerprints = Arc<Mutex<HashMap<String, u64>>>;

/// A filter of primary-resource events that drops those where neither the generation nor
/// labels, annotations, finalizers or deletion changed: the controller's own status writes
/// must not start another reconciliation, nor cut a failure's backoff short.
fn skip_status_only_changes<K: Resource>(
    seen: Fingerprints,
) -> impl FnMut(&Arc<K>) -> futures::future::Ready<bool> + Send + 'static {
    move |object| {
        let meta = object.meta();
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (
            &meta.uid,
            meta.generation,
            &meta.labels,
            &meta.annotations,
            &meta.finalizers,
            meta.deletion_timestamp.is_some(),
        )
            .hash(&mut hasher);
        let fingerprint = hasher.finish();
        let previous = seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key(meta), fingerprint);
        futures::future::ready(previous != Some(fingerprint))
    }
}

/// A stream that yields each time this replica starts leading after not leading.
fn leadership_acquired(
    leadership: crate::leader::Leadership,
) -> impl futures::Stream<Item = ()> + Send + 'static {
    futures::stream::unfold(leadership, |leadership| async move {
        leadership.lost().await;
        leadership.acquired().await;
        Some(((), leadership))
    })
}

/// When a resource reconciled now is reconciled again unless a watch event comes first: the
/// periodic full reconciliation, Strimzi's safety net for anything a watch did not report.
/// Each resource keeps its own timer, shortened by up to a fifth at random, so that resources
/// reconciled together (at start, or after a leader change) drift apart instead of all
/// coming back at once.
pub fn periodic_delay(interval: Duration, rng: &mut impl Rng) -> Duration {
    interval.mul_f64(rng.random_range(0.8..=1.0))
}

/// State shared by the reconciliations of one controller.
struct Shared<R: Reconciler> {
    reconciler: Arc<R>,
    runtime: OperatorRuntime,
    kind: String,
    selector: String,
    /// Consecutive failures per `namespace/name`, for the backoff.
    failures: Mutex<HashMap<String, u32>>,
    /// The status last written per `namespace/name`, with the resource version the write
    /// was based on: while the cache still has that version, it has not seen the write.
    written: Mutex<HashMap<String, (String, R::Status)>>,
    /// When the periodic full reconciliation of each `namespace/name` is due: a
    /// reconciliation that starts then, with nothing else having started one before, is
    /// counted as periodical.
    periodic_due: Mutex<HashMap<String, Instant>>,
}

fn key(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

async fn reconcile<R: Reconciler>(
    object: Arc<Guarded<R>>,
    shared: Arc<Shared<R>>,
) -> Result<Action, ControllerError> {
    let leadership = shared.runtime.leadership().clone();
    if !leadership.is_leading() {
        // Reconciled by the leader; when this replica leads, everything is reconciled.
        return Ok(Action::await_change());
    }
    let span = tracing::info_span!(
        "reconcile",
        kind = %shared.kind,
        namespace = object.meta().namespace.as_deref().unwrap_or_default(),
        name = object.meta().name.as_deref().unwrap_or_default(),
    );
    let work = shared.reconcile_leading(object).instrument(span);
    tokio::select! {
        biased;
        () = leadership.lost() => Err(ControllerError::LostLeadership),
        result = work => result,
    }
}

fn error_policy<R: Reconciler>(
    object: Arc<Guarded<R>>,
    error: &ControllerError,
    shared: Arc<Shared<R>>,
) -> Action {
    match error {
        // Reconciled by the new leader.
        ControllerError::LostLeadership => return Action::await_change(),
        // An invalid spec, which only its change can cure: not retried, but still
        // reconciled periodically by a reconciler that keeps up what runs meanwhile.
        ControllerError::Reconcile {
            permanent: true, ..
        } => {
            return if shared.reconciler.reconciles_invalid_periodically() {
                Action::requeue(shared.periodically(object.meta()))
            } else {
                Action::await_change()
            };
        }
        _ => {}
    }
    let mut failures = shared
        .failures
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let attempts = failures.entry(key(object.meta())).or_insert(0);
    *attempts = attempts.saturating_add(1);
    let delay = backoff(*attempts, &mut rand::rng());
    tracing::debug!(attempts = *attempts, delay = ?delay, "retrying after backoff");
    shared
        .runtime
        .metrics()
        .reconciliations(
            &shared.kind,
            object.meta().namespace.as_deref().unwrap_or_default(),
            &shared.selector,
        )
        .retried();
    Action::requeue(delay)
}

/// What [`settle`] needs besides the outcome of the reconciliation.
struct Settling<'a, S> {
    /// The status before the reconciliation.
    previous: Option<&'a S>,
    /// The resource's generation.
    generation: Option<i64>,
    /// The time of the outcome.
    now: jiff::Timestamp,
    /// When to come back when done.
    periodic: Duration,
    /// How long progress may stay unchanged before it counts as stalled.
    operation_timeout: Duration,
}

/// The status to write after a reconciliation that did not fail, and what to do next.
#[derive(Debug)]
struct Settled<S> {
    /// The kind-specific part of the status.
    status: S,
    /// Its conditions, warnings last.
    conditions: Vec<Condition>,
    /// Its `observedGeneration`.
    observed_generation: Option<i64>,
    /// When to reconcile again.
    action: Action,
}

/// How a pending reconciliation is reported (see the table at [`Reconciled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Progress on a resource that was `Ready`.
    ProgressWhileReady,
    /// Progress on a resource that is not `Ready`.
    Progress,
    /// Stalled ([`Reconciled::stalled`]), or progress unchanged past the operation timeout
    /// (`timed_out`).
    Stalled {
        /// Whether it is progress that timed out.
        timed_out: bool,
    },
}

/// How `pending` is reported given the conditions before it, at `now`: progress whose
/// `Reconciling` condition, same reason and message, has been there for `timeout` or longer
/// counts as stalled.
fn standing(
    pending: &Pending,
    previous: &[Condition],
    now: jiff::Timestamp,
    timeout: Duration,
) -> Standing {
    if pending.stalled {
        return Standing::Stalled { timed_out: false };
    }
    let since = status::find_true(previous, conditions::RECONCILING)
        .filter(|condition| {
            condition.reason.as_deref() == Some(pending.reason.as_str())
                && condition.message.as_deref() == Some(pending.message.as_str())
        })
        .and_then(|condition| condition.last_transition_time.as_deref())
        .and_then(|time| time.parse::<jiff::Timestamp>().ok());
    let timeout = i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX);
    if since.is_some_and(|since| now.as_second().saturating_sub(since.as_second()) >= timeout) {
        Standing::Stalled { timed_out: true }
    } else if status::find_true(previous, conditions::READY).is_some() {
        Standing::ProgressWhileReady
    } else {
        Standing::Progress
    }
}

/// The status, conditions, `observedGeneration` and next action of a reconciliation that did
/// not fail: the reported state and a requeue after its recheck delay (else the periodic
/// one), or `Ready` and the periodic requeue, or a pending one's conditions (see the table at
/// [`Reconciled`]; `stalled_condition` and `creating_condition` are the reconciler's) and a
/// requeue after its recheck delay; the warnings after any.
fn settle<S: OperatorStatus>(
    reconciled: Reconciled<S>,
    settling: &Settling<'_, S>,
    stalled_condition: impl FnOnce(&str, &str, &str) -> Condition,
    creating_condition: impl FnOnce(Option<&S>, &str) -> Option<Condition>,
) -> Settled<S> {
    let now = status::timestamp(settling.now);
    let previous_generation = settling
        .previous
        .and_then(OperatorStatus::observed_generation);
    let Reconciled {
        status,
        warnings,
        pending,
        state,
        keep_observed_generation,
        ..
    } = reconciled;
    let ended = if keep_observed_generation {
        previous_generation
    } else {
        settling.generation
    };
    let (first, observed_generation, action) = match (state, pending) {
        (Some(state), _) => (
            vec![state.condition],
            ended,
            Action::requeue(state.recheck_after.unwrap_or(settling.periodic)),
        ),
        (None, None) => (
            vec![status::ready(&now)],
            ended,
            Action::requeue(settling.periodic),
        ),
        (None, Some(pending)) => {
            let previous = settling
                .previous
                .map(OperatorStatus::conditions)
                .unwrap_or_default();
            let reconciling = status::reconciling(&pending.reason, &pending.message, &now);
            let standing = standing(&pending, previous, settling.now, settling.operation_timeout);
            let (first, generation) = match standing {
                Standing::ProgressWhileReady => {
                    (vec![status::ready(&now), reconciling], previous_generation)
                }
                Standing::Progress => (
                    creating_condition(settling.previous, &now)
                        .into_iter()
                        .chain([reconciling])
                        .collect(),
                    previous_generation,
                ),
                Standing::Stalled { timed_out } => {
                    let not_ready = stalled_condition(&pending.reason, &pending.message, &now);
                    let kept = timed_out.then_some(reconciling);
                    (std::iter::once(not_ready).chain(kept).collect(), ended)
                }
            };
            (first, generation, Action::requeue(pending.recheck_after))
        }
    };
    Settled {
        status,
        conditions: first.into_iter().chain(warnings).collect(),
        observed_generation,
        action,
    }
}

/// The delay before retry number `attempt` (from 1): doubling from 1 s up to 5 minutes,
/// of which a random part up to half is taken off so that failures spread out.
pub fn backoff(attempt: u32, rng: &mut impl Rng) -> Duration {
    let exponential = BACKOFF_BASE.saturating_mul(1 << attempt.saturating_sub(1).min(16));
    let ceiling = exponential.min(BACKOFF_MAX);
    ceiling.mul_f64(rng.random_range(0.5..=1.0))
}

impl<R: Reconciler> Shared<R> {
    /// The delay of the periodic full reconciliation of the resource with `meta`, remembered
    /// so that the reconciliation it starts is counted as periodical.
    fn periodically(&self, meta: &ObjectMeta) -> Duration {
        let delay = periodic_delay(
            self.runtime.config().full_reconciliation_interval,
            &mut rand::rng(),
        );
        self.periodic_due
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key(meta), Instant::now() + delay);
        delay
    }

    /// Takes the periodic timer of the resource with `meta`: whether it has run out, so that
    /// a reconciliation starting now is the periodic one (nothing started one since the
    /// timer was set).
    fn take_periodic(&self, meta: &ObjectMeta) -> bool {
        self.periodic_due
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key(meta))
            .is_some_and(|due| Instant::now() >= due)
    }

    async fn reconcile_leading(&self, object: Arc<Guarded<R>>) -> Result<Action, ControllerError> {
        let resource = match &object.0 {
            Ok(resource) => resource,
            Err(invalid) => {
                self.report_invalid(&object, &invalid.error).await?;
                return Ok(Action::await_change());
            }
        };
        let previous = self.previous_status(resource);
        let previous = previous.as_ref();
        if annotations::is_true(
            resource.meta().annotations.as_ref(),
            annotations::PAUSE_RECONCILIATION,
        ) {
            let next = status::with_conditions(
                previous.cloned().unwrap_or_default(),
                previous,
                vec![status::paused(&status::timestamp_now())],
                previous.and_then(OperatorStatus::observed_generation),
            );
            self.write_status(resource, previous, &next).await?;
            tracing::info!("reconciliation paused");
            return Ok(Action::await_change());
        }
        let Some(finalizer_name) = self.reconciler.finalizer() else {
            if let Some(retired) = self.reconciler.retired_finalizer()
                && resource.finalizers().iter().any(|name| name == retired)
            {
                self.remove_finalizer(resource, retired).await?;
                if resource.meta().deletion_timestamp.is_some() {
                    return Ok(Action::await_change());
                }
            }
            return self.reconcile_resource(resource, previous).await;
        };
        let api: Api<R::Resource> = self.runtime.api(resource.meta().namespace.as_deref());
        finalizer(
            &api,
            finalizer_name,
            Arc::new(resource.clone()),
            |event| async move {
                match event {
                    FinalizerEvent::Apply(resource) => {
                        self.reconcile_resource(&resource, previous).await
                    }
                    FinalizerEvent::Cleanup(resource) => {
                        let regarding = resource.object_ref(&());
                        if let Err(error) = self.reconciler.cleanup(resource.clone()).await {
                            let (reason, message) = (error.reason(), error.to_string());
                            tracing::warn!(reason, %message, "cleanup failed");
                            let next = status::with_conditions(
                                previous.cloned().unwrap_or_default(),
                                previous,
                                vec![self.reconciler.failure_condition(
                                    reason,
                                    &message,
                                    &status::timestamp_now(),
                                )],
                                previous.and_then(OperatorStatus::observed_generation),
                            );
                            let written = self.write_status(&resource, previous, &next).await;
                            if !matches!(written, Ok(false)) {
                                self.publish_failure(regarding, reason, &message).await;
                            }
                            return Err(failure(&error));
                        }
                        tracing::info!("cleaned up");
                        Ok(Action::await_change())
                    }
                }
            },
        )
        .await
        .map_err(|error| match error {
            FinalizerError::ApplyFailed(error) | FinalizerError::CleanupFailed(error) => error,
            other => ControllerError::Finalizer(other.to_string()),
        })
    }

    /// Runs the reconciler on `resource` and writes the outcome into its status.
    async fn reconcile_resource(
        &self,
        resource: &R::Resource,
        previous: Option<&R::Status>,
    ) -> Result<Action, ControllerError> {
        let metrics = self.runtime.metrics().reconciliations(
            &self.kind,
            resource.meta().namespace.as_deref().unwrap_or_default(),
            &self.selector,
        );
        metrics.started();
        if self.take_periodic(resource.meta()) {
            metrics.periodical();
        }
        let started = Instant::now();
        // The reconciler sees the status this controller last wrote even when the cache has
        // not caught up with that write yet (what it derives from its own status, such as a
        // generated ID or a version in use, must not go back).
        let mut current = resource.clone();
        if let Some(previous) = previous {
            *current.status_mut() = Some(previous.clone());
        }
        let result = self.reconciler.reconcile(Arc::new(current)).await;
        let generation = resource.meta().generation;
        let now = status::timestamp_now();
        match result {
            Ok(reconciled) if reconciled.ignored => {
                metrics.finished(true, started.elapsed().as_secs_f64());
                tracing::debug!("not handled by this operator; left alone");
                Ok(Action::await_change())
            }
            Ok(reconciled) => {
                let pending = reconciled.pending.clone();
                let remove_annotations = reconciled.remove_annotations.clone();
                let periodic = self.periodically(resource.meta());
                let settling = Settling {
                    previous,
                    generation,
                    now: jiff::Timestamp::now(),
                    periodic,
                    operation_timeout: self.runtime.config().operation_timeout,
                };
                let Settled {
                    status: kind_status,
                    conditions,
                    observed_generation,
                    action,
                } = settle(
                    reconciled,
                    &settling,
                    |reason, message, now| self.reconciler.stalled_condition(reason, message, now),
                    |previous, now| self.reconciler.creating_condition(previous, now),
                );
                if action != Action::requeue(periodic) {
                    // A recheck comes first: the periodic timer is dropped.
                    self.take_periodic(resource.meta());
                }
                let next =
                    status::with_conditions(kind_status, previous, conditions, observed_generation);
                let written = self.write_status(resource, previous, &next).await;
                metrics.finished(written.is_ok(), started.elapsed().as_secs_f64());
                written?;
                self.failures
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&key(resource.meta()));
                for (annotation, value) in &remove_annotations {
                    self.remove_annotation(resource, annotation, value).await;
                }
                match pending {
                    None => tracing::info!(duration = ?started.elapsed(), "reconciled"),
                    Some(pending) => tracing::info!(
                        duration = ?started.elapsed(),
                        reason = pending.reason,
                        message = pending.message,
                        stalled = pending.stalled,
                        recheck_after = ?pending.recheck_after,
                        "reconciled as far as possible; waiting"
                    ),
                }
                Ok(action)
            }
            Err(error) => {
                metrics.finished(false, started.elapsed().as_secs_f64());
                let (reason, message) = (error.reason(), error.to_string());
                tracing::warn!(reason, %message, "reconciliation failed");
                let next = status::with_conditions(
                    self.reconciler
                        .failure_status(resource, previous.cloned().unwrap_or_default()),
                    previous,
                    vec![self.reconciler.failure_condition(reason, &message, &now)],
                    generation,
                );
                if self.write_status(resource, previous, &next).await? {
                    self.publish_failure(resource.object_ref(&()), reason, &message)
                        .await;
                }
                Err(ControllerError::Reconcile {
                    reason,
                    message,
                    permanent: error.is_permanent(),
                })
            }
        }
    }

    /// Removes finalizer `name` from `resource`: a JSON patch that tests the finalizer list
    /// first, so that a list changed meanwhile is read again rather than overwritten.
    async fn remove_finalizer(
        &self,
        resource: &R::Resource,
        name: &str,
    ) -> Result<(), ControllerError> {
        let meta = resource.meta();
        let finalizers = resource.finalizers();
        let Some(index) = finalizers.iter().position(|finalizer| finalizer == name) else {
            return Ok(());
        };
        let operations = serde_json::json!([
            {"op": "test", "path": "/metadata/finalizers", "value": finalizers},
            {"op": "remove", "path": format!("/metadata/finalizers/{index}")},
        ]);
        let patch: json_patch::Patch = serde_json::from_value(operations)
            .map_err(|error| ControllerError::Finalizer(error.to_string()))?;
        let api: Api<R::Resource> = self.runtime.api(meta.namespace.as_deref());
        match api
            .patch(
                meta.name.as_deref().unwrap_or_default(),
                &PatchParams::default(),
                &Patch::Json::<()>(patch),
            )
            .await
        {
            Ok(_) => {
                self.runtime.metrics().count_write(&self.kind, "patch");
                tracing::info!(finalizer = name, "removed the finalizer no longer in use");
                Ok(())
            }
            // Gone meanwhile.
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => Err(ControllerError::Finalizer(format!(
                "removing finalizer {name}: {error}"
            ))),
        }
    }

    /// Removes annotation `key` from `resource` if it still has `value`; a failure is
    /// logged, and the next reconciliation sees the annotation again.
    async fn remove_annotation(&self, resource: &R::Resource, key: &str, value: &str) {
        let meta = resource.meta();
        let (Some(namespace), Some(name)) = (&meta.namespace, &meta.name) else {
            return;
        };
        let kind = ApiResource::erase::<R::Resource>(&());
        match remove_annotation_if_unchanged(
            self.runtime.client(),
            &kind,
            namespace,
            name,
            key,
            value,
        )
        .await
        {
            Ok(true) => {
                self.runtime.metrics().count_write(&self.kind, "patch");
                tracing::info!(annotation = key, value, "removed the annotation acted on");
            }
            Ok(false) => tracing::debug!(annotation = key, "annotation changed meanwhile; kept"),
            Err(error) => tracing::warn!(%error, annotation = key, "removing an annotation"),
        }
    }

    /// The status of `resource` as last known: from the cache, or what this controller
    /// wrote last when the cache has not seen that write yet.
    fn previous_status(&self, resource: &R::Resource) -> Option<R::Status> {
        let key = key(resource.meta());
        let mut written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        match written.get(&key) {
            Some((version, status))
                if resource.meta().resource_version.as_ref() == Some(version) =>
            {
                Some(status.clone())
            }
            _ => {
                written.remove(&key);
                resource.status().cloned()
            }
        }
    }

    /// Writes `next` unless only timestamps differ from `previous`; whether it wrote.
    async fn write_status(
        &self,
        resource: &R::Resource,
        previous: Option<&R::Status>,
        next: &R::Status,
    ) -> Result<bool, ControllerError> {
        if !status::changed(previous, next) {
            return Ok(false);
        }
        self.runtime.applier().write_status(resource, next).await?;
        if let Some(version) = resource.meta().resource_version.clone() {
            self.written
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key(resource.meta()), (version, next.clone()));
        }
        Ok(true)
    }

    async fn publish_failure(
        &self,
        regarding: k8s_openapi::api::core::v1::ObjectReference,
        reason: &str,
        message: &str,
    ) {
        let published = self
            .runtime
            .events()
            .publish(&regarding, Severity::Warning, reason, "Reconcile", message)
            .await;
        if let Err(error) = published {
            tracing::warn!(%error, "publishing the failure Event");
        }
    }

    /// Gives a resource that does not deserialize a `NotReady` condition naming the field.
    async fn report_invalid(
        &self,
        object: &Guarded<R>,
        fallback: &str,
    ) -> Result<(), ControllerError> {
        let meta = object.meta();
        let namespace = meta.namespace.clone().unwrap_or_default();
        let name = meta.name.clone().unwrap_or_default();
        // Read again untyped, to name the field the typed reading stumbled on.
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.runtime.client().clone(),
            &namespace,
            &ApiResource::erase::<R::Resource>(&()),
        );
        let raw = api.get_opt(&name).await.ok().flatten();
        let document = raw.as_ref().and_then(|raw| serde_json::to_value(raw).ok());
        let message = document
            .and_then(|document| strimzi_api::document::from_value::<R::Resource>(document).err())
            .map_or_else(|| fallback.to_owned(), |error| error.to_string());
        let previous: Option<R::Status> = raw
            .as_ref()
            .and_then(|raw| raw.data.get("status"))
            .and_then(|status| serde_json::from_value(status.clone()).ok());
        let next = status::with_conditions(
            R::Status::default(),
            previous.as_ref(),
            vec![self.reconciler.failure_condition(
                INVALID_RESOURCE,
                &message,
                &status::timestamp_now(),
            )],
            meta.generation,
        );
        tracing::warn!(%message, "resource does not deserialize");
        if status::changed(previous.as_ref(), &next) {
            self.runtime.applier().write_status(object, &next).await?;
            self.publish_failure(object.object_ref(&()), INVALID_RESOURCE, &message)
                .await;
        }
        Ok(())
    }
}

/// Until shutdown, keeps the `strimzi_resources` and `strimzi_resources_paused` gauges of
/// one cache up to date (0 for the scope's namespace, or `""` for all namespaces, when it has
/// none, and for a namespace whose resources are all gone), and forgets what was remembered
/// about resources since deleted, their metric series included.
async fn maintain<R: Reconciler>(
    shared: Arc<Shared<R>>,
    store: Store<Guarded<R>>,
    scope: CacheScope,
    fingerprints: Fingerprints,
) {
    let shutdown = shared.runtime.shutdown_token();
    let mut counted_namespaces: HashSet<String> = HashSet::new();
    loop {
        let live: HashSet<String> = store
            .state()
            .iter()
            .map(|object| key(object.meta()))
            .collect();
        fingerprints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|key, _| live.contains(key));
        let forget = |key: &String| {
            let in_scope = scope.namespace.as_ref().is_none_or(|namespace| {
                key.strip_prefix(namespace.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
            });
            in_scope && !live.contains(key)
        };
        drop_forgotten(&shared.failures, &forget);
        drop_forgotten(&shared.written, &forget);
        drop_forgotten(&shared.periodic_due, &forget);
        shared
            .runtime
            .metrics()
            .retain_resources(&shared.kind, |namespace, name| {
                let key = format!("{namespace}/{name}");
                !forget(&key)
            });
        let mut per_namespace: HashMap<String, (usize, usize)> = counted_namespaces
            .iter()
            .chain(std::iter::once(
                &scope.namespace.clone().unwrap_or_default(),
            ))
            .map(|namespace| (namespace.clone(), (0, 0)))
            .collect();
        for object in store.state() {
            let counts = per_namespace
                .entry(object.namespace().unwrap_or_default())
                .or_default();
            counts.0 += 1;
            if annotations::is_true(
                object.meta().annotations.as_ref(),
                annotations::PAUSE_RECONCILIATION,
            ) {
                counts.1 += 1;
            }
        }
        counted_namespaces = per_namespace.keys().cloned().collect();
        for (namespace, (total, paused)) in per_namespace {
            shared
                .runtime
                .metrics()
                .reconciliations(&shared.kind, &namespace, &shared.selector)
                .set_resources(total, paused);
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(RESOURCE_GAUGE_PERIOD) => {}
        }
    }
}

/// Drops the entries of `map` (by `namespace/name`) of the resources `forget` names.
fn drop_forgotten<V>(map: &Mutex<HashMap<String, V>>, forget: &impl Fn(&String) -> bool) {
    map.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|key, _| !forget(key));
}

/// Removes annotation `key` from the `kind` object `namespace`/`name` if it still has
/// `value`: a JSON patch that tests the value before removing it. `false` when the annotation
/// changed or went meanwhile (or the object did).
pub async fn remove_annotation_if_unchanged(
    client: &kube::Client,
    kind: &ApiResource,
    namespace: &str,
    name: &str,
    key: &str,
    value: &str,
) -> Result<bool, kube::Error> {
    let path = format!(
        "/metadata/annotations/{}",
        key.replace('~', "~0").replace('/', "~1")
    );
    let operations = serde_json::json!([
        {"op": "test", "path": path, "value": value},
        {"op": "remove", "path": path},
    ]);
    let patch: json_patch::Patch =
        serde_json::from_value(operations).map_err(kube::Error::SerdeError)?;
    let mut request = kube::core::Request::new(DynamicObject::url_path(kind, Some(namespace)))
        .patch(name, &PatchParams::default(), &Patch::Json::<()>(patch))
        .map_err(kube::Error::BuildRequest)?;
    // The API server compares a `test` value with the stored JSON as written by Go, which
    // escapes `<`, `>` and `&`: an annotation such as `src->tgt.MirrorSourceConnector` only
    // matches when written the same way.
    let body = String::from_utf8_lossy(request.body()).into_owned();
    *request.body_mut() = go_escaped(&body).into_bytes();
    match client.request::<DynamicObject>(request).await {
        Ok(_) => Ok(true),
        // 422: the test failed; 404: the object is gone.
        Err(kube::Error::Api(status)) if matches!(status.code, 404 | 422) => Ok(false),
        Err(error) => Err(error),
    }
}

/// `json` with the characters Go's JSON encoder escapes inside strings (`<`, `>`, `&`, U+2028,
/// U+2029) written as `\uXXXX` escapes; they cannot occur outside strings.
fn go_escaped(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for character in json.chars() {
        match character {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(character)));
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    use strimzi_api::topic::KafkaTopicStatus;

    const PERIODIC: Duration = Duration::from_secs(90);
    const TIMEOUT: Duration = Duration::from_secs(300);

    fn at(time: &str) -> jiff::Timestamp {
        time.parse().unwrap()
    }

    /// A status with `conditions` for generation 1.
    fn before(conditions: Vec<Condition>) -> KafkaTopicStatus {
        status::with_conditions(KafkaTopicStatus::default(), None, conditions, Some(1))
    }

    /// `reconciled` settled at `now` after `previous`, for generation 2, as the controller
    /// writes it: the stalled condition is `NotReady`, the creating one `Creating` when
    /// `creates`.
    fn settled(
        reconciled: Reconciled<KafkaTopicStatus>,
        previous: Option<&KafkaTopicStatus>,
        now: &str,
        creates: bool,
    ) -> (KafkaTopicStatus, Action) {
        let settling = Settling {
            previous,
            generation: Some(2),
            now: at(now),
            periodic: PERIODIC,
            operation_timeout: TIMEOUT,
        };
        let settled = settle(reconciled, &settling, status::not_ready, |_, now| {
            creates.then(|| status::creating_kafka(now))
        });
        let written = status::with_conditions(
            settled.status,
            previous,
            settled.conditions,
            settled.observed_generation,
        );
        (written, settled.action)
    }

    /// Each condition as `type/status/reason@time`.
    fn described(status: &KafkaTopicStatus) -> Vec<String> {
        status
            .conditions()
            .iter()
            .map(|condition| {
                format!(
                    "{}/{}/{}@{}",
                    condition.r#type.as_deref().unwrap_or_default(),
                    condition.status.as_deref().unwrap_or_default(),
                    condition.reason.as_deref().unwrap_or_default(),
                    condition
                        .last_transition_time
                        .as_deref()
                        .unwrap_or_default(),
                )
            })
            .collect()
    }

    fn rolling(message: &str) -> Reconciled<KafkaTopicStatus> {
        Reconciled::pending(
            KafkaTopicStatus::default(),
            "RollingUpdate",
            message,
            Duration::from_secs(5),
        )
    }

    #[test]
    fn a_finished_reconciliation_is_ready_for_its_generation_and_comes_back_after_the_period() {
        let mut reconciled = Reconciled::new(KafkaTopicStatus::default());
        reconciled
            .warnings
            .push(status::warning("W", "careful", "2026-01-01T00:00:00Z"));
        assert!(!reconciled.is_pending());
        let (written, action) = settled(reconciled, None, "2026-01-01T00:00:00Z", true);
        assert_eq!(
            described(&written),
            [
                "Ready/True/@2026-01-01T00:00:00Z",
                "Warning/True/W@2026-01-01T00:00:00Z"
            ]
        );
        assert_eq!(written.observed_generation(), Some(2));
        assert_eq!(action, Action::requeue(PERIODIC));
    }

    #[test]
    fn progress_on_a_ready_resource_keeps_ready_and_the_observed_generation() {
        let previous = before(vec![status::ready("2026-01-01T00:00:00Z")]);
        let mut reconciled = rolling("restarted pod-0");
        reconciled
            .warnings
            .push(status::warning("W", "careful", "2026-01-01T01:00:00Z"));
        assert!(reconciled.is_pending());
        let (written, action) = settled(reconciled, Some(&previous), "2026-01-01T01:00:00Z", true);
        assert_eq!(
            described(&written),
            [
                "Ready/True/@2026-01-01T00:00:00Z",
                "Reconciling/True/RollingUpdate@2026-01-01T01:00:00Z",
                "Warning/True/W@2026-01-01T01:00:00Z",
            ],
            "no NotReady, and no Creating for a resource that was Ready"
        );
        assert_eq!(
            written.conditions()[1].message.as_deref(),
            Some("restarted pod-0")
        );
        assert_eq!(written.observed_generation(), Some(1), "moves when done");
        assert_eq!(action, Action::requeue(Duration::from_secs(5)));
        // Done: Ready as before, the generation now, no Reconciling.
        let (done, _) = settled(
            Reconciled::new(KafkaTopicStatus::default()),
            Some(&written),
            "2026-01-01T01:01:00Z",
            true,
        );
        assert_eq!(described(&done), ["Ready/True/@2026-01-01T00:00:00Z"]);
        assert_eq!(done.observed_generation(), Some(2));
    }

    #[test]
    fn progress_on_a_new_resource_reports_the_kinds_creating_condition_if_any() {
        let (kafka, _) = settled(rolling("starting"), None, "2026-01-01T00:00:00Z", true);
        assert_eq!(
            described(&kafka),
            [
                "NotReady/True/Creating@2026-01-01T00:00:00Z",
                "Reconciling/True/RollingUpdate@2026-01-01T00:00:00Z",
            ]
        );
        assert_eq!(kafka.observed_generation(), None);
        let (other, _) = settled(rolling("starting"), None, "2026-01-01T00:00:00Z", false);
        assert_eq!(
            described(&other),
            ["Reconciling/True/RollingUpdate@2026-01-01T00:00:00Z"]
        );
    }

    #[test]
    fn stalled_is_not_ready_at_once_and_writes_the_generation() {
        let previous = before(vec![status::ready("2026-01-01T00:00:00Z")]);
        let stalled = Reconciled::stalled(
            KafkaTopicStatus::default(),
            "WaitingForPods",
            "pod-0 (ImagePullBackOff)",
            Duration::from_secs(10),
        );
        assert!(stalled.is_pending());
        let (written, action) = settled(stalled, Some(&previous), "2026-01-01T01:00:00Z", true);
        assert_eq!(
            described(&written),
            ["NotReady/True/WaitingForPods@2026-01-01T01:00:00Z"]
        );
        assert_eq!(written.observed_generation(), Some(2));
        assert_eq!(action, Action::requeue(Duration::from_secs(10)));
        // Unless the reconciler keeps it (it could not act on the spec).
        let kept = Reconciled::stalled(KafkaTopicStatus::default(), "C", "m", TIMEOUT)
            .keep_observed_generation();
        let (written, _) = settled(kept, Some(&previous), "2026-01-01T01:00:00Z", true);
        assert_eq!(written.observed_generation(), Some(1));
    }

    #[test]
    fn progress_unchanged_for_the_operation_timeout_becomes_not_ready() {
        let previous = before(vec![status::ready("2026-01-01T00:00:00Z")]);
        let (first, _) = settled(
            rolling("step 1"),
            Some(&previous),
            "2026-01-01T01:00:00Z",
            true,
        );
        // Just before the timeout: still progress.
        let (still, _) = settled(
            rolling("step 1"),
            Some(&first),
            "2026-01-01T01:04:59Z",
            true,
        );
        assert_eq!(described(&still), described(&first));
        // A change of message is progress: the clock starts again.
        let (next, _) = settled(
            rolling("step 2"),
            Some(&first),
            "2026-01-01T01:05:00Z",
            true,
        );
        assert_eq!(
            described(&next)[1],
            "Reconciling/True/RollingUpdate@2026-01-01T01:05:00Z"
        );
        assert_eq!(next.observed_generation(), Some(1));
        // Five minutes without change: NotReady with the pending reason, the generation
        // written (Strimzi's reconciliation fails on its timeout), Reconciling kept as it was.
        let (timed_out, _) = settled(rolling("step 2"), Some(&next), "2026-01-01T01:10:00Z", true);
        assert_eq!(
            described(&timed_out),
            [
                "NotReady/True/RollingUpdate@2026-01-01T01:10:00Z",
                "Reconciling/True/RollingUpdate@2026-01-01T01:05:00Z",
            ]
        );
        assert_eq!(timed_out.observed_generation(), Some(2));
        let (stays, _) = settled(
            rolling("step 2"),
            Some(&timed_out),
            "2026-01-01T01:20:00Z",
            true,
        );
        assert_eq!(described(&stays), described(&timed_out));
        // Progress again on the resource no longer Ready: `Reconciling` (and whatever the
        // kind's hook says, here nothing).
        let (resumed, _) = settled(
            rolling("step 3"),
            Some(&stays),
            "2026-01-01T01:21:00Z",
            false,
        );
        assert_eq!(
            described(&resumed),
            ["Reconciling/True/RollingUpdate@2026-01-01T01:21:00Z"]
        );
    }

    #[test]
    fn a_reported_state_takes_the_place_of_ready() {
        let rebalancing = Condition {
            r#type: Some("Rebalancing".to_owned()),
            status: Some("True".to_owned()),
            last_transition_time: Some("t0".to_owned()),
            reason: None,
            message: None,
        };
        let reconciled = Reconciled::in_state(
            KafkaTopicStatus::default(),
            rebalancing.clone(),
            Some(Duration::from_secs(5)),
        )
        .warn("W", "careful")
        .keep_observed_generation()
        .remove_annotation("strimzi.io/rebalance", "approve");
        assert!(!reconciled.is_pending());
        assert!(reconciled.keep_observed_generation);
        assert_eq!(
            reconciled.remove_annotations,
            [("strimzi.io/rebalance".to_owned(), "approve".to_owned())]
        );
        let previous = before(Vec::new());
        let (written, action) = settled(reconciled, Some(&previous), "2026-01-01T00:00:00Z", true);
        assert_eq!(written.conditions()[0], rebalancing);
        assert_eq!(written.conditions()[1].r#type.as_deref(), Some("Warning"));
        assert_eq!(written.observed_generation(), Some(1));
        assert_eq!(action, Action::requeue(Duration::from_secs(5)));
        let ready = Reconciled::in_state(KafkaTopicStatus::default(), rebalancing, None);
        let (_, action) = settled(ready, None, "2026-01-01T00:00:00Z", true);
        assert_eq!(action, Action::requeue(PERIODIC), "periodic");
        let ignored = Reconciled::<i32>::ignored();
        assert!(ignored.ignored && ignored.state.is_none());
    }

    #[test]
    fn periodic_reconciliations_spread_within_the_last_fifth_of_the_interval() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let interval = Duration::from_secs(120);
        let delays: Vec<Duration> = (0..50)
            .map(|_| periodic_delay(interval, &mut rng))
            .collect();
        assert!(
            delays
                .iter()
                .all(|delay| *delay <= interval && *delay >= interval.mul_f64(0.8))
        );
        assert!(
            delays.iter().any(|delay| *delay != delays[0]),
            "they differ"
        );
    }

    #[test]
    fn backoff_doubles_with_jitter_up_to_a_ceiling() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for attempt in 1..=20 {
            let delay = backoff(attempt, &mut rng);
            let ceiling = BACKOFF_BASE
                .saturating_mul(1 << (attempt - 1).min(16))
                .min(BACKOFF_MAX);
            assert!(
                delay <= ceiling && delay >= ceiling / 2,
                "{attempt}: {delay:?}"
            );
        }
        let delays: Vec<Duration> = (0..10).map(|_| backoff(3, &mut rng)).collect();
        assert!(
            delays.iter().any(|delay| *delay != delays[0]),
            "jitter varies delays"
        );
    }
}
