//! Snapshots of each node's `server.config` and `log4j2.properties` for Strimzi's example
//! Kafka clusters, and properties of the generated configuration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_cluster_operator::model::config_maps::ExternalConfiguration;
use strimzi_cluster_operator::model::images::KafkaImages;
use strimzi_cluster_operator::model::listeners::ListenerAddresses;
use strimzi_cluster_operator::model::{KafkaCluster, KafkaVersion, ModelConfig, NodePool};
use strimzi_operator_common::labels::LabelExclusion;
use strimzi_tests::reference;

/// Operator settings as Strimzi's defaults.
fn model_config() -> ModelConfig {
    ModelConfig {
        images: KafkaImages::default(),
        cluster_domain: "cluster.local".to_owned(),
        operator_namespace: "strimzi".to_owned(),
        operator_namespace_labels: None,
        network_policy_generation: true,
        image_pull_policy: None,
        image_pull_secrets: Vec::new(),
        label_exclusion: LabelExclusion::new("^app.kubernetes.io/(?!part-of).*").unwrap(),
        managed_by: "strimzi-cluster-operator".to_owned(),
    }
}

/// A cluster built directly from a Kafka and its pools, node IDs assigned 0.. across the
/// pools in the order given.
fn cluster(kafka: &Kafka, pools: &[KafkaNodePool]) -> KafkaCluster {
    let mut next_id = 0;
    let mut node_pools: Vec<NodePool> = pools
        .iter()
        .map(|pool| {
            let node_ids: BTreeSet<i32> = (next_id..next_id + pool.spec.replicas).collect();
            next_id += pool.spec.replicas;
            NodePool {
                name: pool.metadata.name.clone().unwrap(),
                resource_labels: pool.metadata.labels.clone().unwrap_or_default(),
                roles: pool.spec.roles.iter().copied().collect(),
                node_ids,
                removed_node_ids: BTreeSet::new(),
                storage: pool.spec.storage.clone(),
                resources: pool.spec.resources.clone(),
                jvm_options: pool.spec.jvm_options.clone(),
                template: pool.spec.template.clone(),
            }
        })
        .collect();
    node_pools.sort_by(|a, b| a.name.cmp(&b.name));
    KafkaCluster {
        name: kafka.metadata.name.clone().unwrap(),
        namespace: kafka
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "my-namespace".to_owned()),
        owner: None,
        resource_labels: kafka.metadata.labels.clone().unwrap_or_default(),
        spec: kafka.spec.kafka.clone(),
        kafka: kafka.clone(),
        cluster_id: "CLUSTER-ID".to_owned(),
        version: KafkaVersion {
            version: "4.3.1".to_owned(),
            metadata_version: "4.3-IV0".to_owned(),
            image: "quay.io/strimzi/kafka:1.2.0-kafka-4.3.1".to_owned(),
        },
        pools: node_pools,
        config: model_config(),
        warnings: Vec::new(),
    }
}

/// One example file: its Kafkas with their pools, and the ConfigMaps next to them.
struct Example {
    clusters: Vec<KafkaCluster>,
    config_maps: BTreeMap<String, BTreeMap<String, String>>,
}

fn read_example(path: &Path) -> Example {
    let text = std::fs::read_to_string(path).unwrap();
    let documents = strimzi_api::document::yaml_documents(&text).unwrap();
    let of_kind = |kind: &'static str| {
        documents
            .iter()
            .filter(move |document| document["kind"] == Value::String(kind.to_owned()))
    };
    let pools: Vec<KafkaNodePool> = of_kind("KafkaNodePool")
        .map(|document| strimzi_api::document::from_value(document.clone()).unwrap())
        .collect();
    let clusters = of_kind("Kafka")
        .filter_map(|document| strimzi_api::document::from_value::<Kafka>(document.clone()).ok())
        .map(|kafka| {
            let name = kafka.metadata.name.clone().unwrap();
            let own: Vec<KafkaNodePool> = pools
                .iter()
                .filter(|pool| {
                    pool.metadata
                        .labels
                        .as_ref()
                        .and_then(|labels| labels.get("strimzi.io/cluster"))
                        == Some(&name)
                })
                .cloned()
                .collect();
            cluster(&kafka, &own)
        })
        .collect();
    let config_maps = of_kind("ConfigMap")
        .map(|document| {
            let data = document["data"]
                .as_object()
                .map(|data| {
                    data.iter()
                        .map(|(key, value)| (key.clone(), value.as_str().unwrap().to_owned()))
                        .collect()
                })
                .unwrap_or_default();
            (document["metadata"]["name"].as_str().unwrap().to_owned(), data)
        })
        .collect();
    Example {
        clusters,
        config_maps,
    }
}

/// The example files with Kafka clusters that these tests cover.
fn example_files() -> Vec<std::path::PathBuf> {
    let dir = reference::reference_examples_dir();
    ["kafka", "security", "metrics", "cruise-control"]
        .iter()
        .flat_map(|folder| reference::yaml_files(&dir.join(folder)))
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            text.contains("\nkind: Kafka\n") || text.starts_with("kind: Kafka\n")
        })
        .collect()
}

/// The content of the user ConfigMaps an example cluster refers to.
fn external(example: &Example, cluster: &KafkaCluster) -> ExternalConfiguration {
    let metrics = match &cluster.spec.metrics_config {
        Some(strimzi_api::common::MetricsConfig::JmxPrometheusExporter(exporter)) => exporter
            .value_from
            .as_ref()
            .and_then(|value_from| value_from.config_map_key_ref.as_ref())
            .and_then(|reference| {
                example
                    .config_maps
                    .get(&reference.name)
                    .and_then(|data| data.get(&reference.key))
                    .cloned()
            }),
        _ => None,
    };
    ExternalConfiguration {
        logging: None,
        metrics,
    }
}

