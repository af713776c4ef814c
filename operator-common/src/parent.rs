//! Resources that name the resource they belong to by the `strimzi.io/cluster` label without
//! being owned by it (a KafkaRebalance names its Kafka, a KafkaConnector its KafkaConnect):
//! finding that parent, and telling which children a changed parent concerns.

use std::fmt::Debug;

use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use strimzi_api::labels;

use crate::api_error::ApiCallError;

/// Why the parent a `strimzi.io/cluster` label names could not be found.
#[derive(Debug, thiserror::Error)]
pub enum ParentError {
    /// The child has no `strimzi.io/cluster` label.
    #[error("the strimzi.io/cluster label is missing")]
    LabelMissing,
    /// The API server could not be asked for the parent.
    #[error(transparent)]
    Api(#[from] ApiCallError),
    /// No parent of that name exists in the namespace.
    #[error("{name} does not exist")]
    NotFound {
        /// The parent's name.
        name: String,
    },
}

/// The parent `child`'s `strimzi.io/cluster` label names, read through `api` (the child's
/// namespace).
pub async fn labelled_parent<Parent, Child>(
    api: &Api<Parent>,
    child: &Child,
) -> Result<Parent, ParentError>
where
    Parent: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
    Child: Resource,
{
    let name = child
        .labels()
        .get(labels::CLUSTER)
        .ok_or(ParentError::LabelMissing)?;
    api.get_opt(name)
        .await
        .map_err(|source| {
            let namespace = child.meta().namespace.as_deref().unwrap_or_default();
            ApiCallError::of::<Parent>("get", namespace, name, source)
        })?
        .ok_or_else(|| ParentError::NotFound { name: name.clone() })
}

/// Whether `child`'s `strimzi.io/cluster` label names `parent` (same namespace).
pub fn names_parent<Parent, Child>(parent: &PartialObjectMeta<Parent>, child: &Child) -> bool
where
    Child: Resource,
{
    parent.metadata.namespace == child.meta().namespace
        && parent.metadata.name.is_some()
        && child.labels().get(labels::CLUSTER) == parent.metadata.name.as_ref()
}
