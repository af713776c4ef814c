//! Pod sets, claims and node IDs of the cluster model, for Strimzi's reference examples and
//! ours (snapshots reviewed against what Strimzi 1.2 generates), plus properties of generated
//! names and ports.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_cluster_operator::model::images::{DEFAULT_KAFKA_INIT_IMAGE, KafkaImages};
use strimzi_cluster_operator::model::pods::{CaGenerations, PodInputs};
use strimzi_cluster_operator::model::{KafkaCluster, ModelConfig, ModelInput, resolve};
use strimzi_operator_common::config::DEFAULT_LABELS_EXCLUSION_PATTERN;
use strimzi_operator_common::labels::{LabelExclusion, is_label_value};
use strimzi_tests::reference::{own_examples_dir, reference_examples_dir, yaml_files};

fn config() -> ModelConfig {
    ModelConfig {
        images: KafkaImages::strimzi_defaults(),
        cluster_domain: "cluster.local".into(),
        operator_namespace: "strimzi".into(),
        operator_namespace_labels: None,
        network_policy_generation: true,
        image_pull_policy: None,
        image_pull_secrets: Vec::new(),
        label_exclusion: LabelExclusion::new(DEFAULT_LABELS_EXCLUSION_PATTERN).unwrap(),
        managed_by: "strimzi-cluster-operator".into(),
        kafka_init_image: DEFAULT_KAFKA_INIT_IMAGE.into(),
    }
}

/// The Kafka and node pools of a multi-document YAML file, placed in namespace `myproject`
/// with fixed UIDs.
fn read_resources(path: &Path) -> Option<(Kafka, Vec<KafkaNodePool>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut kafka = None;
    let mut pools = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let value = serde_json::Value::deserialize(document).unwrap();
        let kind = value
            .get("kind")
            .and_then(|kind| kind.as_str())
            .unwrap_or_default();
        match kind {
            "Kafka" => {
                let mut resource: Kafka = serde_json::from_value(value).unwrap();
                resource.metadata.namespace = Some("myproject".into());
                resource.metadata.uid = Some("kafka-uid".into());
                kafka = Some(resource);
            }
            "KafkaNodePool" => {
                let mut pool: KafkaNodePool = serde_json::from_value(value).unwrap();
                pool.metadata.namespace = Some("myproject".into());
                pool.metadata.uid = Some(format!("{}-uid", pool.metadata.name.as_deref().unwrap()));
                pools.push(pool);
            }
            _ => {}
        }
    }
    kafka.map(|kafka| (kafka, pools))
}

use serde::Deserialize;

fn inputs(cluster: &KafkaCluster) -> PodInputs {
    let pods = cluster.nodes().map(|node| node.pod_name);
    let hashes: BTreeMap<String, String> = pods
        .map(|pod| (pod.clone(), format!("hash-of-{pod}")))
        .collect();
    PodInputs {
        ca_generations: CaGenerations {
            cluster_ca_cert: 0,
            cluster_ca_key: 0,
            clients_ca_cert: 0,
        },
        server_cert_hashes: hashes.clone(),
        configuration_hashes: hashes,
    }
}

fn snapshot_examples(dir: &Path, prefix: &str) {
    let files = yaml_files(dir);
    let mut seen = 0;
    for path in files {
        let Some((kafka, pools)) = read_resources(&path) else {
            continue;
        };
        seen += 1;
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let config = config();
        let input = ModelInput {
            kafka: &kafka,
            pools: &pools,
            cluster_id: "cluster-id",
            config: &config,
        };
        let cluster = resolve(&input).unwrap_or_else(|error| panic!("{stem}: {error}"));
        let pod_sets = cluster.pod_sets(&inputs(&cluster));
        let claims = cluster.persistent_volume_claims();
        let warnings: Vec<String> = cluster
            .warnings
            .iter()
            .map(|warning| format!("{}: {}", warning.reason, warning.message))
            .collect();
        insta::assert_yaml_snapshot!(format!("{prefix}-{stem}-pod-sets"), pod_sets);
        insta::assert_yaml_snapshot!(format!("{prefix}-{stem}-claims"), claims);
        insta::assert_yaml_snapshot!(format!("{prefix}-{stem}-warnings"), warnings);
    }
    assert!(seen > 0, "no Kafka examples found in {}", dir.display());
}

#[test]
fn strimzi_reference_examples() {
    snapshot_examples(&reference_examples_dir().join("kafka"), "strimzi");
}

#[test]
fn our_examples() {
    snapshot_examples(&own_examples_dir().join("kafka"), "ours");
}

fn pods_of(pod_sets: &[StrimziPodSet]) -> Vec<Pod> {
    pod_sets
        .iter()
        .flat_map(|set| set.spec.pod_list().unwrap())
        .collect()
}

