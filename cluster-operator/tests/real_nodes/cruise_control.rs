//! Cruise Control on the real-node environment, from the test environment's Kafka image, which
//! runs our contract stand-in for Cruise Control and its broker-side metrics reporter
//! (`standins/cruise-control`, CONTRACT.md 5.7): a Kafka with `cruiseControl` gets the Cruise
//! Control Deployment, whose REST API answers over TLS with the operators' API users only, the
//! brokers' metrics reporter creates its topic, and the load monitor gets valid windows. Then
//! KafkaRebalances through our controller: a `full` rebalance reaches `ProposalReady` with
//! Cruise Control's summary, is approved and reaches `Ready`; `refresh` asks for a new
//! proposal; an unknown goal ends `NotReady` with Cruise Control's reason. A KafkaTopic's
//! replication factor changes through Cruise Control (the entity operator's topic operator
//! asks it), 1 → 3 → 2, with no record lost. Last, automatic
//! rebalancing on scaling: a fourth broker gets partitions without a manual step, and scaling
//! back down moves them off before the broker goes, with no record lost.

use std::time::{Duration, Instant};

use super::env;
use crate::support::fast_start::{
    fast_start_jvm, http_readiness_probe, topic_operator_startup_probe,
};
use crate::support::real_nodes::{
    Startup, binaries, bootstrap, cluster_ca_file, component_pod, delete_when_done, eventually,
    persistent_cluster, secret_value,
};
use crate::support::real_nodes::{scale_brokers, stop_and_check_nothing_lost};
use crate::support::rolls::event_notes;
use crate::support::{apply, ready, wait_for};
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};
use strimzi_api::kafka::{Kafka, KafkaAutoRebalanceState};
use strimzi_api::rebalance::KafkaRebalance;
use strimzi_tests::clients::{ClusterClient, KafkaTools, Redelivery};
use strimzi_tests::layout::free_port;
use strimzi_tests::network::NodeNetwork;
use strimzi_tests::resources::{eventually_ok, eventually_ok_every};

const CLUSTER: &str = "cc";

/// One controller, three brokers, the topic operator and Cruise Control with short metric
/// windows, so that it has a load model within a minute or two instead of Strimzi's five;
/// the JVM flags and quicker probes of [`Startup::Fast`] (Cruise Control's probes excepted).
fn documents() -> Vec<Value> {
    let mut documents = persistent_cluster(
        CLUSTER,
        (1, 3),
        &json!({
            "offsets.topic.replication.factor": 2,
            "transaction.state.log.replication.factor": 2,
            "transaction.state.log.min.isr": 1,
            "default.replication.factor": 2,
            "cruise.control.metrics.reporter.metrics.reporting.interval.ms": 10000,
        }),
        false,
        Startup::Fast,
    );
    let kafka = documents
        .iter_mut()
        .find(|document| document["kind"] == "Kafka")
        .unwrap();
    // A short periodic reconciliation: the topic operator asks Cruise Control again for a
    // replication-factor change it refused (while a rebalance ran) at the next one.
    kafka["spec"]["entityOperator"] = json!({"topicOperator": {
        "reconciliationIntervalMs": 15000,
        "startupProbe": topic_operator_startup_probe(),
        "readinessProbe": http_readiness_probe(),
    }});
    kafka["spec"]["cruiseControl"] = json!({
        "jvmOptions": fast_start_jvm("256m", "512m"),
        // Strimzi's liveness probe (15 s delay, three 10 s periods) kills Cruise Control while it
        // restarts on a new broker's capacity when two cores also run the new broker and a
        // producer: its start-up there takes over a minute, and each kill starts it over.
        "livenessProbe": {"initialDelaySeconds": 180, "timeoutSeconds": 10},
        "readinessProbe": {"timeoutSeconds": 10},
        "config": {
            "partition.metrics.window.ms": 10000,
            "num.partition.metrics.windows": 1,
            "broker.metrics.window.ms": 10000,
            "num.broker.metrics.windows": 5,
            "metric.sampling.interval.ms": 10000,
            // Cruise Control refuses a metadata age or a reporting interval (the brokers') above
            // the sampling interval.
            "metadata.max.age.ms": 10000,
            "cruise.control.metrics.reporter.metrics.reporting.interval.ms": 10000,
            "min.valid.partition.ratio": 0.5,
            // The executor looks at a movement's progress every 2 s instead of every 10 s.
            "min.execution.progress.check.interval.ms": 1000,
            "execution.progress.check.interval.ms": 2000,
        },
    });
    documents
}

