//! Content caches of one kind, one per watched scope (a namespace or all namespaces), filled
//! by kube-runtime reflectors whose event streams also trigger a controller. The shared
//! caches of [`crate::cache`] watch owned kinds as metadata only; controllers that read
//! whole objects (the StrimziPodSet controller its pods, the Kafka controller its node pools,
//! the user controller its users' Secrets) keep caches of their own with this. Like the
//! shared caches, they keep no `managedFields` entry but what the operator's field manager
//! last applied.
//!
//! Reconciliations that start before a cache is filled wait for it on its one [`Filled`]
//! future (see [`crate::cache`]): a reconciliation left waiting forever would also hold back
//! every later reconciliation of its resource.

use std::sync::{Arc, Mutex, PoisonError};

use crate::apply::keep_applied_fields;
use crate::cache::{CacheScope, Filled, WatchedKind, filled, log_watch_failures};
use futures::{Stream, StreamExt};
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};

/// The cache of one scope.
struct Scoped<K: Resource<DynamicType = ()> + 'static> {
    /// The namespace, `None` for all namespaces.
    namespace: Option<String>,
    store: Store<K>,
    filled: Filled,
}

/// Caches of `K` by scope; cloning shares them.
pub struct ScopedCache<K: Resource<DynamicType = ()> + 'static> {
    stores: Arc<Mutex<Vec<Scoped<K>>>>,
    /// The operator's field manager, whose applied fields cached objects keep.
    field_manager: Arc<str>,
}

impl<K: Resource<DynamicType = ()> + 'static> Clone for ScopedCache<K> {
    fn clone(&self) -> Self {
        Self {
            stores: self.stores.clone(),
            field_manager: self.field_manager.clone(),
        }
    }
}

impl<K: Resource<DynamicType = ()> + 'static> ScopedCache<K> {
    /// No cache yet, for the operator writing as `field_manager`
    /// (`runtime.applier().field_manager()`).
    pub fn new(field_manager: &str) -> Self {
        Self {
            stores: Arc::default(),
            field_manager: field_manager.into(),
        }
    }
}

impl<K> ScopedCache<K>
where
    K: WatchedKind,
{
    /// Starts caching the objects of `api` (in `namespace`, or everywhere) matching `selector`;
    /// the returned stream must be polled (by a controller) for the cache to fill, and yields
    /// every object created, changed or deleted.
    pub fn watch(
        &self,
        api: Api<K>,
        namespace: Option<String>,
        selector: &str,
    ) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static {
        let (store, writer) = reflector::store();
        self.add(namespace.clone(), store);
        let config = watcher::Config::default().labels(selector);
        let field_manager = self.field_manager.clone();
        let scope = CacheScope {
            namespace,
            selector: Some(selector.to_owned()),
        };
        log_watch_failures::<K, _, _>(watcher(api, config).default_backoff(), &scope)
            .modify(move |object: &mut K| keep_applied_fields(object.meta_mut(), &field_manager))
            .reflect(writer)
            .touched_objects()
            .boxed()
    }

    /// Adds the store of the scope `namespace`, filled by a reflector of the caller's.
    fn add(&self, namespace: Option<String>, store: Store<K>) {
        let filled = filled(&store);
        self.stores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Scoped {
                namespace,
                store,
                filled,
            });
    }

    /// The cache covering `namespace`, once it has been filled.
    async fn store(&self, namespace: &str) -> Option<Store<K>> {
        let (store, filled) = self
            .stores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|scoped| {
                scoped
                    .namespace
                    .as_deref()
                    .is_none_or(|scope| scope == namespace)
            })
            .map(|scoped| (scoped.store.clone(), scoped.filled.clone()))?;
        filled.await.then_some(store)
    }

    /// The cached object `name` in `namespace`, `None` when it does not exist.
    pub async fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        let store = self.store(namespace).await?;
        store.get(&reflector::ObjectRef::new(name).within(namespace))
    }

    /// Every cached object of every scope, for sweeps that look at all of them.
    pub fn all(&self) -> Vec<Arc<K>> {
        self.stores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .flat_map(|scoped| scoped.store.state())
            .collect()
    }

    /// Whether every scope's cache has been filled.
    pub async fn filled(&self) -> bool {
        let pending: Vec<Filled> = self
            .stores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|scoped| scoped.filled.clone())
            .collect();
        futures::future::join_all(pending)
            .await
            .into_iter()
            .all(|filled| filled)
    }

    /// The cached objects in `namespace`.
    #[tracing::instrument(name = "cache_list", level = "debug", skip(self))]
    pub async fn list(&self, namespace: &str) -> Vec<Arc<K>> {
        match self.store(namespace).await {
            Some(store) => store
                .state()
                .into_iter()
                .filter(|object| object.namespace().as_deref() == Some(namespace))
                .collect(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::time::Duration;

    #[tokio::test]
    async fn every_reconciliation_waiting_for_the_cache_is_woken_when_it_fills() {
        let (store, mut writer) = reflector::store::<ConfigMap>();
        let cache = ScopedCache::new("test-operator");
        cache.add(None, store);
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let cache = cache.clone();
                tokio::spawn(async move { cache.list("ns").await.len() })
            })
            .collect();
        // Every waiter is parked on the unfilled cache before the first list completes.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(waiters.iter().all(|waiter| !waiter.is_finished()));
        writer.apply_watcher_event(&watcher::Event::InitDone);
        for waiter in waiters {
            let listed = tokio::time::timeout(Duration::from_secs(5), waiter)
                .await
                .expect("a waiter was never woken")
                .unwrap();
            assert_eq!(listed, 0);
        }
    }

    #[tokio::test]
    async fn a_namespace_outside_every_scope_lists_nothing_at_once() {
        let (store, _writer) = reflector::store::<ConfigMap>();
        let cache = ScopedCache::new("test-operator");
        cache.add(Some("watched".to_owned()), store);
        assert!(cache.list("elsewhere").await.is_empty());
    }
}
