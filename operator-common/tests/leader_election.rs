//! Leader election through a Lease on the real API server: of two replicas exactly one
//! reconciles, a killed leader is replaced within the lease duration, and a leader that loses
//! the Lease stops writing at once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::Api;
use kube::api::PostParams;
use serde_json::json;
use strimzi_tests::environment::TestEnv;
use support::{Running, condition, create, eventually, start, topic};

const LEASE: &str = "test-operator-lease";
const LEASE_DURATION: Duration = Duration::from_millis(3000);
const RETRY_PERIOD: Duration = Duration::from_millis(500);
use support::WAIT;

fn election_config(
    namespace: &str,
    identity: &str,
) -> strimzi_operator_common::config::OperatorConfig {
    support::config(
        namespace,
        &[
            ("STRIMZI_LEADER_ELECTION_ENABLED", "true"),
            ("STRIMZI_LEADER_ELECTION_LEASE_NAME", LEASE),
            ("STRIMZI_LEADER_ELECTION_LEASE_NAMESPACE", namespace),
            ("STRIMZI_LEADER_ELECTION_IDENTITY", identity),
            ("STRIMZI_LEADER_ELECTION_LEASE_DURATION_MS", "3000"),
            ("STRIMZI_LEADER_ELECTION_RENEW_DEADLINE_MS", "2000"),
            ("STRIMZI_LEADER_ELECTION_RETRY_PERIOD_MS", "500"),
        ],
    )
}

/// A replica in a Tokio runtime of its own, so that it can be killed without any cleanup.
struct Replica {
    runtime: tokio::runtime::Runtime,
    running: Running,
}

async fn replica(namespace: &str, identity: &str) -> Replica {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let config = election_config(namespace, identity);
    let running = runtime
        .spawn(async move {
            let client = TestEnv::shared().client().await;
            start(client, config, Duration::ZERO)
        })
        .await
        .unwrap();
    Replica { runtime, running }
}

fn reconciliations(running: &Running) -> usize {
    running.journal.lock().unwrap().started.len()
}

async fn holder(lease: &Api<Lease>) -> Option<String> {
    lease.get_opt(LEASE).await.unwrap()?.spec?.holder_identity
}

#[tokio::test]
async fn one_of_two_replicas_reconciles_and_a_killed_leader_is_replaced() {
    let (client, namespace) = support::namespace("leader-handover").await;
    let a = replica(&namespace, "replica-a").await;
    let b = replica(&namespace, "replica-b").await;
    for index in 0..3 {
        create(
            &client,
            &namespace,
            topic(&format!("led-{index}"), json!({})),
        )
        .await;
    }
    eventually(WAIT, "every topic Ready", || async {
        let mut ready = 0;
        for index in 0..3 {
            ready += usize::from(
                condition(&client, &namespace, &format!("led-{index}"), "Ready")
                    .await
                    .is_some(),
            );
        }
        ready == 3
    })
    .await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), &namespace);
    let (leader, standby, leader_name) = match holder(&leases).await.as_deref() {
        Some("replica-a") => (a, b, "replica-a"),
        Some("replica-b") => (b, a, "replica-b"),
        other => panic!("unexpected holder {other:?}"),
    };
    assert!(reconciliations(&leader.running) >= 3);
    assert_eq!(
        reconciliations(&standby.running),
        0,
        "the standby reconciled"
    );
    assert!(leader.running.runtime.leadership().is_leading());
    assert!(!standby.running.runtime.leadership().is_leading());
    assert!(
        standby.running.runtime.readiness().is_ready(),
        "a standby is ready too"
    );

    // Killed without releasing the Lease: the standby must wait for it to expire.
    let killed = Instant::now();
    leader.runtime.shutdown_background();
    let last_renewal = leases
        .get(LEASE)
        .await
        .unwrap()
        .spec
        .unwrap()
        .renew_time
        .unwrap()
        .0;
    eventually(WAIT, "the standby reconciling", || async {
        reconciliations(&standby.running) >= 3
    })
    .await;
    let first = standby.running.journal.lock().unwrap().started[0].1;
    println!("handover {:?} after the kill", first - killed);
    // Both clocks are this machine's: the Lease times are written by the replicas.
    let first_wall = jiff::Timestamp::now() - first.elapsed();
    let since_renewal = Duration::try_from(first_wall - last_renewal).unwrap();
    println!("standby started {since_renewal:?} after the leader's last renewal");
    assert!(
        since_renewal >= LEASE_DURATION,
        "the standby started before the lease expired: {since_renewal:?}"
    );
    // Seen within a retry period of the renewal, taken within a retry period of expiry;
    // a second more for the API server and the reconciliation.
    assert!(
        since_renewal <= LEASE_DURATION + 2 * RETRY_PERIOD + Duration::from_secs(1),
        "handover took {since_renewal:?}"
    );
    assert_ne!(holder(&leases).await.as_deref(), Some(leader_name));
    standby.running.stop().await;
    // A replica that stops gracefully releases the Lease.
    assert_eq!(holder(&leases).await, None);
    standby.runtime.shutdown_background();
}

#[tokio::test]
async fn a_leader_that_loses_the_lease_stops_writing() {
    let (client, namespace) = support::namespace("leader-lost").await;
    let running = start(
        client.clone(),
        election_config(&namespace, "replica-a"),
        Duration::from_secs(2),
    );
    create(&client, &namespace, topic("guarded", json!({}))).await;
    support::wait_for_condition(&client, &namespace, "guarded", "Ready").await;

    // A change whose reconciliation is in flight when the Lease is taken away.
    support::patch(
        &client,
        &namespace,
        "guarded",
        json!({"spec": {"partitions": 7}}),
    )
    .await;
    support::wait_in_flight(&running, "guarded").await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), &namespace);
    loop {
        let mut lease = leases.get(LEASE).await.unwrap();
        let spec = lease.spec.as_mut().unwrap();
        spec.holder_identity = Some("intruder".to_owned());
        spec.lease_duration_seconds = Some(3600);
        spec.renew_time = Some(MicroTime(jiff::Timestamp::now()));
        if leases
            .replace(LEASE, &PostParams::default(), &lease)
            .await
            .is_ok()
        {
            break;
        }
    }
    let stolen = Instant::now();
    let leadership = running.runtime.leadership().clone();
    eventually(WAIT, "leadership lost", || async {
        !leadership.is_leading()
    })
    .await;
    println!("stopped leading after {:?}", stolen.elapsed());
    let metrics = running.runtime.metrics();
    let writes = (
        metrics.writes("ConfigMap", "apply"),
        metrics.writes("KafkaTopic", "status"),
    );
    let started = reconciliations(&running);

    support::patch(
        &client,
        &namespace,
        "guarded",
        json!({"spec": {"partitions": 8}}),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        (
            metrics.writes("ConfigMap", "apply"),
            metrics.writes("KafkaTopic", "status")
        ),
        writes,
        "wrote after losing the lease"
    );
    assert_eq!(
        reconciliations(&running),
        started,
        "reconciled after losing the lease"
    );
    let status = support::status(&client, &namespace, "guarded").await;
    assert_eq!(
        status["observedGeneration"], 1,
        "the abandoned reconciliation wrote nothing"
    );
    running.stop().await;
}
