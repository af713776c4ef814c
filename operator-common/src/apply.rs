//! Writing to the API server the way every operator does: server-side apply with the
//! operator's field manager and force, no write when the object already has the desired
//! state, status through the status subresource, and deletion (the cleanup pass of
//! [`crate::sync`]). Every write is counted in
//! `strimzi_operator_api_writes_total`.
//!
//! What is applied is what is desired: a write is skipped only when the live object has every
//! field of the desired object ([`contains`]) *and* the desired object still sets every field
//! that our field manager's last apply set (its `metadata.managedFields` entry, see
//! [`drops_owned_fields`]). So a label, annotation, ConfigMap key or template field that we
//! stop setting is removed at the reconciliation that drops it, while one where nothing changed
//! writes nothing, decided from the object at hand without another read. Fields other managers
//! own are neither compared nor touched. When the object has no apply entry of ours (created
//! by someone else, or read from a cache that dropped it), only [`contains`] decides; the
//! caches of [`crate::cache`] and [`crate::scoped_cache`] keep that entry for this reason.

use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::api_error::{ApiCallError, object_name};
use crate::metrics::Metrics;

/// A write to the API server failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The API server refused the request or could not be reached (`get`, `apply`,
    /// `status`, `list` or `delete`).
    #[error(transparent)]
    Api(#[from] ApiCallError),
    /// The desired object could not be turned into JSON, or has no name or namespace.
    #[error("invalid desired {kind}: {message}")]
    Invalid {
        /// Kind of the object.
        kind: String,
        /// What is wrong.
        message: String,
    },
}

impl crate::ErrorReason for ApplyError {
    fn reason(&self) -> &'static str {
        match self {
            Self::Api(_) => "KubernetesApiError",
            Self::Invalid { .. } => "InvalidObject",
        }
    }
}

/// A kind, namespaced or cluster-scoped, that the [`Applier`] can write and compare.
pub trait Writable:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Debug
{
}

impl<K> Writable for K where
    K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Debug
{
}

/// A namespaced kind the [`Applier`] writes and compares.
pub trait Applicable: Writable + Resource<Scope = NamespaceResourceScope> {}

impl<K> Applicable for K where K: Writable + Resource<Scope = NamespaceResourceScope> {}

/// What an apply did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The object already had the desired state; nothing was written.
    Unchanged,
    /// The object was created or changed.
    Written,
}

/// Writes objects for one operator; cloned freely.
#[derive(Clone)]
pub struct Applier {
    client: Client,
    field_manager: String,
    metrics: Metrics,
}

impl Debug for Applier {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Applier")
            .field("field_manager", &self.field_manager)
            .finish_non_exhaustive()
    }
}

impl Applier {
    /// An applier writing as `field_manager`, counting writes in `metrics`.
    pub fn new(client: Client, field_manager: &str, metrics: Metrics) -> Self {
        Self {
            client,
            field_manager: field_manager.to_owned(),
            metrics,
        }
    }

    /// The field manager of every write.
    pub fn field_manager(&self) -> &str {
        &self.field_manager
    }

    /// The client the applier writes with.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Server-side applies `desired` unless `current` (the object as cached, or read now when
    /// `None`) already has every field `desired` sets with the same value and our field
    /// manager's last apply set no field that `desired` no longer sets (see the module docs):
    /// fields `desired` stops setting are removed by this write.
    pub async fn apply<K>(&self, desired: &K, current: Option<&K>) -> Result<Applied, ApplyError>
    where
        K: Applicable,
    {
        let kind = K::kind(&()).into_owned();
        let (namespace, name) = identity(desired, &kind)?;
        let api: Api<K> = Api::namespaced(self.client.clone(), &namespace);
        let read;
        let current = match current {
            Some(current) => Some(current),
            None => {
                read = api
                    .get_opt(&name)
                    .await
                    .map_err(|source| api_error("get", &kind, &namespace, &name, source))?;
                read.as_ref()
            }
        };
        self.apply_unless_contained(&api, &namespace, &name, desired, current)
            .await
    }

