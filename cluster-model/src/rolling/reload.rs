//! Certificate changes a running node can take without a restart.
//!
//! Every key store and trust store a node uses is a `${strimzisecrets:...}` reference in its
//! `server.config`, which Kafka resolves again whenever the options of a listener are altered
//! (KIP-226): a per-node IncrementalAlterConfigs that sets a listener's key store and trust
//! store options to the values they already have makes the node read its Secrets again and
//! rebuild the listener's TLS context. Kafka 4.3.1 was seen to do so for a renewal with the
//! same key, for added subject alternative names and for a certificate of another CA; it
//! refuses removed subject alternative names (the call fails, the old certificate stays), and
//! it does not check that the new certificate is trusted, so the operator verifies what the
//! node serves afterwards.
//!
//! A pod may reload instead of restarting when what changed is only what its certificate
//! annotations describe ([`only_certificates_changed`]); once it has reloaded, those
//! annotations and its `strimzi.io/revision` become the ones of the pod its StrimziPodSet
//! describes ([`annotations_after_reload`]), so that the pod runs as desired for this operator
//! and for Strimzi's alike.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, Secret};
use strimzi_api::annotations;
use strimzi_certificate_manager::certificate::ParsedCertificate;

use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use super::{NodeToRoll, RestartReason};
use crate::model::nodes::pods::{pod_revision, resource_revision};
use crate::model::security::certificates::CLIENTS_CA_TRUST_KEY;

/// The pod annotations that change only with the certificates a node serves or trusts: the
/// cluster and clients CA certificate generations, the node's server certificate hash and the
/// thumbprints of user-provided listener certificates. The cluster CA key generation is not
/// one of them: nodes trust a new CA key before they present certificates it signed, which
/// takes steps of its own.
pub const CERTIFICATE_ANNOTATIONS: [&str; 4] = [
    annotations::CLUSTER_CA_CERT_GENERATION,
    annotations::CLIENTS_CA_CERT_GENERATION,
    annotations::SERVER_CERT_HASH,
    annotations::CUSTOM_LISTENER_CERT_THUMBPRINTS,
];

/// Whether the running pod (its annotations, `running`) differs from `desired`, the pod its
/// StrimziPodSet describes, in certificate annotations ([`CERTIFICATE_ANNOTATIONS`]) and
/// nothing else: given the running pod's certificate annotations, the desired pod hashes to
/// the running pod's `strimzi.io/revision`, and the containers' resources are the same. False
/// when no certificate annotation differs.
pub fn only_certificates_changed(running: &BTreeMap<String, String>, desired: &Pod) -> bool {
    let certificates_differ = CERTIFICATE_ANNOTATIONS
        .iter()
        .any(|key| annotation_changed(running, desired, key));
    if !certificates_differ {
        return false;
    }
    let mut as_running = desired.clone();
    let annotations = as_running.metadata.annotations.get_or_insert_default();
    for key in CERTIFICATE_ANNOTATIONS {
        match running.get(key) {
            Some(value) => annotations.insert(key.to_owned(), value.clone()),
            None => annotations.remove(key),
        };
    }
    running.get(annotations::REVISION) == Some(&pod_revision(&as_running))
        && running.get(annotations::RESOURCE_REVISION) == Some(&resource_revision(desired))
}

/// Whether `reason` is one a reload of the node's certificates can satisfy.
pub fn reloadable_reason(reason: &RestartReason) -> bool {
    matches!(
        reason,
        RestartReason::ClusterCaCertChanged
            | RestartReason::ClientsCaCertChanged
            | RestartReason::KafkaCertificatesChanged
            | RestartReason::CustomListenerCertificateChanged
    )
}

/// What the rolling step tries for a node it would restart, before asking the node anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReloadOutlook {
    /// A reload: every reason is a certificate one and only certificate annotations differ.
    /// The node still restarts when the reload fails or cannot be verified.
    Reload,
    /// A restart, which no reload can stand in for (other reasons, or another difference of
    /// the pod).
    Restart,
    /// A restart, though only certificates changed, because the cluster CA key is being
    /// replaced ([`reload_allowed`]): [`NEW_KEY_NEEDS_RESTART`] says why.
    RestartWhileKeyReplaced,
}

