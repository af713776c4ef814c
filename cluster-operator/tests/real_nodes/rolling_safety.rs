//! What keeps a roll safe, on real nodes with real Kafka (one controller, four brokers):
//! the kafka-agent of each broker answers the operator's certificate with its broker state;
//! a broker that still holds replicas is not removed, and once they are moved away it is,
//! and unregistered; a broker removed anyway (the check skipped) leaves a partition at its
//! `min.insync.replicas`, and then its in-sync brokers are not restarted and the status
//! says why, until the partition has no replica on the removed broker any more; a cluster
//! CA key replacement rolls every node twice under a steady producer (the nodes' KRaft quorum
//! clients trust a new key only once restarted) — a client trusting only the old CA
//! certificate works until the second roll, a mutual-TLS client trusting both throughout —
//! and then the old certificate leaves the CA Secret; a clients CA key replacement restarts
//! nothing: every node reloads its trust stores, the brokers' mutual-TLS listener accepting
//! the operator's check certificate of the new key, after which users with certificates of
//! the old and of the new key get in; a cluster CA renewal
//! (same key) under a steady producer makes every node reload, each TLS listener then serves
//! its renewed certificate, each pod records the expiry of the certificate it started with,
//! and the cluster stays healthy when its controller restarts; a reloaded broker whose
//! recorded date comes near restarts, alone; a user's new listener certificate is reloaded by
//! the brokers, and one Kafka refuses (a name fewer) restarts them, the refusal in their
//! Events; the same renewal with reloads turned off rolls every node (the figures compare
//! both); and the node running the pods is drained
//! with evictions under a steady producer: the PodDisruptionBudget lets one pod go at a time,
//! each comes back on the environment's standby node, and no record is lost.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::env;
use crate::support::plugin::{kubectl_strimzi, operator_deployment, plan, planned_pods};
use crate::support::real_nodes::{
    POD_WAIT, Startup, all_pods_ready, binaries, bootstrap, client_certificate, cluster_ca_file,
    delete_when_done, drain_busiest_node, eventually, in_node_network, is_ready, openssl,
    operator_tls, persistent_cluster, scale_brokers, secret_value, served_certificate,
    stop_and_check_nothing_lost, stored_certificate,
};
use crate::support::rolls::{
    ROLL_WAIT, event_notes, pod_uids, reloaded_noting, reloads, restarted_in_order_noting,
    set_option, wait_for_reloads, watch_roll,
};
use crate::support::{apply, force, ready, wait_for};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_certificate_manager::certificate::ParsedCertificate;
use strimzi_cluster_operator::rolling::reload::{
    STARTUP_CERTIFICATE_NOT_AFTER, startup_certificate_not_after,
};
use strimzi_operator_common::kafka::HostResolution;
use strimzi_operator_common::kafka::agent::{self, BrokerState};
use strimzi_tests::clients::{ClusterClient, KafkaTools, Redelivery, SteadyReport};
use strimzi_tests::resources::eventually_ok;

const CLUSTER: &str = "guard";
/// The topic whose partition holds the roll back.
const GUARDED: &str = "guarded";

/// One controller and four brokers with persistent volumes and small heaps, and a
/// mutual-TLS listener. Topics get two replicas and `min.insync.replicas=1` unless created
/// otherwise (the cluster shrinks to two brokers).
fn cluster() -> Vec<Value> {
    let mut documents = persistent_cluster(
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
    );
    for document in &mut documents {
        if document["kind"] == "Kafka" {
            document["spec"]["kafka"]["listeners"]
                .as_array_mut()
                .unwrap()
                .push(json!({
                    "name": "custom", "port": CUSTOM_PORT, "type": "internal", "tls": true,
                    "configuration": {"brokerCertChainAndKey": {
                        "secretName": CUSTOM_SECRET, "certificate": "tls.crt", "key": "tls.key",
                    }},
                }));
        }
    }
    documents
}

/// The Secret of the user-provided certificate of the `custom` listener.
const CUSTOM_SECRET: &str = "custom-listener";
/// The port of the `custom` listener.
const CUSTOM_PORT: u16 = 9095;

