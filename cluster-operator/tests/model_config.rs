//! Snapshots of each node's `server.config` and `log4j2.properties` for Strimzi's example
//! Kafka clusters, and properties of the generated configuration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_cluster_operator::model::config::ExternalConfiguration;
use strimzi_cluster_operator::model::config::options::UserOptions;
use strimzi_cluster_operator::model::listeners::{AdvertisedAddress, ListenerAddresses};
use strimzi_cluster_operator::model::{KafkaCluster, KafkaVersion, NodePool};
use strimzi_tests::reference;

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
                owner: None,
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
        user_options: UserOptions::of(&kafka.spec.kafka),
        kafka: kafka.clone(),
        cluster_id: "CLUSTER-ID".to_owned(),
        version: KafkaVersion {
            version: "4.3.1".to_owned(),
            metadata_version: "4.3-IV0".to_owned(),
            image: "quay.io/strimzi/kafka:1.2.0-kafka-4.3.1".to_owned(),
        },
        pools: node_pools,
        config: model_support::default_model_config(),
        warnings: Vec::new(),
        quorum_voters: None,
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
            let own = model_support::pools_of(&kafka, &pools);
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
            (
                document["metadata"]["name"].as_str().unwrap().to_owned(),
                data,
            )
        })
        .collect();
    Example {
        clusters,
        config_maps,
    }
}

/// The example files with Kafka clusters that these tests cover: Strimzi's and ours.
fn example_files() -> Vec<std::path::PathBuf> {
    let dir = reference::reference_examples_dir();
    ["kafka", "security", "metrics", "cruise-control"]
        .iter()
        .flat_map(|folder| reference::yaml_files(&dir.join(folder)))
        .chain(reference::yaml_files(
            &reference::own_examples_dir().join("kafka"),
        ))
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            text.contains("\nkind: Kafka\n") || text.starts_with("kind: Kafka\n")
        })
        .collect()
}

/// The content of the user ConfigMaps an example cluster refers to.
fn external(example: &Example, cluster: &KafkaCluster) -> ExternalConfiguration {
    let lookup = |reference: Option<&k8s_openapi::api::core::v1::ConfigMapKeySelector>| {
        reference.and_then(|reference| {
            example
                .config_maps
                .get(&reference.name)
                .and_then(|data| data.get(&reference.key))
                .cloned()
        })
    };
    let metrics = match &cluster.spec.metrics_config {
        Some(strimzi_api::common::MetricsConfig::JmxPrometheusExporter(exporter)) => lookup(
            exporter
                .value_from
                .as_ref()
                .and_then(|value_from| value_from.config_map_key_ref.as_ref()),
        ),
        _ => None,
    };
    let logging = match &cluster.spec.logging {
        Some(strimzi_api::common::Logging::External(logging)) => lookup(
            logging
                .value_from
                .as_ref()
                .and_then(|value_from| value_from.config_map_key_ref.as_ref()),
        ),
        _ => None,
    };
    ExternalConfiguration { logging, metrics }
}

