//! Cruise Control on the real-node environment, from Strimzi's Kafka image (which our image
//! build gives Cruise Control and its metrics reporter): a Kafka with `cruiseControl` gets the
//! Cruise Control Deployment, whose REST API answers over TLS with the operators' API users
//! only, the brokers report their metrics to it, and its load monitor fills up.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::time::Instant;

use serde_json::{Value, json};
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::environment::TestEnv;
use strimzi_tests::layout::free_port;
use strimzi_tests::network::NodeNetwork;
use support::real_nodes::{
    binaries, bootstrap, cluster_ca_file, component_pod, eventually, persistent_cluster,
    secret_value,
};
use support::{apply, ready};

const CLUSTER: &str = "cc";

fn env() -> &'static TestEnv {
    support::real_nodes::env_with_operator_image()
}

/// One controller, three brokers, the topic operator and Cruise Control with short metric
/// windows, so that it has a load model within a minute or two instead of Strimzi's five.
fn documents() -> Vec<Value> {
    let mut documents = persistent_cluster(
        CLUSTER,
        (1, 3),
        &json!({
            "offsets.topic.replication.factor": 2,
            "transaction.state.log.replication.factor": 2,
            "transaction.state.log.min.isr": 1,
            "default.replication.factor": 2,
            "cruise.control.metrics.reporter.metrics.reporting.interval.ms": 10000,
        }),
        false,
    );
    let kafka = documents
        .iter_mut()
        .find(|document| document["kind"] == "Kafka")
        .unwrap();
    kafka["spec"]["entityOperator"] = json!({"topicOperator": {}});
    kafka["spec"]["cruiseControl"] = json!({
        "jvmOptions": {"-Xms": "256m", "-Xmx": "512m"},
        "config": {
            "partition.metrics.window.ms": 10000,
            "num.partition.metrics.windows": 1,
            "broker.metrics.window.ms": 10000,
            "num.broker.metrics.windows": 5,
            "metric.sampling.interval.ms": 10000,
            "min.valid.partition.ratio": 0.5,
        },
    });
    documents
}

/// `GET <path>` on Cruise Control's REST API at `pod_ip` from inside the nodes' network, over
/// TLS checked against the cluster CA for the Service's name, as `user` (none: no
/// credentials): the status code and body.
fn cruise_control_get(
    network: &NodeNetwork,
    ns: &str,
    pod_ip: &str,
    ca_file: &std::path::Path,
    user: Option<(&str, &str)>,
    path: &str,
) -> Result<(u16, String), String> {
    let host = format!("{CLUSTER}-cruise-control.{ns}.svc");
    let prefix = network.exec_prefix();
    let mut command = std::process::Command::new(&prefix[0]);
    command.args(&prefix[1..]).args([
        "curl",
        "--silent",
        "--show-error",
        "--max-time",
        "20",
        "--cacert",
        ca_file.to_str().unwrap(),
        "--resolve",
        &format!("{host}:9090:{pod_ip}"),
        "--write-out",
        "\n%{http_code}",
    ]);
    if let Some((name, password)) = user {
        command.args(["--user", &format!("{name}:{password}")]);
    }
    let output = command
        .arg(format!("https://{host}:9090{path}"))
        .output()
        .map_err(|error| format!("curl: {error}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').ok_or("no status code")?;
    Ok((
        code.trim().parse().map_err(|_| "status code")?,
        body.to_owned(),
    ))
}

#[tokio::test]
async fn cruise_control_runs_and_the_brokers_report_to_it() {
    let env = env();
    let client = env.client().await;
    let network = env.network().expect("a real-node environment");
    let ns = env.namespace("cc").await;
    let operator_port = free_port().unwrap();
    let _operator = support::spawn_cluster_operator(env, binaries(), &ns, operator_port, &[]);
    let applied = Instant::now();
    for document in documents() {
        apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;
    // Ready waits for Cruise Control's Deployment too. A figure, not an assertion.
    println!(
        "figure: Kafka (1 controller, 3 brokers) with Cruise Control applied to Ready on a real node in {:.1}s",
        applied.elapsed().as_secs_f64()
    );
    let pod = component_pod(&client, &ns, &format!("{CLUSTER}-cruise-control")).await;
    let pod_ip = pod.status.unwrap().pod_ip.unwrap();
    let ca = cluster_ca_file(&client, &ns, CLUSTER).await;
    let api_secret = format!("{CLUSTER}-cruise-control-api");
    let password = String::from_utf8(
        secret_value(&client, &ns, &api_secret, "rebalance-operator.password").await,
    )
    .unwrap();
    let admin = Some(("rebalance-operator", password.as_str()));
    let state_path = "/kafkacruisecontrol/state?json=true";

    // The REST API asks for credentials and takes the operator's.
    let (status, _) = cruise_control_get(network, &ns, &pod_ip, &ca, None, state_path).unwrap();
    assert_eq!(status, 401, "the REST API answers without credentials");
    let (status, _) = cruise_control_get(
        network,
        &ns,
        &pod_ip,
        &ca,
        Some(("rebalance-operator", "wrong")),
        state_path,
    )
    .unwrap();
    assert_eq!(status, 401, "the REST API takes a wrong password");

    // The brokers' metrics reporter writes to its topic, and the load monitor gets windows.
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(&kafka, "plain"),
    );
    eventually("the metrics reporter's topic", || {
        plain.describe("strimzi.cruisecontrol.metrics")
    })
    .await;
    let started = Instant::now();
    let state: Value = eventually("a load model with valid windows", || {
        let (status, body) = cruise_control_get(network, &ns, &pod_ip, &ca, admin, state_path)?;
        if status != 200 {
            return Err(format!("{status}: {body}"));
        }
        let state: Value = serde_json::from_str(&body).map_err(|error| error.to_string())?;
        let windows = state["MonitorState"]["numValidPartitionsWindows"]
            .as_i64()
            .or_else(|| state["MonitorState"]["numValidWindows"].as_i64())
            .unwrap_or(0);
        (windows > 0)
            .then_some(state.clone())
            .ok_or_else(|| format!("no valid window yet: {}", state["MonitorState"]))
    })
    .await;
    println!(
        "figure: Cruise Control's load model had a valid window {:.1}s after the Kafka was Ready",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(state["ExecutorState"]["state"], "NO_TASK_IN_PROGRESS");
}
