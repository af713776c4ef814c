//! Taking over a cluster that Strimzi's operator made, on real nodes with Strimzi's Kafka image.
//!
//! The objects are those Strimzi 1.2.0's own operator created for `kafka-ephemeral.yaml`, read
//! back from its API server (`operator-output/kafka-ephemeral` of the Strimzi reference data):
//! the Kafka and its pools with their status, the CA and node certificate Secrets, the
//! per-node ConfigMaps, the Services, RBAC objects, NetworkPolicy, PodDisruptionBudget and
//! StrimziPodSets, created here as that operator created them (same names, namespace, field
//! manager and owners), and the pods created from the StrimziPodSets' definitions, as its pod
//! set controller does. Its certificates are still valid, so they are used as they are.
//!
//! Once the six Kafka nodes run, our cluster operator starts. Over several periodic
//! reconciliations it restarts no pod, changes no Secret and no node configuration, and the
//! Kafka becomes Ready with none of Strimzi's old conditions left. A change of the broker
//! pool afterwards rolls the brokers, and only them, and the records written before the
//! takeover are still there.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::json;
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::layout::free_port;

use super::env;
use crate::support::real_nodes::{
    all_pods_ready, binaries, bootstrap, delete_when_done, eventually, http_get, records, sorted,
};
use crate::support::strimzi_recorded::{
    Recorded, changed_data, node_pods, restart_events, stored_data,
};
use crate::support::{condition, ready};

/// The namespace of Strimzi's recorded run. The nodes' names in it are part of their
/// configuration and certificates, so the cluster is recreated in a namespace of that name.
const NAMESPACE: &str = "co-java-eph";
const CLUSTER: &str = "my-cluster";
/// How often our operator reconciles every Kafka in this test.
const PERIOD: Duration = Duration::from_secs(10);
/// Selects the Kafka node pods (not the entity operator's).
const NODE_SELECTOR: &str = "strimzi.io/cluster=my-cluster,strimzi.io/name=my-cluster-kafka";
/// Strimzi's recorded run whose cluster is taken over.
const RECORDED: Recorded = Recorded("kafka-ephemeral");

