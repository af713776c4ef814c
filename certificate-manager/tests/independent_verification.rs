//! What other implementations say about our certificates and stores: rustls-webpki verifies
//! server certificates for every name, `openssl verify` accepts the chains, and Java's
//! `keytool` opens every PKCS#12 file with its password. A CA made by `openssl` (RSA-4096,
//! as Strimzi makes them) is read and signs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use strimzi_certificate_manager::authority::{
    self, CA_CRT, CA_KEY, CA_P12, CA_PASSWORD, CaKind, CaSettings, ReconciledCa,
};
use strimzi_certificate_manager::keys::{self, KeyAlgorithm};
use strimzi_certificate_manager::leaf::{
    self, IssueContext, IssuedCertificate, LeafSpec, NodeLocation,
};
use support::*;

const LOCATION: NodeLocation<'static> = NodeLocation {
    namespace: "kafka",
    cluster: "my-cluster",
    cluster_domain: "cluster.local",
};

/// The path of a command-line tool, or a failure saying how to install it.
fn tool(name: &str, install: &str) -> PathBuf {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .unwrap();
    assert!(
        found.status.success(),
        "`{name}` is needed by this test and was not found: {install}"
    );
    PathBuf::from(String::from_utf8(found.stdout).unwrap().trim())
}

fn openssl() -> PathBuf {
    tool("openssl", "apt-get install -y openssl")
}

fn keytool() -> PathBuf {
    tool("keytool", "apt-get install -y openjdk-17-jre-headless")
}

fn run(program: &Path, args: &[&str]) -> String {
    let output = Command::new(program).args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "{} {args:?} failed:\n{text}",
        program.display()
    );
    text
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

fn broker_certificate(ca: &ReconciledCa) -> IssuedCertificate {
    let external = ["kafka.example.com".to_owned(), "192.0.2.7".to_owned()];
    let spec = LeafSpec::kafka_node(&LOCATION, "my-cluster-brokers-0", true, &external);
    let context = IssueContext {
        now: time::OffsetDateTime::now_utc(),
        window_open: true,
        ca_action: &ca.action,
        trust_pending: false,
    };
    leaf::issue_or_reuse(&ca.authority, &spec, None, &context).unwrap()
}

fn new_ca(algorithm: KeyAlgorithm) -> ReconciledCa {
    let settings = CaSettings {
        key_algorithm: algorithm,
        ..CaSettings::default()
    };
    authority::reconcile(
        CaKind::Cluster,
        CLUSTER,
        &settings,
        None,
        None,
        time::OffsetDateTime::now_utc(),
        true,
    )
    .unwrap()
}

/// rustls-webpki accepts the broker certificate for server auth, chained to the CA, for each
/// of its DNS names and IP addresses, and refuses a name it does not carry.
fn webpki_accepts_every_name(ca: &ReconciledCa, issued: &IssuedCertificate) {
    let anchor_der = CertificateDer::from(ca.authority.certificate().der().to_vec());
    let anchors = [webpki::anchor_from_trusted_cert(&anchor_der).unwrap()];
    let leaf_der = CertificateDer::from(issued.certificate.der().to_vec());
    let end_entity = webpki::EndEntityCert::try_from(&leaf_der).unwrap();
    end_entity
        .verify_for_usage(
            webpki::ALL_VERIFICATION_ALGS,
            &anchors,
            &[],
            UnixTime::now(),
            webpki::KeyUsage::server_auth(),
            None,
            None,
        )
        .unwrap();
    let names = issued.certificate.dns_names().iter().cloned().chain(
        issued
            .certificate
            .ip_addresses()
            .iter()
            .map(ToString::to_string),
    );
    let mut checked = 0;
    for name in names {
        let server_name = ServerName::try_from(name.clone()).unwrap();
        end_entity
            .verify_is_valid_for_subject_name(&server_name)
            .unwrap_or_else(|error| panic!("{name}: {error:?}"));
        checked += 1;
    }
    assert_eq!(checked, 12, "11 DNS names and one IP address");
    let stranger = ServerName::try_from("other.example.com").unwrap();
    assert!(
        end_entity
            .verify_is_valid_for_subject_name(&stranger)
            .is_err()
    );
}

