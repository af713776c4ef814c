//! Reading what a custom resource refers to in the user's own objects: one key of a
//! ConfigMap (external logging, metrics rules and the like).

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client};

use crate::api_error::ApiCallError;
use crate::apply::ApplyError;

/// Why a referenced value could not be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// The object does not exist.
    Object,
    /// The object exists without the key.
    Key,
}

/// The value of `key` in ConfigMap `name` of `namespace`, or what is missing.
pub async fn config_map_value(
    client: &Client,
    namespace: &str,
    name: &str,
    key: &str,
) -> Result<Result<String, Missing>, ApplyError> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let config_map = api
        .get_opt(name)
        .await
        .map_err(|source| ApiCallError::of::<ConfigMap>("get", namespace, name, source))?;
    Ok(match config_map {
        None => Err(Missing::Object),
        Some(config_map) => config_map
            .data
            .and_then(|mut data| data.remove(key))
            .ok_or(Missing::Key),
    })
}
