//! KRaft controller quorum scaling on real nodes (beyond Strimzi), under a steady producer
//! that loses no acknowledged record: a static one-controller cluster refuses a bigger
//! controller pool (`ControllerScalingRefused`, no new pod); annotated
//! `strimzi.io/kraft-quorum: dynamic`, its quorum moves to the dynamic form (`kraft.version`
//! 1, as Kafka's own feature tool reads it) without restarting a node, and the controllers
//! grow to three, each new one added as a voter once it caught up, the operator killed and
//! started again after the first addition; a controller's disk replaced, its old metadata
//! directory leaves the voters and its new one joins; then, with a remaining voter frozen, a
//! scale-down
//! to two is refused (`QuorumWouldBeLost`) and the controller stays; let go, the voter is
//! removed first and its pod deleted after.

use std::collections::BTreeSet;
use std::time::Duration;

use super::env;
use crate::support::real_nodes::{
    POD_WAIT, Startup, all_pods_ready, binaries, bootstrap, delete_when_done, eventually,
    persistent_cluster, scale_pool, signal_jvm_of, stop_and_check_nothing_lost,
};
use crate::support::rolls::{event_notes, pod_uids};
use crate::support::{merge_patch, not_ready_with, ready};
use nix::sys::signal::Signal;
use serde_json::json;
use strimzi_api::kafka::Kafka;
use strimzi_tests::clients::{ClusterClient, KafkaTools, Redelivery};
use strimzi_tests::resources::eventually_ok;

const CLUSTER: &str = "quorum";

/// The node IDs of the running pods of pool `pool`.
async fn pool_ids(client: &kube::Client, ns: &str, pool: &str) -> BTreeSet<i32> {
    crate::support::names::<k8s_openapi::api::core::v1::Pod>(
        client,
        ns,
        &format!("strimzi.io/cluster={CLUSTER},strimzi.io/pool-name={pool}"),
    )
    .await
    .iter()
    .map(|name| name.rsplit('-').next().unwrap().parse().unwrap())
    .collect()
}

/// Waits until Kafka's quorum tool reports `expected` as the voters.
async fn voters_become(tools: &KafkaTools, expected: &BTreeSet<i32>) {
    eventually(&format!("the voters to become {expected:?}"), || {
        let (_, voters) = tools.quorum_status()?;
        (voters == *expected)
            .then_some(())
            .ok_or(format!("voters {voters:?}"))
    })
    .await;
}

/// Waits until a condition of the Kafka (of any type) has `reason`, and returns its message.
async fn condition_with_reason(client: &kube::Client, ns: &str, reason: &str) -> String {
    let kafkas: kube::Api<Kafka> = kube::Api::namespaced(client.clone(), ns);
    crate::support::wait_for(
        &kafkas,
        CLUSTER,
        &format!("a condition {reason}"),
        |kafka| {
            crate::support::condition_with_reason(kafka?, reason)
                .map(|condition| condition.message.clone().unwrap_or_default())
        },
    )
    .await
}

