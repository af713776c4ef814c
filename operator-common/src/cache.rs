//! Watch caches shared by an operator's controllers: one list+watch and one in-memory store
//! per kind, namespace and label selector, however many controllers read it. Objects are
//! cached with no `managedFields` entry but what the operator's field manager last applied
//! (all that [`crate::apply::Applier::apply`] compares); owned kinds can be cached as metadata
//! only.
//!
//! Whoever waits for a store to be filled waits on its [`Filled`] future, never on
//! kube-runtime's `Store::wait_until_ready` directly: that one wakes only the last of several
//! concurrent waiters, and the others wait forever.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::{BoxFuture, Shared};
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use kube::Resource;
use kube::core::NamespaceResourceScope;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, Lookup, ReflectHandle, Store};
use kube::runtime::watcher;
use serde::de::DeserializeOwned;

use crate::apply::keep_applied_fields;
use crate::http::{CacheSync, Readiness};

/// Events buffered per cache for controllers that are slower than the watch.
const SUBSCRIBER_BUFFER: usize = 1024;

/// A cache could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    /// Controllers subscribe before the caches start; this one came too late.
    #[error("the {kind} cache has started already; build every controller before running them")]
    AlreadyStarted {
        /// Kind of the cached objects.
        kind: String,
    },
}

impl crate::ErrorReason for CacheError {
    fn reason(&self) -> &'static str {
        "CacheError"
    }
}

/// What a cache holds: the objects of one kind in one namespace (or all) matching one
/// label selector (or all).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheScope {
    /// The namespace, `None` for all namespaces.
    pub namespace: Option<String>,
    /// The label selector, `None` for all objects.
    pub selector: Option<String>,
}

impl CacheScope {
    /// The watcher configuration of this scope.
    pub fn watcher_config(&self) -> watcher::Config {
        let config = watcher::Config::default();
        match &self.selector {
            Some(selector) => config.labels(selector),
            None => config,
        }
    }
}

/// A namespaced kind of fixed type that can be listed, watched and cached whole.
pub trait WatchedKind:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Debug
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> WatchedKind for K where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// Resolves once a store's first list is complete (`false` if its writer is gone first). One
/// per store, cloned by every waiter.
pub type Filled = Shared<BoxFuture<'static, bool>>;

/// The [`Filled`] future of `store`: make it once per store, then clone it.
pub fn filled<K>(store: &Store<K>) -> Filled
where
    K: Lookup + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
{
    let store = store.clone();
    async move { store.wait_until_ready().await.is_ok() }
        .boxed()
        .shared()
}

/// What a controller gets from a shared cache.
pub struct Subscription<K: Resource + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// The store.
    pub store: Store<K>,
    /// Every object the cache's watch creates, changes or deletes.
    pub events: ReflectHandle<K>,
    /// Resolves once the store is filled.
    pub filled: Filled,
}

/// One shared cache: its store, its fill signal, and its writer until the caches start.
struct Entry<K: Resource + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    store: Store<K>,
    filled: Filled,
    writer: Arc<Mutex<Option<reflector::store::Writer<K>>>>,
}

type Starter = Box<dyn FnOnce(&Readiness) -> BoxFuture<'static, ()> + Send>;

#[derive(Default)]
struct Registry {
    entries: HashMap<(TypeId, CacheScope), Box<dyn Any + Send>>,
    starters: Vec<Starter>,
}

/// The caches of one operator; cloning shares them.
#[derive(Clone)]
pub struct Caches {
    registry: Arc<Mutex<Registry>>,
    /// The operator's field manager, whose applied fields cached objects keep.
    field_manager: Arc<str>,
}

impl Debug for Caches {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Caches")
    }
}

impl Caches {
    /// The caches of the operator writing as `field_manager`.
    pub fn new(field_manager: &str) -> Self {
        Self {
            registry: Arc::default(),
            field_manager: field_manager.into(),
        }
    }

