//! `status.clusterSecurity`: how the nodes of a Kafka cluster protect the traffic between
//! themselves and with the operator. Strimzi 1.2 reports it on every Kafka; the only setup this
//! operator runs is Strimzi's default one, TLS encryption (`strimzi-tls`) with mutual-TLS
//! authentication by certificates of the cluster CA (`strimzi-mtls`).
//!
//! A cluster whose status records another setup was made by an operator that runs its nodes
//! differently. Reconciling it here would switch its internal listeners to TLS, a change that
//! needs a planned migration, so such a Kafka is refused with a condition and left as it is.

use serde_json::json;
use strimzi_api::schema::FreeFormMap;

use crate::model::ModelError;

/// The internal encryption this operator sets up.
pub const ENCRYPTION: &str = "strimzi-tls";
/// The internal authentication this operator sets up.
pub const AUTHENTICATION: &str = "strimzi-mtls";
/// Another spelling of [`AUTHENTICATION`] that later Strimzi versions accept as the same.
const AUTHENTICATION_ALIAS: &str = "mtls";

/// The `status.clusterSecurity` this operator reports.
pub fn cluster_security_status() -> FreeFormMap {
    FreeFormMap(
        [
            ("encryption".to_owned(), json!({"type": ENCRYPTION})),
            ("authentication".to_owned(), json!({"type": AUTHENTICATION})),
        ]
        .into(),
    )
}

/// Checks that the setup recorded in a Kafka's status (if any) is the one this operator
/// runs.
pub fn check_recorded(recorded: Option<&FreeFormMap>) -> Result<(), ModelError> {
    let Some(recorded) = recorded else {
        return Ok(());
    };
    let kind = |section: &str| {
        recorded
            .get(section)
            .and_then(|value| value.get("type"))
            .and_then(|value| value.as_str())
    };
    let (Some(encryption), Some(authentication)) = (kind("encryption"), kind("authentication"))
    else {
        return Err(ModelError::InvalidConfiguration(
            "status.clusterSecurity must name both an encryption and an authentication type"
                .to_owned(),
        ));
    };
    if encryption == ENCRYPTION && [AUTHENTICATION, AUTHENTICATION_ALIAS].contains(&authentication)
    {
        return Ok(());
    }
    Err(ModelError::InvalidConfiguration(format!(
        "the cluster's nodes run with internal encryption \"{encryption}\" and authentication \
         \"{authentication}\" (status.clusterSecurity); this operator only runs nodes with \
         \"{ENCRYPTION}\" and \"{AUTHENTICATION}\" and does not change the security of a \
         running cluster, so it leaves this one untouched"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(value: serde_json::Value) -> FreeFormMap {
        serde_json::from_value(value).unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn the_reported_setup_is_strimzis_default() {
        let status = serde_json::to_value(cluster_security_status()).ok();
        assert_eq!(
            status,
            Some(json!({
                "authentication": {"type": "strimzi-mtls"},
                "encryption": {"type": "strimzi-tls"},
            }))
        );
    }

    #[test]
    fn only_strimzis_default_setup_is_taken_over() {
        assert!(check_recorded(None).is_ok());
        assert!(check_recorded(Some(&cluster_security_status())).is_ok());
        let alias = recorded(json!({
            "encryption": {"type": "strimzi-tls"},
            "authentication": {"type": "mtls"},
        }));
        assert!(check_recorded(Some(&alias)).is_ok());

        let plain = recorded(json!({
            "encryption": {"type": "none"},
            "authentication": {"type": "none"},
        }));
        let error = check_recorded(Some(&plain))
            .err()
            .map(|error| error.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|message| message.contains("encryption \"none\"")),
            "{error:?}"
        );
        let partial = recorded(json!({"encryption": {"type": "strimzi-tls"}}));
        assert!(check_recorded(Some(&partial)).is_err());
    }
}
