//! The KafkaTopic reconciler's decisions against a real Kafka broker and a mock Kubernetes
//! API (`strimzi_tests::mock_api`): each test calls `reconcile` or `cleanup` directly and
//! states every Kubernetes request the decision makes, in order, with its answer; a request
//! not stated fails the test. A managed topic's creation and deletion are also tested through
//! the real API server and the whole controller in `topics.rs`; the refusals (a changed
//! `spec.topicName`, a second KafkaTopic for one topic) and an unmanaged topic are tested here
//! only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use http::Method;
use kube::core::DeserializeGuard;
use kube::runtime::{reflector, watcher};
use serde_json::{Value, json};
use strimzi_api::topic::{KafkaTopic, KafkaTopicStatus};
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::batch::BatchSettings;
use strimzi_operator_common::controller::Reconciler;
use strimzi_operator_common::kafka::{AdminClient, AdminConfig, KafkaAdmin};
use strimzi_operator_common::metrics::Metrics;
use strimzi_tests::kafka::KafkaBroker;
use strimzi_tests::mock_api::{Scenario, status_body};
use strimzi_tests::resources::{WAIT, eventually, eventually_ok};
use strimzi_topic_operator::error::TopicError;
use strimzi_topic_operator::kafka::{TopicKafka, request_counts};
use strimzi_topic_operator::model::{AlterableConfigs, renamed_deletion_message, renamed_message};
use strimzi_topic_operator::reconciler::{TERMINATING_NAMESPACE_GRACE, TopicReconciler};
use strimzi_topic_operator::replication::{Mover, ReplicationChanger};

/// The namespace of every KafkaTopic here.
const NAMESPACE: &str = "decisions";
/// The path the reconciler reads the namespace at.
const NAMESPACE_PATH: &str = "/api/v1/namespaces/decisions";

/// The bootstrap address of this program's broker, started by the first test that asks.
async fn bootstrap() -> String {
    static BROKER: OnceLock<KafkaBroker> = OnceLock::new();
    tokio::task::spawn_blocking(|| {
        let broker = BROKER.get_or_init(|| {
            let logs = strimzi_tests::layout::log_dir("reconciler-decisions").unwrap();
            KafkaBroker::start(&logs)
                .unwrap_or_else(|error| panic!("starting the Kafka broker: {error}"))
        });
        broker.listener("plain").unwrap().bootstrap.clone()
    })
    .await
    .unwrap()
}

/// Batched Kafka operations on `bootstrap`, with request counters of their own.
fn topic_kafka(bootstrap: &str) -> TopicKafka {
    let admin: Arc<dyn KafkaAdmin> =
        Arc::new(AdminClient::new(AdminConfig::plaintext(bootstrap)).unwrap());
    let settings = BatchSettings {
        max_queue_size: 16,
        max_batch_size: 8,
        max_linger: Duration::from_millis(10),
        max_in_flight: 1,
    };
    TopicKafka::new(
        admin,
        settings,
        request_counts(&Metrics::new().unwrap()).unwrap(),
    )
}

/// A reconciler on `kafka` and the mock API's `client`, with finalizers, seeing `watched`
/// as the cached KafkaTopics.
fn reconciler(
    kafka: &TopicKafka,
    client: kube::Client,
    watched: &[&KafkaTopic],
) -> TopicReconciler {
    let (store, mut writer) = reflector::store::<DeserializeGuard<KafkaTopic>>();
    for resource in watched {
        writer.apply_watcher_event(&watcher::Event::Apply(DeserializeGuard(Ok(
            (*resource).clone()
        ))));
    }
    let replication =
        ReplicationChanger::new(kafka.clone(), Mover::Reassignments { throttle: None });
    TopicReconciler::new(
        kafka.clone(),
        replication,
        client,
        vec![store],
        true,
        AlterableConfigs::All,
    )
}