/// Writes a self-signed certificate (subject `CN=guard-custom`) for the `custom` listener of
/// the cluster in `ns` into its Secret, named for the bootstrap's and the brokers' addresses
/// (with their `cluster.local` forms unless `fewer_names`), and returns its file.
async fn write_custom_certificate(
    client: &Client,
    ns: &str,
    label: &str,
    fewer_names: bool,
) -> std::path::PathBuf {
    let dir = env().log_dir();
    let (cert, key) = (
        dir.join(format!("{ns}-custom-{label}.crt")),
        dir.join(format!("{ns}-custom-{label}.key")),
    );
    let mut names = vec![
        format!("DNS:*.{ns}.svc"),
        format!("DNS:*.{CLUSTER}-kafka-brokers.{ns}.svc"),
    ];
    if !fewer_names {
        names.push(format!(
            "DNS:*.{CLUSTER}-kafka-brokers.{ns}.svc.cluster.local"
        ));
    }
    let subject = format!("/CN={CLUSTER}-custom");
    let names = format!("subjectAltName={}", names.join(","));
    openssl(&[
        "req".as_ref(),
        "-x509".as_ref(),
        "-newkey".as_ref(),
        "rsa:2048".as_ref(),
        "-nodes".as_ref(),
        "-days".as_ref(),
        "30".as_ref(),
        "-subj".as_ref(),
        subject.as_ref(),
        "-addext".as_ref(),
        names.as_ref(),
        "-keyout".as_ref(),
        key.as_os_str(),
        "-out".as_ref(),
        cert.as_os_str(),
    ] as &[&std::ffi::OsStr]);
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(CUSTOM_SECRET.to_owned()),
            ..Default::default()
        },
        type_: Some("kubernetes.io/tls".to_owned()),
        data: Some(BTreeMap::from([
            (
                "tls.crt".to_owned(),
                ByteString(std::fs::read(&cert).unwrap()),
            ),
            (
                "tls.key".to_owned(),
                ByteString(std::fs::read(&key).unwrap()),
            ),
        ])),
        ..Default::default()
    };
    let mut document = serde_json::to_value(secret).unwrap();
    document["apiVersion"] = json!("v1");
    document["kind"] = json!("Secret");
    apply(client, ns, &document).await;
    cert
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

#[test]
fn brokers_are_removed_once_empty_a_roll_waits_for_in_sync_replicas_and_cas_are_renewed() {
    // A thread of its own with a larger stack: polling this long test's futures (unoptimized)
    // outgrew a test thread's 2 MiB.
    std::thread::Builder::new()
        .name("rolling_safety".to_owned())
        .stack_size(32 << 20)
        .spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(Box::pin(removals_rolls_and_certificates()));
        })
        .unwrap()
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
}

