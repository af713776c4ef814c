//! Kafka Connect on the real-node environment with Strimzi's Kafka image: a one-broker
//! ephemeral Kafka with a mutual TLS listener, whose `tls` KafkaUser our user operator (a
//! host process) issues; a KafkaConnect of one worker authenticating to that listener with
//! the user's certificate (the cluster CA copied into the trusted certificates Secret, both
//! read by the worker through the Kubernetes Secret config provider), whose status lists the
//! MirrorMaker connectors the image ships; a KafkaConnector (MirrorMaker's heartbeat
//! connector) that runs, is paused, stopped, resumed and restarted by annotation, whose
//! offsets are listed into a ConfigMap, reset, altered from a ConfigMap and listed again; a
//! connector whose task fails (an invalid producer override) restarted automatically at once,
//! counted in its status with a `ConnectorRestarted` Event; a connector of an unknown class
//! refused with Connect's message; a deleted KafkaConnector's connector removed; a changed
//! spec replacing the worker; deleting the KafkaConnect removing what it made. One cluster
//! for every check.

use std::time::Instant;

use super::env;
use crate::support::fast_start::{fast_start_jvm, http_readiness_probe};
use crate::support::real_nodes::{
    add_mutual_tls_listener, binaries, bootstrap, delete_when_done, small_ephemeral_cluster,
};
use crate::support::rolls::event_notes;
use crate::support::{apply, condition_of, names, ready, wait_for, wait_gone};
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::connect::KafkaConnect;
use strimzi_api::connector::KafkaConnector;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::user::KafkaUser;

const CLUSTER: &str = "cc";
const CONNECT: &str = "cc-connect-test";
/// The KafkaConnector of MirrorMaker's heartbeat connector.
const HEARTBEATS: &str = "heartbeats";
/// The `tls` KafkaUser the Connect workers authenticate as.
const USER: &str = "connect-user";

/// A KafkaConnect of one worker over the mutual TLS listener as [`USER`], managed by
/// KafkaConnectors.
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
            "bootstrapServers": format!("{CLUSTER}-kafka-bootstrap:9094"),
            "groupId": group,
            "configStorageTopic": "connect-configs",
            "statusStorageTopic": "connect-status",
            "offsetStorageTopic": "connect-offsets",
            "tls": {"trustedCertificates": [
                {"secretName": format!("{CLUSTER}-cluster-ca-cert"), "pattern": "*.crt"},
            ]},
            "authentication": {"type": "tls", "certificateAndKey": {
                "secretName": USER, "certificate": "user.crt", "key": "user.key",
            }},
            "jvmOptions": fast_start_jvm("256m", "384m"),
            "readinessProbe": http_readiness_probe(),
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
    named_connect_ready(client, ns, CONNECT).await
}

/// Waits until KafkaConnect `name` is Ready for its current generation.
pub(super) async fn named_connect_ready(client: &Client, ns: &str, name: &str) -> KafkaConnect {
    let api: Api<KafkaConnect> = Api::namespaced(client.clone(), ns);
    wait_for(&api, name, "the KafkaConnect to be Ready", |connect| {
        let connect = connect?;
        let status = connect.status.as_ref()?;
        (condition_of(status.conditions.as_ref(), "Ready").is_some()
            && status.observed_generation == connect.metadata.generation)
            .then(|| connect.clone())
    })
    .await
}

