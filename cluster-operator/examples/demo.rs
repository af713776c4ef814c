//! The README's main command: `cargo run -p strimzi-cluster-operator --example demo`.
//!
//! Starts the local environment (Kubernetes control plane with kwok nodes, our CRDs, a real
//! Kafka broker), runs the cluster and topic operators as processes, applies Strimzi's
//! `kafka-persistent.yaml` example (3 controllers + 3 brokers in two node pools) and three
//! KafkaTopics, shows progress, prints what the operators made, and stays until Ctrl-C.
//!
//! The broker pods are simulated: kwok marks them Running and Ready, but no Kafka runs in
//! them. The topic operator is therefore pointed at the environment's real local broker.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod, Secret, Service};
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use serde_json::json;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::topic::KafkaTopic;
use strimzi_tests::process::{Lifetime, ManagedProcess, ProcessSpec};

const NAMESPACE: &str = "kafka";
const CLUSTER: &str = "my-cluster";
const TOPICS: [&str; 3] = ["orders", "payments", "audit-log"];

#[tokio::main]
async fn main() {
    println!("Building the cluster and topic operators ...");
    let binaries = support::build_operator_binaries();
    println!(
        "Starting the local Kubernetes control plane (kwok nodes) and a real Kafka broker ..."
    );
    let env = support::env();
    let client = env.client().await;
    create_namespace(&client).await;
    println!("CRDs installed; namespace `{NAMESPACE}` created.");

    let _cluster_operator = support::spawn_cluster_operator(
        &binaries,
        NAMESPACE,
        strimzi_tests::layout::free_port().unwrap(),
        &[],
    );
    let _topic_operator = spawn_topic_operator(&binaries);
    println!("Operators running; logs in {}", env.log_dir().display());

    let example =
        strimzi_tests::reference::reference_examples_dir().join("kafka/kafka-persistent.yaml");
    println!("Applying {} ...", example.display());
    for document in support::documents(&example) {
        support::apply(&client, NAMESPACE, &document).await;
    }
    for topic in TOPICS {
        support::apply(&client, NAMESPACE, &kafka_topic(topic)).await;
    }
    println!("Applied Kafka `{CLUSTER}` with its node pools and KafkaTopics {TOPICS:?}.");

    wait_with_progress(&client).await;
    print_summary(&client).await;

    println!();
    println!(
        "NOTE: the broker pods are simulated by kwok: Kubernetes reports them Running and Ready,"
    );
    println!(
        "but no Kafka runs inside them. The KafkaTopics are real topics on the local broker at {}.",
        env.kafka().listener("plain").unwrap().bootstrap
    );
    println!();
    println!("Everything keeps running until Ctrl-C. To look around:");
    println!(
        "  export KUBECONFIG={}",
        env.control_plane().kubeconfig().display()
    );
    println!(
        "  kubectl -n {NAMESPACE} get kafka,kafkanodepool,strimzipodset,pods,svc,cm,pvc,kafkatopic"
    );
    tokio::signal::ctrl_c().await.unwrap();
    println!("Stopping.");
}

async fn create_namespace(client: &Client) {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let namespace = serde_json::from_value(json!({"metadata": {"name": NAMESPACE}})).unwrap();
    if namespaces.get_opt(NAMESPACE).await.unwrap().is_none() {
        namespaces
            .create(&Default::default(), &namespace)
            .await
            .unwrap();
    }
}

fn spawn_topic_operator(binaries: &std::path::Path) -> ManagedProcess {
    let env = support::env();
    let spec = ProcessSpec::new(
        "topic-operator",
        binaries.join("strimzi-topic-operator"),
        env.log_dir(),
    )
    .env("KUBECONFIG", env.control_plane().kubeconfig())
    .env("STRIMZI_NAMESPACE", NAMESPACE)
    .env(
        "STRIMZI_RESOURCE_LABELS",
        format!("strimzi.io/cluster={CLUSTER}"),
    )
    .env(
        "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
        &env.kafka().listener("plain").unwrap().bootstrap,
    )
    .env(
        "STRIMZI_HTTP_PORT",
        strimzi_tests::layout::free_port().unwrap().to_string(),
    );
    ManagedProcess::start(&spec, Lifetime::Tied).unwrap()
}

fn kafka_topic(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaTopic",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": CLUSTER}},
        "spec": {"partitions": 3, "replicas": 1, "config": {"retention.ms": 604800000}},
    })
}

/// The type and reason of each condition, e.g. `Ready` or `NotReady(TimeoutException)`.
fn conditions(conditions: Option<&Vec<strimzi_api::common::Condition>>) -> String {
    let text: Vec<String> = conditions
        .into_iter()
        .flatten()
        .map(|condition| {
            let kind = condition.r#type.clone().unwrap_or_default();
            match &condition.reason {
                Some(reason) => format!("{kind}({reason})"),
                None => kind,
            }
        })
        .collect();
    if text.is_empty() {
        "-".to_owned()
    } else {
        text.join(", ")
    }
}

