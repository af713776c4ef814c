//! Every branch of the CA lifecycle, with a fixed clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use strimzi_api::annotations::{CA_CERT_GENERATION, CA_KEY_GENERATION, FORCE_RENEW, FORCE_REPLACE};
use strimzi_api::kafka::{CertificateAuthority as CaSpec, CertificateExpirationPolicy};
use strimzi_certificate_manager::authority::{
    self, CA_CRT, CA_KEY, CA_P12, CA_PASSWORD, CaAction, CaKind, CaSettings, CaTrigger,
    ForceAnnotationsDone, ObservedCa, REPLACES_CERTIFICATE, old_certificate_key,
    without_old_certificates,
};
use strimzi_certificate_manager::certificate::ParsedCertificate;
use strimzi_certificate_manager::maintenance::MaintenanceWindows;
use support::*;
use time::macros::datetime;

#[test]
fn settings_follow_strimzi_defaults_and_the_spec() {
    let defaults = CaSettings::from_spec(None);
    assert!(defaults.generate && defaults.pkcs12);
    assert_eq!((defaults.validity_days, defaults.renewal_days), (365, 30));
    assert_eq!(
        defaults.policy,
        CertificateExpirationPolicy::RenewCertificate
    );
    let spec = CaSpec {
        generate_certificate_authority: Some(false),
        validity_days: Some(1000),
        renewal_days: Some(60),
        certificate_expiration_policy: Some(CertificateExpirationPolicy::ReplaceKey),
        ..CaSpec::default()
    };
    let custom = CaSettings::from_spec(Some(&spec));
    assert!(!custom.generate);
    assert_eq!((custom.validity_days, custom.renewal_days), (1000, 60));
    assert_eq!(custom.policy, CertificateExpirationPolicy::ReplaceKey);
}

#[test]
fn a_missing_ca_is_created_in_strimzis_layout() {
    let reconciled = created(&settings());
    assert_eq!(reconciled.action, CaAction::Create);
    let (cert, key) = written(&reconciled);
    assert_eq!(
        cert.metadata.name.as_deref(),
        Some("my-cluster-cluster-ca-cert")
    );
    assert_eq!(key.metadata.name.as_deref(), Some("my-cluster-cluster-ca"));
    assert_eq!(
        data(&cert).keys().collect::<Vec<_>>(),
        [CA_CRT, CA_P12, CA_PASSWORD]
    );
    assert_eq!(data(&key).keys().collect::<Vec<_>>(), [CA_KEY]);
    assert_eq!(annotation(&cert, CA_CERT_GENERATION).as_deref(), Some("0"));
    assert_eq!(annotation(&key, CA_KEY_GENERATION).as_deref(), Some("0"));

    let certificate = ParsedCertificate::from_pem(&data(&cert)[CA_CRT]).unwrap();
    assert!(certificate.is_ca());
    assert!(
        certificate.subject().contains("CN=cluster-ca v0"),
        "{}",
        certificate.subject()
    );
    assert!(
        certificate.subject().contains("O=io.strimzi"),
        "{}",
        certificate.subject()
    );
    assert_eq!(certificate.not_before(), T0);
    assert_eq!(certificate.not_after(), T0 + days(365));
    assert!(certificate.is_signed_by(&certificate));
    assert!(
        String::from_utf8(data(&key)[CA_KEY].clone())
            .unwrap()
            .starts_with("-----BEGIN PRIVATE KEY-----")
    );
}

#[test]
fn the_clients_ca_uses_its_own_names() {
    let reconciled =
        authority::reconcile(CaKind::Clients, CLUSTER, &settings(), None, None, T0, true).unwrap();
    let (cert, key) = written(&reconciled);
    assert_eq!(
        cert.metadata.name.as_deref(),
        Some("my-cluster-clients-ca-cert")
    );
    assert_eq!(key.metadata.name.as_deref(), Some("my-cluster-clients-ca"));
    assert!(
        reconciled
            .authority
            .certificate()
            .subject()
            .contains("CN=clients-ca v0")
    );
}

#[test]
fn a_healthy_ca_is_kept_byte_for_byte() {
    let settings = settings();
    let secrets = written(&created(&settings));
    let kept = again(&settings, &secrets, T0 + days(100), true);
    assert_eq!(kept.action, CaAction::Keep);
    assert!(kept.warnings.is_empty());
    let (cert, key) = written(&kept);
    assert_eq!(
        data(&cert),
        data(&secrets.0),
        "an unchanged CA must not rewrite its trust store"
    );
    assert_eq!(data(&key), data(&secrets.1));
}

