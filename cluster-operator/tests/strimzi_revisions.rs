//! Pods as Strimzi 1.2.0's own operator makes them (`../shared/strimzi-reference/
//! operator-output`, recorded for `kafka-persistent.yaml` and `kafka-ephemeral.yaml`):
//! - our `strimzi.io/revision` and `strimzi.io/resource-revision` of each of its pods are the
//!   ones it wrote;
//! - given the same Kafka, node pools, namespace, cluster ID, CA generations and node
//!   certificates, our model describes every pod exactly as Strimzi's StrimziPodSets do, so
//!   a cluster it made is current for ours and the other way round (no pod restarted on a
//!   takeover or a hand-back).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde_json::Value;
use strimzi_api::annotations::{RESOURCE_REVISION, REVISION};
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::{StrimziPodSet, pod_from_entry};
use strimzi_certificate_manager::certificate::ParsedCertificate;
use strimzi_cluster_operator::model::listeners::ObservedListeners;
use strimzi_cluster_operator::model::nodes::pods::{
    CaGenerations, PodInputs, pod_revision, resource_revision,
};
use strimzi_cluster_operator::model::{ModelInput, resolve};
use strimzi_tests::reference::reference_dir;

const EXAMPLES: [&str; 2] = ["kafka-persistent", "kafka-ephemeral"];

fn output_dir(example: &str) -> PathBuf {
    reference_dir().join("operator-output").join(example)
}

/// The items of one recorded list, e.g. `strimzipodset.json`.
fn items<T: serde::de::DeserializeOwned>(example: &str, file: &str) -> Vec<T> {
    let path = output_dir(example).join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let list: Value = serde_json::from_str(&text).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| serde_json::from_value(item.clone()).unwrap())
        .collect()
}

/// Every pod Strimzi's StrimziPodSets describe for `example`, by name.
fn strimzi_pods(example: &str) -> BTreeMap<String, Pod> {
    items::<StrimziPodSet>(example, "strimzipodset.json")
        .iter()
        .flat_map(|set| {
            set.spec
                .pods
                .iter()
                .map(|entry| pod_from_entry(entry).unwrap())
        })
        .map(|pod| (pod.metadata.name.clone().unwrap(), pod))
        .collect()
}

fn annotation<'a>(pod: &'a Pod, key: &str) -> &'a str {
    pod.metadata.annotations.as_ref().unwrap()[key].as_str()
}

#[test]
fn our_hashes_of_strimzis_pods_are_the_ones_strimzi_wrote() {
    for example in EXAMPLES {
        let pods = strimzi_pods(example);
        assert_eq!(pods.len(), 6, "{example}");
        for (name, pod) in &pods {
            assert_eq!(pod_revision(pod), annotation(pod, REVISION), "{name}");
            assert_eq!(
                resource_revision(pod),
                annotation(pod, RESOURCE_REVISION),
                "{name}"
            );
        }
    }
}

#[test]
fn a_changed_definition_changes_its_hash_and_resources_only_theirs() {
    let pod = strimzi_pods("kafka-persistent")
        .into_values()
        .next()
        .unwrap();
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

/// The thumbprint (`strimzi.io/server-cert-hash`) of each node's certificate in the Secrets
/// Strimzi's operator made.
fn server_cert_hashes(example: &str, pods: &BTreeMap<String, Pod>) -> BTreeMap<String, String> {
    let secrets: Vec<Secret> = items(example, "secret.json");
    pods.keys()
        .map(|name| {
            let secret = secrets
                .iter()
                .find(|secret| secret.metadata.name.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("no Secret {name}"));
            let pem = &secret.data.as_ref().unwrap()[&format!("{name}.crt")].0;
            (
                name.clone(),
                ParsedCertificate::from_pem(pem).unwrap().thumbprint(),
            )
        })
        .collect()
}

#[test]
fn given_strimzis_inputs_our_pods_are_strimzis_pods() {
    for example in EXAMPLES {
        let kafka = items::<Kafka>(example, "kafka.json").remove(0);
        let pools: Vec<KafkaNodePool> = items(example, "kafkanodepool.json");
        // Its operator stopped before writing the status: the ID is in the nodes' ConfigMaps.
        let config_maps: Vec<ConfigMap> = items(example, "configmap.json");
        let cluster_id = config_maps
            .iter()
            .find_map(|map| map.data.as_ref()?.get("cluster.id").cloned())
            .unwrap();
        let config = model_support::default_model_config();
        let cluster = resolve(&ModelInput {
            kafka: &kafka,
            pools: &pools,
            cluster_id: &cluster_id,
            metadata_version_in_use: None,
            config: &config,
        })
        .unwrap();
        let expected = strimzi_pods(example);
        let addresses = cluster.listener_addresses(&ObservedListeners::default());
        let inputs = PodInputs {
            ca_generations: CaGenerations::default(),
            server_cert_hashes: server_cert_hashes(example, &expected),
            configuration_hashes: cluster.configuration_hashes(&addresses),
            custom_listener_cert_thumbprints: None,
        };
        let ours: BTreeMap<String, Pod> = cluster
            .pod_sets(&inputs)
            .iter()
            .flat_map(|set| set.spec.pod_list().unwrap())
            .map(|pod| (pod.metadata.name.clone().unwrap(), pod))
            .collect();
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "{example}"
        );
        for (name, pod) in &ours {
            assert_eq!(
                serde_json::to_value(pod).unwrap(),
                serde_json::to_value(&expected[name]).unwrap(),
                "{example}: {name}"
            );
        }
    }
}
