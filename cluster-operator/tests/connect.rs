//! Kafka Connect on the real-node environment with Strimzi's Kafka image: a one-broker
//! ephemeral Kafka, a KafkaConnect of one worker talking TLS to it (the cluster CA copied
//! into the trusted certificates Secret, read by the worker through the Kubernetes Secret
//! config provider), whose status lists the MirrorMaker connectors the image ships; a
//! KafkaConnector (MirrorMaker's heartbeat connector) that runs, is paused, stopped, resumed
//! and restarted by annotation, whose offsets are listed into a ConfigMap and reset; a connector of an unknown class refused with Connect's
//! message; a deleted KafkaConnector's connector removed; a changed spec replacing the worker;
//! deleting the KafkaConnect removing what it made. One cluster for every check.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::time::Instant;

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::connect::KafkaConnect;
use strimzi_api::connector::KafkaConnector;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_tests::environment::TestEnv;
use support::real_nodes::{binaries, small_ephemeral_cluster};
use support::{apply, condition_of, names, ready, wait_for, wait_gone};

const CLUSTER: &str = "cc";
const CONNECT: &str = "cc-connect-test";

fn env() -> &'static TestEnv {
    TestEnv::shared_real()
}

/// A KafkaConnect of one worker over the TLS listener, managed by KafkaConnectors.
fn connect(group: &str) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaConnect",
        "metadata": {
            "name": CONNECT,
            "annotations": {"strimzi.io/use-connector-resources": "true"},
        },
        "spec": {
            "replicas": 1,
            "bootstrapServers": format!("{CLUSTER}-kafka-bootstrap:9093"),
            "groupId": group,
            "configStorageTopic": "connect-configs",
            "statusStorageTopic": "connect-status",
            "offsetStorageTopic": "connect-offsets",
            "tls": {"trustedCertificates": [
                {"secretName": format!("{CLUSTER}-cluster-ca-cert"), "pattern": "*.crt"},
            ]},
            "jvmOptions": {"-Xms": "256m", "-Xmx": "384m"},
            "readinessProbe": {"initialDelaySeconds": 15},
            "config": {
                "config.storage.replication.factor": -1,
                "offset.storage.replication.factor": -1,
                "status.storage.replication.factor": -1,
            },
        },
    })
}

/// A KafkaConnector of `class` for the Connect cluster.
fn connector(name: &str, class: &str, extra: Value) -> Value {
    let mut config = json!({
        "source.cluster.alias": "source",
        "target.cluster.alias": "target",
        "target.cluster.bootstrap.servers": format!("{CLUSTER}-kafka-bootstrap:9092"),
        "heartbeats.topic.replication.factor": 1,
        "emit.heartbeats.interval.seconds": 1,
    });
    for (key, value) in extra.as_object().into_iter().flatten() {
        config[key] = value.clone();
    }
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaConnector",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": CONNECT}},
        "spec": {"class": class, "tasksMax": 1, "config": config},
    })
}

/// Waits until the KafkaConnect is Ready for its current generation.
async fn connect_ready(client: &Client, ns: &str) -> KafkaConnect {
    let api: Api<KafkaConnect> = Api::namespaced(client.clone(), ns);
    wait_for(&api, CONNECT, "the KafkaConnect to be Ready", |connect| {
        let connect = connect?;
        let status = connect.status.as_ref()?;
        (condition_of(status.conditions.as_ref(), "Ready").is_some()
            && status.observed_generation == connect.metadata.generation)
            .then(|| connect.clone())
    })
    .await
}

/// Waits until connector `name` reports `state` with a Ready condition.
async fn connector_in_state(client: &Client, ns: &str, name: &str, state: &str) -> KafkaConnector {
    let api: Api<KafkaConnector> = Api::namespaced(client.clone(), ns);
    wait_for(
        &api,
        name,
        &format!("connector {name} {state}"),
        |connector| {
            let connector = connector?;
            let status = connector.status.as_ref()?;
            let reported = status.connector_status.as_ref()?.0.get("connector")?["state"].clone();
            (condition_of(status.conditions.as_ref(), "Ready").is_some()
                && status.observed_generation == connector.metadata.generation
                && reported == state)
                .then(|| connector.clone())
        },
    )
    .await
}

async fn patch_connector(client: &Client, ns: &str, name: &str, patch: Value) {
    Api::<KafkaConnector>::namespaced(client.clone(), ns)
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
}

