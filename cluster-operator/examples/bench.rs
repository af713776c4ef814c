//! Benchmark of the cluster operator on the real test environment (kwok makes the pods
//! Ready): start-up time to `/ready`; for 1 Kafka cluster of 3 controllers and 3 brokers, then
//! 5 applied together, then 15 more, the time from apply to the first cluster's pods all
//! created, to every pod created and to every cluster Ready; the operator's peak and steady
//! RSS; and the Kubernetes writes and reads (gets and lists; watches are streams and not
//! counted) of periodic reconciliations when nothing changed, with the reads per
//! reconciliation on the way to Ready. Prints figures and asserts none.
//!
//! ```text
//! cargo run --release -p strimzi-cluster-operator --example bench
//! ```
//!
//! The operator runs as a child process (built in the same profile), so its RSS is its own.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use strimzi_tests::measure::{growth_by_labels, http_get, metric, metric_with_label, rss_mib};

/// Full reconciliation interval of the benchmarked operator.
const INTERVAL: Duration = Duration::from_secs(20);
/// Clusters applied together after the first one, as in the side-by-side run with Strimzi's
/// operator (its figures: 26 to 36 s for all pods of 5 clusters, 84 s for 15 more).
const FIRST: usize = 5;
/// Clusters applied together after those.
const MORE: usize = 15;

#[tokio::main]
async fn main() {
    let binaries = support::build_operator_binaries();
    let env = support::env();
    let client = env.client().await;
    let one = env.namespace("bench-one").await;
    let many = env.namespace("bench-many").await;
    let port = strimzi_tests::layout::free_port().unwrap();
    let interval = INTERVAL.as_millis().to_string();

    let started = Instant::now();
    let operator = support::spawn_cluster_operator(
        env,
        &binaries,
        &format!("{one},{many}"),
        port,
        &[
            ("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", &interval),
            ("STRIMZI_LOG_LEVEL", "WARN"),
        ],
    );
    while !http_get(port, "/ready").starts_with("HTTP/1.1 200")
        && !http_get(port, "/ready").starts_with("HTTP/1.0 200")
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "operator not ready; see {}",
            operator.log().display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let startup = started.elapsed();
    println!(
        "start-up to /ready:                 {:>8.0} ms",
        startup.as_secs_f64() * 1000.0
    );
    println!(
        "RSS after start-up:                 {:>8.1} MiB",
        rss_mib(operator.pid(), "VmRSS")
    );

    let before = http_get(port, "/metrics");
    let single = apply_and_time(&client, &one, &cluster_names("single", 1)).await;
    println!(
        "apply -> Ready, 1 cluster (3+3):    {:>8.2} s ({}), {}",
        single.ready.as_secs_f64(),
        single.pods_line(),
        reads_per_reconciliation(&before, &http_get(port, "/metrics"))
    );
    let five = apply_and_time(&client, &many, &cluster_names("first", FIRST)).await;
    println!(
        "apply -> Ready, {FIRST} clusters (3+3):   {:>8.2} s ({})",
        five.ready.as_secs_f64(),
        five.pods_line(),
    );
    let before = http_get(port, "/metrics");
    let more = apply_and_time(&client, &many, &cluster_names("more", MORE)).await;
    println!(
        "apply -> Ready, {MORE} more clusters:   {:>8.2} s ({}), {}",
        more.ready.as_secs_f64(),
        more.pods_line(),
        reads_per_reconciliation(&before, &http_get(port, "/metrics"))
    );
    println!(
        "peak RSS:                           {:>8.1} MiB",
        rss_mib(operator.pid(), "VmHWM")
    );

    // Periodic reconciliations with nothing changed.
    let before = http_get(port, "/metrics");
    tokio::time::sleep(INTERVAL + Duration::from_secs(5)).await;
    let after = http_get(port, "/metrics");
    let delta = |name: &str| metric(&after, name) - metric(&before, name);
    let reconciliations = delta("strimzi_reconciliations_total");
    let writes = delta("strimzi_operator_api_writes_total");
    let reads = delta("strimzi_operator_api_reads_total");
    println!(
        "periodic reconciliations (no change): {reconciliations:>7.0}, Kubernetes writes: {writes:.0} ({:.2} per reconciliation), reads: {reads:.0} ({:.2} per reconciliation)",
        per(writes, reconciliations),
        per(reads, reconciliations),
    );
    let kafka_reconciliations =
        metric_with_label(&after, "strimzi_reconciliations_total", "kind=\"Kafka\"")
            - metric_with_label(&before, "strimzi_reconciliations_total", "kind=\"Kafka\"");
    println!(
        "  of which Kafka reconciliations:   {kafka_reconciliations:>7.0}, reads per Kafka reconciliation (all reads): {:.1}",
        per(reads, kafka_reconciliations)
    );
    println!(
        "  writes by kind and verb: {}",
        by_labels("strimzi_operator_api_writes_total", &before, &after)
    );
    println!(
        "  reads by resource and verb: {}",
        by_labels("strimzi_operator_api_reads_total", &before, &after)
    );
    println!(
        "steady RSS ({} clusters):           {:>8.1} MiB",
        1 + FIRST + MORE,
        rss_mib(operator.pid(), "VmRSS")
    );
    println!("(pods are simulated by kwok; no Kafka runs in them)");
}

