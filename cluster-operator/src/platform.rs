//! What the operator asks the API server about the platform when it starts: the I/O half of
//! [`PlatformFeatures`], which the model then reads from [`crate::model::ModelConfig`].

use std::time::Duration;

use crate::model::PlatformFeatures;

/// How long [`discover`] keeps trying while the API server cannot be asked.
pub const DISCOVERY_PATIENCE: Duration = Duration::from_secs(120);

/// The features of the cluster `client` talks to, from the API groups it serves. The binary
/// asks once, at start, as Strimzi does; while the API server cannot be asked (starting, or
/// briefly away), it asks again after 1, 2, 4, ... seconds, for up to
/// [`DISCOVERY_PATIENCE`], and then returns the last error.
pub async fn discover(client: &kube::Client) -> Result<PlatformFeatures, kube::Error> {
    let started = tokio::time::Instant::now();
    let mut delay = Duration::from_secs(1);
    loop {
        match client.list_api_groups().await {
            Ok(groups) => return Ok(PlatformFeatures::from_api_groups(&groups)),
            Err(error) if started.elapsed() + delay <= DISCOVERY_PATIENCE => {
                tracing::warn!(%error, retry_in = ?delay, "API discovery failed");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(16));
            }
            Err(error) => return Err(error),
        }
    }
}
