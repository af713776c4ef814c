//! KafkaMirrorMaker2 on the API server with kwok nodes (no worker really runs): Strimzi's
//! `kafka-mirror-maker-2-tls.yaml` refused while a cluster's trusted certificate Secret is
//! missing, then its Connect cluster with Strimzi's names, labels, owner and
//! `KAFKA_MIRRORMAKER_2_CLUSTERS`, every cluster's certificates gathered under `<alias>.crt`
//! and readable by the pods, the status fields; a topics pattern Java cannot compile refused
//! naming the field, the running cluster untouched; a duplicate alias refused before anything
//! is made; deleting the resource removes everything.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DeleteParams};
use serde_json::{Value, json};
use strimzi_api::mirror_maker2::KafkaMirrorMaker2;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_tests::reference::reference_examples_dir;
use support::{Operator, apply, documents, names, wait_for};

const NAME: &str = "my-mirror-maker-2";

fn example(file: &str) -> Value {
    documents(&reference_examples_dir().join("mirror-maker").join(file))
        .into_iter()
        .find(|document| document["kind"] == "KafkaMirrorMaker2")
        .unwrap()
}

/// Waits until KafkaMirrorMaker2 `name` is `NotReady` with `reason`; returns the message.
async fn refused(api: &Api<KafkaMirrorMaker2>, name: &str, reason: &str) -> String {
    wait_for(
        api,
        name,
        &format!("{name} NotReady with {reason}"),
        |mirror_maker2| {
            let refusal = mirror_maker2?
                .status
                .as_ref()?
                .conditions
                .as_ref()?
                .iter()
                .find(|condition| condition.r#type.as_deref() == Some("NotReady"))?
                .clone();
            (refusal.reason.as_deref() == Some(reason)).then(|| refusal.message.unwrap_or_default())
        },
    )
    .await
}

fn ca_secret(name: &str, certificate: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name},
        "stringData": {"ca.crt": certificate, "ca.password": "x"},
    })
}

