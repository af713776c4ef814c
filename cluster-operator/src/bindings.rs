//! Removal of the init ClusterRoleBindings of deleted resources: the Kafkas' (a topology-label
//! rack or `nodeport` listeners) and those of KafkaConnects, KafkaMirrorMaker2s and
//! KafkaBridges with a topology-label rack. A binding (`strimzi-<namespace>-<component>-init`)
//! is cluster-scoped, so it cannot be owned by its namespaced resource and garbage collection
//! never deletes it; Strimzi deletes it when it sees the resource's deletion. Here two
//! watches per kind do that, event-driven and without polling:
//! - a metadata-only watch of the resources of that kind in the watched namespaces: a
//!   deleted resource's binding is deleted;
//! - a watch of the bindings labelled `strimzi.io/kind=<kind>`: a binding that appears or
//!   changes (including every one listed when the watch starts, and again when this replica
//!   becomes the leader) is deleted when its resource does not exist, asked of the API server
//!   itself. So a deletion missed while the operator was down is caught up, and so is a
//!   binding that a reconciliation still running when its resource was deleted wrote again.
//!
//! Only the leader deletes, and only bindings whose name is the one made from their labels
//! and subject, for resources in the watched namespaces. A reconciliation whose resource no
//! longer wants its binding deletes it with [`delete_init_binding`].

use std::collections::BTreeMap;
use std::fmt::Debug;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use strimzi_api::bridge::KafkaBridge;
use strimzi_api::connect::KafkaConnect;
use strimzi_api::kafka::Kafka;
use strimzi_api::mirror_maker2::KafkaMirrorMaker2;
use strimzi_api::{labels, naming};
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::apply::ApplyError;
use strimzi_operator_common::cache::{CacheScope, log_watch_failures};
use strimzi_operator_common::config::WatchedNamespaces;
use strimzi_operator_common::runtime::OperatorRuntime;

/// A resource by namespace and name.
type ResourceKey = (String, String);

/// What the two watches report.
enum Seen {
    /// A resource was deleted.
    ResourceDeleted(ResourceKey),
    /// A labelled binding exists (listed, created or changed), made for this resource.
    Binding(String, ResourceKey),
    /// A labelled binding was deleted.
    BindingDeleted(String),
}

/// One kind whose pods may have an init ClusterRoleBinding.
#[derive(Clone, Copy)]
pub struct InitBindingKind {
    /// `strimzi.io/kind` of the bindings.
    pub kind: &'static str,
    /// The pods' component name (and ServiceAccount) of a resource of that name.
    pub component: fn(&str) -> String,
}

impl InitBindingKind {
    /// The Kafka brokers' bindings.
    pub const KAFKA: Self = Self {
        kind: "Kafka",
        component: naming::kafka_component,
    };
    /// The Connect workers' bindings.
    pub const CONNECT: Self = Self {
        kind: "KafkaConnect",
        component: naming::connect_component,
    };
    /// The MirrorMaker 2 workers' bindings.
    pub const MIRROR_MAKER_2: Self = Self {
        kind: "KafkaMirrorMaker2",
        component: naming::mirror_maker2_component,
    };
    /// The Bridge pods' bindings.
    pub const BRIDGE: Self = Self {
        kind: "KafkaBridge",
        component: naming::bridge_deployment,
    };

    /// The binding of the resource `name` in `namespace`.
    pub fn binding_name(self, namespace: &str, name: &str) -> String {
        naming::init_cluster_role_binding(namespace, &(self.component)(name))
    }

    /// The resource a binding was made for: the namespace of its ServiceAccount subject and
    /// its cluster label, provided its name is the one made from them.
    fn resource_of(self, binding: &ClusterRoleBinding) -> Option<ResourceKey> {
        let cluster = binding.labels().get(labels::CLUSTER)?;
        let namespace = binding.subjects.as_ref()?.first()?.namespace.as_ref()?;
        (binding.meta().name.as_deref() == Some(self.binding_name(namespace, cluster).as_str()))
            .then(|| (namespace.clone(), cluster.clone()))
    }
}

