//! Health-check timing for containers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// Timing and thresholds of a liveness or readiness check.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    /// Seconds to wait after the container starts before the first check. Defaults to 15.
    #[schemars(range(min = 0))]
    pub initial_delay_seconds: Option<i32>,
    /// Seconds a single check may take before it counts as failed. Defaults to 5.
    #[schemars(range(min = 1))]
    pub timeout_seconds: Option<i32>,
    /// Seconds between two checks. Defaults to 10.
    #[schemars(range(min = 1))]
    pub period_seconds: Option<i32>,
    /// Consecutive passing checks needed after a failure to count as healthy again. Defaults to 1.
    #[schemars(range(min = 1))]
    pub success_threshold: Option<i32>,
    /// Consecutive failing checks after which the container counts as unhealthy. Defaults to 3.
    #[schemars(range(min = 1))]
    pub failure_threshold: Option<i32>,
}
