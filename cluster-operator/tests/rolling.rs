//! Rolling restarts and dynamic reconfiguration on real nodes with real Kafka: the cluster
//! operator binary inside the nodes' network talks to its brokers over the replication
//! listener with its own certificate, applies a dynamically updatable option without
//! restarting anything, and rolls a static change through three controllers and three
//! brokers one node at a time, controllers first and the active controller last, while an
//! idempotent producer writes to a topic with three replicas and `min.insync.replicas=2`;
//! the operator is killed and restarted mid-roll. Every acknowledged record is read back
//! exactly once.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::environment::TestEnv;
use strimzi_tests::process::ManagedProcess;
use support::real_nodes::{all_pods_ready, binaries, bootstrap, eventually, is_ready};
use support::{apply, ready};

const CLUSTER: &str = "roll";
/// Six JVMs restarting one after the other on two cores.
const ROLL_WAIT: Duration = Duration::from_secs(1500);

fn env() -> &'static TestEnv {
    TestEnv::shared_real()
}

/// Three controllers and three brokers with persistent volumes and small heaps; topics get
/// three replicas and `min.insync.replicas=2`.
fn cluster() -> Vec<Value> {
    let mut documents = support::cluster(CLUSTER, 3, 3);
    for document in &mut documents {
        match document["kind"].as_str() {
            Some("KafkaNodePool") => {
                document["spec"]["storage"] = json!({"type": "jbod", "volumes": [
                    {"id": 0, "type": "persistent-claim", "size": "1Gi", "deleteClaim": true, "kraftMetadata": "shared"},
                ]});
                document["spec"]["jvmOptions"] = json!({"-Xms": "256m", "-Xmx": "512m"});
            }
            Some("Kafka") => {
                let config = &mut document["spec"]["kafka"]["config"];
                config["default.replication.factor"] = json!(3);
                config["min.insync.replicas"] = json!(2);
                config["offsets.topic.replication.factor"] = json!(3);
                config["transaction.state.log.replication.factor"] = json!(3);
                config["transaction.state.log.min.isr"] = json!(2);
            }
            _ => {}
        }
    }
    documents
}

fn spawn_operator(ns: &str) -> ManagedProcess {
    support::spawn_cluster_operator(
        env(),
        binaries(),
        ns,
        strimzi_tests::layout::free_port().unwrap(),
        &[],
    )
}

/// Sets `key` in the Kafka's `spec.kafka.config`.
async fn set_option(client: &Client, ns: &str, key: &str, value: Value) {
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    kafkas
        .patch(
            CLUSTER,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"kafka": {"config": {key: value}}}})),
        )
        .await
        .unwrap();
}

/// The cluster's pods by name with their UIDs.
async fn pod_uids(client: &Client, ns: &str) -> BTreeMap<String, String> {
    Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&format!("strimzi.io/cluster={CLUSTER}")))
        .await
        .unwrap()
        .items
        .iter()
        .map(|pod| (pod.name_any(), pod.uid().unwrap_or_default()))
        .collect()
}

/// The pods the operator restarted for `reason`, in the order of its Events.
async fn restarted_in_order(client: &Client, ns: &str, reason: &str) -> Vec<String> {
    let mut events: Vec<Event> = Api::<Event>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|event| {
            event.action.as_deref() == Some("StrimziInitiatedPodRestart")
                && event.reason.as_deref() == Some(reason)
        })
        .collect();
    events.sort_by_key(|event| event.event_time.as_ref().map(|time| time.0));
    events
        .iter()
        .filter_map(|event| event.regarding.as_ref()?.name.clone())
        .collect()
}

