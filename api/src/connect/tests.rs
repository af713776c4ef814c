//! Tests of the KafkaConnect types, and the example round-trip check shared with the other
//! Connect-family kinds.

use serde_json::{Value, json};

use super::*;
use crate::document::{DocumentError, from_value, unknown_fields};

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
    assert_eq!(path, "spec.build.plugins[0].artifacts[0].includeScope");
    assert!(message.contains("unknown variant `all`"), "{message}");
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
    assert_eq!(path, "spec.groupId");
    assert!(message.contains("groupId"), "{message}");
}