#[tokio::test]
async fn strimzis_mirror_maker_2_example_makes_strimzis_objects() {
    let (client, ns) = support::namespace("mm2-objects").await;
    let operator = Operator::on(&ns);
    let api: Api<KafkaMirrorMaker2> = Api::namespaced(client.clone(), &ns);

    // The source cluster's CA Secret is missing: refused, naming it, nothing made.
    apply(&client, &ns, &ca_secret("cluster-b-cluster-ca-cert", "B\n")).await;
    apply(&client, &ns, &example("kafka-mirror-maker-2-tls.yaml")).await;
    let message = refused(&api, NAME, "InvalidConfigurationException").await;
    assert!(message.contains("cluster-a-cluster-ca-cert"), "{message}");
    assert!(
        message.contains("(spec.mirrors[0].source.tls.trustedCertificates)"),
        "{message}"
    );
    assert!(
        names::<StrimziPodSet>(&client, &ns, "strimzi.io/kind=KafkaMirrorMaker2")
            .await
            .is_empty()
    );

    apply(&client, &ns, &ca_secret("cluster-a-cluster-ca-cert", "A\n")).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let pod = wait_for(
        &pods,
        "my-mirror-maker-2-mirrormaker2-0",
        "the worker pod",
        |pod| pod.cloned(),
    )
    .await;
    let labels = pod.metadata.labels.clone().unwrap();
    assert_eq!(labels["strimzi.io/kind"], "KafkaMirrorMaker2");
    assert_eq!(labels["strimzi.io/cluster"], NAME);
    assert_eq!(labels["strimzi.io/name"], "my-mirror-maker-2-mirrormaker2");
    assert_eq!(labels["app.kubernetes.io/name"], "kafka-mirror-maker-2");
    let spec = pod.spec.unwrap();
    assert_eq!(
        spec.service_account_name.as_deref(),
        Some("my-mirror-maker-2-mirrormaker2")
    );
    let env = spec.containers[0].env.clone().unwrap();
    let clusters = env
        .iter()
        .find(|var| var.name == "KAFKA_MIRRORMAKER_2_CLUSTERS")
        .and_then(|var| var.value.clone());
    assert_eq!(clusters.as_deref(), Some("cluster-b;cluster-a"));

    let selector = format!("strimzi.io/cluster={NAME},strimzi.io/kind=KafkaMirrorMaker2");
    assert_eq!(
        names::<StrimziPodSet>(&client, &ns, &selector).await,
        vec!["my-mirror-maker-2-mirrormaker2"]
    );
    assert_eq!(
        names::<Service>(&client, &ns, &selector).await,
        vec![
            "my-mirror-maker-2-mirrormaker2",
            "my-mirror-maker-2-mirrormaker2-api"
        ]
    );
    assert_eq!(
        names::<ServiceAccount>(&client, &ns, &selector).await,
        vec!["my-mirror-maker-2-mirrormaker2"]
    );
    assert_eq!(
        names::<ConfigMap>(&client, &ns, &selector).await,
        vec!["my-mirror-maker-2-mirrormaker2-config"]
    );
    assert_eq!(
        names::<Role>(&client, &ns, &selector).await,
        vec!["my-mirror-maker-2-mirrormaker2"]
    );
    assert_eq!(
        names::<RoleBinding>(&client, &ns, &selector).await,
        vec!["my-mirror-maker-2-mirrormaker2-role"]
    );
    let trusted_name = "my-mirror-maker-2-connect-tls-trusted-certs";
    let trusted = Api::<Secret>::namespaced(client.clone(), &ns)
        .get(trusted_name)
        .await
        .unwrap()
        .data
        .unwrap();
    assert_eq!(
        trusted
            .iter()
            .map(|(key, value)| (key.as_str(), String::from_utf8_lossy(&value.0).into_owned()))
            .collect::<Vec<_>>(),
        vec![
            ("cluster-a.crt", "A\n".to_owned()),
            ("cluster-b.crt", "B\n".to_owned())
        ]
    );
    let role = Api::<Role>::namespaced(client.clone(), &ns)
        .get("my-mirror-maker-2-mirrormaker2")
        .await
        .unwrap();
    let rules = role.rules.unwrap();
    assert_eq!(
        rules[0].resource_names.as_deref(),
        Some([trusted_name.to_owned()].as_slice())
    );
    let config = Api::<ConfigMap>::namespaced(client.clone(), &ns)
        .get("my-mirror-maker-2-mirrormaker2-config")
        .await
        .unwrap()
        .data
        .unwrap();
    let worker = &config["kafka-connect.properties"];
    assert!(
        worker.contains("bootstrap.servers=cluster-b-kafka-bootstrap:9093"),
        "{worker}"
    );
    assert!(
        worker.contains(&format!("{ns}/{trusted_name}:cluster-b.crt")),
        "{worker}"
    );
    assert!(
        worker.contains("group.id=my-mirror-maker-2-group"),
        "{worker}"
    );

    let status = wait_for(&api, NAME, "the status of the current generation", |mm2| {
        let mm2 = mm2?;
        let status = mm2.status.as_ref()?;
        (status.observed_generation == mm2.metadata.generation && status.url.is_some())
            .then(|| status.clone())
    })
    .await;
    assert_eq!(
        status.url.as_deref(),
        Some(format!("http://my-mirror-maker-2-mirrormaker2-api.{ns}.svc:8083").as_str())
    );
    assert_eq!(status.replicas, Some(1));
    assert_eq!(
        status.label_selector.as_deref(),
        Some(
            "strimzi.io/cluster=my-mirror-maker-2,strimzi.io/kind=KafkaMirrorMaker2,\
             strimzi.io/name=my-mirror-maker-2-mirrormaker2"
        )
    );

    // A topics pattern Java cannot compile, with more replicas: refused naming the field,
    // the running cluster left as it is.
    let pod_set = Api::<StrimziPodSet>::namespaced(client.clone(), &ns)
        .get("my-mirror-maker-2-mirrormaker2")
        .await
        .unwrap();
    let mut broken = example("kafka-mirror-maker-2-tls.yaml");
    broken["spec"]["replicas"] = json!(2);
    broken["spec"]["mirrors"][0]["topicsPattern"] = json!("mirrored-[");
    apply(&client, &ns, &broken).await;
    let message = refused(&api, NAME, "InvalidResourceException").await;
    assert!(
        message.starts_with("spec.mirrors[0].topicsPattern: \"mirrored-[\""),
        "{message}"
    );
    let unchanged = Api::<StrimziPodSet>::namespaced(client.clone(), &ns)
        .get("my-mirror-maker-2-mirrormaker2")
        .await
        .unwrap();
    assert_eq!(unchanged.metadata.generation, pod_set.metadata.generation);
    assert_eq!(unchanged.spec.pods.len(), 1);
    let refused_status = api.get(NAME).await.unwrap().status.unwrap();
    assert_eq!(
        refused_status.replicas,
        Some(1),
        "the status keeps the running size"
    );

    // A source with the target's alias: refused, nothing made.
    let mut duplicate = example("kafka-mirror-maker-2.yaml");
    duplicate["metadata"]["name"] = json!("duplicate");
    duplicate["spec"]["mirrors"][0]["source"]["alias"] = json!("cluster-b");
    apply(&client, &ns, &duplicate).await;
    let message = refused(&api, "duplicate", "InvalidResourceException").await;
    assert!(message.contains("cluster-b"), "{message}");
    assert!(message.contains("spec.mirrors[0].source"), "{message}");
    assert!(
        names::<StrimziPodSet>(&client, &ns, "strimzi.io/cluster=duplicate")
            .await
            .is_empty()
    );

    // Deleting the resource removes what it made.
    api.delete(NAME, &DeleteParams::default()).await.unwrap();
    let pod_sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    wait_for(
        &pod_sets,
        "my-mirror-maker-2-mirrormaker2",
        "the StrimziPodSet garbage collected",
        |set| set.is_none().then_some(()),
    )
    .await;
    wait_for(
        &Api::<Secret>::namespaced(client.clone(), &ns),
        trusted_name,
        "the trusted certificates garbage collected",
        |secret| secret.is_none().then_some(()),
    )
    .await;
    operator.stop().await;
}