/// How many reconciliations of a Kafka our operator (its metrics on `port`) started.
fn kafka_reconciliations(
    network: &strimzi_tests::network::NodeNetwork,
    port: u16,
) -> Result<u64, String> {
    let metrics = http_get(network, &format!("http://127.0.0.1:{port}/metrics"))?;
    let started: f64 = metrics
        .lines()
        .filter(|line| {
            line.starts_with("strimzi_reconciliations_total{") && line.contains("kind=\"Kafka\"")
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    Ok(started as u64)
}

#[tokio::test]
async fn a_cluster_strimzis_operator_made_is_taken_over_without_a_restart() {
    let _room = super::room_for(super::Weight::Heavy).await;
    let env = env();
    let client = env.client().await;
    let network = env.network().expect("a real-node environment");
    assert_eq!(RECORDED.namespace(), NAMESPACE);
    RECORDED.recreate(&client).await;
    let _deleted = delete_when_done(env, &[NAMESPACE]);
    all_pods_ready(&client, NAMESPACE, CLUSTER, 6).await;

    // Records written while Strimzi's cluster runs without an operator.
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &format!("{CLUSTER}-kafka-bootstrap.{NAMESPACE}.svc:9092"),
    );
    eventually("producing to Strimzi's cluster", || {
        plain.produce("before", 10, "strimzi")
    })
    .await;
    let pods_before = node_pods(&client, NAMESPACE, CLUSTER).await;
    let data_before = stored_data(&client, NAMESPACE).await;

    // Our operator takes over.
    let port = free_port().unwrap();
    let period = PERIOD.as_millis().to_string();
    let _operator = crate::support::spawn_cluster_operator(
        env,
        binaries(),
        NAMESPACE,
        port,
        &[("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", period.as_str())],
    );
    let kafka = ready(&client, NAMESPACE, CLUSTER).await;
    // Several periodic reconciliations after the one that made it Ready.
    let first = eventually("the operator's metrics", || {
        kafka_reconciliations(network, port)
    })
    .await;
    tokio::time::sleep(PERIOD * 7 / 2).await;
    eventually("three more reconciliations", || {
        let started = kafka_reconciliations(network, port)?;
        (started >= first + 3)
            .then_some(())
            .ok_or_else(|| format!("{started} reconciliations"))
    })
    .await;

    assert_eq!(
        node_pods(&client, NAMESPACE, CLUSTER).await,
        pods_before,
        "a pod was replaced or restarted"
    );
    assert_eq!(
        restart_events(&client, NAMESPACE).await,
        Vec::<String>::new(),
        "the operator restarted pods"
    );
    let data_after = stored_data(&client, NAMESPACE).await;
    let changed = changed_data(&data_before, &data_after);
    assert!(changed.is_empty(), "changed by the takeover: {changed:?}");

    // The status is ours, with none of Strimzi's conditions of before left.
    let kafka = Api::<strimzi_api::kafka::Kafka>::namespaced(client.clone(), NAMESPACE)
        .get(CLUSTER)
        .await
        .unwrap_or(kafka);
    assert!(
        condition(&kafka, "NotReady").is_none(),
        "{:#?}",
        kafka.status
    );
    let status = kafka.status.as_ref().unwrap();
    assert_eq!(
        serde_json::to_value(&status.cluster_security).unwrap(),
        json!({"encryption": {"type": "strimzi-tls"}, "authentication": {"type": "strimzi-mtls"}})
    );
    assert_eq!(
        serde_json::to_value(status.auto_rebalance.as_ref().and_then(|a| a.state)).unwrap(),
        json!("Idle")
    );
    assert_eq!(status.cluster_id, Some(RECORDED.cluster_id()));

    // A change afterwards rolls as usual: the broker pool's pods, not the controllers.
    Api::<DynamicObject>::namespaced_with(
        client.clone(),
        NAMESPACE,
        &ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "kafka.strimzi.io",
            "v1",
            "KafkaNodePool",
        )),
    )
    .patch(
        "broker",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"template": {"pod": {"metadata": {
            "labels": {"example.com/taken-over": "true"},
        }}}}})),
    )
    .await
    .unwrap();
    let brokers: Vec<String> = (0..3).map(|id| format!("{CLUSTER}-broker-{id}")).collect();
    let mut rolled = None;
    for _ in 0..300 {
        let now = node_pods(&client, NAMESPACE, CLUSTER).await;
        let replaced = brokers.iter().all(|name| {
            now.get(name)
                .is_some_and(|(uid, _)| *uid != pods_before[name].0)
        });
        if replaced && ready_pods(&client).await == 6 {
            rolled = Some(now);
            break;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let rolled = rolled.expect("the brokers were not all replaced and Ready in 10 minutes");
    for id in 3..6 {
        let name = format!("{CLUSTER}-controller-{id}");
        assert_eq!(rolled[&name], pods_before[&name], "{name} restarted");
    }
    let kafka = ready(&client, NAMESPACE, CLUSTER).await;
    let read = eventually("consuming the records of before", || {
        ClusterClient::new(
            &binaries().join("strimzi-kafka-client"),
            network,
            &bootstrap(&kafka, "plain"),
        )
        .consume("before", 10)
    })
    .await;
    assert_eq!(sorted(read), records("strimzi", 10));
}

/// How many Kafka node pods are Ready.
async fn ready_pods(client: &Client) -> usize {
    Api::<Pod>::namespaced(client.clone(), NAMESPACE)
        .list(&ListParams::default().labels(NODE_SELECTOR))
        .await
        .unwrap()
        .items
        .iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .filter(|pod| crate::support::real_nodes::is_ready(pod))
        .count()
}