    /// Like [`Self::apply`], for callers whose filled cache is the truth: `cached` is the
    /// object as cached, and `None` means it does not exist, so nothing is read first.
    pub async fn apply_cached<K>(
        &self,
        desired: &K,
        cached: Option<&K>,
    ) -> Result<Applied, ApplyError>
    where
        K: Applicable,
    {
        let kind = K::kind(&()).into_owned();
        let (namespace, name) = identity(desired, &kind)?;
        let api: Api<K> = Api::namespaced(self.client.clone(), &namespace);
        self.apply_unless_contained(&api, &namespace, &name, desired, cached)
            .await
    }

    /// Like [`Self::apply`] for a cluster-scoped object (a ClusterRoleBinding, ...): read
    /// first, written unless it already has the desired state.
    pub async fn apply_cluster_scoped<K>(&self, desired: &K) -> Result<Applied, ApplyError>
    where
        K: Writable + Resource<Scope = ClusterResourceScope>,
    {
        let kind = K::kind(&()).into_owned();
        let name = desired
            .meta()
            .name
            .clone()
            .ok_or_else(|| ApplyError::Invalid {
                kind: kind.clone(),
                message: "metadata.name must be set".to_owned(),
            })?;
        let api: Api<K> = Api::all(self.client.clone());
        let current = api
            .get_opt(&name)
            .await
            .map_err(|source| api_error("get", &kind, "", &name, source))?;
        self.apply_unless_contained(&api, "", &name, desired, current.as_ref())
            .await
    }

    /// Deletes the object `name` through `api` (in the background: its dependents are
    /// garbage collected); `false` if it was already gone.
    pub async fn delete<K>(&self, api: &Api<K>, name: &str) -> Result<bool, ApplyError>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        let kind = K::kind(&()).into_owned();
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => {
                self.metrics.count_write(&kind, "delete");
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
            Err(source) => Err(api_error(
                "delete",
                &kind,
                api.namespace().unwrap_or_default(),
                name,
                source,
            )),
        }
    }

    /// Applies `desired` (named `name`, in `namespace` or cluster-scoped when empty) through
    /// `api` unless `current` already has exactly what it asks for.
    async fn apply_unless_contained<K>(
        &self,
        api: &Api<K>,
        namespace: &str,
        name: &str,
        desired: &K,
        current: Option<&K>,
    ) -> Result<Applied, ApplyError>
    where
        K: Writable,
    {
        let kind = K::kind(&()).into_owned();
        let desired_json = to_json(desired, &kind)?;
        if let Some(current) = current
            && !self.needs_write(current, &to_json(current, &kind)?, &desired_json)
        {
            return Ok(Applied::Unchanged);
        }
        api.patch(
            name,
            &PatchParams::apply(&self.field_manager).force(),
            &Patch::Apply(&desired_json),
        )
        .await
        .map_err(|source| api_error("apply", &kind, namespace, name, source))?;
        self.metrics.count_write(&kind, "apply");
        Ok(Applied::Written)
    }

    /// Whether applying `desired` (JSON) would change `current` (also given as JSON): it lacks
    /// a desired field or value, or our last apply set a field that `desired` drops.
    fn needs_write<K: Writable>(&self, current: &K, actual: &Value, desired: &Value) -> bool {
        if !contains(actual, desired) {
            return true;
        }
        let api_version = K::api_version(&());
        applied_entries(current.meta(), &self.field_manager).any(|entry| {
            // Fields are listed in the version they were applied in: another version's list
            // cannot be compared, and the write makes the entry ours at this version.
            entry.api_version.as_deref() != Some(api_version.as_ref())
                || entry
                    .fields_v1
                    .as_ref()
                    .is_none_or(|fields| drops_owned_fields(&fields.0, desired, Some(actual)))
        })
    }

    /// Server-side applies `status` to the status subresource of `resource`.
    pub async fn write_status<K, S>(&self, resource: &K, status: &S) -> Result<(), ApplyError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
        S: Serialize,
    {
        let kind = K::kind(&()).into_owned();
        let (namespace, name) = identity(resource, &kind)?;
        let body = json!({
            "apiVersion": K::api_version(&()),
            "kind": kind,
            "status": to_json(status, &kind)?,
        });
        // Untyped, so that a resource which does not deserialize can still get a status.
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            &namespace,
            &ApiResource::erase::<K>(&()),
        );
        api.patch_status(
            &name,
            &PatchParams::apply(&self.field_manager).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(|source| api_error("status", &kind, &namespace, &name, source))?;
        self.metrics.count_write(&kind, "status");
        Ok(())
    }
}

