//! Pod sets, claims and node IDs of the cluster model, for Strimzi's reference examples and
//! ours (snapshots reviewed against what Strimzi 1.2 generates), plus properties of generated
//! names and ports.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_cluster_operator::model::nodes::pods::{CaGenerations, PodInputs};
use strimzi_cluster_operator::model::{KafkaCluster, ModelInput, resolve};
use strimzi_operator_common::labels::is_label_value;
use strimzi_tests::reference::{own_examples_dir, reference_examples_dir, yaml_files};

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
        custom_listener_cert_thumbprints: None,
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
        let config = model_support::default_model_config();
        let input = ModelInput {
            kafka: &kafka,
            pools: &pools,
            cluster_id: "cluster-id",
            metadata_version_in_use: None,
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
    resolve_resources(&kafka, &pools).ok()
}

/// Resolves `kafka` and `pools` with the test configuration and cluster ID `id`.
fn resolve_resources(
    kafka: &Kafka,
    pools: &[KafkaNodePool],
) -> Result<KafkaCluster, strimzi_cluster_operator::model::ModelError> {
    let config = model_support::default_model_config();
    resolve(&ModelInput {
        kafka,
        pools,
        cluster_id: "id",
        metadata_version_in_use: None,
        config: &config,
    })
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
        // The roller finds a set's pods in the model: the same names the set runs.
        for set in &pod_sets {
            let set_name = set.metadata.name.clone().unwrap();
            let from_model: Vec<String> = cluster.pods_of_pod_set(&set_name).collect();
            let in_set: Vec<String> = pods_of(std::slice::from_ref(set))
                .into_iter()
                .map(|pod| pod.metadata.name.unwrap())
                .collect();
            prop_assert_eq!(from_model, in_set);
        }
        prop_assert_eq!(cluster.pods_of_pod_set("not-a-set").count(), 0);
        // The roller compares running pods with the model's pods: the ones the sets hold.
        let pods = cluster.pods(&PodInputs::default());
        let in_sets = pods_of(&pod_sets);
        prop_assert_eq!(in_sets.len(), pods.len());
        for pod in &in_sets {
            let name = pod.metadata.name.clone().unwrap();
            prop_assert_eq!(pods.get(&name).map(|pod| &pod.metadata.annotations), Some(&pod.metadata.annotations));
        }
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

/// A Kafka and pools from JSON, resolved with the test configuration.
fn resolve_json(
    kafka: serde_json::Value,
    pools: Vec<serde_json::Value>,
) -> Result<KafkaCluster, strimzi_cluster_operator::model::ModelError> {
    let mut kafka: Kafka = serde_json::from_value(kafka).unwrap();
    kafka.metadata.namespace = Some("ns".into());
    kafka.metadata.uid = Some("kafka-uid".into());
    let pools: Vec<KafkaNodePool> = pools
        .into_iter()
        .map(|pool| {
            let mut pool: KafkaNodePool = serde_json::from_value(pool).unwrap();
            pool.metadata.namespace = Some("ns".into());
            pool.metadata.uid = Some("pool-uid".into());
            pool
        })
        .collect();
    resolve_resources(&kafka, &pools)
}

fn kafka_json(spec_kafka: serde_json::Value) -> serde_json::Value {
    let mut kafka = serde_json::json!({
        "listeners": [{"name": "plain", "port": 9092, "type": "internal", "tls": false}]
    });
    kafka
        .as_object_mut()
        .unwrap()
        .extend(spec_kafka.as_object().unwrap().clone());
    serde_json::json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": "c"},
        "spec": {"kafka": kafka}
    })
}

fn pool_json(
    name: &str,
    replicas: i32,
    roles: &[&str],
    extra: serde_json::Value,
) -> serde_json::Value {
    let mut spec = serde_json::json!({
        "replicas": replicas,
        "roles": roles,
        "storage": {"type": "persistent-claim", "size": "10Gi"}
    });
    spec.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaNodePool",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": "c"}},
        "spec": spec
    })
}