#[test]
fn within_the_renewal_period_the_certificate_is_renewed_with_the_same_key() {
    let settings = settings();
    let original = created(&settings);
    let secrets = written(&original);
    let now = T0 + days(365 - 29);
    let renewed = again(&settings, &secrets, now, true);
    assert_eq!(
        renewed.action,
        CaAction::RenewCertificate(CaTrigger::Expiring {
            not_after: T0 + days(365)
        })
    );
    let (cert, key) = written(&renewed);
    assert_eq!(data(&key), data(&secrets.1), "the key must not change");
    assert_eq!(annotation(&cert, CA_CERT_GENERATION).as_deref(), Some("1"));
    assert_eq!(annotation(&key, CA_KEY_GENERATION).as_deref(), Some("0"));
    let new = renewed.authority.certificate();
    assert_eq!(new.not_after(), now + days(365));
    assert_eq!(new.subject(), original.authority.certificate().subject());
    assert!(new.matches_key(original.authority.key()));
    // The day before the renewal period nothing happens.
    let before = again(&settings, &secrets, T0 + days(365 - 31), true);
    assert_eq!(before.action, CaAction::Keep);
}

#[test]
fn renewals_wait_for_a_maintenance_window() {
    let settings = settings();
    let secrets = written(&created(&settings));
    let windows = MaintenanceWindows::parse(&["* * 0-1 ? * *"]).unwrap();
    let due = datetime!(2027-11-01 14:00 UTC);
    let outside = again(&settings, &secrets, due, windows.contains(due));
    assert!(matches!(
        outside.action,
        CaAction::Postponed(CaTrigger::Expiring { .. })
    ));
    assert_eq!(outside.warnings.len(), 1);
    assert_eq!(outside.warnings[0].reason, "CaRenewalPostponed");
    assert_eq!(data(&written(&outside).0), data(&secrets.0));
    let inside_at = datetime!(2027-11-02 00:30 UTC);
    let inside = again(&settings, &secrets, inside_at, windows.contains(inside_at));
    assert!(matches!(
        inside.action,
        CaAction::RenewCertificate(CaTrigger::Expiring { .. })
    ));
}

#[test]
fn the_replace_key_policy_replaces_the_key_and_keeps_the_old_certificate_trusted() {
    let settings = CaSettings {
        policy: CertificateExpirationPolicy::ReplaceKey,
        ..settings()
    };
    let original = created(&settings);
    let secrets = written(&original);
    let replaced = again(&settings, &secrets, T0 + days(340), true);
    assert!(matches!(
        replaced.action,
        CaAction::ReplaceKey(CaTrigger::Expiring { .. })
    ));
    let (cert, key) = written(&replaced);
    assert_ne!(data(&key), data(&secrets.1));
    assert_eq!(annotation(&cert, CA_CERT_GENERATION).as_deref(), Some("1"));
    assert_eq!(annotation(&key, CA_KEY_GENERATION).as_deref(), Some("1"));
    assert!(
        replaced
            .authority
            .certificate()
            .subject()
            .contains("CN=cluster-ca v1")
    );

    let old_key = old_certificate_key(T0 + days(365));
    assert_eq!(old_key, "ca-2027-11-23T10-00-00Z.crt");
    let cert_data = data(&cert);
    assert_eq!(
        cert_data.keys().collect::<Vec<_>>(),
        [old_key.as_str(), CA_CRT, CA_P12, CA_PASSWORD]
    );
    assert_eq!(
        ParsedCertificate::from_pem(&cert_data[&old_key]).unwrap(),
        *original.authority.certificate()
    );
    assert_eq!(replaced.authority.trusted_certificates().len(), 2);
    assert_eq!(
        replaced
            .authority
            .trusted_pem_bundle()
            .matches("BEGIN CERTIFICATE")
            .count(),
        2
    );

    // Kept while it is valid, dropped once it has expired.
    let later = again(
        &settings,
        &(cert.clone(), key.clone()),
        T0 + days(360),
        true,
    );
    assert_eq!(later.action, CaAction::Keep);
    assert!(data(&written(&later).0).contains_key(&old_key));
    let expired = again(
        &settings,
        &(cert.clone(), key.clone()),
        T0 + days(366),
        true,
    );
    assert!(expired.expired_certificates_removed);
    assert!(!data(&written(&expired).0).contains_key(&old_key));

    // And on request, once every pod uses the new CA.
    let dropped = without_old_certificates(&later.authority, &cert)
        .unwrap()
        .unwrap();
    assert_eq!(
        data(&dropped).keys().collect::<Vec<_>>(),
        [CA_CRT, CA_P12, CA_PASSWORD]
    );
    assert_eq!(data(&dropped)[CA_PASSWORD], cert_data[CA_PASSWORD]);
    assert!(
        without_old_certificates(&original.authority, &secrets.0)
            .unwrap()
            .is_none()
    );
}