/// `GET <path>` on Cruise Control's REST API at `pod_ip` from inside the nodes' network, over
/// TLS checked against the cluster CA for the Service's name, as `user` (none: no
/// credentials): the status code and body.
fn cruise_control_get(
    network: &NodeNetwork,
    ns: &str,
    pod_ip: &str,
    ca_file: &std::path::Path,
    user: Option<(&str, &str)>,
    path: &str,
) -> Result<(u16, String), String> {
    let host = format!("{CLUSTER}-cruise-control.{ns}.svc");
    let prefix = network.exec_prefix();
    let mut command = std::process::Command::new(&prefix[0]);
    command.args(&prefix[1..]).args([
        "curl",
        "--silent",
        "--show-error",
        "--max-time",
        "20",
        "--cacert",
        ca_file.to_str().unwrap(),
        "--resolve",
        &format!("{host}:9090:{pod_ip}"),
        "--write-out",
        "\n%{http_code}",
    ]);
    if let Some((name, password)) = user {
        command.args(["--user", &format!("{name}:{password}")]);
    }
    let output = command
        .arg(format!("https://{host}:9090{path}"))
        .output()
        .map_err(|error| format!("curl: {error}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').ok_or("no status code")?;
    Ok((
        code.trim().parse().map_err(|_| "status code")?,
        body.to_owned(),
    ))
}

#[tokio::test]
async fn cruise_control_runs_and_the_brokers_report_to_it() {
    let _room = super::room_for(super::Weight::Heavy).await;
    let env = env();
    let client = env.client().await;
    let network = env.network().expect("a real-node environment");
    let ns = env.namespace("cc").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let operator_port = free_port().unwrap();
    let _operator =
        crate::support::spawn_cluster_operator(env, binaries(), &ns, operator_port, &[]);
    let applied = Instant::now();
    for document in documents() {
        apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;
    // Ready waits for Cruise Control's Deployment too. A figure, not an assertion.
    println!(
        "figure: Kafka (1 controller, 3 brokers) with Cruise Control applied to Ready on a real node in {:.1}s",
        applied.elapsed().as_secs_f64()
    );
    let pod = component_pod(&client, &ns, &format!("{CLUSTER}-cruise-control")).await;
    let pod_ip = pod.status.unwrap().pod_ip.unwrap();
    let ca = cluster_ca_file(&client, &ns, CLUSTER).await;
    let api_secret = format!("{CLUSTER}-cruise-control-api");
    let password = String::from_utf8(
        secret_value(&client, &ns, &api_secret, "rebalance-operator.password").await,
    )
    .unwrap();
    let admin = Some(("rebalance-operator", password.as_str()));
    let state_path = "/kafkacruisecontrol/state?json=true";

    // The REST API asks for credentials and takes the operator's.
    let (status, _) = cruise_control_get(network, &ns, &pod_ip, &ca, None, state_path).unwrap();
    assert_eq!(status, 401, "the REST API answers without credentials");
    let (status, _) = cruise_control_get(
        network,
        &ns,
        &pod_ip,
        &ca,
        Some(("rebalance-operator", "wrong")),
        state_path,
    )
    .unwrap();
    assert_eq!(status, 401, "the REST API takes a wrong password");

    // The brokers' metrics reporter creates its topic, and the load monitor gets windows.
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(&kafka, "plain"),
    );
    eventually("the metrics reporter's topic", || {
        plain.describe("strimzi.cruisecontrol.metrics")
    })
    .await;
    let started = Instant::now();
    let state: Value = eventually("a load model with valid windows", || {
        let (status, body) = cruise_control_get(network, &ns, &pod_ip, &ca, admin, state_path)?;
        if status != 200 {
            return Err(format!("{status}: {body}"));
        }
        let state: Value = serde_json::from_str(&body).map_err(|error| error.to_string())?;
        let monitor = &state["MonitorState"];
        let windows = monitor["numMonitoredWindows"].as_i64().unwrap_or(0);
        let coverage = monitor["monitoringCoveragePct"].as_f64().unwrap_or(0.0);
        (windows > 0 && coverage > 0.0)
            .then_some(state.clone())
            .ok_or_else(|| format!("no valid window yet: {}", state["MonitorState"]))
    })
    .await;
    println!(
        "figure: Cruise Control's load model had a valid window {:.1}s after the Kafka was Ready",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(state["ExecutorState"]["state"], "NO_TASK_IN_PROGRESS");

    rebalances_run_through_their_states(&client, &ns).await;
    replication_factor_changes_through_cruise_control(&client, &ns, &kafka).await;
    scaling_rebalances_automatically(&client, &ns, &kafka).await;
}

/// A KafkaRebalance of the cluster with `spec`.
fn rebalance(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaRebalance",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": CLUSTER}},
        "spec": spec,
    })
}

