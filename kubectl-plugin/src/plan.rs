//! `plan`.
use std::path::PathBuf;

use crate::cli::{OperatorLocation, Output};
use crate::connection::Cluster;
use crate::error::PluginError;

/// What `plan` was asked.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    /// `-f`.
    pub file: Option<PathBuf>,
    /// The Kafka for `--set`.
    pub kafka: Option<String>,
    /// `--set` changes.
    pub set: Vec<String>,
    /// Where the operator runs.
    pub operator: OperatorLocation,
}

/// The plan.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Plan {}

/// Computes the plan.
pub async fn plan(cluster: &Cluster, request: &PlanRequest) -> Result<Plan, PluginError> {
    todo!()
}

/// Prints the plan.
pub fn render(plan: &Plan, output: Output) -> String {
    todo!()
}
