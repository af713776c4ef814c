//! Shared helpers of the certificate-manager tests: a fixed clock, fast ECDSA settings, and
//! Secret fiddling.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use strimzi_certificate_manager::authority::{self, CaKind, CaSettings, ReconciledCa};
use strimzi_certificate_manager::keys::KeyAlgorithm;
use time::OffsetDateTime;
use time::macros::datetime;

/// The fixed "now" of the tests.
pub const T0: OffsetDateTime = datetime!(2026-11-23 10:00 UTC);
/// The cluster every test uses.
pub const CLUSTER: &str = "my-cluster";

/// Strimzi's defaults with ECDSA keys, which generate in microseconds.
pub fn settings() -> CaSettings {
    CaSettings {
        key_algorithm: KeyAlgorithm::EcdsaP256,
        ..CaSettings::default()
    }
}

/// A new cluster CA created at `T0`.
pub fn created(settings: &CaSettings) -> ReconciledCa {
    authority::reconcile(CaKind::Cluster, CLUSTER, settings, None, None, T0, true).unwrap()
}

/// The Secrets a reconciliation wants written, as the API server would return them.
pub fn written(reconciled: &ReconciledCa) -> (Secret, Secret) {
    (
        reconciled
            .cert_secret
            .clone()
            .expect("a certificate Secret to write"),
        reconciled
            .key_secret
            .clone()
            .expect("a key Secret to write"),
    )
}

/// Reconciles the cluster CA again from the given Secrets.
pub fn again(
    settings: &CaSettings,
    (cert, key): &(Secret, Secret),
    now: OffsetDateTime,
    window_open: bool,
) -> ReconciledCa {
    authority::reconcile(
        CaKind::Cluster,
        CLUSTER,
        settings,
        Some(cert),
        Some(key),
        now,
        window_open,
    )
    .unwrap()
}

/// The Secret's data as plain bytes.
pub fn data(secret: &Secret) -> BTreeMap<String, Vec<u8>> {
    secret
        .data
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key, value.0))
        .collect()
}

/// Sets (or with `None`, removes) a data key.
pub fn set_data(secret: &mut Secret, key: &str, value: Option<&[u8]>) {
    let data = secret.data.get_or_insert_with(BTreeMap::new);
    match value {
        Some(value) => data.insert(key.to_owned(), ByteString(value.to_vec())),
        None => data.remove(key),
    };
}

/// Sets an annotation.
pub fn annotate(secret: &mut Secret, key: &str, value: &str) {
    secret
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(key.to_owned(), value.to_owned());
}

/// An annotation's value.
pub fn annotation(secret: &Secret, key: &str) -> Option<String> {
    secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(key).cloned())
}

/// Days as a duration.
pub fn days(days: i64) -> time::Duration {
    time::Duration::days(days)
}