#[test]
fn snapshots_of_every_example_node() {
    let files = example_files();
    assert!(files.len() >= 10, "too few example files: {files:?}");
    let mut covered = 0;
    for path in files {
        let example = read_example(&path);
        let relative = path
            .strip_prefix(reference::reference_examples_dir())
            .unwrap()
            .with_extension("")
            .display()
            .to_string()
            .replace('/', "__");
        for cluster in &example.clusters {
            let addresses = ListenerAddresses::default();
            let external = external(&example, cluster);
            cluster.validate_external_configuration(&external).unwrap();
            let mut text = String::new();
            for config_map in cluster.config_maps(&addresses, &external) {
                let data = config_map.data.unwrap();
                text.push_str(&format!(
                    "===== {} server.config =====\n{}\n",
                    config_map.metadata.name.unwrap(),
                    data["server.config"]
                ));
                covered += 1;
            }
            let logging = cluster.logging_configuration(None).unwrap();
            text.push_str(&format!("===== log4j2.properties =====\n{logging}"));
            insta::assert_snapshot!(format!("{relative}__{}", cluster.name), text);
        }
    }
    assert!(covered >= 20, "only {covered} nodes covered");
}

#[test]
fn config_map_of_a_metrics_example() {
    let path = reference::reference_examples_dir().join("metrics/kafka-metrics.yaml");
    let example = read_example(&path);
    let cluster = &example.clusters[0];
    let external = external(&example, cluster);
    let config_maps = cluster.config_maps(&ListenerAddresses::default(), &external);
    let first = &config_maps[0];
    let data = first.data.as_ref().unwrap();
    assert_eq!(
        data.keys().collect::<Vec<_>>(),
        [
            "cluster.id",
            "log4j2.properties",
            "metadata.version",
            "metrics-config.json",
            "server.config"
        ]
    );
    assert!(data["metrics-config.json"].starts_with('{'));
    assert!(
        data["server.config"].contains("metric.reporters=org.apache.kafka.common.metrics.JmxReporter")
    );
    let mut metadata = first.metadata.clone();
    metadata.labels.as_mut().unwrap().remove("unused");
    insta::assert_yaml_snapshot!(metadata);
}

#[test]
fn hashes_ignore_dynamic_options_only() {
    let path = reference::reference_examples_dir().join("kafka/kafka-persistent.yaml");
    let example = read_example(&path);
    let mut cluster = example.clusters[0].clone();
    let addresses = ListenerAddresses::default();
    let before = cluster.configuration_hashes(&addresses);
    assert_eq!(before.len(), cluster.nodes().count());
    assert!(before.values().all(|hash| hash.len() == 8));

    let config = cluster.spec.config.get_or_insert_with(Default::default);
    config.insert("log.retention.ms".to_owned(), Value::from(1000));
    assert_eq!(cluster.configuration_hashes(&addresses), before);

    let config = cluster.spec.config.get_or_insert_with(Default::default);
    config.insert("num.partitions".to_owned(), Value::from(7));
    let after = cluster.configuration_hashes(&addresses);
    assert!(before.iter().all(|(pod, hash)| after[pod] != *hash));
}

#[test]
fn replication_warnings_follow_the_broker_count() {
    let path = reference::reference_examples_dir().join("kafka/kafka-persistent.yaml");
    let mut cluster = read_example(&path).clusters[0].clone();
    assert!(cluster.configuration_warnings().is_empty());
    cluster.spec.config = None;
    let reasons: Vec<String> = cluster
        .configuration_warnings()
        .into_iter()
        .map(|warning| warning.reason)
        .collect();
    assert_eq!(reasons, ["KafkaDefaultReplicationFactor", "KafkaMinInsyncReplicas"]);

    let single = reference::reference_examples_dir().join("kafka/kafka-single-node.yaml");
    let mut cluster = read_example(&single).clusters[0].clone();
    cluster.spec.config = None;
    assert!(cluster.configuration_warnings().is_empty());
}

/// Keys the operator keeps for itself, built from the forbidden prefixes.
fn forbidden_key() -> impl Strategy<Value = String> {
    let prefixes: Vec<&'static str> =
        strimzi_cluster_operator::model::user_config::FORBIDDEN_PREFIXES.to_vec();
    (proptest::sample::select(prefixes), "[a-z.]{0,12}")
        .prop_map(|(prefix, suffix)| format!("{prefix}{suffix}"))
        .prop_filter("exceptions are allowed", |key| {
            strimzi_cluster_operator::model::user_config::is_forbidden(key)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_forbidden_option_reaches_server_config(
        keys in proptest::collection::btree_set(forbidden_key(), 1..6),
    ) {
        let path = reference::reference_examples_dir().join("kafka/kafka-with-dual-role-nodes.yaml");
        let mut cluster = read_example(&path).clusters[0].clone();
        let config = cluster.spec.config.get_or_insert_with(Default::default);
        for (index, key) in keys.iter().enumerate() {
            config.insert(key.clone(), Value::from(format!("forbidden-value-{index}")));
        }
        let warnings = cluster.configuration_warnings();
        for node in cluster.nodes().collect::<Vec<_>>() {
            let server_config = cluster.server_config(&node, &ListenerAddresses::default());
            prop_assert!(!server_config.contains("forbidden-value-"), "{server_config}");
        }
        prop_assert_eq!(
            warnings.iter().filter(|warning| warning.reason == "ForbiddenConfigurationOption").count(),
            keys.len()
        );
    }
}