#[test]
fn snapshots_of_every_example_node() {
    let files = example_files();
    assert!(files.len() >= 10, "too few example files: {files:?}");
    let mut covered = 0;
    for path in files {
        let example = read_example(&path);
        let (prefix, relative) = match path.strip_prefix(reference::reference_examples_dir()) {
            Ok(relative) => ("", relative.to_path_buf()),
            Err(_) => (
                "own__",
                path.strip_prefix(reference::own_examples_dir())
                    .unwrap()
                    .to_path_buf(),
            ),
        };
        let relative = relative
            .with_extension("")
            .display()
            .to_string()
            .replace('/', "__");
        for cluster in &example.clusters {
            let addresses = ListenerAddresses::default();
            let external = external(&example, cluster);
            let mut text = String::new();
            // A broken user ConfigMap is part of the snapshot: the reconciliation reports it.
            for check in [
                cluster.validate_configuration(),
                cluster.validate_external_configuration(&external),
            ] {
                if let Err(error) = check {
                    text.push_str(&format!("===== error {} =====\n{error}\n", error.reason()));
                }
            }
            for config_map in cluster.config_maps(&addresses, &external) {
                let data = config_map.data.unwrap();
                text.push_str(&format!(
                    "===== {} server.config =====\n{}\n",
                    config_map.metadata.name.unwrap(),
                    data["server.config"]
                ));
                covered += 1;
            }
            let logging = cluster
                .logging_configuration(external.logging.as_deref())
                .unwrap_or_else(|error| error.to_string());
            text.push_str(&format!("===== log4j2.properties =====\n{logging}"));
            insta::assert_snapshot!(format!("{prefix}{relative}__{}", cluster.name), text);
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
        data["server.config"]
            .contains("metric.reporters=org.apache.kafka.common.metrics.JmxReporter")
    );
    let mut metadata = first.metadata.clone();
    metadata.labels.as_mut().unwrap().remove("unused");
    insta::assert_yaml_snapshot!(metadata);
}

#[test]
fn hashes_follow_listeners_addresses_and_plugin_options() {
    let path = reference::reference_examples_dir().join("kafka/kafka-persistent.yaml");
    let cluster = read_example(&path).clusters[0].clone();
    let addresses = ListenerAddresses::default();
    let before = cluster.configuration_hashes(&addresses);
    assert_eq!(before.len(), cluster.nodes().count());
    assert!(before.values().all(|hash| hash.len() == 8));
    let changed = |after: BTreeMap<String, String>| -> BTreeSet<String> {
        before
            .iter()
            .filter(|(pod, hash)| after[*pod] != **hash)
            .map(|(pod, _)| pod.clone())
            .collect()
    };
    let every_node: BTreeSet<String> = before.keys().cloned().collect();
    let brokers: BTreeSet<String> = cluster.brokers().map(|node| node.pod_name).collect();

    // Kafka's own options, dynamically updatable or not, are not part of the hash.
    let mut known = cluster.clone();
    let config = known.spec.config.get_or_insert_with(Default::default);
    config.insert("log.retention.ms".to_owned(), Value::from(1000));
    config.insert("num.partitions".to_owned(), Value::from(7));
    known.user_options = UserOptions::of(&known.spec);
    assert_eq!(
        changed(known.configuration_hashes(&addresses)),
        BTreeSet::new()
    );

    // A plugin's option is, on every node.
    let mut plugin = cluster.clone();
    let config = plugin.spec.config.get_or_insert_with(Default::default);
    config.insert("my.plugin.option".to_owned(), Value::from("on"));
    plugin.user_options = UserOptions::of(&plugin.spec);
    assert_eq!(changed(plugin.configuration_hashes(&addresses)), every_node);

    // The user's listeners are, on the brokers.
    let mut moved_port = cluster.clone();
    moved_port.spec.listeners[0].port = 9094;
    assert_eq!(
        changed(moved_port.configuration_hashes(&addresses)),
        brokers
    );

    // So is the address one broker advertises.
    let broker = cluster.brokers().next().unwrap();
    let mut advertised = addresses.clone();
    advertised.advertised.insert(
        (cluster.spec.listeners[0].name.clone(), broker.node_id),
        AdvertisedAddress {
            host: "broker.example.com".to_owned(),
            port: 443,
        },
    );
    assert_eq!(
        changed(cluster.configuration_hashes(&advertised)),
        BTreeSet::from([broker.pod_name])
    );
}

/// Keys the operator keeps for itself, built from the forbidden prefixes.
fn forbidden_key() -> impl Strategy<Value = String> {
    let prefixes: Vec<&'static str> =
        strimzi_cluster_operator::model::config::options::FORBIDDEN_PREFIXES.to_vec();
    (proptest::sample::select(prefixes), "[a-z.]{0,12}")
        .prop_map(|(prefix, suffix)| format!("{prefix}{suffix}"))
        .prop_filter("exceptions are allowed", |key| {
            strimzi_cluster_operator::model::config::options::is_forbidden(key)
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
        cluster.user_options = UserOptions::of(&cluster.spec);
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

/// A cluster of one dual-role pool (`pool`, 3 nodes, JBOD volumes 2 and 1) from `kafka`
/// (the `spec.kafka` section as YAML).
fn custom_cluster(kafka: &str) -> KafkaCluster {
    let indented: String = kafka.lines().map(|line| format!("    {line}\n")).collect();
    let kafka: Kafka = strimzi_api::document::from_yaml(&format!(
        "apiVersion: kafka.strimzi.io/v1\nkind: Kafka\nmetadata:\n  name: c\n  namespace: ns\nspec:\n  kafka:\n{indented}"
    ))
    .unwrap();
    let pool: KafkaNodePool = strimzi_api::document::from_yaml(
        "apiVersion: kafka.strimzi.io/v1\nkind: KafkaNodePool\nmetadata:\n  name: pool\n  labels:\n    strimzi.io/cluster: c\nspec:\n  replicas: 3\n  roles: [controller, broker]\n  storage:\n    type: jbod\n    volumes:\n      - {id: 2, type: ephemeral}\n      - {id: 1, type: persistent-claim, size: 1Gi}\n",
    )
    .unwrap();
    cluster(&kafka, &[pool])
}

/// `server.config` of node 0 of `cluster`.
fn node_zero(cluster: &KafkaCluster, addresses: &ListenerAddresses) -> String {
    let node = cluster.nodes().next().unwrap();
    cluster.server_config(&node, addresses)
}

const PLAIN: &str = "listeners:\n  - {name: plain, port: 9092, type: internal, tls: false}\n";

#[test]
fn jbod_log_dirs_and_metadata_on_the_lowest_volume() {
    let config = node_zero(&custom_cluster(PLAIN), &ListenerAddresses::default());
    assert!(config.contains(
        "\nlog.dirs=/var/lib/kafka/data-2/kafka-log0,/var/lib/kafka/data-1/kafka-log0\n"
    ));
    assert!(config.contains("\nmetadata.log.dir=/var/lib/kafka/data-1/kafka-log0\n"));
}

#[test]
fn rack_placeholders_by_type() {
    let topology = custom_cluster(&format!("{PLAIN}rack: {{topologyKey: zone}}\n"));
    assert!(
        node_zero(&topology, &ListenerAddresses::default())
            .contains("\nbroker.rack=${strimzidir:/opt/kafka/init:rack.id}\n")
    );
    let variable = custom_cluster(&format!(
        "{PLAIN}rack: {{type: environment-variable, envVarName: MY_ZONE}}\n"
    ));
    assert!(
        node_zero(&variable, &ListenerAddresses::default())
            .contains("\nbroker.rack=${strimzienv:MY_ZONE}\n")
    );
}

#[test]
fn listener_security_and_advertised_addresses() {
    let cluster = custom_cluster(
        "listeners:
  - name: scram
    port: 9094
    type: internal
    tls: false
    authentication: {type: scram-sha-512}
    configuration: {maxConnections: 10, maxConnectionCreationRate: 2}
  - name: ext
    port: 9095
    type: loadbalancer
    tls: true
    authentication: {type: custom, sasl: true, listenerConfig: {sasl.enabled.mechanisms: PLAIN, ssl.keystore.path: foo}}
    configuration:
      brokerCertChainAndKey: {secretName: my-cert, certificate: tls.crt, key: tls.key}
",
    );
    let mut addresses = ListenerAddresses::default();
    addresses.advertised.insert(
        ("ext".to_owned(), 0),
        strimzi_cluster_operator::model::listeners::AdvertisedAddress {
            host: "broker-0.example.com".to_owned(),
            port: 443,
        },
    );
    let config = node_zero(&cluster, &addresses);
    assert!(!config.contains("ssl.keystore.path"), "{config}");
    assert_eq!(
        cluster.configuration_warnings()[0].reason,
        "ForbiddenConfigurationOption"
    );
    for line in [
        "listener.name.scram-9094.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.scram-9094.sasl.enabled.mechanisms=SCRAM-SHA-512",
        "listener.name.scram-9094.max.connections=10",
        "listener.name.scram-9094.max.connection.creation.rate=2",
        "listener.name.ext-9095.sasl.enabled.mechanisms=PLAIN",
        "listener.name.ext-9095.ssl.keystore.certificate.chain=${strimzisecrets:ns/c-pool-0:ext-9095.crt}",
        "listener.name.ext-9095.ssl.keystore.key=${strimzisecrets:ns/c-pool-0:ext-9095.key}",
        "listener.security.protocol.map=CONTROLPLANE-9090:SSL,REPLICATION-9091:SSL,SCRAM-9094:SASL_PLAINTEXT,EXT-9095:SASL_SSL",
        "advertised.listeners=CONTROLPLANE-9090://c-pool-0.c-kafka-brokers.ns.svc:9090,REPLICATION-9091://c-pool-0.c-kafka-brokers.ns.svc:9091,SCRAM-9094://c-pool-0.c-kafka-brokers.ns.svc:9094,EXT-9095://broker-0.example.com:443",
    ] {
        assert!(
            config.lines().any(|l| l == line),
            "missing {line} in\n{config}"
        );
    }
}

#[test]
fn custom_authorization_quotas_and_tiered_storage() {
    let cluster = custom_cluster(&format!(
        "{PLAIN}authorization: {{type: custom, authorizerClass: my.Authorizer, superUsers: [CN=admin]}}
quotas: {{type: strimzi, producerByteRate: 100, minAvailableRatioPerVolume: 0.1, excludedPrincipals: ['User:me']}}
tieredStorage:
  type: custom
  remoteStorageManager: {{className: my.Rsm, classPath: /opt/rsm/*, config: {{bucket: b}}}}
"
    ));
    let config = node_zero(&cluster, &ListenerAddresses::default());
    for line in [
        "authorizer.class.name=my.Authorizer",
        "super.users=User:CN=c-kafka,O=io.strimzi;User:CN=c-entity-topic-operator,O=io.strimzi;User:CN=c-entity-user-operator,O=io.strimzi;User:CN=c-kafka-exporter,O=io.strimzi;User:CN=c-cruise-control,O=io.strimzi;User:CN=cluster-operator,O=io.strimzi;User:CN=admin",
        "client.quota.callback.class=io.strimzi.kafka.quotas.StaticQuotaCallback",
        "client.quota.callback.static.kafka.admin.bootstrap.servers=c-kafka-brokers:9091",
        "client.quota.callback.static.produce=100",
        "client.quota.callback.static.storage.per.volume.limit.min.available.ratio=0.1",
        "client.quota.callback.static.excluded.principal.name.list=User:CN=c-kafka,O=io.strimzi;User:CN=c-cruise-control,O=io.strimzi;User:me",
        "remote.log.storage.manager.class.name=my.Rsm",
        "remote.log.storage.manager.class.path=/opt/rsm/*",
        "rsm.config.bucket=b",
        "remote.log.metadata.manager.listener.name=REPLICATION-9091",
    ] {
        assert!(
            config.lines().any(|l| l == line),
            "missing {line} in\n{config}"
        );
    }
}

#[test]
fn user_providers_and_reporters_are_merged() {
    let cluster = custom_cluster(&format!(
        "{PLAIN}metricsConfig: {{type: strimziMetricsReporter, values: {{allowList: ['kafka_log.*', 'kafka_network.*']}}}}
config:
  config.providers: env
  config.providers.env.class: org.apache.kafka.common.config.provider.EnvVarConfigProvider
  metric.reporters: my.Reporter
"
    ));
    let config = node_zero(&cluster, &ListenerAddresses::default());
    for line in [
        "config.providers=env,strimzienv,strimzisecrets,strimzifile,strimzidir",
        "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider",
        "metric.reporters=my.Reporter,io.strimzi.kafka.metrics.prometheus.ServerKafkaMetricsReporter",
        "kafka.metrics.reporters=io.strimzi.kafka.metrics.prometheus.ServerYammerMetricsReporter",
        "prometheus.metrics.reporter.allowlist=kafka_log.*,kafka_network.*",
    ] {
        assert!(
            config.lines().any(|l| l == line),
            "missing {line} in\n{config}"
        );
    }
    assert_eq!(config.matches("metric.reporters=").count(), 1);
    assert_eq!(config.matches("\nconfig.providers=").count(), 1);
}

#[test]
fn inline_and_external_logging() {
    let inline = custom_cluster(&format!(
        "{PLAIN}logging: {{type: inline, loggers: {{rootLogger.level: DEBUG, logger.x.name: x}}}}\n"
    ));
    let text = inline.logging_configuration(None).unwrap();
    assert!(text.starts_with("# Do not change this generated file."));
    assert!(text.contains("\nrootLogger.level=DEBUG\n"));
    assert!(text.contains("\nlogger.x.name=x\n"));
    assert!(text.ends_with("\nmonitorInterval=30\n"));

    let external = custom_cluster(&format!(
        "{PLAIN}logging: {{type: external, valueFrom: {{configMapKeyRef: {{name: logs, key: log4j2.properties}}}}}}\n"
    ));
    assert_eq!(
        external
            .logging_configuration(Some("rootLogger.level=WARN"))
            .unwrap(),
        "rootLogger.level=WARN\nmonitorInterval=30\n"
    );
    assert_eq!(
        external
            .logging_configuration(Some("monitorInterval=5\nrootLogger.level=WARN\n"))
            .unwrap(),
        "monitorInterval=5\nrootLogger.level=WARN\n"
    );
    let error = external.logging_configuration(None).unwrap_err();
    assert!(error.to_string().contains("ConfigMap logs"), "{error}");
    assert!(
        external
            .validate_external_configuration(&ExternalConfiguration::default())
            .is_err()
    );
}

#[test]
fn invalid_configuration_is_reported() {
    let cluster = custom_cluster(&format!(
        "{PLAIN}config: {{config.providers: 'env,strimzienv'}}\n"
    ));
    let error = cluster.validate_configuration().unwrap_err();
    assert_eq!(error.reason(), "InvalidConfigurationException");
    assert!(
        error
            .to_string()
            .contains("config.provider strimzienv not permitted")
    );
    assert!(custom_cluster(PLAIN).validate_configuration().is_ok());

    let path = reference::reference_examples_dir().join("kafka/kafka-single-node.yaml");
    let mut single = read_example(&path).clusters[0].clone();
    single.kafka.spec.cruise_control = Some(Default::default());
    assert!(
        single
            .validate_configuration()
            .unwrap_err()
            .to_string()
            .contains("only one broker")
    );
}

#[test]
fn dynamic_options_are_listed_for_the_operator() {
    let cluster = custom_cluster(&format!(
        "{PLAIN}config: {{log.retention.ms: 1000, num.partitions: 3, min.insync.replicas: 2}}\n"
    ));
    assert_eq!(
        cluster.dynamic_configuration(),
        [
            ("min.insync.replicas".to_owned(), "2".to_owned()),
            ("log.retention.ms".to_owned(), "1000".to_owned())
        ]
    );
}

#[test]
fn hash_stub_is_the_sha1_prefix() {
    // printf 'abc' | sha1sum → a9993e364706816aba3e25717850c26c9cd0d89d
    assert_eq!(
        strimzi_cluster_operator::model::config::hash_stub("abc"),
        "a9993e36"
    );
}

#[test]
fn replication_settings_above_the_broker_count_are_rejected() {
    let cluster = custom_cluster(&format!(
        "{PLAIN}config: {{default.replication.factor: 4}}\n"
    ));
    assert_eq!(
        cluster.validate_configuration().unwrap_err().to_string(),
        "Kafka configuration option 'default.replication.factor' should be set to 3 or less because this cluster has only 3 Kafka broker(s)."
    );
    let cluster = custom_cluster(&format!(
        "{PLAIN}config: {{transaction.state.log.min.isr: two}}\n"
    ));
    assert!(cluster.validate_configuration().is_err());
    let cluster = custom_cluster(&format!(
        "{PLAIN}quotas: {{type: strimzi, minAvailableBytesPerVolume: 1, minAvailableRatioPerVolume: 0.1}}\n"
    ));
    assert!(
        cluster
            .validate_configuration()
            .unwrap_err()
            .to_string()
            .contains("mutually exclusive")
    );
}

#[test]
fn quota_callback_in_config_yields_to_the_quotas_plugin() {
    let cluster = custom_cluster(&format!(
        "{PLAIN}quotas: {{type: kafka, producerByteRate: 10}}\nconfig: {{client.quota.callback.class: my.Callback}}\n"
    ));
    assert!(!node_zero(&cluster, &ListenerAddresses::default()).contains("my.Callback"));
    let warnings = cluster.configuration_warnings();
    assert_eq!(warnings[0].reason, "QuotasPluginConflict");
    assert!(warnings[0].message.contains("`kafka` plugin"));
}

#[test]
fn options_unused_in_kraft_are_warned_about() {
    let cluster = custom_cluster(&format!(
        "{PLAIN}config: {{inter.broker.protocol.version: '3.9', log.message.format.version: '3.9', default.replication.factor: 3, min.insync.replicas: 2}}\n"
    ));
    let reasons: Vec<String> = cluster
        .configuration_warnings()
        .into_iter()
        .map(|warning| warning.reason)
        .collect();
    assert_eq!(
        reasons,
        [
            "KafkaInterBrokerProtocolVersionInKRaft",
            "KafkaLogMessageFormatVersionInKRaft"
        ]
    );
}
