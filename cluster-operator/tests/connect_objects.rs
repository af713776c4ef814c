//! KafkaConnect on the API server with kwok nodes (no worker really runs): Strimzi's
//! `kafka-connect.yaml` with its objects under Strimzi's names, labels and owner, its pods
//! listed by the StrimziPodSet, the status fields, a second worker through the scale
//! subresource; a KafkaConnector of a KafkaConnect without
//! `strimzi.io/use-connector-resources` refused; deleting the KafkaConnect removes
//! everything. A rack adds the init ClusterRoleBinding, removed with the rack and when the
//! KafkaConnect is deleted. A stuck worker makes the KafkaConnect `NotReady` at once. A
//! `spec.build` runs its builder pod and hands the pushed image to the workers (the builder's
//! ending written by the test, as the kubelet would).
//!
//! Decisions only (a missing trusted certificate Secret; the first step of a `spec.build`,
//! refused build options and a builder pod of another owner) are tested against a mock API
//! in `src/connect/decisions.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};
use strimzi_api::connect::KafkaConnect;
use strimzi_api::connector::KafkaConnector;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_tests::reference::reference_examples_dir;
use support::{
    Health, Operator, apply, binding_goes_with_the_resource, condition_of, documents, health_of,
    merge_patch, names, wait_binding, wait_client_binding, wait_for, wait_gone,
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

/// The builder pod's status as the kubelet writes it once its container `name` ended with
/// `exit_code` and `message` in its termination log.
fn builder_ended(name: &str, exit_code: i32, message: &str) -> Value {
    let now = jiff::Timestamp::now().to_string();
    json!({"status": {
        "phase": if exit_code == 0 { "Succeeded" } else { "Failed" },
        "containerStatuses": [{
            "name": name,
            "image": "quay.io/strimzi/buildah:1.2.0",
            "imageID": "",
            "ready": false,
            "restartCount": 0,
            "state": {"terminated": {
                "exitCode": exit_code,
                "reason": if exit_code == 0 { "Completed" } else { "Error" },
                "message": message,
                "startedAt": now,
                "finishedAt": now,
            }},
        }],
    }})
}

/// A `spec.build` on the API server, the builder's ending written as the kubelet would
/// (no Buildah runs on kwok nodes): the builder pod runs Buildah
/// with the Dockerfile ConfigMap and no worker is written while it builds; its pushed image
/// (by digest) goes to the workers and the StrimziPodSet's record, and the finished builder
/// is deleted. `strimzi.io/force-rebuild` on the StrimziPodSet starts a build once and is
/// removed; a failed build makes the KafkaConnect `NotReady` with `ConnectBuildFailed` and
/// the workers keep the last image; without `spec.build`, the build's objects are deleted.
#[tokio::test]
async fn a_build_hands_its_pushed_image_to_the_workers() {
    let (client, ns) = support::namespace("connect-build").await;
    let operator = Operator::on(&ns);
    let connects: Api<KafkaConnect> = Api::namespaced(client.clone(), &ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let pod_sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    let builder = "built-connect-build";
    let mut connect = example("kafka-connect-build.yaml");
    connect["metadata"]["name"] = json!("built");
    connect["spec"].as_object_mut().unwrap().remove("tls");
    connect["spec"]["bootstrapServers"] = json!("my-cluster-kafka-bootstrap:9092");
    connect["spec"]["build"]["output"] =
        json!({"type": "docker", "image": "registry.invalid/built:latest"});
    // The builder is never scheduled here: its status is the test's to write.
    connect["spec"]["template"] = json!({"buildPod": {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "example.com/no-such-node", "operator": "Exists"}]},
        ]},
    }}}});
    apply(&client, &ns, &connect).await;

    let pod = wait_for(&pods, builder, "the builder pod", |pod| pod.cloned()).await;
    let container = &pod.spec.as_ref().unwrap().containers[0];
    assert_eq!(container.name, builder);
    assert_eq!(
        container.image.as_deref(),
        Some("quay.io/strimzi/buildah:1.2.0")
    );
    let script = container.args.as_ref().unwrap().join(" ");
    assert!(
        script.contains("buildah build") && script.contains("--storage-driver=vfs"),
        "{script}"
    );
    let dockerfile = Api::<ConfigMap>::namespaced(client.clone(), &ns)
        .get("built-connect-dockerfile")
        .await
        .unwrap();
    let dockerfile = &dockerfile.data.unwrap()["Dockerfile"];
    assert!(
        dockerfile.contains("FROM quay.io/strimzi/maven-builder:1.2.0 AS downloadArtifacts"),
        "{dockerfile}"
    );
    let building = wait_for(&connects, "built", "the build reported", |connect| {
        let condition = condition_of(connect?.status.as_ref()?.conditions.as_ref(), "Reconciling")?;
        (condition.reason.as_deref() == Some("ConnectBuildRunning"))
            .then(|| condition.message.clone().unwrap_or_default())
    })
    .await;
    assert!(building.contains(builder), "{building}");
    assert!(
        pod_sets.get_opt("built-connect").await.unwrap().is_none(),
        "no worker is written before the image is pushed"
    );

    // Pushed: the workers run the image by digest, the record says so, the builder goes.
    let pushed = format!("registry.invalid/built@sha256:{}", "1".repeat(64));
    pods.patch_status(
        builder,
        &PatchParams::default(),
        &Patch::Merge(builder_ended(builder, 0, &pushed)),
    )
    .await
    .unwrap();
    let set = wait_for(
        &pod_sets,
        "built-connect",
        "the workers on the pushed image",
        |set| {
            let set = set?;
            (set.annotations().get("strimzi.io/connect-build-image") == Some(&pushed))
                .then(|| set.clone())
        },
    )
    .await;
    let revision = set.annotations()["strimzi.io/connect-build-revision"].clone();
    let worker = serde_json::to_value(&set.spec.pods[0]).unwrap();
    assert_eq!(worker["spec"]["containers"][0]["image"], json!(pushed));
    wait_gone(&pods, builder, "the finished builder deleted").await;

    // A forced rebuild runs once; the annotation goes.
    merge_patch::<StrimziPodSet>(
        &client,
        &ns,
        "built-connect",
        json!({"metadata": {"annotations": {"strimzi.io/force-rebuild": "true"}}}),
    )
    .await;
    wait_for(&pods, builder, "the forced rebuild", |pod| pod.map(|_| ())).await;
    wait_for(
        &pod_sets,
        "built-connect",
        "the annotation removed",
        |set| (!set?.annotations().contains_key("strimzi.io/force-rebuild")).then_some(()),
    )
    .await;

    // It fails: NotReady with what the builder said, the workers keep the last image.
    pods.patch_status(
        builder,
        &PatchParams::default(),
        &Patch::Merge(builder_ended(
            builder,
            1,
            "curl: (22) The requested URL returned error: 404",
        )),
    )
    .await
    .unwrap();
    let failed = wait_for(&connects, "built", "the failed build reported", |connect| {
        let condition = condition_of(connect?.status.as_ref()?.conditions.as_ref(), "NotReady")?;
        (condition.reason.as_deref() == Some("ConnectBuildFailed"))
            .then(|| condition.message.clone().unwrap_or_default())
    })
    .await;
    assert!(
        failed.contains("exited with code 1: curl: (22)"),
        "{failed}"
    );
    let set = pod_sets.get("built-connect").await.unwrap();
    assert_eq!(set.annotations()["strimzi.io/connect-build-image"], pushed);
    assert_eq!(
        set.annotations()["strimzi.io/connect-build-revision"],
        revision
    );
    assert!(
        pods.get_opt(builder).await.unwrap().is_some(),
        "a failed builder is kept for its log"
    );

    // No build any more: its objects go.
    connect["spec"].as_object_mut().unwrap().remove("build");
    connect["spec"]["image"] = json!(pushed);
    apply(&client, &ns, &connect).await;
    wait_gone(&pods, builder, "the failed builder deleted").await;
    wait_gone(
        &Api::<ConfigMap>::namespaced(client.clone(), &ns),
        "built-connect-dockerfile",
        "the Dockerfile deleted",
    )
    .await;
    wait_gone(
        &Api::<ServiceAccount>::namespaced(client.clone(), &ns),
        builder,
        "the builder's ServiceAccount deleted",
    )
    .await;
    operator.stop().await;
}
