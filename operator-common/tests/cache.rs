//! Shared caches against the real API server: filled by one list+watch, ready once listed,
//! and with no `managedFields` entry but what the operator's field manager applied.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::json;
use strimzi_operator_common::cache::{CacheScope, Caches};
use strimzi_operator_common::http::Readiness;

#[tokio::test]
async fn caches_keep_only_our_applied_fields_and_follow_changes() {
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
    maps.patch(
        "before",
        &PatchParams::apply("test-operator"),
        &Patch::Apply(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"labels": {"ours": "yes"}},
        })),
    )
    .await
    .unwrap();
    let stored = maps.get("before").await.unwrap();
    assert_eq!(
        stored.metadata.managed_fields.as_ref().map(Vec::len),
        Some(2),
        "the server records the creator's and our fields: {:?}",
        stored.metadata.managed_fields
    );

    let caches = Caches::new("test-operator");
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
    for map in &cached {
        let managers: Vec<_> = map
            .metadata
            .managed_fields
            .iter()
            .flatten()
            .map(|entry| (entry.manager.as_deref(), entry.operation.as_deref()))
            .collect();
        let expected = match map.metadata.name.as_deref() {
            Some("before") => vec![(Some("test-operator"), Some("Apply"))],
            _ => vec![],
        };
        assert_eq!(managers, expected, "{:?}", map.metadata.name);
    }
    for task in tasks {
        task.abort();
    }
}