/// The body of the test above.
async fn removals_rolls_and_certificates() {
    let _room = super::room_for(super::Weight::Heavy).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("guard").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let network = env.network().expect("a real-node environment");
    let operator = super::operator_on(&ns);
    write_custom_certificate(&client, &ns, "first", false).await;
    for document in cluster() {
        apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;
    let pods = all_pods_ready(&client, &ns, CLUSTER, 5).await;
    // `kubectl strimzi plan` reads the operator's settings from its Deployment.
    operator_deployment(&client, &ns, &[]).await;
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
    // Box::pin here and below: the test's future would outgrow a test thread's stack.
    let replacement = Box::pin(replace_cluster_ca_key(&client, &ns, &plain, &kafka)).await;

    // The clients CA key is replaced: every node reloads its trust stores without a
    // restart, and users with certificates of either key get in.
    let clients_reload = Box::pin(replace_clients_ca_key(&client, &ns, &kafka)).await;

    // The cluster CA certificate is renewed (same key) under a steady producer: every node
    // reloads; then the same renewal with reloads turned off rolls every node (the figures).
    let started_with =
        stored_certificate_expiries(&client, &ns, &pod_uids(&client, &ns, CLUSTER).await).await;
    let reloaded = Box::pin(renew_cluster_ca_by_reload(&client, &ns, &plain)).await;
    let mut still_started_with = started_with.clone();
    still_started_with.retain(|pod, _| pod.contains("-broker-"));
    assert_eq!(
        startup_certificate_expiries(&client, &ns).await,
        still_started_with,
        "the brokers keep the expiry of the certificate they started with; the restarted controller has none"
    );

    // A broker that reloaded restarts before the certificate it started with expires (its
    // KRaft quorum client still presents it).
    Box::pin(expiring_startup_certificate_restarts(
        &client,
        &ns,
        &broker_pod(first),
    ))
    .await;

    // The user replaces the custom listener's certificate: with the same names, the brokers
    // reload it; with a name fewer, Kafka refuses the reload and the brokers restart instead,
    // Kafka's refusal in their Events.
    let custom_reload = Box::pin(replace_custom_certificate(&client, &ns, &kafka)).await;
    drop(operator);
    let operator = super::operator_with(&ns, &[("STRIMZI_RELOAD_CERTIFICATES", "false")]);
    let before = pod_uids(&client, &ns, CLUSTER).await;
    force(
        &client,
        &ns,
        &format!("{CLUSTER}-cluster-ca-cert"),
        "strimzi.io/force-renew",
    )
    .await;
    let renewal_roll = Box::pin(watch_roll(&client, &ns, CLUSTER, &before, |_| {})).await;
    ready(&client, &ns, CLUSTER).await;
    Box::pin(assert_served_certificates_are_stored(&client, &ns)).await;

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
        "figure: clients CA key replacement (a reload of 1 controller + 2 brokers, 0 restarts) took {:.0}s",
        clients_reload.as_secs_f64()
    );
    println!(
        "figure: custom listener certificate replaced (a reload of 2 brokers, 0 restarts) took {:.0}s",
        custom_reload.as_secs_f64()
    );
    println!(
        "figure: cluster CA renewal, 1 controller + 2 brokers: by reload {:.0}s to every listener serving the new certificate, 0 restarts (producer: {} records acknowledged, {} errors, p99 {:.0} ms, max {:.0} ms); by a roll (STRIMZI_RELOAD_CERTIFICATES=false) {:.0}s, {} restarts",
        reloaded.seconds,
        reloaded.report.acked.len(),
        reloaded.report.errors,
        reloaded.report.p99_ms,
        reloaded.report.max_ms,
        renewal_roll.seconds,
        before.len()
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

/// Replaces the clients CA key: no pod restarts, every node reloads (the brokers' mutual-TLS
/// listener checked with a certificate of the new key), the pods then run trusting the new
/// clients CA certificate, and users with certificates of either key get in. How long until
/// every node had reloaded.
async fn replace_clients_ca_key(client: &Client, ns: &str, kafka: &Kafka) -> Duration {
    let network = env().network().unwrap();
    let old_user = client_certificate(client, ns, CLUSTER, "old-key-user").await;
    let before = pod_uids(client, ns, CLUSTER).await;
    let reloaded_before = reloads(client, ns).await;
    force(
        client,
        ns,
        &format!("{CLUSTER}-clients-ca"),
        "strimzi.io/force-replace",
    )
    .await;
    let took = wait_for_reloads(client, ns, &before, &reloaded_before).await;
    ready(client, ns, CLUSTER).await;
    assert_eq!(
        pod_uids(client, ns, CLUSTER).await,
        before,
        "a pod restarted for the clients CA key replacement"
    );
    assert_pods_trust_current(client, ns, "clients-ca").await;
    // Each broker's reload was seen on its mutual-TLS listener, which accepted a client
    // certificate of the new key; the controller trusts the clients CA nowhere.
    let checked = reloaded_noting(
        client,
        ns,
        "mtls-9094 accept a client certificate of the current clients CA",
    )
    .await;
    let brokers: std::collections::BTreeSet<String> = before
        .keys()
        .filter(|pod| pod.contains("-broker-"))
        .cloned()
        .collect();
    assert_eq!(
        checked, brokers,
        "not every broker's reload was checked on its mutual-TLS listener"
    );
    let new_user = client_certificate(client, ns, CLUSTER, "new-key-user").await;
    let trust = ca_bundle(client, ns).await;
    for (user, (cert, key)) in [("old", &old_user), ("new", &new_user)] {
        let mtls = ClusterClient::new(
            &binaries().join("strimzi-kafka-client"),
            network,
            &bootstrap(kafka, "mtls"),
        )
        .tls(&trust)
        .certificate(cert, key);
        eventually(
            &format!("a user with a certificate of the {user} clients CA key"),
            || mtls.produce("clients-ca", 1, user),
        )
        .await;
    }
    took
}

/// Checks that every pod of the cluster in `ns` runs as trusting the current certificate of
/// CA `ca` (`cluster-ca`, `clients-ca`): its `strimzi.io/<ca>-cert-generation` annotation is
/// the generation of the CA's certificate Secret.
async fn assert_pods_trust_current(client: &Client, ns: &str, ca: &str) {
    let generation = Api::<Secret>::namespaced(client.clone(), ns)
        .get(&format!("{CLUSTER}-{ca}-cert"))
        .await
        .unwrap()
        .annotations()
        .get("strimzi.io/ca-cert-generation")
        .cloned();
    for pod in Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&format!("strimzi.io/cluster={CLUSTER}")))
        .await
        .unwrap()
    {
        assert_eq!(
            pod.annotations()
                .get(&format!("strimzi.io/{ca}-cert-generation")),
            generation.as_ref(),
            "{} does not run as trusting the current {ca} certificate",
            pod.name_any()
        );
    }
}