#[tokio::test]
async fn a_static_quorum_moves_to_dynamic_and_its_controllers_scale_up_and_down_safely() {
    let _room = super::room_for(super::Weight::Heavy).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("quorum").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let network = env.network().expect("a real-node environment");
    let mut operator = Some(super::operator_on(&ns));
    for document in persistent_cluster(CLUSTER, (1, 1), &json!({}), false, Startup::Fast) {
        crate::support::apply(&client, &ns, &document).await;
    }
    let kafka = ready(&client, &ns, CLUSTER).await;
    all_pods_ready(&client, &ns, CLUSTER, 2).await;
    let first = pool_ids(&client, &ns, "controller").await;
    assert_eq!(first.len(), 1, "{first:?}");
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(&kafka, "plain"),
    );
    let tools = KafkaTools::new(network, &bootstrap(&kafka, "plain")).unwrap();
    eventually("producing the first record", || {
        plain.produce("steady", 1, "first")
    })
    .await;
    assert_eq!(
        eventually("reading kraft.version", || tools
            .finalized_feature("kraft.version"))
        .await,
        0,
        "a new cluster's quorum is static, as Strimzi's"
    );
    voters_become(&tools, &first).await;
    let stop_file = env.log_dir().join(format!("{ns}-quorum-stop"));
    let producer = plain.produce_steadily("steady", 20, &stop_file).unwrap();
    let before = pod_uids(&client, &ns, CLUSTER).await;

    // A static quorum's controllers do not change: refused, no pod made.
    scale_pool(&client, &ns, "controller", 3).await;
    let refused = not_ready_with(&client, &ns, CLUSTER, "ControllerScalingRefused").await;
    assert!(
        refused.contains("strimzi.io/kraft-quorum=dynamic"),
        "{refused}"
    );
    assert_eq!(pool_ids(&client, &ns, "controller").await, first);

    // Asked for, the quorum moves to the dynamic form, restarting nothing, and grows to
    // three voters one at a time; the operator is killed after the first addition and a
    // new one finishes the change.
    merge_patch::<Kafka>(
        &client,
        &ns,
        CLUSTER,
        json!({"metadata": {"annotations": {"strimzi.io/kraft-quorum": "dynamic"}}}),
    )
    .await;
    eventually("kraft.version 1", || {
        let level = tools.finalized_feature("kraft.version")?;
        (level == 1).then_some(()).ok_or(format!("level {level}"))
    })
    .await;
    eventually("a first controller added", || {
        let (_, voters) = tools.quorum_status()?;
        (voters.len() >= 2)
            .then_some(())
            .ok_or(format!("voters {voters:?}"))
    })
    .await;
    drop(operator.take());
    tokio::time::sleep(Duration::from_secs(2)).await;
    operator = Some(super::operator_on(&ns));
    let three = pool_ids(&client, &ns, "controller").await;
    assert_eq!(three.len(), 3, "{three:?}");
    voters_become(&tools, &three).await;
    ready(&client, &ns, CLUSTER).await;
    all_pods_ready(&client, &ns, CLUSTER, 4).await;
    let after = pod_uids(&client, &ns, CLUSTER).await;
    for (pod, uid) in &before {
        assert_eq!(
            after.get(pod),
            Some(uid),
            "{pod} restarted in the move to a dynamic quorum or the scale-up"
        );
    }
    assert_eq!(
        event_notes(&client, &ns, "KRaftQuorumMovedToDynamic")
            .await
            .len(),
        1
    );
    assert_eq!(event_notes(&client, &ns, "ControllerAdded").await.len(), 2);

    // A controller's disk replaced (its claim and pod deleted): it comes back formatted
    // anew, under a new metadata directory, and observes the quorum while its old
    // directory stays a voter that no longer fetches; once it caught up, the old directory
    // is removed from the voters and the new one added, restarting nothing else.
    let (leader, _) = tools.quorum_status().unwrap();
    let replaced = *three.iter().find(|&&id| id != leader).unwrap();
    let replaced_pod = format!("{CLUSTER}-controller-{replaced}");
    let claims: kube::Api<k8s_openapi::api::core::v1::PersistentVolumeClaim> =
        kube::Api::namespaced(client.clone(), &ns);
    let claim = crate::support::names::<k8s_openapi::api::core::v1::PersistentVolumeClaim>(
        &client,
        &ns,
        &format!("strimzi.io/cluster={CLUSTER}"),
    )
    .await
    .into_iter()
    .find(|name| name.ends_with(&format!("-{replaced_pod}")))
    .expect("the replaced controller's claim");
    claims.delete(&claim, &Default::default()).await.unwrap();
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(client.clone(), &ns);
    pods.delete(&replaced_pod, &Default::default())
        .await
        .unwrap();
    eventually_ok(
        "the old directory removed and the new one added",
        POD_WAIT,
        || async {
            let added = event_notes(&client, &ns, "ControllerAdded").await.len();
            let removed = event_notes(&client, &ns, "ControllerRemoved").await;
            if added == 3 && removed.len() == 1 {
                Ok(removed)
            } else {
                Err(format!("{added} additions, removals {removed:?}"))
            }
        },
    )
    .await
    .iter()
    .for_each(|note| assert!(note.contains("replaced disk"), "{note}"));
    voters_become(&tools, &three).await;
    ready(&client, &ns, CLUSTER).await;
    all_pods_ready(&client, &ns, CLUSTER, 4).await;
    let after_replacement = pod_uids(&client, &ns, CLUSTER).await;
    for (pod, uid) in &after {
        if *pod != replaced_pod {
            assert_eq!(
                after_replacement.get(pod),
                Some(uid),
                "{pod} restarted when another controller's disk was replaced"
            );
        }
    }

    // A scale-down to two would remove the highest controller; with the other one left
    // that does not lead frozen, only one voter would be caught up: refused (a Warning
    // while the frozen pod is not ready), and the controller stays.
    let removed = *three.iter().next_back().unwrap();
    let (leader, _) = tools.quorum_status().unwrap();
    let frozen = *three
        .iter()
        .find(|&&id| id != removed && id != leader)
        .unwrap();
    let frozen_pod = format!("{CLUSTER}-controller-{frozen}");
    signal_jvm_of(&frozen_pod, Signal::SIGSTOP);
    tokio::time::sleep(Duration::from_secs(5)).await;
    scale_pool(&client, &ns, "controller", 2).await;
    let refused = condition_with_reason(&client, &ns, "QuorumWouldBeLost").await;
    assert!(
        refused.contains(&format!("controller {removed}")),
        "{refused}"
    );
    assert!(
        pool_ids(&client, &ns, "controller")
            .await
            .contains(&removed)
    );
    assert_eq!(tools.quorum_status().unwrap().1, three);
    signal_jvm_of(&frozen_pod, Signal::SIGCONT);

    // Let go: the voter is removed, then its node.
    let two: BTreeSet<i32> = three.iter().copied().filter(|&id| id != removed).collect();
    voters_become(&tools, &two).await;
    ready(&client, &ns, CLUSTER).await;
    eventually_ok("the removed controller's pod deleted", POD_WAIT, || async {
        let ids = pool_ids(&client, &ns, "controller").await;
        (ids == two).then_some(()).ok_or(ids)
    })
    .await;
    assert_eq!(
        event_notes(&client, &ns, "ControllerRemoved").await.len(),
        2
    );
    let report = stop_and_check_nothing_lost(producer, &plain, "steady", Redelivery::Refused).await;
    println!(
        "figure: quorum 1 -> 3 -> 2 controllers under a steady producer: {} records acknowledged, none lost, max latency {:.0} ms",
        report.acked.len(),
        report.max_ms
    );
    drop(operator);
}
