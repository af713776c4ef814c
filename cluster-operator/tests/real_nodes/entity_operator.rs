//! What a Kafka resource asks for around its nodes, on the real-node environment with the
//! test environment's Kafka image and our operator image: the entity operator (our topic and
//! user operators, as two containers of one pod, with no operator started by the test) and
//! Kafka Exporter (the image's contract stand-in for it). The topic operator watches another
//! namespace; a KafkaUser's certificate lets a client in over mutual TLS; Kafka Exporter
//! reaches the broker with the identity the operator gives it and reports a topic and a
//! consumer group without members; the Grafana
//! dashboard's every metric is served by a running operator; bad input is refused with a
//! condition and nothing restarted; a cluster CA renewal is reloaded by the nodes and reaches the
//! components' certificates, and a client trusting the CA certificate of before (the
//! mutual-TLS user's) still gets in; removing each section removes its objects and nothing
//! else.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use super::env;
use crate::support::fast_start::{http_readiness_probe, topic_operator_startup_probe};
use crate::support::real_nodes::{
    Startup, binaries, bootstrap, cluster_ca_file, component_pod, delete_when_done, eventually,
    http_get, persistent_cluster, process_named, records, replaced_component_pod, secret_file,
    sorted, topic_ready,
};
use crate::support::{apply, condition, names, ready, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::layout::free_port;
use strimzi_tests::measure::rss_mib;

const CLUSTER: &str = "eo";

/// One controller and one broker with a mutual-TLS listener, the entity operator (its topic
/// operator watching `topics_ns`) and Kafka Exporter, all with the quicker probes of
/// [`Startup::Fast`].
fn documents(topics_ns: &str) -> Vec<Value> {
    let mut documents = persistent_cluster(
        CLUSTER,
        (1, 1),
        &json!({
            "offsets.topic.replication.factor": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
        }),
        true,
        Startup::Fast,
    );
    let kafka = documents
        .iter_mut()
        .find(|document| document["kind"] == "Kafka")
        .unwrap();
    kafka["spec"]["entityOperator"] = json!({
        "topicOperator": {"watchedNamespace": topics_ns, "reconciliationIntervalMs": 30000,
                          "startupProbe": topic_operator_startup_probe(),
                          "readinessProbe": http_readiness_probe()},
        "userOperator": {"logging": {"type": "inline", "loggers": {"rootLogger.level": "DEBUG"}},
                         "readinessProbe": http_readiness_probe()},
    });
    kafka["spec"]["kafkaExporter"] = json!({
        "groupRegex": ".*", "topicRegex": ".*", "readinessProbe": http_readiness_probe(),
    });
    documents
}

/// Merge-patches the Kafka's spec.
async fn patch_kafka(client: &Client, ns: &str, spec: Value) {
    Api::<strimzi_api::kafka::Kafka>::namespaced(client.clone(), ns)
        .patch(
            CLUSTER,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": spec})),
        )
        .await
        .unwrap();
}

/// Waits until the Kafka is `NotReady` with `InvalidConfigurationException` for its current
/// generation, with a message naming `field`.
async fn refused_for(client: &Client, ns: &str, field: &str) {
    let kafkas: Api<strimzi_api::kafka::Kafka> = Api::namespaced(client.clone(), ns);
    wait_for(
        &kafkas,
        CLUSTER,
        &format!("the Kafka refused for {field}"),
        |kafka| {
            let kafka = kafka?;
            let refusal = condition(kafka, "NotReady")?;
            (refusal.reason.as_deref() == Some("InvalidConfigurationException")
                && refusal.message.as_deref()?.contains(field)
                && kafka.status.as_ref()?.observed_generation == kafka.metadata.generation)
                .then_some(())
        },
    )
    .await;
}

/// The uids of the Kafka node pods, by name.
async fn node_pod_uids(client: &Client, ns: &str) -> BTreeMap<String, String> {
    Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&format!("strimzi.io/name={CLUSTER}-kafka")))
        .await
        .unwrap()
        .items
        .iter()
        .map(|pod| (pod.name_any(), pod.uid().unwrap_or_default()))
        .collect()
}

/// Whether the Prometheus text `metrics` has a sample of `name`.
fn has_metric(metrics: &str, name: &str) -> bool {
    metrics
        .lines()
        .any(|line| line.starts_with(name) && line[name.len()..].starts_with(['{', ' ']))
}

