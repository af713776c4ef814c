//! The contract of CONTRACT.md section 8 from both sides at once: every `application.properties`
//! our operator generates for a KafkaBridge (plain, TLS with trusted certificates, mutual TLS,
//! SCRAM and PLAIN logins, rack from the init container's file or a variable, CORS, HTTPS, client
//! options, metrics) is accepted by the bridge stand-in (`standins/bridge`): parsed, its
//! placeholders resolved (Secrets with real PEM texts), translated into settings librdkafka
//! creates clients from, and its HTTPS settings into a rustls server configuration.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod model_support;

use std::collections::BTreeMap;
use std::path::Path;

use rdkafka::ClientConfig;
use rdkafka::consumer::BaseConsumer;
use rdkafka::producer::BaseProducer;
use serde_json::json;
use strimzi_api::bridge::KafkaBridge;
use strimzi_bridge_standin::config::from_properties;
use strimzi_bridge_standin::placeholders::{self, SecretName, Sources};
use strimzi_bridge_standin::{https, properties};
use strimzi_cluster_operator::model::bridge::{self, BridgeInputs};

fn bridge(spec: serde_json::Value) -> KafkaBridge {
    serde_json::from_value(json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaBridge",
        "metadata": {"name": "web", "namespace": "kafka", "uid": "0b1c"},
        "spec": spec,
    }))
    .unwrap()
}

/// The `application.properties` our operator writes for `spec`.
fn application_properties(spec: serde_json::Value) -> String {
    let bridge = bridge(spec);
    let config = model_support::default_model_config();
    let objects = bridge::build(BridgeInputs {
        bridge: &bridge,
        config: &config,
        external_logging: None,
        metrics_rules: Some("rules: []\n"),
        secrets_digest: "",
        trusted_certificate_secrets: &model_support::trusted_secrets(bridge.spec.tls.as_ref()),
    })
    .unwrap();
    objects.config_map.data.unwrap()["application.properties"].clone()
}

/// A CA certificate and a key, PEM, for the Secrets and files the placeholders name.
struct Pems {
    certificate: String,
    key: String,
}

fn pems() -> Pems {
    let key = rcgen::KeyPair::generate().unwrap();
    let certificate = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    Pems {
        certificate: certificate.pem(),
        key: key.serialize_pem(),
    }
}

/// Environment, files and Secrets as a pod would have them: `.crt` keys hold a certificate,
/// `.key` keys a private key, other keys a password; the rack file holds a zone.
struct PodSources {
    secrets: BTreeMap<SecretName, BTreeMap<String, String>>,
}

impl PodSources {
    fn for_secrets(names: &[SecretName], pems: &Pems) -> Self {
        let value = |key: &str| {
            if key.ends_with(".crt") {
                pems.certificate.clone()
            } else if key.ends_with(".key") {
                pems.key.clone()
            } else {
                "secret-password".to_owned()
            }
        };
        let keys = [
            "ca.crt", "user.crt", "user.key", "password", "tls.crt", "tls.key",
        ];
        Self {
            secrets: names
                .iter()
                .map(|name| {
                    let data = keys.iter().map(|k| ((*k).to_owned(), value(k))).collect();
                    (name.clone(), data)
                })
                .collect(),
        }
    }
}

impl Sources for PodSources {
    fn env(&self, name: &str) -> Option<String> {
        (name == "ZONE").then(|| "zone-a".to_owned())
    }
    fn read(&self, path: &Path) -> std::io::Result<String> {
        if path == Path::new("/opt/strimzi/init/rack.id") {
            Ok("zone-b".to_owned())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                path.display().to_string(),
            ))
        }
    }
    fn secret(&self, namespace: &str, name: &str) -> Option<&BTreeMap<String, String>> {
        self.secrets.get(&(namespace.to_owned(), name.to_owned()))
    }
}

fn create<T: rdkafka::config::FromClientConfig>(
    settings: &[(String, String)],
    extra: &[(&str, &str)],
) -> Result<T, String> {
    let mut config = ClientConfig::new();
    for (key, value) in settings {
        config.set(key, value);
    }
    for (key, value) in extra {
        config.set(*key, *value);
    }
    config.create::<T>().map_err(|e| e.to_string())
}