/// Sets the recorded expiry of the certificate broker pod `expiring` started with to an hour
/// from now: the operator restarts it (and nothing else), the reason naming the quorum client.
async fn expiring_startup_certificate_restarts(client: &Client, ns: &str, expiring: &str) {
    let before = pod_uids(client, ns, CLUSTER).await;
    let in_an_hour =
        startup_certificate_not_after(time::OffsetDateTime::now_utc() + time::Duration::hours(1));
    Api::<Pod>::namespaced(client.clone(), ns)
        .patch(
            expiring,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {
                STARTUP_CERTIFICATE_NOT_AFTER: in_an_hour,
            }}})),
        )
        .await
        .unwrap();
    eventually_ok("the expiring broker restarted", ROLL_WAIT, || async {
        let restarted =
            restarted_in_order_noting(client, ns, "KafkaCertificatesChanged", "KRaft quorum").await;
        let uids = pod_uids(client, ns, CLUSTER).await;
        let replaced = uids
            .get(expiring)
            .is_some_and(|uid| Some(uid) != before.get(expiring));
        if restarted.iter().any(|pod| pod == expiring) && replaced && all_ready(client, ns).await {
            Ok(())
        } else {
            Err((restarted, uids))
        }
    })
    .await;
    ready(client, ns, CLUSTER).await;
    let after = pod_uids(client, ns, CLUSTER).await;
    for (pod, uid) in &before {
        if *pod != expiring {
            assert_eq!(after.get(pod), Some(uid), "{pod} restarted too");
        }
    }
}

