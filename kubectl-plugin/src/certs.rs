//! `certs`: when the CA and node certificates of a Kafka cluster expire, who signed them, and
//! `--renew`. Only the certificates (`.crt` entries) of the Secrets are read: key material is
//! never printed nor kept.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use serde::Serialize;
use strimzi_api::annotations;
use strimzi_api::kafka::Kafka;
use strimzi_api::naming;
use strimzi_certificate_manager::authority::CaKind;
use strimzi_certificate_manager::certificate::ParsedCertificate;
use time::OffsetDateTime;

use crate::connection::{Cluster, kafka_nodes_selector};
use crate::error::PluginError;
use crate::options::{CaChoice, Output};
use crate::text::{columns, json, rfc3339};

/// The data key of a CA Secret's current certificate.
const CA_CERTIFICATE_KEY: &str = "ca.crt";
/// The data key of the cluster operator's certificate in `<kafka>-cluster-operator-certs`.
const OPERATOR_CERTIFICATE_KEY: &str = "cluster-operator.crt";

/// One certificate of a cluster, as `certs` and `status` show it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateRow {
    /// What it is: `cluster CA`, `clients CA`, `node`, `cluster operator`.
    pub role: String,
    /// The Secret holding it.
    pub secret: String,
    /// Its data key in the Secret (`ca.crt`, `ca-<date>.crt` for a CA certificate kept after
    /// its renewal, `<pod>.crt`).
    pub key: String,
    /// For a CA certificate, whether it is the CA's current one (`ca.crt`), not an old one
    /// kept for trust.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<bool>,
    /// The subject's common name.
    pub subject: String,
    /// The issuer's common name.
    pub issuer: String,
    /// Which of the cluster's CA certificates signed it (`cluster CA ca.crt`), if one did.
    pub signed_by: Option<String>,
    /// The end of its validity, RFC 3339 in UTC.
    pub not_after: String,
    /// Whole days until then (negative once expired).
    pub days_left: i64,
}

/// The CA kind of a `--renew` choice.
fn kind_of(choice: CaChoice) -> CaKind {
    match choice {
        CaChoice::ClusterCa => CaKind::Cluster,
        CaChoice::ClientsCa => CaKind::Clients,
    }
}

/// The `CN` of a distinguished name (else the whole name).
fn common_name(name: &str) -> String {
    name.split(',')
        .map(str::trim)
        .find_map(|part| part.strip_prefix("CN="))
        .unwrap_or(name)
        .to_owned()
}

/// A certificate read from the `.crt` entry `key` of `secret`.
struct Found {
    secret: String,
    key: String,
    certificate: ParsedCertificate,
}

/// The certificate under `key` in `secret`, if there is one that parses.
fn certificate_in(secret: &Secret, key: &str) -> Option<Found> {
    let pem = secret.data.as_ref()?.get(key)?;
    let certificate = ParsedCertificate::from_pem(&pem.0).ok()?;
    Some(Found {
        secret: secret.name_any(),
        key: key.to_owned(),
        certificate,
    })
}

/// Whether `key` holds a CA certificate: the current one or one kept after a renewal
/// (`ca-<expiry>.crt`, see `authority::old_certificate_key`).
fn is_ca_certificate_key(key: &str) -> bool {
    key == CA_CERTIFICATE_KEY || (key.starts_with("ca-") && key.ends_with(".crt"))
}

/// The CA certificates (current first) of `kind` for Kafka `kafka`; none when its Secret does
/// not exist yet.
async fn ca_certificates_of(
    cluster: &Cluster,
    kafka: &str,
    kind: CaKind,
) -> Result<Vec<Found>, PluginError> {
    let Some(secret) = cluster
        .get_opt::<Secret>(&kind.cert_secret_name(kafka))
        .await?
    else {
        return Ok(Vec::new());
    };
    let mut keys: Vec<&String> = secret
        .data
        .iter()
        .flat_map(BTreeMap::keys)
        .filter(|key| is_ca_certificate_key(key))
        .collect();
    keys.sort_by_key(|key| (key.as_str() != CA_CERTIFICATE_KEY, key.as_str()));
    Ok(keys
        .into_iter()
        .filter_map(|key| certificate_in(&secret, key))
        .collect())
}