/// Runs the operator's configuration for `spec` through the stand-in; returns the resolved
/// properties.
fn accepted(spec: serde_json::Value) -> BTreeMap<String, String> {
    let text = application_properties(spec.clone());
    let parsed = properties::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let providers = placeholders::providers(&parsed).unwrap();
    let pems = pems();
    let secrets = placeholders::secrets_needed(&parsed, &providers).unwrap();
    for (namespace, _) in &secrets {
        assert_eq!(namespace, "kafka", "{text}");
    }
    let sources = PodSources::for_secrets(&secrets, &pems);
    let resolved = placeholders::resolve(&parsed, &providers, &sources)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let config = from_properties(&resolved).unwrap_or_else(|e| panic!("{e}\n{text}"));
    create::<BaseProducer>(&config.producer, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"));
    create::<BaseConsumer>(&config.consumer, &[("group.id", "g")])
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    if let Some(tls) = &config.http.tls {
        https::server_config(tls, &pems.certificate, &pems.key)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
    resolved
}

#[test]
fn a_plain_bridge_with_client_options_and_metrics() {
    let resolved = accepted(json!({
        "replicas": 1,
        "bootstrapServers": "my-cluster-kafka-bootstrap:9092",
        "http": {"port": 8080, "cors": {"allowedOrigins": ["https://a.example"], "allowedMethods": ["GET", "POST"]}},
        "consumer": {"enabled": true, "timeoutSeconds": 60, "config": {"auto.offset.reset": "earliest", "session.timeout.ms": 20000}},
        "producer": {"config": {"acks": "all", "linger.ms": 5}},
        "adminClient": {"config": {"request.timeout.ms": 20000}},
        "metricsConfig": {"type": "jmxPrometheusExporter",
                          "valueFrom": {"configMapKeyRef": {"name": "metrics", "key": "bridge.yaml"}}},
    }));
    assert_eq!(resolved["kafka.security.protocol"], "PLAINTEXT");
    assert_eq!(resolved["bridge.metrics"], "jmxPrometheusExporter");
}

#[test]
fn tls_with_trusted_certificates_and_a_client_certificate() {
    let resolved = accepted(json!({
        "replicas": 1,
        "bootstrapServers": "my-cluster-kafka-bootstrap:9093",
        "tls": {"trustedCertificates": [{"secretName": "my-cluster-cluster-ca-cert", "certificate": "ca.crt"}]},
        "authentication": {"type": "tls",
                           "certificateAndKey": {"secretName": "my-user", "certificate": "user.crt", "key": "user.key"}},
        "http": {"port": 8080},
    }));
    assert_eq!(resolved["kafka.security.protocol"], "SSL");
    assert!(resolved["kafka.ssl.keystore.key"].contains("PRIVATE KEY"));
}

#[test]
fn scram_and_plain_logins_over_tls() {
    for mechanism in ["scram-sha-512", "scram-sha-256", "plain"] {
        let resolved = accepted(json!({
            "replicas": 1,
            "bootstrapServers": "my-cluster-kafka-bootstrap:9093",
            "tls": {"trustedCertificates": [{"secretName": "ca", "certificate": "ca.crt"}]},
            "authentication": {"type": mechanism, "username": "web-user",
                               "passwordSecret": {"secretName": "web-user", "password": "password"}},
            "http": {"port": 8080},
        }));
        assert_eq!(resolved["kafka.security.protocol"], "SASL_SSL");
        assert!(
            resolved["kafka.sasl.jaas.config"].contains("password=\"secret-password\""),
            "{mechanism}: {}",
            resolved["kafka.sasl.jaas.config"]
        );
    }
}

#[test]
fn racks_https_and_a_disabled_consumer() {
    let resolved = accepted(json!({
        "replicas": 1,
        "bootstrapServers": "b:9092",
        "rack": {"topologyKey": "topology.kubernetes.io/zone"},
        "consumer": {"enabled": false},
        "producer": {"enabled": true},
        "http": {"port": 8443,
                 "tls": {"certificateAndKey": {"secretName": "http", "certificate": "tls.crt", "key": "tls.key"},
                         "config": {"ssl.enabled.protocols": "TLSv1.3"}}},
    }));
    assert_eq!(resolved["kafka.consumer.client.rack"], "zone-b");
    assert_eq!(resolved["http.consumer.enabled"], "false");
    let resolved = accepted(json!({
        "replicas": 1,
        "bootstrapServers": "b:9092",
        "http": {"port": 8080},
        "rack": {"type": "environment-variable", "envVarName": "ZONE"},
    }));
    assert_eq!(resolved["kafka.consumer.client.rack"], "zone-a");
}
