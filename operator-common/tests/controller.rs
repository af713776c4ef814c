//! The shared controller runtime against the real API server: reconciliation on create,
//! update and child deletion, periodic requeue, one reconciliation per resource at a time,
//! backoff after failures, broken resources, pause, and status writes only on real change.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Event};
use kube::api::{DeleteParams, ListParams};
use kube::{Api, ResourceExt};
use serde_json::json;
use support::{TestTopic, condition, create, eventually, start, topic};

use support::WAIT;

#[tokio::test]
async fn reconciles_on_create_update_and_child_deletion() {
    let (client, namespace) = support::namespace("controller-crud").await;
    let running = support::start_default(&client, &namespace, Duration::ZERO);
    create(
        &client,
        &namespace,
        topic("orders", json!({"partitions": 3})),
    )
    .await;

    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    eventually(WAIT, "the child ConfigMap", || async {
        maps.get_opt("orders-topic").await.unwrap().is_some()
    })
    .await;
    let child = maps.get("orders-topic").await.unwrap();
    assert_eq!(child.data.unwrap()["partitions"], "3");
    let labels = child.metadata.labels.unwrap();
    assert_eq!(labels["strimzi.io/cluster"], "my-cluster");
    assert_eq!(labels["strimzi.io/kind"], "KafkaTopic");
    assert_eq!(labels["app.kubernetes.io/managed-by"], "test-operator");
    assert_eq!(labels["team"], "a", "user labels propagate");
    let owner = &child.metadata.owner_references.unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("KafkaTopic", "orders")
    );
    eventually(WAIT, "Ready with observedGeneration 1", || async {
        let status = support::status(&client, &namespace, "orders").await;
        status["observedGeneration"] == 1 && status["topicName"] == "orders"
    })
    .await;
    assert!(running.runtime.readiness().is_ready(), "caches synced");
    let ready = condition(&client, &namespace, "orders", "Ready")
        .await
        .unwrap();
    assert_eq!(ready["status"], "True");

    support::patch(
        &client,
        &namespace,
        "orders",
        json!({"spec": {"partitions": 5}}),
    )
    .await;
    eventually(WAIT, "the update reconciled", || async {
        let status = support::status(&client, &namespace, "orders").await;
        let data = maps.get("orders-topic").await.unwrap().data.unwrap();
        status["observedGeneration"] == 2 && data["partitions"] == "5"
    })
    .await;

    // Deleting an owned object triggers its owner, which puts it back.
    let uid = maps.get("orders-topic").await.unwrap().uid();
    maps.delete("orders-topic", &DeleteParams::default())
        .await
        .unwrap();
    eventually(WAIT, "the child recreated", || async {
        let child = maps.get_opt("orders-topic").await.unwrap();
        child.is_some_and(|child| child.uid() != uid)
    })
    .await;

    // Deleting the topic runs the cleanup, which deletes the child, then lets it go.
    let topics: Api<TestTopic> = Api::namespaced(client.clone(), &namespace);
    let finalizers = topics.get("orders").await.unwrap().finalizers().to_vec();
    assert_eq!(finalizers, [support::FINALIZER]);
    topics
        .delete("orders", &DeleteParams::default())
        .await
        .unwrap();
    eventually(WAIT, "the topic and its child gone", || async {
        topics.get_opt("orders").await.unwrap().is_none()
            && maps.get_opt("orders-topic").await.unwrap().is_none()
    })
    .await;
    // At least once: a stale cached copy may run an idempotent cleanup again.
    let cleaned = running.journal.lock().unwrap().cleaned.clone();
    assert!(
        !cleaned.is_empty() && cleaned.iter().all(|name| name == "orders"),
        "{cleaned:?}"
    );
    running.stop().await;
}

