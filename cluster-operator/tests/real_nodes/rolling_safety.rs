//! What keeps a roll safe, on real nodes with real Kafka (one controller, four brokers):
//! the kafka-agent of each broker answers the operator's certificate with its broker state;
//! a broker that still holds replicas is not removed, and once they are moved away it is,
//! and unregistered; a broker removed anyway (the check skipped) leaves a partition at its
//! `min.insync.replicas`, and then its in-sync brokers are not restarted and the status
//! says why, until the partition has no replica on the removed broker any more; a cluster
//! CA key replacement rolls every node twice under a steady producer — a client trusting
//! only the old CA certificate works until the second roll, a mutual-TLS client trusting
//! both throughout — and then the old certificate leaves the CA Secret; a clients CA key
//! replacement rolls every node once, after which users with certificates of the old and
//! of the new key get in; and the node running the pods is drained with evictions under a
//! steady producer: the PodDisruptionBudget lets one pod go at a time, each comes back on the
//! environment's standby node, and no record is lost. (A cluster CA renewal, which keeps the
//! key, is tested by `entity_operator`: it rolls the nodes, reaches the components, and a
//! client trusting the certificate of before still gets in.)

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::env;
use crate::support::real_nodes::{
    POD_WAIT, Startup, all_pods_ready, binaries, bootstrap, client_certificate, cluster_ca_file,
    delete_when_done, drain_busiest_node, eventually, is_ready, persistent_cluster, scale_brokers,
    secret_value, stop_and_check_nothing_lost,
};
use crate::support::rolls::{
    ROLL_WAIT, event_notes, pod_uids, restarted_in_order_noting, set_option, watch_roll,
};
use crate::support::{apply, force, ready, wait_for};
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_operator_common::kafka::agent::{self, BrokerState};
use strimzi_operator_common::kafka::{HostResolution, TlsConfig};
use strimzi_tests::clients::{ClusterClient, KafkaTools, Redelivery, SteadyReport};
use strimzi_tests::resources::eventually_ok;

const CLUSTER: &str = "guard";
/// The topic whose partition holds the roll back.
const GUARDED: &str = "guarded";

/// One controller and four brokers with persistent volumes and small heaps, and a
/// mutual-TLS listener. Topics get two replicas and `min.insync.replicas=1` unless created
/// otherwise (the cluster shrinks to two brokers).
fn cluster() -> Vec<Value> {
    persistent_cluster(
        CLUSTER,
        (1, 4),
        &json!({
            "default.replication.factor": 2,
            "min.insync.replicas": 1,
            "offsets.topic.replication.factor": 2,
            "transaction.state.log.replication.factor": 2,
            "transaction.state.log.min.isr": 1,
        }),
        true,
        Startup::Fast,
    )
}

/// The pod of broker `id`.
fn broker_pod(id: i32) -> String {
    format!("{CLUSTER}-broker-{id}")
}

/// Waits until broker `id`'s pod is gone and the operator has unregistered the broker.
async fn wait_until_removed_and_unregistered(client: &Client, ns: &str, id: i32) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    wait_for(
        &pods,
        &broker_pod(id),
        "the broker pod to be removed",
        |pod| pod.is_none().then_some(()),
    )
    .await;
    eventually_ok(
        "the removed broker to be unregistered",
        POD_WAIT,
        || async {
            let unregistered = event_notes(client, ns, "BrokerUnregistered").await;
            if unregistered
                .iter()
                .any(|note| note.starts_with(&format!("Broker {id},")))
            {
                Ok(())
            } else {
                Err(unregistered)
            }
        },
    )
    .await;
}