/// `openssl verify` accepts the chain, also when checking a host name and an IP address.
fn openssl_accepts_the_chain(dir: &Path, ca_pem: &str, leaf_pem: &str) {
    let openssl = openssl();
    let ca = write(dir, "ca.crt", ca_pem.as_bytes());
    let leaf = write(dir, "leaf.crt", leaf_pem.as_bytes());
    assert!(run(&openssl, &["verify", "-CAfile", &ca, &leaf]).contains(": OK"));
    let host = "my-cluster-brokers-0.my-cluster-kafka-brokers.kafka.svc";
    run(
        &openssl,
        &["verify", "-CAfile", &ca, "-verify_hostname", host, &leaf],
    );
    run(
        &openssl,
        &["verify", "-CAfile", &ca, "-verify_ip", "192.0.2.7", &leaf],
    );
    let wrong = Command::new(&openssl)
        .args([
            "verify",
            "-CAfile",
            &ca,
            "-verify_hostname",
            "other.example.com",
            &leaf,
        ])
        .output()
        .unwrap();
    assert!(
        !wrong.status.success(),
        "openssl must refuse a name the certificate lacks"
    );
}

/// `keytool -list` opens a PKCS#12 file with its password and finds `entries` of `kind`.
fn keytool_opens(dir: &Path, name: &str, bytes: &[u8], password: &str, kind: &str, entries: usize) {
    let path = write(dir, name, bytes);
    let listing = run(
        &keytool(),
        &[
            "-list",
            "-storetype",
            "PKCS12",
            "-keystore",
            &path,
            "-storepass",
            password,
        ],
    );
    assert!(
        listing.contains(&format!("Your keystore contains {entries} entr")),
        "{name}: expected {entries} entries:\n{listing}"
    );
    assert_eq!(
        listing.matches(kind).count(),
        entries,
        "{name}: expected {entries} {kind}:\n{listing}"
    );
    let wrong = Command::new(keytool())
        .args([
            "-list",
            "-storetype",
            "PKCS12",
            "-keystore",
            &path,
            "-storepass",
            "wrong-password",
        ])
        .output()
        .unwrap();
    assert!(
        !wrong.status.success(),
        "{name} must not open with a wrong password"
    );
}

fn verify_everything(algorithm: KeyAlgorithm) {
    let dir = tempfile::tempdir().unwrap();
    let ca = new_ca(algorithm);
    let issued = broker_certificate(&ca);
    webpki_accepts_every_name(&ca, &issued);
    openssl_accepts_the_chain(
        dir.path(),
        &ca.authority.certificate().to_pem(),
        &issued.certificate.to_pem(),
    );

    let cert_data = data(ca.cert_secret.as_ref().unwrap());
    let password = String::from_utf8(cert_data[CA_PASSWORD].clone()).unwrap();
    keytool_opens(
        dir.path(),
        "ca.p12",
        &cert_data[CA_P12],
        &password,
        "trustedCertEntry",
        1,
    );
    // A Kafka node's certificate is kept as PEM only, as Strimzi keeps it: the certificate
    // followed by its CA's, and the key.
    assert!(issued.key_store.is_none());
    let node_data = issued.secret_data();
    assert_eq!(
        node_data.keys().collect::<Vec<_>>(),
        ["my-cluster-brokers-0.crt", "my-cluster-brokers-0.key"]
    );
    let chain = String::from_utf8(node_data["my-cluster-brokers-0.crt"].0.clone()).unwrap();
    assert_eq!(
        chain,
        format!(
            "{}{}",
            issued.certificate.to_pem(),
            ca.authority.certificate().to_pem()
        )
    );
    if algorithm == KeyAlgorithm::Rsa4096 {
        // Strimzi's sizes and hash: a 4096-bit CA signing 2048-bit certificates with SHA-512.
        let node = write(dir.path(), "node.crt", chain.as_bytes());
        let text = run(&openssl(), &["x509", "-in", &node, "-noout", "-text"]);
        assert!(text.contains("Public-Key: (2048 bit)"), "{text}");
        assert!(text.contains("sha512WithRSAEncryption"), "{text}");
        let ca_file = write(
            dir.path(),
            "ca-only.crt",
            ca.authority.certificate().to_pem().as_bytes(),
        );
        let text = run(&openssl(), &["x509", "-in", &ca_file, "-noout", "-text"]);
        assert!(text.contains("Public-Key: (4096 bit)"), "{text}");
    }

    let context = IssueContext {
        now: time::OffsetDateTime::now_utc(),
        window_open: true,
        ca_action: &ca.action,
        trust_pending: false,
    };
    let user =
        leaf::issue_or_reuse(&ca.authority, &LeafSpec::user("alice"), None, &context).unwrap();
    let store = user.key_store.as_ref().unwrap();
    keytool_opens(
        dir.path(),
        "user.p12",
        &store.bytes,
        &store.password,
        "PrivateKeyEntry",
        1,
    );
    let user_pem = user.certificate.to_pem();
    openssl_accepts_client(dir.path(), &ca.authority.certificate().to_pem(), &user_pem);

    // The thumbprint is the SHA-1 fingerprint openssl computes.
    let leaf = write(
        dir.path(),
        "fingerprint.crt",
        issued.certificate.to_pem().as_bytes(),
    );
    let fingerprint = run(
        &openssl(),
        &["x509", "-in", &leaf, "-noout", "-fingerprint", "-sha1"],
    );
    let hex: String = fingerprint
        .split('=')
        .nth(1)
        .unwrap()
        .trim()
        .replace(':', "")
        .to_lowercase();
    assert_eq!(issued.thumbprint(), hex);
}