#[test]
fn invalid_pools_are_rejected_with_a_reason() {
    use serde_json::json;
    let cases = [
        (vec![], "InvalidKafkaNodePools", "No KafkaNodePools"),
        (
            vec![pool_json("b", 3, &["broker"], json!({}))],
            "InvalidKafkaNodePools",
            "controller role",
        ),
        (
            vec![pool_json("c", 3, &["controller"], json!({}))],
            "InvalidKafkaNodePools",
            "broker role",
        ),
        (
            vec![pool_json("x", 3, &[], json!({}))],
            "InvalidKafkaNodePools",
            "no role",
        ),
        (
            vec![pool_json(
                "x",
                3,
                &["broker", "controller"],
                json!({"storage": {"type": "persistent-claim"}}),
            )],
            "InvalidConfigurationException",
            "size",
        ),
    ];
    for (pools, reason, fragment) in cases {
        let error = resolve_json(kafka_json(json!({})), pools).unwrap_err();
        assert_eq!(error.reason(), reason, "{error}");
        assert!(error.to_string().contains(fragment), "{error}");
    }
    let error = resolve_json(
        kafka_json(json!({"config": {"default.replication.factor": 4}})),
        vec![pool_json("x", 3, &["broker", "controller"], json!({}))],
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("should be set to 3 or less"),
        "{error}"
    );
}

#[test]
fn spec_warnings_follow_strimzi() {
    use serde_json::json;
    let reasons = |cluster: KafkaCluster| -> Vec<String> {
        cluster.warnings.into_iter().map(|w| w.reason).collect()
    };
    let two_controllers = resolve_json(
        kafka_json(json!({"config": {"default.replication.factor": 2, "min.insync.replicas": 1}})),
        vec![pool_json("x", 2, &["broker", "controller"], json!({}))],
    )
    .unwrap();
    assert_eq!(reasons(two_controllers), ["KafkaKRaftControllerNodeCount"]);
    let defaults = resolve_json(
        kafka_json(json!({})),
        vec![pool_json("x", 3, &["broker", "controller"], json!({}))],
    )
    .unwrap();
    assert_eq!(
        reasons(defaults),
        ["KafkaDefaultReplicationFactor", "KafkaMinInsyncReplicas"]
    );
    let single_ephemeral = resolve_json(
        kafka_json(json!({})),
        vec![pool_json(
            "x",
            1,
            &["broker", "controller"],
            json!({"storage": {"type": "ephemeral"}}),
        )],
    )
    .unwrap();
    assert_eq!(reasons(single_ephemeral), ["KafkaStorage"]);
}

#[test]
fn claims_follow_delete_claim() {
    use serde_json::json;
    let mut pool = pool_json(
        "x",
        1,
        &["broker", "controller"],
        json!({"storage": {"type": "jbod", "volumes": [
            {"id": 0, "type": "persistent-claim", "size": "1Gi", "deleteClaim": true,
             "class": "fast", "selector": {"zone": "a"}, "volumeAttributesClass": "gold"},
            {"id": 1, "type": "persistent-claim", "size": "2Gi"}]},
            "template": {"persistentVolumeClaim": {"metadata": {
                "labels": {"team": "a", "strimzi.io/name": "ignored"},
                "annotations": {"note": "n"}}}}}),
    );
    pool["status"] = json!({"nodeIds": [0, 1, 2]});
    let cluster = resolve_json(
        kafka_json(json!({"config": {"default.replication.factor": 1, "min.insync.replicas": 1}})),
        vec![pool],
    )
    .unwrap();
    let claims = cluster.persistent_volume_claims();
    let names: Vec<String> = claims
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["data-0-c-x-0", "data-1-c-x-0"]);
    let first = &claims[0];
    assert_eq!(
        first.metadata.owner_references.as_ref().unwrap()[0].kind,
        "KafkaNodePool"
    );
    assert!(claims[1].metadata.owner_references.is_none());
    let labels = first.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["team"], "a");
    assert_eq!(labels["strimzi.io/name"], "c-kafka");
    assert_eq!(first.metadata.annotations.as_ref().unwrap()["note"], "n");
    let spec = first.spec.as_ref().unwrap();
    assert_eq!(spec.storage_class_name.as_deref(), Some("fast"));
    assert_eq!(spec.volume_attributes_class_name.as_deref(), Some("gold"));
    assert_eq!(
        spec.selector
            .as_ref()
            .unwrap()
            .match_labels
            .as_ref()
            .unwrap()["zone"],
        "a"
    );
    assert_eq!(cluster.claims_to_delete(), ["data-0-c-x-1", "data-0-c-x-2"]);
}

