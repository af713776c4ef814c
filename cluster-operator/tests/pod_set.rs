//! The StrimziPodSet controller against a real API server, with kwok making pods Ready.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};
use strimzi_api::pod_set::StrimziPodSet;
use support::{Operator, apply, namespace, wait_for};

fn pod(name: &str, revision: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": "test", "strimzi.io/cluster": "c"},
            "annotations": {"strimzi.io/revision": revision},
        },
        "spec": {"containers": [{"name": "main", "image": "example.com/image:1"}]},
    })
}

fn pod_set(pods: &[Value]) -> Value {
    json!({
        "apiVersion": "core.strimzi.io/v1",
        "kind": "StrimziPodSet",
        "metadata": {"name": "set"},
        "spec": {"selector": {"matchLabels": {"app": "test"}}, "pods": pods},
    })
}

async fn status(sets: &Api<StrimziPodSet>, pods: i32, ready: i32, current: i32) {
    wait_for(sets, "set", "the StrimziPodSet status", |set| {
        let set = set?;
        let status = set.status.as_ref()?;
        (status.pods == Some(pods)
            && status.ready_pods == Some(ready)
            && status.current_pods == Some(current)
            && status.observed_generation == set.metadata.generation)
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn pods_follow_the_set_and_running_pods_are_never_changed() {
    let (client, ns) = namespace("podset").await;
    let operator = Operator::pod_sets_only(&ns);
    let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);

    // A pod of someone else's with the same labels is left alone.
    let stranger: Pod = serde_json::from_value(pod("stranger", "x")).unwrap();
    pods.create(&PostParams::default(), &stranger)
        .await
        .unwrap();

    apply(&client, &ns, &pod_set(&[pod("p-0", "a"), pod("p-1", "a")])).await;
    status(&sets, 2, 2, 2).await;
    let set = sets.get("set").await.unwrap();
    for name in ["p-0", "p-1"] {
        let created = pods.get(name).await.unwrap();
        let owner = &created.owner_references()[0];
        assert_eq!(owner.uid, set.uid().unwrap());
        assert_eq!(owner.controller, Some(true));
        assert_eq!(
            created
                .labels()
                .get("strimzi.io/controller")
                .map(String::as_str),
            Some("strimzipodset")
        );
    }

    // A deleted pod comes back.
    let uid = pods.get("p-1").await.unwrap().uid();
    pods.delete("p-1", &DeleteParams::default()).await.unwrap();
    wait_for(&pods, "p-1", "p-1 to be recreated", |pod| {
        (pod?.uid() != uid).then_some(())
    })
    .await;
    status(&sets, 2, 2, 2).await;

    // A new revision does not touch the running pod: it is counted as not current.
    let before = pods.get("p-0").await.unwrap();
    apply(&client, &ns, &pod_set(&[pod("p-0", "b"), pod("p-1", "a")])).await;
    status(&sets, 2, 2, 1).await;
    let after = pods.get("p-0").await.unwrap();
    assert_eq!(before.resource_version(), after.resource_version());

    // A pod the set no longer lists is deleted; the stranger stays.
    apply(&client, &ns, &pod_set(&[pod("p-0", "b")])).await;
    status(&sets, 1, 1, 0).await;
    wait_for(&pods, "p-1", "p-1 to be deleted", |pod| {
        pod.is_none().then_some(())
    })
    .await;
    assert!(pods.get_opt("stranger").await.unwrap().is_some());

    operator.stop().await;
}
