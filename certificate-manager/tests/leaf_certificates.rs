//! Certificates signed by a CA: names, reuse and every reason to issue again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::IpAddr;

use k8s_openapi::api::core::v1::Secret;
use strimzi_certificate_manager::authority::{CaAction, CaSettings, CaTrigger, ReconciledCa};
use strimzi_certificate_manager::leaf::{
    self, DEFAULT_CLUSTER_DOMAIN, ExistingLeaf, IssueContext, IssueReason, IssuedCertificate,
    LeafSpec, NodeLocation,
};
use support::*;

const LOCATION: NodeLocation<'static> = NodeLocation {
    namespace: "kafka",
    cluster: "my-cluster",
    cluster_domain: DEFAULT_CLUSTER_DOMAIN,
};

fn context(ca: &ReconciledCa) -> IssueContext<'_> {
    IssueContext {
        now: T0,
        window_open: true,
        ca_action: &ca.action,
        trust_pending: false,
    }
}

/// What the issued certificate looks like once stored in a Secret and read back.
fn stored(issued: &IssuedCertificate) -> ExistingLeaf {
    let secret = Secret {
        data: Some(issued.secret_data()),
        ..Secret::default()
    };
    ExistingLeaf::from_secret(&secret, &issued.name)
}

#[test]
fn broker_certificates_carry_every_service_and_pod_name_and_external_addresses() {
    let external = ["bootstrap.example.com".to_owned(), "192.0.2.10".to_owned()];
    let spec = LeafSpec::kafka_node(&LOCATION, "my-cluster-brokers-0", true, &external);
    assert_eq!(spec.common_name, "my-cluster-kafka");
    assert_eq!(spec.organization.as_deref(), Some("io.strimzi"));
    let expected = [
        "bootstrap.example.com",
        "my-cluster-brokers-0.my-cluster-kafka-brokers.kafka.svc",
        "my-cluster-brokers-0.my-cluster-kafka-brokers.kafka.svc.cluster.local",
        "my-cluster-kafka-bootstrap",
        "my-cluster-kafka-bootstrap.kafka",
        "my-cluster-kafka-bootstrap.kafka.svc",
        "my-cluster-kafka-bootstrap.kafka.svc.cluster.local",
        "my-cluster-kafka-brokers",
        "my-cluster-kafka-brokers.kafka",
        "my-cluster-kafka-brokers.kafka.svc",
        "my-cluster-kafka-brokers.kafka.svc.cluster.local",
    ];
    assert_eq!(
        spec.dns_names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        expected
    );
    assert_eq!(
        spec.ip_addresses.iter().copied().collect::<Vec<_>>(),
        ["192.0.2.10".parse::<IpAddr>().unwrap()]
    );

    let ca = created(&settings());
    let issued = leaf::issue_or_reuse(&ca.authority, &spec, None, &context(&ca)).unwrap();
    assert_eq!(issued.reason, IssueReason::Missing);
    let mut names = issued.certificate.dns_names().to_vec();
    names.sort();
    assert_eq!(names, expected);
    assert_eq!(
        issued.certificate.ip_addresses(),
        ["192.0.2.10".parse::<IpAddr>().unwrap()]
    );
    assert!(issued.certificate.is_signed_by(ca.authority.certificate()));
    assert_eq!(issued.certificate.not_after(), T0 + days(365));
    assert_eq!(
        issued.secret_data().keys().cloned().collect::<Vec<_>>(),
        ["my-cluster-brokers-0.crt", "my-cluster-brokers-0.key"],
        "a Kafka node's certificate is kept as PEM only, as Strimzi keeps it"
    );
}

#[test]
fn a_running_nodes_certificate_is_renewed_with_the_names_it_was_issued_with() {
    let external = ["bootstrap.example.com".to_owned(), "192.0.2.10".to_owned()];
    let spec = LeafSpec::kafka_node(&LOCATION, "my-cluster-brokers-0", true, &external);
    let ca = created(&settings());
    let issued = leaf::issue_or_reuse(&ca.authority, &spec, None, &context(&ca)).unwrap();
    let existing = stored(&issued);
    assert_eq!(
        LeafSpec::kafka_node_as_issued("my-cluster", "my-cluster-brokers-0", &existing),
        Some(spec)
    );
    let unreadable = ExistingLeaf {
        certificate: Some(b"not a certificate".to_vec()),
        ..existing
    };
    assert_eq!(
        LeafSpec::kafka_node_as_issued("my-cluster", "my-cluster-brokers-0", &unreadable),
        None,
        "no names, no certificate"
    );
}