#[tokio::test]
async fn brokers_are_removed_once_empty_a_roll_waits_for_in_sync_replicas_and_cas_are_renewed() {
    let _room = super::room_for(super::Weight::Heavy).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("guard").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let network = env.network().expect("a real-node environment");
    let operator = super::operator_on(&ns);
    for document in cluster() {
        apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;
    let pods = all_pods_ready(&client, &ns, CLUSTER, 5).await;
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(&kafka, "plain"),
    );
    let tools = KafkaTools::new(network, &bootstrap(&kafka, "plain")).unwrap();

    // The kafka-agent of every broker tells the operator's certificate its broker state.
    let broker_pods: Vec<&Pod> = pods
        .iter()
        .filter(|pod| pod.name_any().contains("-broker-"))
        .collect();
    for pod in &broker_pods {
        let state = agent_broker_state(&client, &ns, pod).await;
        assert_eq!(state.name(), "RUNNING", "{}: {state:?}", pod.name_any());
    }
    let mut brokers: Vec<i32> = broker_pods
        .iter()
        .map(|pod| pod.name_any().rsplit('-').next().unwrap().parse().unwrap())
        .collect();
    brokers.sort_unstable();
    let [first, second, third, fourth] = brokers[..] else {
        panic!("four brokers expected: {brokers:?}");
    };
    // A scale-down removes the highest node IDs: `fourth`, then `third`.
    eventually("creating a topic on the brokers removed first", || {
        tools.create_topic("moved", &[second, third, fourth], &[])
    })
    .await;
    eventually("creating the guarded topic", || {
        tools.create_topic(GUARDED, &[first, second, third], &["min.insync.replicas=2"])
    })
    .await;
    eventually("producing to both topics", || {
        plain.produce("moved", 10, "moved")?;
        plain.produce(GUARDED, 10, "guarded")
    })
    .await;

    // A broker that holds replicas is not removed; once they are moved away, it is, and it
    // is unregistered.
    scale_brokers(&client, &ns, 3).await;
    let refused =
        crate::support::not_ready_with(&client, &ns, CLUSTER, "InvalidResourceException").await;
    assert_eq!(
        refused,
        format!("Cannot scale down brokers [{fourth}] because brokers [{fourth}] are not empty")
    );
    let pods_api: Api<Pod> = Api::namespaced(client.clone(), &ns);
    assert!(
        pods_api
            .get_opt(&broker_pod(fourth))
            .await
            .unwrap()
            .is_some(),
        "a broker holding replicas was removed"
    );
    let plan = |name: &str| env.log_dir().join(format!("{ns}-{name}.json"));
    tools
        .remove_replicas_of(
            &plain,
            fourth,
            &[first, second, third],
            Duration::from_secs(300),
            &plan("first-move"),
        )
        .unwrap();
    wait_until_removed_and_unregistered(&client, &ns, fourth).await;
    ready(&client, &ns, CLUSTER).await;

    // A broker removed with its replicas (the check skipped) leaves the guarded partition
    // with two in-sync replicas of three, at its min.insync.replicas=2: a static change
    // restarts the controller (first, as it holds no partition) and none of the brokers
    // holding them, and the status says why.
    kafkas
        .patch(
            CLUSTER,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {
                "strimzi.io/skip-broker-scaledown-check": "true",
            }}})),
        )
        .await
        .unwrap();
    scale_brokers(&client, &ns, 2).await;
    wait_until_removed_and_unregistered(&client, &ns, third).await;
    ready(&client, &ns, CLUSTER).await;
    let before = pod_uids(&client, &ns, CLUSTER).await;
    set_option(&client, &ns, CLUSTER, "queued.max.requests", json!(600)).await;
    let blocked =
        crate::support::reconciling_with(&client, &ns, CLUSTER, "RollingUpdateBlocked").await;
    assert!(
        blocked.contains(&format!("{GUARDED}-0")) && blocked.contains("min.insync.replicas=2"),
        "{blocked}"
    );
    let brokers_of = |uids: BTreeMap<String, String>| -> BTreeMap<String, String> {
        uids.into_iter()
            .filter(|(pod, _)| pod.starts_with(&format!("{CLUSTER}-broker-")))
            .collect()
    };
    assert_eq!(
        brokers_of(pod_uids(&client, &ns, CLUSTER).await),
        brokers_of(before.clone()),
        "a broker restarted while the roll was blocked: {blocked}"
    );
    // Once the partition has no replica on the removed broker, the roll goes on.
    tools
        .remove_replicas_of(
            &plain,
            third,
            &[first, second],
            Duration::from_secs(300),
            &plan("second-move"),
        )
        .unwrap();
    let unblocked = watch_roll(&client, &ns, CLUSTER, &before, |_| {}).await;
    assert_eq!(
        unblocked.degraded,
        Vec::<String>::new(),
        "the Kafka read as failed while the unblocked roll went on"
    );
    ready(&client, &ns, CLUSTER).await;

    // The cluster CA key is replaced under a steady producer.
    let replacement = replace_cluster_ca_key(&client, &ns, &plain, &kafka).await;

    // The clients CA key is replaced: every node restarts once, trusting both clients CA
    // certificates, so users with certificates of either key get in.
    let old_user = client_certificate(&client, &ns, CLUSTER, "old-key-user").await;
    let before = pod_uids(&client, &ns, CLUSTER).await;
    force(
        &client,
        &ns,
        &format!("{CLUSTER}-clients-ca"),
        "strimzi.io/force-replace",
    )
    .await;
    let clients_roll = watch_roll(&client, &ns, CLUSTER, &before, |_| {}).await;
    // Status as tools read it: a Ready cluster stays Ready while it rolls.
    assert_eq!(
        clients_roll.degraded,
        Vec::<String>::new(),
        "the Kafka read as failed while the clients CA roll went on"
    );
    let mut reasons = restarted_in_order_noting(
        &client,
        &ns,
        "CaCertHasOldGeneration",
        "the clients CA certificate changed",
    )
    .await;
    reasons.sort();
    assert_eq!(
        reasons,
        before.keys().cloned().collect::<Vec<_>>(),
        "one restart per pod for the clients CA"
    );
    ready(&client, &ns, CLUSTER).await;
    let new_user = client_certificate(&client, &ns, CLUSTER, "new-key-user").await;
    let trust = ca_bundle(&client, &ns).await;
    for (user, (cert, key)) in [("old", &old_user), ("new", &new_user)] {
        let mtls = ClusterClient::new(
            &binaries().join("strimzi-kafka-client"),
            network,
            &bootstrap(&kafka, "mtls"),
        )
        .tls(&trust)
        .certificate(cert, key);
        eventually(
            &format!("a user with a certificate of the {user} clients CA key"),
            || mtls.produce("clients-ca", 1, user),
        )
        .await;
    }

    // The node running most of the cluster's pods is drained under a steady producer: the
    // PodDisruptionBudget the operator made lets one pod go at a time (the next eviction is
    // refused until the evicted pod is back), each comes back on the other node with its
    // volume, the operator restarts nothing else, and no acknowledged record is lost.
    let stop_file = env.log_dir().join(format!("{ns}-drain-stop"));
    let producer = plain.produce_steadily("drained", 20, &stop_file).unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let before = pod_uids(&client, &ns, CLUSTER).await;
    let drain = drain_busiest_node(env, &ns, CLUSTER, before.len()).await;
    assert!(
        drain.evicted.len() >= 2,
        "the cluster's pods run on one node, the other standing by: {drain:?}"
    );
    assert!(
        drain.refused > 0,
        "no eviction was refused while a pod was away: {drain:?}"
    );
    assert_eq!(
        drain.most_unavailable, 1,
        "more than one node pod was away at once: {drain:?}"
    );
    ready(&client, &ns, CLUSTER).await;
    let after = pod_uids(&client, &ns, CLUSTER).await;
    for (pod, uid) in &before {
        if !drain.evicted.contains(pod) {
            assert_eq!(
                after.get(pod),
                Some(uid),
                "{pod} restarted during the drain"
            );
        }
    }
    let drained =
        stop_and_check_nothing_lost(producer, &plain, "drained", Redelivery::Refused).await;

    drop(operator);

    // Figures for the README, not assertions.
    println!(
        "figure: drain of {} of 3 pods (1 controller + 2 brokers) from a node took {:.0}s, {} evictions refused; producer: {} records acknowledged, p99 {:.0} ms, max {:.0} ms",
        drain.evicted.len(),
        drain.seconds,
        drain.refused,
        drained.acked.len(),
        drained.p99_ms,
        drained.max_ms
    );
    println!(
        "figure: roll of 1 controller + 2 brokers held back by a partition at its minimum finished {:.0}s after the partition was fixed",
        unblocked.seconds
    );
    println!(
        "figure: clients CA key replacement (one roll of 1 controller + 2 brokers) took {:.0}s",
        clients_roll.seconds
    );
    println!(
        "figure: cluster CA key replacement (two rolls of 1 controller + 2 brokers) took {:.0}s; producer: {} records acknowledged, {} errors, p99 {:.0} ms, max {:.0} ms",
        replacement.seconds,
        replacement.report.acked.len(),
        replacement.report.errors,
        replacement.report.p99_ms,
        replacement.report.max_ms
    );
}