/// The row of `found`, its signer looked up among `authorities`.
fn row(
    role: String,
    found: &Found,
    authorities: &[(CaKind, Found)],
    now: OffsetDateTime,
) -> CertificateRow {
    let signed_by = authorities
        .iter()
        .find(|(_, authority)| found.certificate.is_signed_by(&authority.certificate))
        .map(|(kind, authority)| format!("{kind} {}", authority.key));
    let not_after = found.certificate.not_after();
    CertificateRow {
        role,
        secret: found.secret.clone(),
        key: found.key.clone(),
        current: is_ca_certificate_key(&found.key).then_some(found.key == CA_CERTIFICATE_KEY),
        subject: common_name(found.certificate.subject()),
        issuer: common_name(found.certificate.issuer()),
        signed_by,
        not_after: rfc3339(not_after),
        days_left: (not_after - now).whole_days(),
    }
}

/// Every CA certificate of both CAs of Kafka `kafka`, with its CA.
async fn authorities(cluster: &Cluster, kafka: &str) -> Result<Vec<(CaKind, Found)>, PluginError> {
    let mut all = Vec::new();
    for kind in [CaKind::Cluster, CaKind::Clients] {
        all.extend(
            ca_certificates_of(cluster, kafka, kind)
                .await?
                .into_iter()
                .map(|found| (kind, found)),
        );
    }
    Ok(all)
}

/// The CA certificates of Kafka `kafka`: the cluster CA's, then the clients CA's, each current
/// one first.
pub async fn ca_rows(cluster: &Cluster, kafka: &str) -> Result<Vec<CertificateRow>, PluginError> {
    let authorities = authorities(cluster, kafka).await?;
    Ok(authority_rows(&authorities, OffsetDateTime::now_utc()))
}

/// The rows of `authorities`.
fn authority_rows(authorities: &[(CaKind, Found)], now: OffsetDateTime) -> Vec<CertificateRow> {
    authorities
        .iter()
        .map(|(kind, found)| row(kind.to_string(), found, authorities, now))
        .collect()
}

/// Every certificate of Kafka `kafka`: the CAs', each node's (the Secrets named after the
/// pods, `<pod>.crt`) and the cluster operator's.
async fn all_rows(cluster: &Cluster, kafka: &str) -> Result<Vec<CertificateRow>, PluginError> {
    let now = OffsetDateTime::now_utc();
    let authorities = authorities(cluster, kafka).await?;
    let mut rows = authority_rows(&authorities, now);
    let node_secrets: Vec<Secret> = cluster.list(&kafka_nodes_selector(kafka)).await?;
    for secret in &node_secrets {
        if let Some(found) = certificate_in(secret, &format!("{}.crt", secret.name_any())) {
            rows.push(row("node".to_owned(), &found, &authorities, now));
        }
    }
    let operator_secret = naming::cluster_operator_certs_secret(kafka);
    if let Some(secret) = cluster.get_opt::<Secret>(&operator_secret).await?
        && let Some(found) = certificate_in(&secret, OPERATOR_CERTIFICATE_KEY)
    {
        rows.push(row(
            "cluster operator".to_owned(),
            &found,
            &authorities,
            now,
        ));
    }
    Ok(rows)
}