fn identity<K: Resource>(object: &K, kind: &str) -> Result<(String, String), ApplyError> {
    match (object.meta().namespace.clone(), object.meta().name.clone()) {
        (Some(namespace), Some(name)) => Ok((namespace, name)),
        _ => Err(ApplyError::Invalid {
            kind: kind.to_owned(),
            message: "metadata.name and metadata.namespace must be set".to_owned(),
        }),
    }
}

fn to_json(value: &impl Serialize, kind: &str) -> Result<Value, ApplyError> {
    serde_json::to_value(value).map_err(|error| ApplyError::Invalid {
        kind: kind.to_owned(),
        message: error.to_string(),
    })
}

fn api_error(
    verb: &'static str,
    kind: &str,
    namespace: &str,
    name: &str,
    source: kube::Error,
) -> ApplyError {
    ApplyError::Api(ApiCallError::new(
        verb,
        object_name(kind, namespace, name),
        source,
    ))
}

/// The `managedFields` entries of what `field_manager` last server-side applied to the object
/// itself (not to a subresource such as `status`).
pub fn applied_entries<'a>(
    meta: &'a ObjectMeta,
    field_manager: &'a str,
) -> impl Iterator<Item = &'a ManagedFieldsEntry> + 'a {
    meta.managed_fields
        .iter()
        .flatten()
        .filter(move |entry| is_applied_by(entry, field_manager))
}

/// Drops every `managedFields` entry of `meta` but what `field_manager` last applied to the
/// object itself: all that [`Applier::apply`] reads, kept by caches instead of the whole list.
pub fn keep_applied_fields(meta: &mut ObjectMeta, field_manager: &str) {
    if let Some(entries) = meta.managed_fields.as_mut() {
        entries.retain(|entry| is_applied_by(entry, field_manager));
        if entries.is_empty() {
            meta.managed_fields = None;
        }
    }
}

fn is_applied_by(entry: &ManagedFieldsEntry, field_manager: &str) -> bool {
    entry.manager.as_deref() == Some(field_manager)
        && entry.operation.as_deref() == Some("Apply")
        && entry.subresource.as_deref().is_none_or(str::is_empty)
}

/// Whether `desired` no longer sets a field that `owned` (the `fieldsV1` of a `managedFields`
/// entry: the fields one apply set) lists, so that applying `desired` would remove it;
/// `actual` is the live object, when known, for fields owned whole.
///
/// `owned` is walked together with `desired`: `f:<name>` is the object key `name`,
/// `k:{"port":80,"protocol":"TCP"}` the element of an associative list with those key values
/// (a key field the desired element leaves out, which the API server defaults, matches any
/// value), `v:<json>` the element of a set, `i:<n>` the element at an index, and `.` the node
/// itself. A leaf (`{}`) whose desired value is a non-empty map or list is owned whole (an
/// atomic field such as a Service's `selector`, a LabelSelector or a list without keys such
/// as a StrimziPodSet's `pods`): something was dropped from it when the live value has more
/// than `desired` sets. (Were the API server to default a field inside such a value, every
/// apply of it would write; the no-op tests would show it.) Anything not understood counts as
/// dropped, which costs one write too many at worst.
pub fn drops_owned_fields(owned: &Value, desired: &Value, actual: Option<&Value>) -> bool {
    match owned {
        Value::Object(owned) => drops_owned(owned, desired, actual),
        _ => true,
    }
}