/// How a cluster CA key replacement went.
struct Replacement {
    seconds: f64,
    report: SteadyReport,
}

/// Replaces the cluster CA key (`strimzi.io/force-replace`) under a steady producer and
/// follows its two rolls by the operator's restart Events: first every node restarts
/// trusting the old and the new CA certificate while still presenting its old-key
/// certificate (a client trusting only the old CA certificate still works), then every node
/// restarts with a certificate of the new key (that client is refused). No record is lost.
async fn replace_cluster_ca_key(
    client: &Client,
    ns: &str,
    plain: &ClusterClient,
    kafka: &Kafka,
) -> Replacement {
    let network = env().network().unwrap();
    let old_ca = cluster_ca_file(client, ns, CLUSTER).await;
    let old_trust = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(kafka, "tls"),
    )
    .tls(&old_ca)
    .timeout(20);
    eventually("a TLS client trusting the old CA", || {
        old_trust.produce("tls-trust", 1, "before")
    })
    .await;
    let (user_cert, user_key) = client_certificate(client, ns, CLUSTER, "mtls-user").await;
    let stop_file = env().log_dir().join(format!("{ns}-ca-stop"));
    let producer = plain
        .produce_steadily("replacement", 20, &stop_file)
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let started = Instant::now();
    force(
        client,
        ns,
        &format!("{CLUSTER}-cluster-ca"),
        "strimzi.io/force-replace",
    )
    .await;
    let pods = pod_uids(client, ns, CLUSTER).await;
    let restarted = |reason: &'static str, note: &'static str| async move {
        let mut pods = restarted_in_order_noting(client, ns, reason, note).await;
        pods.sort();
        pods.dedup();
        pods
    };
    // First roll: trust in both CA certificates.
    eventually_ok("the first roll to begin", ROLL_WAIT, || async {
        let first = restarted(
            "CaCertHasOldGeneration",
            "the cluster CA certificate changed",
        )
        .await;
        if first.is_empty() { Err(first) } else { Ok(()) }
    })
    .await;
    let second_started = !restarted("KafkaCertificatesChanged", "").await.is_empty();
    let old_trust_midway = old_trust.produce("tls-trust", 1, "midway");
    assert!(
        second_started || old_trust_midway.is_ok(),
        "a client trusting the old CA failed during the first roll: {old_trust_midway:?}"
    );
    // A client with a certificate of the clients CA that took the CA Secret's certificates,
    // old and new, works through both rolls.
    let both = ca_bundle(client, ns).await;
    let mtls = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(kafka, "mtls"),
    )
    .tls(&both)
    .certificate(&user_cert, &user_key);
    eventually("a mutual-TLS client during the first roll", || {
        mtls.produce("mtls-trust", 1, "midway")
    })
    .await;
    // Second roll: certificates of the new key, every pod once.
    eventually_ok("the second roll to end", ROLL_WAIT, || async {
        let second = restarted("KafkaCertificatesChanged", "").await;
        let ready = all_ready(client, ns).await;
        if second.len() == pods.len() && ready {
            Ok(())
        } else {
            Err((second, ready))
        }
    })
    .await;
    ready(client, ns, CLUSTER).await;
    let seconds = started.elapsed().as_secs_f64();
    eventually("a mutual-TLS client after the second roll", || {
        mtls.produce("mtls-trust", 1, "after")
    })
    .await;
    let refused = old_trust.produce("tls-trust", 1, "after");
    assert!(
        refused.is_err(),
        "the brokers still present certificates the old CA signed"
    );
    // With every node on the new key, the old CA certificate leaves the Secret.
    let ca_cert_keys = || async {
        let secret = Api::<Secret>::namespaced(client.clone(), ns)
            .get(&format!("{CLUSTER}-cluster-ca-cert"))
            .await
            .unwrap();
        let keys: Vec<String> = secret.data.unwrap_or_default().into_keys().collect();
        keys
    };
    eventually_ok("the old CA certificate to be removed", POD_WAIT, || async {
        let keys = ca_cert_keys().await;
        let removed = !event_notes(client, ns, "OldCaCertificatesRemoved")
            .await
            .is_empty();
        if removed && keys.iter().all(|key| !key.starts_with("ca-")) {
            Ok(())
        } else {
            Err(keys)
        }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let report =
        stop_and_check_nothing_lost(producer, plain, "replacement", Redelivery::Refused).await;
    Replacement { seconds, report }
}

/// Every certificate of the cluster CA's certificate Secret, current and old, in one PEM
/// file: what a client that keeps its trust up to date reads.
async fn ca_bundle(client: &Client, ns: &str) -> std::path::PathBuf {
    let secret = Api::<Secret>::namespaced(client.clone(), ns)
        .get(&format!("{CLUSTER}-cluster-ca-cert"))
        .await
        .unwrap();
    let bundle: Vec<u8> = secret
        .data
        .unwrap_or_default()
        .into_iter()
        .filter(|(key, _)| key.ends_with(".crt"))
        .flat_map(|(_, value)| value.0)
        .collect();
    let path = env().log_dir().join(format!("{ns}-cluster-ca-bundle.crt"));
    std::fs::write(&path, bundle).unwrap();
    path
}

/// Whether every pod of the cluster is Ready and none is being deleted.
async fn all_ready(client: &Client, ns: &str) -> bool {
    Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&format!("strimzi.io/cluster={CLUSTER}")))
        .await
        .unwrap()
        .items
        .iter()
        .all(|pod| pod.metadata.deletion_timestamp.is_none() && is_ready(pod))
}

