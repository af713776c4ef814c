//! Round-trip and schema tests for the shared types.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;
use crate::document::{DocumentError, from_value};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Parses `value` into `T`, checks that writing it back gives the same JSON, returns it.
fn round_trip<T: DeserializeOwned + Serialize>(
    value: Value,
) -> Result<T, Box<dyn std::error::Error>> {
    let typed: T = serde_json::from_value(value.clone())?;
    assert_eq!(serde_json::to_value(&typed)?, value);
    Ok(typed)
}

/// The path of the field named by a failed read.
fn error_path<T: DeserializeOwned + std::fmt::Debug>(value: Value) -> String {
    match from_value::<T>(value) {
        Err(DocumentError::InvalidField { path, .. }) => path,
        other => format!("unexpected: {other:?}"),
    }
}

#[test]
fn probe_and_jvm_options() -> TestResult {
    round_trip::<Probe>(json!({
        "initialDelaySeconds": 0, "timeoutSeconds": 5, "periodSeconds": 10,
        "successThreshold": 1, "failureThreshold": 3
    }))?;
    let jvm = round_trip::<JvmOptions>(json!({
        "-XX": {"UseG1GC": "true"}, "-Xmx": "2g", "-Xms": "512m", "gcLoggingEnabled": false,
        "javaSystemProperties": [{"name": "a.b", "value": "c"}]
    }))?;
    assert_eq!(jvm.xmx.as_deref(), Some("2g"));
    let schema = serde_json::to_value(schemars::schema_for!(JvmOptions))?;
    assert_eq!(
        schema["properties"]["-Xmx"]["pattern"],
        json!("^[0-9]+[mMgG]?$")
    );
    let schema = serde_json::to_value(schemars::schema_for!(Probe))?;
    assert_eq!(schema["properties"]["timeoutSeconds"]["minimum"], json!(1));
    Ok(())
}

#[test]
fn jmx_and_tracing_unions() -> TestResult {
    let jmx = round_trip::<KafkaJmxOptions>(json!({"authentication": {"type": "password"}}))?;
    assert_eq!(
        jmx.authentication,
        Some(KafkaJmxAuthentication::Password(
            KafkaJmxAuthenticationPassword {}
        ))
    );
    round_trip::<KafkaJmxOptions>(json!({}))?;
    let tracing = round_trip::<Tracing>(json!({"type": "opentelemetry"}))?;
    assert_eq!(tracing.type_name(), "opentelemetry");
    assert_eq!(
        error_path::<KafkaJmxOptions>(json!({"authentication": {"type": "kerberos"}})),
        "authentication"
    );
    assert!(serde_json::from_value::<Tracing>(json!({"type": "jaeger"})).is_err());
    Ok(())
}

#[test]
fn logging_variants_and_schema() -> TestResult {
    let inline = round_trip::<Logging>(json!({
        "type": "inline", "loggers": {"rootLogger.level": "INFO"}
    }))?;
    assert!(matches!(inline, Logging::Inline(_)));
    let external = round_trip::<Logging>(json!({
        "type": "external",
        "valueFrom": {"configMapKeyRef": {"name": "logs", "key": "log4j2.properties"}}
    }))?;
    assert!(matches!(external, Logging::External(_)));
    assert!(serde_json::from_value::<Logging>(json!({"type": "file"})).is_err());
    assert!(serde_json::from_value::<Logging>(json!({"loggers": {}})).is_err());

    let schema = serde_json::to_value(schemars::schema_for!(Logging))?;
    assert_eq!(schema["type"], json!("object"));
    assert_eq!(schema["required"], json!(["type"]));
    assert_eq!(
        schema["properties"]["type"]["enum"],
        json!(["inline", "external"])
    );
    assert!(schema["properties"]["loggers"].is_object());
    assert!(schema["properties"]["valueFrom"].is_object());
    Ok(())
}

