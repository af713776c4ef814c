//! Rolling restarts and dynamic reconfiguration on real nodes with real Kafka: the cluster
//! operator binary inside the nodes' network talks to its brokers over the replication
//! listener and to its controllers over their controller listener with its own certificate,
//! applies a dynamically updatable option without restarting anything, and rolls a static
//! change (found by comparing what each node runs with its desired configuration, the pods
//! being unchanged) through three controllers and three brokers one node at a time,
//! controllers first and the active controller last, while an idempotent producer writes to
//! a topic with three replicas and `min.insync.replicas=2`; the operator is killed and
//! restarted mid-roll, and the first broker back crashes while the roll goes on (the roll
//! waits for it), then the operator's API server is stopped for a minute and started again
//! (the roll goes on from where it was), and nothing restarts once the roll is over. Every acknowledged record
//! is read back exactly once. Then the pods' definition changes while the operator cannot
//! reach the nodes' listeners (an iptables rule refuses its connections): nothing restarts
//! and the Kafka says what is unreachable until the rule goes, after which brokers that share
//! no partition at risk roll in parallel; and the metadata version is raised (and a Kafka
//! version that cannot run it refused).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::env;
use crate::support::plugin::{
    live_options, operator_deployment, plan, plan_documents, planned_pods,
};
use crate::support::real_nodes::{
    ConnectionsRefused, Startup, all_pods_ready, binaries, bootstrap, delete_when_done, eventually,
    kill_jvm_of, persistent_cluster, stop_and_check_nothing_lost,
};
use crate::support::rolls::{
    Roll, event_notes, pod_uids, restarted_in_order, set_option, watch_roll,
};
use crate::support::{apply, merge_patch, ready, wait_for};
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_tests::clients::{ClusterClient, KafkaTools, Redelivery, SteadyReport};
use strimzi_tests::control_plane::ApiServerReplica;
use strimzi_tests::process::ManagedProcess;

const CLUSTER: &str = "roll";
/// The reason of the `Reconciling` condition and the Warning Event while the operator cannot
/// reach the brokers to check the safety of a restart.
const UNREACHABLE: &str = "KafkaBrokersUnreachable";

/// Three controllers and three brokers with persistent volumes and small heaps; topics get
/// three replicas and `min.insync.replicas=2`.
fn cluster() -> Vec<Value> {
    persistent_cluster(
        CLUSTER,
        (3, 3),
        &json!({
            "default.replication.factor": 3,
            "min.insync.replicas": 2,
            "offsets.topic.replication.factor": 3,
            "transaction.state.log.replication.factor": 3,
            "transaction.state.log.min.isr": 2,
        }),
        false,
        Startup::Fast,
    )
    .into_iter()
    .map(|mut document| {
        if document["kind"] == "Kafka" {
            // Older than Kafka 4.3.1 runs, to be raised later.
            document["spec"]["kafka"]["metadataVersion"] = json!("4.2-IV1");
        }
        document
    })
    .collect()
}

/// Our cluster operator on `ns`, talking to `api_server` alone, configured with `extra`.
fn spawn_operator(
    ns: &str,
    api_server: &ApiServerReplica,
    extra: &[(&str, &str)],
) -> ManagedProcess {
    let kubeconfig = api_server.kubeconfig().display().to_string();
    let extra: Vec<(&str, &str)> = extra
        .iter()
        .copied()
        .chain([("KUBECONFIG", kubeconfig.as_str())])
        .collect();
    crate::support::spawn_cluster_operator(
        env(),
        binaries(),
        ns,
        strimzi_tests::layout::free_port().unwrap(),
        &extra,
    )
}

/// How long the operator's API server is stopped in the middle of the first roll.
const API_SERVER_OUTAGE: Duration = Duration::from_secs(60);

/// Produces steadily to `topic` (which may hold other records) while the Kafka is
/// merge-patched with `change`, `held` runs, and the roll the change causes runs (timed from
/// the end of `held`), then checks that every acknowledged record can be read back (exactly
/// once unless `redelivery` allows more); the producer's report and the roll.
#[allow(clippy::too_many_arguments)]
async fn roll_under_load(
    client: &Client,
    ns: &str,
    plain: &ClusterClient,
    topic: &str,
    redelivery: Redelivery,
    change: Value,
    held: impl Future<Output = ()>,
    midway: impl FnMut(&BTreeSet<String>),
) -> (SteadyReport, Roll) {
    let before = pod_uids(client, ns, CLUSTER).await;
    let stop_file = env().log_dir().join(format!("{ns}-{topic}-stop"));
    let producer = plain.produce_steadily(topic, 20, &stop_file).unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    merge_patch::<Kafka>(client, ns, CLUSTER, change).await;
    held.await;
    let roll = watch_roll(client, ns, CLUSTER, &before, midway).await;
    ready(client, ns, CLUSTER).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let report = stop_and_check_nothing_lost(producer, plain, topic, redelivery).await;
    assert!(report.acked.len() > 100, "{}", report.summary());
    (report, roll)
}

