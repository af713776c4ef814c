//! The configuration as our operator's pod gives it is read; anything missing or malformed
//! fails with one line naming the file, variable or key.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::time::Duration;

use strimzi_cruise_control_standin::config::{self, Role};
use strimzi_operator_common::kafka::SecurityProtocol;
use strimzi_tests::certs::TestCa;
use support::{Pod, USER};

fn pod(extra: &[(&str, &str)]) -> Pod {
    Pod::new(
        TestCa::new("cluster-ca").unwrap(),
        &[0, 1, 2],
        extra,
        "my-cluster-kafka-bootstrap:9091",
    )
}

#[test]
fn the_pods_files_are_read() {
    let pod = pod(&[
        ("partition.metrics.window.ms", "10000"),
        ("metric.sampling.interval.ms", "5000"),
        ("min.valid.partition.ratio", "0.5"),
    ]);
    let settings = pod.load().unwrap();
    assert_eq!(
        settings.kafka.bootstrap_servers,
        ["my-cluster-kafka-bootstrap:9091"]
    );
    assert_eq!(settings.kafka.security_protocol, SecurityProtocol::Ssl);
    let tls = settings.kafka.tls.as_ref().unwrap();
    assert!(tls.ca_pem.contains("BEGIN CERTIFICATE"));
    assert!(
        tls.client_identity_pem
            .as_ref()
            .unwrap()
            .contains("PRIVATE KEY")
    );
    assert_eq!(settings.api.port, 9090);
    assert!(settings.api.tls.is_some());
    let users = settings.api.users.as_ref().unwrap();
    assert_eq!(users.len(), 3);
    assert_eq!((users[0].name.as_str(), users[0].role), (USER, Role::Admin));
    assert_eq!(users[1].role, Role::User);
    assert_eq!(users[2].role, Role::Viewer);
    assert_eq!(settings.goals.supported.len(), 17);
    assert_eq!(settings.goals.hard.len(), 6);
    assert_eq!(
        settings.goals.resolve("ReplicaDistributionGoal"),
        Some("com.linkedin.kafka.cruisecontrol.analyzer.goals.ReplicaDistributionGoal")
    );
    assert_eq!(settings.goals.resolve("com.example.NoSuchGoal"), None);
    assert_eq!(settings.capacities.0.len(), 3);
    assert_eq!(settings.capacities.of(1).unwrap().disk_mb, 102_400.0);
    assert_eq!(settings.capacities.of(1).unwrap().cpu, 1.0);
    assert_eq!(settings.capacities.of(7), None);
    assert_eq!(settings.windows.window, Duration::from_secs(10));
    assert_eq!(settings.windows.sampling_interval, Duration::from_secs(5));
    assert_eq!(
        settings
            .sample_topics
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        [
            "strimzi.cruisecontrol.partitionmetricsamples",
            "strimzi.cruisecontrol.modeltrainingsamples"
        ]
    );
    assert!(
        settings
            .ignored
            .contains(&"min.valid.partition.ratio".to_owned())
    );
    assert!(
        settings
            .ignored
            .contains(&"metric.reporter.topic".to_owned())
    );
}

#[test]
fn tls_and_authentication_can_be_off() {
    let mut pod = pod(&[
        ("webserver.ssl.enable", "false"),
        ("webserver.security.enable", "false"),
    ]);
    pod.env
        .insert("STRIMZI_CC_API_SSL_ENABLED".into(), "false".into());
    pod.env
        .insert("STRIMZI_CC_API_AUTH_ENABLED".into(), "false".into());
    let settings = pod.load().unwrap();
    assert!(settings.api.tls.is_none());
    assert!(settings.api.users.is_none());
    // Kafka is still reached with mutual TLS.
    assert!(settings.kafka.tls.is_some());
}

/// The one-line error of loading `pod`.
fn failure(pod: &Pod) -> String {
    let error = pod.load().unwrap_err().to_string();
    assert!(!error.contains('\n'), "one line: {error}");
    error
}

#[test]
fn missing_variables_and_files_are_named() {
    let mut missing_bootstrap = pod(&[]);
    missing_bootstrap
        .env
        .remove("STRIMZI_KAFKA_BOOTSTRAP_SERVERS");
    assert!(failure(&missing_bootstrap).starts_with("STRIMZI_KAFKA_BOOTSTRAP_SERVERS: not set"));

    let mut bad_flag = pod(&[]);
    bad_flag
        .env
        .insert("STRIMZI_CC_API_SSL_ENABLED".into(), "yes".into());
    assert!(failure(&bad_flag).starts_with("STRIMZI_CC_API_SSL_ENABLED: \"yes\""));

    let mut disagreeing = pod(&[]);
    disagreeing
        .env
        .insert("STRIMZI_CC_API_AUTH_ENABLED".into(), "false".into());
    assert!(failure(&disagreeing).contains("webserver.security.enable is true"));

    for file in [
        "custom-config/cruisecontrol.properties",
        "custom-config/capacity.json",
        "cc-certs/cruise-control.crt",
        "cc-certs/cruise-control.key",
        "api-auth-config/cruise-control.authFile",
    ] {
        let pod = pod(&[]);
        std::fs::remove_file(pod.root().join(file)).unwrap();
        let error = failure(&pod);
        assert!(error.contains(file), "{file}: {error}");
    }
    let no_ca = pod(&[]);
    std::fs::remove_file(no_ca.root().join("cluster-ca-certs/ca.crt")).unwrap();
    assert!(failure(&no_ca).contains("cluster-ca-certs: no *.crt file"));
}