/// Sets `strimzi.io/force-renew` on the certificate Secret of `choice`; what to print.
async fn renew(cluster: &Cluster, kafka: &Kafka, choice: CaChoice) -> Result<String, PluginError> {
    let kind = kind_of(choice);
    let name = kafka.name_any();
    let secret = kind.cert_secret_name(&name);
    let authority = match kind {
        CaKind::Cluster => kafka.spec.cluster_ca.as_ref(),
        CaKind::Clients => kafka.spec.clients_ca.as_ref(),
    };
    if authority.and_then(|ca| ca.generate_certificate_authority) == Some(false) {
        return Err(PluginError::Input(format!(
            "the {kind} of Kafka {name} is your own (generateCertificateAuthority: false): the \
             operator does not renew it; replace the certificate in Secret {secret} yourself"
        )));
    }
    let change = BTreeMap::from([(annotations::FORCE_RENEW.to_owned(), Some("true".to_owned()))]);
    cluster.annotate::<Secret>(&secret, &change).await?;
    let windows = kafka
        .spec
        .maintenance_time_windows
        .as_ref()
        .filter(|windows| !windows.is_empty());
    let when = match windows {
        Some(windows) => format!(
            "in the next of its maintenance time windows (spec.maintenanceTimeWindows: {})",
            windows.join("; ")
        ),
        None => "at its next reconciliation".to_owned(),
    };
    Ok(format!(
        "secret/{secret} annotated {}=true: the operator renews the {kind} certificate {when}, then the Kafka nodes load it, by a reload or a restart (`kubectl strimzi plan` says which)\n\n",
        annotations::FORCE_RENEW
    ))
}

/// The table of `rows`.
fn table(rows: &[CertificateRow]) -> String {
    let mut lines = vec![[
        "ROLE".to_owned(),
        "SECRET".to_owned(),
        "KEY".to_owned(),
        "SUBJECT".to_owned(),
        "SIGNED BY".to_owned(),
        "NOT AFTER".to_owned(),
        "DAYS LEFT".to_owned(),
    ]];
    for row in rows {
        lines.push([
            row.role.clone(),
            row.secret.clone(),
            row.key.clone(),
            row.subject.clone(),
            row.signed_by
                .clone()
                .unwrap_or_else(|| format!("{} (not a CA of this cluster)", row.issuer)),
            row.not_after.clone(),
            row.days_left.to_string(),
        ]);
    }
    columns(&lines)
}

/// The certificate expiry table of Kafka `kafka`; with `renew`, first sets
/// `strimzi.io/force-renew` on that CA's certificate Secret.
pub async fn certs(
    cluster: &Cluster,
    kafka: &str,
    renew: Option<CaChoice>,
    output: Output,
) -> Result<String, PluginError> {
    let resource: Kafka = cluster.get(kafka).await?;
    let renewed = match renew {
        Some(choice) => Some(self::renew(cluster, &resource, choice).await?),
        None => None,
    };
    let rows = all_rows(cluster, kafka).await?;
    match output {
        Output::Json => Ok(json(&serde_json::json!({
            "kafka": kafka,
            "namespace": cluster.namespace,
            "renewRequested": renew.map(|choice| kind_of(choice).common_name()),
            "certificates": rows,
        }))),
        Output::Text if rows.is_empty() => Ok(format!(
            "{}Kafka {kafka} has no certificates yet: the operator has not reconciled it\n",
            renewed.unwrap_or_default()
        )),
        Output::Text => Ok(format!("{}{}", renewed.unwrap_or_default(), table(&rows))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ca_certificate_keys_are_the_current_and_the_kept_ones() {
        assert!(is_ca_certificate_key("ca.crt"));
        assert!(is_ca_certificate_key("ca-2027-12-01T04-05-06Z.crt"));
        assert!(!is_ca_certificate_key("ca.key"));
        assert!(!is_ca_certificate_key("ca.p12"));
        assert!(!is_ca_certificate_key("my-cluster-broker-0.crt"));
    }

    #[test]
    fn common_names_are_read_from_distinguished_names() {
        assert_eq!(
            common_name("CN=cluster-ca v0, O=io.strimzi"),
            "cluster-ca v0"
        );
        assert_eq!(
            common_name("O=io.strimzi, CN=my-cluster-kafka"),
            "my-cluster-kafka"
        );
        assert_eq!(common_name("O=io.strimzi"), "O=io.strimzi");
    }
}
