//! Real Kafka in real pods: the cluster operator binary (configured by Strimzi's environment
//! variables) on the test environment's real node, running Strimzi's Kafka image rebuilt
//! locally. Clients (rdkafka, inside the nodes' network) produce and consume through the
//! bootstrap Service on the plain and TLS listeners, the topic operator makes a real topic,
//! a deleted broker pod comes back with its data, and an image that cannot be pulled reads
//! as a failure (`NotReady`) until it is fixed.
//!
//! The cluster starts at the older supported Kafka version (4.2.1, its image built by
//! build-images.sh beside the default one) and ends with Strimzi's upgrade procedure under a
//! steady producer: `spec.kafka.version` raised to 4.3.1 rolls every node onto the new image,
//! each once, in the roller's order (the controllers, the active one last of them, then the
//! brokers), the metadata version kept; `spec.kafka.metadataVersion`
//! raised to 4.3's default then raises the finalized `metadata.version` without a roll; no
//! acknowledged record is lost; and going back to 4.2.1, which cannot run that metadata
//! version, is refused with nothing restarted.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::env;
use crate::support::real_nodes::{
    POD_WAIT, Startup, all_pods_ready, binaries, bootstrap, client_certificate, cluster_ca_file,
    delete_when_done, eventually, is_ready, persistent_cluster, records, round_trip, sorted,
    stop_and_check_nothing_lost, topic_ready,
};
use crate::support::rolls::{event_notes, pod_uids, restarted_in_order, watch_roll};
use crate::support::{apply, kafka_topic, merge_patch, ready, wait_for};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, LogParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_tests::clients::{ClusterClient, Redelivery};
use strimzi_tests::health::{Health, health};
use strimzi_tests::nodes::image_version;
use strimzi_tests::process::ManagedProcess;
use strimzi_tests::resources::eventually_ok;

const CLUSTER: &str = "real";
/// The Kafka version the cluster starts at, and its default metadata version (our version
/// table, Strimzi's `kafka-versions.yaml`).
const OLD_VERSION: &str = "4.2.1";
const OLD_METADATA_VERSION: &str = "4.2-IV1";
/// The version it is upgraded to, and its default metadata version.
const NEW_VERSION: &str = "4.3.1";
const NEW_METADATA_VERSION: &str = "4.3-IV0";

/// The image of Kafka `version`, as build-images.sh names it and the operator's default
/// `STRIMZI_KAFKA_IMAGES` maps it.
fn image_of(version: &str) -> String {
    format!(
        "quay.io/strimzi/kafka:{}-kafka-{version}",
        image_version("STRIMZI_VERSION")
    )
}

/// One controller and two brokers with persistent volumes; plain, TLS and mutual-TLS
/// listeners; Strimzi's JVM flags and probes, which this test is about. Kafka 4.2.1 at its
/// metadata version, set explicitly, as Strimzi's upgrade procedure asks.
fn small_cluster() -> Vec<Value> {
    let mut documents = persistent_cluster(
        CLUSTER,
        (1, 2),
        &json!({
            "offsets.topic.replication.factor": 2,
            "transaction.state.log.replication.factor": 2,
            "transaction.state.log.min.isr": 1,
        }),
        true,
        Startup::StrimziDefaults,
    );
    for document in &mut documents {
        if document["kind"] == "Kafka" {
            document["spec"]["kafka"]["version"] = json!(OLD_VERSION);
            document["spec"]["kafka"]["metadataVersion"] = json!(OLD_METADATA_VERSION);
        }
    }
    documents
}

struct Operators {
    _cluster: ManagedProcess,
    _topic: Option<ManagedProcess>,
}

