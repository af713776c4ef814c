//! Removal of the init ClusterRoleBindings of deleted Kafkas. The binding
//! (`strimzi-<namespace>-<cluster>-kafka-init`) is cluster-scoped, so it cannot be owned by
//! its namespaced Kafka and garbage collection never deletes it; Strimzi deletes it when it
//! sees the Kafka's deletion. Here a metadata-only watch of the Kafkas in the watched
//! namespaces does the same, and catches deletions that happened while the operator was not
//! running or not leading: once every watch has listed its Kafkas (and again when this
//! replica becomes the leader) the bindings labelled for a Kafka that no longer exists are
//! deleted. Event-driven, no polling; only the leader deletes.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{Api, ListParams};
use kube::core::PartialObjectMeta;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use strimzi_api::kafka::Kafka;
use strimzi_api::{labels, naming};
use strimzi_operator_common::config::WatchedNamespaces;
use strimzi_operator_common::runtime::OperatorRuntime;

/// A Kafka by namespace and name.
type KafkaKey = (String, String);

/// The task that deletes the init ClusterRoleBindings of deleted Kafkas, to be run by
/// [`OperatorRuntime::run`] next to the controllers.
pub fn orphaned_bindings_cleanup(runtime: &OperatorRuntime) -> BoxFuture<'static, ()> {
    let runtime = runtime.clone();
    async move {
        let scopes: Vec<Option<String>> = match &runtime.config().namespaces {
            WatchedNamespaces::All => vec![None],
            WatchedNamespaces::List(namespaces) => namespaces.iter().cloned().map(Some).collect(),
        };
        let mut sweeper = Sweeper {
            runtime: runtime.clone(),
            scopes: scopes.clone(),
            listing: BTreeMap::new(),
            known: BTreeMap::new(),
        };
        // Every Kafka, whatever the operator's selector: a binding of a Kafka that another
        // operator manages is not an orphan.
        let watches = scopes.iter().enumerate().map(|(index, namespace)| {
            let api: Api<PartialObjectMeta<Kafka>> = runtime.api(namespace.as_deref());
            watcher::watcher(api, watcher::Config::default())
                .default_backoff()
                .map(move |event| (index, event))
                .boxed()
        });
        let mut events = futures::stream::select_all(watches);
        let leadership = runtime.leadership().clone();
        let shutdown = runtime.shutdown_token();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = async { leadership.lost().await; leadership.acquired().await } => {
                    sweeper.sweep().await;
                }
                event = events.next() => match event {
                    Some((scope, Ok(event))) => sweeper.handle(scope, event).await,
                    Some((_, Err(error))) => {
                        tracing::debug!(%error, "Kafka watch for binding cleanup failed; retrying");
                    }
                    None => return,
                },
            }
        }
    }
    .boxed()
}

/// What the cleanup knows about the Kafkas of each watched scope.
struct Sweeper {
    runtime: OperatorRuntime,
    scopes: Vec<Option<String>>,
    /// Kafkas seen by a scope's watch while it (re)lists.
    listing: BTreeMap<usize, BTreeSet<KafkaKey>>,
    /// Kafkas of each scope whose watch has listed them all.
    known: BTreeMap<usize, BTreeSet<KafkaKey>>,
}

/// The namespace and name of `kafka`.
fn key(kafka: &PartialObjectMeta<Kafka>) -> KafkaKey {
    (kafka.namespace().unwrap_or_default(), kafka.name_any())
}

impl Sweeper {
    async fn handle(&mut self, scope: usize, event: watcher::Event<PartialObjectMeta<Kafka>>) {
        match event {
            watcher::Event::Init => {
                self.listing.insert(scope, BTreeSet::new());
            }
            watcher::Event::InitApply(kafka) => {
                self.listing.entry(scope).or_default().insert(key(&kafka));
            }
            watcher::Event::InitDone => {
                let listed = self.listing.remove(&scope).unwrap_or_default();
                self.known.insert(scope, listed);
                self.sweep().await;
            }
            watcher::Event::Apply(kafka) => {
                self.known.entry(scope).or_default().insert(key(&kafka));
            }
            watcher::Event::Delete(kafka) => {
                let deleted = key(&kafka);
                if let Some(known) = self.known.get_mut(&scope) {
                    known.remove(&deleted);
                }
                self.delete_binding_of(&deleted).await;
            }
        }
    }