#[test]
fn controllers_do_not_carry_external_addresses() {
    let spec = LeafSpec::kafka_node(
        &LOCATION,
        "my-cluster-controllers-3",
        false,
        &["1.2.3.4".to_owned(), "x.example".to_owned()],
    );
    assert!(spec.ip_addresses.is_empty());
    assert!(!spec.dns_names.contains("x.example"));
}

#[test]
fn client_certificates_name_the_user_or_component() {
    let ca = created(&settings());
    let user =
        leaf::issue_or_reuse(&ca.authority, &LeafSpec::user("alice"), None, &context(&ca)).unwrap();
    assert_eq!(user.certificate.subject(), "CN=alice");
    assert!(user.certificate.dns_names().is_empty());
    assert_eq!(
        user.secret_data().keys().cloned().collect::<Vec<_>>(),
        ["user.crt", "user.key", "user.p12", "user.password"]
    );
    let operator = LeafSpec::component("cluster-operator", "cluster-operator");
    let issued = leaf::issue_or_reuse(&ca.authority, &operator, None, &context(&ca)).unwrap();
    assert!(issued.certificate.subject().contains("CN=cluster-operator"));
    assert!(issued.certificate.subject().contains("O=io.strimzi"));
}

/// A node certificate issued by a new CA, and that CA reconciled again 100 days later.
fn node_certificate_then_ca_kept() -> (LeafSpec, IssuedCertificate, ReconciledCa) {
    let ca = created(&settings());
    let spec = LeafSpec::kafka_node(&LOCATION, "my-cluster-brokers-0", true, &[]);
    let first = leaf::issue_or_reuse(&ca.authority, &spec, None, &context(&ca)).unwrap();
    let kept = again(&settings(), &written(&ca), T0 + days(100), true);
    (spec, first, kept)
}

/// The issue context of `ca` 100 days after [`T0`].
fn hundred_days_later(ca: &ReconciledCa) -> IssueContext<'_> {
    IssueContext {
        now: T0 + days(100),
        ..context(ca)
    }
}

#[test]
fn a_good_certificate_is_reused_unchanged() {
    let (spec, first, kept) = node_certificate_then_ca_kept();
    let later = hundred_days_later(&kept);
    let second =
        leaf::issue_or_reuse(&kept.authority, &spec, Some(&stored(&first)), &later).unwrap();
    assert_eq!(second.reason, IssueReason::Reused);
    assert!(!second.is_new());
    assert_eq!(
        second.secret_data(),
        first.secret_data(),
        "a reused certificate keeps its key store too"
    );
    assert_eq!(second.thumbprint(), first.thumbprint());
    assert_eq!(first.thumbprint().len(), 40);
    assert_eq!(
        first.certificate.short_thumbprint(),
        first.thumbprint()[..8]
    );
}

#[test]
fn changed_names_expiry_a_renewed_ca_another_ca_or_bad_data_issue_again() {
    let settings = settings();
    let ca = created(&settings);
    let spec = LeafSpec::kafka_node(&LOCATION, "my-cluster-brokers-0", true, &[]);
    let first = leaf::issue_or_reuse(&ca.authority, &spec, None, &context(&ca)).unwrap();
    let existing = stored(&first);
    let kept = again(&settings, &written(&ca), T0, true);
    let reissue =
        |spec: &LeafSpec, existing: &ExistingLeaf, context: &IssueContext<'_>, authority| {
            let issued = leaf::issue_or_reuse(authority, spec, Some(existing), context).unwrap();
            assert_ne!(issued.thumbprint(), first.thumbprint());
            issued.reason
        };

    let moved = LeafSpec::kafka_node(
        &LOCATION,
        "my-cluster-brokers-0",
        true,
        &["new.example.com".to_owned()],
    );
    assert_eq!(
        reissue(&moved, &existing, &context(&kept), &kept.authority),
        IssueReason::NamesChanged
    );

    let expiring = IssueContext {
        now: T0 + days(340),
        ..context(&kept)
    };
    assert_eq!(
        reissue(&spec, &existing, &expiring, &kept.authority),
        IssueReason::Expiring
    );
    let outside_window = IssueContext {
        window_open: false,
        ..expiring.clone()
    };
    let waiting =
        leaf::issue_or_reuse(&kept.authority, &spec, Some(&existing), &outside_window).unwrap();
    assert_eq!(waiting.reason, IssueReason::Reused);

    let renewed = CaAction::RenewCertificate(CaTrigger::ForceRenew);
    let after_renewal = IssueContext {
        ca_action: &renewed,
        ..context(&kept)
    };
    assert_eq!(
        reissue(&spec, &existing, &after_renewal, &kept.authority),
        IssueReason::CaRenewed
    );

    let other = again(&settings, &written(&created(&settings)), T0, true);
    assert_eq!(
        reissue(&spec, &existing, &context(&other), &other.authority),
        IssueReason::SignedByOtherCa
    );

    let corrupt = ExistingLeaf {
        key: Some(b"garbage".to_vec()),
        ..existing.clone()
    };
    assert!(matches!(
        reissue(&spec, &corrupt, &context(&kept), &kept.authority),
        IssueReason::Unreadable(_)
    ));
    let half = ExistingLeaf {
        certificate: None,
        ..existing.clone()
    };
    assert!(matches!(
        reissue(&spec, &half, &context(&kept), &kept.authority),
        IssueReason::Unreadable(_)
    ));
}