    /// The cache of `K` in `scope`, fed by `watch` (called once, when the caches start):
    /// its store, a stream of the objects it changes for one controller, and its fill signal.
    pub fn subscribe<K>(
        &self,
        scope: &CacheScope,
        watch: impl FnOnce() -> BoxStream<'static, watcher::Result<watcher::Event<K>>> + Send + 'static,
    ) -> Result<Subscription<K>, CacheError>
    where
        K: Resource + Clone + Debug + Send + Sync + 'static,
        K::DynamicType: Eq + Hash + Clone + Default + Send + Sync,
    {
        let mut registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (TypeId::of::<K>(), scope.clone());
        if !registry.entries.contains_key(&key) {
            let (store, writer) = reflector::store_shared::<K>(SUBSCRIBER_BUFFER);
            let writer = Arc::new(Mutex::new(Some(writer)));
            let field_manager = self.field_manager.clone();
            let target = WatchTarget::of::<K>(scope);
            let entry: Entry<K> = Entry {
                filled: filled(&store),
                store: store.clone(),
                writer: writer.clone(),
            };
            registry.entries.insert(key.clone(), Box::new(entry));
            registry
                .starters
                .push(Box::new(move |readiness: &Readiness| {
                    let writer = writer.lock().unwrap_or_else(PoisonError::into_inner).take();
                    let synced = readiness.track();
                    match writer {
                        Some(writer) => {
                            run_reflector(watch(), writer, synced, field_manager, target).boxed()
                        }
                        None => futures::future::ready(()).boxed(),
                    }
                }));
        }
        let entry = registry
            .entries
            .get(&key)
            .and_then(|entry| entry.downcast_ref::<Entry<K>>())
            .ok_or_else(|| already_started::<K>())?;
        let writer = entry.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let events = writer
            .as_ref()
            .and_then(reflector::store::Writer::subscribe)
            .ok_or_else(already_started::<K>)?;
        Ok(Subscription {
            store: entry.store.clone(),
            events,
            filled: entry.filled.clone(),
        })
    }

    /// Starts every cache subscribed so far; each runs until the returned futures are
    /// dropped. Caches count as synced in `readiness` once their first list is complete.
    pub fn start(&self, readiness: &Readiness) -> Vec<BoxFuture<'static, ()>> {
        let starters = std::mem::take(
            &mut self
                .registry
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .starters,
        );
        let running = starters.into_iter().map(|start| start(readiness)).collect();
        readiness.all_tracked();
        running
    }
}

fn already_started<K: Resource>() -> CacheError
where
    K::DynamicType: Default,
{
    CacheError::AlreadyStarted {
        kind: K::kind(&K::DynamicType::default()).into_owned(),
    }
}

/// What a cache watches, to name it when its watch fails.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WatchTarget {
    kind: String,
    /// `<plural>.<group>` (`<plural>` for the core group), as RBAC rules and CRDs name it.
    resource: String,
    api_version: String,
    scope: CacheScope,
}

impl WatchTarget {
    fn of<K: Resource>(scope: &CacheScope) -> Self
    where
        K::DynamicType: Default,
    {
        let types = K::DynamicType::default();
        let group = K::group(&types);
        let plural = K::plural(&types);
        Self {
            kind: K::kind(&types).into_owned(),
            resource: if group.is_empty() {
                plural.into_owned()
            } else {
                format!("{plural}.{group}")
            },
            api_version: K::api_version(&types).into_owned(),
            scope: scope.clone(),
        }
    }

    /// One line for a failed watch: what was watched, where, the error, and for the two
    /// failures a user fixes (a missing permission, a missing CRD) what to check. The cache
    /// retries with backoff either way.
    fn failure(&self, error: &watcher::Error) -> String {
        let where_ = match &self.scope.namespace {
            Some(namespace) => format!("in namespace {namespace}"),
            None => "in all namespaces".to_owned(),
        };
        let selector = match &self.scope.selector {
            Some(selector) => format!(" with labels {selector}"),
            None => String::new(),
        };
        let watched = format!("{} ({}) {where_}{selector}", self.kind, self.resource);
        let hint = match status_code(error) {
            Some(403) => format!(
                "; the operator's service account lacks permission to list and watch {} {where_}: \
                 check its (Cluster)RoleBindings (deploy/README.md, Permissions)",
                self.resource
            ),
            Some(404) => format!(
                "; the API server does not serve {} at {}: check that its \
                 CustomResourceDefinition is installed and serves that version",
                self.resource, self.api_version
            ),
            _ => String::new(),
        };
        format!("watching {watched} failed, retrying with backoff: {error}{hint}")
    }

