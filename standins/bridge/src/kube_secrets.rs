//! Reading the Secrets `${strimzisecrets:<namespace>/<secret>:<key>}` placeholders name from
//! the Kubernetes API, as Strimzi's Kubernetes Secret config provider does: with the pod's
//! service account (in-cluster configuration; outside a pod, the kubeconfig).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::placeholders::SecretName;

/// The decoded data of each Secret of `names`; an error names the Secret.
pub async fn read_secrets(
    names: &[SecretName],
) -> Result<BTreeMap<SecretName, BTreeMap<String, String>>, String> {
    let mut secrets = BTreeMap::new();
    if names.is_empty() {
        return Ok(secrets);
    }
    let config = kube::Config::infer().await.map_err(|error| {
        format!(
            "reading Secret {}/{}: no Kubernetes configuration: {error}",
            names[0].0, names[0].1
        )
    })?;
    let client =
        kube::Client::try_from(config).map_err(|error| format!("Kubernetes client: {error}"))?;
    for (namespace, name) in names {
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        let secret = api
            .get(name)
            .await
            .map_err(|error| format!("reading Secret {namespace}/{name}: {error}"))?;
        let mut data = BTreeMap::new();
        for (key, value) in secret.data.unwrap_or_default() {
            let text = String::from_utf8(value.0)
                .map_err(|_| format!("Secret {namespace}/{name}: key {key} is not UTF-8 text"))?;
            data.insert(key, text);
        }
        secrets.insert((namespace.clone(), name.clone()), data);
    }
    Ok(secrets)
}