#[tokio::test]
async fn a_kafka_on_real_nodes_serves_clients_makes_topics_survives_a_broker_pod_deletion_and_upgrades()
 {
    let _room = super::room_for(super::Weight::Light).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("real").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let network = env.network().expect("a real-node environment");
    let mut operators = Operators {
        _cluster: crate::support::spawn_cluster_operator(
            env,
            binaries(),
            &ns,
            strimzi_tests::layout::free_port().unwrap(),
            &[],
        ),
        _topic: None,
    };
    let applied = Instant::now();
    for document in small_cluster() {
        apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;
    assert_eq!(
        kafka.status.as_ref().unwrap().kafka_version.as_deref(),
        Some(OLD_VERSION)
    );
    let pods = all_pods_ready(&client, &ns, CLUSTER, 3).await;
    // A figure for the README, not an assertion.
    println!(
        "figure: Kafka with 1 controller + 2 brokers applied to Ready on a real node in {:.1}s",
        applied.elapsed().as_secs_f64()
    );
    for pod in &pods {
        let status = pod.status.as_ref().unwrap();
        assert_eq!(
            status.phase.as_deref(),
            Some("Running"),
            "{}",
            pod.name_any()
        );
        let image = &pod.spec.as_ref().unwrap().containers[0].image;
        assert_eq!(image.as_deref(), Some(image_of(OLD_VERSION).as_str()));
        // Neither probe failed on the way: the liveness probe never restarted Kafka.
        let containers = status.container_statuses.as_ref().unwrap();
        assert_eq!(containers[0].restart_count, 0, "{}", pod.name_any());
    }

    // Strimzi's start-up script ran in the image and logged what it always logs.
    let broker = pods
        .iter()
        .map(ResourceExt::name_any)
        .find(|name| name.starts_with(&format!("{CLUSTER}-broker-")))
        .expect("a broker pod");
    let broker_id = broker.rsplit('-').next().unwrap().to_owned();
    let logs = Api::<Pod>::namespaced(client.clone(), &ns)
        .logs(&broker, &LogParams::default())
        .await
        .unwrap();
    assert!(
        logs.contains(&format!("STRIMZI_BROKER_ID={broker_id}")),
        "{logs}"
    );
    assert!(
        logs.contains("Starting Kafka with configuration:"),
        "{logs}"
    );

    // Clients through the bootstrap Service, as written in status.listeners.
    let plain_bootstrap = bootstrap(&kafka, "plain");
    let tls_bootstrap = bootstrap(&kafka, "tls");
    assert_eq!(
        plain_bootstrap,
        format!("{CLUSTER}-kafka-bootstrap.{ns}.svc:9092")
    );
    let kafka_client = binaries().join("strimzi-kafka-client");
    let plain = ClusterClient::new(&kafka_client, network, &plain_bootstrap);
    let cluster_ca = cluster_ca_file(&client, &ns, CLUSTER).await;
    let tls = ClusterClient::new(&kafka_client, network, &tls_bootstrap).tls(&cluster_ca);
    round_trip(&plain, "plain-records", 5, "plain", "the plain listener").await;
    round_trip(&tls, "tls-records", 3, "tls", "the TLS listener").await;
    // Mutual TLS: a certificate of the clients CA is let in, a client without one is not.
    let (cert, key) = client_certificate(&client, &ns, CLUSTER, "mtls-user").await;
    let mtls_bootstrap = bootstrap(&kafka, "mtls");
    let mtls = ClusterClient::new(&kafka_client, network, &mtls_bootstrap)
        .tls(&cluster_ca)
        .certificate(&cert, &key);
    round_trip(&mtls, "mtls-records", 2, "mtls", "the mutual-TLS listener").await;
    let anonymous = ClusterClient::new(&kafka_client, network, &mtls_bootstrap)
        .tls(&cluster_ca)
        .timeout(10);
    assert!(
        anonymous.produce("mtls-records", 1, "anonymous").is_err(),
        "a client without a certificate was let in on the mutual-TLS listener"
    );

    // The topic operator, inside the nodes' network, makes a KafkaTopic a real topic.
    operators._topic = Some(crate::support::spawn_entity_operator(
        env,
        binaries(),
        crate::support::EntityOperator::Topic,
        &ns,
        CLUSTER,
        &plain_bootstrap,
    ));
    apply(&client, &ns, &kafka_topic("orders", CLUSTER, 3, 2)).await;
    topic_ready(&client, &ns, "orders").await;
    assert_eq!(
        eventually("describing topic orders", || plain.describe("orders")).await,
        (3, 2)
    );

    // A deleted broker pod is recreated by the StrimziPodSet controller, rejoins, and what
    // was written before is still there.
    eventually("producing before the deletion", || {
        plain.produce("orders", 20, "before")
    })
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let victim = broker;
    let old_uid = pods.get(&victim).await.unwrap().uid();
    pods.delete(&victim, &DeleteParams::default())
        .await
        .unwrap();
    let started = Instant::now();
    loop {
        let pod = pods.get_opt(&victim).await.unwrap();
        if pod
            .as_ref()
            .is_some_and(|pod| pod.uid() != old_uid && is_ready(pod))
        {
            break;
        }
        assert!(
            started.elapsed() < POD_WAIT,
            "{victim} not recreated and Ready: {pod:#?}"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    all_pods_ready(&client, &ns, CLUSTER, 3).await;
    let read = eventually("consuming after the deletion", || {
        plain.consume("orders", 20)
    })
    .await;
    assert_eq!(sorted(read), records("before", 20));
    let logs = pods.logs(&victim, &LogParams::default()).await.unwrap();
    assert!(
        logs.contains(&format!("STRIMZI_BROKER_ID={broker_id}")),
        "{logs}"
    );

    // A real failure, as tools that read Strimzi's conditions see it: an image that cannot be
    // pulled leaves the first node restarted onto it stuck, and the Kafka is `NotReady`
    // (Argo CD: Degraded) at once, not after a timeout; once the image is fixed the stuck pod
    // is replaced and the Kafka is Ready again.
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let set_image = |image: Value| {
        merge_patch::<Kafka>(
            &client,
            &ns,
            CLUSTER,
            json!({"spec": {"kafka": {"image": image}}}),
        )
    };
    set_image(json!("localhost/strimzi-rs/no-such-kafka:0")).await;
    let failure = eventually_ok("the Kafka to read as failed", POD_WAIT, || async {
        let kafka = kafkas.get(CLUSTER).await.unwrap();
        let status = serde_json::to_value(&kafka.status).unwrap_or_default();
        let not_ready = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|condition| condition["type"] == "NotReady")
            .map(|condition| format!("{}: {}", condition["reason"], condition["message"]));
        match (health("Kafka", &status), not_ready) {
            (Health::Degraded, Some(not_ready)) => Ok(not_ready),
            (health, _) => Err(health),
        }
    })
    .await;
    assert!(
        failure.contains("ImagePull") || failure.contains("ErrImage"),
        "{failure}"
    );
    set_image(Value::Null).await;
    ready(&client, &ns, CLUSTER).await;
    all_pods_ready(&client, &ns, CLUSTER, 3).await;

    // Box::pin: the test's future would outgrow a test thread's stack.
    Box::pin(upgrade_under_load(&client, &ns, &plain)).await;
}

/// Strimzi's upgrade procedure on the running cluster: the Kafka version under a steady
/// producer to `orders` (two replicas, which holds other records already), then the metadata
/// version under a steady producer of its own; then a downgrade Kafka refuses.
async fn upgrade_under_load(client: &Client, ns: &str, plain: &ClusterClient) {
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    let metadata_version = |kafka: &Kafka| {
        kafka
            .status
            .as_ref()
            .and_then(|status| status.kafka_metadata_version.clone())
    };
    let kafka = ready(client, ns, CLUSTER).await;
    assert_eq!(
        metadata_version(&kafka).as_deref(),
        Some(OLD_METADATA_VERSION)
    );
    let started = Instant::now();
    let stop_file = env().log_dir().join(format!("{ns}-upgrade-stop"));
    let producer = plain.produce_steadily("orders", 20, &stop_file).unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;

    // The Kafka version: every node rolls once onto the new image. (The restarts of the
    // image steps before have Events of the same reason.)
    let before = pod_uids(client, ns, CLUSTER).await;
    let earlier_restarts = restarted_in_order(client, ns, "PodHasOldRevision")
        .await
        .len();
    merge_patch::<Kafka>(
        client,
        ns,
        CLUSTER,
        json!({"spec": {"kafka": {"version": NEW_VERSION}}}),
    )
    .await;
    let roll = watch_roll(client, ns, CLUSTER, &before, |_| {}).await;
    let kafka = ready(client, ns, CLUSTER).await;
    let status = kafka.status.as_ref().unwrap();
    assert_eq!(status.kafka_version.as_deref(), Some(NEW_VERSION));
    assert_eq!(
        metadata_version(&kafka).as_deref(),
        Some(OLD_METADATA_VERSION),
        "the metadata version changed with the Kafka version"
    );
    let order =
        restarted_in_order(client, ns, "PodHasOldRevision").await[earlier_restarts..].to_vec();
    let unique: BTreeSet<&String> = order.iter().collect();
    assert_eq!(order.len(), 3, "restart Events: {order:?}");
    assert_eq!(unique.len(), 3, "a node restarted twice: {order:?}");
    // The roller's order: the controllers (the active one last of them), then the brokers.
    assert!(
        order[0].starts_with(&format!("{CLUSTER}-controller-"))
            && order[1..]
                .iter()
                .all(|name| name.starts_with(&format!("{CLUSTER}-broker-"))),
        "the controller, then the brokers: {order:?}"
    );
    let upgraded = all_pods_ready(client, ns, CLUSTER, 3).await;
    for pod in &upgraded {
        let image = &pod.spec.as_ref().unwrap().containers[0].image;
        assert_eq!(
            image.as_deref(),
            Some(image_of(NEW_VERSION).as_str()),
            "{}",
            pod.name_any()
        );
    }
    let after_roll = pod_uids(client, ns, CLUSTER).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    print_node_diagnostics(client, ns).await;
    let report = stop_and_check_nothing_lost(producer, plain, "orders", Redelivery::Refused).await;
    assert!(report.acked.len() > 100, "{}", report.summary());

    // The metadata version: raised in place, nothing rolls, under a producer of its own (to a
    // topic of its own: both producers write `steady-<n>`). Producing was seen to stall for
    // 10 to over 60 seconds around the raise in some runs (nothing restarts and the operator
    // only updates the feature; the cause is not found), so its records get five minutes
    // before they count as failed: nothing acknowledged may be lost, and the worst latency is
    // printed as a figure.
    let stop_file = env().log_dir().join(format!("{ns}-metadata-stop"));
    let metadata_producer = plain
        .clone()
        .timeout(300)
        .produce_steadily("metadata", 20, &stop_file)
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let raised = Instant::now();
    merge_patch::<Kafka>(
        client,
        ns,
        CLUSTER,
        json!({"spec": {"kafka": {"metadataVersion": NEW_METADATA_VERSION}}}),
    )
    .await;
    wait_for(
        &kafkas,
        CLUSTER,
        "the metadata version to be raised",
        |kafka| (metadata_version(kafka?).as_deref() == Some(NEW_METADATA_VERSION)).then_some(()),
    )
    .await;
    let raised_seconds = raised.elapsed().as_secs_f64();
    ready(client, ns, CLUSTER).await;
    let notes = event_notes(client, ns, "MetadataVersionUpdated").await;
    assert!(
        notes.iter().any(|note| note.contains(&format!(
            "from {OLD_METADATA_VERSION} to {NEW_METADATA_VERSION}"
        ))),
        "MetadataVersionUpdated Events: {notes:?}"
    );
    assert_eq!(
        pod_uids(client, ns, CLUSTER).await,
        after_roll,
        "raising the metadata version restarted pods"
    );
    tokio::time::sleep(Duration::from_secs(10)).await;
    print_node_diagnostics(client, ns).await;
    let metadata_report =
        stop_and_check_nothing_lost(metadata_producer, plain, "metadata", Redelivery::Refused)
            .await;
    assert!(
        metadata_report.acked.len() > 100,
        "{}",
        metadata_report.summary()
    );

    // Back to 4.2.1, which cannot run metadata version 4.3-IV0: refused, nothing rolls.
    let downgrade = json!({"spec": {"kafka": {"version": OLD_VERSION, "metadataVersion": null}}});
    merge_patch::<Kafka>(client, ns, CLUSTER, downgrade).await;
    let refused =
        crate::support::not_ready_with(client, ns, CLUSTER, "UnsupportedKafkaVersionException")
            .await;
    assert!(refused.contains("cannot be lowered"), "{refused}");
    // A full reconciliation later (the operator's interval is 30 s), still nothing rolled.
    tokio::time::sleep(Duration::from_secs(35)).await;
    assert_eq!(
        pod_uids(client, ns, CLUSTER).await,
        after_roll,
        "a refused downgrade restarted pods"
    );
    let kafka = kafkas.get(CLUSTER).await.unwrap();
    assert_eq!(
        metadata_version(&kafka).as_deref(),
        Some(NEW_METADATA_VERSION)
    );
    for pod in all_pods_ready(client, ns, CLUSTER, 3).await {
        let image = &pod.spec.as_ref().unwrap().containers[0].image;
        assert_eq!(image.as_deref(), Some(image_of(NEW_VERSION).as_str()));
    }

    // Figures for the README, not assertions.
    println!(
        "figure: upgrading 1 controller + 2 brokers from Kafka {OLD_VERSION} to {NEW_VERSION} rolled in {:.0}s; metadata version raised in {raised_seconds:.1}s; the whole upgrade step {:.0}s; producer during the roll: {} records acknowledged, {} errors, p99 {:.0} ms, max {:.0} ms; during the metadata version raise: {} acknowledged, p99 {:.0} ms, max {:.0} ms",
        roll.seconds,
        started.elapsed().as_secs_f64(),
        report.acked.len(),
        report.errors,
        report.p99_ms,
        report.max_ms,
        metadata_report.acked.len(),
        metadata_report.p99_ms,
        metadata_report.max_ms,
    );
}

/// Prints (captured: shown when the test fails) each Kafka node's container restarts and the
/// last warnings and errors of its log, to tell what a failed check that follows ran into.
async fn print_node_diagnostics(client: &Client, ns: &str) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    for (name, _) in pod_uids(client, ns, CLUSTER).await {
        let restarts: i32 = pods
            .get(&name)
            .await
            .ok()
            .and_then(|pod| pod.status?.container_statuses)
            .into_iter()
            .flatten()
            .map(|container| container.restart_count)
            .sum();
        let logs = pods
            .logs(&name, &LogParams::default())
            .await
            .unwrap_or_default();
        let worrying: Vec<&str> = logs
            .lines()
            .filter(|line| line.contains(" WARN ") || line.contains(" ERROR "))
            .collect();
        let last = &worrying[worrying.len().saturating_sub(15)..];
        println!(
            "{name}: {restarts} container restarts; last warnings and errors:\n{}",
            last.join("\n")
        );
    }
}

/// A pod of the Kafka image whose container only sleeps, with Strimzi's readiness probe.
fn sleeping_kafka_pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{
                "name": "kafka",
                "image": image_version("KAFKA_IMAGE"),
                "imagePullPolicy": "Never",
                "command": ["sleep", "3600"],
                "readinessProbe": {
                    "exec": {"command": ["/opt/kafka/kafka_readiness.sh"]},
                    "periodSeconds": 2,
                    "failureThreshold": 1,
                    "timeoutSeconds": 5,
                },
            }],
            "terminationGracePeriodSeconds": 0,
        },
    }))
    .unwrap()
}

/// The readiness script passes in broker pods (the other test) and fails where no broker
/// runs. (Strimzi's liveness script, as written, passes whenever it runs: its loop's status
/// is that of an `if` that found nothing; so only the broker pods' zero restarts are checked.)
#[tokio::test]
async fn the_kafka_images_readiness_script_fails_where_no_broker_runs() {
    let _room = super::room_for(super::Weight::Light).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("probes").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    pods.create(&PostParams::default(), &sleeping_kafka_pod("no-broker"))
        .await
        .unwrap();
    wait_for(&pods, "no-broker", "the pod to run", |pod| {
        let status = pod?.status.as_ref()?.container_statuses.as_ref()?[0].clone();
        status.state?.running.map(|_| ())
    })
    .await;
    // Five probe periods.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let pod = pods.get("no-broker").await.unwrap();
    let status = &pod
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap()[0];
    assert!(status.state.as_ref().unwrap().running.is_some(), "{pod:#?}");
    assert!(
        !is_ready(&pod),
        "a pod without a broker passed the readiness script: {pod:#?}"
    );
}
