//! Watch caches shared by an operator's controllers: one list+watch and one in-memory store
//! per kind, namespace and label selector, however many controllers read it. Objects are
//! cached without `managedFields`; owned kinds can be cached as metadata only.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use kube::Resource;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ReflectHandle, Store};
use kube::runtime::watcher;

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

/// One shared cache: its store, and its writer until the caches start.
struct Entry<K: Resource + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    store: Store<K>,
    writer: Arc<Mutex<Option<reflector::store::Writer<K>>>>,
}

type Starter = Box<dyn FnOnce(&Readiness) -> BoxFuture<'static, ()> + Send>;

#[derive(Default)]
struct Registry {
    entries: HashMap<(TypeId, CacheScope), Box<dyn Any + Send>>,
    starters: Vec<Starter>,
}

/// The caches of one operator; cloning shares them.
#[derive(Clone, Default)]
pub struct Caches {
    registry: Arc<Mutex<Registry>>,
}

impl Debug for Caches {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Caches")
    }
}

impl Caches {
    /// The cache of `K` in `scope`, fed by `watch` (called once, when the caches start):
    /// its store and a stream of the objects it changes, for one controller.
    pub fn subscribe<K>(
        &self,
        scope: &CacheScope,
        watch: impl FnOnce() -> BoxStream<'static, watcher::Result<watcher::Event<K>>> + Send + 'static,
    ) -> Result<(Store<K>, ReflectHandle<K>), CacheError>
    where
        K: Resource + Clone + Debug + Send + Sync + 'static,
        K::DynamicType: Eq + Hash + Clone + Default + Send + Sync,
    {
        let mut registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (TypeId::of::<K>(), scope.clone());
        if !registry.entries.contains_key(&key) {
            let (store, writer) = reflector::store_shared::<K>(SUBSCRIBER_BUFFER);
            let writer = Arc::new(Mutex::new(Some(writer)));
            let entry: Entry<K> = Entry {
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
                        Some(writer) => run_reflector(watch(), writer, synced).boxed(),
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
        let subscriber = writer
            .as_ref()
            .and_then(reflector::store::Writer::subscribe)
            .ok_or_else(already_started::<K>)?;
        Ok((entry.store.clone(), subscriber))
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

async fn run_reflector<K>(
    watch: BoxStream<'static, watcher::Result<watcher::Event<K>>>,
    writer: reflector::store::Writer<K>,
    synced: CacheSync,
) where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
{
    let mut events = watch
        .default_backoff()
        .modify(|object: &mut K| object.meta_mut().managed_fields = None)
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
            Err(error) => tracing::warn!(%error, "watch failed; retrying with backoff"),
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

    #[tokio::test]
    async fn one_watch_per_kind_and_scope_however_many_subscribe() {
        let caches = Caches::default();
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