#[test]
fn metrics_variants() -> TestResult {
    round_trip::<MetricsConfig>(json!({
        "type": "jmxPrometheusExporter",
        "valueFrom": {"configMapKeyRef": {"name": "metrics", "key": "rules.yaml"}}
    }))?;
    let reporter = round_trip::<MetricsConfig>(json!({
        "type": "strimziMetricsReporter", "values": {"allowList": ["kafka_server.*"]}
    }))?;
    assert_eq!(reporter.type_name(), "strimziMetricsReporter");
    let schema = serde_json::to_value(schemars::schema_for!(MetricsConfig))?;
    assert!(schema["properties"]["values"].is_object());
    assert!(serde_json::from_value::<MetricsConfig>(json!({"type": "prometheus"})).is_err());
    Ok(())
}

#[test]
fn rack_enum() -> TestResult {
    let rack = round_trip::<Rack>(json!({
        "type": "environment-variable", "envVarName": "ZONE"
    }))?;
    assert_eq!(rack.r#type, Some(RackType::EnvironmentVariable));
    round_trip::<Rack>(
        json!({"type": "topology-label", "topologyKey": "topology.kubernetes.io/zone"}),
    )?;
    assert_eq!(error_path::<Rack>(json!({"type": "label"})), "type");
    Ok(())
}

#[test]
fn secrets_and_tls() -> TestResult {
    round_trip::<ClientTls>(json!({"trustedCertificates": [
        {"secretName": "ca", "certificate": "ca.crt"},
        {"secretName": "more", "pattern": "*.crt"}
    ]}))?;
    round_trip::<ClientTls>(json!({"trustedCertificates": []}))?;
    assert_eq!(
        error_path::<ClientTls>(json!({"trustedCertificates": [{"certificate": "ca.crt"}]})),
        "trustedCertificates[0].secretName"
    );
    round_trip::<PasswordSource>(json!({
        "valueFrom": {"secretKeyRef": {"name": "pw", "key": "password"}}
    }))?;
    Ok(())
}

#[test]
fn client_authentication_variants() -> TestResult {
    let tls = round_trip::<KafkaClientAuthentication>(json!({
        "type": "tls",
        "certificateAndKey": {"secretName": "user", "certificate": "user.crt", "key": "user.key"}
    }))?;
    assert!(matches!(tls, KafkaClientAuthentication::Tls(_)));
    for tag in ["scram-sha-256", "scram-sha-512", "plain"] {
        let auth = round_trip::<KafkaClientAuthentication>(json!({
            "type": tag, "username": "connect",
            "passwordSecret": {"secretName": "connect", "password": "password"}
        }))?;
        assert_eq!(auth.type_name(), tag);
    }
    let custom = round_trip::<KafkaClientAuthentication>(json!({
        "type": "custom", "sasl": true, "config": {"sasl.mechanism": "OAUTHBEARER", "n": 1}
    }))?;
    assert!(matches!(custom, KafkaClientAuthentication::Custom(_)));
    assert!(serde_json::from_value::<KafkaClientAuthentication>(json!({"type": "oauth"})).is_err());
    let error = serde_json::from_value::<KafkaClientAuthentication>(json!({
        "type": "scram-sha-512", "passwordSecret": {"secretName": "x"}
    }));
    assert!(format!("{:?}", error.err()).contains("passwordSecret"));
    Ok(())
}

#[test]
fn pod_template_round_trip() -> TestResult {
    let pod = round_trip::<PodSetPodTemplate>(json!({
        "metadata": {"labels": {"app": "kafka"}, "annotations": {"a": "b"}},
        "imagePullSecrets": [{"name": "registry"}],
        "securityContext": {"runAsUser": 1001, "fsGroup": 0},
        "terminationGracePeriodSeconds": 60,
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "kafka"}}, "topologyKey": "kubernetes.io/hostname"}
        ]}},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "kafka", "effect": "NoSchedule"}],
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        ],
        "priorityClassName": "high",
        "schedulerName": "default-scheduler",
        "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a.example"]}],
        "dnsPolicy": "ClusterFirstWithHostNet",
        "dnsConfig": {"nameservers": ["1.1.1.1"], "options": [{"name": "ndots", "value": "2"}]},
        "enableServiceLinks": false,
        "tmpDirSizeLimit": "10Mi",
        "volumes": [
            {"name": "s", "secret": {"secretName": "s"}},
            {"name": "c", "configMap": {"name": "c", "items": [{"key": "k", "path": "p"}]}},
            {"name": "e", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
            {"name": "p", "persistentVolumeClaim": {"claimName": "data", "readOnly": true}},
            {"name": "x", "csi": {"driver": "secrets-store.csi.k8s.io", "readOnly": true}},
            {"name": "i", "image": {"reference": "quay.io/x/y:1", "pullPolicy": "IfNotPresent"}}
        ],
        "templatedVolumes": [{"name": "t", "persistentVolumeClaim": {"claimName": "data-$(STRIMZI_POD_NAME)"}}],
        "hostUsers": false
    }))?;
    assert_eq!(pod.pod.dns_policy, Some(DnsPolicy::ClusterFirstWithHostNet));
    assert_eq!(pod.templated_volumes.as_ref().map(Vec::len), Some(1));
    assert_eq!(
        error_path::<PodTemplate>(
            json!({"volumes": [{"name": "e", "emptyDir": {"medium": "Disk"}}]})
        ),
        "volumes[0].emptyDir.medium"
    );
    // Only pods of a StrimziPodSet offer templated volumes.
    let templated = json!({"templatedVolumes": [], "hostUsers": true});
    assert_eq!(
        crate::document::unknown_fields::<PodTemplate>(&templated)?,
        vec!["templatedVolumes".to_owned()]
    );
    assert!(crate::document::unknown_fields::<PodSetPodTemplate>(&templated)?.is_empty());
    let pod_set_schema = serde_json::to_value(schemars::schema_for!(PodSetPodTemplate))?;
    for property in ["templatedVolumes", "tmpDirSizeLimit", "volumes"] {
        assert!(
            pod_set_schema["properties"][property].is_object(),
            "{property}"
        );
    }
    assert_eq!(
        error_path::<PodTemplate>(json!({"dnsPolicy": "Cluster"})),
        "dnsPolicy"
    );
    let schema = serde_json::to_value(schemars::schema_for!(PodTemplate))?;
    assert_eq!(
        schema["properties"]["terminationGracePeriodSeconds"]["minimum"],
        json!(0)
    );
    Ok(())
}