/// A KafkaTopic `name` of [`NAMESPACE`] with `spec`, created `created` seconds past a fixed
/// minute (of two KafkaTopics naming one topic, the older manages it), with `metadata` and
/// `status` merged in.
fn kafka_topic(
    name: &str,
    created: u32,
    spec: Value,
    metadata: Value,
    status: Value,
) -> KafkaTopic {
    let mut document = json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaTopic",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": format!("uid-{name}"),
            "generation": 1,
            "creationTimestamp": format!("2026-11-30T10:00:{created:02}Z"),
        },
        "spec": spec,
    });
    if let (Some(target), Some(extra)) =
        (document["metadata"].as_object_mut(), metadata.as_object())
    {
        target.extend(extra.clone());
    }
    if !status.is_null() {
        document["status"] = status;
    }
    serde_json::from_value(document).unwrap()
}

/// The namespace as the API server returns it; `terminating` adds a deletion timestamp.
fn namespace(terminating: bool) -> Value {
    let mut namespace = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "uid": "uid-namespace"},
        "status": {"phase": "Active"},
    });
    if terminating {
        namespace["metadata"]["deletionTimestamp"] = json!("2026-11-30T10:05:00Z");
        namespace["status"]["phase"] = json!("Terminating");
    }
    namespace
}

/// The id of `topic` in Kafka, `None` when Kafka does not have it.
async fn topic_id(kafka: &TopicKafka, topic: &str) -> Option<String> {
    let described = kafka
        .admin()
        .describe_topics(&[topic.to_owned()])
        .await
        .unwrap();
    described[topic]
        .as_ref()
        .ok()
        .map(|description| description.topic_id.to_string())
}

/// The id of `topic` once the broker's metadata shows it (it can lag a moment behind a
/// creation).
async fn visible_topic_id(kafka: &TopicKafka, topic: &str) -> String {
    eventually_ok(&format!("topic {topic} in Kafka"), WAIT, || async {
        topic_id(kafka, topic)
            .await
            .ok_or("not in the metadata yet")
    })
    .await
}

