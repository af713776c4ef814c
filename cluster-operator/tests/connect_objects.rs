//! KafkaConnect on the API server with kwok nodes (no worker really runs): Strimzi's
//! `kafka-connect.yaml` with its objects under Strimzi's names, labels and owner, its pods
//! listed by the StrimziPodSet, the status fields, a second worker through the scale
//! subresource; a KafkaConnector of a KafkaConnect without
//! `strimzi.io/use-connector-resources` refused; deleting the KafkaConnect removes
//! everything. A rack adds the init ClusterRoleBinding, removed with the rack and when the
//! KafkaConnect is deleted. A stuck worker makes the KafkaConnect `NotReady` at once.
//!
//! Refusals that are decisions only (a missing trusted certificate Secret; `spec.build`
//! refused with `ConnectBuildUnsupported` after its Dockerfile ConfigMap is applied) are
//! tested against a mock API in `src/connect/decisions.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};
use strimzi_api::connect::KafkaConnect;
use strimzi_api::connector::KafkaConnector;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_tests::reference::reference_examples_dir;
use support::{
    Health, Operator, apply, binding_goes_with_the_resource, condition_of, documents, health_of,
    names, wait_binding, wait_client_binding, wait_for, wait_gone,
};

fn example(file: &str) -> Value {
    documents(&reference_examples_dir().join("connect").join(file))
        .into_iter()
        .find(|document| document["kind"] == "KafkaConnect")
        .unwrap()
}

