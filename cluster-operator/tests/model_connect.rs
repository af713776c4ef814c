//! The Kafka Connect model over every KafkaConnect of Strimzi's examples and ours: each builds
//! (its trusted certificate Secrets given), with one pod per replica named after the cluster,
//! the worker configuration naming its bootstrap servers and group, valid label values, a
//! build with its Dockerfile exactly when `spec.build` pushes to a registry (an ImageStream
//! output refused), and the same objects when built twice.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support/fast_start.rs"]
mod fast_start;
mod model_support;

use std::path::Path;

use strimzi_api::connect::{BuildOutput, KafkaConnect};
use strimzi_cluster_operator::model::connect::build::ConnectBuild;
use strimzi_cluster_operator::model::connect::{ConnectCluster, ConnectInputs};
use strimzi_operator_common::labels::is_label_value;
use strimzi_tests::reference::{own_examples_dir, reference_examples_dir, yaml_files};

/// Every KafkaConnect in the YAML files of `dir`.
fn connects(dir: &Path) -> Vec<KafkaConnect> {
    yaml_files(dir)
        .into_iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            serde_yaml_ng::Deserializer::from_str(&text)
                .map(|document| {
                    <serde_json::Value as serde::Deserialize>::deserialize(document).unwrap()
                })
                .filter(|value| value["kind"] == "KafkaConnect")
                .map(|value| serde_json::from_value::<KafkaConnect>(value).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The Secrets the example's `spec.tls` names (`model_support::trusted_secrets`), and the
/// logging and metrics ConfigMaps.
fn inputs(connect: &KafkaConnect) -> ConnectInputs {
    let secrets = model_support::trusted_secrets(connect.spec.tls.as_ref());
    ConnectInputs {
        trusted_certificate_secrets: secrets,
        external_logging: Some("rootLogger.level=INFO\n".to_owned()),
        external_metrics: Some("rules: []\n".to_owned()),
        jmx_secret: None,
        built: None,
    }
}

fn check(dir: &Path) {
    let config = model_support::default_model_config();
    let all = connects(dir);
    assert!(!all.is_empty(), "no KafkaConnect in {}", dir.display());
    for mut connect in all {
        connect.metadata.namespace = Some("ns".to_owned());
        let name = connect.metadata.name.clone().unwrap();
        let cluster = ConnectCluster::from_kafka_connect(&connect, &config).unwrap();
        let inputs = inputs(&connect);
        cluster.validate(&inputs).unwrap();
        let objects = cluster.objects(&inputs).unwrap();
        let pods: Vec<String> = objects
            .pod_set
            .spec
            .pods
            .iter()
            .map(|entry| {
                serde_json::to_value(entry).unwrap()["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        let expected: Vec<String> = (0..connect.spec.replicas)
            .map(|index| format!("{name}-connect-{index}"))
            .collect();
        assert_eq!(pods, expected, "{name}");
        let properties = &objects.config_map.data.as_ref().unwrap()["kafka-connect.properties"];
        assert!(
            properties.contains(&format!(
                "bootstrap.servers={}\n",
                connect.spec.bootstrap_servers
            )),
            "{name}"
        );
        assert!(
            properties.contains(&format!("group.id={}\n", connect.spec.group_id)),
            "{name}"
        );
        for value in objects.pod_set.metadata.labels.as_ref().unwrap().values() {
            assert!(is_label_value(value), "{name}: label value {value:?}");
        }
        match (
            connect.spec.build.as_ref().map(|build| &build.output),
            ConnectBuild::of(&cluster),
        ) {
            (None, Ok(None)) => {}
            (Some(BuildOutput::Docker(_)), Ok(Some(build))) => {
                assert!(build.dockerfile().contains("# Connector plugin"), "{name}");
            }
            (Some(BuildOutput::ImageStream(_)), Err(error)) => {
                assert_eq!(error.reason(), "InvalidResourceException", "{name}");
            }
            (output, build) => panic!("{name}: {output:?} built as {build:?}"),
        }
        let again = cluster.objects(&inputs).unwrap();
        assert_eq!(
            serde_json::to_value(&again.pod_set).unwrap(),
            serde_json::to_value(&objects.pod_set).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn strimzis_connect_examples_build() {
    check(&reference_examples_dir().join("connect"));
}

#[test]
fn our_connect_examples_build() {
    check(&own_examples_dir().join("connect"));
}

/// A KafkaConnect with one worker whose consumers read the rack of its node.
fn rack_aware_connect() -> KafkaConnect {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaConnect",
        "metadata": {"name": "racked", "namespace": "ns"},
        "spec": {
            "replicas": 1, "bootstrapServers": "b:9092", "groupId": "g",
            "configStorageTopic": "c", "statusStorageTopic": "s", "offsetStorageTopic": "o",
            "rack": {"topologyKey": "topology.kubernetes.io/zone"},
        },
    }))
    .unwrap()
}

/// `STRIMZI_POD_DISRUPTION_BUDGET_GENERATION=false`: no PodDisruptionBudget for a Connect
/// cluster (nor for MirrorMaker 2, which is built as one).
#[test]
fn no_pod_disruption_budget_when_their_generation_is_off() {
    let connect = rack_aware_connect();
    let mut config = model_support::default_model_config();
    config.pod_disruption_budget_generation = false;
    let cluster = ConnectCluster::from_kafka_connect(&connect, &config).unwrap();
    let objects = cluster.objects(&inputs(&connect)).unwrap();
    assert!(objects.pod_disruption_budget.is_none());
}

/// The operator's proxy and FIPS variables reach the worker and its rack init container
/// (MirrorMaker 2's workers alike).
#[test]
fn the_operators_proxy_and_fips_variables_reach_the_worker_containers() {
    let connect = rack_aware_connect();
    let mut config = model_support::default_model_config();
    config.shared_env = model_support::shared_env().into();
    let cluster = ConnectCluster::from_kafka_connect(&connect, &config).unwrap();
    let objects = cluster.objects(&inputs(&connect)).unwrap();
    let pods = objects.pod_set.spec.pod_list().unwrap();
    let pod = pods[0].spec.as_ref().unwrap();
    model_support::assert_shared_env(&pod.containers[0]);
    model_support::assert_shared_env(&pod.init_containers.as_ref().unwrap()[0]);
}

/// What the real-node tests' fast start (`support/fast_start.rs`) asks of a Connect cluster
/// (MirrorMaker 2's workers alike) reaches the worker: the heap and the fast-start flags in
/// place of the start script's G1 flags, readiness checked from 2 s every 2 s instead of
/// Strimzi's 60 s delay and Kubernetes' 10 s period, and Strimzi's liveness probe.
#[test]
fn a_fast_start_sets_jvm_flags_and_readiness_and_leaves_liveness_as_strimzi_has_it() {
    use fast_start::{FAST_START_FLAGS, fast_start_jvm, http_readiness_probe};
    use model_support::assert_probe_timings;
    let connect: KafkaConnect = serde_json::from_value(serde_json::json!({
        "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaConnect",
        "metadata": {"name": "fast", "namespace": "ns"},
        "spec": {
            "replicas": 1, "bootstrapServers": "b:9092", "groupId": "g",
            "configStorageTopic": "c", "statusStorageTopic": "s", "offsetStorageTopic": "o",
            "jvmOptions": fast_start_jvm("256m", "384m"),
            "readinessProbe": http_readiness_probe(),
        },
    }))
    .unwrap();
    let config = model_support::default_model_config();
    let cluster = ConnectCluster::from_kafka_connect(&connect, &config).unwrap();
    let objects = cluster.objects(&inputs(&connect)).unwrap();
    let pods = objects.pod_set.spec.pod_list().unwrap();
    let worker = &pods[0].spec.as_ref().unwrap().containers[0];
    let env: std::collections::BTreeMap<&str, Option<&str>> = worker
        .env
        .iter()
        .flatten()
        .map(|var| (var.name.as_str(), var.value.as_deref()))
        .collect();
    assert_eq!(env["KAFKA_HEAP_OPTS"], Some("-Xms256m -Xmx384m"));
    assert_eq!(env["KAFKA_JVM_PERFORMANCE_OPTS"], Some(FAST_START_FLAGS));
    assert_probe_timings(
        worker,
        (Some(2), Some(2), Some(5)),
        (Some(60), None, Some(5)),
    );
}
