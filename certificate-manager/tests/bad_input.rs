//! Unreadable CA Secrets: each case is an error naming the Secret and data key, and nothing
//! to write, so a broken CA is never replaced by a new one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use k8s_openapi::api::core::v1::Secret;
use strimzi_api::annotations::CA_CERT_GENERATION;
use strimzi_certificate_manager::authority::{self, CA_CRT, CA_KEY, CaError, CaKind, CaSettings};
use support::*;

const CERT_SECRET: &str = "my-cluster-cluster-ca-cert";
const KEY_SECRET: &str = "my-cluster-cluster-ca";

/// Reconciles from broken Secrets, expects an error, and checks its reason and that the
/// message names the Secret and, where there is one, the data key.
fn refused(
    cert: Option<&Secret>,
    key: Option<&Secret>,
    reason: &str,
    secret: &str,
    data_key: Option<&str>,
) -> CaError {
    refused_with(&settings(), cert, key, reason, secret, data_key)
}

/// [`refused`] with `settings`.
fn refused_with(
    settings: &CaSettings,
    cert: Option<&Secret>,
    key: Option<&Secret>,
    reason: &str,
    secret: &str,
    data_key: Option<&str>,
) -> CaError {
    let error = authority::reconcile(CaKind::Cluster, CLUSTER, settings, cert, key, T0, true)
        .expect_err("a broken CA must not be reconciled");
    assert_eq!(error.reason(), reason, "{error}");
    let message = error.to_string();
    assert!(message.contains(secret), "`{message}` should name {secret}");
    if let Some(data_key) = data_key {
        assert!(
            message.contains(data_key),
            "`{message}` should name {data_key}"
        );
    }
    error
}

#[test]
fn a_missing_key_secret_next_to_a_certificate_is_not_regenerated() {
    let (cert, _) = written(&created(&settings()));
    let error = refused(Some(&cert), None, "MissingCaSecret", KEY_SECRET, None);
    assert!(
        error.to_string().contains("restore the key Secret"),
        "{error}"
    );
}

#[test]
fn a_secret_without_its_data_key_is_refused() {
    let (cert, key) = written(&created(&settings()));
    let mut no_crt = cert.clone();
    set_data(&mut no_crt, CA_CRT, None);
    refused(
        Some(&no_crt),
        Some(&key),
        "MissingCaSecretData",
        CERT_SECRET,
        Some(CA_CRT),
    );
    let mut no_key = key.clone();
    set_data(&mut no_key, CA_KEY, None);
    refused(
        Some(&cert),
        Some(&no_key),
        "MissingCaSecretData",
        KEY_SECRET,
        Some(CA_KEY),
    );
    let mut no_data = key;
    no_data.data = None;
    refused(
        Some(&cert),
        Some(&no_data),
        "MissingCaSecretData",
        KEY_SECRET,
        Some(CA_KEY),
    );
}

#[test]
fn an_unparsable_certificate_is_refused() {
    let (mut cert, key) = written(&created(&settings()));
    set_data(
        &mut cert,
        CA_CRT,
        Some(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
    );
    refused(
        Some(&cert),
        Some(&key),
        "InvalidCaCertificate",
        CERT_SECRET,
        Some(CA_CRT),
    );
    set_data(&mut cert, CA_CRT, Some(b"hello"));
    refused(
        Some(&cert),
        Some(&key),
        "InvalidCaCertificate",
        CERT_SECRET,
        Some(CA_CRT),
    );
}

#[test]
fn an_unparsable_key_is_refused() {
    let (cert, mut key) = written(&created(&settings()));
    set_data(
        &mut key,
        CA_KEY,
        Some(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
    );
    refused(
        Some(&cert),
        Some(&key),
        "InvalidCaKey",
        KEY_SECRET,
        Some(CA_KEY),
    );
}

#[test]
fn a_key_of_another_ca_is_refused() {
    let (cert, _) = written(&created(&settings()));
    let (_, other_key) = written(&created(&settings()));
    let error = refused(
        Some(&cert),
        Some(&other_key),
        "CaKeyMismatch",
        KEY_SECRET,
        Some(CA_KEY),
    );
    assert!(error.to_string().contains(CERT_SECRET), "{error}");
}

#[test]
fn a_mismatched_key_is_refused_unless_it_is_our_interrupted_key_replacement() {
    use strimzi_certificate_manager::authority::REPLACES_CERTIFICATE;
    let original = created(&settings());
    let (cert, _) = written(&original);
    let (_, other_key) = written(&created(&settings()));
    // A mark naming a certificate other than the one in the certificate Secret is not ours.
    let mut marked_for_another = other_key.clone();
    annotate(
        &mut marked_for_another,
        REPLACES_CERTIFICATE,
        &"0".repeat(40),
    );
    refused(
        Some(&cert),
        Some(&marked_for_another),
        "CaKeyMismatch",
        KEY_SECRET,
        Some(CA_KEY),
    );
    // Nor is any mark on a CA the user supplies: its Secrets are never written by us.
    let mut marked = other_key;
    annotate(
        &mut marked,
        REPLACES_CERTIFICATE,
        &original.authority.certificate().thumbprint(),
    );
    let supplied = CaSettings {
        generate: false,
        ..settings()
    };
    refused_with(
        &supplied,
        Some(&cert),
        Some(&marked),
        "CaKeyMismatch",
        KEY_SECRET,
        Some(CA_KEY),
    );
}

#[test]
fn a_generation_that_is_not_a_number_is_refused() {
    let (mut cert, key) = written(&created(&settings()));
    annotate(&mut cert, CA_CERT_GENERATION, "two");
    let error = refused(
        Some(&cert),
        Some(&key),
        "InvalidCaAnnotation",
        CERT_SECRET,
        None,
    );
    assert!(error.to_string().contains("`two`"), "{error}");
}

#[test]
fn a_user_supplied_certificate_that_is_not_a_ca_is_refused() {
    use strimzi_certificate_manager::leaf::{self, IssueContext, LeafSpec};
    // A leaf certificate and its key, supplied as if they were a CA.
    let ca = created(&settings());
    let context = IssueContext {
        now: T0,
        window_open: true,
        ca_action: &ca.action,
        trust_pending: false,
    };
    let issued = leaf::issue(
        &ca.authority,
        &LeafSpec::user("alice"),
        leaf::IssueReason::Missing,
        &context,
    )
    .unwrap();
    let (mut cert, mut key) = written(&ca);
    set_data(
        &mut cert,
        CA_CRT,
        Some(issued.certificate.to_pem().as_bytes()),
    );
    set_data(&mut key, CA_KEY, Some(issued.key_pem.as_bytes()));
    let user = CaSettings {
        generate: false,
        ..settings()
    };
    refused_with(
        &user,
        Some(&cert),
        Some(&key),
        "NotACertificateAuthority",
        CERT_SECRET,
        Some(CA_CRT),
    );
}
