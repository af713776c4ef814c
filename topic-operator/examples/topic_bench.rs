//! Benchmark of the topic operator on the real test environment: the time from applying N
//! KafkaTopics to all of them Ready, the operator's peak RSS, and what one periodic
//! reconciliation costs when nothing changed (Kafka requests and Kubernetes writes), then
//! the time to delete them all with their namespace.
//!
//! Run (release build of the binary first; it is started as a child process so that its RSS
//! is its own):
//!
//! ```text
//! cargo build --release -p strimzi-topic-operator --bins --examples
//! target/release/examples/topic_bench 1000 10000
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use serde_json::json;
use strimzi_api::topic::KafkaTopic;
use strimzi_tests::environment::TestEnv;
use strimzi_tests::measure::{http_get, metric, rss_mib};
use strimzi_tests::resources::{CustomResources, is_ready};

/// Full reconciliation interval of the benchmarked operator.
const INTERVAL: Duration = Duration::from_secs(30);

/// How many of the KafkaTopics are Ready (as the tests see it).
async fn ready_count(topics: &CustomResources) -> usize {
    topics
        .list()
        .await
        .iter()
        .filter(|object| is_ready(object))
        .count()
}

async fn bench(env: &TestEnv, count: usize) {
    let client = env.client().await;
    let ns = env.namespace(&format!("topic-bench-{count}")).await;
    let binary = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(|examples| examples.parent())
        .unwrap()
        .join("strimzi-topic-operator");
    assert!(
        binary.exists(),
        "build it first: cargo build --release -p strimzi-topic-operator --bins --examples"
    );
    let port = strimzi_tests::layout::free_port().unwrap();
    let mut operator = std::process::Command::new(&binary)
        .env("KUBECONFIG", env.control_plane().kubeconfig())
        .env("STRIMZI_NAMESPACE", &ns)
        .env(
            "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
            &env.kafka().listener("plain").unwrap().bootstrap,
        )
        .env("STRIMZI_HTTP_PORT", port.to_string())
        .env(
            "STRIMZI_FULL_RECONCILIATION_INTERVAL_MS",
            INTERVAL.as_millis().to_string(),
        )
        .env("STRIMZI_LOG_LEVEL", "WARN")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let topics = CustomResources::of::<KafkaTopic>(&client, &ns);
    let started = Instant::now();
    futures::stream::iter(0..count)
        .for_each_concurrent(64, |i| {
            let topics = topics.clone();
            let ns = ns.clone();
            async move {
                topics
                    .create(json!({
                        "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic",
                        "metadata": {"name": format!("{ns}-t{i}")},
                        "spec": {"partitions": 1, "replicas": 1, "config": {"retention.ms": 3600000}},
                    }))
                    .await;
            }
        })
        .await;
    let applied = started.elapsed();
    while ready_count(&topics).await < count {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let all_ready = started.elapsed();
    println!("N={count}: applied in {applied:.1?}, all Ready after {all_ready:.1?}");

    // One periodic reconciliation with nothing changed.
    let before = http_get(port, "/metrics");
    let reconciled = metric(&before, "strimzi_reconciliations_total");
    let deadline = Instant::now() + INTERVAL * 4;
    let after = loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = http_get(port, "/metrics");
        if metric(&now, "strimzi_reconciliations_total") >= reconciled + count as f64
            || Instant::now() > deadline
        {
            // Let the last reconciliations finish their requests.
            tokio::time::sleep(Duration::from_secs(2)).await;
            break http_get(port, "/metrics");
        }
    };
    let delta = |name: &str| metric(&after, name) - metric(&before, name);
    println!(
        "N={count}: one periodic reconciliation: {} reconciliations, {} Kafka requests, {} Kubernetes writes",
        delta("strimzi_reconciliations_total"),
        delta("strimzi_topic_operator_kafka_requests_total"),
        delta("strimzi_operator_api_writes_total"),
    );
    println!(
        "N={count}: operator RSS now {:.1} MiB, peak {:.1} MiB",
        rss_mib(operator.id(), "VmRSS"),
        rss_mib(operator.id(), "VmHWM")
    );

    // Deleting the namespace deletes every topic through the finalizers.
    let deleting = Instant::now();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces.delete(&ns, &Default::default()).await.unwrap();
    while namespaces.get_opt(&ns).await.unwrap().is_some() {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!(
        "N={count}: namespace and topics deleted in {:.1?}",
        deleting.elapsed()
    );
    println!(
        "N={count}: operator peak RSS at the end {:.1} MiB",
        rss_mib(operator.id(), "VmHWM")
    );
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &operator.id().to_string()])
        .status();
    let _ = operator.wait();
}

fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .map(|arg| arg.parse().expect("topic counts"))
        .collect();
    let counts = if counts.is_empty() {
        vec![1000]
    } else {
        counts
    };
    let env = TestEnv::shared();
    env.runtime().block_on(async {
        for count in counts {
            bench(env, count).await;
        }
    });
}
