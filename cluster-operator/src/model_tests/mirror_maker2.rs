//! The MirrorMaker 2 model's test that builds its settings from the operator's environment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use serde_json::json;
use strimzi_api::mirror_maker2::KafkaMirrorMaker2;

use crate::config::ClusterOperatorConfig;
use crate::model::mirror_maker2::{BYTE_ARRAY_CONVERTER, connect_cluster};

#[test]
fn the_connect_cluster_gathers_every_clusters_trust_and_secrets() {
    let mut resource: KafkaMirrorMaker2 = serde_json::from_value(json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaMirrorMaker2",
        "metadata": {"name": "mm", "namespace": "ns", "uid": "u"},
        "spec": {"replicas": 1, "target": {
            "alias": "b", "bootstrapServers": "b:9093", "groupId": "g",
            "configStorageTopic": "c", "offsetStorageTopic": "o", "statusStorageTopic": "s",
            "tls": {"trustedCertificates": [{"secretName": "b-ca", "pattern": "*.crt"}]},
            "authentication": {"type": "scram-sha-512", "username": "u",
                               "passwordSecret": {"secretName": "b-pw", "password": "p"}}
        }, "mirrors": [{"source": {
            "alias": "a", "bootstrapServers": "a:9093",
            "tls": {"trustedCertificates": [{"secretName": "a-ca", "certificate": "ca.crt"}]},
            "authentication": {"type": "tls", "certificateAndKey":
                {"secretName": "a-user", "certificate": "user.crt", "key": "user.key"}}
        }}]}
    }))
    .unwrap();
    resource.metadata.namespace = Some("ns".to_owned());
    let config = ClusterOperatorConfig::from_lookup(|name| match name {
        "STRIMZI_NAMESPACE" => Some("*".to_owned()),
        "STRIMZI_KAFKA_MIRROR_MAKER_2_IMAGES" => Some(
            "4.2.0=example.com/mm2:0 4.2.1=example.com/mm2:0 4.3.0=example.com/mm2:0 4.3.1=example.com/mm2:1"
                .to_owned(),
        ),
        _ => None,
    })
    .unwrap()
    .model;
    let cluster = connect_cluster(&resource, &config).unwrap();
    assert_eq!(cluster.image, "example.com/mm2:1");
    assert_eq!(cluster.component_name, "mm-mirrormaker2");
    assert_eq!(cluster.api_service_name, "mm-mirrormaker2-api");
    assert_eq!(cluster.kind, "KafkaMirrorMaker2");
    let secret = |data: &[(&str, &str)]| {
        data.iter()
            .map(|(key, value)| {
                (
                    (*key).to_owned(),
                    k8s_openapi::ByteString(value.as_bytes().to_vec()),
                )
            })
            .collect::<BTreeMap<_, _>>()
    };
    let inputs = crate::model::connect::ConnectInputs {
        trusted_certificate_secrets: BTreeMap::from([
            (
                "b-ca".to_owned(),
                secret(&[("ca.crt", "B1"), ("other.crt", "B2\n")]),
            ),
            (
                "a-ca".to_owned(),
                secret(&[("ca.crt", "A\n"), ("x.crt", "X")]),
            ),
        ]),
        ..Default::default()
    };
    let objects = cluster.objects(&inputs).unwrap();
    // A missing Secret or certificate is reported at the field of the cluster naming it.
    let mut missing = inputs.clone();
    missing.trusted_certificate_secrets.remove("a-ca");
    let error = cluster.validate(&missing).unwrap_err().to_string();
    assert!(
        error.contains(
            "Secret a-ca with trusted certificates \
             (spec.mirrors[0].source.tls.trustedCertificates) does not exist"
        ),
        "{error}"
    );
    missing.trusted_certificate_secrets = BTreeMap::from([
        ("a-ca".to_owned(), secret(&[("ca.crt", "A\n")])),
        ("b-ca".to_owned(), secret(&[("ca.pem", "B\n")])),
    ]);
    let error = cluster.validate(&missing).unwrap_err().to_string();
    assert!(
        error
            .contains("Secret b-ca has no certificate *.crt (spec.target.tls.trustedCertificates)"),
        "{error}"
    );
    let trusted = objects.trusted_certificates.unwrap();
    assert_eq!(
        trusted.metadata.name.as_deref(),
        Some("mm-connect-tls-trusted-certs")
    );
    let data: Vec<(String, String)> = trusted
        .data
        .unwrap()
        .into_iter()
        .map(|(key, value)| (key, String::from_utf8(value.0).unwrap()))
        .collect();
    assert_eq!(
        data,
        vec![
            ("a.crt".to_owned(), "A\n".to_owned()),
            ("b.crt".to_owned(), "B1\nB2\n".to_owned())
        ]
    );
    let rules = objects.role.rules.unwrap();
    assert_eq!(
        rules[0].resource_names.clone().unwrap(),
        vec!["mm-connect-tls-trusted-certs", "b-pw", "a-user"]
    );
    let worker = &objects.config_map.data.unwrap()["kafka-connect.properties"];
    assert!(
        worker.contains("ns/mm-connect-tls-trusted-certs:b.crt"),
        "{worker}"
    );
    for key in ["header.converter", "key.converter", "value.converter"] {
        assert!(
            worker.contains(&format!("{key}={BYTE_ARRAY_CONVERTER}\n")),
            "{worker}"
        );
    }
    let pod = serde_json::to_value(&objects.pod_set.spec.pods[0]).unwrap();
    let env = &pod["spec"]["containers"][0]["env"];
    assert!(
        env.as_array()
            .unwrap()
            .contains(&json!({"name": "KAFKA_MIRRORMAKER_2_CLUSTERS", "value": "b;a"})),
        "{env}"
    );
}
