//! How the operator reaches the Cruise Control of a Kafka: Service `<cluster>-cruise-control`
//! port 9090, as user `rebalance-operator` (password in Secret `<cluster>-cruise-control-api`,
//! key `rebalance-operator.password`), trusting the cluster CA (Secret
//! `<cluster>-cluster-ca-cert`) and checking the certificate against
//! `<cluster>-cruise-control.<namespace>.svc`; TLS and authentication unless the Kafka's
//! `spec.cruiseControl.config` turns them off (`webserver.ssl.enable`,
//! `webserver.security.enable`). The host is the Service's DNS name, or, when only IP
//! addresses may be used (`STRIMZI_KAFKA_HOST_RESOLUTION=ip-addresses-only`), the address of a
//! ready Cruise Control pod (`strimzi.io/name=<cluster>-cruise-control`).

use k8s_openapi::api::core::v1::{Pod, Secret};
use strimzi_api::kafka::CruiseControlSpec;
use strimzi_api::{labels, naming};
use strimzi_operator_common::cruise_control::Credentials;

use super::RebalanceError;

/// The REST API user of the cluster operator.
pub const API_USER: &str = "rebalance-operator";
/// The key of its password in the API Secret.
pub const API_PASSWORD_KEY: &str = "rebalance-operator.password";
/// Cruise Control's setting that turns TLS on its REST API on or off.
const SSL_ENABLE: &str = "webserver.ssl.enable";
/// Cruise Control's setting that turns authentication on its REST API on or off.
const SECURITY_ENABLE: &str = "webserver.security.enable";

/// Whether Cruise Control's REST API uses TLS and authentication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiSecurity {
    /// HTTPS with the cluster CA's certificate.
    pub tls: bool,
    /// HTTP basic authentication.
    pub authentication: bool,
}

/// What `spec.cruiseControl.config` says: both on unless set to something other than `true`
/// (case-insensitive, as a boolean or a string).
pub fn api_security(spec: &CruiseControlSpec) -> ApiSecurity {
    let enabled = |key: &str| match spec.config.as_ref().and_then(|config| config.get(key)) {
        None => true,
        Some(serde_json::Value::Bool(value)) => *value,
        Some(serde_json::Value::String(value)) => value.trim().eq_ignore_ascii_case("true"),
        Some(_) => false,
    };
    ApiSecurity {
        tls: enabled(SSL_ENABLE),
        authentication: enabled(SECURITY_ENABLE),
    }
}

/// The name Cruise Control's certificate is checked against: its Service in `namespace`.
pub fn server_name(cluster: &str, namespace: &str) -> String {
    format!("{}.{namespace}.svc", naming::cruise_control(cluster))
}

/// The label selector of the Cruise Control pods of `cluster`.
pub fn pod_selector(cluster: &str) -> String {
    format!("{}={}", labels::NAME, naming::cruise_control(cluster))
}

/// The IP address of a ready pod among `pods` (the first by name), if any.
pub fn ready_pod_address(pods: &[Pod]) -> Option<String> {
    let mut ready: Vec<&Pod> = pods
        .iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none() && crate::pod_set::is_ready(pod))
        .collect();
    ready.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    ready
        .into_iter()
        .find_map(|pod| pod.status.as_ref()?.pod_ip.clone())
}

/// Every CA certificate of the cluster CA certificate Secret (`ca.crt` first, then the
/// certificates of older CA keys still trusted), PEM.
pub fn cluster_ca_bundle(secret: &Secret) -> Result<String, RebalanceError> {
    let data = secret.data.clone().unwrap_or_default();
    let current = data.get("ca.crt").ok_or_else(|| {
        RebalanceError::CruiseControlUnavailable(format!(
            "Secret {} has no ca.crt",
            secret.metadata.name.as_deref().unwrap_or_default()
        ))
    })?;
    let mut bundle = String::from_utf8_lossy(&current.0).into_owned();
    for (key, value) in &data {
        if key != "ca.crt" && key.ends_with(".crt") {
            bundle.push('\n');
            bundle.push_str(&String::from_utf8_lossy(&value.0));
        }
    }
    Ok(bundle)
}

