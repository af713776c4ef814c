//! Our examples for applications, applied as written on real nodes: the cluster of
//! `examples/kafka/kafka-authenticated.yaml` (three nodes, SCRAM and mutual-TLS listeners,
//! ACLs, the topic and user operators), the topics of `examples/topic/kafka-topic.yaml`, every
//! user of `examples/user/` (with the Secret holding the SCRAM user's own password) and the
//! HTTP Bridge of `examples/bridge/kafka-bridge.yaml` with its user. Each one reaches `Ready`,
//! and a client with the certificate the user operator issued to `inventory-service` writes to
//! the topic its ACLs let it write to.
//!
//! The other examples need something no conformant cluster has by itself (a load balancer,
//! an ingress controller, OpenShift routes, a Gateway, a registry to push built images to,
//! Kafka clusters outside it, an OAuth server, object storage, plugins missing from Strimzi's
//! image): `kafka.rs` `every_kafka_example_reaches_ready_with_the_expected_objects` applies
//! every Kafka example on the API server with kwok nodes and checks how far each gets.

use std::time::Instant;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};

use strimzi_api::bridge::KafkaBridge;
use strimzi_api::topic::KafkaTopic;
use strimzi_api::user::KafkaUser;
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::reference::own_examples_dir;
use strimzi_tests::resources::{CustomResources, eventually_ok};

use super::env;
use crate::support::real_nodes::{
    POD_WAIT, binaries, cluster_ca_file, delete_when_done, eventually, secret_file,
};
use crate::support::{apply, documents, ready};

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
    let mut applied = Vec::new();
    for file in FILES {
        for document in documents(&own_examples_dir().join(file)) {
            apply(&client, &ns, &document).await;
            let kind = document["kind"].as_str().unwrap().to_owned();
            let name = document["metadata"]["name"].as_str().unwrap().to_owned();
            applied.push((kind, name));
        }
    }
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
