//! The steps of a replication-factor change against a local three-node Kafka cluster, without
//! Kubernetes: submitted once, followed (also by a new operator instance, as after a restart)
//! until done, throttled meanwhile and unthrottled at the end; and what the faults of a
//! (fake) Cruise Control do to the status.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use strimzi_api::topic::{ReplicasChangeState, ReplicasChangeStatus};
use strimzi_operator_common::batch::BatchSettings;
use strimzi_operator_common::cruise_control::CruiseControlClient;
use strimzi_operator_common::http_client::Server;
use strimzi_operator_common::kafka::{
    AdminClient, AdminConfig, HostResolution, KafkaAdmin, NewTopic,
};
use strimzi_operator_common::metrics::Metrics;
use strimzi_topic_operator::error::TopicError;
use strimzi_topic_operator::kafka::{TopicKafka, request_counts};
use strimzi_topic_operator::model::ActualTopic;
use strimzi_topic_operator::replication::{Mover, ReplicationChanger};
use support::{assert_unthrottled, kafka_cluster, overrides};

const TOPIC: &str = "steps";

/// A new operator instance's changer on `bootstrap`.
fn changer(bootstrap: &str) -> (TopicKafka, ReplicationChanger) {
    let admin: Arc<dyn KafkaAdmin> =
        Arc::new(AdminClient::new(AdminConfig::plaintext(bootstrap)).unwrap());
    let metrics = Metrics::new().unwrap();
    let settings = BatchSettings {
        max_queue_size: 16,
        max_batch_size: 8,
        max_linger: Duration::from_millis(10),
        max_in_flight: 1,
    };
    let kafka = TopicKafka::new(admin, settings, request_counts(&metrics).unwrap());
    let mover = Mover::Reassignments {
        throttle: Some(1024 * 1024),
    };
    (kafka.clone(), ReplicationChanger::new(kafka, mover))
}