fn openssl_accepts_client(dir: &Path, ca_pem: &str, user_pem: &str) {
    let ca = write(dir, "clients-ca.crt", ca_pem.as_bytes());
    let user = write(dir, "user.crt", user_pem.as_bytes());
    run(
        &openssl(),
        &["verify", "-CAfile", &ca, "-purpose", "sslclient", &user],
    );
}

#[test]
fn ecdsa_certificates_and_stores_are_accepted_by_webpki_openssl_and_keytool() {
    verify_everything(KeyAlgorithm::EcdsaP256);
}

#[test]
fn rsa_certificates_and_stores_are_accepted_by_webpki_openssl_and_keytool() {
    verify_everything(KeyAlgorithm::Rsa4096);
}

#[test]
fn a_replaced_ca_keeps_both_certificates_in_its_trust_store() {
    let dir = tempfile::tempdir().unwrap();
    let settings = settings();
    let mut secrets = written(&created(&settings));
    annotate(
        &mut secrets.1,
        strimzi_api::annotations::FORCE_REPLACE,
        "true",
    );
    let replaced = again(&settings, &secrets, T0 + days(1), true);
    let cert_data = data(replaced.cert_secret.as_ref().unwrap());
    let password = String::from_utf8(cert_data[CA_PASSWORD].clone()).unwrap();
    keytool_opens(
        dir.path(),
        "replaced.p12",
        &cert_data[CA_P12],
        &password,
        "trustedCertEntry",
        2,
    );
}

#[test]
fn an_rsa_ca_made_by_openssl_is_read_and_signs_certificates_openssl_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("ca.key").to_string_lossy().into_owned();
    let cert = dir.path().join("ca.crt").to_string_lossy().into_owned();
    run(
        &openssl(),
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:4096",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &cert,
            "-days",
            "30",
            "-subj",
            "/O=io.strimzi/CN=cluster-ca v0",
            "-addext",
            "basicConstraints=critical,CA:TRUE,pathlen:0",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
    let key_pem = std::fs::read(&key).unwrap();
    assert_eq!(
        keys::algorithm_of(&keys::from_pem(&key_pem).unwrap()),
        Some(KeyAlgorithm::Rsa4096)
    );
    let (mut cert_secret, mut key_secret) = written(&created(&support::settings()));
    set_data(
        &mut cert_secret,
        CA_CRT,
        Some(&std::fs::read(&cert).unwrap()),
    );
    set_data(&mut key_secret, CA_KEY, Some(&key_pem));
    let user_supplied = CaSettings {
        generate: false,
        ..support::settings()
    };
    let now = time::OffsetDateTime::now_utc();
    let ca = authority::reconcile(
        CaKind::Cluster,
        CLUSTER,
        &user_supplied,
        Some(&cert_secret),
        Some(&key_secret),
        now,
        true,
    )
    .unwrap();
    assert_eq!(
        ca.warnings.len(),
        1,
        "30 days is within the default 30-day renewal period"
    );
    let issued = broker_certificate(&ca);
    openssl_accepts_the_chain(
        dir.path(),
        &ca.authority.certificate().to_pem(),
        &issued.certificate.to_pem(),
    );
}
