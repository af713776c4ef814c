//! The local three-node Kafka cluster: every node is a broker an independent client
//! (rdkafka) sees, and a topic can have a replica on each.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use strimzi_tests::kafka::KafkaCluster;
use strimzi_tests::layout::log_dir;

#[test]
fn three_nodes_serve_a_topic_with_three_replicas() {
    let logs = log_dir("kafka-cluster").unwrap();
    let cluster = KafkaCluster::start(3, &logs).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(cluster.pids().len(), 3);
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", cluster.bootstrap());
    let admin: AdminClient<DefaultClientContext> = config.create().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let created = runtime
        .block_on(admin.create_topics(
            &[NewTopic::new("everywhere", 1, TopicReplication::Fixed(3))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30))),
        ))
        .unwrap();
    assert!(created.iter().all(Result::is_ok), "{created:?}");
    // The broker asked learns of the new topic from the metadata log a moment after the
    // controller made it (longer on a loaded machine): asked again for up to 30 s.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let metadata = loop {
        let metadata = admin
            .inner()
            .fetch_metadata(Some("everywhere"), Duration::from_secs(10))
            .unwrap();
        let known = metadata
            .topics()
            .first()
            .is_some_and(|topic| !topic.partitions().is_empty());
        if known || std::time::Instant::now() > deadline {
            break metadata;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(metadata.brokers().len(), 3);
    let partitions = metadata.topics()[0].partitions();
    assert_eq!(
        partitions.len(),
        1,
        "the topic's partitions: {partitions:?}"
    );
    let replicas = partitions[0].replicas().len();
    assert_eq!(replicas, 3);
}