#[tokio::test]
async fn requeues_every_full_reconciliation_interval() {
    let (client, namespace) = support::namespace("controller-requeue").await;
    let config = support::config(
        &namespace,
        &[("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "500")],
    );
    let running = start(client.clone(), config, Duration::ZERO);
    create(&client, &namespace, topic("periodic", json!({}))).await;
    eventually(WAIT, "five reconciliations without changes", || async {
        support::count(&running.journal, "periodic") >= 5
    })
    .await;
    // Counted as periodical (strimzi_reconciliations_periodical_total), but for the first,
    // which the creation started.
    let metrics = running
        .runtime
        .metrics()
        .reconciliations("KafkaTopic", &namespace, "");
    let (periodical, started) = (metrics.periodical_count(), metrics.started_count());
    assert!(
        periodical >= 3 && periodical < started,
        "{periodical} of {started} reconciliations counted as periodical"
    );
    running.stop().await;
}

#[tokio::test]
async fn one_reconciliation_per_resource_at_a_time_and_resources_in_parallel() {
    let (client, namespace) = support::namespace("controller-serial").await;
    let running = support::start_default(&client, &namespace, Duration::from_millis(300));
    for index in 0..4 {
        create(
            &client,
            &namespace,
            topic(&format!("busy-{index}"), json!({})),
        )
        .await;
    }
    for round in 0..10 {
        support::patch(
            &client,
            &namespace,
            "busy-0",
            json!({"spec": {"partitions": round + 1}}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eventually(WAIT, "the last change reconciled", || async {
        support::status(&client, &namespace, "busy-0").await["observedGeneration"] == 11
    })
    .await;
    let (overlaps, most_in_flight, busy) = {
        let journal = running.journal.lock().unwrap();
        let busy = journal
            .started
            .iter()
            .filter(|(name, _)| name == "busy-0")
            .count();
        (journal.overlaps, journal.most_in_flight, busy)
    };
    assert_eq!(overlaps, 0, "two reconciliations of one topic ran at once");
    assert!(
        most_in_flight > 1,
        "different topics are reconciled in parallel"
    );
    assert!(
        busy < 11,
        "changes during a reconciliation are coalesced, got {busy}"
    );
    running.stop().await;
}

#[tokio::test]
async fn failures_back_off_and_are_reported() {
    let (client, namespace) = support::namespace("controller-backoff").await;
    let running = support::start_default(&client, &namespace, Duration::ZERO);
    create(
        &client,
        &namespace,
        topic("failing", json!({"config": {support::FAIL: "true"}})),
    )
    .await;
    eventually(Duration::from_secs(40), "four attempts", || async {
        support::count(&running.journal, "failing") >= 4
    })
    .await;
    let starts: Vec<_> = running
        .journal
        .lock()
        .unwrap()
        .started
        .iter()
        .filter(|(name, _)| name == "failing")
        .map(|(_, at)| *at)
        .collect();
    // Retry n waits between half and all of 2^(n-1) seconds.
    for (retry, pair) in starts.windows(2).take(3).enumerate() {
        let waited = pair[1] - pair[0];
        let ceiling = Duration::from_secs(1 << retry);
        assert!(waited >= ceiling / 2, "retry {retry} after {waited:?}");
    }
    let not_ready = condition(&client, &namespace, "failing", "NotReady")
        .await
        .unwrap();
    assert_eq!(not_ready["reason"], "TestFailure");
    assert_eq!(not_ready["message"], "asked to fail by test.fail");
    let events: Api<Event> = Api::namespaced(client.clone(), &namespace);
    eventually(WAIT, "a Warning Event", || async {
        events
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .iter()
            .any(|event| {
                event.reason.as_deref() == Some("TestFailure")
                    && event.type_.as_deref() == Some("Warning")
            })
    })
    .await;
    let metrics = running.runtime.metrics().encode().unwrap();
    assert!(
        metrics.contains(&format!(
            "strimzi_reconciliations_failed_total{{kind=\"KafkaTopic\",namespace=\"{namespace}\",selector=\"\"}}"
        )),
        "{metrics}"
    );
    // A failure the resource's change need not cure is retried, and counted as such.
    let retried = running
        .runtime
        .metrics()
        .reconciliations("KafkaTopic", &namespace, "")
        .retried_count();
    assert!(retried >= 3, "{retried} retries counted");
    running.stop().await;
}

#[tokio::test]
async fn a_broken_resource_is_reported_and_does_not_stop_others() {
    let (client, namespace) = support::namespace("controller-broken").await;
    let running = support::start_default(&client, &namespace, Duration::ZERO);
    create(
        &client,
        &namespace,
        topic("broken", json!({"partitions": 70000})),
    )
    .await;
    create(&client, &namespace, topic("fine", json!({"partitions": 1}))).await;
    support::wait_for_condition(&client, &namespace, "broken", "NotReady").await;
    let not_ready = condition(&client, &namespace, "broken", "NotReady")
        .await
        .unwrap();
    assert_eq!(not_ready["reason"], "InvalidResource");
    let message = not_ready["message"].as_str().unwrap();
    assert!(message.contains("spec.partitions"), "{message}");
    support::wait_for_condition(&client, &namespace, "fine", "Ready").await;
    // Once fixed, the broken topic is reconciled like any other.
    support::patch(
        &client,
        &namespace,
        "broken",
        json!({"spec": {"partitions": 2}}),
    )
    .await;
    support::wait_for_condition(&client, &namespace, "broken", "Ready").await;
    running.stop().await;
}

#[tokio::test]
async fn paused_resources_are_left_alone() {
    let (client, namespace) = support::namespace("controller-pause").await;
    let running = support::start_default(&client, &namespace, Duration::ZERO);
    let mut document = topic("paused", json!({}));
    document["metadata"]["annotations"] = json!({"strimzi.io/pause-reconciliation": "true"});
    create(&client, &namespace, document).await;
    support::wait_for_condition(&client, &namespace, "paused", "ReconciliationPaused").await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    assert!(
        maps.get_opt("paused-topic").await.unwrap().is_none(),
        "nothing changed while paused"
    );
    assert_eq!(support::count(&running.journal, "paused"), 0);

    let resume = json!({"metadata": {"annotations": {"strimzi.io/pause-reconciliation": null}}});
    support::patch(&client, &namespace, "paused", resume).await;
    eventually(WAIT, "Ready once resumed", || async {
        condition(&client, &namespace, "paused", "Ready")
            .await
            .is_some()
            && condition(&client, &namespace, "paused", "ReconciliationPaused")
                .await
                .is_none()
    })
    .await;
    assert!(maps.get_opt("paused-topic").await.unwrap().is_some());
    running.stop().await;
}

#[tokio::test]
async fn writes_only_what_changed() {
    let (client, namespace) = support::namespace("controller-writes").await;
    let config = support::config(
        &namespace,
        &[("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "300")],
    );
    let running = start(client.clone(), config, Duration::ZERO);
    let metrics = running.runtime.metrics().clone();
    create(
        &client,
        &namespace,
        topic("quiet", json!({"config": {"test.warn": "yes"}})),
    )
    .await;
    support::wait_for_condition(&client, &namespace, "quiet", "Ready").await;
    let warning = condition(&client, &namespace, "quiet", "Warning")
        .await
        .unwrap();
    assert_eq!(warning["reason"], "TestWarning");
    let transition = condition(&client, &namespace, "quiet", "Ready")
        .await
        .unwrap()["lastTransitionTime"]
        .clone();
    assert_eq!(metrics.writes("KafkaTopic", "status"), 1);
    assert_eq!(metrics.writes("ConfigMap", "apply"), 1);

    let before = support::count(&running.journal, "quiet");
    eventually(WAIT, "three periodic reconciliations", || async {
        support::count(&running.journal, "quiet") >= before + 3
    })
    .await;
    assert_eq!(
        metrics.writes("KafkaTopic", "status"),
        1,
        "no status write without a change"
    );
    assert_eq!(
        metrics.writes("ConfigMap", "apply"),
        1,
        "no apply when the child matches"
    );

    support::patch(
        &client,
        &namespace,
        "quiet",
        json!({"spec": {"partitions": 4}}),
    )
    .await;
    eventually(WAIT, "the change reconciled", || async {
        support::status(&client, &namespace, "quiet").await["observedGeneration"] == 2
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        metrics.writes("KafkaTopic", "status"),
        2,
        "one status write per change"
    );
    assert_eq!(metrics.writes("ConfigMap", "apply"), 2);
    let ready = condition(&client, &namespace, "quiet", "Ready")
        .await
        .unwrap();
    assert_eq!(
        ready["lastTransitionTime"], transition,
        "an unchanged condition keeps its time"
    );
    running.stop().await;
}

#[tokio::test]
async fn shutdown_lets_in_flight_reconciliations_finish_then_stops() {
    let (client, namespace) = support::namespace("controller-shutdown").await;
    let running = support::start_default(&client, &namespace, Duration::from_secs(1));
    create(&client, &namespace, topic("draining", json!({}))).await;
    support::wait_in_flight(&running, "draining").await;
    let journal = running.journal.clone();
    running.stop().await;
    assert!(
        condition(&client, &namespace, "draining", "Ready")
            .await
            .is_some(),
        "the in-flight reconciliation finished"
    );
    create(&client, &namespace, topic("after", json!({}))).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        support::count(&journal, "after"),
        0,
        "no work after shutdown"
    );
}

#[tokio::test]
async fn shutdown_abandons_reconciliations_that_outlast_the_grace() {
    let (client, namespace) = support::namespace("controller-abandon").await;
    let mut config = support::config(&namespace, &[]);
    config.shutdown_grace = Duration::from_millis(500);
    let running = start(client.clone(), config, Duration::from_secs(20));
    create(&client, &namespace, topic("slow", json!({}))).await;
    support::wait_in_flight(&running, "slow").await;
    let asked = std::time::Instant::now();
    running.stop().await;
    let stopped = asked.elapsed();
    assert!(
        stopped < Duration::from_secs(5),
        "stopped after {stopped:?}"
    );
    assert!(
        condition(&client, &namespace, "slow", "Ready")
            .await
            .is_none()
    );
}

#[tokio::test]
async fn watches_every_configured_namespace_with_the_selector() {
    let (client, first) = support::namespace("controller-selector").await;
    let (_, second) = support::namespace("controller-selector").await;
    let config = support::config(
        &format!("{first},{second}"),
        &[("STRIMZI_CUSTOM_RESOURCE_SELECTOR", "team=a")],
    );
    let running = start(client.clone(), config, Duration::ZERO);
    for namespace in [&first, &second] {
        create(&client, namespace, topic("selected", json!({}))).await;
        let mut other_team = topic("ignored", json!({}));
        other_team["metadata"]["labels"]["team"] = json!("b");
        create(&client, namespace, other_team).await;
    }
    for namespace in [&first, &second] {
        support::wait_for_condition(&client, namespace, "selected", "Ready").await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(support::count(&running.journal, "ignored"), 0);
    assert!(support::status(&client, &first, "ignored").await.is_null());
    running.stop().await;
}
