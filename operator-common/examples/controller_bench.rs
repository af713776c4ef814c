//! Measures the test controller on the local API server: memory with 1,000 watched
//! KafkaTopics and reconciliations per second.
//!
//! `cargo run --release -p strimzi-operator-common --example controller_bench`
//! (needs the testenv: `bash tests/testenv/install.sh`).
//!
//! 1. Creates 1,000 KafkaTopics, then starts the controller and times until each is Ready:
//!    each topic gets the finalizer, then its reconciliation reads and applies a ConfigMap
//!    and writes a status.
//! 2. Reports the process's resident memory with the 1,000 topics cached.
//! 3. Starts a second controller with a 100 ms full-reconciliation interval over the same,
//!    already reconciled topics and counts reconciliations for 15 s: each reads the ConfigMap,
//!    finds nothing to change and writes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use strimzi_tests::environment::TestEnv;

const TOPICS: usize = 1000;

fn resident_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

#[tokio::main]
async fn main() {
    let env = TestEnv::shared();
    let client = env.client().await;
    let namespace = env.namespace("bench").await;
    println!("creating {TOPICS} KafkaTopics in {namespace}");
    futures::stream::iter(0..TOPICS)
        .for_each_concurrent(32, |index| {
            let (client, namespace) = (client.clone(), namespace.clone());
            async move {
                let document = support::topic(&format!("topic-{index}"), json!({"partitions": 3}));
                support::create(&client, &namespace, document).await;
            }
        })
        .await;
    let baseline = resident_mib();

    let started = Instant::now();
    let first = support::start(
        client.clone(),
        support::config(&namespace, &[]),
        Duration::ZERO,
    );
    let metrics = first.runtime.metrics().clone();
    while metrics.writes("KafkaTopic", "status") < TOPICS as u64 {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "not all topics became Ready"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let initial = started.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cached = resident_mib();
    first.runtime.shutdown_token().cancel();
    first.task.await.unwrap();

    let config = support::config(
        &namespace,
        &[("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "100")],
    );
    let second = support::start(client.clone(), config, Duration::ZERO);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let counted_from = second.journal.lock().unwrap().started.len();
    let window = Duration::from_secs(15);
    tokio::time::sleep(window).await;
    let counted = second.journal.lock().unwrap().started.len() - counted_from;
    let writes = second.runtime.metrics().writes("KafkaTopic", "status")
        + second.runtime.metrics().writes("ConfigMap", "apply");
    let steady = resident_mib();
    second.runtime.shutdown_token().cancel();
    second.task.await.unwrap();

    println!(
        "initial reconciliation of {TOPICS} topics: {:.1} s, {:.0} reconciliations/s (each: a finalizer patch, then 1 GET, 1 apply and 1 status write)",
        initial.as_secs_f64(),
        TOPICS as f64 / initial.as_secs_f64()
    );
    println!(
        "no-op reconciliations: {:.0}/s sustained over {} s (1 GET each), {writes} writes",
        counted as f64 / window.as_secs_f64(),
        window.as_secs()
    );
    println!(
        "resident memory: {baseline:.1} MiB before the controller, {cached:.1} MiB with {TOPICS} topics cached ({:.1} MiB more), {steady:.1} MiB while requeuing every 100 ms",
        cached - baseline
    );
}