#[tokio::test]
async fn strimzis_connect_examples_make_strimzis_objects() {
    let (client, ns) = support::namespace("connect-objects").await;
    let operator = Operator::on(&ns);
    let connects: Api<KafkaConnect> = Api::namespaced(client.clone(), &ns);

    // The trusted certificate Secret it names, then the example.
    apply(
        &client,
        &ns,
        &json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "my-cluster-cluster-ca-cert"},
            "stringData": {"ca.crt": "-----BEGIN CERTIFICATE-----\n", "ca.password": "x"},
        }),
    )
    .await;
    apply(&client, &ns, &example("kafka-connect.yaml")).await;
    let pod_sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    wait_for(
        &pod_sets,
        "my-connect-cluster-connect",
        "the Connect StrimziPodSet",
        |set| set.map(|_| ()),
    )
    .await;
    let selector = "strimzi.io/cluster=my-connect-cluster,strimzi.io/kind=KafkaConnect";
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    wait_for(
        &pods,
        "my-connect-cluster-connect-0",
        "the worker pod",
        |pod| pod.map(|_| ()),
    )
    .await;
    assert_eq!(
        names::<Service>(&client, &ns, selector).await,
        vec![
            "my-connect-cluster-connect",
            "my-connect-cluster-connect-api"
        ]
    );
    assert_eq!(
        names::<ConfigMap>(&client, &ns, selector).await,
        vec!["my-connect-cluster-connect-config"]
    );
    assert_eq!(
        names::<Secret>(&client, &ns, selector).await,
        vec!["my-connect-cluster-connect-tls-trusted-certs"]
    );
    for (kind, found) in [
        (
            "ServiceAccount",
            names::<ServiceAccount>(&client, &ns, selector).await,
        ),
        (
            "PodDisruptionBudget",
            names::<PodDisruptionBudget>(&client, &ns, selector).await,
        ),
        (
            "NetworkPolicy",
            names::<NetworkPolicy>(&client, &ns, selector).await,
        ),
    ] {
        assert_eq!(found, vec!["my-connect-cluster-connect"], "{kind}");
    }
    assert_eq!(
        names::<Role>(&client, &ns, selector).await,
        vec!["my-connect-cluster-connect"]
    );
    assert_eq!(
        names::<RoleBinding>(&client, &ns, selector).await,
        vec!["my-connect-cluster-connect-role"]
    );
    let trusted = Api::<Secret>::namespaced(client.clone(), &ns)
        .get("my-connect-cluster-connect-tls-trusted-certs")
        .await
        .unwrap();
    assert_eq!(
        trusted.data.unwrap().keys().cloned().collect::<Vec<_>>(),
        vec!["ca.crt"]
    );
    let status = wait_for(
        &connects,
        "my-connect-cluster",
        "the status of the current generation",
        |connect| {
            let connect = connect?;
            let status = connect.status.as_ref()?;
            (status.observed_generation == connect.metadata.generation && status.url.is_some())
                .then(|| status.clone())
        },
    )
    .await;
    assert_eq!(
        status.url.as_deref(),
        Some(format!("http://my-connect-cluster-connect-api.{ns}.svc:8083").as_str())
    );
    assert_eq!(status.replicas, Some(1));

    // The scale subresource adds a worker.
    connects
        .patch_scale(
            "my-connect-cluster",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .unwrap();
    wait_for(
        &pods,
        "my-connect-cluster-connect-1",
        "a second worker",
        |pod| pod.map(|_| ()),
    )
    .await;

    // A KafkaConnector of a KafkaConnect that does not use connector resources.
    for document in documents(&reference_examples_dir().join("connect/source-connector.yaml")) {
        apply(&client, &ns, &document).await;
    }
    let connectors: Api<KafkaConnector> = Api::namespaced(client.clone(), &ns);
    wait_for(
        &connectors,
        "my-source-connector",
        "the connector refused",
        |connector| {
            let refusal =
                condition_of(connector?.status.as_ref()?.conditions.as_ref(), "NotReady")?;
            refusal
                .message
                .as_deref()?
                .contains("strimzi.io/use-connector-resources")
                .then_some(())
        },
    )
    .await;

    // Deleting the KafkaConnect removes what it made.
    connects
        .delete("my-connect-cluster", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(
        &pod_sets,
        "my-connect-cluster-connect",
        "the StrimziPodSet garbage collected",
    )
    .await;
    wait_for(
        &pods,
        "my-connect-cluster-connect-0",
        "the worker garbage collected (gone, or being deleted)",
        |pod| {
            pod.is_none_or(|pod| pod.metadata.deletion_timestamp.is_some())
                .then_some(())
        },
    )
    .await;
    operator.stop().await;
}

#[tokio::test]
async fn a_rack_binds_the_workers_to_their_nodes_and_unbinds_them_when_removed() {
    let (client, ns) = support::namespace("connect-rack").await;
    let operator = Operator::on(&ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let mut connect = example("kafka-connect.yaml");
    connect["metadata"]["name"] = json!("racked");
    connect["spec"]["replicas"] = json!(1);
    connect["spec"].as_object_mut().unwrap().remove("tls");
    connect["spec"]["bootstrapServers"] = json!("my-cluster-kafka-bootstrap:9092");
    connect["spec"]["rack"] = json!({"topologyKey": "topology.kubernetes.io/zone"});
    apply(&client, &ns, &connect).await;
    let binding = format!("strimzi-{ns}-racked-connect-init");
    wait_client_binding(&client, &binding, "racked-connect").await;
    wait_for(
        &pods,
        "racked-connect-0",
        "the worker with its init container",
        |pod| {
            let init = pod?
                .spec
                .as_ref()?
                .init_containers
                .as_ref()?
                .first()?
                .clone();
            (init.name == "kafka-init").then_some(())
        },
    )
    .await;
    let config = Api::<ConfigMap>::namespaced(client.clone(), &ns)
        .get("racked-connect-config")
        .await
        .unwrap();
    assert!(
        config.data.unwrap()["kafka-connect.properties"]
            .contains("consumer.client.rack=${strimzidir:/opt/kafka/init:rack.id}")
    );

    // The rack removed: the binding goes, the workers' definition loses the init container.
    connect["spec"].as_object_mut().unwrap().remove("rack");
    apply(&client, &ns, &connect).await;
    wait_binding(&client, &binding, false).await;
    let pod_sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    wait_for(
        &pod_sets,
        "racked-connect",
        "the workers' definition without the init container",
        |set| {
            let pods = &set?.spec.pods;
            (!pods.is_empty()
                && pods.iter().all(|pod| {
                    serde_json::to_value(pod).unwrap()["spec"]["initContainers"].is_null()
                }))
            .then_some(())
        },
    )
    .await;

    // The rack again, then the KafkaConnect deleted: the cleanup removes the binding.
    binding_goes_with_the_resource::<KafkaConnect>(&client, &ns, &mut connect, "racked", &binding)
        .await;
    operator.stop().await;
}

/// A worker of the current definition that is stuck (unschedulable here; an image that cannot
/// be pulled is the same rule, on real nodes) waits for the user: the KafkaConnect is
/// `NotReady` at once, degraded to tools that know Strimzi, with the generation written.
#[tokio::test]
async fn a_stuck_worker_makes_the_connect_cluster_not_ready_at_once() {
    let (client, ns) = support::namespace("connect-stuck").await;
    let operator = Operator::on(&ns);
    let connects: Api<KafkaConnect> = Api::namespaced(client.clone(), &ns);
    let mut connect = example("kafka-connect.yaml");
    connect["metadata"]["name"] = json!("stuck");
    connect["spec"].as_object_mut().unwrap().remove("tls");
    connect["spec"]["template"] = json!({"pod": {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "example.com/no-such-node", "operator": "Exists"}]},
        ]},
    }}}});
    apply(&client, &ns, &connect).await;
    let stuck = wait_for(&connects, "stuck", "the stuck worker reported", |connect| {
        let connect = connect?;
        let not_ready = condition_of(connect.status.as_ref()?.conditions.as_ref(), "NotReady")?;
        (not_ready.reason.as_deref() == Some("WaitingForPods")).then(|| connect.clone())
    })
    .await;
    assert_eq!(health_of("KafkaConnect", &stuck), Health::Degraded);
    let status = stuck.status.as_ref().unwrap();
    let message = condition_of(status.conditions.as_ref(), "NotReady")
        .and_then(|condition| condition.message.clone())
        .unwrap_or_default();
    assert!(
        message.contains("stuck: stuck-connect-0 (Unschedulable"),
        "{message}"
    );
    assert_eq!(status.observed_generation, stuck.metadata.generation);
    operator.stop().await;
}
