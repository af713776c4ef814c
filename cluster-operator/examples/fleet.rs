//! Fleet benchmark of the cluster operator (issue 44): for each fleet size N (default 1, 10,
//! 50 and 100), one operator process and one fresh namespace, N Kafka clusters of 3
//! controllers and 3 brokers applied together (kwok makes the pods Ready; no Kafka runs in
//! them). For each N it prints and records:
//!
//! - the time from the first apply to every pod created and to every Kafka Ready;
//! - the Kafka reconciliation time, p50 and p99 (from the operator's
//!   `strimzi_reconciliations_duration_seconds` histogram), while the fleet is created and
//!   during the no-op periodic pass that follows;
//! - the Kubernetes requests per second the operator made (reads: gets and lists; writes:
//!   applies, creates, patches, deletes), by verb, in both phases; watches are streams and not
//!   counted;
//! - the no-op pass: Kafka reconciliations, writes (there should be none) and reads per
//!   reconciliation;
//! - the operator's peak and steady RSS and the CPU seconds it used in both phases;
//! - the cost per cluster (time to Ready, steady RSS, CPU seconds of the pass), to see how it
//!   grows with N.
//!
//! Prints a table and writes the rows as JSON to `FLEET_BENCH_OUTPUT` (default
//! `target/fleet-bench.json`). Asserts nothing: figures for the README.
//!
//! ```text
//! cargo run --release -p strimzi-cluster-operator --example fleet            # 1 10 50 100
//! cargo run --release -p strimzi-cluster-operator --example fleet -- 10 200  # other sizes
//! ```
//!
//! `FLEET_BENCH_INTERVAL_SECONDS` (default 60) is the operator's full reconciliation
//! interval, and the no-op window is one interval and 10 seconds.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use serde::Serialize;
use strimzi_api::kafka::Kafka;
use strimzi_tests::measure::{
    cpu_seconds, growth_by_labels, histogram_quantile, http_get, metric, metric_with_label, rss_mib,
};

/// Pods of one cluster: 3 controllers and 3 brokers.
const NODES: usize = 6;
/// How long a fleet may take to be created, or a namespace to go.
const PATIENCE: Duration = Duration::from_secs(900);
/// The reconciliation time histogram.
const DURATIONS: &str = "strimzi_reconciliations_duration_seconds";
/// Kafka reconciliations only.
const KAFKA: &str = "kind=\"Kafka\"";

/// The figures of one fleet size.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    clusters: usize,
    /// From the first apply to every pod created, seconds.
    pods_created_seconds: f64,
    /// From the first apply to every Kafka Ready, seconds.
    ready_seconds: f64,
    creation: Phase,
    no_op_pass: Phase,
    /// Writes in the no-op pass.
    no_op_writes: f64,
    /// Reads per Kafka reconciliation in the no-op pass.
    no_op_reads_per_reconciliation: f64,
    peak_rss_mib: f64,
    steady_rss_mib: f64,
    /// `ready_seconds` per cluster.
    ready_seconds_per_cluster: f64,
    /// Steady RSS above the start-up RSS, per cluster.
    steady_rss_mib_per_cluster: f64,
    /// CPU seconds of the no-op pass per cluster.
    no_op_cpu_seconds_per_cluster: f64,
}

/// What the operator did in one phase.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Phase {
    seconds: f64,
    kafka_reconciliations: f64,
    kafka_reconciliation_p50_seconds: Option<f64>,
    kafka_reconciliation_p99_seconds: Option<f64>,
    reads_per_second: f64,
    writes_per_second: f64,
    /// Requests per second by verb, reads and writes.
    requests_per_second_by_verb: BTreeMap<String, f64>,
    cpu_seconds: f64,
}

/// The operator's `/metrics`, CPU time and the clock at one moment.
struct Snapshot {
    metrics: String,
    cpu: f64,
    at: Instant,
}

impl Snapshot {
    fn take(port: u16, pid: u32) -> Self {
        Self {
            metrics: http_get(port, "/metrics"),
            cpu: cpu_seconds(pid),
            at: Instant::now(),
        }
    }

