//! The README's main command: `cargo run -p strimzi-cluster-operator --example demo`.
//!
//! Provisions what is missing (Kubernetes and node components built with Go, Debian
//! packages, Strimzi's Kafka image rebuilt locally), starts a Kubernetes control plane with a
//! real node (kubelet, containerd, runc) in a network namespace of its own, builds our
//! operator image, installs our CRDs, runs the cluster operator as a process, applies
//! Strimzi's `kafka-persistent.yaml` (3 controllers + 3 brokers as real Kafka pods, and the
//! entity operator's pod running our topic and user operators) and three KafkaTopics, produces and consumes a record through `my-cluster-kafka-bootstrap` on the
//! plain and the TLS listener, prints what it made, the memory each part uses and how to
//! reach the cluster, and stays up until Ctrl-C, then cleans up.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod, Secret, Service};
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use serde_json::json;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::topic::KafkaTopic;
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::environment::{Nodes, TestEnv};
use strimzi_tests::measure::rss_mib;
use strimzi_tests::process::{Lifetime, ManagedProcess};

const NAMESPACE: &str = "kafka";
const CLUSTER: &str = "my-cluster";
const TOPICS: [&str; 3] = ["orders", "payments", "audit-log"];

fn main() {
    let begun = Instant::now();
    println!(
        "[{:>5.1}s] Building the operators and the in-cluster Kafka client ...",
        0.0
    );
    let binaries = support::build_operator_binaries();
    println!(
        "[{:>5.1}s] Starting Kubernetes 1.37 with a real node (the first run builds the components and images: about 25 minutes cold) ...",
        begun.elapsed().as_secs_f64()
    );
    // The entity operator's pod runs our image, which the node imports when it starts.
    if let Err(error) =
        strimzi_tests::layout::provision(strimzi_tests::layout::Provision::OperatorImage)
    {
        eprintln!("demo: {error}");
        std::process::exit(1);
    }
    let env = TestEnv::start_with(Lifetime::Tied, "demo", Nodes::Real(1)).unwrap_or_else(|error| {
        eprintln!("demo: {error}");
        std::process::exit(1);
    });
    let nodes = env.real_nodes().expect("real nodes");
    println!(
        "[{:>5.1}s] Node {} Ready ({:.1}s from start to Ready); logs in {}",
        begun.elapsed().as_secs_f64(),
        nodes.names().join(", "),
        nodes.start_time().as_secs_f64(),
        env.log_dir().display()
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let operators = runtime.block_on(run(&env, &binaries, begun));
    runtime.block_on(async {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
    });
    println!("Stopping ...");
    let stopping = Instant::now();
    drop(operators);
    drop(runtime);
    drop(env);
    println!(
        "Stopped and cleaned up in {:.1}s.",
        stopping.elapsed().as_secs_f64()
    );
}

/// Everything after the environment is up; returns the operator processes, which stop when
/// dropped.
async fn run(env: &TestEnv, binaries: &Path, begun: Instant) -> Vec<ManagedProcess> {
    let client = env.client().await;
    create_namespace(&client).await;
    let operators = vec![support::spawn_cluster_operator(
        env,
        binaries,
        NAMESPACE,
        strimzi_tests::layout::free_port().unwrap(),
        &[],
    )];
    println!(
        "[{:>5.1}s] CRDs installed, namespace `{NAMESPACE}` created, cluster operator running (the example's entity operator will run the topic and user operators).",
        begun.elapsed().as_secs_f64()
    );

    let example =
        strimzi_tests::reference::reference_examples_dir().join("kafka/kafka-persistent.yaml");
    for document in support::documents(&example) {
        support::apply(&client, NAMESPACE, &document).await;
    }
    for topic in TOPICS {
        support::apply(&client, NAMESPACE, &kafka_topic(topic)).await;
    }
    let applied = Instant::now();
    println!(
        "[{:>5.1}s] Applied {} and KafkaTopics {TOPICS:?}; waiting for Kafka `{CLUSTER}`:",
        begun.elapsed().as_secs_f64(),
        example.display()
    );
    wait_with_progress(&client, applied).await;

    let kafka = Api::<Kafka>::namespaced(client.clone(), NAMESPACE)
        .get(CLUSTER)
        .await
        .unwrap();
    let network = env.network().unwrap();
    let kafka_client = binaries.join("strimzi-kafka-client");
    let ca_file = env.log_dir().join("cluster-ca.crt");
    write_cluster_ca(&client, &ca_file).await;
    let mut clients = Vec::new();
    for listener in status_listeners(&kafka) {
        let (name, address) = listener;
        let client = ClusterClient::new(&kafka_client, network, &address);
        let client = if name == "tls" {
            client.tls(&ca_file)
        } else {
            client
        };
        let topic = TOPICS[0];
        let record = format!("hello-over-{name}");
        retry(|| client.produce(topic, 1, &record)).await;
        let consumed = retry(|| client.consume(topic, 1)).await;
        println!(
            "[{:>5.1}s] Listener {name} ({address}): produced {record}-0; first record of {topic} read back: {}",
            begun.elapsed().as_secs_f64(),
            consumed.first().map_or("-", String::as_str)
        );
        clients.push((name, client));
    }

    print_summary(&client).await;
    print_memory(env, &client, &operators).await;

    println!();
    println!("Everything keeps running until Ctrl-C. To look around:");
    println!(
        "  export KUBECONFIG={}",
        env.control_plane().kubeconfig().display()
    );
    let kubectl =
        strimzi_tests::control_plane::binary("kubernetes", "KUBERNETES_VERSION", "kubectl")
            .unwrap();
    println!(
        "  {} -n {NAMESPACE} get kafka,kafkanodepool,strimzipodset,pods,svc,pvc,kafkatopic",
        kubectl.display()
    );
    println!("A client inside the cluster's network (run as root):");
    for (name, client) in &clients {
        println!(
            "  {}   # {name} listener",
            client.command_line(&format!("consume --topic {} --count 2", TOPICS[0]))
        );
    }
    println!("Or Strimzi's own console producer in a pod:");
    println!(
        "  {} -n {NAMESPACE} run producer -ti --rm --restart=Never --image={} --image-pull-policy=Never -- bin/kafka-console-producer.sh --bootstrap-server {CLUSTER}-kafka-bootstrap:9092 --topic {}",
        kubectl.display(),
        strimzi_tests::nodes::image_version("KAFKA_IMAGE"),
        TOPICS[0]
    );
    operators
}

/// Retries a client call for up to two minutes (leaders may still be moving right after
/// Ready), exiting the demo with the last error otherwise.
async fn retry<T>(mut call: impl FnMut() -> Result<T, String>) -> T {
    let started = Instant::now();
    loop {
        match call() {
            Ok(value) => return value,
            Err(error) if started.elapsed() > Duration::from_secs(120) => {
                eprintln!("demo: {error}");
                std::process::exit(1);
            }
            Err(_) => tokio::time::sleep(Duration::from_secs(2)).await,
        }
    }
}

/// (name, bootstrap address) of every listener in the Kafka's status.
fn status_listeners(kafka: &Kafka) -> Vec<(String, String)> {
    kafka
        .status
        .iter()
        .flat_map(|status| status.listeners.iter().flatten())
        .filter_map(|listener| Some((listener.name.clone()?, listener.bootstrap_servers.clone()?)))
        .collect()
}

async fn write_cluster_ca(client: &Client, path: &Path) {
    let secret = Api::<Secret>::namespaced(client.clone(), NAMESPACE)
        .get(&format!("{CLUSTER}-cluster-ca-cert"))
        .await
        .unwrap();
    let certificate = secret.data.unwrap().remove("ca.crt").unwrap();
    std::fs::write(path, certificate.0).unwrap();
}

async fn print_memory(env: &TestEnv, client: &Client, operators: &[ManagedProcess]) {
    println!();
    println!("Memory (resident set size):");
    let nodes = env.real_nodes().unwrap();
    for (name, pid) in nodes.processes() {
        println!("  {name:<24} {:>7.1} MiB", rss_mib(pid, "VmRSS"));
    }
    for (name, operator) in ["cluster-operator"].iter().zip(operators) {
        println!("  {name:<24} {:>7.1} MiB", rss_mib(operator.pid(), "VmRSS"));
    }
    let pods = Api::<Pod>::namespaced(client.clone(), NAMESPACE)
        .list(&ListParams::default().labels(&format!("strimzi.io/cluster={CLUSTER}")))
        .await
        .unwrap();
    for pod in pods {
        let uid = pod.uid().unwrap_or_default();
        println!(
            "  pod {:<20} {:>7.1} MiB",
            pod.name_any(),
            nodes.pod_rss_mib(&uid)
        );
    }
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

fn kafka_topic(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaTopic",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": CLUSTER}},
        "spec": {"partitions": 3, "replicas": 3, "config": {"retention.ms": 604800000}},
    })
}

/// The type and reason of each condition, e.g. `Ready` or `NotReady(WaitingForPods)`.
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

async fn wait_with_progress(client: &Client, started: Instant) {
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let topics: Api<KafkaTopic> = Api::namespaced(client.clone(), NAMESPACE);
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
        let running = all_pods
            .items
            .iter()
            .filter(|pod| {
                pod.status
                    .as_ref()
                    .and_then(|status| status.phase.as_deref())
                    == Some("Running")
            })
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
            "  [{:>3}s] Kafka: {kafka_conditions}; pods running {running}, ready {ready}/{}; KafkaTopics ready {topics_ready}/{}",
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
        if started.elapsed() > Duration::from_secs(900) {
            eprintln!("demo: Kafka `{CLUSTER}` not Ready after 15 minutes; see the logs.");
            std::process::exit(1);
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
