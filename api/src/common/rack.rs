//! Rack (zone) awareness of pods.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// Where a pod learns which rack or zone it runs in.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rack {
    /// How the rack is found. Defaults to `topology-label`.
    pub r#type: Option<RackType>,
    /// Node label whose value names the rack, for example `topology.kubernetes.io/zone`.
    pub topology_key: Option<String>,
    /// Environment variable whose value names the rack (for `environment-variable`).
    pub env_var_name: Option<String>,
}

/// Source of the rack name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum RackType {
    /// Read from a label of the node the pod is scheduled on.
    #[serde(rename = "topology-label")]
    TopologyLabel,
    /// Read from an environment variable of the container.
    #[serde(rename = "environment-variable")]
    EnvironmentVariable,
}
