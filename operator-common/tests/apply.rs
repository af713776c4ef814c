//! The apply helpers against the real API server: server-side apply skipped when nothing
//! would change, every write counted, and owned objects no longer wanted deleted by label.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ListParams, ObjectMeta};
use kube::{Api, ResourceExt};
use strimzi_operator_common::apply::{Applied, Applier};
use strimzi_operator_common::metrics::Metrics;

fn config_map(namespace: &str, name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                "strimzi.io/cluster".to_owned(),
                "c".to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("key".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn applies_only_changes_and_deletes_what_is_no_longer_wanted() {
    let (client, namespace) = support::namespace("apply").await;
    let metrics = Metrics::new().unwrap();
    let applier = Applier::new(client.clone(), "test-operator", metrics.clone());
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);

    let first = config_map(&namespace, "first", "1");
    assert_eq!(applier.apply(&first, None).await.unwrap(), Applied::Written);
    assert_eq!(
        applier.apply(&first, None).await.unwrap(),
        Applied::Unchanged
    );
    let current = maps.get("first").await.unwrap();
    assert_eq!(
        applier.apply(&first, Some(&current)).await.unwrap(),
        Applied::Unchanged
    );
    assert!(
        current
            .managed_fields()
            .iter()
            .any(|entry| entry.manager.as_deref() == Some("test-operator"))
    );
    let changed = config_map(&namespace, "first", "2");
    assert_eq!(
        applier.apply(&changed, Some(&current)).await.unwrap(),
        Applied::Written
    );
    assert_eq!(maps.get("first").await.unwrap().data.unwrap()["key"], "2");
    assert_eq!(metrics.writes("ConfigMap", "apply"), 2);

    applier
        .apply(&config_map(&namespace, "second", "1"), None)
        .await
        .unwrap();
    applier
        .apply(&config_map(&namespace, "third", "1"), None)
        .await
        .unwrap();
    let deleted = applier
        .delete_unwanted::<ConfigMap>(&namespace, "strimzi.io/cluster=c", &["first".to_owned()])
        .await
        .unwrap();
    assert_eq!(deleted, ["second", "third"]);
    assert_eq!(metrics.writes("ConfigMap", "delete"), 2);
    let left: Vec<String> = maps
        .list(&ListParams::default().labels("strimzi.io/cluster=c"))
        .await
        .unwrap()
        .items
        .iter()
        .filter(|map| map.metadata.deletion_timestamp.is_none())
        .map(ResourceExt::name_any)
        .collect();
    assert_eq!(left, ["first"]);
}
