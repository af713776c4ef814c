//! Our examples for applications, applied as written on real nodes: the cluster of
//! `examples/kafka/kafka-authenticated.yaml` (three nodes, SCRAM and mutual-TLS listeners,
//! ACLs, the topic and user operators), the topics of `examples/topic/kafka-topic.yaml`, every
//! user of `examples/user/` (with the Secret holding the SCRAM user's own password) and the
//! HTTP Bridge of `examples/bridge/kafka-bridge.yaml` with its user. Each one reaches `Ready`,
//! and a client with the certificate the user operator issued to `inventory-service` writes to
//! the topic its ACLs let it write to.
//!
//! The development cluster (`kafka/kafka-ephemeral.yaml`) and the monitored one
//! (`kafka/kafka-metrics.yaml`) are applied as written too, each in a test of its own: each
//! reaches `Ready`; the first serves clients, the second's nodes serve the metrics of the
//! example's rules and its Kafka Exporter counts the brokers.
//!
//! `kafka-cruise-control.yaml` and `kafka-jbod.yaml` ask for more than the test machine has
//! (nodes of 2 and 8 cores, and a `fast-ssd` StorageClass). The other examples need
//! something no conformant cluster has by itself (a load balancer, an ingress controller, OpenShift routes, a Gateway, a registry to push built images to,
//! Kafka clusters outside it, an OAuth server, object storage, plugins missing from Strimzi's
//! image): `kafka.rs` `every_kafka_example_reaches_ready_with_the_expected_objects` applies
//! every Kafka example on the API server with kwok nodes and checks how far each gets.

use std::time::Instant;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};

use strimzi_api::bridge::KafkaBridge;
use strimzi_api::kafka::Kafka;
use strimzi_api::topic::KafkaTopic;
use strimzi_api::user::KafkaUser;
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::network::NodeNetwork;
use strimzi_tests::process::ManagedProcess;
use strimzi_tests::reference::own_examples_dir;
use strimzi_tests::resources::{CustomResources, eventually_ok};
use tokio::sync::SemaphorePermit;

use super::env;
use crate::support::real_nodes::{
    DeletedOnDrop, POD_WAIT, binaries, bootstrap, cluster_ca_file, component_pod, delete_when_done,
    eventually, http_get, round_trip, secret_file, topic_ready,
};
use crate::support::{apply, documents, kafka_topic, ready};

/// The cluster the examples for applications belong to.
const CLUSTER: &str = "app-cluster";
/// The examples, in the order a user applies them.
const FILES: [&str; 6] = [
    "kafka/kafka-authenticated.yaml",
    "topic/kafka-topic.yaml",
    "user/kafka-user-tls.yaml",
    "user/kafka-user-scram.yaml",
    "user/kafka-user-tls-external.yaml",
    "bridge/kafka-bridge.yaml",
];

#[tokio::test]
async fn our_examples_for_applications_reach_ready_as_written() {
    let _room = super::room_for(super::Weight::Heavy).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("examples").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let network = env.network().expect("a real-node environment");
    let _operator = super::operator_on(&ns);

    let started = Instant::now();
    let applied = apply_examples(&client, &ns, &FILES).await;
    ready(&client, &ns, CLUSTER).await;
    let topics = CustomResources::of::<KafkaTopic>(&client, &ns);
    let users = CustomResources::of::<KafkaUser>(&client, &ns);
    let bridges = CustomResources::of::<KafkaBridge>(&client, &ns);
    let mut waited = 0;
    for (kind, name) in &applied {
        let resources = match kind.as_str() {
            "KafkaTopic" => &topics,
            "KafkaUser" => &users,
            "KafkaBridge" => &bridges,
            "Kafka" | "KafkaNodePool" | "Secret" => continue,
            other => panic!("{other} {name}: an example of a kind this test does not wait for"),
        };
        // Pods start on the one node one after the other: as long as any pod may take.
        eventually_ok(&format!("{kind} {name} Ready"), POD_WAIT, || async {
            if resources.is_ready(name).await {
                Ok(())
            } else {
                Err((resources.status(name).await, pod_states(&client, &ns).await))
            }
        })
        .await;
        waited += 1;
    }
    assert!(waited >= 8, "topics, users and a bridge: {applied:?}");
    println!(
        "figure: our examples for applications ({} resources) applied to Ready on a real node in {:.1}s",
        applied.len(),
        started.elapsed().as_secs_f64()
    );

    // The user operator's certificate and ACLs at work: inventory-service may write to orders.
    let writer = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &format!("{CLUSTER}-kafka-bootstrap.{ns}.svc:9093"),
    )
    .tls(&cluster_ca_file(&client, &ns, CLUSTER).await)
    .certificate(
        &secret_file(&client, &ns, "inventory-service", "user.crt").await,
        &secret_file(&client, &ns, "inventory-service", "user.key").await,
    );
    eventually("writing to orders as inventory-service", || {
        writer.produce("orders", 3, "inventory")
    })
    .await;
}