/// How much each sample of the counter `metric` grew between two `/metrics` texts, as
/// `labels: growth` for those that grew, e.g. `kind="secrets",verb="get": 42`.
fn by_labels(metric: &str, before: &str, after: &str) -> String {
    growth_by_labels(metric, before, after)
        .into_iter()
        .map(|(labels, delta)| format!("{labels}: {delta:.0}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `count / reconciliations`, 0 without reconciliations.
fn per(count: f64, reconciliations: f64) -> f64 {
    if reconciliations > 0.0 {
        count / reconciliations
    } else {
        0.0
    }
}

/// The Kubernetes reads (gets and lists, every resource) and reconciliations (Kafkas and
/// StrimziPodSets) between two `/metrics` texts, as a line's end.
fn reads_per_reconciliation(before: &str, after: &str) -> String {
    let delta = |name: &str| metric(after, name) - metric(before, name);
    let reads = delta("strimzi_operator_api_reads_total");
    let reconciliations = delta("strimzi_reconciliations_total");
    format!(
        "{reads:.0} Kubernetes reads in {reconciliations:.0} reconciliations ({:.2} per reconciliation)",
        per(reads, reconciliations)
    )
}

/// `count` cluster names starting with `prefix`.
fn cluster_names(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{prefix}-{i}")).collect()
}

/// When the pods of clusters applied together were created, and when they were Ready, counted
/// from the apply.
struct Timings {
    /// Every pod of the first cluster to have all its pods.
    first_cluster_pods: Duration,
    /// Every pod of every cluster.
    all_pods: Duration,
    /// Every cluster Ready.
    ready: Duration,
}

impl Timings {
    /// The pod figures for a printed line.
    fn pods_line(&self) -> String {
        format!(
            "all pods created {:.2} s, the first cluster's {:.2} s",
            self.all_pods.as_secs_f64(),
            self.first_cluster_pods.as_secs_f64()
        )
    }
}

/// Applies a 3+3 cluster per name in `namespace` and follows them until all are Ready.
async fn apply_and_time(client: &Client, namespace: &str, names: &[String]) -> Timings {
    const NODES: usize = 6;
    let started = Instant::now();
    for name in names {
        for document in support::cluster_with_own_pool_names(name, 3, 3) {
            support::apply(client, namespace, &document).await;
        }
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut first_cluster_pods = None;
    let all_pods = loop {
        let mut per_cluster: BTreeMap<String, usize> = BTreeMap::new();
        for pod in pods.list(&ListParams::default()).await.unwrap().items {
            if let Some(cluster) = pod.labels().get("strimzi.io/cluster")
                && names.contains(cluster)
            {
                *per_cluster.entry(cluster.clone()).or_default() += 1;
            }
        }
        let complete = per_cluster
            .values()
            .filter(|count| **count >= NODES)
            .count();
        if complete > 0 && first_cluster_pods.is_none() {
            first_cluster_pods = Some(started.elapsed());
        }
        if complete == names.len() {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "pods not created in 10 minutes: {per_cluster:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for name in names {
        support::ready(client, namespace, name).await;
    }
    Timings {
        first_cluster_pods: first_cluster_pods.unwrap_or(all_pods),
        all_pods,
        ready: started.elapsed(),
    }
}
