//! Shared caches against the real API server: filled by one list+watch, ready once listed,
//! and without `managedFields`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::watcher;
use strimzi_operator_common::cache::{CacheScope, Caches};
use strimzi_operator_common::http::Readiness;

#[tokio::test]
async fn caches_drop_managed_fields_and_follow_changes() {
    let (client, namespace) = support::namespace("cache").await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let map = |name: &str| ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(BTreeMap::from([("test".to_owned(), "cache".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("key".to_owned(), "value".to_owned())])),
        ..ConfigMap::default()
    };
    maps.create(&PostParams::default(), &map("before"))
        .await
        .unwrap();
    let stored = maps.get("before").await.unwrap();
    assert!(
        stored.metadata.managed_fields.is_some(),
        "the server records managed fields"
    );

    let caches = Caches::default();
    let scope = CacheScope {
        namespace: Some(namespace.clone()),
        selector: Some("test=cache".to_owned()),
    };
    let api = maps.clone();
    let config = scope.watcher_config();
    let subscription = caches
        .subscribe::<ConfigMap>(&scope, move || watcher(api, config).boxed())
        .unwrap();
    let (store, mut changes) = (subscription.store, subscription.events);
    let readiness = Readiness::default();
    let tasks: Vec<_> = caches
        .start(&readiness)
        .into_iter()
        .map(tokio::spawn)
        .collect();
    support::eventually(support::WAIT, "the cache synced", || async {
        readiness.is_ready()
    })
    .await;
    maps.create(&PostParams::default(), &map("after"))
        .await
        .unwrap();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let change = tokio::time::timeout(Duration::from_secs(10), changes.next())
            .await
            .unwrap()
            .unwrap();
        seen.push(change.metadata.name.clone().unwrap());
    }
    assert_eq!(seen, ["before", "after"]);
    let cached = store.state();
    assert_eq!(cached.len(), 2);
    assert!(
        cached
            .iter()
            .all(|map| map.metadata.managed_fields.is_none())
    );
    for task in tasks {
        task.abort();
    }
}