/// Waits until connector `name` reports `state` with a Ready condition.
pub(super) async fn connector_in_state(
    client: &Client,
    ns: &str,
    name: &str,
    state: &str,
) -> KafkaConnector {
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

/// Asks for the `strimzi.io/connector-offsets` request `value` on the heartbeat connector
/// with `spec` merged into its spec, and waits until it is done: the annotation gone, with
/// no warning that it was refused.
async fn offsets_request(client: &Client, ns: &str, value: &str, spec: Value) {
    patch_connector(
        client,
        ns,
        HEARTBEATS,
        json!({
            "metadata": {"annotations": {"strimzi.io/connector-offsets": value}},
            "spec": spec,
        }),
    )
    .await;
    let connectors: Api<KafkaConnector> = Api::namespaced(client.clone(), ns);
    let warnings = wait_for(
        &connectors,
        HEARTBEATS,
        &format!("the offsets request {value} done"),
        |connector| {
            let connector = connector?;
            (!connector
                .annotations()
                .contains_key("strimzi.io/connector-offsets"))
            .then(|| {
                connector
                    .status
                    .as_ref()
                    .and_then(|status| status.conditions.clone())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|condition| condition.r#type.as_deref() == Some("Warning"))
                    .collect::<Vec<_>>()
            })
        },
    )
    .await;
    assert!(warnings.is_empty(), "{value}: {warnings:?}");
}

async fn patch_connector(client: &Client, ns: &str, name: &str, patch: Value) {
    Api::<KafkaConnector>::namespaced(client.clone(), ns)
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
}

#[tokio::test]
async fn kafka_connect_runs_connectors_from_kafka_connectors() {
    let _room = super::room_for(super::Weight::Light).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("connect").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let _operator = super::operator_on(&ns);
    for mut document in small_ephemeral_cluster(CLUSTER, "512m") {
        if document["kind"] == "Kafka" {
            add_mutual_tls_listener(&mut document);
        }
        apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;

    // The workers' identity: a `tls` KafkaUser from our user operator.
    let _user_operator = crate::support::spawn_entity_operator(
        env,
        binaries(),
        crate::support::EntityOperator::User,
        &ns,
        CLUSTER,
        &bootstrap(&kafka, "plain"),
    );
    apply(
        &client,
        &ns,
        &crate::support::kafka_user(USER, CLUSTER, json!({"authentication": {"type": "tls"}})),
    )
    .await;
    let users: Api<KafkaUser> = Api::namespaced(client.clone(), &ns);
    let username = wait_for(&users, USER, "the KafkaUser to be Ready", |user| {
        let status = user?.status.as_ref()?;
        condition_of(status.conditions.as_ref(), "Ready")?;
        status.username.clone()
    })
    .await;
    assert_eq!(username, format!("CN={USER}"));

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

    // Offsets: listed into a ConfigMap; reset while stopped; altered from a ConfigMap while
    // stopped (the heartbeat connector takes offset 0 only), then listed again.
    let list = json!({"listOffsets": {"toConfigMap": {"name": "heartbeat-offsets"}}});
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let listed_offsets = || async {
        let map = config_maps.get("heartbeat-offsets").await.unwrap();
        serde_json::from_str::<Value>(&map.data.unwrap()["offsets.json"]).unwrap()
    };
    offsets_request(&client, &ns, "list", list.clone()).await;
    let listed = listed_offsets().await;
    assert!(listed["offsets"].is_array(), "{listed}");
    offsets_request(&client, &ns, "reset", json!({"state": "stopped"})).await;
    let altered = json!({"offsets": [{
        "partition": {"sourceClusterAlias": "altered", "targetClusterAlias": "target"},
        "offset": {"offset": 0},
    }]});
    apply(
        &client,
        &ns,
        &json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "heartbeat-offsets-altered"},
            "data": {"offsets.json": altered.to_string()},
        }),
    )
    .await;
    let alter = json!({"alterOffsets": {"fromConfigMap": {"name": "heartbeat-offsets-altered"}}});
    offsets_request(&client, &ns, "alter", alter).await;
    offsets_request(&client, &ns, "list", list).await;
    assert_eq!(listed_offsets().await, altered);
    patch_connector(
        &client,
        &ns,
        HEARTBEATS,
        json!({"spec": {"state": "running"}}),
    )
    .await;
    connector_in_state(&client, &ns, HEARTBEATS, "RUNNING").await;

    // A task that fails at start (a producer override Connect validates only by type) is
    // restarted automatically, the first time at once.
    const FAILING: &str = "failing";
    let mut failing = connector(
        FAILING,
        "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
        json!({"producer.override.compression.type": "no-such-codec"}),
    );
    failing["spec"]["autoRestart"] = json!({"enabled": true});
    apply(&client, &ns, &failing).await;
    let (restarted, task) = wait_for(
        &connectors,
        FAILING,
        "the failed task restarted automatically",
        |connector| {
            let status = connector?.status.as_ref()?;
            let restart = status.auto_restart.clone()?;
            let task = status.connector_status.as_ref()?.0.get("tasks")?[0].clone();
            (restart.count? >= 1 && task["state"] == "FAILED").then_some((restart, task))
        },
    )
    .await;
    assert_eq!(restarted.connector_name.as_deref(), Some(FAILING));
    let at: jiff::Timestamp = restarted.last_restart_timestamp.unwrap().parse().unwrap();
    assert!(jiff::Timestamp::now().duration_since(at) < jiff::SignedDuration::from_mins(10));
    assert!(
        task["trace"]
            .as_str()
            .unwrap_or_default()
            .contains("compression.type"),
        "{task}"
    );
    let notes = event_notes(&client, &ns, "ConnectorRestarted").await;
    assert!(
        notes
            .iter()
            .any(|note| note.contains(&format!("Connector {FAILING} "))
                && note.contains("restart 1 of")),
        "{notes:?}"
    );
    connectors
        .delete(FAILING, &DeleteParams::default())
        .await
        .unwrap();

    // Bad input: a class the workers do not have. Until the group has settled after the
    // deletion above, the workers may answer "a rebalance is expected" (a NotReady of the
    // same reason that the next reconciliation replaces), so the wait is for the refusal
    // naming the class.
    apply(
        &client,
        &ns,
        &connector("missing", "org.example.NoSuchConnector", json!({})),
    )
    .await;
    wait_for(
        &connectors,
        "missing",
        "the unknown class refused, naming it",
        |connector| {
            let refusal =
                condition_of(connector?.status.as_ref()?.conditions.as_ref(), "NotReady")?;
            (refusal.reason.as_deref() == Some("ConnectRestException")
                && refusal.message.as_deref()?.contains("NoSuchConnector"))
            .then_some(())
        },
    )
    .await;
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