    /// What happened from `self` to `later`.
    fn phase_until(&self, later: &Snapshot) -> Phase {
        let seconds = later.at.duration_since(self.at).as_secs_f64();
        let delta = |name: &str| metric(&later.metrics, name) - metric(&self.metrics, name);
        let rate = |count: f64| if seconds > 0.0 { count / seconds } else { 0.0 };
        let mut by_verb: BTreeMap<String, f64> = BTreeMap::new();
        for name in [
            "strimzi_operator_api_reads_total",
            "strimzi_operator_api_writes_total",
        ] {
            for (labels, count) in growth_by_labels(name, &self.metrics, &later.metrics) {
                let verb = labels
                    .split("verb=\"")
                    .nth(1)
                    .and_then(|rest| rest.split('"').next())
                    .unwrap_or("other")
                    .to_owned();
                *by_verb.entry(verb).or_default() += count;
            }
        }
        let quantile = |q: f64| {
            histogram_quantile(&self.metrics, &later.metrics, DURATIONS, KAFKA, q)
                .map(|value| (value * 1000.0).round() / 1000.0)
        };
        Phase {
            seconds,
            kafka_reconciliations: metric_with_label(
                &later.metrics,
                "strimzi_reconciliations_total",
                KAFKA,
            ) - metric_with_label(
                &self.metrics,
                "strimzi_reconciliations_total",
                KAFKA,
            ),
            kafka_reconciliation_p50_seconds: quantile(0.5),
            kafka_reconciliation_p99_seconds: quantile(0.99),
            reads_per_second: rate(delta("strimzi_operator_api_reads_total")),
            writes_per_second: rate(delta("strimzi_operator_api_writes_total")),
            requests_per_second_by_verb: by_verb
                .into_iter()
                .map(|(verb, count)| (verb, (rate(count) * 100.0).round() / 100.0))
                .collect(),
            cpu_seconds: later.cpu - self.cpu,
        }
    }
}

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|arg| arg.parse().expect("fleet sizes are numbers"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1, 10, 50, 100]
    } else {
        sizes
    };
    let interval = Duration::from_secs(
        std::env::var("FLEET_BENCH_INTERVAL_SECONDS")
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(60),
    );
    let binaries = support::build_operator_binaries();
    let env = support::env();
    let client = env.client().await;
    println!(
        "| clusters | pods created | Ready | Kafka reconciliation p50 / p99 (creation) | reads/s, writes/s (creation) | no-op pass: reconciliations, writes, reads per reconciliation, p50 / p99 | peak / steady RSS | CPU s creation / no-op pass |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for clusters in sizes {
        let row = fleet(env, &client, &binaries, clusters, interval).await;
        println!("{}", table_row(&row));
        rows.push(row);
    }
    let output = std::env::var("FLEET_BENCH_OUTPUT").unwrap_or_else(|_| {
        strimzi_tests::reference::workspace_root()
            .join("target/fleet-bench.json")
            .display()
            .to_string()
    });
    std::fs::write(&output, serde_json::to_string_pretty(&rows).unwrap()).unwrap();
    println!("(pods are simulated by kwok; no Kafka runs in them) rows written to {output}");
}

/// A duration for the table.
fn seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| format!("{value:.3} s"))
}

/// The table row of `row`; requests by verb and the per-cluster figures are in the JSON.
fn table_row(row: &Row) -> String {
    format!(
        "| {} | {:.1} s | {:.1} s | {} / {} | {:.1}, {:.1} | {:.0}, {:.0}, {:.1}, {} / {} | {:.1} / {:.1} MiB | {:.1} / {:.2} |",
        row.clusters,
        row.pods_created_seconds,
        row.ready_seconds,
        seconds(row.creation.kafka_reconciliation_p50_seconds),
        seconds(row.creation.kafka_reconciliation_p99_seconds),
        row.creation.reads_per_second,
        row.creation.writes_per_second,
        row.no_op_pass.kafka_reconciliations,
        row.no_op_writes,
        row.no_op_reads_per_reconciliation,
        seconds(row.no_op_pass.kafka_reconciliation_p50_seconds),
        seconds(row.no_op_pass.kafka_reconciliation_p99_seconds),
        row.peak_rss_mib,
        row.steady_rss_mib,
        row.creation.cpu_seconds,
        row.no_op_pass.cpu_seconds,
    )
}

