//! Replication-factor changes made by the topic operator with partition reassignments, on a
//! local cluster of three Kafka nodes (real API server from the shared test environment).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use rdkafka::Message;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use serde_json::json;
use strimzi_operator_common::kafka::{AdminClient, AdminConfig, KafkaAdmin, PartitionDescription};
use support::*;

const RECORDS: usize = 300;

/// The partitions of `topic`, by number. A broker learns of a new topic from the KRaft
/// metadata log a moment after the controller made it (longer on a loaded machine), so an
/// unknown topic is asked about again for up to 30 s.
async fn assignment(admin: &AdminClient, topic: &str) -> Vec<PartitionDescription> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let described = admin.describe_topics(&[topic.to_owned()]).await.unwrap();
        match described[topic].as_ref() {
            Ok(description) => return description.partitions.clone(),
            Err(error) if tokio::time::Instant::now() < deadline => {
                eprintln!("describing {topic}: {error:?}; asking again");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(error) => panic!("describing {topic}: {error:?}"),
        }
    }
}

/// How long a replication factor change of a topic of a few partitions may take.
const CHANGE_WAIT: Duration = Duration::from_secs(120);

/// How long the change of the 100-partition topic may take: in a CI run of 2026-11-30 on a
/// saturated machine (2.00 of 2 cores, the three brokers' JVMs starved) it was still moving
/// partitions, steadily, when 120 s ran out.
const WIDE_CHANGE_WAIT: Duration = Duration::from_secs(600);

/// Waits until the change to `replicas` is done (within `within`): Ready for the current
/// generation without `replicasChange`. Every status of the new generation seen on the way
/// that has a `replicasChange` must be `ongoing` towards `replicas`; whether one was seen.
async fn wait_change_done(
    topics: &strimzi_tests::resources::CustomResources,
    name: &str,
    replicas: i64,
    within: Duration,
) -> bool {
    let mut seen_ongoing = false;
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let object = topics.get(name).await.unwrap();
        let status = &object.data["status"];
        if status["observedGeneration"].as_i64() == object.metadata.generation {
            let change = &status["replicasChange"];
            if change.is_null() {
                if strimzi_tests::resources::is_ready(&object) {
                    return seen_ongoing;
                }
            } else {
                assert_eq!(change["state"], "ongoing", "{status}");
                assert_eq!(change["targetReplicas"], replicas, "{status}");
                seen_ongoing = true;
            }
            let ready = status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|condition| condition["type"] == "Ready" && condition["status"] == "True");
            assert!(ready, "Ready stays True while the change runs: {status}");
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "replication factor {replicas} not reached: {status}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn produce(bootstrap: String, topic: String) {
    let producer: BaseProducer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .create()
        .unwrap();
    for index in 0..RECORDS {
        let value = format!("record-{index}");
        let key = index.to_string();
        let partition = i32::try_from(index % 3).unwrap();
        producer
            .send(
                BaseRecord::to(&topic)
                    .key(&key)
                    .payload(&value)
                    .partition(partition),
            )
            .unwrap();
        producer.poll(Duration::ZERO);
    }
    producer.flush(Duration::from_secs(30)).unwrap();
}

