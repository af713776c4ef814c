//! Status building blocks shared by every custom resource.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// One observation about a resource, such as whether it is ready, written by an operator.
///
/// Strimzi's conditions use the types `Ready`, `NotReady`, `Warning` and
/// `ReconciliationPaused`; the constants live in [`crate::conditions`].
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// What this condition is about, for example `Ready`. Unique within the list.
    pub r#type: Option<String>,
    /// Whether the condition holds: `True`, `False` or `Unknown`.
    pub status: Option<String>,
    /// When the condition last changed its status, as an RFC 3339 timestamp.
    pub last_transition_time: Option<String>,
    /// A short CamelCase word saying why the condition has its status.
    pub reason: Option<String>,
    /// A sentence for people explaining the condition.
    pub message: Option<String>,
}