#[test]
fn without_pkcs12_only_pem_entries_are_written() {
    let ca = created(&CaSettings {
        pkcs12: false,
        ..settings()
    });
    let issued =
        leaf::issue_or_reuse(&ca.authority, &LeafSpec::user("bob"), None, &context(&ca)).unwrap();
    assert_eq!(
        issued.secret_data().keys().cloned().collect::<Vec<_>>(),
        ["user.crt", "user.key"]
    );
}

#[test]
fn after_a_key_replacement_leaves_of_the_old_key_are_kept_while_trust_is_pending() {
    let settings = settings();
    let ca = created(&settings);
    let spec = LeafSpec::kafka_node(&LOCATION, "my-cluster-brokers-0", true, &[]);
    let first = leaf::issue_or_reuse(&ca.authority, &spec, None, &context(&ca)).unwrap();
    let mut secrets = written(&ca);
    annotate(
        &mut secrets.1,
        strimzi_api::annotations::FORCE_REPLACE,
        "true",
    );
    let replaced = again(&settings, &secrets, T0, true);
    assert!(replaced.action.replaces_key());
    assert!(
        !first
            .certificate
            .is_signed_by(replaced.authority.certificate())
    );

    // Some node does not trust the new CA certificate yet: the old-key leaf stays.
    let pending = IssueContext {
        trust_pending: true,
        ..context(&replaced)
    };
    let kept =
        leaf::issue_or_reuse(&replaced.authority, &spec, Some(&stored(&first)), &pending).unwrap();
    assert_eq!(kept.reason, IssueReason::Reused);
    assert_eq!(kept.thumbprint(), first.thumbprint());
    // Its chain is the old CA certificate that signed it, not the new one.
    assert_eq!(
        kept.secret_data(),
        first.secret_data(),
        "the kept certificate is stored with the CA certificate that signed it"
    );
    // Unless its names no longer fit.
    let moved = LeafSpec::kafka_node(
        &LOCATION,
        "my-cluster-brokers-0",
        true,
        &["x.example.com".to_owned()],
    );
    let reissued =
        leaf::issue_or_reuse(&replaced.authority, &moved, Some(&stored(&first)), &pending).unwrap();
    assert!(
        reissued
            .certificate
            .is_signed_by(replaced.authority.certificate())
    );

    // Once every node trusts it, the leaf is issued by the new key.
    let switched = leaf::issue_or_reuse(
        &replaced.authority,
        &spec,
        Some(&stored(&first)),
        &context(&replaced),
    )
    .unwrap();
    assert_eq!(switched.reason, IssueReason::CaRenewed);
    assert!(
        switched
            .certificate
            .is_signed_by(replaced.authority.certificate())
    );
}

#[test]
fn a_node_certificate_stored_without_its_ca_gets_the_chain_and_is_not_issued_again() {
    let (spec, first, kept) = node_certificate_then_ca_kept();
    let later = hundred_days_later(&kept);
    let mut leaf_only = stored(&first);
    leaf_only.certificate = Some(first.certificate.to_pem().into_bytes());
    let second = leaf::issue_or_reuse(&kept.authority, &spec, Some(&leaf_only), &later).unwrap();
    assert_eq!(second.reason, IssueReason::Reused);
    assert_eq!(second.thumbprint(), first.thumbprint());
    assert_eq!(second.secret_data(), first.secret_data());
    // And a chained one (as Strimzi stores it) is read by its first certificate.
    let third =
        leaf::issue_or_reuse(&kept.authority, &spec, Some(&stored(&second)), &later).unwrap();
    assert_eq!(third.reason, IssueReason::Reused);
    assert_eq!(third.secret_data(), first.secret_data());
}
