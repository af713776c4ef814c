//! The topic operator against the real API server and the real Kafka broker: each behaviour
//! driven through KafkaTopic resources and checked in Kafka with the admin client. Decisions
//! that need neither (a changed `spec.topicName` refused, a second KafkaTopic for one topic
//! in conflict, an unmanaged topic left alone) are tested against a mock API in
//! `reconciler_decisions.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;

use serde_json::json;
use strimzi_operator_common::kafka::{AlterConfigOp, ConfigResource, KafkaAdmin};
use support::*;

/// How long a namespace may take to go: Kubernetes' namespace controller deletes its content
/// first, which took over a minute in a CI run of 2026-11-30 on a saturated machine.
const NAMESPACE_DELETION: std::time::Duration = std::time::Duration::from_secs(240);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_updates_reverts_drift_and_deletes_a_topic() {
    let (client, ns) = namespace("to-lifecycle").await;
    let topics = topics(&client, &ns);
    let operator = Operator::on(
        &client,
        &ns,
        &[("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "2000")],
    );
    let admin = admin();
    let topic = format!("{ns}.orders");
    topics
        .create(kafka_topic(
            "orders",
            json!({"topicName": topic, "partitions": 2, "replicas": 1,
               "config": {"retention.ms": 7200000, "cleanup.policy": "delete"}}),
        ))
        .await;
    topics.wait_ready("orders").await;
    wait_partitions(&admin, &topic, 2).await;
    let configs = overrides(&admin, &topic).await;
    assert_eq!(configs["retention.ms"], "7200000");
    assert_eq!(configs["cleanup.policy"], "delete");
    let status = topics.status("orders").await;
    assert_eq!(status["topicName"], topic);
    let described = admin
        .describe_topics(std::slice::from_ref(&topic))
        .await
        .unwrap();
    let id = described[&topic].as_ref().unwrap().topic_id.to_string();
    assert_eq!(status["topicId"], id);
    assert_eq!(status["observedGeneration"], 1);

    // Update: more partitions, a changed config, a config removed.
    topics
        .patch(
            "orders",
            json!({"spec": {"partitions": 4, "config": {"retention.ms": 3600000, "cleanup.policy": null}}}),
        )
        .await;
    topics.wait_ready("orders").await;
    wait_partitions(&admin, &topic, 4).await;
    assert_eq!(
        rdkafka_partitions(&topic).await,
        Some(4),
        "as rdkafka sees it"
    );
    let configs = overrides(&admin, &topic).await;
    assert_eq!(
        configs.get("retention.ms").map(String::as_str),
        Some("3600000")
    );
    assert!(!configs.contains_key("cleanup.policy"), "{configs:?}");

    // Drift made directly in Kafka is reverted by the periodic reconciliation.
    let resource = ConfigResource::topic(&topic);
    let drift = BTreeMap::from([(
        resource.clone(),
        vec![
            AlterConfigOp::Set {
                name: "retention.ms".into(),
                value: "1000".into(),
            },
            AlterConfigOp::Set {
                name: "segment.ms".into(),
                value: "600000".into(),
            },
        ],
    )]);
    let altered = admin
        .incremental_alter_configs(&drift, false)
        .await
        .unwrap();
    assert!(altered[&resource].is_ok());
    eventually("drift reverted", WAIT, || async {
        let configs = overrides(&admin, &topic).await;
        configs.get("retention.ms").map(String::as_str) == Some("3600000")
            && !configs.contains_key("segment.ms")
    })
    .await;

    // A partition decrease is refused; the topic keeps its partitions.
    topics
        .patch("orders", json!({"spec": {"partitions": 1}}))
        .await;
    let refused = topics
        .wait_not_ready("orders", "NotSupported", "Decreasing partitions")
        .await;
    assert_eq!(refused["type"], "Ready");
    wait_partitions(&admin, &topic, 4).await;

    // More replicas than the one broker is refused too.
    topics
        .patch("orders", json!({"spec": {"partitions": 4, "replicas": 3}}))
        .await;
    let refused = topics
        .wait_not_ready("orders", "NotSupported", "Replication factor")
        .await;
    assert_eq!(refused["type"], "Ready");

    // Deleting the resource deletes the topic, then the finalizer.
    topics.delete("orders").await;
    eventually("topic deleted from Kafka", WAIT, || async {
        partitions(&admin, &topic).await.is_none()
    })
    .await;
    assert_eq!(rdkafka_partitions(&topic).await, None, "as rdkafka sees it");
    eventually("KafkaTopic gone", WAIT, || async {
        !topics.exists("orders").await
    })
    .await;
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_defaults_apply_when_partitions_and_replicas_are_unset() {
    let (client, ns) = namespace("to-defaults").await;
    let topics = topics(&client, &ns);
    let operator = Operator::on(&client, &ns, &[]);
    let admin = admin();
    // The resource name is the topic name.
    let name = format!("{ns}-plain");
    topics.create(kafka_topic(&name, json!({}))).await;
    topics.wait_ready(&name).await;
    wait_partitions(&admin, &name, 1).await;
    assert_eq!(topics.status(&name).await["topicName"], name.as_str());
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_renamed_topic_deletes_neither_topic_until_the_name_is_reverted() {
    let (client, ns) = namespace("to-renamed-delete").await;
    let topics = topics(&client, &ns);
    let operator = Operator::on(&client, &ns, &[]);
    let admin = admin();
    // A topic of someone else's, with no KafkaTopic.
    let unrelated = format!("{ns}.unrelated");
    let created = admin
        .create_topics(
            &[strimzi_operator_common::kafka::NewTopic::new(&unrelated)],
            false,
        )
        .await
        .unwrap();
    assert!(created[&unrelated].is_ok(), "{created:?}");
    let managed = format!("{ns}.managed");
    topics
        .create(kafka_topic("renamed", json!({"topicName": managed})))
        .await;
    topics.wait_ready("renamed").await;
    topics
        .patch("renamed", json!({"spec": {"topicName": unrelated}}))
        .await;
    topics
        .wait_not_ready("renamed", "NotSupported", "topicName")
        .await;
    // Deleted while the spec names the unrelated topic: neither topic goes, and the
    // resource stays Terminating with a condition saying why.
    topics.delete("renamed").await;
    let refused = topics
        .wait_not_ready(
            "renamed",
            "NotSupported",
            "until spec.topicName is reverted",
        )
        .await;
    assert!(
        refused["message"].as_str().unwrap().contains(&unrelated),
        "{refused}"
    );
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert!(topics.exists("renamed").await, "held by the finalizer");
    assert!(partitions(&admin, &unrelated).await.is_some(), "unrelated");
    assert!(partitions(&admin, &managed).await.is_some(), "managed");
    // Reverted: the deletion completes and deletes the managed topic only.
    topics
        .patch("renamed", json!({"spec": {"topicName": managed}}))
        .await;
    eventually("KafkaTopic gone", WAIT, || async {
        !topics.exists("renamed").await
    })
    .await;
    eventually("managed topic deleted", WAIT, || async {
        partitions(&admin, &managed).await.is_none()
    })
    .await;
    assert!(partitions(&admin, &unrelated).await.is_some(), "unrelated");
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizers_turned_off_are_removed_and_nothing_stays_terminating() {
    let (client, ns) = namespace("to-no-finalizers").await;
    let topics = topics(&client, &ns);
    let admin = admin();
    // A run with finalizers leaves them on the KafkaTopics.
    let operator = Operator::on(&client, &ns, &[]);
    for name in ["kept", "deleted"] {
        topics
            .create(kafka_topic(
                name,
                json!({"topicName": format!("{ns}.{name}")}),
            ))
            .await;
        topics.wait_ready(name).await;
    }
    operator.stop().await;
    let finalizers = |name: &'static str| {
        let topics = &topics;
        async move {
            topics
                .get(name)
                .await
                .map(|object| object.metadata.finalizers.unwrap_or_default())
        }
    };
    assert_eq!(
        finalizers("kept").await,
        Some(vec!["strimzi.io/topic-operator".to_owned()])
    );
    // Deleted while no operator runs: Terminating, held by the finalizer.
    topics.delete("deleted").await;
    assert!(topics.exists("deleted").await);
    // Run again without finalizers: ours are removed, so neither the KafkaTopic being
    // deleted nor the namespace stays Terminating.
    let operator = Operator::on(&client, &ns, &[("STRIMZI_USE_FINALIZERS", "false")]);
    eventually("finalizer removed", WAIT, || async {
        finalizers("kept").await == Some(vec![])
    })
    .await;
    eventually("deleted KafkaTopic gone", WAIT, || async {
        !topics.exists("deleted").await
    })
    .await;
    topics.wait_ready("kept").await;
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> =
        kube::Api::all(client.clone());
    namespaces.delete(&ns, &Default::default()).await.unwrap();
    eventually("namespace gone", NAMESPACE_DELETION, || async {
        namespaces.get_opt(&ns).await.unwrap().is_none()
    })
    .await;
    operator.stop().await;
    // Without finalizers the operator deletes no topic: the test removes its own.
    let leftovers = ["kept", "deleted"].map(|name| format!("{ns}.{name}"));
    admin.delete_topics(&leftovers).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_alterable_configs_are_changed_and_the_rest_is_a_warning() {
    let (client, ns) = namespace("to-alterable").await;
    let topics = topics(&client, &ns);
    let operator = Operator::on(
        &client,
        &ns,
        &[("STRIMZI_ALTERABLE_TOPIC_CONFIG", "retention.ms")],
    );
    let admin = admin();
    let topic = format!("{ns}.limited");
    topics
        .create(kafka_topic(
            "limited",
            json!({"topicName": topic, "config": {"retention.ms": 1000000, "segment.ms": 900000}}),
        ))
        .await;
    topics.wait_ready("limited").await;
    topics
        .patch(
            "limited",
            json!({"spec": {"config": {"retention.ms": 2000000, "segment.ms": 800000}}}),
        )
        .await;
    eventually("InvalidConfig warning", WAIT, || async {
        topics
            .condition("limited", "Warning")
            .await
            .is_some_and(|warning| {
                warning["reason"] == "InvalidConfig"
                    && warning["message"]
                        .as_str()
                        .unwrap_or_default()
                        .contains("segment.ms")
            })
    })
    .await;
    let configs = overrides(&admin, &topic).await;
    assert_eq!(configs["retention.ms"], "2000000");
    assert_eq!(configs["segment.ms"], "900000");
    assert!(topics.is_ready("limited").await);
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_topic_is_left_alone() {
    let (client, ns) = namespace("to-paused").await;
    let topics = topics(&client, &ns);
    let operator = Operator::on(&client, &ns, &[]);
    let admin = admin();
    let topic = format!("{ns}.paused");
    let mut document = kafka_topic("paused", json!({"topicName": topic}));
    document["metadata"]["annotations"] = json!({"strimzi.io/pause-reconciliation": "true"});
    topics.try_create(document).await.unwrap();
    eventually("ReconciliationPaused", WAIT, || async {
        topics
            .condition("paused", "ReconciliationPaused")
            .await
            .is_some()
    })
    .await;
    assert!(partitions(&admin, &topic).await.is_none());
    topics
        .patch(
            "paused",
            json!({"metadata": {"annotations": {"strimzi.io/pause-reconciliation": null}}}),
        )
        .await;
    topics.wait_ready("paused").await;
    wait_partitions(&admin, &topic, 1).await;
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_restarted_mid_way_loses_nothing() {
    let (client, ns) = namespace("to-restart").await;
    let topics = topics(&client, &ns);
    let admin = admin();
    let names: Vec<String> = (0..30).map(|i| format!("{ns}-t{i}")).collect();
    let operator = Operator::on(&client, &ns, &[]);
    futures::future::join_all(
        names
            .iter()
            .map(|name| topics.create(kafka_topic(name, json!({"partitions": 2})))),
    )
    .await;
    // Stopped while reconciliations are under way.
    operator.stop().await;
    // While it is down, one KafkaTopic is deleted (its finalizer holds it) and one changes.
    topics.delete(&names[0]).await;
    topics
        .patch(&names[1], json!({"spec": {"partitions": 3}}))
        .await;
    let operator = Operator::on(&client, &ns, &[]);
    for name in &names[1..] {
        topics.wait_ready(name).await;
    }
    wait_partitions(&admin, &names[1], 3).await;
    for name in &names[2..] {
        wait_partitions(&admin, name, 2).await;
    }
    eventually("deleted while down", WAIT, || async {
        !topics.exists(&names[0]).await && partitions(&admin, &names[0]).await.is_none()
    })
    .await;
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_bad_specs_each_end_in_a_clear_condition() {
    let (client, ns) = namespace("to-bad").await;
    let topics = topics(&client, &ns);
    let admin = admin();
    let operator = Operator::on(&client, &ns, &[]);
    // Topics that exist with 3 partitions, for KafkaTopics asking for fewer.
    let existing: Vec<_> = (0..33)
        .map(|i| {
            let mut topic =
                strimzi_operator_common::kafka::NewTopic::new(format!("{ns}-shrink{i}"));
            topic.partitions = Some(3);
            topic
        })
        .collect();
    let created = admin.create_topics(&existing, false).await.unwrap();
    assert!(created.values().all(Result::is_ok));
    let negative = (0..34).map(|i| {
        let topics = topics.clone();
        async move {
            let error = topics
                .try_create(kafka_topic(&format!("neg{i}"), json!({"partitions": -1})))
                .await
                .expect_err("the CRD rejects negative partitions");
            assert!(error.to_string().contains("partitions"), "{error}");
        }
    });
    let unknown = (0..33).map(|i| {
        let topics = topics.clone();
        let ns = ns.clone();
        async move {
            let name = format!("unknown{i}");
            let spec =
                json!({"topicName": format!("{ns}-unknown{i}"), "config": {"no.such.config": "x"}});
            topics.create(kafka_topic(&name, spec)).await;
            let condition = topics
                .wait_not_ready(&name, "KafkaError", "no.such.config")
                .await;
            assert_eq!(condition["type"], "Ready");
        }
    });
    let shrink = (0..33).map(|i| {
        let topics = topics.clone();
        let ns = ns.clone();
        async move {
            let name = format!("shrink{i}");
            topics
                .create(kafka_topic(
                    &name,
                    json!({"topicName": format!("{ns}-shrink{i}"), "partitions": 1}),
                ))
                .await;
            topics
                .wait_not_ready(&name, "NotSupported", "Decreasing partitions")
                .await;
        }
    });
    futures::future::join3(
        futures::future::join_all(negative),
        futures::future::join_all(unknown),
        futures::future::join_all(shrink),
    )
    .await;
    for i in 0..33 {
        assert_eq!(
            partitions(&admin, &format!("{ns}-shrink{i}")).await,
            Some(3)
        );
        assert!(
            partitions(&admin, &format!("{ns}-unknown{i}"))
                .await
                .is_none()
        );
    }
    // The operator is still working.
    let good = format!("{ns}-good");
    topics
        .create(kafka_topic(&good, json!({"partitions": 2})))
        .await;
    topics.wait_ready(&good).await;
    assert!(!operator.task.is_finished());
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_is_deleted_even_when_kafka_is_unreachable() {
    let (client, ns) = namespace("to-unreachable").await;
    let topics = topics(&client, &ns);
    let unreachable = format!("127.0.0.1:{}", strimzi_tests::layout::free_port().unwrap());
    let mut config = config_for(&ns, &unreachable, &[]);
    config.kafka.operation_timeout = std::time::Duration::from_secs(2);
    config.kafka.request_timeout = std::time::Duration::from_secs(1);
    let operator = Operator::start(&client, config);
    topics.create(kafka_topic("lonely", json!({}))).await;
    topics.create(kafka_topic("stays", json!({}))).await;
    for name in ["lonely", "stays"] {
        topics.wait_not_ready(name, "KafkaError", "").await;
    }
    // Deleting one KafkaTopic waits for Kafka: the finalizer holds it.
    topics.delete("lonely").await;
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    assert!(topics.exists("lonely").await, "held by the finalizer");
    // Deleting the namespace completes: the finalizers are removed, the topics left.
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> =
        kube::Api::all(client.clone());
    namespaces.delete(&ns, &Default::default()).await.unwrap();
    eventually("namespace gone", NAMESPACE_DELETION, || async {
        namespaces.get_opt(&ns).await.unwrap().is_none()
    })
    .await;
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_several_namespaces_and_only_selected_resources() {
    let (client, first) = namespace("to-multi").await;
    let second = env().namespace("to-multi").await;
    let first_topics = topics(&client, &first);
    let second_topics = topics(&client, &second);
    let admin = admin();
    let namespaces = format!("{first},{second}");
    let operator = Operator::on(
        &client,
        &first,
        &[
            ("STRIMZI_NAMESPACE", namespaces.as_str()),
            ("STRIMZI_RESOURCE_LABELS", "strimzi.io/cluster=my-cluster"),
        ],
    );
    first_topics
        .create(kafka_topic(&format!("{first}-a"), json!({})))
        .await;
    second_topics
        .create(kafka_topic(&format!("{second}-b"), json!({})))
        .await;
    let mut other = kafka_topic(&format!("{second}-other"), json!({}));
    other["metadata"]["labels"] = json!({"strimzi.io/cluster": "other-cluster"});
    second_topics.try_create(other).await.unwrap();
    first_topics.wait_ready(&format!("{first}-a")).await;
    second_topics.wait_ready(&format!("{second}-b")).await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert!(
        partitions(&admin, &format!("{second}-other"))
            .await
            .is_none()
    );
    assert!(
        second_topics
            .status(&format!("{second}-other"))
            .await
            .is_null()
    );
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_config_review_reads_auto_topic_creation() {
    // The test broker runs with auto.create.topics.enable=false.
    let enabled = strimzi_topic_operator::review_cluster_config(&admin())
        .await
        .unwrap();
    assert!(!enabled);
}

/// `GET path` on `127.0.0.1:port`; the whole response, or `None` when nothing listens.
fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    Some(response)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_health_and_manages_topics_until_sigterm() {
    let (client, ns) = namespace("to-binary").await;
    let topics = topics(&client, &ns);
    let binary = env!("CARGO_BIN_EXE_strimzi-topic-operator");
    // A bad value: one readable line and a non-zero exit.
    let refused = std::process::Command::new(binary)
        .env("STRIMZI_NAMESPACE", &ns)
        .env("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", bootstrap())
        .env("STRIMZI_MAX_BATCH_SIZE", "0")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("STRIMZI_MAX_BATCH_SIZE"), "{stderr}");

    let port = strimzi_tests::layout::free_port().unwrap();
    let mut child = std::process::Command::new(binary)
        .env("KUBECONFIG", env().control_plane().kubeconfig())
        .env("STRIMZI_NAMESPACE", &ns)
        .env("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", bootstrap())
        .env("STRIMZI_RESOURCE_LABELS", "strimzi.io/cluster=my-cluster")
        .env("STRIMZI_HTTP_PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let topic = format!("{ns}.from-binary");
    topics
        .create(kafka_topic(
            "from-binary",
            json!({"topicName": topic, "partitions": 3}),
        ))
        .await;
    topics.wait_ready("from-binary").await;
    wait_partitions(&admin(), &topic, 3).await;
    let health = tokio::task::spawn_blocking(move || {
        (
            http_get(port, "/healthy"),
            http_get(port, "/ready"),
            http_get(port, "/metrics"),
        )
    })
    .await
    .unwrap();
    assert!(health.0.unwrap_or_default().starts_with("HTTP/1.0 200"));
    assert!(health.1.unwrap_or_default().starts_with("HTTP/1.0 200"));
    // The queries of Strimzi's operator dashboard for topics, evaluated by promtool.
    use strimzi_tests::prometheus::{
        assert_dashboard_answered, http_body, operator_dashboard_queries, parse_exposition,
    };
    let metrics = health.2.unwrap_or_default();
    assert_dashboard_answered(
        &parse_exposition(http_body(&metrics)),
        &operator_dashboard_queries(&["KafkaTopic"], false),
    );
    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success(), "{status}");
}

fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal} {pid}");
}

/// A broker of this test's own, frozen (SIGSTOP) and resumed (SIGCONT) mid-way: the
/// operator reports the outage and catches up once Kafka answers again. (The test
/// environment's broker cannot be restarted on the same port, so freezing stands in for a
/// restart.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_recovers_when_kafka_comes_back() {
    let (client, ns) = namespace("to-kafka-outage").await;
    let topics = topics(&client, &ns);
    let logs = strimzi_tests::layout::log_dir("topic-operator-outage").unwrap();
    let broker = tokio::task::spawn_blocking(move || {
        strimzi_tests::kafka::KafkaBroker::start(&logs).unwrap_or_else(|error| panic!("{error}"))
    })
    .await
    .unwrap();
    let bootstrap = broker.listener("plain").unwrap().bootstrap.clone();
    let admin = strimzi_operator_common::kafka::AdminClient::new(
        strimzi_operator_common::kafka::AdminConfig::plaintext(&bootstrap),
    )
    .unwrap();
    let mut config = config_for(&ns, &bootstrap, &[]);
    config.kafka.request_timeout = std::time::Duration::from_secs(2);
    config.kafka.operation_timeout = std::time::Duration::from_secs(4);
    let operator = Operator::start(&client, config);
    topics
        .create(kafka_topic("before", json!({"partitions": 1})))
        .await;
    topics.wait_ready("before").await;

    signal(broker.pid(), "-STOP");
    topics
        .create(kafka_topic("during", json!({"partitions": 2})))
        .await;
    topics
        .patch("before", json!({"spec": {"partitions": 3}}))
        .await;
    topics.wait_not_ready("during", "KafkaError", "").await;
    signal(broker.pid(), "-CONT");

    topics.wait_ready("during").await;
    topics.wait_ready("before").await;
    wait_partitions(&admin, "during", 2).await;
    wait_partitions(&admin, "before", 3).await;
    operator.stop().await;
}