#[test]
fn pods_with_templates_jvm_options_and_rack() {
    use serde_json::json;
    let cluster = resolve_json(
        kafka_json(json!({
            "config": {"default.replication.factor": 1, "min.insync.replicas": 1},
            "rack": {"topologyKey": "topology.kubernetes.io/zone"},
            "brokerRackInitImage": "init:1",
            "jvmOptions": {"-Xmx": "1g", "-XX": {"UseG1GC": "true", "UnlockExperimentalVMOptions": "true", "MaxRAMPercentage": "70"},
                           "javaSystemProperties": [{"name": "a", "value": "b"}], "gcLoggingEnabled": true},
            "livenessProbe": {"initialDelaySeconds": 60},
            "template": {
                "pod": {"metadata": {"labels": {"from": "kafka"}}, "terminationGracePeriodSeconds": 120,
                        "tolerations": [{"key": "k", "operator": "Exists"}],
                        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}},
                        "volumes": [{"name": "extra", "emptyDir": {}}],
                        "templatedVolumes": [{"name": "per-node", "secret": {"secretName": "s-{nodeId}",
                            "items": [{"key": "{nodePodName}.crt", "path": "node.crt"}]}}]},
                "kafkaContainer": {"env": [{"name": "KAFKA_CLUSTER_NAME", "value": "ignored"}, {"name": "USER", "value": "u"}],
                                   "volumeMounts": [{"name": "extra", "mountPath": "/extra"}]},
                "podSet": {"metadata": {"annotations": {"kafka": "template"}}}
            }
        })),
        vec![pool_json("b", 1, &["broker", "controller"], json!({
            "resources": {"requests": {"memory": "2Gi"}},
            "template": {"podSet": {"metadata": {"annotations": {"pool": "template"}}}}
        }))],
    )
    .unwrap();
    let pod_sets = cluster.pod_sets(&PodInputs::default());
    insta::assert_yaml_snapshot!("features-pod-sets", pod_sets);
    let annotations = pod_sets[0].metadata.annotations.as_ref().unwrap();
    assert_eq!(
        annotations.get("pool").map(String::as_str),
        Some("template")
    );
    assert!(
        !annotations.contains_key("kafka"),
        "the pool's podSet template wins"
    );
    let pod = &pods_of(&pod_sets)[0];
    assert_eq!(
        pod.metadata.labels.as_ref().unwrap()["from"],
        "kafka",
        "the Kafka's pod template applies"
    );
    let spec = pod.spec.as_ref().unwrap();
    assert_eq!(spec.termination_grace_period_seconds, Some(120));
    let terms = &spec
        .affinity
        .as_ref()
        .unwrap()
        .node_affinity
        .as_ref()
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap()
        .node_selector_terms;
    let keys: Vec<&str> = terms[0]
        .match_expressions
        .as_ref()
        .unwrap()
        .iter()
        .map(|e| e.key.as_str())
        .collect();
    assert_eq!(keys, ["disk", "topology.kubernetes.io/zone"]);
    let init = &spec.init_containers.as_ref().unwrap()[0];
    assert_eq!(init.image.as_deref(), Some("init:1"));
    let env: BTreeMap<String, Option<String>> = spec.containers[0]
        .env
        .clone()
        .unwrap()
        .into_iter()
        .map(|var| (var.name, var.value))
        .collect();
    assert_eq!(env["KAFKA_CLUSTER_NAME"].as_deref(), Some("c"));
    assert_eq!(env["USER"].as_deref(), Some("u"));
    assert_eq!(
        env["KAFKA_HEAP_OPTS"].as_deref(),
        Some("-Xmx1g -XX:MaxRAMPercentage=70")
    );
    assert_eq!(
        env["KAFKA_JVM_PERFORMANCE_OPTS"].as_deref(),
        Some("-XX:+UnlockExperimentalVMOptions -XX:+UseG1GC")
    );
    assert_eq!(
        env["STRIMZI_JAVA_SYSTEM_PROPERTIES"].as_deref(),
        Some("-Da=b")
    );
    assert_eq!(env["STRIMZI_KAFKA_GC_LOG_ENABLED"].as_deref(), Some("true"));
    assert!(
        !env.contains_key("STRIMZI_DYNAMIC_HEAP_PERCENTAGE"),
        "-Xmx set"
    );
    let volumes: BTreeMap<String, serde_json::Value> = spec
        .volumes
        .clone()
        .unwrap()
        .into_iter()
        .map(|v| (v.name.clone(), serde_json::to_value(v).unwrap()))
        .collect();
    assert_eq!(volumes["per-node"]["secret"]["secretName"], "s-0");
    assert_eq!(
        volumes["per-node"]["secret"]["items"][0]["key"],
        "c-b-0.crt"
    );
    assert!(volumes.contains_key("rack-volume"));
    assert_eq!(
        spec.containers[0]
            .liveness_probe
            .as_ref()
            .unwrap()
            .initial_delay_seconds,
        Some(60)
    );
}

