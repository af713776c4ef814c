//! The opt-in CRD self-install (`STRIMZI_INSTALL_CRDS`) on a real API server: a missing CRD
//! is created, an older one of ours is upgraded in place, and a newer one of ours or one
//! without our release annotation (Strimzi's) is left exactly as it was.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::Value;
use strimzi_cluster_operator::crds::{CrdAction, install};
use strimzi_crd_generator::{RELEASE, RELEASE_ANNOTATION, custom_resource_definitions};
use strimzi_tests::resources::eventually_ok;

const OLDER: &str = "kafkatopics.kafka.strimzi.io";
const NEWER: &str = "kafkausers.kafka.strimzi.io";
const FOREIGN: &str = "kafkaconnectors.kafka.strimzi.io";
const MISSING: &str = "kafkarebalances.kafka.strimzi.io";

/// Our generated CRD `name` as JSON.
fn generated(name: &str) -> Value {
    let crd = custom_resource_definitions()
        .unwrap()
        .into_iter()
        .find(|generated| generated.crd.metadata.name.as_deref() == Some(name))
        .unwrap()
        .crd;
    serde_json::to_value(crd).unwrap()
}

/// The `spec` properties of the CRD's first version's schema.
fn spec_properties(crd: &Value) -> &serde_json::Map<String, Value> {
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        .as_object()
        .unwrap()
}

#[tokio::test]
async fn self_install_creates_and_upgrades_ours_and_leaves_newer_and_foreign_crds_alone() {
    let client = support::env().client().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    // Replaced whole (as `kubectl replace` does), so that what the test leaves out is gone
    // whoever wrote it before.
    let put = |mut crd: Value| {
        let crds = crds.clone();
        async move {
            let name = crd["metadata"]["name"].as_str().unwrap().to_owned();
            let current = crds.get(&name).await.unwrap();
            crd["metadata"]["resourceVersion"] = current.metadata.resource_version.into();
            let crd: CustomResourceDefinition = serde_json::from_value(crd).unwrap();
            crds.replace(&name, &PostParams::default(), &crd)
                .await
                .unwrap();
        }
    };

    // An older release of ours, without a property ours has now.
    let mut older = generated(OLDER);
    older["metadata"]["annotations"][RELEASE_ANNOTATION] = "0.0.1".into();
    older["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("topicName");
    put(older).await;
    // A newer release of ours, with a column ours does not know.
    let mut newer = generated(NEWER);
    newer["metadata"]["annotations"][RELEASE_ANNOTATION] = "99.0.0".into();
    newer["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "From the future", "type": "string", "jsonPath": ".spec.future"}));
    put(newer).await;
    // Strimzi's own, which carries no release annotation of ours.
    let mut foreign = generated(FOREIGN);
    foreign["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("annotations");
    foreign["spec"]["versions"][0]["additionalPrinterColumns"] = serde_json::json!([]);
    put(foreign).await;
    let before_newer = serde_json::to_value(crds.get(NEWER).await.unwrap().spec).unwrap();
    let before_foreign = serde_json::to_value(crds.get(FOREIGN).await.unwrap().spec).unwrap();
    crds.delete(MISSING, &DeleteParams::default())
        .await
        .unwrap();
    eventually_ok("the deleted CRD to be gone", support::WAIT, || async {
        match crds.get_opt(MISSING).await.unwrap() {
            None => Ok(()),
            Some(_) => Err("still there"),
        }
    })
    .await;

    let outcome = install(&client, "strimzi-cluster-operator").await.unwrap();
    let action = |name: &str| {
        outcome
            .iter()
            .find(|(crd, _)| crd == name)
            .map(|(_, action)| action.clone())
            .unwrap()
    };
    assert_eq!(action(OLDER), CrdAction::Upgrade("0.0.1".into()));
    assert_eq!(action(MISSING), CrdAction::Create);
    assert!(matches!(action(NEWER), CrdAction::Keep(why) if why.contains("99.0.0")));
    assert!(matches!(action(FOREIGN), CrdAction::Keep(why) if why.contains("Strimzi")));
    assert_eq!(outcome.len(), 10);

    let upgraded = serde_json::to_value(crds.get(OLDER).await.unwrap()).unwrap();
    assert_eq!(
        upgraded["metadata"]["annotations"][RELEASE_ANNOTATION],
        RELEASE
    );
    assert!(spec_properties(&upgraded).contains_key("topicName"));
    assert!(crds.get_opt(MISSING).await.unwrap().is_some());
    assert_eq!(
        serde_json::to_value(crds.get(NEWER).await.unwrap().spec).unwrap(),
        before_newer
    );
    assert_eq!(
        serde_json::to_value(crds.get(FOREIGN).await.unwrap().spec).unwrap(),
        before_foreign
    );

    // Running it again changes nothing more.
    let again = install(&client, "strimzi-cluster-operator").await.unwrap();
    assert_eq!(
        again.iter().find(|(crd, _)| crd == OLDER).unwrap().1,
        CrdAction::Upgrade(RELEASE.into())
    );
}