#[tokio::test]
async fn kafka_connect_runs_connectors_from_kafka_connectors() {
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("connect").await;
    let _operator = support::spawn_cluster_operator(
        env,
        binaries(),
        &ns,
        strimzi_tests::layout::free_port().unwrap(),
        &[],
    );
    for document in small_ephemeral_cluster(CLUSTER, "512m") {
        apply(&client, &ns, &document).await;
    }
    ready(&client, &ns, CLUSTER).await;

    let applied = Instant::now();
    apply(&client, &ns, &connect("connect-group")).await;
    let ready_connect = connect_ready(&client, &ns).await;
    // A figure for the README, not an assertion.
    println!(
        "figure: KafkaConnect (1 worker, TLS) applied to Ready on a real node in {:.1}s",
        applied.elapsed().as_secs_f64()
    );
    let status = ready_connect.status.unwrap();
    assert_eq!(
        status.url.as_deref(),
        Some(format!("http://{CONNECT}-connect-api.{ns}.svc:8083").as_str())
    );
    assert_eq!(status.replicas, Some(1));
    assert!(
        status
            .label_selector
            .as_deref()
            .unwrap()
            .contains(&format!("strimzi.io/name={CONNECT}-connect"))
    );
    let classes: Vec<String> = status
        .connector_plugins
        .unwrap_or_default()
        .into_iter()
        .filter_map(|plugin| plugin.class)
        .collect();
    for class in [
        "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
        "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
    ] {
        assert!(classes.iter().any(|found| found == class), "{classes:?}");
    }
    let selector = format!("strimzi.io/cluster={CONNECT},strimzi.io/kind=KafkaConnect");
    assert_eq!(
        names::<Service>(&client, &ns, &selector).await,
        vec![
            format!("{CONNECT}-connect"),
            format!("{CONNECT}-connect-api")
        ]
    );
    assert_eq!(
        names::<Secret>(&client, &ns, &selector).await,
        vec![format!("{CONNECT}-connect-tls-trusted-certs")]
    );
    assert_eq!(
        names::<Pod>(&client, &ns, &selector).await,
        vec![format!("{CONNECT}-connect-0")]
    );

    // A connector that runs, is paused, stopped, resumed and restarted.
    const HEARTBEATS: &str = "heartbeats";
    apply(
        &client,
        &ns,
        &connector(
            HEARTBEATS,
            "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
            json!({}),
        ),
    )
    .await;
    let running = connector_in_state(&client, &ns, HEARTBEATS, "RUNNING").await;
    let status = running.status.unwrap();
    assert_eq!(status.tasks_max, Some(1));
    for (state, spec) in [
        ("PAUSED", "paused"),
        ("STOPPED", "stopped"),
        ("RUNNING", "running"),
    ] {
        patch_connector(&client, &ns, HEARTBEATS, json!({"spec": {"state": spec}})).await;
        connector_in_state(&client, &ns, HEARTBEATS, state).await;
    }
    patch_connector(
        &client,
        &ns,
        HEARTBEATS,
        json!({"metadata": {"annotations": {"strimzi.io/restart": "true"}}}),
    )
    .await;
    let connectors: Api<KafkaConnector> = Api::namespaced(client.clone(), &ns);
    wait_for(
        &connectors,
        HEARTBEATS,
        "the restart annotation to be removed",
        |connector| (!connector?.annotations().contains_key("strimzi.io/restart")).then_some(()),
    )
    .await;
    connector_in_state(&client, &ns, HEARTBEATS, "RUNNING").await;

    // Offsets: listed into a ConfigMap; reset while stopped.
    patch_connector(
        &client,
        &ns,
        HEARTBEATS,
        json!({
            "metadata": {"annotations": {"strimzi.io/connector-offsets": "list"}},
            "spec": {"listOffsets": {"toConfigMap": {"name": "heartbeat-offsets"}}},
        }),
    )
    .await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let listed = wait_for(
        &config_maps,
        "heartbeat-offsets",
        "the listed offsets",
        |map| map?.data.as_ref()?.get("offsets.json").cloned(),
    )
    .await;
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert!(listed["offsets"].is_array(), "{listed}");
    patch_connector(
        &client,
        &ns,
        HEARTBEATS,
        json!({
            "metadata": {"annotations": {"strimzi.io/connector-offsets": "reset"}},
            "spec": {"state": "stopped"},
        }),
    )
    .await;
    wait_for(&connectors, HEARTBEATS, "the offsets reset", |connector| {
        (!connector?
            .annotations()
            .contains_key("strimzi.io/connector-offsets"))
        .then_some(())
    })
    .await;
    patch_connector(
        &client,
        &ns,
        HEARTBEATS,
        json!({"spec": {"state": "running"}}),
    )
    .await;
    connector_in_state(&client, &ns, HEARTBEATS, "RUNNING").await;

    // Bad input: a class the workers do not have.
    apply(
        &client,
        &ns,
        &connector("missing", "org.example.NoSuchConnector", json!({})),
    )
    .await;
    let message = wait_for(
        &connectors,
        "missing",
        "the unknown class refused",
        |connector| {
            let refusal =
                condition_of(connector?.status.as_ref()?.conditions.as_ref(), "NotReady")?;
            (refusal.reason.as_deref() == Some("ConnectRestException"))
                .then(|| refusal.message.clone().unwrap_or_default())
        },
    )
    .await;
    assert!(message.contains("NoSuchConnector"), "{message}");
    connectors
        .delete("missing", &DeleteParams::default())
        .await
        .unwrap();

    // A changed spec replaces the worker; deleting a KafkaConnector removes its connector
    // (checked through the KafkaConnect's next status: still Ready, its worker replaced).
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let old_uid = pods
        .get(&format!("{CONNECT}-connect-0"))
        .await
        .unwrap()
        .uid();
    apply(&client, &ns, &connect("connect-group-2")).await;
    wait_for(
        &pods,
        &format!("{CONNECT}-connect-0"),
        "the worker to be replaced",
        |pod| (pod?.uid() != old_uid).then_some(()),
    )
    .await;
    connect_ready(&client, &ns).await;
    let config = config_maps
        .get(&format!("{CONNECT}-connect-config"))
        .await
        .unwrap();
    assert!(config.data.unwrap()["kafka-connect.properties"].contains("group.id=connect-group-2"));

    // Deleting the KafkaConnect removes what it made (owner references).
    Api::<KafkaConnect>::namespaced(client.clone(), &ns)
        .delete(CONNECT, &DeleteParams::default())
        .await
        .unwrap();
    let pod_sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    wait_gone(
        &pod_sets,
        &format!("{CONNECT}-connect"),
        "the StrimziPodSet to be garbage collected",
    )
    .await;
    wait_gone(
        &config_maps,
        &format!("{CONNECT}-connect-config"),
        "the ConfigMap to be garbage collected",
    )
    .await;
}