/// A cluster with generated names and sizes, from Strimzi's dual-role example.
fn generated_cluster(
    cluster_name: &str,
    pools: &[(String, i32, bool, bool)],
    listeners: &[(String, i32)],
) -> Option<KafkaCluster> {
    let kafka: Kafka = serde_json::from_value(serde_json::json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": cluster_name, "namespace": "ns", "uid": "u"},
        "spec": {"kafka": {
            "listeners": listeners.iter().map(|(name, port)| serde_json::json!({
                "name": name, "port": port, "type": "internal", "tls": false
            })).collect::<Vec<_>>(),
            "rack": {"topologyKey": "topology.kubernetes.io/zone"},
            "jmxOptions": {},
            "metricsConfig": {"type": "strimziMetricsReporter"}
        }}
    }))
    .unwrap();
    let pools: Vec<KafkaNodePool> = pools
        .iter()
        .map(|(name, replicas, broker, controller)| {
            let mut roles = Vec::new();
            if *broker {
                roles.push("broker");
            }
            if *controller {
                roles.push("controller");
            }
            serde_json::from_value(serde_json::json!({
                "apiVersion": "kafka.strimzi.io/v1",
                "kind": "KafkaNodePool",
                "metadata": {"name": name, "namespace": "ns", "uid": "p",
                             "labels": {"strimzi.io/cluster": cluster_name}},
                "spec": {"replicas": replicas, "roles": roles, "storage": {"type": "jbod", "volumes": [
                    {"id": 0, "type": "persistent-claim", "size": "1Gi"},
                    {"id": 1, "type": "ephemeral"}]}}
            }))
            .unwrap()
        })
        .collect();
    let config = config();
    resolve(&ModelInput {
        kafka: &kafka,
        pools: &pools,
        cluster_id: "id",
        config: &config,
    })
    .ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn names_labels_and_ports_are_valid(
        cluster_name in "[a-z][a-z0-9]{0,15}",
        pools in proptest::collection::btree_map("[a-z][a-z0-9]{0,15}", (1..4i32, any::<bool>(), any::<bool>()), 1..4),
        listeners in proptest::collection::btree_map("[a-z][a-z0-9]{0,10}", 10000..20000i32, 1..4),
    ) {
        let pools: Vec<(String, i32, bool, bool)> = pools
            .into_iter()
            .map(|(name, (replicas, broker, controller))| (name, replicas, broker, controller || !broker))
            .collect();
        let listeners: Vec<(String, i32)> = listeners.into_iter().collect();
        let ports: BTreeSet<i32> = listeners.iter().map(|(_, port)| *port).collect();
        prop_assume!(ports.len() == listeners.len());
        prop_assume!(pools.iter().any(|pool| pool.2) && pools.iter().any(|pool| pool.3));
        let Some(cluster) = generated_cluster(&cluster_name, &pools, &listeners) else {
            return Err(TestCaseError::fail("resolve failed"));
        };
        let pod_sets = cluster.pod_sets(&PodInputs::default());
        for pod in pods_of(&pod_sets) {
            let name = pod.metadata.name.clone().unwrap();
            prop_assert!(name.len() <= 63, "pod name {name} too long for a hostname");
            for (key, value) in pod.metadata.labels.clone().unwrap() {
                prop_assert!(is_label_value(&value), "label {key}={value} is invalid");
            }
            let spec = pod.spec.unwrap();
            for container in spec.containers.iter().chain(spec.init_containers.iter().flatten()) {
                let ports = container.ports.clone().unwrap_or_default();
                let numbers: BTreeSet<i32> = ports.iter().map(|port| port.container_port).collect();
                let names: BTreeSet<String> = ports.iter().filter_map(|port| port.name.clone()).collect();
                prop_assert_eq!(numbers.len(), ports.len(), "duplicate port numbers in {}", name);
                prop_assert_eq!(names.len(), ports.len(), "duplicate port names in {}", name);
                prop_assert!(names.iter().all(|port| port.len() <= 15), "port name too long");
            }
            let volumes: BTreeSet<String> = spec.volumes.unwrap().into_iter().map(|v| v.name).collect();
            for mount in spec.containers[0].volume_mounts.clone().unwrap() {
                prop_assert!(volumes.contains(&mount.name), "mount {} has no volume", mount.name);
            }
        }
        for claim in cluster.persistent_volume_claims() {
            let name = claim.metadata.name.unwrap();
            prop_assert!(name.len() <= 253);
        }
    }
}

#[test]
fn revision_ignores_nothing_we_generate_and_changes_with_the_spec() {
    let pools = [("a".to_owned(), 1, true, true)];
    let listeners = [("plain".to_owned(), 9092)];
    let cluster = generated_cluster("c", &pools, &listeners).unwrap();
    let revision = |cluster: &KafkaCluster| {
        let pods = pods_of(&cluster.pod_sets(&PodInputs::default()));
        pods[0].metadata.annotations.as_ref().unwrap()["strimzi.io/revision"].clone()
    };
    let first = revision(&cluster);
    assert_eq!(first.len(), 8);
    assert_eq!(first, revision(&cluster), "the revision is stable");
    let mut changed = cluster.clone();
    changed.version.image = "other:1".into();
    assert_ne!(first, revision(&changed));
}
