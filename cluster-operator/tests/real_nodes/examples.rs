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

use strimzi_api::bridge::KafkaBridge;
use strimzi_api::topic::KafkaTopic;
use strimzi_api::user::KafkaUser;
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::reference::own_examples_dir;
use strimzi_tests::resources::CustomResources;

use super::env;
use crate::support::real_nodes::{
    binaries, cluster_ca_file, delete_when_done, eventually, secret_file,
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
        match kind.as_str() {
            "KafkaTopic" => topics.wait_ready(name).await,
            "KafkaUser" => users.wait_ready(name).await,
            "KafkaBridge" => bridges.wait_ready(name).await,
            "Kafka" | "KafkaNodePool" | "Secret" => continue,
            other => panic!("{other} {name}: an example of a kind this test does not wait for"),
        }
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