#[tokio::test]
async fn options_apply_live_and_a_static_change_rolls_each_node_once_in_order_losing_no_record() {
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("roll").await;
    let network = env.network().expect("a real-node environment");
    let mut operator = Some(spawn_operator(&ns));
    for document in cluster() {
        apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;
    let pods = all_pods_ready(&client, &ns, CLUSTER, 6).await;
    let node_id = |pod: &str| pod.rsplit('-').next().unwrap().parse::<i32>().unwrap();
    let brokers: Vec<i32> = pods
        .iter()
        .map(ResourceExt::name_any)
        .filter(|name| name.starts_with(&format!("{CLUSTER}-broker-")))
        .map(|name| node_id(&name))
        .collect();
    assert_eq!(brokers.len(), 3);
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(&kafka, "plain"),
    );
    // The topic is created with the cluster's defaults: three replicas.
    eventually("producing the first record", || {
        plain.produce("steady", 1, "first")
    })
    .await;
    assert_eq!(
        eventually("describing the topic", || plain.describe("steady")).await,
        (1, 3)
    );

    // A dynamically updatable option reaches every broker without a restart.
    let before = pod_uids(&client, &ns).await;
    let changed = Instant::now();
    set_option(&client, &ns, "log.retention.ms", json!(3_600_000)).await;
    for broker in &brokers {
        eventually(
            &format!("broker {broker} to use the new retention"),
            || match plain.broker_config(*broker, "log.retention.ms")? {
                value if value == "3600000" => Ok(()),
                value => Err(format!("log.retention.ms is {value}")),
            },
        )
        .await;
    }
    let dynamic_seconds = changed.elapsed().as_secs_f64();
    ready(&client, &ns, CLUSTER).await;
    assert_eq!(
        pod_uids(&client, &ns).await,
        before,
        "a dynamic option restarted pods"
    );

    // A static option rolls every node once, one at a time, while records are produced;
    // the operator is killed and started again after the second restart.
    let stop_file = env.log_dir().join(format!("{ns}-stop-producing"));
    let producer = plain.produce_steadily("steady", 20, &stop_file).unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let rolling = Instant::now();
    set_option(&client, &ns, "queued.max.requests", json!(600)).await;
    let pods_api: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let selector = format!("strimzi.io/cluster={CLUSTER}");
    let mut most_unready = 0;
    let mut operator_restarted = false;
    loop {
        let live = pods_api
            .list(&ListParams::default().labels(&selector))
            .await
            .unwrap()
            .items;
        let ready_now: BTreeSet<String> = live
            .iter()
            .filter(|pod| pod.metadata.deletion_timestamp.is_none() && is_ready(pod))
            .map(ResourceExt::name_any)
            .collect();
        most_unready = most_unready.max(before.len() - ready_now.len());
        let renewed = live
            .iter()
            .filter(|pod| before.get(&pod.name_any()) != pod.uid().as_ref())
            .count();
        if renewed >= 2 && !operator_restarted {
            drop(operator.take());
            tokio::time::sleep(Duration::from_secs(2)).await;
            operator = Some(spawn_operator(&ns));
            operator_restarted = true;
        }
        if renewed == before.len() && ready_now.len() == before.len() {
            break;
        }
        assert!(
            rolling.elapsed() < ROLL_WAIT,
            "the roll did not finish in {ROLL_WAIT:?}: {renewed} pods renewed, ready: {ready_now:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let roll_seconds = rolling.elapsed().as_secs_f64();
    ready(&client, &ns, CLUSTER).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let report = producer.stop().unwrap();
    assert_eq!(report.errors, 0, "the producer lost records: {report:?}");
    assert!(report.acked.len() > 100, "{report:?}");

    // Every acknowledged record is there exactly once.
    let read = eventually("consuming every record", || {
        plain.consume("steady", report.acked.len() + 1)
    })
    .await;
    let mut steady: Vec<String> = read
        .into_iter()
        .filter(|value| value.starts_with("steady-"))
        .collect();
    steady.sort();
    let mut acked = report.acked.clone();
    acked.sort();
    assert_eq!(steady, acked, "records lost or duplicated");

    // One restart per node: controllers, then brokers, the active controller last; never
    // more than one pod down at a time.
    let order = restarted_in_order(&client, &ns, "ConfigChangeRequiresRestart").await;
    let unique: BTreeSet<&String> = order.iter().collect();
    assert_eq!(order.len(), 6, "restart Events: {order:?}");
    assert_eq!(unique.len(), 6, "a node restarted twice: {order:?}");
    let is_controller = |name: &str| name.starts_with(&format!("{CLUSTER}-controller-"));
    assert!(
        is_controller(&order[0]) && is_controller(&order[1]) && is_controller(&order[5]),
        "controllers first, the active one last: {order:?}"
    );
    assert!(
        order[2..5].iter().all(|name| !is_controller(name)),
        "brokers between the controllers: {order:?}"
    );
    assert_eq!(most_unready, 1, "more than one pod down at once");
    // Figures for the README, not assertions.
    println!(
        "figure: dynamic option applied to 3 brokers without a restart in {dynamic_seconds:.1}s"
    );
    println!(
        "figure: rolling 3 controllers + 3 brokers one at a time took {roll_seconds:.0}s; producer during the roll: {} records acknowledged, {} errors, p99 {:.0} ms, max {:.0} ms",
        report.acked.len(),
        report.errors,
        report.p99_ms,
        report.max_ms
    );
}
