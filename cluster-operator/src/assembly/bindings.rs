//! Removal of the init ClusterRoleBindings of deleted Kafkas. The binding
//! (`strimzi-<namespace>-<cluster>-kafka-init`) is cluster-scoped, so it cannot be owned by
//! its namespaced Kafka and garbage collection never deletes it; Strimzi deletes it when it
//! sees the Kafka's deletion. Here two watches do that, event-driven and without polling:
//! - a metadata-only watch of the Kafkas in the watched namespaces: a deleted Kafka's binding
//!   is deleted;
//! - a watch of the bindings labelled `strimzi.io/kind=Kafka`: a binding that appears or
//!   changes (including every one listed when the watch starts, and again when this replica
//!   becomes the leader) is deleted when its Kafka does not exist, asked of the API server
//!   itself. So a deletion missed while the operator was down is caught up, and so is a
//!   binding that a reconciliation still running when its Kafka was deleted wrote again.
//!
//! Only the leader deletes, and only bindings whose name is the one made from their labels
//! and subject, for Kafkas in the watched namespaces.

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use strimzi_api::kafka::Kafka;
use strimzi_api::{labels, naming};
use strimzi_operator_common::config::WatchedNamespaces;
use strimzi_operator_common::runtime::OperatorRuntime;

use super::ReconcileError;

/// A Kafka by namespace and name.
type KafkaKey = (String, String);

/// What the two watches report.
enum Seen {
    /// A Kafka was deleted.
    KafkaDeleted(KafkaKey),
    /// A labelled binding exists (listed, created or changed), made for this Kafka.
    Binding(String, KafkaKey),
    /// A labelled binding was deleted.
    BindingDeleted(String),
}

/// The task that deletes the init ClusterRoleBindings of deleted Kafkas, to be run by
/// [`OperatorRuntime::run`] next to the controllers.
pub fn orphaned_bindings_cleanup(runtime: &OperatorRuntime) -> BoxFuture<'static, ()> {
    let runtime = runtime.clone();
    async move {
        let scopes: Vec<Option<String>> = match &runtime.config().namespaces {
            WatchedNamespaces::All => vec![None],
            WatchedNamespaces::List(namespaces) => namespaces.iter().cloned().map(Some).collect(),
        };
        let sweeper = Sweeper {
            runtime: runtime.clone(),
            scopes: scopes.clone(),
        };
        // Every Kafka, whatever the operator's selector: a binding of a Kafka that another
        // operator manages is not an orphan.
        let deletions = scopes.iter().map(|namespace| {
            let api: Api<PartialObjectMeta<Kafka>> = runtime.api(namespace.as_deref());
            watcher::watcher(api, watcher::Config::default())
                .default_backoff()
                .filter_map(|event| async move {
                    match event {
                        Ok(watcher::Event::Delete(kafka)) => Some(Seen::KafkaDeleted(key(&kafka))),
                        _ => None,
                    }
                })
                .boxed()
        });
        let api: Api<ClusterRoleBinding> = Api::all(runtime.client().clone());
        let selector = format!("{}=Kafka", labels::KIND);
        let bindings = watcher::watcher(api, watcher::Config::default().labels(&selector))
            .default_backoff()
            .filter_map(|event| async move {
                match event {
                    Ok(watcher::Event::Apply(binding) | watcher::Event::InitApply(binding)) => {
                        let kafka = kafka_of(&binding)?;
                        Some(Seen::Binding(binding.name_any(), kafka))
                    }
                    Ok(watcher::Event::Delete(binding)) => {
                        Some(Seen::BindingDeleted(binding.name_any()))
                    }
                    _ => None,
                }
            })
            .boxed();
        let mut events = futures::stream::select_all(deletions.chain([bindings]));
        // The labelled bindings that exist, with their Kafkas.
        let mut existing: BTreeMap<String, KafkaKey> = BTreeMap::new();
        let leadership = runtime.leadership().clone();
        let shutdown = runtime.shutdown_token();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = async { leadership.lost().await; leadership.acquired().await } => {
                    for kafka in existing.values() {
                        sweeper.check(kafka).await;
                    }
                }
                event = events.next() => match event {
                    Some(Seen::KafkaDeleted(kafka)) => sweeper.delete_binding_of(&kafka).await,
                    Some(Seen::Binding(name, kafka)) => {
                        sweeper.check(&kafka).await;
                        existing.insert(name, kafka);
                    }
                    Some(Seen::BindingDeleted(name)) => {
                        existing.remove(&name);
                    }
                    None => return,
                },
            }
        }
    }
    .boxed()
}

/// Deletes bindings for the operator.
struct Sweeper {
    runtime: OperatorRuntime,
    scopes: Vec<Option<String>>,
}

/// The namespace and name of `kafka`.
fn key(kafka: &PartialObjectMeta<Kafka>) -> KafkaKey {
    (kafka.namespace().unwrap_or_default(), kafka.name_any())
}

impl Sweeper {
    /// Whether the Kafkas of `namespace` are watched here.
    fn watches(&self, namespace: &str) -> bool {
        self.scopes
            .iter()
            .any(|scope| scope.as_deref().is_none_or(|watched| watched == namespace))
    }

    /// Deletes the binding of `kafka` if the Kafka, in a watched namespace, does not exist
    /// (asked of the API server, not of a cache that may lag); only while leading.
    async fn check(&self, kafka: &KafkaKey) {
        let (namespace, name) = kafka;
        if !self.watches(namespace) || !self.runtime.leadership().is_leading() {
            return;
        }
        let api: Api<PartialObjectMeta<Kafka>> = self.runtime.api(Some(namespace));
        match api.get_metadata_opt(name).await {
            Ok(Some(_)) => {}
            Ok(None) => self.delete_binding_of(kafka).await,
            Err(error) => {
                tracing::warn!(%error, namespace, name, "cannot read the Kafka of an init ClusterRoleBinding")
            }
        }
    }

    /// Deletes the init ClusterRoleBinding of the Kafka `kafka` ([`delete_init_binding`]);
    /// only while leading.
    async fn delete_binding_of(&self, kafka: &KafkaKey) {
        if !self.runtime.leadership().is_leading() {
            return;
        }
        let (namespace, cluster) = kafka;
        match delete_init_binding(&self.runtime, namespace, cluster).await {
            Ok(true) => tracing::info!(
                namespace,
                cluster,
                "deleted the init ClusterRoleBinding of a deleted Kafka"
            ),
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(%error, namespace, cluster, "cannot delete the init ClusterRoleBinding")
            }
        }
    }
}

/// Deletes `strimzi-<namespace>-<cluster>-kafka-init` if it exists and carries the cluster
/// and kind labels of that Kafka (nothing the operator did not create is deleted); whether
/// it did.
pub(super) async fn delete_init_binding(
    runtime: &OperatorRuntime,
    namespace: &str,
    cluster: &str,
) -> Result<bool, ReconcileError> {
    let name = naming::kafka_init_cluster_role_binding(namespace, cluster);
    let api: Api<ClusterRoleBinding> = Api::all(runtime.client().clone());
    let existing = api
        .get_metadata_opt(&name)
        .await
        .map_err(|source| ReconcileError::api("get ClusterRoleBinding", &name, source))?;
    let ours = existing.is_some_and(|binding| {
        binding.labels().get(labels::CLUSTER).map(String::as_str) == Some(cluster)
            && binding.labels().get(labels::KIND).map(String::as_str) == Some("Kafka")
    });
    Ok(ours && runtime.applier().delete(&api, &name).await?)
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
