//! The runtime's client counts its reads of a real API server: gets and lists by resource,
//! a cache's initial list included, and neither watches nor writes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchParams};
use serde_json::json;
use strimzi_operator_common::runtime::OperatorRuntime;

#[tokio::test]
async fn gets_and_lists_are_counted_by_resource_and_watches_and_writes_are_not() {
    let (client, namespace) = support::namespace("reads").await;
    let runtime = OperatorRuntime::new(
        client.clone(),
        support::config(&namespace, &[]),
        "test-operator",
    )
    .unwrap();
    let metrics = runtime.metrics();
    let reads = || {
        (
            metrics.reads("configmaps", "get"),
            metrics.reads("configmaps", "list"),
        )
    };
    // Made with the test's own client: not counted.
    let theirs: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let document = serde_json::from_value(json!({"metadata": {"name": "counted"}})).unwrap();
    theirs
        .create(&PostParams::default(), &document)
        .await
        .unwrap();
    theirs.get("counted").await.unwrap();
    assert_eq!(reads(), (0, 0));

    let ours: Api<ConfigMap> = runtime.api(Some(&namespace));
    ours.get("counted").await.unwrap();
    assert_eq!(reads(), (1, 0));
    // A read that finds nothing is a read all the same.
    assert!(ours.get_opt("missing").await.unwrap().is_none());
    assert_eq!(reads(), (2, 0));
    ours.list(&ListParams::default()).await.unwrap();
    assert_eq!(reads(), (2, 1));

    // A watch is a stream, not a read.
    let mut events = ours
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap()
        .boxed();
    assert!(events.next().await.is_some(), "the watch's first event");
    drop(events);
    // Writes are counted elsewhere, by whoever writes.
    ours.patch(
        "counted",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"key": "value"}})),
    )
    .await
    .unwrap();
    assert_eq!(reads(), (2, 1));

    let text = metrics.encode().unwrap();
    for line in [
        "strimzi_operator_api_reads_total{kind=\"configmaps\",verb=\"get\"} 2",
        "strimzi_operator_api_reads_total{kind=\"configmaps\",verb=\"list\"} 1",
    ] {
        assert!(text.contains(line), "missing {line} in\n{text}");
    }
    runtime.shutdown_token().cancel();
}

#[tokio::test]
async fn the_initial_list_of_each_cache_is_a_counted_read() {
    let (client, namespace) = support::namespace("cache-reads").await;
    let running = support::start_default(&client, &namespace, Duration::ZERO);
    support::create(&client, &namespace, support::topic("listed", json!({}))).await;
    support::wait_for_condition(&client, &namespace, "listed", "Ready").await;
    let metrics = running.runtime.metrics();
    // The controller's cache of KafkaTopics and its metadata-only watch of ConfigMaps each
    // list once before watching.
    assert!(metrics.reads("kafkatopics", "list") >= 1);
    assert!(metrics.reads("configmaps", "list") >= 1);
    running.stop().await;
}