/// What the kafka-agent of broker pod `pod` answers the operator's certificate, asked from
/// inside the nodes' network as the operator does.
async fn agent_broker_state(client: &Client, ns: &str, pod: &Pod) -> BrokerState {
    let secret = |name: String, key: &'static str| async move {
        String::from_utf8(secret_value(client, ns, &name, key).await).unwrap()
    };
    let operator_certs = format!("{CLUSTER}-cluster-operator-certs");
    let tls = TlsConfig {
        ca_pem: secret(format!("{CLUSTER}-cluster-ca-cert"), "ca.crt").await,
        client_identity_pem: Some(format!(
            "{}{}",
            secret(operator_certs.clone(), "cluster-operator.crt").await,
            secret(operator_certs, "cluster-operator.key").await
        )),
        verify_hostname: true,
    };
    // By IP address: the test's thread in the nodes' network has the machine's resolver.
    let ip = pod.status.as_ref().unwrap().pod_ip.clone().unwrap();
    let server_name = format!("{}.{CLUSTER}-kafka-brokers.{ns}.svc", pod.name_any());
    env()
        .network()
        .unwrap()
        .enter(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(agent::broker_state(
                    &tls,
                    &ip,
                    &server_name,
                    HostResolution::IpAddressesOnly,
                    Duration::from_secs(10),
                ))
        })
        .unwrap()
        .unwrap_or_else(|error| panic!("{}: {error}", pod.name_any()))
}
