//! Removing an annotation the operator acted on, against the real API server: only while it
//! still has the value acted on, also when that value holds characters Go's JSON encoder
//! escapes (a MirrorMaker 2 connector name such as `src->tgt.MirrorSourceConnector`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ApiResource, PostParams};
use kube::{Api, ResourceExt};
use serde_json::json;
use strimzi_operator_common::controller::remove_annotation_if_unchanged;

#[tokio::test]
async fn an_annotation_goes_only_while_it_has_the_value_acted_on() {
    let (client, namespace) = support::namespace("annotations").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let annotations = json!({
        "strimzi.io/connector-offsets": "list",
        "strimzi.io/mirrormaker-connector": "src->tgt.MirrorSourceConnector",
        "example.com/other": "a<b&c",
    });
    let map: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "a", "annotations": annotations}}))
            .unwrap();
    api.create(&PostParams::default(), &map).await.unwrap();
    let kind = ApiResource::erase::<ConfigMap>(&());
    let remove = |key: &'static str, value: &'static str| {
        let (client, kind, namespace) = (client.clone(), kind.clone(), namespace.clone());
        async move {
            remove_annotation_if_unchanged(&client, &kind, &namespace, "a", key, value)
                .await
                .unwrap()
        }
    };

    assert!(
        !remove("strimzi.io/connector-offsets", "reset").await,
        "a changed value is kept"
    );
    assert!(remove("strimzi.io/connector-offsets", "list").await);
    assert!(
        remove(
            "strimzi.io/mirrormaker-connector",
            "src->tgt.MirrorSourceConnector"
        )
        .await
    );
    assert!(
        !remove(
            "strimzi.io/mirrormaker-connector",
            "src->tgt.MirrorSourceConnector"
        )
        .await,
        "an annotation already gone"
    );
    let left = api.get("a").await.unwrap();
    assert_eq!(
        left.annotations().keys().collect::<Vec<_>>(),
        vec!["example.com/other"]
    );
    assert!(remove("example.com/other", "a<b&c").await);
}