/// How often the containers of pod `name` in `ns` restarted.
async fn container_restarts(client: &Client, ns: &str, name: &str) -> i32 {
    Api::<Pod>::namespaced(client.clone(), ns)
        .get(name)
        .await
        .unwrap()
        .status
        .and_then(|status| status.container_statuses)
        .into_iter()
        .flatten()
        .map(|container| container.restart_count)
        .sum()
}

/// Sets the dynamically updatable option `key` and waits until every broker of `brokers`
/// reports `value`.
async fn set_live_option(
    client: &Client,
    ns: &str,
    plain: &ClusterClient,
    brokers: &[i32],
    key: &str,
    value: &str,
) {
    set_option(client, ns, CLUSTER, key, json!(value)).await;
    for broker in brokers {
        eventually(
            &format!("broker {broker} to use {key}={value}"),
            || match plain.broker_config(*broker, key)? {
                found if found == value => Ok(()),
                found => Err(format!("{key} is {found}")),
            },
        )
        .await;
    }
}

#[tokio::test]
async fn options_apply_live_and_a_static_change_rolls_each_node_once_in_order_losing_no_record() {
    let _room = super::room_for(super::Weight::Heavy).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("roll").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let network = env.network().expect("a real-node environment");
    // The operator talks to an API server of its own (on the environment's etcd), which is
    // stopped for a minute in the middle of the first roll.
    let api_server = env
        .control_plane()
        .api_server_replica(&format!("{ns}-operator"))
        .unwrap();
    let mut operator = Some(spawn_operator(&ns, &api_server, &[]));
    for document in cluster() {
        apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;
    let pods = all_pods_ready(&client, &ns, CLUSTER, 6).await;
    // `kubectl strimzi plan` reads the operator's settings from its Deployment.
    operator_deployment(&client, &ns, &[]).await;
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

    // A dynamically updatable option reaches every broker without a restart, as
    // `kubectl strimzi plan` says beforehand.
    let planned = plan(
        env,
        &ns,
        &[
            CLUSTER,
            "--set",
            "spec.kafka.config.log.retention.ms=3600000",
        ],
    );
    assert_eq!(live_options(&planned), ["log.retention.ms"], "{planned:#}");
    assert_eq!(planned_pods(&planned, "restarts"), Vec::<String>::new());
    let before = pod_uids(&client, &ns, CLUSTER).await;
    let changed = Instant::now();
    set_live_option(
        &client,
        &ns,
        &plain,
        &brokers,
        "log.retention.ms",
        "3600000",
    )
    .await;
    let dynamic_seconds = changed.elapsed().as_secs_f64();
    ready(&client, &ns, CLUSTER).await;
    assert_eq!(
        pod_uids(&client, &ns, CLUSTER).await,
        before,
        "a dynamic option restarted pods"
    );

    // A static option rolls every node once, one at a time, while records are produced;
    // once two nodes are back the operator is killed and started again, and the first
    // broker back crashes (its JVM killed) while the roll goes on: the roll waits for it,
    // and it is not restarted again, as it came back with the new configuration. Once four
    // nodes are back, the operator's API server stops for a minute, then starts again: the
    // roll goes on from where it was.
    let planned_static = plan(
        env,
        &ns,
        &[
            CLUSTER,
            "--set",
            "spec.kafka.config.queued.max.requests=600",
        ],
    );
    let mut operator_restarted = false;
    let mut crashed: Option<String> = None;
    let mut outage: Option<Instant> = None;
    let mut outage_over = false;
    // On the heap: the test's future grew past a test thread's stack.
    let (report, roll) = Box::pin(roll_under_load(
        &client,
        &ns,
        &plain,
        "steady",
        // A broker's JVM is killed in the middle of this roll.
        Redelivery::AfterCrash,
        json!({"spec": {"kafka": {"config": {"queued.max.requests": 600}}}}),
        async {},
        |back| {
            if !operator_restarted && back.len() >= 2 {
                drop(operator.take());
                std::thread::sleep(Duration::from_secs(2));
                operator = Some(spawn_operator(&ns, &api_server, &[]));
                operator_restarted = true;
            }
            match outage {
                None if crashed.is_some() && back.len() >= 4 => {
                    api_server.stop();
                    outage = Some(Instant::now());
                    println!("the operator's API server stopped with {back:?} back");
                }
                Some(stopped) if !outage_over && stopped.elapsed() >= API_SERVER_OUTAGE => {
                    api_server.start().unwrap();
                    outage_over = true;
                    println!("the operator's API server started again with {back:?} back");
                }
                _ => {}
            }
            let broker_back = back
                .iter()
                .find(|name| name.starts_with(&format!("{CLUSTER}-broker-")));
            if let (true, None, Some(broker)) = (operator_restarted, &crashed, broker_back) {
                kill_jvm_of(broker);
                crashed = Some(broker.clone());
            }
        },
    ))
    .await;
    let crashed = crashed.expect("a broker crashed in the middle of the roll");
    assert!(
        outage_over,
        "the API server outage did not happen in the middle of the roll"
    );
    let restarts = container_restarts(&client, &ns, &crashed).await;
    assert!(
        restarts >= 1,
        "the crashed broker's container never restarted"
    );

    // One restart per node: controllers (the active one last of them), then brokers; never
    // more than one pod down at a time.
    let order = restarted_in_order(&client, &ns, "ConfigChangeRequiresRestart").await;
    let unique: BTreeSet<&String> = order.iter().collect();
    assert_eq!(order.len(), 6, "restart Events: {order:?}");
    assert_eq!(unique.len(), 6, "a node restarted twice: {order:?}");
    let is_controller = |name: &str| name.starts_with(&format!("{CLUSTER}-controller-"));
    assert!(
        order[..3].iter().all(|name| is_controller(name)),
        "controllers first: {order:?}"
    );
    assert!(
        order[3..].iter().all(|name| !is_controller(name)),
        "brokers after the controllers: {order:?}"
    );
    assert_eq!(
        roll.most_restarting, 1,
        "more than one pod restarting at once"
    );
    // The plan named these pods, controllers first.
    let predicted = planned_pods(&planned_static, "restarts");
    assert_eq!(
        predicted.iter().collect::<BTreeSet<_>>(),
        unique,
        "planned restarts {predicted:?}, done {order:?}"
    );
    assert!(
        predicted[..3].iter().all(|name| is_controller(name)),
        "planned: {predicted:?}"
    );
    let after_roll = pod_uids(&client, &ns, CLUSTER).await;

    // In parallel: with min.insync.replicas=1, two brokers of three may restart together.
    drop(operator.take());
    operator = Some(spawn_operator(
        &ns,
        &api_server,
        &[
            ("STRIMZI_MAX_PARALLEL_BROKER_RESTARTS", "3"),
            (
                "RUST_LOG",
                "info,strimzi_cluster_operator::kafka::roll=debug",
            ),
        ],
    ));
    set_live_option(&client, &ns, &plain, &brokers, "min.insync.replicas", "1").await;
    // The live option is applied once no node is left to restart: the operator, started
    // afresh, compared every node's static options with the desired ones and found them
    // current, so the roll is over for good.
    assert_eq!(
        pod_uids(&client, &ns, CLUSTER).await,
        after_roll,
        "a node restarted again after the roll"
    );
    assert_eq!(
        restarted_in_order(&client, &ns, "ConfigChangeRequiresRestart")
            .await
            .len(),
        6,
        "restarts after the roll"
    );
    let tools = KafkaTools::new(network, &bootstrap(&kafka, "plain")).unwrap();
    // Kafka's internal topics keep minimums of their own (the transaction log's from
    // transaction.state.log.min.isr, the share-group state's 2): lowered as well.
    let internal: BTreeSet<String> = plain
        .assignments()
        .unwrap()
        .into_iter()
        .map(|found| found.topic)
        .filter(|topic| topic == "__share_group_state" || topic == "__transaction_state")
        .collect();
    for topic in &internal {
        tools
            .set_topic_config(topic, "min.insync.replicas=1")
            .unwrap();
    }
    // The operator cannot reach the brokers' and controllers' listeners when the pods'
    // definition changes: nothing restarts, the Kafka says what is unreachable; once they
    // are reachable again, the roll goes on.
    let addresses: Vec<String> = all_pods_ready(&client, &ns, CLUSTER, 6)
        .await
        .iter()
        .filter_map(|pod| pod.status.as_ref()?.pod_ip.clone())
        .collect();
    let refused = ConnectionsRefused::new(network, &addresses, &[9090, 9091]);
    let unreachable = async {
        let message = crate::support::reconciling_with(&client, &ns, CLUSTER, UNREACHABLE).await;
        // Two more reconciliations while unreachable (they look again every few seconds).
        tokio::time::sleep(Duration::from_secs(15)).await;
        assert_eq!(
            pod_uids(&client, &ns, CLUSTER).await,
            after_roll,
            "a pod restarted while its safety could not be checked ({message})"
        );
        let warned = event_notes(&client, &ns, UNREACHABLE).await;
        assert!(!warned.is_empty(), "no Warning Event named {UNREACHABLE}");
        drop(refused);
        println!("while unreachable, the Kafka said: {message}");
    };
    let template = json!({"spec": {"kafka": {"template": {"pod": {"metadata": {
        "annotations": {"example.com/fault": "brokers unreachable"},
    }}}}}});
    // The plan of the change as a user writes it to a file: the live Kafka, changed.
    let mut changed = serde_json::to_value(
        Api::<Kafka>::namespaced(client.clone(), &ns)
            .get(CLUSTER)
            .await
            .unwrap(),
    )
    .unwrap();
    changed["spec"]["kafka"]["template"]["pod"]["metadata"]["annotations"]["example.com/fault"] =
        json!("brokers unreachable");
    let planned_template = plan_documents(env, &ns, &[changed]);
    let (parallel_report, parallel) = Box::pin(roll_under_load(
        &client,
        &ns,
        &plain,
        "parallel",
        Redelivery::Refused,
        template,
        unreachable,
        |_| {},
    ))
    .await;
    assert_eq!(parallel.most_restarting, 2, "two brokers at once at most");
    let done: BTreeSet<String> = restarted_in_order(&client, &ns, "PodHasOldRevision")
        .await
        .into_iter()
        .collect();
    let predicted = planned_pods(&planned_template, "restarts");
    assert_eq!(
        predicted.iter().cloned().collect::<BTreeSet<_>>(),
        done,
        "planned restarts {predicted:?}"
    );
    assert_eq!(done.len(), 6, "{done:?}");

    // The metadata version is raised once every node runs Kafka 4.3.1; a Kafka version that
    // cannot run it is refused before anything rolls.
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    assert_eq!(
        kafkas
            .get(CLUSTER)
            .await
            .unwrap()
            .status
            .unwrap()
            .kafka_metadata_version
            .as_deref(),
        Some("4.2-IV1")
    );
    let raise = json!({"spec": {"kafka": {"metadataVersion": "4.3-IV0"}}});
    merge_patch::<Kafka>(&client, &ns, CLUSTER, raise).await;
    wait_for(
        &kafkas,
        CLUSTER,
        "the metadata version to be raised",
        |kafka| {
            let status = kafka?.status.as_ref()?;
            (status.kafka_metadata_version.as_deref() == Some("4.3-IV0")).then_some(())
        },
    )
    .await;
    let before = pod_uids(&client, &ns, CLUSTER).await;
    merge_patch::<Kafka>(
        &client,
        &ns,
        CLUSTER,
        json!({"spec": {"kafka": {"version": "4.2.0", "metadataVersion": null}}}),
    )
    .await;
    let refused =
        crate::support::not_ready_with(&client, &ns, CLUSTER, "UnsupportedKafkaVersionException")
            .await;
    assert!(refused.contains("cannot be lowered"), "{refused}");
    assert_eq!(
        pod_uids(&client, &ns, CLUSTER).await,
        before,
        "a refused version rolled pods"
    );
    merge_patch::<Kafka>(
        &client,
        &ns,
        CLUSTER,
        json!({"spec": {"kafka": {"version": null, "metadataVersion": "4.3-IV0"}}}),
    )
    .await;
    ready(&client, &ns, CLUSTER).await;
    drop(operator);

    // Figures for the README, not assertions.
    println!(
        "figure: dynamic option applied to 3 brokers without a restart in {dynamic_seconds:.1}s"
    );
    for (how, report, roll) in [
        ("one at a time", &report, &roll),
        ("two brokers together", &parallel_report, &parallel),
    ] {
        println!(
            "figure: rolling 3 controllers + 3 brokers {how} took {:.0}s; producer during the roll: {} records acknowledged, {} errors, p99 {:.0} ms, max {:.0} ms",
            roll.seconds,
            report.acked.len(),
            report.errors,
            report.p99_ms,
            report.max_ms
        );
    }
    println!(
        "figure: parallel / one-at-a-time roll time: {:.2}",
        parallel.seconds / roll.seconds
    );
}
