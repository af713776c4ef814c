//! `certs`.
use crate::cli::{CaChoice, Output};
use crate::connection::Cluster;
use crate::error::PluginError;

/// The certificate expiry table of Kafka `kafka`; with `renew`, first sets
/// `strimzi.io/force-renew` on that CA's certificate Secret.
pub async fn certs(
    cluster: &Cluster,
    kafka: &str,
    renew: Option<CaChoice>,
    output: Output,
) -> Result<String, PluginError> {
    todo!()
}