/// The operator's proxy and FIPS variables reach the Kafka container and its init container,
/// after their own variables; a template variable of the same name does not replace them.
#[test]
fn the_operators_proxy_and_fips_variables_reach_the_kafka_containers() {
    use serde_json::json;
    let mut cluster = resolve_json(
        kafka_json(json!({
            "rack": {"topologyKey": "topology.kubernetes.io/zone"},
            "template": {"kafkaContainer": {"env": [{"name": "HTTP_PROXY", "value": "other"}]}},
        })),
        vec![pool_json("b", 1, &["broker", "controller"], json!({}))],
    )
    .unwrap();
    cluster.config.shared_env = model_support::shared_env().into();
    let pods = pods_of(&cluster.pod_sets(&PodInputs::default()));
    let spec = pods[0].spec.as_ref().unwrap();
    model_support::assert_shared_env(&spec.containers[0]);
    model_support::assert_shared_env(&spec.init_containers.as_ref().unwrap()[0]);
}

#[test]
fn dynamic_heap_follows_memory_resources() {
    use serde_json::json;
    let heap = |pool_extra: serde_json::Value| -> BTreeMap<String, String> {
        let cluster = resolve_json(
            kafka_json(
                json!({"config": {"default.replication.factor": 1, "min.insync.replicas": 1}}),
            ),
            vec![pool_json("b", 1, &["broker", "controller"], pool_extra)],
        )
        .unwrap();
        let pod = &pods_of(&cluster.pod_sets(&PodInputs::default()))[0];
        pod.spec.as_ref().unwrap().containers[0]
            .env
            .clone()
            .unwrap()
            .into_iter()
            .filter(|var| var.name.contains("HEAP"))
            .map(|var| (var.name, var.value.unwrap_or_default()))
            .collect()
    };
    assert_eq!(
        heap(json!({"resources": {"limits": {"memory": "4Gi"}}})),
        BTreeMap::from([
            (
                "STRIMZI_DYNAMIC_HEAP_MAX".to_owned(),
                "5368709120".to_owned()
            ),
            (
                "STRIMZI_DYNAMIC_HEAP_PERCENTAGE".to_owned(),
                "50".to_owned()
            ),
        ])
    );
    assert_eq!(
        heap(json!({})),
        BTreeMap::from([("KAFKA_HEAP_OPTS".to_owned(), "-Xms128M".to_owned())])
    );
    assert_eq!(
        heap(json!({"jvmOptions": {"-Xms": "1g"}})),
        BTreeMap::from([("KAFKA_HEAP_OPTS".to_owned(), "-Xms1g".to_owned())])
    );
}

#[test]
fn pool_status_reports_ids_roles_and_selector() {
    use serde_json::json;
    let cluster = resolve_json(
        kafka_json(json!({"config": {"default.replication.factor": 1, "min.insync.replicas": 1}})),
        vec![pool_json("b", 3, &["broker", "controller"], json!({}))],
    )
    .unwrap();
    let status = cluster.pool_status(&cluster.pools[0]);
    assert_eq!(status.node_ids, Some(vec![0, 1, 2]));
    assert_eq!(status.replicas, Some(3));
    assert_eq!(status.cluster_id.as_deref(), Some("id"));
    assert_eq!(
        status.label_selector.as_deref(),
        Some(
            "strimzi.io/cluster=c,strimzi.io/kind=Kafka,strimzi.io/name=c-kafka,strimzi.io/pool-name=b"
        )
    );
    let roles: Vec<String> = status
        .roles
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(roles, ["controller", "broker"]);
}