fn drops_owned(
    owned: &serde_json::Map<String, Value>,
    desired: &Value,
    actual: Option<&Value>,
) -> bool {
    owned.iter().any(|(path, children)| {
        if path == "." {
            return false;
        }
        let Some((desired, actual)) = element(path, desired, actual) else {
            return true;
        };
        match children {
            Value::Object(children) if children.is_empty() => owned_whole_differs(desired, actual),
            Value::Object(children) => drops_owned(children, desired, actual),
            _ => true,
        }
    })
}

/// Whether a field owned whole (a leaf of `fieldsV1`) holds more than `desired` sets.
fn owned_whole_differs(desired: &Value, actual: Option<&Value>) -> bool {
    let composite = match desired {
        Value::Object(map) => !map.is_empty(),
        Value::Array(list) => !list.is_empty(),
        _ => false,
    };
    composite && actual.is_none_or(|actual| !contains(desired, actual))
}

/// The desired and live values at one `fieldsV1` path element, `None` when `desired` does not
/// have it (or the element is not understood).
fn element<'a, 'b>(
    path: &str,
    desired: &'a Value,
    actual: Option<&'b Value>,
) -> Option<(&'a Value, Option<&'b Value>)> {
    if let Some(name) = path.strip_prefix("f:") {
        let wanted = desired
            .as_object()?
            .get(name)
            .filter(|value| !value.is_null())?;
        return Some((wanted, actual.and_then(|actual| actual.get(name))));
    }
    if let Some(keys) = path.strip_prefix("k:") {
        let Value::Object(keys) = serde_json::from_str::<Value>(keys).ok()? else {
            return None;
        };
        let items = desired.as_array()?;
        let wanted = items
            .iter()
            .find(|item| matches_keys(item, &keys, true))
            .or_else(|| items.iter().find(|item| matches_keys(item, &keys, false)))?;
        let live = actual
            .and_then(Value::as_array)
            .and_then(|items| items.iter().find(|item| matches_keys(item, &keys, true)));
        return Some((wanted, live));
    }
    if let Some(value) = path.strip_prefix("v:") {
        let value: Value = serde_json::from_str(value).ok()?;
        let wanted = desired
            .as_array()?
            .iter()
            .find(|item| strimzi_api::document::equivalent(item, &value))?;
        let live = actual.and_then(Value::as_array).and_then(|items| {
            items
                .iter()
                .find(|item| strimzi_api::document::equivalent(item, &value))
        });
        return Some((wanted, live));
    }
    if let Some(index) = path.strip_prefix("i:") {
        let index: usize = index.parse().ok()?;
        let wanted = desired.as_array()?.get(index)?;
        return Some((wanted, actual.and_then(|actual| actual.get(index))));
    }
    None
}

/// Whether list element `item` has the key values `keys`; unless `exact`, a key field the
/// item leaves out matches (the API server defaults it, e.g. a port's `protocol`).
fn matches_keys(item: &Value, keys: &serde_json::Map<String, Value>, exact: bool) -> bool {
    keys.iter().all(|(key, value)| match item.get(key) {
        Some(found) if !found.is_null() => strimzi_api::document::equivalent(found, value),
        _ => !exact,
    })
}