/// Why a node whose certificates alone changed restarts, not reloads, while the cluster CA
/// key is replaced (said at the end of its restart Event).
pub const NEW_KEY_NEEDS_RESTART: &str = "a restart, not a reload, while the cluster CA key is replaced: a node's KRaft quorum client keeps the trust and the certificate it started with";

/// Whether `node`, which must restart, may reload its certificates instead, given its running
/// pod's annotations (`running`), the pod its StrimziPodSet describes (`desired`) and how
/// many certificates the cluster CA trusts. The rolling step (unless
/// `STRIMZI_RELOAD_CERTIFICATES` is `false`) and `kubectl strimzi plan` both decide with this.
pub fn reload_outlook(
    node: &NodeToRoll,
    running: &BTreeMap<String, String>,
    desired: &Pod,
    trusted_cluster_ca_certificates: usize,
) -> ReloadOutlook {
    if !node.reasons.iter().all(reloadable_reason) || !only_certificates_changed(running, desired) {
        ReloadOutlook::Restart
    } else if !reload_allowed(trusted_cluster_ca_certificates) {
        ReloadOutlook::RestartWhileKeyReplaced
    } else {
        ReloadOutlook::Reload
    }
}

/// The pod annotation (ours) with the expiry date (RFC 3339) of the certificate a node
/// started with, set when it first reloads its certificates. Its KRaft quorum client keeps
/// presenting that certificate after reloads (KAFKA-20025, Kafka 4.2 and 4.3), so the node
/// restarts before that date ([`startup_certificate_expiring`]). A pod made again starts
/// without it.
pub const STARTUP_CERTIFICATE_NOT_AFTER: &str = "strimzi-rs/startup-certificate-not-after";

/// The value of [`STARTUP_CERTIFICATE_NOT_AFTER`] for a certificate that expires at
/// `not_after`.
pub fn startup_certificate_not_after(not_after: OffsetDateTime) -> String {
    not_after
        .format(&Rfc3339)
        .unwrap_or_else(|_| not_after.unix_timestamp().to_string())
}

/// Why the running pod (its annotations, `running`) must restart though it may have reloaded
/// its certificates: the certificate its KRaft quorum client started with
/// ([`STARTUP_CERTIFICATE_NOT_AFTER`]) expires within half the CA's `renewal_days` and a
/// maintenance time window is open (`window_open`), or within a day in any case; or its date
/// cannot be read. `None` for a pod that has not reloaded since it started.
pub fn startup_certificate_expiring(
    running: &BTreeMap<String, String>,
    now: OffsetDateTime,
    renewal_days: u32,
    window_open: bool,
) -> Option<RestartReason> {
    let value = running.get(STARTUP_CERTIFICATE_NOT_AFTER)?;
    let Ok(not_after) = OffsetDateTime::parse(value, &Rfc3339) else {
        return Some(RestartReason::StartupCertificateExpiring(format!(
            "an unreadable date ({value:?})"
        )));
    };
    let half_renewal = Duration::hours(i64::from(renewal_days) * 12);
    let due = (window_open && now >= not_after - half_renewal) || now >= not_after - Duration::DAY;
    due.then(|| RestartReason::StartupCertificateExpiring(value.clone()))
}

/// The annotations to set on a pod that has reloaded its certificates, from `desired`, the pod
/// its StrimziPodSet describes: each certificate annotation as desired (`None`: removed) and
/// the desired `strimzi.io/revision`.
pub fn annotations_after_reload(desired: &Pod) -> BTreeMap<String, Option<String>> {
    CERTIFICATE_ANNOTATIONS
        .iter()
        .chain(&[annotations::REVISION])
        .map(|key| ((*key).to_owned(), desired_annotation(desired, key).cloned()))
        .collect()
}

