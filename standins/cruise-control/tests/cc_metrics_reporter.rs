//! Our broker-side metrics reporter (`metrics-reporter/`, Java): compiled with `javac`
//! against the test environment's Kafka jars, run as a broker runs it (configure, init) by a
//! small driver against the local test broker: it creates the metrics topic with the
//! configured partitions and publishes JSON records keyed by the broker id.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::process::Command;

use strimzi_operator_common::kafka::{AdminClient, AdminConfig, KafkaAdmin};
use strimzi_tests::kafka::KafkaBroker;
use strimzi_tests::layout::{kafka_libs, log_dir};

const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");
const TOPIC: &str = "strimzi.cruisecontrol.metrics";

#[test]
fn the_reporter_creates_its_topic_and_publishes_json_records() {
    let libs = kafka_libs().unwrap_or_else(|error| panic!("{error}"));
    let classes = tempfile::tempdir().unwrap();
    let reporter = Path::new(CRATE_DIR).join(
        "metrics-reporter/src/main/java/com/linkedin/kafka/cruisecontrol/metricsreporter/CruiseControlMetricsReporter.java",
    );
    let classpath = format!("{}/*", libs.display());
    let compiled = Command::new("javac")
        .args(["--release", "17", "-Xlint:all", "-Werror", "-d"])
        .arg(classes.path())
        .args(["-cp", &classpath])
        .arg(&reporter)
        .output()
        .expect("javac (a JDK 17) is needed");
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );

    let logs = log_dir("cc-metrics-reporter").unwrap();
    let broker = KafkaBroker::start(&logs).unwrap_or_else(|error| panic!("{error}"));
    let bootstrap = broker.listener("plain").unwrap().bootstrap.clone();
    let driver = Path::new(CRATE_DIR).join("metrics-reporter/src/test/java/ReporterDriver.java");
    let run = Command::new("java")
        .arg("-cp")
        .arg(format!("{}:{classpath}", classes.path().display()))
        .arg(&driver)
        .args([&bootstrap, TOPIC])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("KEY 7"), "{stdout}");
    let value = stdout
        .lines()
        .find_map(|line| line.strip_prefix("VALUE "))
        .unwrap();
    let record: serde_json::Value = serde_json::from_str(value).unwrap();
    assert_eq!(record["brokerId"], 7);
    assert!(record["time"].as_i64().unwrap() > 0);
    assert!(record["metrics"]["heapUsedBytes"].as_f64().unwrap() > 0.0);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let admin = AdminClient::new(AdminConfig::plaintext(&bootstrap)).unwrap();
    let topics = runtime
        .block_on(admin.describe_topics(&[TOPIC.to_owned()]))
        .unwrap();
    let topic = topics[TOPIC].as_ref().unwrap();
    assert_eq!(topic.partitions.len(), 2, "num.partitions is honoured");
}