/// Creates a fleet of `clusters` in a namespace of its own under an operator of its own,
/// measures it, then removes both.
async fn fleet(
    env: &strimzi_tests::environment::TestEnv,
    client: &Client,
    binaries: &std::path::Path,
    clusters: usize,
    interval: Duration,
) -> Row {
    let ns = env.namespace(&format!("fleet-{clusters}")).await;
    let port = strimzi_tests::layout::free_port().unwrap();
    let interval_ms = interval.as_millis().to_string();
    let operator = support::spawn_cluster_operator(
        env,
        binaries,
        &ns,
        port,
        &[
            ("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", &interval_ms),
            ("STRIMZI_LOG_LEVEL", "WARN"),
        ],
    );
    let pid = operator.pid();
    let started = Instant::now();
    while !http_get(port, "/ready").contains(" 200 ") {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "operator not ready; see {}",
            operator.log().display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let idle_rss = rss_mib(pid, "VmRSS");
    let names: Vec<String> = (0..clusters).map(|i| format!("c{i}")).collect();
    let before = Snapshot::take(port, pid);
    for name in &names {
        for document in support::cluster_with_own_pool_names(name, 3, 3) {
            support::apply(client, &ns, &document).await;
        }
    }
    wait_until(&format!("every pod of {clusters} clusters"), || async {
        let count = pods_of_complete_clusters(client, &ns).await;
        (count == clusters).then_some(()).ok_or(count)
    })
    .await;
    let pods_created_seconds = before.at.elapsed().as_secs_f64();
    wait_until(&format!("{clusters} Kafkas Ready"), || async {
        let ready = ready_kafkas(client, &ns).await;
        (ready == clusters).then_some(()).ok_or(ready)
    })
    .await;
    let ready = Snapshot::take(port, pid);
    let ready_seconds = ready.at.duration_since(before.at).as_secs_f64();
    let peak_rss_mib = rss_mib(pid, "VmHWM");
    // Whatever the creation set off settles, then a whole periodic pass with nothing to do.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let quiet = Snapshot::take(port, pid);
    tokio::time::sleep(interval + Duration::from_secs(10)).await;
    let after_pass = Snapshot::take(port, pid);
    let steady_rss_mib = rss_mib(pid, "VmRSS");
    let creation = before.phase_until(&ready);
    let no_op_pass = quiet.phase_until(&after_pass);
    let no_op_writes = metric(&after_pass.metrics, "strimzi_operator_api_writes_total")
        - metric(&quiet.metrics, "strimzi_operator_api_writes_total");
    let no_op_reads = metric(&after_pass.metrics, "strimzi_operator_api_reads_total")
        - metric(&quiet.metrics, "strimzi_operator_api_reads_total");
    let per_cluster = |value: f64| value / clusters as f64;
    let row = Row {
        clusters,
        pods_created_seconds,
        ready_seconds,
        no_op_writes,
        no_op_reads_per_reconciliation: if no_op_pass.kafka_reconciliations > 0.0 {
            no_op_reads / no_op_pass.kafka_reconciliations
        } else {
            0.0
        },
        peak_rss_mib,
        steady_rss_mib,
        ready_seconds_per_cluster: per_cluster(ready_seconds),
        steady_rss_mib_per_cluster: per_cluster(steady_rss_mib - idle_rss),
        no_op_cpu_seconds_per_cluster: per_cluster(no_op_pass.cpu_seconds),
        creation,
        no_op_pass,
    };
    drop(operator);
    remove_namespace(client, &ns).await;
    row
}

/// How many clusters of the namespace have all their pods.
async fn pods_of_complete_clusters(client: &Client, ns: &str) -> usize {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut per_cluster: BTreeMap<String, usize> = BTreeMap::new();
    for pod in pods
        .list_metadata(&ListParams::default().labels("strimzi.io/kind=Kafka"))
        .await
        .unwrap()
        .items
    {
        if let Some(cluster) = pod.labels().get("strimzi.io/cluster")
            && pod.labels().contains_key("strimzi.io/pool-name")
        {
            *per_cluster.entry(cluster.clone()).or_default() += 1;
        }
    }
    per_cluster
        .values()
        .filter(|count| **count >= NODES)
        .count()
}

/// How many Kafkas of the namespace are Ready, done reconciling their latest spec.
async fn ready_kafkas(client: &Client, ns: &str) -> usize {
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    kafkas
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter(|kafka| support::is_ready(kafka))
        .count()
}

/// Polls `check` every half second until it is `Ok`, for up to [`PATIENCE`].
async fn wait_until<T, E, F, Fut>(what: &str, check: F) -> T
where
    E: std::fmt::Debug,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    strimzi_tests::resources::eventually_ok_every(what, PATIENCE, Duration::from_millis(500), check)
        .await
}

/// Deletes namespace `ns` and waits until it is gone, so that the next fleet starts on an
/// API server without it.
async fn remove_namespace(client: &Client, ns: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let _ = namespaces.delete(ns, &Default::default()).await;
    wait_until(&format!("namespace {ns} removed"), || async {
        match namespaces.get_opt(ns).await {
            Ok(None) => Ok(()),
            Ok(Some(_)) => Err("still there".to_owned()),
            Err(error) => Err(error.to_string()),
        }
    })
    .await;
}