#[test]
fn controller_only_pods_have_no_client_ports_and_no_listener_thumbprints() {
    let pools = [
        ("brokers".to_owned(), 1, true, false),
        ("controllers".to_owned(), 1, false, true),
    ];
    let cluster = generated_cluster("c", &pools, &[("plain".to_owned(), 9092)]).unwrap();
    let inputs = PodInputs {
        custom_listener_cert_thumbprints: Some("{external=abc}".into()),
        ..PodInputs::default()
    };
    for pod in pods_of(&cluster.pod_sets(&inputs)) {
        let name = pod.metadata.name.clone().unwrap();
        let annotations = pod.metadata.annotations.clone().unwrap();
        let ports: Vec<String> = pod.spec.unwrap().containers[0]
            .ports
            .clone()
            .unwrap()
            .into_iter()
            .filter_map(|port| port.name)
            .collect();
        let thumbprints = annotations.get("strimzi.io/custom-listener-cert-thumbprints");
        if name == "c-brokers-0" {
            assert_eq!(thumbprints.map(String::as_str), Some("{external=abc}"));
            assert_eq!(
                ports,
                [
                    "tcp-kafkaagent",
                    "tcp-replication",
                    "tcp-clients",
                    "tcp-prometheus",
                    "jmx"
                ]
            );
        } else {
            assert_eq!(thumbprints, None);
            assert_eq!(
                ports,
                ["tcp-kafkaagent", "tcp-ctrlplane", "tcp-prometheus", "jmx"]
            );
        }
    }
}

/// Kafka pods with persistent volumes get `fsGroup: 0`, so that the Kafka user can write to
/// them, except on OpenShift (a cluster serving `route.openshift.io/v1`), which gives pods a
/// security context of its own; a template's context is kept either way.
#[test]
fn persistent_pods_get_fs_group_zero_except_on_openshift() {
    use serde_json::json;
    use strimzi_cluster_operator::model::PlatformFeatures;
    let served = |groups: serde_json::Value| {
        PlatformFeatures::from_api_groups(
            &serde_json::from_value(json!({"groups": groups})).unwrap(),
        )
    };
    let group = |name: &str, version: &str| json!({"name": name, "versions": [{"groupVersion": format!("{name}/{version}"), "version": version}]});
    assert!(
        served(json!([
            group("apps", "v1"),
            group("route.openshift.io", "v1")
        ]))
        .openshift
    );
    assert!(!served(json!([group("apps", "v1")])).openshift);
    assert!(!served(json!([group("route.openshift.io", "v2")])).openshift);

    let fs_group = |openshift: bool, pool: serde_json::Value| {
        let mut cluster = resolve_json(
            kafka_json(json!({})),
            vec![pool_json("b", 1, &["broker", "controller"], pool)],
        )
        .unwrap();
        cluster.config.platform = PlatformFeatures { openshift };
        let pods = pods_of(&cluster.pod_sets(&PodInputs::default()));
        let context = pods[0].spec.as_ref().unwrap().security_context.clone();
        context.map(|context| context.fs_group)
    };
    let jbod = json!({"storage": {"type": "jbod", "volumes": [
        {"id": 0, "type": "ephemeral"}, {"id": 1, "type": "persistent-claim", "size": "1Gi"}]}});
    let ephemeral = json!({"storage": {"type": "ephemeral"}});
    let template = json!({"template": {"pod": {"securityContext": {"fsGroup": 7}}}});
    assert_eq!(fs_group(false, json!({})), Some(Some(0)));
    assert_eq!(fs_group(false, jbod.clone()), Some(Some(0)));
    assert_eq!(fs_group(true, json!({})), None);
    assert_eq!(fs_group(true, jbod), None);
    assert_eq!(fs_group(false, ephemeral), None);
    assert_eq!(fs_group(false, template.clone()), Some(Some(7)));
    assert_eq!(fs_group(true, template), Some(Some(7)));
}
