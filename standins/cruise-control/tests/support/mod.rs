//! A pod's files for the stand-in, laid out as our operator mounts them (CONTRACT.md 5.1):
//! `custom-config/`, `api-auth-config/`, `cc-certs/`, `cluster-ca-certs/`, in a temporary
//! directory, with the environment the pod sets.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod fake_admin;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use strimzi_cluster_operator::model::components::cruise_control::GOALS;
use strimzi_cruise_control_standin::config::{self, ConfigError, Paths, Settings};
use strimzi_cruise_control_standin::service::StandIn;
use strimzi_tests::certs::TestCa;

/// Serves `standin`'s REST API on a free port of 127.0.0.1: the port and the server's task.
pub async fn serve(standin: Arc<StandIn>) -> (u16, tokio::task::JoinHandle<Result<(), String>>) {
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let server = tokio::spawn(strimzi_cruise_control_standin::serve(
        standin,
        tcp,
        std::future::pending(),
    ));
    (port, server)
}

/// Asks `check` every 200 ms until it gives a value; fails the test after `seconds`.
pub async fn eventually<T>(
    what: &str,
    seconds: u64,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub const USER: &str = "rebalance-operator";
pub const PASSWORD: &str = "rebalance-secret";
pub const HEALTHCHECK_PASSWORD: &str = "healthcheck-secret";
pub const SERVER_NAME: &str = "my-cluster-cruise-control.kafka.svc";

/// The 6 hard goals our operator writes (its goals are the model's `GOALS`).
pub const HARD_GOALS: [&str; 6] = [
    "RackAwareGoal",
    "ReplicaCapacityGoal",
    "DiskCapacityGoal",
    "NetworkInboundCapacityGoal",
    "NetworkOutboundCapacityGoal",
    "CpuCapacityGoal",
];

pub fn full(goals: &[&str]) -> String {
    goals
        .iter()
        .map(|goal| format!("com.linkedin.kafka.cruisecontrol.analyzer.goals.{goal}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `cruisecontrol.properties` as our operator writes it (sorted keys, Java escapes).
pub fn properties(extra: &[(&str, &str)], auth_file: &Path) -> String {
    let mut options: BTreeMap<String, String> = BTreeMap::from([
        ("partition.metrics.window.ms".into(), "300000".into()),
        ("num.partition.metrics.windows".into(), "1".into()),
        ("broker.metrics.window.ms".into(), "300000".into()),
        ("num.broker.metrics.windows".into(), "20".into()),
        (
            "completed.user.task.retention.time.ms".into(),
            "86400000".into(),
        ),
        ("goals".into(), GOALS.join(",")),
        ("default.goals".into(), GOALS.join(",")),
        ("hard.goals".into(), full(&HARD_GOALS)),
        ("anomaly.detection.goals".into(), GOALS[..4].join(",")),
        ("webserver.security.enable".into(), "true".into()),
        (
            "webserver.auth.credentials.file".into(),
            auth_file.display().to_string(),
        ),
        ("webserver.ssl.enable".into(), "true".into()),
        (
            "partition.metric.sample.store.topic".into(),
            "strimzi.cruisecontrol.partitionmetricsamples".into(),
        ),
        (
            "broker.metric.sample.store.topic".into(),
            "strimzi.cruisecontrol.modeltrainingsamples".into(),
        ),
        (
            "metric.reporter.topic".into(),
            "strimzi.cruisecontrol.metrics".into(),
        ),
    ]);
    for (key, value) in extra {
        options.insert((*key).to_owned(), (*value).to_owned());
    }
    options
        .iter()
        .map(|(key, value)| format!("{key}={}\n", value.replace('\\', "\\\\")))
        .collect()
}

/// `capacity.json` for `brokers` as our operator writes it.
pub fn capacity(brokers: &[i32]) -> String {
    let entries: Vec<serde_json::Value> = brokers
        .iter()
        .map(|id| {
            serde_json::json!({"brokerId": id, "capacity": {
                "DISK": {format!("/var/lib/kafka/data-0/kafka-log{id}"): "102400.0"},
                "CPU": {"num.cores": "1.0"}, "NW_IN": "10000.0", "NW_OUT": "10000.0"},
                "doc": format!("Capacity for Broker {id}")})
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({"brokerCapacities": entries})).unwrap()
}

/// A pod's files.
pub struct Pod {
    pub dir: tempfile::TempDir,
    pub paths: Paths,
    pub env: BTreeMap<String, String>,
    /// The CA of the REST API's certificate (the cluster CA).
    pub ca: TestCa,
}

impl Pod {
    /// Files for a cluster of `brokers` whose cluster CA is `ca` (the broker's CA when the
    /// stand-in talks to a test broker over TLS), with `client` as the stand-in's certificate.
    pub fn new(ca: TestCa, brokers: &[i32], extra: &[(&str, &str)], bootstrap: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let paths = Paths {
            config_dir: root.join("custom-config"),
            cc_certs_dir: root.join("cc-certs"),
            cluster_ca_dir: root.join("cluster-ca-certs"),
        };
        let auth_dir = root.join("api-auth-config");
        for folder in [
            &paths.config_dir,
            &paths.cc_certs_dir,
            &paths.cluster_ca_dir,
            &auth_dir,
        ] {
            std::fs::create_dir_all(folder).unwrap();
        }
        let auth_file = auth_dir.join("cruise-control.authFile");
        std::fs::write(
            &auth_file,
            format!("{USER}: {PASSWORD},ADMIN\nhealthcheck: {HEALTHCHECK_PASSWORD},USER\nviewer: viewer-secret,VIEWER\n"),
        )
        .unwrap();
        std::fs::write(auth_dir.join("rebalance-operator.password"), PASSWORD).unwrap();
        std::fs::write(auth_dir.join("healthcheck.password"), HEALTHCHECK_PASSWORD).unwrap();
        std::fs::write(
            paths.config_dir.join("cruisecontrol.properties"),
            properties(extra, &auth_file),
        )
        .unwrap();
        std::fs::write(paths.config_dir.join("capacity.json"), capacity(brokers)).unwrap();
        std::fs::write(
            paths.config_dir.join("log4j2.properties"),
            "rootLogger.level=INFO\n",
        )
        .unwrap();
        let certificate = ca
            .server(
                "my-cluster-cruise-control",
                &[
                    "my-cluster-cruise-control",
                    "my-cluster-cruise-control.kafka",
                    SERVER_NAME,
                ],
            )
            .unwrap();
        std::fs::write(
            paths.cc_certs_dir.join("cruise-control.crt"),
            format!("{}{}", certificate.cert, ca.cert_pem()),
        )
        .unwrap();
        std::fs::write(
            paths.cc_certs_dir.join("cruise-control.key"),
            &certificate.key,
        )
        .unwrap();
        std::fs::write(paths.cluster_ca_dir.join("ca.crt"), ca.cert_pem()).unwrap();
        std::fs::write(paths.cluster_ca_dir.join("ca.p12"), [0x30u8, 0x82]).unwrap();
        std::fs::write(paths.cluster_ca_dir.join("ca.password"), "x").unwrap();
        let env = BTreeMap::from([
            (
                "STRIMZI_KAFKA_BOOTSTRAP_SERVERS".to_owned(),
                bootstrap.to_owned(),
            ),
            ("STRIMZI_CC_API_SSL_ENABLED".to_owned(), "true".to_owned()),
            ("STRIMZI_CC_API_AUTH_ENABLED".to_owned(), "true".to_owned()),
            (
                "CRUISE_CONTROL_JMX_EXPORTER_ENABLED".to_owned(),
                "false".to_owned(),
            ),
            (
                "STRIMZI_KAFKA_GC_LOG_ENABLED".to_owned(),
                "false".to_owned(),
            ),
            (
                "API_HEALTHCHECK_USERNAME".to_owned(),
                "healthcheck".to_owned(),
            ),
            ("API_PORT".to_owned(), "9090".to_owned()),
            (
                "API_HEALTHCHECK_PATH".to_owned(),
                "/kafkacruisecontrol/state".to_owned(),
            ),
        ]);
        Self {
            dir,
            paths,
            env,
            ca,
        }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().to_owned()
    }

    pub fn load(&self) -> Result<Settings, ConfigError> {
        config::load(|name| self.env.get(name).cloned(), &self.paths)
    }
}
