//! Content caches of one kind, one per watched scope (a namespace or all namespaces), filled
//! by kube-runtime reflectors whose event streams also trigger a controller. The shared
//! caches of `operator-common` watch owned kinds as metadata only; the StrimziPodSet
//! controller needs whole pods (readiness, revision), and the Kafka controller whole node
//! pools, so they keep caches of their own here.

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use futures::{Stream, StreamExt};
use kube::api::Api;
use kube::core::NamespaceResourceScope;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// The cache of one scope: its namespace (`None` for all) and its store.
type Scoped<K> = (Option<String>, Store<K>);

/// Caches of `K` by scope; cloning shares them.
pub struct ScopedCache<K: Resource<DynamicType = ()> + 'static> {
    stores: Arc<Mutex<Vec<Scoped<K>>>>,
}

impl<K: Resource<DynamicType = ()> + 'static> Clone for ScopedCache<K> {
    fn clone(&self) -> Self {
        Self {
            stores: self.stores.clone(),
        }
    }
}

impl<K: Resource<DynamicType = ()> + 'static> Default for ScopedCache<K> {
    fn default() -> Self {
        Self {
            stores: Arc::default(),
        }
    }
}

impl<K> ScopedCache<K>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + DeserializeOwned
        + Send
        + Sync
        + 'static,
    ObjectRef<K>: Hash + Eq,
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
        self.stores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((namespace, store));
        let config = watcher::Config::default().labels(selector);
        watcher(api, config)
            .default_backoff()
            .reflect(writer)
            .touched_objects()
            .boxed()
    }

    /// The cache covering `namespace`, once it has been filled.
    async fn store(&self, namespace: &str) -> Option<Store<K>> {
        let store = self
            .stores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(scope, _)| scope.as_deref().is_none_or(|scope| scope == namespace))
            .map(|(_, store)| store.clone())?;
        store.wait_until_ready().await.ok()?;
        Some(store)
    }

    /// The cached objects in `namespace`.
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