/// The state of a KafkaRebalance: the type of its condition whose status is "True".
fn rebalance_state(rebalance: &KafkaRebalance) -> Option<String> {
    rebalance
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|condition| condition.status.as_deref() == Some("True"))
        .and_then(|condition| condition.r#type.clone())
}

/// Waits until the KafkaRebalance `name` is in `state`, and returns it.
async fn rebalance_in(client: &Client, ns: &str, name: &str, state: &str) -> KafkaRebalance {
    let api: Api<KafkaRebalance> = Api::namespaced(client.clone(), ns);
    wait_for(
        &api,
        name,
        &format!("KafkaRebalance {name} {state}"),
        |found| {
            let found = found?;
            (rebalance_state(found).as_deref() == Some(state)).then(|| found.clone())
        },
    )
    .await
}

/// Sets `strimzi.io/rebalance` on the KafkaRebalance `name`.
async fn annotate(client: &Client, ns: &str, name: &str, action: &str) {
    let annotation = json!({"metadata": {"annotations": {"strimzi.io/rebalance": action}}});
    crate::support::merge_patch::<KafkaRebalance>(client, ns, name, annotation).await;
}

/// The KafkaRebalance part, run once Cruise Control has a load model.
async fn rebalances_run_through_their_states(client: &Client, ns: &str) {
    let applied = Instant::now();
    apply(client, ns, &rebalance("full", json!({}))).await;
    let proposed = rebalance_in(client, ns, "full", "ProposalReady").await;
    println!(
        "figure: KafkaRebalance (full, 3 brokers) applied to ProposalReady in {:.1}s",
        applied.elapsed().as_secs_f64()
    );
    let result = proposed
        .status
        .as_ref()
        .unwrap()
        .optimization_result
        .clone()
        .expect("an optimizationResult");
    let result = serde_json::to_value(result).unwrap();
    for field in ["numReplicaMovements", "dataToMoveMB", "numLeaderMovements"] {
        assert!(result.get(field).is_some(), "{field} missing from {result}");
    }
    assert_eq!(result["afterBeforeLoadConfigMap"], "full");
    let approved = Instant::now();
    annotate(client, ns, "full", "approve").await;
    let done = rebalance_in(client, ns, "full", "Ready").await;
    println!(
        "figure: KafkaRebalance (full, 3 brokers) approved to Ready in {:.1}s",
        approved.elapsed().as_secs_f64()
    );
    assert!(
        done.metadata
            .annotations
            .as_ref()
            .is_none_or(|annotations| !annotations.contains_key("strimzi.io/rebalance")),
        "the approve annotation is removed once acted on"
    );

    // refresh: a new proposal for the same rebalance.
    annotate(client, ns, "full", "refresh").await;
    rebalance_in(client, ns, "full", "ProposalReady").await;

    // An unknown goal: NotReady with Cruise Control's own reason.
    apply(
        client,
        ns,
        &rebalance("bad-goal", json!({"goals": ["com.example.NoSuchGoal"]})),
    )
    .await;
    let refused = rebalance_in(client, ns, "bad-goal", "NotReady").await;
    let message = refused
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .and_then(|conditions| {
            conditions
                .iter()
                .find(|c| c.r#type.as_deref() == Some("NotReady"))
        })
        .and_then(|condition| condition.message.clone())
        .unwrap_or_default();
    assert!(message.contains("NoSuchGoal"), "{message}");
}

/// The node ID a scale-up from three brokers (0, 1, 2; the controller is 3) gives the new one.
const ADDED_BROKER: i32 = 4;

/// Whether broker `id` holds a replica of any partition.
fn hosts_replicas(plain: &ClusterClient, id: i32) -> Result<bool, String> {
    Ok(plain
        .assignments()?
        .iter()
        .any(|partition| partition.replicas.contains(&id)))
}

/// The Kafka once its automatic rebalancing is `Idle` again with nothing queued, and its
/// status `Ready` for its latest generation.
async fn auto_rebalance_idle(client: &Client, ns: &str) -> Kafka {
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    wait_for(&kafkas, CLUSTER, "auto-rebalancing Idle", |kafka| {
        let kafka = kafka?;
        let auto = kafka.status.as_ref()?.auto_rebalance.as_ref()?;
        let idle = auto.state == Some(KafkaAutoRebalanceState::Idle) && auto.modes.is_none();
        let ready = crate::support::condition(kafka, "Ready")
            .is_some_and(|condition| condition.status.as_deref() == Some("True"));
        // Idle and Ready as of the latest spec: a spec change just made (turning automatic
        // rebalancing on) is not seen before the operator has reconciled it.
        let current = kafka.status.as_ref()?.observed_generation == kafka.metadata.generation;
        (idle && ready && current).then(|| kafka.clone())
    })
    .await
}

/// Automatic rebalancing: with `autoRebalance` for both modes (the added brokers' with a
/// template), a fourth broker gets replicas moved onto it, and removing it again first moves
/// them off, under a steady producer that loses nothing.
async fn scaling_rebalances_automatically(client: &Client, ns: &str, kafka: &Kafka) {
    let (plain, tools) = (plain_client(kafka), kafka_tools(kafka));
    for (index, replicas) in [[0, 1], [1, 2], [2, 0], [0, 2], [1, 0], [2, 1]]
        .iter()
        .enumerate()
    {
        eventually("creating a topic to spread", || {
            tools.create_topic(&format!("spread-{index}"), replicas, &[])
        })
        .await;
    }
    let mut template = rebalance("scaling-template", json!({"skipHardGoalCheck": true}));
    template["metadata"]["annotations"] = json!({"strimzi.io/rebalance-template": "true"});
    apply(client, ns, &template).await;
    Api::<Kafka>::namespaced(client.clone(), ns)
        .patch(
            CLUSTER,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"cruiseControl": {"autoRebalance": [
                {"mode": "add-brokers", "template": {"name": "scaling-template"}},
                {"mode": "remove-brokers"},
            ]}}})),
        )
        .await
        .unwrap();
    auto_rebalance_idle(client, ns).await;
    let stop_file = env().log_dir().join(format!("{ns}-auto-rebalance-stop"));
    let producer = plain.produce_steadily("spread-0", 20, &stop_file).unwrap();

    let scaled_up = Instant::now();
    scale_brokers(client, ns, 4).await;
    eventually_hosting(client, ns, &plain, ADDED_BROKER, true).await;
    auto_rebalance_idle(client, ns).await;
    println!(
        "figure: scale-up to 4 brokers to partitions moved onto the new one and auto-rebalancing Idle in {:.1}s",
        scaled_up.elapsed().as_secs_f64()
    );
    let started = event_notes(client, ns, "AutoRebalanceStarted").await;
    assert!(
        started
            .iter()
            .any(|note| note.contains("add-brokers") && note.contains(&format!("[{ADDED_BROKER}]"))),
        "{started:?}"
    );
    let rebalances: Api<KafkaRebalance> = Api::namespaced(client.clone(), ns);
    assert!(
        rebalances
            .get_opt(&format!("{CLUSTER}-auto-rebalancing-add-brokers"))
            .await
            .unwrap()
            .is_none(),
        "the finished automatic rebalance is deleted"
    );

    // Scaling down: the broker holds replicas, so they move off first; then it goes.
    let scaled_down = Instant::now();
    scale_brokers(client, ns, 3).await;
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), ns);
    let pod = format!("{CLUSTER}-broker-{ADDED_BROKER}");
    eventually_ok(
        "the emptied broker's pod to be removed",
        SCALING_WAIT,
        || async {
            match pods.get_opt(&pod).await {
                Ok(None) => Ok(()),
                found => Err(format!("{:?}", found.map(|pod| pod.map(|pod| pod.status)))),
            }
        },
    )
    .await;
    auto_rebalance_idle(client, ns).await;
    println!(
        "figure: scale-down to 3 brokers (replicas moved off first) to the broker removed and auto-rebalancing Idle in {:.1}s",
        scaled_down.elapsed().as_secs_f64()
    );
    let started = event_notes(client, ns, "AutoRebalanceStarted").await;
    assert!(
        started.iter().any(|note| note.contains("remove-brokers")),
        "the scale-down went without a rebalance: {started:?}"
    );
    assert!(!hosts_replicas(&plain, ADDED_BROKER).unwrap());
    stop_and_check_nothing_lost(producer, &plain, "spread-0", Redelivery::Refused).await;
}