async fn wait_with_progress(client: &Client) {
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let topics: Api<KafkaTopic> = Api::namespaced(client.clone(), NAMESPACE);
    let started = Instant::now();
    let mut last = String::new();
    loop {
        let kafka = kafkas.get_opt(CLUSTER).await.unwrap();
        let kafka_conditions = conditions(
            kafka
                .as_ref()
                .and_then(|k| k.status.as_ref()?.conditions.as_ref()),
        );
        let all_pods = pods
            .list(&ListParams::default().labels(&format!("strimzi.io/cluster={CLUSTER}")))
            .await
            .unwrap();
        let ready = all_pods
            .items
            .iter()
            .filter(|pod| strimzi_cluster_operator::pod_set::is_ready(pod))
            .count();
        let topic_list = topics.list(&ListParams::default()).await.unwrap();
        let topics_ready = topic_list
            .items
            .iter()
            .filter(|topic| {
                topic
                    .status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| {
                        c.iter().any(|c| {
                            c.r#type.as_deref() == Some("Ready")
                                && c.status.as_deref() == Some("True")
                        })
                    })
            })
            .count();
        let line = format!(
            "  [{:>3}s] Kafka: {kafka_conditions}; pods ready {ready}/{}; KafkaTopics ready {topics_ready}/{}",
            started.elapsed().as_secs(),
            all_pods.items.len(),
            TOPICS.len()
        );
        if line[9..] != *last.get(9..).unwrap_or_default() {
            println!("{line}");
            last = line;
        }
        let kafka_ready = kafka_conditions.split(", ").any(|c| c == "Ready");
        if kafka_ready && topics_ready == TOPICS.len() {
            println!(
                "Kafka `{CLUSTER}` is Ready after {:.1}s.",
                started.elapsed().as_secs_f64()
            );
            return;
        }
        if started.elapsed() > Duration::from_secs(300) {
            println!("Still not Ready after 5 minutes; see the operator logs.");
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn print_summary(client: &Client) {
    let selector = format!("strimzi.io/cluster={CLUSTER}");
    println!();
    println!("Objects of Kafka `{CLUSTER}` in namespace `{NAMESPACE}`:");
    println!(
        "  StrimziPodSets:          {}",
        support::names::<StrimziPodSet>(client, NAMESPACE, &selector)
            .await
            .join(" ")
    );
    println!(
        "  Pods:                    {}",
        support::names::<Pod>(client, NAMESPACE, &selector)
            .await
            .join(" ")
    );
    println!(
        "  Services:                {}",
        support::names::<Service>(client, NAMESPACE, &selector)
            .await
            .join(" ")
    );
    println!(
        "  ConfigMaps:              {}",
        support::names::<ConfigMap>(client, NAMESPACE, &selector)
            .await
            .join(" ")
    );
    println!(
        "  Secrets:                 {}",
        support::names::<Secret>(client, NAMESPACE, &selector)
            .await
            .join(" ")
    );
    println!(
        "  PersistentVolumeClaims:  {}",
        support::names::<PersistentVolumeClaim>(client, NAMESPACE, &selector)
            .await
            .join(" ")
    );

    let kafka = Api::<Kafka>::namespaced(client.clone(), NAMESPACE)
        .get(CLUSTER)
        .await
        .unwrap();
    let status = kafka.status.clone().unwrap_or_default();
    println!();
    println!("Kafka `{CLUSTER}` status:");
    println!(
        "  conditions:     {}",
        conditions(status.conditions.as_ref())
    );
    for condition in status
        .conditions
        .iter()
        .flatten()
        .filter(|c| c.message.is_some())
    {
        println!(
            "    {}: {}",
            condition.reason.clone().unwrap_or_default(),
            condition.message.clone().unwrap_or_default()
        );
    }
    println!(
        "  clusterId:      {}",
        status.cluster_id.unwrap_or_default()
    );
    println!(
        "  kafkaVersion:   {} (metadata {})",
        status.kafka_version.unwrap_or_default(),
        status.kafka_metadata_version.unwrap_or_default()
    );
    for listener in status.listeners.iter().flatten() {
        println!(
            "  listener {:<8} {}",
            listener.name.clone().unwrap_or_default(),
            listener.bootstrap_servers.clone().unwrap_or_default()
        );
    }
    let pools: Api<KafkaNodePool> = Api::namespaced(client.clone(), NAMESPACE);
    for pool in pools.list(&ListParams::default()).await.unwrap() {
        let status = pool.status.clone().unwrap_or_default();
        println!(
            "  node pool {:<10} node IDs {:?}, roles {:?}",
            pool.name_any(),
            status.node_ids.unwrap_or_default(),
            status.roles.unwrap_or_default()
        );
    }
    println!();
    println!("KafkaTopics:");
    for topic in Api::<KafkaTopic>::namespaced(client.clone(), NAMESPACE)
        .list(&ListParams::default())
        .await
        .unwrap()
    {
        let status = topic.status.clone().unwrap_or_default();
        println!(
            "  {:<10} {}",
            topic.name_any(),
            conditions(status.conditions.as_ref())
        );
    }
}