fn consume(bootstrap: String, topic: String) -> BTreeSet<String> {
    let consumer: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("{topic}-check"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut partitions = rdkafka::TopicPartitionList::new();
    for partition in 0..3 {
        partitions
            .add_partition_offset(&topic, partition, rdkafka::Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&partitions).unwrap();
    let mut values = BTreeSet::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while values.len() < RECORDS && std::time::Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(500)) {
            let message = message.unwrap();
            values.insert(String::from_utf8_lossy(message.payload().unwrap()).into_owned());
        }
    }
    values
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_the_replication_factor_with_reassignments() {
    let (client, ns) = namespace("to-replicas").await;
    let cluster = kafka_cluster("kafka-cluster").await;
    let bootstrap = cluster.bootstrap().to_owned();
    let topics = topics(&client, &ns);
    let operator = Operator::start(
        &client,
        config_for(
            &ns,
            &bootstrap,
            &[
                ("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "5000"),
                // Fast enough for the test, slow enough to be a real throttle.
                ("STRIMZI_REPLICATION_THROTTLE_BYTES_PER_SECOND", "1048576"),
            ],
        ),
    );
    let admin = AdminClient::new(AdminConfig::plaintext(&bootstrap)).unwrap();
    let topic = "replicated";
    topics
        .create(kafka_topic(topic, json!({"partitions": 3, "replicas": 1})))
        .await;
    topics.wait_ready(topic).await;
    assert!(
        assignment(&admin, topic)
            .await
            .iter()
            .all(|partition| partition.replicas.len() == 1)
    );
    let (servers, name) = (bootstrap.clone(), topic.to_owned());
    tokio::task::spawn_blocking(move || produce(servers, name))
        .await
        .unwrap();

    // Grow to three replicas: one on every broker.
    topics.patch(topic, json!({"spec": {"replicas": 3}})).await;
    let seen_ongoing = wait_change_done(&topics, topic, 3, CHANGE_WAIT).await;
    println!("replicas 1 -> 3, ongoing seen: {seen_ongoing}");
    for partition in assignment(&admin, topic).await {
        let brokers: BTreeSet<i32> = partition.replicas.iter().copied().collect();
        assert_eq!(partition.replicas.len(), 3, "{partition:?}");
        assert_eq!(brokers.len(), 3, "{partition:?}");
    }

    // Shrink to two: the leaders stay.
    let leaders: BTreeMap<i32, i32> = assignment(&admin, topic)
        .await
        .iter()
        .map(|partition| (partition.partition, partition.leader))
        .collect();
    topics.patch(topic, json!({"spec": {"replicas": 2}})).await;
    let seen_ongoing = wait_change_done(&topics, topic, 2, CHANGE_WAIT).await;
    println!("replicas 3 -> 2, ongoing seen: {seen_ongoing}");
    for partition in assignment(&admin, topic).await {
        assert_eq!(partition.replicas.len(), 2, "{partition:?}");
        assert_eq!(
            partition.leader, leaders[&partition.partition],
            "{partition:?}"
        );
        assert!(partition.replicas.contains(&partition.leader));
    }

    // No record was lost on the way.
    let (servers, name) = (bootstrap.clone(), topic.to_owned());
    let values = tokio::task::spawn_blocking(move || consume(servers, name))
        .await
        .unwrap();
    assert_eq!(values.len(), RECORDS);
    assert!((0..RECORDS).all(|index| values.contains(&format!("record-{index}"))));

    // More replicas than brokers: refused, and the topic stays as it is.
    topics.patch(topic, json!({"spec": {"replicas": 4}})).await;
    let refused = topics
        .wait_not_ready(
            topic,
            "NotSupported",
            "Replication factor 4 is larger than the 3 brokers",
        )
        .await;
    assert_eq!(refused["type"], "Ready");
    assert!(
        assignment(&admin, topic)
            .await
            .iter()
            .all(|partition| partition.replicas.len() == 2)
    );

    // The throttle is gone: no throttled replicas on the topic, no rates on the brokers.
    assert_unthrottled(&admin, topic).await;

    // A figure: 100 partitions from one replica to three (no data in them).
    let wide = "wide";
    topics
        .create(kafka_topic(wide, json!({"partitions": 100, "replicas": 1})))
        .await;
    topics.wait_ready(wide).await;
    let started = std::time::Instant::now();
    topics.patch(wide, json!({"spec": {"replicas": 3}})).await;
    wait_change_done(&topics, wide, 3, WIDE_CHANGE_WAIT).await;
    println!(
        "figure: replication factor 1 -> 3 of 100 partitions without Cruise Control (3 local brokers) in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let described = assignment(&admin, wide).await;
    assert_eq!(described.len(), 100);
    assert!(
        described
            .iter()
            .all(|partition| partition.replicas.len() == 3)
    );
    assert_unthrottled(&admin, wide).await;
    operator.stop().await;
    drop(cluster);
}
