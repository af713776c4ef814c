//! `kubectl strimzi plan` against a cluster the operator made Ready (API server, kwok nodes):
//! the binary a user runs, with the admin's kubeconfig. An unchanged Kafka plans nothing (the
//! plan builds exactly the objects the operator applied); a template label, a static option,
//! a dynamic option and a pool scaled are planned as the operator's model and roller decide,
//! and for the template label the pods the plan restarts are the ones whose pods the operator
//! then describes anew; an invalid change is refused with the operator's reason.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_cluster_model::model::nodes::pods::definition_revisions;
use support::plugin::{
    kubectl_strimzi, objects, operator_deployment, plan, plan_documents, restarts,
};

/// The pods whose running `strimzi.io/revision` is not the one their StrimziPodSet now
/// describes.
async fn outdated_pods(client: &Client, namespace: &str) -> Vec<String> {
    let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let described = strimzi_cluster_operator::pod_set::described_annotations(
        &sets.list(&ListParams::default()).await.unwrap().items,
    );
    let mut outdated: Vec<String> = pods
        .list(&ListParams::default().labels("strimzi.io/kind=Kafka"))
        .await
        .unwrap()
        .items
        .iter()
        .filter(|pod| {
            described.get(&pod.name_any()).is_some_and(|wanted| {
                definition_revisions(Some(wanted))
                    != definition_revisions(pod.metadata.annotations.as_ref())
            })
        })
        .map(ResourceExt::name_any)
        .collect();
    outdated.sort();
    outdated
}

/// The Kafka pods in the order the roller restarts them: controllers, then brokers, each by
/// node ID.
async fn rolling_order(client: &Client, namespace: &str) -> Vec<String> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut ranked: Vec<(bool, i32, String)> = pods
        .list(&ListParams::default().labels("strimzi.io/kind=Kafka"))
        .await
        .unwrap()
        .items
        .iter()
        .map(|pod| {
            let name = pod.name_any();
            let controller = pod
                .labels()
                .get("strimzi.io/controller-role")
                .map(String::as_str)
                == Some("true");
            let id = name.rsplit('-').next().unwrap().parse().unwrap();
            (!controller, id, name)
        })
        .collect();
    ranked.sort();
    ranked.into_iter().map(|(_, _, name)| name).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_predicts_what_the_operator_does() {
    let (client, ns) = support::namespace("plan").await;
    let _operator = support::Operator::on(&ns);
    operator_deployment(
        &client,
        &ns,
        &[("STRIMZI_KAFKA_HOST_RESOLUTION", "ip-addresses-only")],
    )
    .await;
    for document in support::cluster("c", 1, 2) {
        support::apply(&client, &ns, &document).await;
    }
    support::ready(&client, &ns, "c").await;
    // In the roller's order: the controller, then the brokers by node ID.
    let pods = rolling_order(&client, &ns).await;
    let with_reason = |reason: &str| -> Vec<(String, Vec<String>)> {
        pods.iter()
            .map(|pod| (pod.clone(), vec![reason.to_owned()]))
            .collect()
    };

    // Nothing changed: nothing planned.
    let unchanged = plan(&ns, &["c"]);
    assert_eq!(unchanged["refused"], Value::Null, "{unchanged:#}");
    assert_eq!(objects(&unchanged), Vec::<String>::new(), "{unchanged:#}");
    assert_eq!(restarts(&unchanged), Vec::new());
    assert_eq!(unchanged["liveChanges"], json!([]));
    assert_eq!(unchanged["reloads"], json!([]));

    // A dynamic option: set on the running brokers, nothing restarts.
    let dynamic = plan(
        &ns,
        &["c", "--set", "spec.kafka.config.log.retention.ms=3600000"],
    );
    assert_eq!(restarts(&dynamic), Vec::new(), "{dynamic:#}");
    assert_eq!(
        dynamic["liveChanges"],
        json!([{"option": "log.retention.ms", "from": null, "to": "3600000"}])
    );

    // A static option (of every node's configuration): each node restarts, one after the
    // other, controllers first.
    let static_option = plan(
        &ns,
        &[
            "c",
            "--set",
            "spec.kafka.config.auto.create.topics.enable=false",
        ],
    );
    assert_eq!(
        restarts(&static_option),
        with_reason("ConfigChangeRequiresRestart"),
        "{static_option:#}"
    );
    assert_eq!(static_option["liveChanges"], json!([]));

    // A pool scaled: a node, its objects, no restart.
    let scaled = plan_documents(&ns, &[support::node_pool("c", "broker", 3, &["broker"])]);
    let added = scaled["nodesAdded"].as_array().unwrap().clone();
    assert_eq!(added.len(), 1, "{scaled:#}");
    assert_eq!(restarts(&scaled), Vec::new(), "{scaled:#}");
    let config_map = format!("create ConfigMap {}", added[0].as_str().unwrap());
    assert!(objects(&scaled).contains(&config_map), "{scaled:#}");

    // An invalid change: refused with the operator's reason, exit code 4.
    let (code, stdout, _) =
        kubectl_strimzi(&ns, &["plan", "c", "--set", "spec.kafka.version=3.0.0"]);
    assert_eq!(code, 4, "{stdout}");
    assert!(stdout.contains("Refused"), "{stdout}");

    // A template label: every pod restarts, controllers first; once applied, the pods the
    // operator describes anew are exactly those.
    let labelled = plan(
        &ns,
        &[
            "c",
            "--set",
            "spec.kafka.template.pod.metadata.labels.team=blue",
        ],
    );
    let planned = restarts(&labelled);
    assert_eq!(planned, with_reason("PodHasOldRevision"), "{labelled:#}");
    let (code, text, _) = kubectl_strimzi(
        &ns,
        &[
            "plan",
            "c",
            "--set",
            "spec.kafka.template.pod.metadata.labels.team=blue",
        ],
    );
    assert_eq!(code, 0);
    let first = format!("Restarts (in this order):\n  1. {} (node ", pods[0]);
    assert!(text.contains(&first), "{text}");
    support::merge_patch::<strimzi_api::kafka::Kafka>(
        &client,
        &ns,
        "c",
        json!({"spec": {"kafka": {"template": {"pod": {"metadata": {"labels": {"team": "blue"}}}}}}}),
    )
    .await;
    let mut planned_pods: Vec<String> = planned.into_iter().map(|(pod, _)| pod).collect();
    planned_pods.sort();
    let deadline = std::time::Instant::now() + support::WAIT;
    loop {
        let outdated = outdated_pods(&client, &ns).await;
        if outdated == planned_pods {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the operator's outdated pods {outdated:?}, planned {planned_pods:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}