/// The error of a reconciliation that must fail.
async fn refusal(reconciler: &TopicReconciler, resource: KafkaTopic) -> TopicError {
    match reconciler.reconcile(Arc::new(resource)).await {
        Ok(reconciled) => panic!("reconciled: {reconciled:?}"),
        Err(error) => error,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_topic_is_created_and_its_status_names_it_without_kubernetes_calls() {
    let kafka = topic_kafka(&bootstrap().await);
    let (client, scenario) = Scenario::new();
    let verifier = scenario.start();
    let reconciler = reconciler(&kafka, client, &[]);
    let resource = kafka_topic(
        "orders",
        0,
        json!({"topicName": "decisions.orders", "partitions": 3, "replicas": 1}),
        json!({}),
        Value::Null,
    );

    let created = reconciler
        .reconcile(Arc::new(resource.clone()))
        .await
        .unwrap();
    let id = visible_topic_id(&kafka, "decisions.orders").await;
    assert_eq!(
        created.status,
        KafkaTopicStatus {
            topic_name: Some("decisions.orders".to_owned()),
            topic_id: Some(id.clone()),
            ..KafkaTopicStatus::default()
        }
    );
    assert!(created.warnings.is_empty() && created.pending.is_none() && created.state.is_none());
    let described = kafka.describe("decisions.orders").await.unwrap().unwrap();
    assert_eq!(described.partitions, 3);

    // Reconciled again with that status: the same topic, nothing created.
    let mut again = resource;
    again.status = Some(created.status.clone());
    let unchanged = reconciler.reconcile(Arc::new(again)).await.unwrap();
    assert_eq!(unchanged.status, created.status);
    verifier.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unmanaged_topic_touches_neither_kafka_nor_kubernetes() {
    let kafka = topic_kafka(&bootstrap().await);
    let (client, scenario) = Scenario::new();
    let verifier = scenario.start();
    let reconciler = reconciler(&kafka, client, &[]);
    let resource = Arc::new(kafka_topic(
        "unmanaged",
        0,
        json!({"topicName": "decisions.unmanaged", "partitions": 3}),
        json!({"annotations": {"strimzi.io/managed": "false"}}),
        json!({"topicName": "decisions.unmanaged", "topicId": "an-id-from-before"}),
    ));

    let reconciled = reconciler.reconcile(resource.clone()).await.unwrap();
    assert_eq!(
        reconciled.status,
        KafkaTopicStatus {
            topic_name: Some("decisions.unmanaged".to_owned()),
            topic_id: Some("an-id-from-before".to_owned()),
            ..KafkaTopicStatus::default()
        },
        "the names of before are kept"
    );
    // Deleted: no namespace read, no topic deleted.
    reconciler.cleanup(resource).await.unwrap();
    assert_eq!(kafka.requests().total(), 0, "no Kafka request");
    assert_eq!(topic_id(&kafka, "decisions.unmanaged").await, None);
    verifier.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_topic_name_is_refused_and_its_deletion_waits_unless_the_namespace_goes() {
    let kafka = topic_kafka(&bootstrap().await);
    let (client, scenario) = Scenario::new();
    let verifier = scenario
        .expect(Method::GET, NAMESPACE_PATH)
        .respond_json(200, namespace(false))
        .expect(Method::GET, NAMESPACE_PATH)
        .respond_json(200, namespace(true))
        .start();
    let reconciler = reconciler(&kafka, client, &[]);
    let renamed = Arc::new(kafka_topic(
        "renamed",
        0,
        json!({"topicName": "decisions.after"}),
        json!({}),
        json!({"topicName": "decisions.before", "topicId": "id-before"}),
    ));

    let refused = refusal(&reconciler, (*renamed).clone()).await;
    assert_eq!(refused.reason(), "NotSupported");
    match refused {
        TopicError::NotSupported(message) => {
            assert_eq!(message, renamed_message("decisions.before"));
        }
        other => panic!("{other:?}"),
    }
    // Deleted in a live namespace: refused until the name is reverted.
    match reconciler.cleanup(renamed.clone()).await {
        Err(TopicError::NotSupported(message)) => assert_eq!(
            message,
            renamed_deletion_message("decisions.before", "decisions.after")
        ),
        other => panic!("{other:?}"),
    }
    // Deleted with its namespace: let go, both topics left in Kafka.
    reconciler.cleanup(renamed).await.unwrap();
    assert_eq!(kafka.requests().total(), 0, "no Kafka request");
    assert_eq!(topic_id(&kafka, "decisions.after").await, None);
    verifier.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_kafka_topic_naming_a_managed_topic_gets_a_resource_conflict() {
    let kafka = topic_kafka(&bootstrap().await);
    let (client, scenario) = Scenario::new();
    let verifier = scenario.start();
    let spec = json!({"topicName": "decisions.shared", "partitions": 2});
    let first = kafka_topic("first", 0, spec.clone(), json!({}), Value::Null);
    let created = reconciler(&kafka, client.clone(), &[&first])
        .reconcile(Arc::new(first.clone()))
        .await
        .unwrap();
    let id = created.status.topic_id.clone().expect("created");
    // The first one as the cache has it once the controller wrote its status.
    let ready_first = kafka_topic(
        "first",
        0,
        spec,
        json!({}),
        json!({
            "topicName": "decisions.shared",
            "topicId": id,
            "conditions": [{"type": "Ready", "status": "True"}],
        }),
    );
    let second = Arc::new(kafka_topic(
        "second",
        1,
        json!({"topicName": "decisions.shared", "partitions": 5}),
        json!({}),
        Value::Null,
    ));
    let reconciler = reconciler(&kafka, client, &[&ready_first, &second]);
    let before = kafka.requests().total();

    let conflict = refusal(&reconciler, (*second).clone()).await;
    assert_eq!(conflict.reason(), "ResourceConflict");
    match conflict {
        TopicError::ResourceConflict(message) => assert_eq!(
            message,
            "Managed by Ref{namespace='decisions', name='first'}"
        ),
        other => panic!("{other:?}"),
    }
    // Deleting the loser leaves the topic to the winner, without reading the namespace.
    reconciler.cleanup(second).await.unwrap();
    assert_eq!(kafka.requests().total(), before, "no Kafka request");
    assert_eq!(visible_topic_id(&kafka, "decisions.shared").await, id);
    let described = kafka.describe("decisions.shared").await.unwrap().unwrap();
    assert_eq!(described.partitions, 2, "the winner's partitions");
    // The winner stays as it was: reconciled again, the same topic, no warning.
    let winner = reconciler.reconcile(Arc::new(ready_first)).await.unwrap();
    assert_eq!(winner.status.topic_id.as_deref(), Some(id.as_str()));
    assert!(winner.warnings.is_empty() && winner.pending.is_none());
    verifier.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_kafka_topic_in_a_live_namespace_deletes_its_topic() {
    let kafka = topic_kafka(&bootstrap().await);
    let (client, scenario) = Scenario::new();
    let verifier = scenario
        .expect(Method::GET, NAMESPACE_PATH)
        .respond_json(200, namespace(false))
        .start();
    let reconciler = reconciler(&kafka, client, &[]);
    let resource = kafka_topic(
        "deleted",
        0,
        json!({"topicName": "decisions.deleted"}),
        json!({"finalizers": ["strimzi.io/topic-operator"]}),
        Value::Null,
    );
    let created = reconciler
        .reconcile(Arc::new(resource.clone()))
        .await
        .unwrap();
    let id = visible_topic_id(&kafka, "decisions.deleted").await;
    assert_eq!(created.status.topic_id, Some(id));

    let mut deleted = resource;
    deleted.status = Some(created.status);
    deleted.metadata.deletion_timestamp =
        Some(serde_json::from_value(json!("2026-11-30T10:05:00Z")).unwrap());
    reconciler.cleanup(Arc::new(deleted)).await.unwrap();
    // The broker's metadata may lag a moment behind the deletion.
    eventually("the topic deleted from Kafka", WAIT, || async {
        topic_id(&kafka, "decisions.deleted").await.is_none()
    })
    .await;
    verifier.finish().await;
}

/// How long after the grace a cleanup that gave up must have returned.
const PAST_THE_GRACE: Duration = Duration::from_secs(5);

/// A TCP listener that accepts connections and never answers: a Kafka that hangs.
async fn silent_kafka() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((connection, _)) = listener.accept().await {
            held.push(connection);
        }
    });
    (address, task)
}

/// How long `cleanup` of a KafkaTopic on a Kafka that does not answer takes when the
/// namespace read is answered with `status` and `namespace`; `None` when it still waits
/// [`PAST_THE_GRACE`] after the grace.
async fn cleanup_time_on_a_silent_kafka(
    kafka: &TopicKafka,
    status: u16,
    namespace: Value,
) -> Option<Duration> {
    let (client, scenario) = Scenario::new();
    let verifier = scenario
        .expect(Method::GET, NAMESPACE_PATH)
        .respond_json(status, namespace)
        .start();
    let reconciler = reconciler(kafka, client, &[]);
    let resource = Arc::new(kafka_topic(
        "held",
        0,
        json!({"topicName": "decisions.held"}),
        json!({"finalizers": ["strimzi.io/topic-operator"]}),
        json!({"topicName": "decisions.held", "topicId": "id-held"}),
    ));
    let started = Instant::now();
    let cleaned = tokio::time::timeout(
        TERMINATING_NAMESPACE_GRACE + PAST_THE_GRACE,
        reconciler.cleanup(resource),
    )
    .await;
    let elapsed = started.elapsed();
    verifier.finish().await;
    match cleaned {
        Ok(result) => {
            result.unwrap();
            Some(elapsed)
        }
        Err(_) => None,
    }
}

/// Named to sort second: libtest starts tests in name order, so this one (15 s) starts at
/// once, beside the first, which waits for the broker's start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cleanup_in_a_terminating_or_gone_namespace_gives_up_on_a_silent_kafka_after_the_grace() {
    let (address, listener) = silent_kafka().await;
    let kafka = topic_kafka(&address);
    let not_found = status_body(404, "NotFound", "namespaces \"decisions\" not found");
    let (terminating, gone, live) = tokio::join!(
        cleanup_time_on_a_silent_kafka(&kafka, 200, namespace(true)),
        cleanup_time_on_a_silent_kafka(&kafka, 404, not_found),
        cleanup_time_on_a_silent_kafka(&kafka, 200, namespace(false)),
    );
    for (case, time) in [("terminating", terminating), ("gone", gone)] {
        let time = time.unwrap_or_else(|| panic!("{case}: still waiting for Kafka"));
        assert!(
            time >= TERMINATING_NAMESPACE_GRACE,
            "{case}: given up after {time:?}"
        );
    }
    assert_eq!(live, None, "a live namespace waits for Kafka");
    listener.abort();
}