/// Steps the change to `target` until it is done; how many steps reported it `ongoing`.
async fn step_until_done(kafka: &TopicKafka, changer: &ReplicationChanger, target: i32) -> usize {
    let mut ongoing = 0;
    for _ in 0..300 {
        let actual = kafka.describe(TOPIC).await.unwrap().unwrap();
        match changer.step(TOPIC, &actual, target, None).await.unwrap() {
            None => return ongoing,
            Some(status) => {
                assert_eq!(status.state, Some(ReplicasChangeState::Ongoing));
                assert_eq!(status.target_replicas, Some(target));
                ongoing += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("replication factor {target} not reached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_is_submitted_followed_after_a_restart_and_unthrottled() {
    let cluster = kafka_cluster("kafka-cluster-steps").await;
    let bootstrap = cluster.bootstrap().to_owned();
    let admin = AdminClient::new(AdminConfig::plaintext(&bootstrap)).unwrap();
    let mut topic = NewTopic::new(TOPIC);
    topic.partitions = Some(3);
    topic.replication_factor = Some(1);
    let created = admin.create_topics(&[topic], false).await.unwrap();
    assert!(created[TOPIC].is_ok(), "{created:?}");

    // The first instance submits the change, throttled.
    let (kafka, first) = changer(&bootstrap);
    let actual = kafka.describe(TOPIC).await.unwrap().unwrap();
    let submitted = first.step(TOPIC, &actual, 3, None).await.unwrap().unwrap();
    assert_eq!(submitted.state, Some(ReplicasChangeState::Ongoing));
    let topic_configs = overrides(&admin, TOPIC).await;
    assert!(
        topic_configs.contains_key("follower.replication.throttled.replicas"),
        "{topic_configs:?}"
    );

    // Another instance (a restarted operator) follows it to the end.
    let (kafka, second) = changer(&bootstrap);
    let ongoing = step_until_done(&kafka, &second, 3).await;
    println!("steps seen ongoing: {ongoing}");
    let actual = kafka.describe(TOPIC).await.unwrap().unwrap();
    for partition in &actual.assignment {
        assert_eq!(partition.replicas.len(), 3, "{partition:?}");
    }
    assert!(!actual.is_throttled());
    assert_unthrottled(&admin, TOPIC).await;

    // Shrinking keeps the leaders.
    let leaders: Vec<i32> = actual.assignment.iter().map(|p| p.leader).collect();
    step_until_done(&kafka, &second, 2).await;
    let actual = kafka.describe(TOPIC).await.unwrap().unwrap();
    for (partition, leader) in actual.assignment.iter().zip(leaders) {
        assert_eq!(partition.replicas.len(), 2, "{partition:?}");
        assert_eq!(partition.leader, leader, "{partition:?}");
    }

    // More replicas than brokers: refused, nothing moves.
    let refused = second.step(TOPIC, &actual, 4, None).await.unwrap_err();
    assert!(
        matches!(refused, TopicError::NotSupported(_)),
        "{refused:?}"
    );
    assert_eq!(
        refused.to_string(),
        "Replication factor 4 is larger than the 3 brokers"
    );
    let after = kafka.describe(TOPIC).await.unwrap().unwrap();
    assert_eq!(after.assignment, actual.assignment);

    cruise_control_faults(&kafka, &after).await;
    drop(cluster);
}

/// A fake Cruise Control on 127.0.0.1 that answers every request with `status` and `body`;
/// its port.
async fn fake_cruise_control(status: &'static str, body: &'static str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(read) => request.extend_from_slice(&buffer[..read]),
                }
            }
            let answer = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    port
}

/// The status after one step towards 3 replicas from `previous`, with the Cruise Control at
/// `port` on 127.0.0.1 (plain HTTP, no authentication).
async fn cruise_control_step(
    kafka: &TopicKafka,
    port: u16,
    actual: &ActualTopic,
    previous: Option<&ReplicasChangeStatus>,
) -> ReplicasChangeStatus {
    let client = CruiseControlClient::new(
        Server {
            host: "127.0.0.1".to_owned(),
            port,
            tls: None,
            host_resolution: HostResolution::IpAddressesOnly,
        },
        None,
        Duration::from_secs(5),
    );
    ReplicationChanger::new(kafka.clone(), Mover::CruiseControl(client))
        .step(TOPIC, actual, 3, previous)
        .await
        .unwrap()
        .unwrap()
}

/// What a Cruise Control that fails, refuses or forgot its task does to
/// `status.replicasChange`; the topic (`actual`, two replicas) is left as it is.
async fn cruise_control_faults(kafka: &TopicKafka, actual: &ActualTopic) {
    // Unreachable: pending, with the error.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let status = cruise_control_step(kafka, port, actual, None).await;
    assert_eq!(status.state, Some(ReplicasChangeState::Pending));
    assert_eq!(status.target_replicas, Some(3));
    assert!(status.message.is_some(), "{status:?}");

    // Refused: pending, with Cruise Control's error message.
    let port = fake_cruise_control(
        "500 Internal Server Error",
        r#"{"errorMessage":"java.lang.IllegalArgumentException: no such goal","version":1}"#,
    )
    .await;
    let refused = cruise_control_step(kafka, port, actual, Some(&status)).await;
    assert_eq!(refused.state, Some(ReplicasChangeState::Pending));
    let message = refused.message.unwrap_or_default();
    assert!(message.contains("no such goal"), "{message}");

    // A task Cruise Control does not know any more: pending again, to be asked for anew.
    let ongoing = ReplicasChangeStatus {
        target_replicas: Some(3),
        state: Some(ReplicasChangeState::Ongoing),
        message: None,
        session_id: Some("5a1b0e35-0000-4000-8000-000000000000".to_owned()),
    };
    let port = fake_cruise_control("200 OK", r#"{"userTasks":[],"version":1}"#).await;
    let forgotten = cruise_control_step(kafka, port, actual, Some(&ongoing)).await;
    assert_eq!(forgotten.state, Some(ReplicasChangeState::Pending));
    assert_eq!(forgotten.session_id, None);
    let after = kafka.describe(TOPIC).await.unwrap().unwrap();
    assert_eq!(after.assignment, actual.assignment, "nothing moved");
}
