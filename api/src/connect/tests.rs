//! Tests of the KafkaConnect types, and the example round-trip check shared with the other
//! Connect-family kinds.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;
use crate::document::{DocumentError, from_value, unknown_fields, yaml_documents};

fn reference_dir() -> PathBuf {
    std::env::var_os("STRIMZI_REFERENCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../shared/strimzi-reference"
            ))
        })
}

fn yaml_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(&path, found);
        } else if path
            .extension()
            .is_some_and(|ext| ext == "yaml" || ext == "yml")
        {
            found.push(path);
        }
    }
}

/// Equality of JSON values where numbers compare by value (`1` equals `1.0`).
fn same_json(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, x)| b.get(key).is_some_and(|y| same_json(x, y)))
        }
        _ => left == right,
    }
}

/// Checks that every example document of `kind` in the reference directory parses without
/// unknown fields and serializes back to the same JSON. When the examples are present, at
/// least one document of `kind` must be among them.
pub(crate) fn check_examples<K: DeserializeOwned + Serialize>(kind: &str) {
    let examples = reference_dir().join("examples");
    let mut files = Vec::new();
    yaml_files(&examples, &mut files);
    files.sort();
    let mut checked = 0;
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let documents = yaml_documents(&text).unwrap();
        for document in documents
            .into_iter()
            .filter(|document| document["kind"] == json!(kind))
        {
            let unknown = unknown_fields::<K>(&document).unwrap();
            assert!(
                unknown.is_empty(),
                "{}: unknown {unknown:?}",
                file.display()
            );
            let typed: K = from_value(document.clone()).unwrap();
            let written = serde_json::to_value(&typed).unwrap();
            assert!(
                same_json(&written, &document),
                "{}: {written} differs from {document}",
                file.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked > 0 || !examples.is_dir(),
        "no {kind} examples in {}",
        examples.display()
    );
}

#[test]
fn examples_round_trip() {
    check_examples::<KafkaConnect>("KafkaConnect");
}

#[test]
fn connector_examples_round_trip() {
    check_examples::<crate::connector::KafkaConnector>("KafkaConnector");
}

fn full_document() -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaConnect",
        "metadata": {"name": "connect"},
        "spec": {
            "version": "4.0.0",
            "replicas": 3,
            "image": "example/connect:1",
            "bootstrapServers": "kafka:9093",
            "groupId": "connect",
            "configStorageTopic": "c",
            "statusStorageTopic": "s",
            "offsetStorageTopic": "o",
            "tls": {"trustedCertificates": [{"secretName": "ca", "pattern": "*.crt"}]},
            "authentication": {"type": "scram-sha-256", "username": "u",
                               "passwordSecret": {"secretName": "p", "password": "pw"}},
            "config": {"config.storage.replication.factor": -1, "key.converter": "x"},
            "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "2Gi"}},
            "livenessProbe": {"initialDelaySeconds": 10, "timeoutSeconds": 5},
            "readinessProbe": {"periodSeconds": 3},
            "jvmOptions": {"-Xmx": "1g", "-Xms": "512m"},
            "jmxOptions": {"authentication": {"type": "password"}},
            "logging": {"type": "external",
                        "valueFrom": {"configMapKeyRef": {"name": "logs", "key": "log4j2.properties"}}},
            "clientRackInitImage": "example/init:1",
            "rack": {"type": "environment-variable", "envVarName": "ZONE"},
            "metricsConfig": {"type": "strimziMetricsReporter", "values": {"allowList": ["kafka_.*"]}},
            "tracing": {"type": "opentelemetry"},
            "template": {
                "buildConfig": {"metadata": {"labels": {"a": "b"}}, "pullSecret": "pull"},
                "buildServiceAccount": {"metadata": {"annotations": {"x": "y"}}},
                "jmxSecret": {"metadata": {"labels": {"j": "k"}}},
                "serviceAccount": {"metadata": {"labels": {"s": "a"}}},
                "clusterRoleBinding": {"metadata": {"labels": {"c": "r"}}},
                "podSet": {"metadata": {"labels": {"p": "s"}}}
            },
            "build": {
                "output": {"type": "imagestream", "image": "connect:latest"},
                "plugins": [{"name": "file", "artifacts": [
                    {"type": "jar", "url": "https://example.com/f.jar"}
                ]}]
            },
            "plugins": [{"name": "mounted", "artifacts": [
                {"type": "image", "reference": "example/plugin:1"}
            ]}]
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}],
            "observedGeneration": 2,
            "url": "http://connect-connect-api:8083",
            "connectorPlugins": [{"class": "org.example.Source", "type": "source", "version": "1.0"}],
            "replicas": 3,
            "labelSelector": "strimzi.io/cluster=connect"
        }
    })
}

#[test]
fn connect_round_trips() {
    let document = full_document();
    assert!(
        unknown_fields::<KafkaConnect>(&document)
            .unwrap()
            .is_empty()
    );
    let connect: KafkaConnect = from_value(document.clone()).unwrap();
    let build = connect.spec.build.as_ref().unwrap();
    assert_eq!(build.output.type_name(), "imagestream");
    assert_eq!(
        connect.spec.plugins.as_ref().unwrap()[0].artifacts[0],
        MountedArtifact::Image(ImageArtifact {
            reference: "example/plugin:1".into(),
            pull_policy: None,
        })
    );
    assert_eq!(serde_json::to_value(&connect).unwrap(), document);
}

#[test]
fn wrong_artifact_type_names_its_path() {
    let mut document = full_document();
    document["spec"]["build"]["plugins"][0]["artifacts"][0]["type"] = json!("war");
    let error = from_value::<KafkaConnect>(document).unwrap_err();
    let DocumentError::InvalidField { path, message } = error else {
        panic!("unexpected error {error}");
    };
    assert_eq!(path, "spec.build.plugins[0].artifacts[0]");
    assert!(message.contains("war"), "{message}");
}

#[test]
fn wrong_maven_scope_names_its_path() {
    let mut document = full_document();
    document["spec"]["build"]["plugins"][0]["artifacts"][0] = json!({"type": "maven", "group": "g", "artifact": "a", "version": "1", "includeScope": "all"});
    let error = from_value::<KafkaConnect>(document).unwrap_err();
    let DocumentError::InvalidField { path, message } = error else {
        panic!("unexpected error {error}");
    };
    assert_eq!(path, "spec.build.plugins[0].artifacts[0]");
    assert!(message.contains("includeScope"), "{message}");
}

#[test]
fn missing_required_field_is_reported() {
    let mut document = full_document();
    if let Some(spec) = document["spec"].as_object_mut() {
        spec.remove("groupId");
    }
    let error = from_value::<KafkaConnect>(document).unwrap_err();
    let DocumentError::InvalidField { path, message } = error else {
        panic!("unexpected error {error}");
    };
    assert_eq!(path, "spec");
    assert!(message.contains("groupId"), "{message}");
}
