//! Writing to the API server the way every operator does: server-side apply with the
//! operator's field manager and force, no write when the object already has the desired
//! state, status through the status subresource, and deletion of owned objects that the
//! desired state no longer has. Every write is counted in
//! `strimzi_operator_api_writes_total`.

use std::fmt::Debug;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::NamespaceResourceScope;
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::metrics::Metrics;

/// A write to the API server failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The API server refused the request or could not be reached.
    #[error("{verb} {kind} {namespace}/{name}: {source}")]
    Api {
        /// What was attempted: `get`, `apply`, `status`, `list` or `delete`.
        verb: &'static str,
        /// Kind of the object.
        kind: String,
        /// Namespace of the object.
        namespace: String,
        /// Name of the object (empty for a list).
        name: String,
        /// The client error.
        source: Box<kube::Error>,
    },
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
            Self::Api { .. } => "KubernetesApiError",
            Self::Invalid { .. } => "InvalidObject",
        }
    }
}

/// A namespaced kind the [`Applier`] writes and compares.
pub trait Applicable:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Serialize
    + DeserializeOwned
    + Clone
    + Debug
{
}

impl<K> Applicable for K where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Serialize
        + DeserializeOwned
        + Clone
        + Debug
{
}

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
    /// `None`) already has every field `desired` sets with the same value.
    ///
    /// Fields that `desired` stops setting are left as they are when the rest matches; they
    /// are removed at the next write of the object.
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
        self.apply_unless_contained(&api, desired, current).await
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
        let (namespace, _) = identity(desired, &kind)?;
        let api: Api<K> = Api::namespaced(self.client.clone(), &namespace);
        self.apply_unless_contained(&api, desired, cached).await
    }

    /// Applies `desired` through `api` unless `current` already has every field it sets.
    async fn apply_unless_contained<K>(
        &self,
        api: &Api<K>,
        desired: &K,
        current: Option<&K>,
    ) -> Result<Applied, ApplyError>
    where
        K: Applicable,
    {
        let kind = K::kind(&()).into_owned();
        let (namespace, name) = identity(desired, &kind)?;
        let desired_json = to_json(desired, &kind)?;
        if let Some(current) = current
            && contains(&to_json(current, &kind)?, &desired_json)
        {
            return Ok(Applied::Unchanged);
        }
        api.patch(
            &name,
            &PatchParams::apply(&self.field_manager).force(),
            &Patch::Apply(&desired_json),
        )
        .await
        .map_err(|source| api_error("apply", &kind, &namespace, &name, source))?;
        self.metrics.count_write(&kind, "apply");
        Ok(Applied::Written)
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

    /// Deletes the objects of kind `K` in `namespace` that match `selector` (a label
    /// selector such as a component's labels) and whose names are not in `keep`. Returns the
    /// names deleted.
    pub async fn delete_unwanted<K>(
        &self,
        namespace: &str,
        selector: &str,
        keep: &[String],
    ) -> Result<Vec<String>, ApplyError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + DeserializeOwned
            + Clone
            + Debug,
    {
        let kind = K::kind(&()).into_owned();
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        let existing = api
            .list_metadata(&ListParams::default().labels(selector))
            .await
            .map_err(|source| api_error("list", &kind, namespace, "", source))?;
        let mut deleted = Vec::new();
        for object in existing {
            let name = object.name_any();
            if keep.contains(&name) || object.metadata.deletion_timestamp.is_some() {
                continue;
            }
            match api.delete(&name, &DeleteParams::background()).await {
                Ok(_) => {}
                // Already gone: what we wanted.
                Err(kube::Error::Api(status)) if status.code == 404 => continue,
                Err(source) => return Err(api_error("delete", &kind, namespace, &name, source)),
            }
            self.metrics.count_write(&kind, "delete");
            deleted.push(name);
        }
        Ok(deleted)
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
    ApplyError::Api {
        verb,
        kind: kind.to_owned(),
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        source: Box::new(source),
    }
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
}