/// The options of a node's `server.config` that make it load its certificates again when set
/// to the same values: the key store certificate chain and key and the trust store
/// certificates (`listener.name.<listener>.ssl.…`) of every listener the node listens on (its
/// `listeners`; a broker's client settings for the controllers' listener are left out: the
/// quorum client does not reload them), in the order of the file.
pub fn reload_options(server_config: &str) -> Vec<(String, String)> {
    const SUFFIXES: [&str; 3] = [
        ".ssl.keystore.certificate.chain",
        ".ssl.keystore.key",
        ".ssl.truststore.certificates",
    ];
    let options: Vec<(&str, &str)> = server_config
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .collect();
    let listened: Vec<String> = options
        .iter()
        .filter(|(key, _)| *key == "listeners")
        .flat_map(|(_, value)| value.split(','))
        .filter_map(|listener| listener.split_once("://"))
        .map(|(name, _)| name.trim().to_lowercase())
        .collect();
    options
        .into_iter()
        .filter(|(key, _)| {
            let Some(rest) = key.strip_prefix("listener.name.") else {
                return false;
            };
            let listener = rest.split('.').next().unwrap_or_default();
            listened.iter().any(|name| name == listener)
                && SUFFIXES.iter().any(|suffix| key.ends_with(suffix))
        })
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

/// Whether a reload would show: some listener of `expected` (see [`expected_certificates`]) is
/// to serve another certificate than the one it served before the call (`served_before`, in
/// the same order). When none is, only trust stores change, and that no handshake of the
/// operator can confirm, so the node restarts instead.
pub fn reload_visible(served_before: &[Vec<u8>], expected: &[ReloadedListener]) -> bool {
    served_before
        .iter()
        .zip(expected)
        .any(|(served, listener)| *served != listener.certificate)
}

/// A listener whose trust store a reload must be seen to have loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustingListener {
    /// The listener's name in `server.config` (`tls-9093`, ...).
    pub name: String,
    /// Its port, the end of its name.
    pub port: u16,
}

/// The listeners of `options` (see [`reload_options`]) whose trust store holds the clients CA
/// certificates (the trust bundle's [`CLIENTS_CA_TRUST_KEY`]): those with `tls`
/// authentication, where users present certificates the clients CA signed.
pub fn clients_ca_listeners(options: &[(String, String)]) -> Result<Vec<TrustingListener>, String> {
    let reference_end = format!(":{CLIENTS_CA_TRUST_KEY}}}");
    options
        .iter()
        .filter(|(_, value)| value.ends_with(&reference_end))
        .filter_map(|(key, _)| {
            key.strip_prefix("listener.name.")?
                .strip_suffix(".ssl.truststore.certificates")
        })
        .map(|listener| {
            Ok(TrustingListener {
                name: listener.to_owned(),
                port: listener_port(listener)?,
            })
        })
        .collect()
}

/// Why a node restarts rather than reloads when a reload would change no certificate it
/// serves and its trust of the cluster CA changes: no handshake of the operator can show that
/// a node trusts a cluster CA certificate with the key it already trusts.
pub const CLUSTER_CA_TRUST_ONLY: &str = "only its trust of the cluster CA changes, which a handshake cannot check, so it restarts to load it";

/// Which listeners of a node must, once it has reloaded, accept a client certificate the
/// current clients CA signed, given the running pod's annotations (`running`), its desired
/// pod, its reload `options` and whether the reload changes a certificate it serves
/// (`visible`, see [`reload_visible`]): those trusting the clients CA
/// ([`clients_ca_listeners`]) when the clients CA certificate generation changes, else none.
/// That check is what shows a reload of trust stores alone; a node that uses no clients CA
/// has nothing to show. An error says why the node restarts instead: nothing it serves and
/// nothing a client certificate can show would change ([`CLUSTER_CA_TRUST_ONLY`]).
pub fn trust_checks(
    running: &BTreeMap<String, String>,
    desired: &Pod,
    options: &[(String, String)],
    visible: bool,
) -> Result<Vec<TrustingListener>, String> {
    let changed = |key| annotation_changed(running, desired, key);
    let clients_ca_changed = changed(annotations::CLIENTS_CA_CERT_GENERATION);
    if !visible && (!clients_ca_changed || changed(annotations::CLUSTER_CA_CERT_GENERATION)) {
        return Err(CLUSTER_CA_TRUST_ONLY.to_owned());
    }
    if clients_ca_changed {
        clients_ca_listeners(options)
    } else {
        Ok(Vec::new())
    }
}

