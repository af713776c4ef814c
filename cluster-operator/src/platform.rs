//! What the operator asks the API server about the platform when it starts: the I/O half of
//! [`PlatformFeatures`], which the model then reads from [`crate::model::ModelConfig`].

use crate::model::PlatformFeatures;

/// The features of the cluster `client` talks to, from the API groups it serves. The binary
/// asks once, at start, as Strimzi does.
pub async fn discover(client: &kube::Client) -> Result<PlatformFeatures, kube::Error> {
    Ok(PlatformFeatures::from_api_groups(
        &client.list_api_groups().await?,
    ))
}