    fn warn(&self, error: &watcher::Error) {
        tracing::warn!(
            kind = %self.kind,
            namespace = self.scope.namespace.as_deref().unwrap_or("*"),
            "{}",
            self.failure(error)
        );
    }
}

/// Passes on a watch stream of `K` in `scope` (its selector included), logging each failure
/// as one warning that names what was watched and, for a missing permission or CRD, what to
/// check.
pub fn log_watch_failures<K, T, S>(
    stream: S,
    scope: &CacheScope,
) -> impl futures::Stream<Item = Result<T, watcher::Error>> + Send + 'static + use<K, T, S>
where
    K: Resource,
    K::DynamicType: Default,
    S: futures::Stream<Item = Result<T, watcher::Error>> + Send + 'static,
{
    let target = WatchTarget::of::<K>(scope);
    stream.inspect(move |item| {
        if let Err(error) = item {
            target.warn(error);
        }
    })
}

/// The HTTP status the API server answered a failed list or watch with, if it answered.
fn status_code(error: &watcher::Error) -> Option<u16> {
    match error {
        watcher::Error::InitialListFailed(kube::Error::Api(status))
        | watcher::Error::WatchStartFailed(kube::Error::Api(status))
        | watcher::Error::WatchFailed(kube::Error::Api(status)) => Some(status.code),
        watcher::Error::WatchError(status) => Some(status.code),
        _ => None,
    }
}