#[test]
fn container_and_other_templates() -> TestResult {
    round_trip::<ContainerTemplate>(json!({
        "env": [
            {"name": "A", "value": "1"},
            {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            {"name": "C", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k", "optional": true}}}
        ],
        "securityContext": {"readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "s", "mountPath": "/mnt/s", "readOnly": true}]
    }))?;
    let service = round_trip::<InternalServiceTemplate>(json!({
        "metadata": {"labels": {"a": "b"}},
        "ipFamilyPolicy": "PreferDualStack",
        "ipFamilies": ["IPv6", "IPv4"]
    }))?;
    assert_eq!(
        service.ip_families,
        Some(vec![IpFamily::Ipv6, IpFamily::Ipv4])
    );
    assert_eq!(
        service.ip_family_policy,
        Some(IpFamilyPolicy::PreferDualStack)
    );
    assert_eq!(
        error_path::<InternalServiceTemplate>(json!({"ipFamilies": ["IPv5"]})),
        "ipFamilies[0]"
    );
    round_trip::<PodDisruptionBudgetTemplate>(json!({"metadata": {}, "maxUnavailable": 0}))?;
    let deployment = round_trip::<DeploymentTemplate>(json!({"deploymentStrategy": "Recreate"}))?;
    assert_eq!(
        deployment.deployment_strategy,
        Some(DeploymentStrategy::Recreate)
    );
    assert_eq!(
        error_path::<DeploymentTemplate>(json!({"deploymentStrategy": "BlueGreen"})),
        "deploymentStrategy"
    );
    round_trip::<ResourceTemplate>(json!({"metadata": {"annotations": {"x": "y"}}}))?;
    Ok(())
}