/// Replaces the `custom` listener's certificate twice: first with one of the same names, which
/// every broker reloads without a restart and then serves (a client trusting only the new
/// certificate gets in); then with one that leaves a name out, which Kafka refuses to reload,
/// so every broker restarts, the refusal at the end of its restart Event, and then serves it.
/// How long the reload took.
async fn replace_custom_certificate(client: &Client, ns: &str, kafka: &Kafka) -> Duration {
    let brokers: BTreeMap<String, String> = pod_uids(client, ns, CLUSTER)
        .await
        .into_iter()
        .filter(|(pod, _)| pod.contains("-broker-"))
        .collect();
    let reloaded_before = reloads(client, ns).await;
    let second = write_custom_certificate(client, ns, "second", false).await;
    let took = wait_for_reloads(client, ns, &brokers, &reloaded_before).await;
    ready(client, ns, CLUSTER).await;
    let uids = pod_uids(client, ns, CLUSTER).await;
    for (pod, uid) in &brokers {
        assert_eq!(
            uids.get(pod),
            Some(uid),
            "{pod} restarted for a reloadable certificate"
        );
    }
    let copy = format!("custom-{CUSTOM_PORT}.crt");
    let check_served = || async {
        for pod in Api::<Pod>::namespaced(client.clone(), ns)
            .list(&ListParams::default().labels(&format!("strimzi.io/cluster={CLUSTER}")))
            .await
            .unwrap()
            .into_iter()
            .filter(|pod| pod.name_any().contains("-broker-"))
        {
            let served = served_certificate(client, ns, CLUSTER, &pod, CUSTOM_PORT).await;
            let stored = stored_certificate(client, ns, &pod.name_any(), &copy).await;
            assert!(
                served == stored,
                "{}:{CUSTOM_PORT} serves another certificate than the user's",
                pod.name_any()
            );
        }
    };
    check_served().await;
    let custom = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        env().network().unwrap(),
        &bootstrap(kafka, "custom"),
    )
    .tls(&second);
    eventually("a client trusting only the new custom certificate", || {
        custom.produce("custom-trust", 1, "second")
    })
    .await;

    write_custom_certificate(client, ns, "third", true).await;
    eventually_ok(
        "the brokers restarted for a refused reload",
        ROLL_WAIT,
        || async {
            let mut restarted = Vec::new();
            for reason in ["CustomListenerCaCertChange", "KafkaCertificatesChanged"] {
                restarted.extend(
                    restarted_in_order_noting(client, ns, reason, "could not be reloaded").await,
                );
            }
            let uids = pod_uids(client, ns, CLUSTER).await;
            let all_replaced = brokers.iter().all(|(pod, uid)| {
                restarted.contains(pod) && uids.get(pod).is_some_and(|now| now != uid)
            });
            if all_replaced && all_ready(client, ns).await {
                Ok(())
            } else {
                Err((restarted, uids))
            }
        },
    )
    .await;
    ready(client, ns, CLUSTER).await;
    check_served().await;
    took
}

/// Renews the cluster CA certificate (same key, `strimzi.io/force-renew`) under a steady
/// producer: every node reloads its certificates without a restart and each of its TLS
/// listeners serves the certificate of its renewed Secret, and no record is lost; then the
/// controller restarts, so that the brokers' KRaft quorum clients connect again with the
/// certificates they started with (KAFKA-20025), and the cluster is Ready and takes records.
async fn renew_cluster_ca_by_reload(
    client: &Client,
    ns: &str,
    plain: &ClusterClient,
) -> Replacement {
    let before = pod_uids(client, ns, CLUSTER).await;
    let reloaded_before = reloads(client, ns).await;
    let stop_file = env().log_dir().join(format!("{ns}-renewal-stop"));
    let producer = plain.produce_steadily("renewal", 20, &stop_file).unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    // As a user previews it: the reconciliation paused, the renewal asked for and planned
    // (every node reloads, none restarts), then resumed.
    let run = |args: &[&str]| {
        let run = kubectl_strimzi(env(), ns, args);
        assert_eq!(run.code, 0, "kubectl strimzi {args:?}: {run:?}");
    };
    run(&["pause", CLUSTER]);
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    wait_for(&kafkas, CLUSTER, "ReconciliationPaused", |kafka| {
        crate::support::condition(kafka?, "ReconciliationPaused").map(|_| ())
    })
    .await;
    run(&["certs", CLUSTER, "--renew", "cluster-ca"]);
    let planned = plan(env(), ns, &[CLUSTER]);
    assert_eq!(
        planned_pods(&planned, "restarts"),
        Vec::<String>::new(),
        "{planned:#}"
    );
    assert_eq!(
        planned_pods(&planned, "reloads")
            .into_iter()
            .collect::<BTreeSet<_>>(),
        before.keys().cloned().collect::<BTreeSet<_>>(),
        "{planned:#}"
    );
    run(&["resume", CLUSTER]);
    let took = wait_for_reloads(client, ns, &before, &reloaded_before).await;
    ready(client, ns, CLUSTER).await;
    assert_eq!(
        pod_uids(client, ns, CLUSTER).await,
        before,
        "a pod restarted for the cluster CA renewal"
    );
    assert_pods_trust_current(client, ns, "cluster-ca").await;
    assert_served_certificates_are_stored(client, ns).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let report = stop_and_check_nothing_lost(producer, plain, "renewal", Redelivery::Refused).await;
    // The brokers' quorum clients connect again to the restarted controller.
    let controller = before
        .keys()
        .find(|pod| pod.contains("-controller-"))
        .expect("a controller pod")
        .clone();
    Api::<Pod>::namespaced(client.clone(), ns)
        .delete(&controller, &Default::default())
        .await
        .unwrap();
    eventually_ok(
        "the controller back and the cluster Ready",
        POD_WAIT,
        || async {
            let now = pod_uids(client, ns, CLUSTER).await;
            let back = now
                .get(&controller)
                .is_some_and(|uid| Some(uid) != before.get(&controller));
            if back && all_ready(client, ns).await {
                Ok(())
            } else {
                Err(now)
            }
        },
    )
    .await;
    ready(client, ns, CLUSTER).await;
    eventually("producing after the controller restart", || {
        plain.produce("renewal-after", 5, "after")
    })
    .await;
    Replacement {
        seconds: took.as_secs_f64(),
        report,
    }
}