#[test]
fn force_annotations_renew_or_replace_inside_a_window_only() {
    let settings = settings();
    let (cert, key) = written(&created(&settings));
    let now = T0 + days(10);

    let mut renew = (cert.clone(), key.clone());
    annotate(&mut renew.0, FORCE_RENEW, "true");
    assert_eq!(
        again(&settings, &renew, now, true).action,
        CaAction::RenewCertificate(CaTrigger::ForceRenew)
    );
    assert_eq!(
        again(&settings, &renew, now, false).action,
        CaAction::Postponed(CaTrigger::ForceRenew)
    );
    let renewed = written(&again(&settings, &renew, now, true));
    assert_eq!(
        annotation(&renewed.0, FORCE_RENEW),
        None,
        "the annotation is consumed"
    );

    let mut replace = (cert.clone(), key.clone());
    annotate(&mut replace.1, FORCE_REPLACE, "true");
    assert_eq!(
        again(&settings, &replace, now, true).action,
        CaAction::ReplaceKey(CaTrigger::ForceReplace)
    );
    assert_eq!(
        again(&settings, &replace, now, false).action,
        CaAction::Postponed(CaTrigger::ForceReplace)
    );

    annotate(&mut replace.0, FORCE_RENEW, "true");
    assert_eq!(
        again(&settings, &replace, now, true).action,
        CaAction::ReplaceKey(CaTrigger::ForceReplace),
        "replacing the key also renews the certificate"
    );
}

/// Both force annotations carried out.
const BOTH_DONE: ForceAnnotationsDone = ForceAnnotationsDone {
    renew: true,
    replace: true,
};

#[test]
fn a_key_replacement_is_written_key_first_and_an_interruption_is_completed_with_the_stored_key() {
    let settings = settings();
    let original = created(&settings);
    let (cert, mut key) = written(&original);
    annotate(&mut key, FORCE_REPLACE, "true");
    let now = T0 + days(10);
    let replacing = again(&settings, &(cert.clone(), key.clone()), now, true);
    assert_eq!(
        replacing.action,
        CaAction::ReplaceKey(CaTrigger::ForceReplace)
    );
    assert_eq!(replacing.force_annotations_done, BOTH_DONE);
    // Written first: the new key, marked with the certificate it replaces; last, unmarked.
    let marked = replacing.pending_key_secret.clone().expect("a marked key");
    let thumbprint = original.authority.certificate().thumbprint();
    assert_eq!(
        annotation(&marked, REPLACES_CERTIFICATE).as_deref(),
        Some(thumbprint.as_str())
    );
    assert_eq!(annotation(&marked, CA_KEY_GENERATION).as_deref(), Some("1"));
    let (_, settled_key) = written(&replacing);
    assert_eq!(annotation(&settled_key, REPLACES_CERTIFICATE), None);
    assert_eq!(data(&settled_key), data(&marked));

    // Stopped after the key: the certificate Secret is the old one, the user's annotation
    // (another field manager's) still on the key Secret. Completed at once, window or not,
    // with the stored key: nothing is generated again.
    let mut stopped = marked.clone();
    annotate(&mut stopped, FORCE_REPLACE, "true");
    let observed = authority::observe(
        CaKind::Cluster,
        CLUSTER,
        &settings,
        Some(&cert),
        Some(&stopped),
    )
    .unwrap();
    assert!(matches!(observed, ObservedCa::KeyReplacementInterrupted(_)));
    let completed = again(&settings, &(cert.clone(), stopped), now, false);
    assert_eq!(
        completed.action,
        CaAction::ReplaceKey(CaTrigger::ReplacementInterrupted)
    );
    assert_eq!(completed.force_annotations_done, BOTH_DONE);
    let (new_cert, new_key) = written(&completed);
    assert_eq!(data(&new_key)[CA_KEY], data(&marked)[CA_KEY]);
    assert_eq!(
        data(&completed.pending_key_secret.clone().unwrap()),
        data(&marked)
    );
    assert_eq!(
        (
            annotation(&new_cert, CA_CERT_GENERATION).as_deref(),
            annotation(&new_key, CA_KEY_GENERATION).as_deref(),
        ),
        (Some("1"), Some("1"))
    );
    let authority = &completed.authority;
    assert!(
        authority
            .certificate()
            .subject()
            .contains("CN=cluster-ca v1")
    );
    assert!(authority.certificate().matches_key(authority.key()));
    assert!(
        authority
            .trusted_certificates()
            .values()
            .any(|trusted| trusted == original.authority.certificate()),
        "the replaced certificate stays trusted"
    );

    // Stopped after the certificate: the pair matches and the mark names the replaced, now
    // old, certificate. The annotation is carried out, not acted on again; the mark stays
    // until it is removed.
    let mut written_through = marked.clone();
    annotate(&mut written_through, FORCE_REPLACE, "true");
    let finishing = again(&settings, &(new_cert.clone(), written_through), now, true);
    assert_eq!(finishing.action, CaAction::Keep);
    assert_eq!(finishing.force_annotations_done, BOTH_DONE);
    assert_eq!(
        data(&finishing.pending_key_secret.clone().unwrap()),
        data(&marked)
    );
    assert_eq!(data(&written(&finishing).0), data(&new_cert));

    // Settled: an ordinary healthy CA.
    let settled = again(&settings, &(new_cert, new_key), now, true);
    assert_eq!(settled.action, CaAction::Keep);
    assert!(settled.pending_key_secret.is_none());
    assert_eq!(
        settled.force_annotations_done,
        ForceAnnotationsDone::default()
    );
}