/// Whether `actual` has every field of `desired` with an equal value (numbers compared by
/// value, lists element by element with equal length). A `null` in `desired` asks for the
/// field to be absent.
pub fn contains(actual: &Value, desired: &Value) -> bool {
    match (actual, desired) {
        (Value::Object(actual), Value::Object(desired)) => {
            desired.iter().all(|(key, wanted)| match actual.get(key) {
                Some(value) => contains(value, wanted),
                None => wanted.is_null(),
            })
        }
        (Value::Array(actual), Value::Array(desired)) => {
            actual.len() == desired.len()
                && actual
                    .iter()
                    .zip(desired)
                    .all(|(value, wanted)| contains(value, wanted))
        }
        _ => strimzi_api::document::equivalent(actual, desired),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn desired_fields_must_match_but_extra_fields_are_fine() {
        let actual = json!({
            "metadata": {"name": "a", "uid": "1", "labels": {"x": "1", "y": "2"}},
            "data": {"k": "v"},
            "spec": {"replicas": 3, "ports": [{"port": 80, "protocol": "TCP"}]}
        });
        assert!(contains(
            &actual,
            &json!({"metadata": {"labels": {"x": "1"}}, "spec": {"replicas": 3.0}})
        ));
        assert!(contains(
            &actual,
            &json!({"spec": {"ports": [{"port": 80}]}})
        ));
        assert!(contains(&actual, &json!({"gone": null})));
        assert!(!contains(&actual, &json!({"data": {"k": "w"}})));
        assert!(!contains(
            &actual,
            &json!({"metadata": {"labels": {"z": "1"}}})
        ));
        assert!(!contains(&actual, &json!({"spec": {"ports": []}})));
        assert!(!contains(&actual, &json!({"data": null})));
    }

    /// The `fieldsV1` the API server records for an apply of `service(two_ports(), ..)`, as
    /// in the real managedFields of a Service.
    fn service_fields() -> Value {
        json!({
            "f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}, "f:annotations": {".": {}, "f:n": {}}},
            "f:spec": {
                "f:ports": {
                    "k:{\"port\":9092,\"protocol\":\"TCP\"}": {
                        ".": {}, "f:name": {}, "f:port": {}, "f:targetPort": {}
                    },
                    "k:{\"port\":9093,\"protocol\":\"TCP\"}": {
                        ".": {}, "f:name": {}, "f:port": {}, "f:appProtocol": {}
                    }
                },
                "f:selector": {}
            }
        })
    }

    fn service(ports: Value, selector: Value) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s", "labels": {"a": "1", "b": "2"}, "annotations": {"n": "x"}},
            "spec": {"ports": ports, "selector": selector}
        })
    }

    fn two_ports() -> Value {
        json!([
            {"name": "plain", "port": 9092, "targetPort": 9092},
            {"name": "tls", "port": 9093, "appProtocol": "kafka"}
        ])
    }

    #[test]
    fn nothing_dropped_when_desired_sets_every_owned_field() {
        let desired = service(two_ports(), json!({"app": "k"}));
        let mut actual = desired.clone();
        // Defaults and other managers' fields are not ours: they do not count.
        actual["spec"]["ports"][0]["protocol"] = json!("TCP");
        actual["spec"]["ports"][1]["protocol"] = json!("TCP");
        actual["spec"]["ports"][1]["targetPort"] = json!(9093);
        actual["spec"]["clusterIP"] = json!("10.0.0.1");
        actual["metadata"]["labels"]["theirs"] = json!("x");
        assert!(contains(&actual, &desired));
        assert!(!drops_owned_fields(
            &service_fields(),
            &desired,
            Some(&actual)
        ));
        // A key field written out matches too.
        let mut explicit = desired.clone();
        explicit["spec"]["ports"][0]["protocol"] = json!("TCP");
        assert!(!drops_owned_fields(
            &service_fields(),
            &explicit,
            Some(&actual)
        ));
    }

    #[test]
    fn dropped_keys_labels_and_list_elements_are_found() {
        let actual = service(two_ports(), json!({"app": "k"}));
        let fields = service_fields();
        let mut no_label = actual.clone();
        no_label["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("b");
        assert!(drops_owned_fields(&fields, &no_label, Some(&actual)));
        let mut no_annotations = actual.clone();
        no_annotations["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("annotations");
        assert!(drops_owned_fields(&fields, &no_annotations, Some(&actual)));
        let mut null_label = actual.clone();
        null_label["metadata"]["labels"]["a"] = Value::Null;
        assert!(drops_owned_fields(&fields, &null_label, Some(&actual)));
        // A field of one element of an associative list.
        let mut no_app_protocol = actual.clone();
        no_app_protocol["spec"]["ports"][1]
            .as_object_mut()
            .unwrap()
            .remove("appProtocol");
        assert!(drops_owned_fields(&fields, &no_app_protocol, Some(&actual)));
        // A whole element, also when another element takes its place.
        let one_port = service(json!([two_ports()[0].clone()]), json!({"app": "k"}));
        assert!(drops_owned_fields(&fields, &one_port, Some(&actual)));
        let mut other_port = actual.clone();
        other_port["spec"]["ports"][1]["port"] = json!(9094);
        assert!(drops_owned_fields(&fields, &other_port, Some(&actual)));
        let mut udp = actual.clone();
        udp["spec"]["ports"][1]["protocol"] = json!("UDP");
        assert!(drops_owned_fields(&fields, &udp, Some(&actual)));
    }

    #[test]
    fn fields_owned_whole_compare_whole() {
        let fields = service_fields();
        let desired = service(two_ports(), json!({"app": "k"}));
        let actual = service(two_ports(), json!({"app": "k", "tier": "broker"}));
        // The selector is atomic: a key we no longer set is still in the live value.
        assert!(contains(&actual, &desired));
        assert!(drops_owned_fields(&fields, &desired, Some(&actual)));
        assert!(!drops_owned_fields(&fields, &actual, Some(&actual)));
        // An atomic list of objects (StrimziPodSet pods): a dropped template field counts.
        let pods = json!({"f:spec": {"f:pods": {}}});
        let live = json!({"spec": {"pods": [{"metadata": {"labels": {"a": "1", "b": "2"}}}]}});
        let fewer = json!({"spec": {"pods": [{"metadata": {"labels": {"a": "1"}}}]}});
        assert!(drops_owned_fields(&pods, &fewer, Some(&live)));
        assert!(!drops_owned_fields(&pods, &live, Some(&live)));
        // Scalars and empty values owned whole are compared by `contains` alone.
        let scalar = json!({"f:spec": {"f:replicas": {}, "f:ports": {}}});
        let desired = json!({"spec": {"replicas": 3, "ports": []}});
        let actual = json!({"spec": {"replicas": 3.0, "ports": []}});
        assert!(!drops_owned_fields(&scalar, &desired, Some(&actual)));
    }

    #[test]
    fn sets_indexes_and_unknown_paths() {
        let set = json!({"f:finalizers": {"v:\"a\"": {}, "v:\"b\"": {}}});
        let both = json!({"finalizers": ["b", "a"]});
        assert!(!drops_owned_fields(&set, &both, Some(&both)));
        assert!(drops_owned_fields(
            &set,
            &json!({"finalizers": ["a"]}),
            Some(&both)
        ));
        let indexed = json!({"f:list": {"i:1": {"f:x": {}}}});
        let two = json!({"list": [{}, {"x": 1}]});
        assert!(!drops_owned_fields(&indexed, &two, Some(&two)));
        assert!(drops_owned_fields(
            &indexed,
            &json!({"list": [{"x": 1}]}),
            Some(&two)
        ));
        assert!(drops_owned_fields(&json!({"q:odd": {}}), &two, Some(&two)));
        assert!(drops_owned_fields(
            &json!({"k:not json": {}}),
            &two,
            Some(&two)
        ));
        assert!(drops_owned_fields(&json!("not a set"), &two, Some(&two)));
        assert!(!drops_owned_fields(&json!({}), &two, Some(&two)));
        assert!(!drops_owned_fields(&json!({".": {}}), &two, Some(&two)));
    }

    #[test]
    fn caches_keep_only_what_our_manager_applied() {
        let entry =
            |manager: &str, operation: &str, subresource: Option<&str>| ManagedFieldsEntry {
                manager: Some(manager.to_owned()),
                operation: Some(operation.to_owned()),
                subresource: subresource.map(str::to_owned),
                ..ManagedFieldsEntry::default()
            };
        let mut meta = ObjectMeta {
            managed_fields: Some(vec![
                entry("kubectl", "Apply", None),
                entry("ours", "Update", None),
                entry("ours", "Apply", Some("status")),
                entry("ours", "Apply", None),
                entry("kubelet", "Update", Some("status")),
            ]),
            ..ObjectMeta::default()
        };
        assert_eq!(applied_entries(&meta, "ours").count(), 1);
        keep_applied_fields(&mut meta, "ours");
        assert_eq!(
            meta.managed_fields,
            Some(vec![entry("ours", "Apply", None)])
        );
        keep_applied_fields(&mut meta, "someone");
        assert_eq!(meta.managed_fields, None);
    }
}