/// The value of annotation `key` of the `desired` pod.
fn desired_annotation<'a>(desired: &'a Pod, key: &str) -> Option<&'a String> {
    desired.metadata.annotations.as_ref()?.get(key)
}

/// Whether annotation `key` of the running pod (its annotations, `running`) differs from the
/// `desired` pod's.
fn annotation_changed(running: &BTreeMap<String, String>, desired: &Pod, key: &str) -> bool {
    running.get(key) != desired_annotation(desired, key)
}

/// The port at the end of `listener`'s name (`tls-9093`).
fn listener_port(listener: &str) -> Result<u16, String> {
    listener
        .rsplit_once('-')
        .and_then(|(_, port)| port.parse().ok())
        .ok_or_else(|| format!("listener {listener} has no port in its name"))
}

/// Whether a reload may stand in for a restart while the cluster CA trusts
/// `trusted_cluster_ca_certificates`: only while it trusts one. It keeps the certificates of an
/// older key only while that key is replaced (or a user-managed CA carries several): then a
/// node's certificate and trust change key, and a node's KRaft quorum client keeps the trust
/// store and the certificate it started with (KAFKA-20025, Kafka 4.2 and 4.3), so each node
/// restarts, as in Strimzi: a reload would leave quorum clients that trust only the old key,
/// or that present a certificate of the old key once it is no longer trusted.
pub fn reload_allowed(trusted_cluster_ca_certificates: usize) -> bool {
    trusted_cluster_ca_certificates <= 1
}

/// A listener that a reload rebuilds, and the certificate it must serve afterwards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReloadedListener {
    /// The listener's name in `server.config` (`replication-9091`, `tls-9093`, ...).
    pub name: String,
    /// Its port, the end of its name.
    pub port: u16,
    /// The DER of the certificate its key store chain starts with.
    pub certificate: Vec<u8>,
}

/// The listeners of `options` (see [`reload_options`]) that have a key store, each with the
/// certificate its chain option refers to (`${strimzisecrets:<namespace>/<secret>:<key>}`),
/// read from `secrets`, the Secrets the node is meant to read: what each must serve once
/// reloaded. An error names a reference `secrets` cannot resolve.
pub fn expected_certificates(
    options: &[(String, String)],
    secrets: &[&Secret],
) -> Result<Vec<ReloadedListener>, String> {
    options
        .iter()
        .filter_map(|(key, value)| {
            let listener = key
                .strip_prefix("listener.name.")?
                .strip_suffix(".ssl.keystore.certificate.chain")?;
            Some((listener, value))
        })
        .map(|(listener, reference)| {
            let port = listener_port(listener)?;
            let pem = secret_value(reference, secrets)?;
            let certificate = ParsedCertificate::from_pem(pem)
                .map_err(|error| format!("{reference}: {error}"))?
                .der()
                .to_vec();
            Ok(ReloadedListener {
                name: listener.to_owned(),
                port,
                certificate,
            })
        })
        .collect()
}