#[test]
fn a_lost_certificate_secret_is_reissued_from_the_kept_key() {
    // Also what a new CA leaves when it is stopped after its key Secret is written.
    let settings = settings();
    let (_, key) = written(&created(&settings));
    let key_pem = data(&key)[CA_KEY].clone();
    let reissued = authority::reconcile(
        CaKind::Cluster,
        CLUSTER,
        &settings,
        None,
        Some(&key),
        T0 + days(5),
        false,
    )
    .unwrap();
    assert_eq!(
        reissued.action,
        CaAction::RenewCertificate(CaTrigger::CertificateMissing)
    );
    assert_eq!(data(&written(&reissued).1)[CA_KEY], key_pem);
}

#[test]
fn without_pkcs12_no_stores_are_written() {
    let settings = CaSettings {
        pkcs12: false,
        ..settings()
    };
    let (cert, _) = written(&created(&settings));
    assert_eq!(data(&cert).keys().collect::<Vec<_>>(), [CA_CRT]);
    // Turning it off later drops existing stores.
    let with_stores = written(&created(&support::settings()));
    let (cert, _) = written(&again(&settings, &with_stores, T0, true));
    assert_eq!(data(&cert).keys().collect::<Vec<_>>(), [CA_CRT]);
}

#[test]
fn a_user_supplied_ca_is_validated_and_never_written() {
    let generated = written(&created(&settings()));
    let user = CaSettings {
        generate: false,
        ..settings()
    };

    let kept = again(&user, &generated, T0 + days(100), true);
    assert_eq!(kept.action, CaAction::Keep);
    assert!(kept.cert_secret.is_none() && kept.key_secret.is_none());
    assert!(kept.warnings.is_empty());

    let expiring = authority::reconcile(
        CaKind::Cluster,
        CLUSTER,
        &user,
        Some(&generated.0),
        Some(&generated.1),
        T0 + days(340),
        true,
    )
    .unwrap();
    assert_eq!(
        expiring.action,
        CaAction::Keep,
        "a user-supplied CA is never renewed"
    );
    assert_eq!(expiring.warnings.len(), 1);
    assert_eq!(expiring.warnings[0].reason, "CaCertificateExpiring");

    let expired = authority::reconcile(
        CaKind::Cluster,
        CLUSTER,
        &user,
        Some(&generated.0),
        Some(&generated.1),
        T0 + days(400),
        true,
    )
    .unwrap_err();
    assert_eq!(expired.reason(), "CaCertificateExpired");
    assert!(
        expired.to_string().contains("my-cluster-cluster-ca-cert"),
        "{expired}"
    );
    assert!(expired.to_string().contains("ca.crt"), "{expired}");

    let missing =
        authority::reconcile(CaKind::Cluster, CLUSTER, &user, None, None, T0, true).unwrap_err();
    assert_eq!(missing.reason(), "MissingCaSecret");
    assert!(
        missing
            .to_string()
            .contains("generateCertificateAuthority is false"),
        "{missing}"
    );
}

#[test]
fn decide_is_a_pure_function_of_its_inputs() {
    let settings = settings();
    assert_eq!(
        authority::decide(&settings, &ObservedCa::Absent, T0, false),
        CaAction::Create
    );
    let user = CaSettings {
        generate: false,
        ..settings
    };
    assert_eq!(
        authority::decide(&user, &ObservedCa::Absent, T0, true),
        CaAction::Keep
    );
    let secrets = written(&created(&settings));
    let observed = authority::observe(
        CaKind::Cluster,
        CLUSTER,
        &settings,
        Some(&secrets.0),
        Some(&secrets.1),
    )
    .unwrap();
    for _ in 0..3 {
        assert_eq!(
            authority::decide(&settings, &observed, T0 + days(1), true),
            CaAction::Keep
        );
    }
}
