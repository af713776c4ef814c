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
        let data = text_values(secret.data.unwrap_or_default());
        secrets.insert((namespace.clone(), name.clone()), data);
    }
    Ok(secrets)
}

/// The values of a Secret's `data` that are text, by key. The others (a user Secret's
/// `user.p12` store, say) are left out: a placeholder naming one finds no such key, which
/// the resolution reports, while the text keys of the same Secret stay usable.
fn text_values(data: BTreeMap<String, k8s_openapi::ByteString>) -> BTreeMap<String, String> {
    data.into_iter()
        .filter_map(|(key, value)| Some((key, String::from_utf8(value.0).ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    #[test]
    fn a_binary_value_is_left_out_and_the_text_ones_are_kept() {
        let data = BTreeMap::from([
            (
                "user.crt".to_owned(),
                ByteString(b"-----BEGIN CERTIFICATE-----".to_vec()),
            ),
            (
                "user.p12".to_owned(),
                ByteString(vec![0x30, 0x82, 0xff, 0xfe]),
            ),
        ]);
        assert_eq!(
            text_values(data),
            BTreeMap::from([(
                "user.crt".to_owned(),
                "-----BEGIN CERTIFICATE-----".to_owned()
            )])
        );
    }
}