/// The operator's credentials from the Cruise Control API Secret.
pub fn credentials(secret: &Secret) -> Result<Credentials, RebalanceError> {
    let password = secret
        .data
        .as_ref()
        .and_then(|data| data.get(API_PASSWORD_KEY))
        .map(|password| String::from_utf8_lossy(&password.0).trim().to_owned())
        .filter(|password| !password.is_empty())
        .ok_or_else(|| {
            RebalanceError::CruiseControlUnavailable(format!(
                "Secret {} has no {API_PASSWORD_KEY}",
                secret.metadata.name.as_deref().unwrap_or_default()
            ))
        })?;
    Ok(Credentials {
        user: API_USER.to_owned(),
        password,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use k8s_openapi::ByteString;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn spec(config: serde_json::Value) -> CruiseControlSpec {
        serde_json::from_value(json!({ "config": config })).unwrap()
    }

    #[test]
    fn tls_and_authentication_are_on_unless_turned_off() {
        assert_eq!(
            api_security(&CruiseControlSpec::default()),
            ApiSecurity {
                tls: true,
                authentication: true
            }
        );
        let off = api_security(&spec(
            json!({"webserver.ssl.enable": false, "webserver.security.enable": "FALSE"}),
        ));
        assert_eq!(
            off,
            ApiSecurity {
                tls: false,
                authentication: false
            }
        );
        let on = api_security(&spec(json!({"webserver.ssl.enable": "True"})));
        assert!(on.tls && on.authentication);
    }

    fn pod(name: &str, ready: bool, ip: Option<&str>) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "status": {
                "podIP": ip,
                "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
            },
        }))
        .unwrap()
    }

    #[test]
    fn only_a_ready_pod_with_an_address_is_used() {
        assert_eq!(ready_pod_address(&[]), None);
        let pods = [
            pod("c-cruise-control-b", true, Some("10.0.0.2")),
            pod("c-cruise-control-c", false, Some("10.0.0.3")),
            pod("c-cruise-control-a", true, None),
        ];
        assert_eq!(ready_pod_address(&pods).as_deref(), Some("10.0.0.2"));
        assert_eq!(ready_pod_address(&pods[1..]), None);
        assert_eq!(pod_selector("c"), "strimzi.io/name=c-cruise-control");
        assert_eq!(server_name("c", "ns"), "c-cruise-control.ns.svc");
    }

    fn secret(data: &[(&str, &str)]) -> Secret {
        Secret {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("s".to_owned()),
                ..Default::default()
            },
            data: Some(
                data.iter()
                    .map(|(key, value)| ((*key).to_owned(), ByteString(value.as_bytes().to_vec())))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..Secret::default()
        }
    }

    #[test]
    fn the_ca_bundle_and_the_password_come_from_their_secrets() {
        let bundle = cluster_ca_bundle(&secret(&[
            ("ca-2026-01-01T00-00-00Z.crt", "OLD"),
            ("ca.crt", "CURRENT"),
            ("ca.p12", "binary"),
        ]))
        .unwrap();
        assert_eq!(bundle, "CURRENT\nOLD");
        assert_eq!(
            cluster_ca_bundle(&secret(&[("ca.p12", "x")]))
                .unwrap_err()
                .to_string(),
            "Cruise Control cannot be reached yet: Secret s has no ca.crt"
        );
        let credentials = credentials(&secret(&[(API_PASSWORD_KEY, "pw\n")])).unwrap();
        assert_eq!(
            (credentials.user.as_str(), credentials.password.as_str()),
            (API_USER, "pw")
        );
        assert!(super::credentials(&secret(&[])).is_err());
    }
}