/// The expiry each pod of `pods` would record as that of the certificate it started with:
/// the expiry of the certificate its Secret holds now, as a pod annotation.
async fn stored_certificate_expiries(
    client: &Client,
    ns: &str,
    pods: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut expiries = BTreeMap::new();
    for pod in pods.keys() {
        let pem = secret_value(client, ns, pod, &format!("{pod}.crt")).await;
        let certificate = ParsedCertificate::from_pem(&pem).unwrap();
        expiries.insert(
            pod.clone(),
            startup_certificate_not_after(certificate.not_after()),
        );
    }
    expiries
}

/// The expiry of the certificate each pod of the cluster started with, as the operator
/// recorded it when the pod first reloaded (pods without it left out).
async fn startup_certificate_expiries(client: &Client, ns: &str) -> BTreeMap<String, String> {
    Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&format!("strimzi.io/cluster={CLUSTER}")))
        .await
        .unwrap()
        .into_iter()
        .filter_map(|pod| {
            let date = pod
                .annotations()
                .get(STARTUP_CERTIFICATE_NOT_AFTER)?
                .clone();
            Some((pod.name_any(), date))
        })
        .collect()
}

/// Checks that every TLS listener of every pod of the cluster (the controllers' 9090, the
/// brokers' 9091, 9093 and 9094) serves the certificate of the pod's Secret.
async fn assert_served_certificates_are_stored(client: &Client, ns: &str) {
    for pod in Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&format!("strimzi.io/cluster={CLUSTER}")))
        .await
        .unwrap()
    {
        let ports: &[u16] = if pod.name_any().contains("-controller-") {
            &[9090]
        } else {
            &[9091, 9093, 9094]
        };
        for port in ports {
            let served = served_certificate(client, ns, CLUSTER, &pod, *port).await;
            let name = pod.name_any();
            let stored = stored_certificate(client, ns, &name, &format!("{name}.crt")).await;
            assert!(
                served == stored,
                "{}:{port} serves another certificate than its Secret's",
                pod.name_any()
            );
        }
    }
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
    let tls = operator_tls(client, ns, CLUSTER).await;
    // By IP address: the test's thread in the nodes' network has the machine's resolver.
    let ip = pod.status.as_ref().unwrap().pod_ip.clone().unwrap();
    let server_name = format!("{}.{CLUSTER}-kafka-brokers.{ns}.svc", pod.name_any());
    in_node_network(|| {
        agent::broker_state(
            &tls,
            &ip,
            &server_name,
            HostResolution::IpAddressesOnly,
            Duration::from_secs(10),
        )
    })
    .unwrap_or_else(|error| panic!("{}: {error}", pod.name_any()))
}
