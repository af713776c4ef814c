//! `support-bundle`.
use std::path::Path;

use crate::cli::OperatorLocation;
use crate::connection::Cluster;
use crate::error::PluginError;

/// Writes the support bundle of Kafka `kafka` to `file`; what to print.
pub async fn support_bundle(
    cluster: &Cluster,
    kafka: &str,
    file: &Path,
    operator: &OperatorLocation,
) -> Result<String, PluginError> {
    todo!()
}
