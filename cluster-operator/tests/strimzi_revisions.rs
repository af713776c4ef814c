//! `strimzi.io/revision` and `strimzi.io/resource-revision` computed as Strimzi computes
//! them: for every pod Strimzi 1.2.0's own operator described in its StrimziPodSets
//! (`../shared/strimzi-reference/operator-output`), our hashes of that pod equal the ones it
//! wrote, so a pod either operator made from the same definition is current for both. A
//! changed field, annotation or resource changes the hash.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use strimzi_api::annotations::{RESOURCE_REVISION, REVISION};
use strimzi_api::pod_set::{StrimziPodSet, pod_from_entry};
use strimzi_cluster_operator::model::nodes::pods::{pod_revision, resource_revision};
use strimzi_tests::reference::reference_dir;

/// Every pod of the StrimziPodSets Strimzi's operator made for each recorded example.
fn strimzi_pods() -> Vec<Pod> {
    let output = reference_dir().join("operator-output");
    let mut pods = Vec::new();
    for example in ["kafka-persistent", "kafka-ephemeral"] {
        let path = output.join(example).join("strimzipodset.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let list: serde_json::Value = serde_json::from_str(&text).unwrap();
        for item in list["items"].as_array().unwrap() {
            let set: StrimziPodSet = serde_json::from_value(item.clone()).unwrap();
            pods.extend(
                set.spec
                    .pods
                    .iter()
                    .map(|entry| pod_from_entry(entry).unwrap()),
            );
        }
    }
    pods
}

fn annotation<'a>(pod: &'a Pod, key: &str) -> &'a str {
    pod.metadata.annotations.as_ref().unwrap()[key].as_str()
}

#[test]
fn our_hashes_of_strimzis_pods_are_the_ones_strimzi_wrote() {
    let pods = strimzi_pods();
    assert_eq!(pods.len(), 12, "6 pods in each of the two examples");
    for pod in &pods {
        let name = pod.metadata.name.as_deref().unwrap();
        assert_eq!(pod_revision(pod), annotation(pod, REVISION), "{name}");
        assert_eq!(
            resource_revision(pod),
            annotation(pod, RESOURCE_REVISION),
            "{name}"
        );
    }
}

#[test]
fn a_changed_definition_changes_its_hash_and_resources_only_theirs() {
    let pod = strimzi_pods().remove(0);
    let before = (pod_revision(&pod), resource_revision(&pod));

    let mut relabelled = pod.clone();
    relabelled
        .metadata
        .labels
        .get_or_insert_default()
        .insert("team".to_owned(), "a".to_owned());
    assert_ne!(pod_revision(&relabelled), before.0);

    let mut resized = pod.clone();
    let container = &mut resized.spec.as_mut().unwrap().containers[0];
    container.resources.get_or_insert_default().requests = Some(
        [("memory".to_owned(), Quantity("2Gi".to_owned()))]
            .into_iter()
            .collect(),
    );
    assert_eq!(pod_revision(&resized), before.0);
    assert_ne!(resource_revision(&resized), before.1);
}