/// The tasks that delete the init ClusterRoleBindings of deleted Kafkas, KafkaConnects,
/// KafkaMirrorMaker2s and KafkaBridges, to be run by [`OperatorRuntime::run`] next to the
/// controllers.
pub fn orphaned_bindings_cleanup(runtime: &OperatorRuntime) -> Vec<BoxFuture<'static, ()>> {
    vec![
        cleanup_of::<Kafka>(runtime, InitBindingKind::KAFKA),
        cleanup_of::<KafkaConnect>(runtime, InitBindingKind::CONNECT),
        cleanup_of::<KafkaMirrorMaker2>(runtime, InitBindingKind::MIRROR_MAKER_2),
        cleanup_of::<KafkaBridge>(runtime, InitBindingKind::BRIDGE),
    ]
}

/// The cleanup task of the bindings of `K`.
fn cleanup_of<K>(runtime: &OperatorRuntime, kind: InitBindingKind) -> BoxFuture<'static, ()>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + DeserializeOwned
        + Clone
        + Debug
        + Send
        + Sync
        + 'static,
{
    let runtime = runtime.clone();
    async move {
        let scopes: Vec<Option<String>> = match &runtime.config().namespaces {
            WatchedNamespaces::All => vec![None],
            WatchedNamespaces::List(namespaces) => namespaces.iter().cloned().map(Some).collect(),
        };
        let sweeper = Sweeper {
            runtime: runtime.clone(),
            scopes: scopes.clone(),
            kind,
        };
        // Every resource, whatever the operator's selector: a binding of a resource that
        // another operator manages is not an orphan.
        let deletions = scopes.iter().map(|namespace| {
            let api: Api<PartialObjectMeta<K>> = runtime.api(namespace.as_deref());
            let scope = CacheScope {
                namespace: namespace.clone(),
                selector: None,
            };
            log_watch_failures::<K, _, _>(
                watcher::watcher(api, watcher::Config::default()).default_backoff(),
                &scope,
            )
            .filter_map(|event| async move {
                match event {
                    Ok(watcher::Event::Delete(resource)) => {
                        Some(Seen::ResourceDeleted(key(&resource)))
                    }
                    _ => None,
                }
            })
            .boxed()
        });
        let api: Api<ClusterRoleBinding> = Api::all(runtime.client().clone());
        let selector = format!("{}={}", labels::KIND, kind.kind);
        let scope = CacheScope {
            namespace: None,
            selector: Some(selector.clone()),
        };
        let bindings = log_watch_failures::<ClusterRoleBinding, _, _>(
            watcher::watcher(api, watcher::Config::default().labels(&selector)).default_backoff(),
            &scope,
        )
        .filter_map(move |event| async move {
            match event {
                Ok(watcher::Event::Apply(binding) | watcher::Event::InitApply(binding)) => {
                    let resource = kind.resource_of(&binding)?;
                    Some(Seen::Binding(binding.name_any(), resource))
                }
                Ok(watcher::Event::Delete(binding)) => {
                    Some(Seen::BindingDeleted(binding.name_any()))
                }
                _ => None,
            }
        })
        .boxed();
        let mut events = futures::stream::select_all(deletions.chain([bindings]));
        // The labelled bindings that exist, with their resources.
        let mut existing: BTreeMap<String, ResourceKey> = BTreeMap::new();
        let leadership = runtime.leadership().clone();
        let shutdown = runtime.shutdown_token();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = async { leadership.lost().await; leadership.acquired().await } => {
                    for resource in existing.values() {
                        sweeper.check::<K>(resource).await;
                    }
                }
                event = events.next() => match event {
                    Some(Seen::ResourceDeleted(resource)) => {
                        sweeper.delete_binding_of(&resource).await;
                    }
                    Some(Seen::Binding(name, resource)) => {
                        sweeper.check::<K>(&resource).await;
                        existing.insert(name, resource);
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

/// Deletes the bindings of one kind for the operator.
struct Sweeper {
    runtime: OperatorRuntime,
    scopes: Vec<Option<String>>,
    kind: InitBindingKind,
}

/// The namespace and name of `resource`.
fn key<K: Resource>(resource: &PartialObjectMeta<K>) -> ResourceKey {
    (
        resource.namespace().unwrap_or_default(),
        resource.name_any(),
    )
}

impl Sweeper {
    /// Whether the resources of `namespace` are watched here.
    fn watches(&self, namespace: &str) -> bool {
        self.scopes
            .iter()
            .any(|scope| scope.as_deref().is_none_or(|watched| watched == namespace))
    }

    /// Deletes the binding of `resource` if the resource, in a watched namespace, does not
    /// exist (asked of the API server, not of a cache that may lag); only while leading.
    async fn check<K>(&self, resource: &ResourceKey)
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + DeserializeOwned
            + Clone
            + Debug,
    {
        let (namespace, name) = resource;
        if !self.watches(namespace) || !self.runtime.leadership().is_leading() {
            return;
        }
        let api: Api<PartialObjectMeta<K>> = self.runtime.api(Some(namespace));
        match api.get_metadata_opt(name).await {
            Ok(Some(_)) => {}
            Ok(None) => self.delete_binding_of(resource).await,
            Err(error) => tracing::warn!(
                %error,
                namespace,
                name,
                kind = self.kind.kind,
                "cannot read the owner of an init ClusterRoleBinding"
            ),
        }
    }

    /// Deletes the init ClusterRoleBinding of `resource` ([`delete_init_binding`]); only
    /// while leading.
    async fn delete_binding_of(&self, resource: &ResourceKey) {
        if !self.runtime.leadership().is_leading() {
            return;
        }
        let (namespace, name) = resource;
        let kind = self.kind.kind;
        match delete_init_binding(&self.runtime, self.kind, namespace, name).await {
            Ok(true) => tracing::info!(
                namespace,
                name,
                kind,
                "deleted the init ClusterRoleBinding of a deleted resource"
            ),
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(%error, namespace, name, kind, "cannot delete the init ClusterRoleBinding")
            }
        }
    }
}

/// Deletes the init ClusterRoleBinding of the resource `name` of `kind` in `namespace` if it
/// exists and carries that resource's cluster and kind labels (nothing the operator did not
/// create is deleted); whether it did.
pub async fn delete_init_binding(
    runtime: &OperatorRuntime,
    kind: InitBindingKind,
    namespace: &str,
    name: &str,
) -> Result<bool, ApplyError> {
    let binding = kind.binding_name(namespace, name);
    let api: Api<ClusterRoleBinding> = Api::all(runtime.client().clone());
    let existing = api
        .get_metadata_opt(&binding)
        .await
        .map_err(|source| ApiCallError::of::<ClusterRoleBinding>("get", "", &binding, source))?;
    let ours = existing.is_some_and(|existing| {
        existing.labels().get(labels::CLUSTER).map(String::as_str) == Some(name)
            && existing.labels().get(labels::KIND).map(String::as_str) == Some(kind.kind)
    });
    Ok(ours && runtime.applier().delete(&api, &binding).await?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn binding(name: &str, kind: &str, cluster: &str, namespace: &str) -> ClusterRoleBinding {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {"strimzi.io/cluster": cluster, "strimzi.io/kind": kind}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "strimzi-kafka-client"},
            "subjects": [{"kind": "ServiceAccount", "name": "any", "namespace": namespace}],
        }))
        .unwrap()
    }

    #[test]
    fn a_binding_names_its_resource_only_when_its_name_matches() {
        let ours = binding(
            "strimzi-my-ns-my-cluster-kafka-init",
            "Kafka",
            "my-cluster",
            "my-ns",
        );
        assert_eq!(
            InitBindingKind::KAFKA.resource_of(&ours),
            Some(("my-ns".to_owned(), "my-cluster".to_owned()))
        );
        let other = binding("someone-elses-binding", "Kafka", "my-cluster", "my-ns");
        assert_eq!(InitBindingKind::KAFKA.resource_of(&other), None);
        for (kind, name) in [
            (InitBindingKind::CONNECT, "strimzi-ns-c-connect-init"),
            (
                InitBindingKind::MIRROR_MAKER_2,
                "strimzi-ns-c-mirrormaker2-init",
            ),
            (InitBindingKind::BRIDGE, "strimzi-ns-c-bridge-init"),
        ] {
            assert_eq!(kind.binding_name("ns", "c"), name);
            assert_eq!(
                kind.resource_of(&binding(name, kind.kind, "c", "ns")),
                Some(("ns".to_owned(), "c".to_owned()))
            );
        }
    }
}