#[test]
fn malformed_files_and_keys_are_named() {
    let cases: [(&[(&str, &str)], &str); 7] = [
        (
            &[("goals", "com.example.NoSuchGoal")],
            "cruisecontrol.properties: goals: com.example.NoSuchGoal is not one of",
        ),
        (
            &[(
                "hard.goals",
                "com.linkedin.kafka.cruisecontrol.analyzer.goals.BrokerSetAwareGoal",
            )],
            "hard.goals: com.linkedin.kafka.cruisecontrol.analyzer.goals.BrokerSetAwareGoal is not among goals",
        ),
        (
            &[
                ("default.goals", &support::full(&["RackAwareGoal"])),
                (
                    "anomaly.detection.goals",
                    &support::full(&["ReplicaCapacityGoal"]),
                ),
            ],
            "anomaly.detection.goals: com.linkedin.kafka.cruisecontrol.analyzer.goals.ReplicaCapacityGoal is not among default.goals",
        ),
        (
            &[("partition.metrics.window.ms", "ten")],
            "partition.metrics.window.ms: \"ten\" is not a valid",
        ),
        (
            &[("webserver.ssl.enable", "maybe")],
            "webserver.ssl.enable: \"maybe\"",
        ),
        (
            &[("num.partition.metrics.windows", "0")],
            "must be positive",
        ),
        (&[("webserver.http.port", "99999")], "webserver.http.port"),
    ];
    for (extra, expected) in cases {
        let owned: Vec<(&str, &str)> = extra.to_vec();
        let error = failure(&pod(&owned));
        assert!(error.contains(expected), "{expected}: {error}");
    }
}

#[test]
fn malformed_credentials_and_capacities_are_named() {
    let file = std::path::Path::new("cruise-control.authFile");
    for (text, expected) in [
        ("alice secret,ADMIN\n", "line 1: no `:`"),
        (
            "# users\n\nalice: secret\n",
            "line 3: a name, a password and at least one role",
        ),
        ("alice: secret,ROOT\n", "unknown role \"ROOT\""),
    ] {
        let error = config::parse_users(file, text).unwrap_err().to_string();
        assert!(error.contains(expected), "{text:?}: {error}");
    }
    let file = std::path::Path::new("capacity.json");
    for (text, expected) in [
        ("{", "capacity.json: JSON"),
        ("{}", "brokerCapacities: missing"),
        (r#"{"brokerCapacities": []}"#, "empty"),
        (
            r#"{"brokerCapacities": [{"capacity": {}}]}"#,
            "brokerCapacities[0]: no brokerId",
        ),
        (
            r#"{"brokerCapacities": [{"brokerId": "0", "capacity": {"DISK": "x", "CPU": "1", "NW_IN": "1", "NW_OUT": "1"}}]}"#,
            "brokerCapacities[0].capacity.DISK: \"x\" is not a non-negative number",
        ),
        (
            r#"{"brokerCapacities": [{"brokerId": 0, "capacity": {"DISK": "1", "CPU": "1", "NW_IN": "1"}}]}"#,
            "capacity.NW_OUT: missing",
        ),
    ] {
        let error = config::parse_capacities(file, text)
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{text}: {error}");
    }
    // The default entry (-1) covers brokers not listed.
    let capacities = config::parse_capacities(
        file,
        r#"{"brokerCapacities": [{"brokerId": "-1", "capacity": {"DISK": 1000, "CPU": "100", "NW_IN": "1", "NW_OUT": "1"}}]}"#,
    )
    .unwrap();
    assert_eq!(capacities.of(42).unwrap().disk_mb, 1000.0);
}

#[test]
fn the_program_exits_non_zero_with_one_line_when_the_files_are_missing() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_strimzi-cruise-control-standin"))
        .env_clear()
        .env("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "localhost:9091")
        .env("STRIMZI_CC_API_SSL_ENABLED", "true")
        .env("STRIMZI_CC_API_AUTH_ENABLED", "true")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("/opt/cruise-control/custom-config/cruisecontrol.properties"),
        "{stderr}"
    );
}

#[test]
fn metrics_need_the_mounted_metrics_configuration() {
    let mut pod = pod(&[]);
    pod.env
        .insert("CRUISE_CONTROL_JMX_EXPORTER_ENABLED".into(), "true".into());
    assert!(failure(&pod).contains("custom-config/metrics-config.json"));
    std::fs::write(
        pod.paths.config_dir.join("metrics-config.json"),
        r#"{"lowercaseOutputName": true, "rules": []}"#,
    )
    .unwrap();
    assert!(pod.load().unwrap().metrics);
    pod.env
        .insert("CRUISE_CONTROL_JMX_EXPORTER_ENABLED".into(), "on".into());
    assert!(failure(&pod).starts_with("CRUISE_CONTROL_JMX_EXPORTER_ENABLED: \"on\""));
}