/// The bytes that `reference` (`${strimzisecrets:<namespace>/<secret>:<key>}`) names in
/// `secrets`.
fn secret_value<'a>(reference: &str, secrets: &[&'a Secret]) -> Result<&'a [u8], String> {
    let unresolved = || format!("{reference} names no key of the node's Secrets");
    let (namespace_and_name, key) = reference
        .strip_prefix("${strimzisecrets:")
        .and_then(|rest| rest.strip_suffix('}'))
        .and_then(|rest| rest.split_once(':'))
        .ok_or_else(unresolved)?;
    let (namespace, name) = namespace_and_name.split_once('/').ok_or_else(unresolved)?;
    secrets
        .iter()
        .find(|secret| {
            secret.metadata.name.as_deref() == Some(name)
                && secret.metadata.namespace.as_deref() == Some(namespace)
        })
        .and_then(|secret| secret.data.as_ref()?.get(key))
        .map(|value| value.0.as_slice())
        .ok_or_else(unresolved)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::model::nodes::pods::with_revisions;

    /// A pod with `annotations` and its revisions.
    fn pod(annotations: &[(&str, &str)], image: &str) -> Pod {
        let mut pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "my-cluster-brokers-0"},
            "spec": {"containers": [{"name": "kafka", "image": image}]},
        }))
        .unwrap();
        pod.metadata.annotations = Some(
            annotations
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect(),
        );
        with_revisions(pod)
    }

    fn running(pod: &Pod) -> BTreeMap<String, String> {
        pod.metadata.annotations.clone().unwrap()
    }

    #[test]
    fn new_certificates_alone_reload() {
        let before = pod(
            &[
                (annotations::CLUSTER_CA_CERT_GENERATION, "0"),
                (annotations::SERVER_CERT_HASH, "aaaa"),
            ],
            "kafka:4.3.1",
        );
        let renewed = pod(
            &[
                (annotations::CLUSTER_CA_CERT_GENERATION, "1"),
                (annotations::SERVER_CERT_HASH, "bbbb"),
            ],
            "kafka:4.3.1",
        );
        assert!(only_certificates_changed(&running(&before), &renewed));
        // A certificate annotation the running pod lacks counts as changed.
        let thumbprints = pod(
            &[
                (annotations::CLUSTER_CA_CERT_GENERATION, "0"),
                (annotations::SERVER_CERT_HASH, "aaaa"),
                (annotations::CUSTOM_LISTENER_CERT_THUMBPRINTS, "cccc"),
            ],
            "kafka:4.3.1",
        );
        assert!(only_certificates_changed(&running(&before), &thumbprints));
    }

    #[test]
    fn anything_else_changed_with_them_restarts() {
        let before = pod(&[(annotations::SERVER_CERT_HASH, "aaaa")], "kafka:4.3.1");
        let image = pod(&[(annotations::SERVER_CERT_HASH, "bbbb")], "kafka:4.3.2");
        assert!(!only_certificates_changed(&running(&before), &image));
        let key = pod(
            &[
                (annotations::SERVER_CERT_HASH, "bbbb"),
                (annotations::CLUSTER_CA_KEY_GENERATION, "1"),
            ],
            "kafka:4.3.1",
        );
        assert!(!only_certificates_changed(&running(&before), &key));
    }

    #[test]
    fn a_reload_must_change_what_some_listener_serves() {
        let listener = |port: u16, certificate: &[u8]| ReloadedListener {
            name: format!("tls-{port}"),
            port,
            certificate: certificate.to_vec(),
        };
        let expected = [listener(9091, b"new"), listener(9093, b"custom")];
        assert!(reload_visible(
            &[b"old".to_vec(), b"custom".to_vec()],
            &expected
        ));
        assert!(
            !reload_visible(&[b"new".to_vec(), b"custom".to_vec()], &expected),
            "trust stores alone"
        );
    }

    #[test]
    fn no_reload_while_the_cluster_ca_trusts_an_older_key() {
        assert!(reload_allowed(1));
        assert!(!reload_allowed(2), "a key replacement under way");
    }

    #[test]
    fn a_reloaded_node_restarts_before_its_startup_certificate_expires() {
        let not_after = OffsetDateTime::from_unix_timestamp(1_900_000_000).unwrap();
        let running = BTreeMap::from([(
            STARTUP_CERTIFICATE_NOT_AFTER.to_owned(),
            startup_certificate_not_after(not_after),
        )]);
        let expiring = |now: OffsetDateTime, window_open| {
            startup_certificate_expiring(&running, now, 30, window_open)
        };
        // More than half the renewal period (15 days) left: no restart.
        assert_eq!(expiring(not_after - Duration::days(16), true), None);
        // Within it: a restart, once a maintenance window is open.
        let due = expiring(not_after - Duration::days(14), true).unwrap();
        assert_eq!(due.name(), "KafkaCertificatesChanged");
        assert!(
            due.explanation().contains("2030-03-17"),
            "{}",
            due.explanation()
        );
        assert_eq!(expiring(not_after - Duration::days(14), false), None);
        // Within a day: a restart, window or not.
        assert!(expiring(not_after - Duration::hours(23), false).is_some());
        // A pod that never reloaded, and one whose date cannot be read.
        assert_eq!(
            startup_certificate_expiring(&BTreeMap::new(), not_after, 30, true),
            None
        );
        let unreadable =
            BTreeMap::from([(STARTUP_CERTIFICATE_NOT_AFTER.to_owned(), "soon".to_owned())]);
        assert!(startup_certificate_expiring(&unreadable, not_after, 30, false).is_some());
    }

    #[test]
    fn nothing_changed_is_no_reload() {
        let current = pod(&[(annotations::SERVER_CERT_HASH, "aaaa")], "kafka:4.3.1");
        assert!(!only_certificates_changed(&running(&current), &current));
    }

    #[test]
    fn a_reloaded_pod_gets_the_desired_annotations_and_runs_as_desired() {
        let before = pod(
            &[
                (annotations::SERVER_CERT_HASH, "aaaa"),
                (annotations::CUSTOM_LISTENER_CERT_THUMBPRINTS, "old"),
            ],
            "kafka:4.3.1",
        );
        let desired = pod(&[(annotations::SERVER_CERT_HASH, "bbbb")], "kafka:4.3.1");
        let mut after = running(&before);
        for (key, value) in annotations_after_reload(&desired) {
            match value {
                Some(value) => after.insert(key, value),
                None => after.remove(&key),
            };
        }
        assert_eq!(after, running(&desired));
    }

    #[test]
    fn the_listeners_key_and_trust_stores_are_set_again() {
        let config = "\
# Listeners
listeners=CONTROLPLANE-9090://0.0.0.0:9090,TLS-9093://0.0.0.0:9093
listener.name.replication-9091.ssl.keystore.key=${strimzisecrets:ns/c-0:c-0.key}
listener.name.controlplane-9090.ssl.keystore.certificate.chain=${strimzisecrets:ns/c-0:c-0.crt}
listener.name.controlplane-9090.ssl.keystore.key=${strimzisecrets:ns/c-0:c-0.key}
listener.name.controlplane-9090.ssl.keystore.type=PEM
listener.name.tls-9093.ssl.client.auth=required
listener.name.tls-9093.ssl.truststore.certificates=${strimzisecrets:ns/c-0:clients-ca.crt}
#listener.name.x.ssl.keystore.key=commented
ssl.endpoint.identification.algorithm=HTTPS
cruise.control.metrics.reporter.ssl.keystore.key=${strimzisecrets:ns/c-0:c-0.key}
";
        assert_eq!(
            reload_options(config),
            vec![
                (
                    "listener.name.controlplane-9090.ssl.keystore.certificate.chain".to_owned(),
                    "${strimzisecrets:ns/c-0:c-0.crt}".to_owned()
                ),
                (
                    "listener.name.controlplane-9090.ssl.keystore.key".to_owned(),
                    "${strimzisecrets:ns/c-0:c-0.key}".to_owned()
                ),
                (
                    "listener.name.tls-9093.ssl.truststore.certificates".to_owned(),
                    "${strimzisecrets:ns/c-0:clients-ca.crt}".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn a_clients_ca_change_is_checked_on_the_listeners_that_trust_it() {
        let options = reload_options(
            "listeners=REPLICATION-9091://0.0.0.0:9091,TLS-9093://0.0.0.0:9093,MTLS-9094://0.0.0.0:9094\n\
             listener.name.replication-9091.ssl.truststore.certificates=${strimzisecrets:ns/c-trustbundle:cluster-ca.crt}\n\
             listener.name.tls-9093.ssl.keystore.certificate.chain=${strimzisecrets:ns/c-0:c-0.crt}\n\
             listener.name.mtls-9094.ssl.client.auth=required\n\
             listener.name.mtls-9094.ssl.truststore.certificates=${strimzisecrets:ns/c-trustbundle:clients-ca.crt}\n",
        );
        let mtls = vec![TrustingListener {
            name: "mtls-9094".to_owned(),
            port: 9094,
        }];
        assert_eq!(clients_ca_listeners(&options).unwrap(), mtls);
        // A pod running with these cluster and clients CA certificate generations.
        let trusting = |cluster: &str, clients: &str| {
            pod(
                &[
                    (annotations::CLUSTER_CA_CERT_GENERATION, cluster),
                    (annotations::CLIENTS_CA_CERT_GENERATION, clients),
                ],
                "kafka:4.3.1",
            )
        };
        let before = trusting("0", "0");
        let clients_ca = trusting("0", "1");
        // Trust stores alone: the listeners trusting the clients CA show it.
        assert_eq!(
            trust_checks(&running(&before), &clients_ca, &options, false).unwrap(),
            mtls
        );
        // A node without such a listener has nothing to load.
        let no_mtls = reload_options(
            "listeners=REPLICATION-9091://0.0.0.0:9091\n\
             listener.name.replication-9091.ssl.truststore.certificates=${strimzisecrets:ns/c-trustbundle:cluster-ca.crt}\n",
        );
        assert_eq!(
            trust_checks(&running(&before), &clients_ca, &no_mtls, false).unwrap(),
            Vec::new()
        );
        // New certificates served: they show the reload; the clients CA is checked as well
        // when it changed too.
        let renewed = trusting("1", "0");
        assert_eq!(
            trust_checks(&running(&before), &renewed, &options, true).unwrap(),
            Vec::new()
        );
        let both = trusting("1", "1");
        assert_eq!(
            trust_checks(&running(&before), &both, &options, true).unwrap(),
            mtls
        );
        // The cluster CA's trust alone, or with the clients CA's, cannot be shown: a restart.
        for desired in [&renewed, &both] {
            assert_eq!(
                trust_checks(&running(&before), desired, &options, false).unwrap_err(),
                CLUSTER_CA_TRUST_ONLY
            );
        }
    }

    #[test]
    fn each_listener_must_serve_the_certificate_its_chain_names() {
        let authority = strimzi_tests::certs::TestCa::new("node-0")
            .unwrap()
            .cert_pem();
        let secret: Secret = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c-0", "namespace": "ns"},
            "data": {"c-0.crt": k8s_openapi::ByteString(authority.as_bytes().to_vec())},
        }))
        .unwrap();
        let options = reload_options(
            "listeners=REPLICATION-9091://0.0.0.0:9091,TLS-9093://0.0.0.0:9093\n\
             listener.name.replication-9091.ssl.keystore.certificate.chain=${strimzisecrets:ns/c-0:c-0.crt}\n\
             listener.name.replication-9091.ssl.keystore.key=${strimzisecrets:ns/c-0:c-0.key}\n\
             listener.name.tls-9093.ssl.truststore.certificates=${strimzisecrets:ns/c-0:ca.crt}\n",
        );
        let expected = expected_certificates(&options, &[&secret]).unwrap();
        assert_eq!(expected.len(), 1, "only listeners with a key store");
        assert_eq!(expected[0].name, "replication-9091");
        assert_eq!(expected[0].port, 9091);
        assert_eq!(
            expected[0].certificate,
            ParsedCertificate::from_pem(authority.as_bytes())
                .unwrap()
                .der()
        );
        let elsewhere = reload_options(
            "listeners=TLS-9093://0.0.0.0:9093\n\
             listener.name.tls-9093.ssl.keystore.certificate.chain=${strimzisecrets:other/c-0:c-0.crt}\n",
        );
        let error = expected_certificates(&elsewhere, &[&secret]).unwrap_err();
        assert!(error.contains("names no key"), "{error}");
    }
}