    /// Whether the Kafkas of `namespace` are watched here.
    fn watches(&self, namespace: &str) -> bool {
        self.scopes
            .iter()
            .any(|scope| scope.as_deref().is_none_or(|watched| watched == namespace))
    }

    /// Deletes every init ClusterRoleBinding whose Kafka, in a watched namespace, does not
    /// exist; only once every scope has listed its Kafkas, and only while leading.
    async fn sweep(&self) {
        if self.known.len() < self.scopes.len() || !self.runtime.leadership().is_leading() {
            return;
        }
        let api: Api<ClusterRoleBinding> = Api::all(self.runtime.client().clone());
        let selector = format!("{}=Kafka", labels::KIND);
        let bindings = match api.list(&ListParams::default().labels(&selector)).await {
            Ok(bindings) => bindings,
            Err(error) => {
                tracing::warn!(%error, "cannot list ClusterRoleBindings to clean up");
                return;
            }
        };
        let existing: BTreeSet<&KafkaKey> = self.known.values().flatten().collect();
        for binding in bindings {
            let Some(kafka) = kafka_of(&binding) else {
                continue;
            };
            if self.watches(&kafka.0) && !existing.contains(&kafka) {
                self.delete_binding_of(&kafka).await;
            }
        }
    }

    /// Deletes the init ClusterRoleBinding of the Kafka `kafka` if it exists and is labelled
    /// for it; only while leading.
    async fn delete_binding_of(&self, kafka: &KafkaKey) {
        if !self.runtime.leadership().is_leading() {
            return;
        }
        let (namespace, cluster) = kafka;
        let name = naming::kafka_init_cluster_role_binding(namespace, cluster);
        let api: Api<ClusterRoleBinding> = Api::all(self.runtime.client().clone());
        let labelled = match api.get_metadata_opt(&name).await {
            Ok(binding) => binding.is_some_and(|binding| {
                binding.labels().get(labels::CLUSTER) == Some(cluster)
                    && binding.labels().get(labels::KIND).map(String::as_str) == Some("Kafka")
            }),
            Err(error) => {
                tracing::warn!(%error, name, "cannot read the init ClusterRoleBinding");
                return;
            }
        };
        if !labelled {
            return;
        }
        match self.runtime.applier().delete(&api, &name).await {
            Ok(_) => tracing::info!(
                name,
                "deleted the init ClusterRoleBinding of a deleted Kafka"
            ),
            Err(error) => tracing::warn!(%error, name, "cannot delete the init ClusterRoleBinding"),
        }
    }
}

/// The Kafka an init ClusterRoleBinding was made for: the namespace of its ServiceAccount
/// subject and its cluster label, provided its name is the one made from them.
fn kafka_of(binding: &ClusterRoleBinding) -> Option<KafkaKey> {
    let cluster = binding.labels().get(labels::CLUSTER)?;
    let namespace = binding.subjects.as_ref()?.first()?.namespace.as_ref()?;
    (binding.meta().name.as_deref()
        == Some(naming::kafka_init_cluster_role_binding(namespace, cluster).as_str()))
    .then(|| (namespace.clone(), cluster.clone()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn binding(name: &str, cluster: &str, namespace: &str) -> ClusterRoleBinding {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {"strimzi.io/cluster": cluster, "strimzi.io/kind": "Kafka"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "strimzi-kafka-broker"},
            "subjects": [{"kind": "ServiceAccount", "name": format!("{cluster}-kafka"), "namespace": namespace}],
        }))
        .unwrap()
    }

    #[test]
    fn a_binding_names_its_kafka_only_when_its_name_matches() {
        let ours = binding("strimzi-my-ns-my-cluster-kafka-init", "my-cluster", "my-ns");
        assert_eq!(
            kafka_of(&ours),
            Some(("my-ns".to_owned(), "my-cluster".to_owned()))
        );
        let other = binding("someone-elses-binding", "my-cluster", "my-ns");
        assert_eq!(kafka_of(&other), None);
    }
}
