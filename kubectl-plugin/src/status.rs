//! `status`.
use crate::cli::Output;
use crate::connection::Cluster;
use crate::error::PluginError;

/// The status of Kafka `kafka`, printed as `output` says.
pub async fn status(cluster: &Cluster, kafka: &str, output: Output) -> Result<String, PluginError> {
    todo!()
}