/// Every metric name the dashboard queries (`strimzi_*` and `process_*` identifiers in its
/// expressions and variable queries).
fn dashboard_metrics() -> BTreeSet<String> {
    let path = strimzi_tests::reference::workspace_root()
        .join("deploy/grafana-dashboards/strimzi-rs-operators.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut texts = Vec::new();
    collect_queries(&dashboard, &mut texts);
    let mut found = BTreeSet::new();
    for text in texts {
        let mut rest = text.as_str();
        while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
            rest = &rest[start..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let word = &rest[..end];
            if word.starts_with("strimzi_") || word.starts_with("process_") {
                found.insert(word.to_owned());
            }
            rest = &rest[end..];
        }
    }
    found
}

fn collect_queries(value: &Value, texts: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("expr" | "query" | "definition", Value::String(text)) => {
                        texts.push(text.clone());
                    }
                    _ => collect_queries(value, texts),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_queries(item, texts)),
        _ => {}
    }
}

fn topic(name: &str, partitions: i32) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaTopic",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": CLUSTER}},
        "spec": {"partitions": partitions, "replicas": 1},
    })
}

#[tokio::test]
async fn the_entity_operator_and_kafka_exporter_run_next_to_the_brokers() {
    let _room = super::room_for(super::Weight::Light).await;
    let env = env();
    let client = env.client().await;
    let network = env.network().expect("a real-node environment");
    let ns = env.namespace("eo").await;
    let topics_ns = env.namespace("eo-topics").await;
    let _deleted = delete_when_done(env, &[&ns, &topics_ns]);
    let operator_port = free_port().unwrap();
    let _operator = crate::support::spawn_cluster_operator(
        env,
        binaries(),
        &ns,
        operator_port,
        // The topic operator watches a namespace of its own.
        &[(
            strimzi_cluster_operator::config::ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED,
            "true",
        )],
    );
    let applied = Instant::now();
    for document in documents(&topics_ns) {
        apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;
    // Ready waits for the components' Deployments too. A figure, not an assertion.
    println!(
        "figure: Kafka with entity operator and Kafka Exporter applied to Ready on a real node in {:.1}s",
        applied.elapsed().as_secs_f64()
    );

    // The entity operator's pod runs our two operators from our image.
    let eo_pod = component_pod(&client, &ns, &format!("{CLUSTER}-entity-operator")).await;
    let spec = eo_pod.spec.as_ref().unwrap();
    let containers: Vec<(&str, Option<&str>)> = spec
        .containers
        .iter()
        .map(|c| (c.name.as_str(), c.image.as_deref()))
        .collect();
    let image = Some(strimzi_operator_common::OPERATOR_IMAGE);
    assert_eq!(
        containers,
        [("topic-operator", image), ("user-operator", image)]
    );
    assert_eq!(
        spec.service_account_name.as_deref(),
        Some(format!("{CLUSTER}-entity-operator").as_str())
    );
    let profile = strimzi_tests::layout::operator_image_profile();
    for program in ["strimzi-topic-operator", "strimzi-user-operator"] {
        let pid = process_named(program).unwrap_or_else(|| panic!("no {program} process"));
        println!(
            "figure: entity operator {program} RSS {:.1} MiB (peak {:.1} MiB; {profile} build)",
            rss_mib(pid, "VmRSS"),
            rss_mib(pid, "VmHWM")
        );
    }

    // Its Role and the topic operator's binding are in the watched namespace too; the user
    // operator, watching the Kafka's namespace, has its binding only there.
    let role = format!("{CLUSTER}-entity-operator");
    for namespace in [&ns, &topics_ns] {
        assert_eq!(
            names::<Role>(&client, namespace, &format!("strimzi.io/name={role}")).await,
            std::slice::from_ref(&role),
            "{namespace}"
        );
    }
    let bindings = |namespace: String| {
        let client = client.clone();
        async move {
            names::<RoleBinding>(
                &client,
                &namespace,
                &format!("strimzi.io/cluster={CLUSTER}"),
            )
            .await
        }
    };
    assert_eq!(
        bindings(ns.clone()).await,
        [
            format!("{CLUSTER}-entity-topic-operator-role"),
            format!("{CLUSTER}-entity-user-operator-role"),
            format!("{CLUSTER}-kafka-role"),
        ]
    );
    assert_eq!(
        bindings(topics_ns.clone()).await,
        [format!("{CLUSTER}-entity-topic-operator-role")]
    );

    // The topic operator manages the topics of the other namespace.
    apply(&client, &topics_ns, &topic("lagging", 2)).await;
    topic_ready(&client, &topics_ns, "lagging").await;
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(&kafka, "plain"),
    );
    assert_eq!(
        eventually("describing topic lagging", || plain.describe("lagging")).await,
        (2, 1)
    );

    // A tls KafkaUser's Secret, made by the user operator, lets a client in over mutual TLS.
    apply(
        &client,
        &ns,
        &crate::support::kafka_user(
            "alice",
            CLUSTER,
            json!({"authentication": {"type": "tls"}, "quotas": {"producerByteRate": 1048576}}),
        ),
    )
    .await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    wait_for(
        &secrets,
        "alice",
        "the Secret of KafkaUser alice",
        |secret| secret?.data.as_ref()?.get("user.key").map(drop),
    )
    .await;
    let cluster_ca = cluster_ca_file(&client, &ns, CLUSTER).await;
    let (cert, key) = (
        secret_file(&client, &ns, "alice", "user.crt").await,
        secret_file(&client, &ns, "alice", "user.key").await,
    );
    let alice = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(&kafka, "mtls"),
    )
    .tls(&cluster_ca)
    .certificate(&cert, &key);
    eventually("producing as alice over mutual TLS", || {
        alice.produce("lagging", 10, "alice")
    })
    .await;

    // Kafka Exporter reaches the broker over mutual TLS with the certificate, trust bundle and
    // bootstrap address the operator gives it (a super user under the cluster's
    // authorization), and reports the topic and a group that read part of it and has no
    // member left, which it shows only because the operator passes
    // KAFKA_EXPORTER_OFFSET_SHOW_ALL (true by default). How the exporter computes lag is its
    // own business, tested with the stand-in (standins/kafka-exporter), not here.
    eventually("consuming in group watchers", || {
        plain.consume_in_group("lagging", 4, "watchers")
    })
    .await;
    eventually("producing more", || plain.produce("lagging", 6, "more")).await;
    let exporter = component_pod(&client, &ns, &format!("{CLUSTER}-kafka-exporter")).await;
    let exporter_ip = exporter.status.unwrap().pod_ip.unwrap();
    let exported = eventually("the topic and group on Kafka Exporter's metrics", || {
        let text = http_get(network, &format!("http://{exporter_ip}:9404/metrics"))?;
        let group = text.lines().any(|line| {
            line.starts_with("kafka_consumergroup_")
                && line.contains("consumergroup=\"watchers\"")
                && line.contains("topic=\"lagging\"")
        });
        let partitions = text.lines().any(|line| {
            line.starts_with("kafka_topic_partitions{") && line.contains("topic=\"lagging\"")
        });
        (group && partitions)
            .then_some(text)
            .ok_or_else(|| "not yet".to_owned())
    })
    .await;
    for line in [
        "kafka_brokers 1",
        "kafka_topic_partitions{topic=\"lagging\"} 2",
    ] {
        assert!(
            exported.lines().any(|found| found == line),
            "{line}:\n{exported}"
        );
    }

    // Bad input: a clear condition on the Kafka, and the nodes untouched.
    let nodes_before = node_pod_uids(&client, &ns).await;
    patch_kafka(
        &client,
        &ns,
        json!({"entityOperator": {"topicOperator": {"watchedNamespace": "Not_A_Namespace"}}}),
    )
    .await;
    refused_for(
        &client,
        &ns,
        "spec.entityOperator.topicOperator.watchedNamespace",
    )
    .await;
    patch_kafka(
        &client,
        &ns,
        json!({"entityOperator": {"topicOperator": {"watchedNamespace": topics_ns}},
               "kafkaExporter": {"logging": "loud"}}),
    )
    .await;
    refused_for(&client, &ns, "spec.kafkaExporter.logging").await;
    patch_kafka(&client, &ns, json!({"kafkaExporter": {"logging": "debug"}})).await;
    ready(&client, &ns, CLUSTER).await;
    assert_eq!(node_pod_uids(&client, &ns).await, nodes_before);

    // A cluster CA renewal (the nodes reload their certificates) reaches the components'
    // certificates; the entity operator restarts and keeps working with its new certificate.
    let eo_secret = format!("{CLUSTER}-entity-topic-operator-certs");
    let old_certificate =
        crate::support::real_nodes::secret_value(&client, &ns, &eo_secret, "entity-operator.crt")
            .await;
    Api::<Secret>::namespaced(client.clone(), &ns)
        .patch(
            &format!("{CLUSTER}-cluster-ca-cert"),
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"strimzi.io/force-renew": "true"}}})),
        )
        .await
        .unwrap();
    wait_for(
        &secrets,
        &eo_secret,
        "the entity operator's certificate issued again",
        |secret| {
            let secret = secret?;
            let generation = secret
                .annotations()
                .get("strimzi.io/cluster-ca-cert-generation")?;
            let certificate = &secret.data.as_ref()?.get("entity-operator.crt")?.0;
            (generation != "0" && *certificate != old_certificate).then_some(())
        },
    )
    .await;
    ready(&client, &ns, CLUSTER).await;
    // The Kafka may still show its Ready status of before the renewal: the new pod is
    // waited for (a renewal that did not restart the entity operator ends in the wait's
    // failure).
    let renewed_pod =
        replaced_component_pod(&client, &ns, &format!("{CLUSTER}-entity-operator"), &eo_pod).await;
    apply(&client, &topics_ns, &topic("after-renewal", 1)).await;
    topic_ready(&client, &topics_ns, "after-renewal").await;

    // Every metric the Grafana dashboard queries is served by a running operator: the cluster
    // operator (its restart counter lists each reason from the start) or the entity
    // operator's two.
    let eo_ip = renewed_pod.status.as_ref().unwrap().pod_ip.clone().unwrap();
    let mut scraped = String::new();
    for url in [
        format!("http://127.0.0.1:{operator_port}/metrics"),
        format!("http://{eo_ip}:8080/metrics"),
        format!("http://{eo_ip}:8081/metrics"),
    ] {
        scraped.push_str(&eventually(&format!("scraping {url}"), || http_get(network, &url)).await);
    }
    let wanted = dashboard_metrics();
    assert!(wanted.len() >= 15, "{wanted:?}");
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|name| !has_metric(&scraped, name))
        .collect();
    assert!(
        missing.is_empty(),
        "the dashboard queries metrics no operator serves: {missing:?}"
    );

    // Removing a section removes its objects, and nothing else.
    let nodes_before = node_pod_uids(&client, &ns).await;
    let exporter_name = format!("{CLUSTER}-kafka-exporter");
    patch_kafka(&client, &ns, json!({"kafkaExporter": null})).await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    wait_for(
        &deployments,
        &exporter_name,
        "Kafka Exporter's Deployment gone",
        |found| found.is_none().then_some(()),
    )
    .await;
    ready(&client, &ns, CLUSTER).await;
    assert!(
        Api::<ServiceAccount>::namespaced(client.clone(), &ns)
            .get_opt(&exporter_name)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        secrets
            .get_opt(&format!("{exporter_name}-certs"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        deployments
            .get_opt(&format!("{CLUSTER}-entity-operator"))
            .await
            .unwrap()
            .is_some()
    );

    patch_kafka(&client, &ns, json!({"entityOperator": null})).await;
    wait_for(
        &deployments,
        &format!("{CLUSTER}-entity-operator"),
        "the entity operator's Deployment gone",
        |found| found.is_none().then_some(()),
    )
    .await;
    ready(&client, &ns, CLUSTER).await;
    let component_selector = "strimzi.io/component-type in (entity-operator,entity-topic-operator,entity-user-operator,kafka-exporter)";
    for namespace in [&ns, &topics_ns] {
        assert!(
            names::<Role>(&client, namespace, component_selector)
                .await
                .is_empty()
        );
        assert!(
            names::<RoleBinding>(&client, namespace, component_selector)
                .await
                .is_empty()
        );
    }
    assert!(
        names::<Secret>(&client, &ns, component_selector)
            .await
            .is_empty()
    );
    assert!(
        names::<ConfigMap>(&client, &ns, component_selector)
            .await
            .is_empty()
    );
    assert!(
        names::<NetworkPolicy>(&client, &ns, component_selector)
            .await
            .is_empty()
    );
    assert!(
        names::<ServiceAccount>(&client, &ns, component_selector)
            .await
            .is_empty()
    );
    // The user's resources and the cluster stay, and alice, trusting the cluster CA
    // certificate of before the renewal, still gets in.
    assert!(secrets.get_opt("alice").await.unwrap().is_some());
    assert_eq!(node_pod_uids(&client, &ns).await, nodes_before);
    let read = eventually("consuming after the removals", || {
        alice.consume("lagging", 16)
    })
    .await;
    assert_eq!(read.len(), 16);
    assert_eq!(
        sorted(
            read.into_iter()
                .filter(|value| value.starts_with("alice"))
                .collect()
        ),
        records("alice", 10)
    );
}