async fn run_reflector<K>(
    watch: BoxStream<'static, watcher::Result<watcher::Event<K>>>,
    writer: reflector::store::Writer<K>,
    synced: CacheSync,
    field_manager: Arc<str>,
    target: WatchTarget,
) where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
{
    let mut events = watch
        .default_backoff()
        .modify(move |object: &mut K| keep_applied_fields(object.meta_mut(), &field_manager))
        .reflect_shared(writer)
        .boxed();
    let mut synced = Some(synced);
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::InitDone) => {
                if let Some(synced) = synced.take() {
                    synced.synced();
                }
            }
            Ok(_) => {}
            Err(error) => target.warn(&error),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn counting_watch(
        watches: &Arc<AtomicUsize>,
    ) -> impl FnOnce() -> BoxStream<'static, watcher::Result<watcher::Event<ConfigMap>>> + Send + 'static
    {
        let watches = watches.clone();
        move || {
            watches.fetch_add(1, Ordering::SeqCst);
            futures::stream::iter([Ok(watcher::Event::Init), Ok(watcher::Event::InitDone)]).boxed()
        }
    }

    fn answered(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, "")
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn a_failed_watch_names_its_kind_namespace_and_the_missing_permission_or_crd() {
        let scope = CacheScope {
            namespace: Some("kafka".to_owned()),
            selector: Some("strimzi.io/kind=Kafka".to_owned()),
        };
        let forbidden = WatchTarget::of::<ConfigMap>(&scope).failure(
            &watcher::Error::InitialListFailed(answered(403, "configmaps is forbidden")),
        );
        assert!(
            forbidden.starts_with(
                "watching ConfigMap (configmaps) in namespace kafka with labels \
                 strimzi.io/kind=Kafka failed, retrying with backoff: failed to perform initial \
                 object list: ApiError: configmaps is forbidden"
            ) && forbidden.ends_with(
                "; the operator's service account lacks permission to list and watch configmaps \
                 in namespace kafka: check its (Cluster)RoleBindings (deploy/README.md, \
                 Permissions)"
            ),
            "{forbidden}"
        );
        let everywhere = CacheScope {
            namespace: None,
            selector: None,
        };
        let missing = WatchTarget::of::<strimzi_api::kafka::Kafka>(&everywhere).failure(
            &watcher::Error::WatchStartFailed(answered(
                404,
                "the server could not find the requested resource",
            )),
        );
        assert!(
            missing
                .starts_with("watching Kafka (kafkas.kafka.strimzi.io) in all namespaces failed")
                && missing.ends_with(
                    "the API server does not serve kafkas.kafka.strimzi.io at kafka.strimzi.io/v1: \
                     check that its CustomResourceDefinition is installed and serves that version"
                ),
            "{missing}"
        );
        let other = WatchTarget::of::<ConfigMap>(&everywhere)
            .failure(&watcher::Error::WatchFailed(answered(500, "etcd is gone")));
        assert!(
            other.contains("etcd is gone")
                && !other.contains("lacks permission")
                && !other.contains("does not serve"),
            "{other}"
        );
        assert_eq!(
            status_code(&watcher::Error::WatchError(
                kube::core::Status::failure("expired", "Expired")
                    .with_code(410)
                    .boxed()
            )),
            Some(410)
        );
        assert_eq!(status_code(&watcher::Error::NoResourceVersion), None);
    }

    #[tokio::test]
    async fn every_waiter_for_a_shared_cache_is_woken_when_it_fills() {
        let caches = Caches::new("test-operator");
        let scope = CacheScope {
            namespace: None,
            selector: None,
        };
        let (gate, opened) = tokio::sync::oneshot::channel::<()>();
        // The first list completes only once every waiter is parked; the watch of the first
        // subscription is the one that runs.
        let first = caches
            .subscribe::<ConfigMap>(&scope, || {
                futures::stream::once(async move {
                    let _ = opened.await;
                    Ok(watcher::Event::InitDone)
                })
                .boxed()
            })
            .unwrap();
        let mut subscriptions = vec![first];
        for _ in 0..2 {
            let never_called = || futures::stream::empty().boxed();
            subscriptions.push(caches.subscribe::<ConfigMap>(&scope, never_called).unwrap());
        }
        let waiters: Vec<_> = subscriptions
            .iter()
            .map(|subscription| tokio::spawn(subscription.filled.clone()))
            .collect();
        let running: Vec<_> = caches
            .start(&Readiness::default())
            .into_iter()
            .map(tokio::spawn)
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(waiters.iter().all(|waiter| !waiter.is_finished()));
        gate.send(()).unwrap();
        for waiter in waiters {
            let filled = tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
                .await
                .expect("a waiter was never woken")
                .unwrap();
            assert!(filled);
        }
        drop(running);
    }

    #[tokio::test]
    async fn one_watch_per_kind_and_scope_however_many_subscribe() {
        let caches = Caches::new("test-operator");
        let watches = Arc::new(AtomicUsize::new(0));
        let scope = CacheScope {
            namespace: Some("a".into()),
            selector: None,
        };
        let other = CacheScope {
            namespace: Some("b".into()),
            selector: None,
        };
        let _first = caches
            .subscribe::<ConfigMap>(&scope, counting_watch(&watches))
            .unwrap();
        let _second = caches
            .subscribe::<ConfigMap>(&scope, counting_watch(&watches))
            .unwrap();
        let _third = caches
            .subscribe::<ConfigMap>(&other, counting_watch(&watches))
            .unwrap();
        let readiness = Readiness::default();
        let running = caches.start(&readiness);
        assert_eq!(running.len(), 2, "one cache per kind and scope");
        assert_eq!(watches.load(Ordering::SeqCst), 2);
        assert!(!readiness.is_ready());
        futures::future::join_all(running).await;
        assert!(
            readiness.is_ready(),
            "ready once every first list completed"
        );
        let late = caches.subscribe::<ConfigMap>(&scope, counting_watch(&watches));
        assert!(matches!(late, Err(CacheError::AlreadyStarted { .. })));
    }
}