/// `examples/kafka/kafka-ephemeral.yaml` as written: `dev-cluster` reaches `Ready`, and its
/// plain listener serves clients, on a topic made through its topic operator (the example
/// turns topic auto-creation off).
#[tokio::test]
async fn the_development_cluster_example_reaches_ready_and_serves_clients_as_written() {
    let example =
        ExampleCluster::ready("example-dev", "kafka/kafka-ephemeral.yaml", "dev-cluster").await;
    let (client, ns, kafka) = (&example.client, &example.ns, &example.kafka);
    apply(client, ns, &kafka_topic("checked", "dev-cluster", 3, 3)).await;
    topic_ready(client, ns, "checked").await;
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        example.network,
        &bootstrap(kafka, "plain"),
    );
    round_trip(&plain, "checked", 10, "dev", "dev-cluster's plain listener").await;
}

/// `examples/kafka/kafka-metrics.yaml` as written: `observed-cluster` reaches `Ready` with its
/// Kafka Exporter; a node's metrics endpoint gives metrics that the example's rules name, and
/// Kafka Exporter counts the three brokers.
#[tokio::test]
async fn the_monitored_cluster_example_reaches_ready_with_its_metrics_as_written() {
    let example = ExampleCluster::ready(
        "example-observed",
        "kafka/kafka-metrics.yaml",
        "observed-cluster",
    )
    .await;
    let (client, ns) = (&example.client, &example.ns);
    let node = Api::<Pod>::namespaced(client.clone(), ns)
        .get("observed-cluster-all-in-one-0")
        .await
        .unwrap();
    let exporter = component_pod(client, ns, "observed-cluster-kafka-exporter").await;
    for (pod, metric) in [
        (&node, "kafka_server_replicamanager_partitioncount "),
        (&exporter, "kafka_brokers 3"),
    ] {
        let address = pod.status.as_ref().unwrap().pod_ip.clone().unwrap();
        eventually(&format!("{metric} from {}", pod.name_any()), || {
            let text = http_get(example.network, &format!("http://{address}:9404/metrics"))?;
            text.lines()
                .any(|line| line.starts_with(metric))
                .then_some(())
                .ok_or_else(|| format!("not among {} lines", text.lines().count()))
        })
        .await;
    }
}

/// A cluster example applied as written, in a namespace of its own with an operator of its
/// own, and `Ready`; the namespace is deleted and the operator stopped when it is dropped.
struct ExampleCluster {
    client: Client,
    ns: String,
    network: &'static NodeNetwork,
    kafka: Kafka,
    _room: SemaphorePermit<'static>,
    _deleted: DeletedOnDrop,
    _operator: ManagedProcess,
}

impl ExampleCluster {
    /// Applies the example `file` in a new namespace named after `prefix` and waits until its
    /// Kafka `cluster` is `Ready`, printing how long that took.
    async fn ready(prefix: &str, file: &str, cluster: &str) -> Self {
        let room = super::room_for(super::Weight::Heavy).await;
        let env = env();
        let client = env.client().await;
        let ns = env.namespace(prefix).await;
        let deleted = delete_when_done(env, &[&ns]);
        let network = env.network().expect("a real-node environment");
        let operator = super::operator_on(&ns);
        let started = Instant::now();
        apply_examples(&client, &ns, &[file]).await;
        let kafka = ready(&client, &ns, cluster).await;
        println!(
            "figure: {file} ({cluster}) applied to Ready on a real node in {:.1}s",
            started.elapsed().as_secs_f64()
        );
        ExampleCluster {
            client,
            ns,
            network,
            kafka,
            _room: room,
            _deleted: deleted,
            _operator: operator,
        }
    }
}

/// Applies every document of the example `files` (under `examples/`) to `ns` in order, as
/// `kubectl apply -f` does; the kind and name of each.
async fn apply_examples(client: &Client, ns: &str, files: &[&str]) -> Vec<(String, String)> {
    let mut applied = Vec::new();
    for file in files {
        for document in documents(&own_examples_dir().join(file)) {
            apply(client, ns, &document).await;
            let kind = document["kind"].as_str().unwrap().to_owned();
            let name = document["metadata"]["name"].as_str().unwrap().to_owned();
            applied.push((kind, name));
        }
    }
    applied
}

/// Each pod of `ns` by name: its phase and its containers' waiting or terminated reasons.
async fn pod_states(client: &Client, ns: &str) -> Vec<String> {
    Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .map(|pods| pods.items)
        .unwrap_or_default()
        .iter()
        .map(|pod| {
            let status = pod.status.clone().unwrap_or_default();
            let reasons: Vec<String> = status
                .container_statuses
                .iter()
                .flatten()
                .map(|container| {
                    let state = container.state.clone().unwrap_or_default();
                    let why = state
                        .waiting
                        .and_then(|waiting| waiting.reason)
                        .or_else(|| state.terminated.and_then(|terminated| terminated.reason))
                        .unwrap_or_else(|| format!("ready: {}", container.ready));
                    format!(
                        "{}: {why} (restarts {})",
                        container.name, container.restart_count
                    )
                })
                .collect();
            format!(
                "{} {} {reasons:?}",
                pod.name_any(),
                status.phase.unwrap_or_default()
            )
        })
        .collect()
}