/// How long a scaling step may take: the new broker's pod, Cruise Control restarted with
/// its capacity, a proposal and its execution.
const SCALING_WAIT: Duration = Duration::from_secs(900);

/// Waits until broker `id` holds replicas (`true`) or none (`false`), reading the metadata
/// every 2 s; on a timeout, says where the automatic rebalance of the Kafka in `ns` stood.
async fn eventually_hosting(
    client: &Client,
    ns: &str,
    plain: &ClusterClient,
    id: i32,
    hosting: bool,
) {
    eventually_ok_every(
        &format!("broker {id} hosting replicas: {hosting}"),
        SCALING_WAIT,
        Duration::from_secs(2),
        || async {
            match hosts_replicas(plain, id)? {
                found if found == hosting => Ok(()),
                found => Err(format!(
                    "broker {id} hosts replicas: {found}; {}",
                    rebalancing_state(client, ns).await
                )),
            }
        },
    )
    .await;
}

/// The Kafka's `status.autoRebalance` and each KafkaRebalance's state and last condition
/// message in `ns`, for a failure's message.
async fn rebalancing_state(client: &Client, ns: &str) -> String {
    let kafka = Api::<Kafka>::namespaced(client.clone(), ns)
        .get_opt(CLUSTER)
        .await
        .ok()
        .flatten();
    let generations = kafka.as_ref().map(|kafka| {
        (
            kafka.metadata.generation,
            kafka
                .status
                .as_ref()
                .and_then(|status| status.observed_generation),
        )
    });
    let auto = kafka
        .and_then(|kafka| kafka.status?.auto_rebalance)
        .map(|auto| serde_json::to_string(&auto).unwrap_or_default());
    let rebalances = Api::<KafkaRebalance>::namespaced(client.clone(), ns)
        .list(&Default::default())
        .await
        .map(|list| {
            list.items
                .iter()
                .map(|rebalance| {
                    let conditions = rebalance
                        .status
                        .as_ref()
                        .and_then(|status| status.conditions.as_ref());
                    let last = conditions.and_then(|conditions| conditions.first());
                    format!(
                        "{}: {:?} {:?}",
                        kube::ResourceExt::name_any(rebalance),
                        last.and_then(|condition| condition.r#type.as_ref()),
                        last.and_then(|condition| condition.message.as_ref())
                    )
                })
                .collect::<Vec<_>>()
        });
    let events = Api::<k8s_openapi::api::core::v1::Event>::namespaced(client.clone(), ns)
        .list(&Default::default())
        .await
        .map(|list| {
            list.items
                .into_iter()
                .filter(|event| {
                    event.type_.as_deref() == Some("Warning")
                        || event
                            .reason
                            .as_deref()
                            .is_some_and(|reason| reason.starts_with("AutoRebalance"))
                })
                .map(|event| format!("{:?}: {:?}", event.reason, event.message))
                .collect::<Vec<_>>()
        });
    format!(
        "generation and observed generation {generations:?}, autoRebalance {auto:?}, rebalances {rebalances:?}, events {events:?}"
    )
}

/// The replicas of each partition of `topic`, by partition.
fn replica_sets(plain: &ClusterClient, topic: &str) -> Result<Vec<Vec<i32>>, String> {
    let mut partitions: Vec<_> = plain
        .assignments()?
        .into_iter()
        .filter(|partition| partition.topic == topic)
        .collect();
    partitions.sort_by_key(|partition| partition.partition);
    Ok(partitions
        .into_iter()
        .map(|partition| partition.replicas)
        .collect())
}

/// Waits until every partition of `topic` has `replicas` replicas on distinct brokers and
/// the KafkaTopic is Ready with no `replicasChange` left.
async fn replicas_changed(
    client: &Client,
    ns: &str,
    plain: &ClusterClient,
    topic: &str,
    replicas: usize,
) {
    let started = Instant::now();
    eventually(&format!("{topic} with {replicas} replicas"), || {
        let sets = replica_sets(plain, topic)?;
        let done = sets.len() == 3
            && sets.iter().all(|set| {
                let distinct: std::collections::BTreeSet<_> = set.iter().collect();
                set.len() == replicas && distinct.len() == replicas
            });
        done.then_some(()).ok_or_else(|| format!("{sets:?}"))
    })
    .await;
    let topics: Api<strimzi_api::topic::KafkaTopic> = Api::namespaced(client.clone(), ns);
    wait_for(&topics, topic, "the replicas change to end", |found| {
        let status = found?.status.as_ref()?;
        let ready = status.conditions.iter().flatten().any(|condition| {
            condition.r#type.as_deref() == Some("Ready")
                && condition.status.as_deref() == Some("True")
        });
        (ready && status.replicas_change.is_none()).then_some(())
    })
    .await;
    println!(
        "figure: KafkaTopic replicas -> {replicas} through Cruise Control (3 partitions, 3 brokers) in {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

/// A KafkaTopic's replication factor changes through Cruise Control: 1 → 3 → 2, each
/// partition on distinct brokers, no record lost.
async fn replication_factor_changes_through_cruise_control(
    client: &Client,
    ns: &str,
    kafka: &Kafka,
) {
    let plain = plain_client(kafka);
    let topic = "rf-change";
    let topics: Api<strimzi_api::topic::KafkaTopic> = Api::namespaced(client.clone(), ns);
    apply(
        client,
        ns,
        &crate::support::kafka_topic(topic, CLUSTER, 3, 1),
    )
    .await;
    crate::support::real_nodes::topic_ready(client, ns, topic).await;
    eventually("producing to the topic", || plain.produce(topic, 30, "rf")).await;
    for replicas in [3, 2] {
        topics
            .patch(
                topic,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": replicas}})),
            )
            .await
            .unwrap();
        replicas_changed(client, ns, &plain, topic, replicas).await;
    }
    let read = eventually("consuming every record", || plain.consume(topic, 30)).await;
    assert_eq!(
        crate::support::real_nodes::sorted(read),
        crate::support::real_nodes::records("rf", 30),
        "records lost"
    );
}

/// A client on the plain listener of `kafka`, from inside the nodes' network.
fn plain_client(kafka: &Kafka) -> ClusterClient {
    ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        env().network().unwrap(),
        &bootstrap(kafka, "plain"),
    )
}

/// Kafka's tools on the plain listener of `kafka`, from inside the nodes' network.
fn kafka_tools(kafka: &Kafka) -> KafkaTools {
    KafkaTools::new(env().network().unwrap(), &bootstrap(kafka, "plain")).unwrap()
}
