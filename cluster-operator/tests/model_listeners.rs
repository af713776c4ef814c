//! The listener objects, addresses, node certificate requests and policies of every Kafka in
//! Strimzi's examples and ours, as snapshots, plus properties over generated listeners.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};
use strimzi_api::kafka::{GenericKafkaListener, Kafka, KafkaListenerType};
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_certificate_manager::leaf::LeafSpec;
use strimzi_cluster_operator::model::listeners::{ListenerAddresses, ObservedListeners};
use strimzi_cluster_operator::model::{KafkaCluster, ModelConfig, ModelInput, resolve};
use strimzi_operator_common::labels::is_label_value;
use strimzi_tests::reference;

const NAMESPACE: &str = "myproject";
const CA_PEM: &str = "-----BEGIN CERTIFICATE-----\ncluster-ca\n-----END CERTIFICATE-----\n";

/// A cluster as `resolve` makes it, in namespace `myproject`, with fixed UIDs so the owner
/// references show.
fn cluster(kafka: &Kafka, pools: &[KafkaNodePool], config: ModelConfig) -> KafkaCluster {
    let mut kafka = kafka.clone();
    kafka
        .metadata
        .namespace
        .get_or_insert_with(|| NAMESPACE.to_owned());
    kafka.metadata.uid = Some("00000000-0000-0000-0000-00000000000a".to_owned());
    let pools: Vec<KafkaNodePool> = pools
        .iter()
        .enumerate()
        .map(|(index, pool)| {
            let mut pool = pool.clone();
            pool.metadata.namespace = kafka.metadata.namespace.clone();
            pool.metadata.uid = Some(format!("00000000-0000-0000-0000-{index:012}"));
            pool
        })
        .collect();
    resolve(&ModelInput {
        kafka: &kafka,
        pools: &pools,
        cluster_id: "cluster-id",
        metadata_version_in_use: None,
        config: &config,
    })
    .unwrap_or_else(|error| {
        panic!(
            "{}: {error}",
            kafka.metadata.name.as_deref().unwrap_or_default()
        )
    })
}

/// Every Kafka of a multi-document YAML file with the node pools labelled for it.
fn clusters_in(path: &Path) -> Vec<KafkaCluster> {
    let text = std::fs::read_to_string(path).unwrap();
    let documents: Vec<Value> = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).unwrap())
        .filter(|document| !document.is_null())
        .collect();
    let of_kind = |kind: &'static str| {
        documents
            .iter()
            .filter(move |document| document["kind"] == kind)
            .cloned()
    };
    let pools: Vec<KafkaNodePool> = of_kind("KafkaNodePool")
        .map(|document| serde_json::from_value(document).unwrap())
        .collect();
    of_kind("Kafka")
        .map(|document| {
            let kafka: Kafka = serde_json::from_value(document)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            let own_pools = model_support::pools_of(&kafka, &pools);
            cluster(&kafka, &own_pools, model_support::default_model_config())
        })
        .collect()
}

fn example_files() -> Vec<std::path::PathBuf> {
    let mut files = reference::yaml_files(&reference::reference_examples_dir());
    files.extend(reference::yaml_files(
        &reference::own_examples_dir().join("kafka"),
    ));
    files
}

fn leaf_view(spec: &LeafSpec) -> Value {
    json!({
        "name": spec.name,
        "commonName": spec.common_name,
        "organization": spec.organization,
        "dnsNames": spec.dns_names,
        "ipAddresses": spec.ip_addresses.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}

fn addresses_view(addresses: &ListenerAddresses) -> Value {
    let advertised: BTreeMap<String, String> = addresses
        .advertised
        .iter()
        .map(|((listener, node), address)| {
            (
                format!("{listener}/{node}"),
                format!("{}:{}", address.host, address.port),
            )
        })
        .collect();
    json!({
        "advertised": advertised,
        "bootstrapNodePorts": addresses.bootstrap_node_ports,
        "pending": addresses.pending,
    })
}

fn snapshot_name(path: &Path, cluster: &str) -> String {
    let file = path.file_stem().unwrap().to_string_lossy();
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .unwrap()
        .to_string_lossy();
    let origin = if path.starts_with(reference::own_examples_dir()) {
        "ours"
    } else {
        "strimzi"
    };
    format!("{origin}-{folder}-{file}-{cluster}")
}

#[test]
fn snapshots_of_every_example_kafka() {
    let mut count = 0;
    for path in example_files() {
        for cluster in clusters_in(&path) {
            count += 1;
            cluster
                .validate_listeners()
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            let objects = cluster.listener_objects();
            let addresses =
                cluster.listener_addresses(&model_support::observed_listeners(&objects, NAMESPACE));
            assert!(
                addresses.pending.is_empty(),
                "{}: {:?}",
                path.display(),
                addresses.pending
            );
            let snapshot = json!({
                "services": objects.services,
                "ingresses": objects.ingresses,
                "routes": objects.routes,
                "tlsRoutes": objects.tls_routes,
                "serviceAccount": cluster.service_account(),
                "podDisruptionBudget": cluster.pod_disruption_budget(),
                "networkPolicy": cluster.network_policy(),
                "role": cluster.kafka_role(),
                "roleBinding": cluster.kafka_role_binding(),
                "initClusterRoleBinding": cluster.init_cluster_role_binding(),
                "addresses": addresses_view(&addresses),
                "listenerStatus": cluster.listener_status(&addresses, CA_PEM, &BTreeMap::new()),
                "certificates": cluster
                    .node_certificate_specs(&addresses)
                    .iter()
                    .map(leaf_view)
                    .collect::<Vec<_>>(),
            });
            insta::assert_yaml_snapshot!(snapshot_name(&path, &cluster.name), snapshot);
        }
    }
    assert!(count >= 20, "only {count} Kafkas found in the examples");
}

fn all_types_cluster() -> KafkaCluster {
    let path = reference::own_examples_dir().join("kafka/kafka-listeners-all-types.yaml");
    clusters_in(&path).remove(0)
}

#[test]
fn only_brokers_get_per_node_objects() {
    let cluster = all_types_cluster();
    let objects = cluster.listener_objects();
    let names: Vec<String> = objects
        .services
        .iter()
        .filter_map(|service| service.metadata.name.clone())
        .collect();
    assert!(names.contains(&"edge-cluster-brokers-lb-2".to_owned()));
    assert!(
        !names
            .iter()
            .any(|name| name.starts_with("edge-cluster-controllers-"))
    );
    // bootstrap + brokers + 6 external bootstrap + 6 listeners x 3 brokers
    assert_eq!(names.len(), 2 + 6 + 18);
    assert_eq!(objects.ingresses.len(), 4);
    assert_eq!(objects.routes.len(), 4);
    assert_eq!(objects.tls_routes.len(), 4);
}

#[test]
fn listeners_wait_for_kubernetes() {
    let cluster = all_types_cluster();
    let objects = cluster.listener_objects();
    let unassigned = ObservedListeners {
        services: objects.services.clone(),
        ingresses: objects.ingresses.clone(),
        routes: objects.routes.clone(),
    };
    let addresses = cluster.listener_addresses(&unassigned);
    assert_eq!(
        addresses.pending,
        vec!["nodeport", "lb", "ingress", "route"]
    );
    assert!(
        addresses
            .advertised
            .contains_key(&("tlsroute".to_owned(), 0))
    );
    assert!(!addresses.advertised.contains_key(&("lb".to_owned(), 0)));
}

#[test]
fn advertised_overrides_win_and_join_the_certificate() {
    let mut cluster = all_types_cluster();
    let lb = cluster
        .spec
        .listeners
        .iter_mut()
        .find(|listener| listener.r#type == KafkaListenerType::LoadBalancer)
        .unwrap();
    lb.configuration.as_mut().unwrap().brokers = Some(
        serde_json::from_value(json!([
            { "broker": 1, "advertisedHost": "kafka-1.example.com", "advertisedPort": 19096 }
        ]))
        .unwrap(),
    );
    let addresses = cluster.listener_addresses(&model_support::observed_listeners(
        &cluster.listener_objects(),
        NAMESPACE,
    ));
    let advertised = &addresses.advertised[&("lb".to_owned(), 1)];
    assert_eq!(advertised.host, "kafka-1.example.com");
    assert_eq!(advertised.port, 19096);
    let specs = cluster.node_certificate_specs(&addresses);
    let broker_1 = specs
        .iter()
        .find(|spec| spec.name == "edge-cluster-brokers-1")
        .unwrap();
    assert!(broker_1.dns_names.contains("kafka-1.example.com"));
    assert!(
        broker_1
            .dns_names
            .contains("edge-cluster-brokers-lb-1.lb.example.com")
    );
    let controller = specs
        .iter()
        .find(|spec| spec.name == "edge-cluster-controllers-3")
        .unwrap();
    assert!(!controller.dns_names.contains("kafka.edge.example.com"));
    assert!(controller.ip_addresses.is_empty());
}

#[test]
fn network_policy_follows_operator_namespace_settings() {
    let mut cluster = all_types_cluster();
    let operator_peer = |cluster: &KafkaCluster| {
        let policy = cluster.network_policy().unwrap();
        let rules = policy.spec.unwrap().ingress.unwrap();
        rules[2].from.as_ref().unwrap()[0].clone()
    };
    assert_eq!(
        serde_json::to_value(operator_peer(&cluster).namespace_selector).unwrap(),
        json!({})
    );
    cluster.config.operator_namespace_labels =
        Some(BTreeMap::from([("team".to_owned(), "platform".to_owned())]));
    assert_eq!(
        serde_json::to_value(operator_peer(&cluster).namespace_selector).unwrap(),
        json!({ "matchLabels": { "team": "platform" } })
    );
    cluster.config.operator_namespace = NAMESPACE.to_owned();
    assert!(operator_peer(&cluster).namespace_selector.is_none());
    cluster.config.network_policy_generation = false;
    assert!(cluster.network_policy().is_none());
}

#[test]
fn jmx_secret_keeps_existing_credentials() {
    let mut cluster = all_types_cluster();
    assert!(cluster.jmx_secret(None).is_none());
    cluster.spec.jmx_options =
        Some(serde_json::from_value(json!({ "authentication": { "type": "password" } })).unwrap());
    let first = cluster.jmx_secret(None).unwrap();
    assert_eq!(
        first.metadata.name.as_deref(),
        Some("edge-cluster-kafka-jmx")
    );
    let data = first.data.clone().unwrap();
    assert_eq!(data["jmx-username"].0.len(), 16);
    assert_ne!(data["jmx-username"], data["jmx-password"]);
    let again = cluster.jmx_secret(Some(&first)).unwrap();
    assert_eq!(again.data, first.data);
    let headless = cluster.brokers_service();
    assert!(
        headless
            .spec
            .unwrap()
            .ports
            .unwrap()
            .iter()
            .any(|port| port.port == 9999 && port.name.as_deref() == Some("jmx"))
    );
}

#[test]
fn pdb_uses_the_template_max_unavailable() {
    let mut cluster = all_types_cluster();
    let min_available = |cluster: &KafkaCluster| {
        serde_json::to_value(
            cluster
                .pod_disruption_budget()
                .unwrap()
                .spec
                .unwrap()
                .min_available,
        )
        .unwrap()
    };
    assert_eq!(min_available(&cluster), json!(5));
    for (max_unavailable, expected) in [(0, 6), (2, 4), (10, 0)] {
        cluster
            .spec
            .template
            .as_mut()
            .unwrap()
            .pod_disruption_budget =
            Some(serde_json::from_value(json!({ "maxUnavailable": max_unavailable })).unwrap());
        assert_eq!(min_available(&cluster), json!(expected));
    }
}

/// `STRIMZI_POD_DISRUPTION_BUDGET_GENERATION=false`: no PodDisruptionBudget for the Kafka
/// nodes.
#[test]
fn no_pdb_when_their_generation_is_off() {
    let mut cluster = all_types_cluster();
    cluster.config.pod_disruption_budget_generation = false;
    assert!(cluster.pod_disruption_budget().is_none());
}

#[test]
fn trust_bundle_holds_both_cas() {
    let cluster = all_types_cluster();
    let secret = cluster.trust_bundle_secret("cluster pem", "clients pem", &Default::default());
    assert_eq!(
        secret.metadata.name.as_deref(),
        Some("edge-cluster-trustbundle")
    );
    let data = secret.data.unwrap();
    assert_eq!(data["cluster-ca.crt"].0, b"cluster pem");
    assert_eq!(data["clients-ca.crt"].0, b"clients pem");
    let role = cluster.kafka_role();
    assert!(
        role.rules.unwrap()[0]
            .resource_names
            .as_ref()
            .unwrap()
            .contains(&"edge-cluster-trustbundle".to_owned())
    );
}

#[test]
fn node_certificate_secret_is_named_after_the_pod() {
    let cluster = all_types_cluster();
    let node = cluster.nodes().next().unwrap();
    let secret = cluster.node_certificate_secret(&node, BTreeMap::new(), 3);
    assert_eq!(
        secret.metadata.name.as_deref(),
        Some("edge-cluster-brokers-0")
    );
    assert_eq!(
        secret.metadata.annotations.unwrap()["strimzi.io/cluster-ca-cert-generation"],
        "3"
    );
    assert_eq!(
        secret.metadata.labels.unwrap()["strimzi.io/name"],
        "edge-cluster-kafka"
    );
}

#[test]
fn node_port_bootstrap_uses_the_brokers_nodes() {
    let cluster = all_types_cluster();
    let mut addresses = cluster.listener_addresses(&model_support::observed_listeners(
        &cluster.listener_objects(),
        NAMESPACE,
    ));
    let node = |addresses: Value| -> k8s_openapi::api::core::v1::Node {
        serde_json::from_value(
            json!({ "metadata": { "name": "n" }, "status": { "addresses": addresses } }),
        )
        .unwrap()
    };
    let nodes = [
        node(json!([
            { "type": "InternalIP", "address": "10.0.0.1" },
            { "type": "InternalDNS", "address": "node-1.internal" },
            { "type": "ExternalIP", "address": "203.0.113.1" },
        ])),
        node(json!([{ "type": "InternalDNS", "address": "node-1.internal" }])),
        node(json!([{ "type": "ExternalIP", "address": "203.0.113.2" }])),
    ];
    cluster.add_node_port_bootstrap_addresses(&mut addresses, &nodes);
    let hosts: Vec<String> = addresses.bootstrap["nodeport"]
        .iter()
        .map(|address| format!("{}:{}", address.host, address.port))
        .collect();
    // The listener prefers InternalDNS; the third node has none and gives its external IP.
    assert_eq!(hosts, ["node-1.internal:32190", "203.0.113.2:32190"]);
    let status = cluster.listener_status(&addresses, CA_PEM, &BTreeMap::new());
    let nodeport = status
        .iter()
        .find(|status| status.name.as_deref() == Some("nodeport"))
        .unwrap();
    assert_eq!(
        nodeport.bootstrap_servers.as_deref(),
        Some("node-1.internal:32190,203.0.113.2:32190")
    );
}

#[test]
fn pool_templates_override_the_kafka_template() {
    let mut cluster = all_types_cluster();
    let pool = cluster
        .pools
        .iter_mut()
        .find(|pool| pool.name == "brokers")
        .unwrap();
    pool.template = Some(
        serde_json::from_value(json!({
            "perPodService": { "metadata": { "labels": { "pool-level": "yes" } } },
            "perPodRoute": { "metadata": { "annotations": { "route-level": "yes" } } },
        }))
        .unwrap(),
    );
    let objects = cluster.listener_objects();
    let per_node = objects
        .services
        .iter()
        .find(|service| service.metadata.name.as_deref() == Some("edge-cluster-brokers-lb-0"))
        .unwrap();
    let labels = per_node.metadata.labels.as_ref().unwrap();
    let annotations = per_node.metadata.annotations.as_ref().unwrap();
    assert_eq!(labels["pool-level"], "yes");
    assert!(!annotations.contains_key("prometheus.io/scrape"));
    assert_eq!(
        annotations["external-dns.alpha.kubernetes.io/hostname"],
        "lb-broker-0.edge.example.com"
    );
    let route = objects
        .routes
        .iter()
        .find(|route| route.metadata.name.as_deref() == Some("edge-cluster-brokers-route-0"))
        .unwrap();
    assert_eq!(
        route.metadata.annotations.as_ref().unwrap()["route-level"],
        "yes"
    );
}

#[test]
fn custom_listener_certificates_go_into_the_node_secrets() {
    let mut cluster = all_types_cluster();
    for (listener, secret) in [("lb", "lb-cert"), ("route", "route-cert")] {
        let listener = cluster
            .spec
            .listeners
            .iter_mut()
            .find(|candidate| candidate.name == listener)
            .unwrap();
        listener
            .configuration
            .as_mut()
            .unwrap()
            .broker_cert_chain_and_key = Some(
            serde_json::from_value(
                json!({ "secretName": secret, "certificate": "tls.crt", "key": "tls.key" }),
            )
            .unwrap(),
        );
    }
    assert_eq!(
        cluster.custom_certificate_secret_names(),
        ["lb-cert", "route-cert"]
    );
    // A real certificate per Secret (its thumbprint is taken), a placeholder key.
    let pem_of = |name: &str| strimzi_tests::certs::TestCa::new(name).unwrap().cert_pem();
    let pems: BTreeMap<&str, String> = [("lb-cert", pem_of("lb")), ("route-cert", pem_of("route"))]
        .into_iter()
        .collect();
    let secret = |name: &str, keys: &[&str]| -> k8s_openapi::api::core::v1::Secret {
        let data: BTreeMap<String, k8s_openapi::ByteString> = keys
            .iter()
            .map(|key| {
                let value = if *key == "tls.crt" {
                    pems[name].clone()
                } else {
                    format!("{name}/{key}")
                };
                (
                    (*key).to_owned(),
                    k8s_openapi::ByteString(value.into_bytes()),
                )
            })
            .collect();
        serde_json::from_value(json!({ "metadata": { "name": name }, "data": data })).unwrap()
    };
    let custom = cluster
        .custom_listener_certificates(&[
            secret("lb-cert", &["tls.crt", "tls.key"]),
            secret("route-cert", &["tls.crt", "tls.key"]),
        ])
        .unwrap();
    assert_eq!(
        custom.secret_data.keys().collect::<Vec<_>>(),
        [
            "lb-9096.crt",
            "lb-9096.key",
            "route-9098.crt",
            "route-9098.key"
        ]
    );
    assert_eq!(custom.certificates["lb"], pems["lb-cert"]);
    let thumbprint = |pem: &str| {
        strimzi_certificate_manager::certificate::ParsedCertificate::from_pem(pem.as_bytes())
            .unwrap()
            .short_thumbprint()
    };
    assert_eq!(
        custom.thumbprints_annotation().unwrap(),
        format!(
            "{{lb={}, route={}}}",
            thumbprint(&pems["lb-cert"]),
            thumbprint(&pems["route-cert"])
        )
    );
    let addresses = cluster.listener_addresses(&model_support::observed_listeners(
        &cluster.listener_objects(),
        NAMESPACE,
    ));
    let status = cluster.listener_status(&addresses, CA_PEM, &custom.certificates);
    let certificate_of = |name: &str| {
        status
            .iter()
            .find(|status| status.name.as_deref() == Some(name))
            .and_then(|status| status.certificates.clone())
            .unwrap()
    };
    assert_eq!(certificate_of("route"), [pems["route-cert"].clone()]);
    assert_eq!(certificate_of("tls"), [CA_PEM]);

    let error = cluster
        .custom_listener_certificates(&[secret("lb-cert", &["tls.crt"])])
        .unwrap_err();
    assert_eq!(error.reason(), "InvalidConfigurationException");
    assert_eq!(
        error.to_string(),
        "Failed to process Secrets with custom certificates: [Secret lb-cert does not contain \
         custom certificate private key under the key tls.key., Secret route-cert with custom \
         TLS certificate does not exist.]"
    );
}

#[test]
fn init_container_binding_only_when_a_node_is_read() {
    let mut cluster = all_types_cluster();
    assert!(cluster.init_cluster_role_binding().is_some());
    cluster
        .spec
        .listeners
        .retain(|listener| listener.r#type != KafkaListenerType::NodePort);
    assert!(cluster.init_cluster_role_binding().is_none());
    cluster.spec.rack = Some(serde_json::from_value(json!({ "topologyKey": "zone" })).unwrap());
    let binding = cluster.init_cluster_role_binding().unwrap();
    assert_eq!(
        binding.metadata.name.as_deref(),
        Some("strimzi-myproject-edge-cluster-kafka-init")
    );
    assert!(binding.metadata.owner_references.is_none());
    let role = cluster.kafka_role();
    let names = role.rules.unwrap()[0].resource_names.clone().unwrap();
    // The cluster CA certificate, the trust bundle (holding the clients CA too) and the
    // nodes' Secrets, nothing else.
    assert!(names.contains(&"edge-cluster-cluster-ca-cert".to_owned()));
    assert!(names.contains(&"edge-cluster-trustbundle".to_owned()));
    assert!(names.contains(&"edge-cluster-controllers-5".to_owned()));
    assert!(!names.contains(&"edge-cluster-clients-ca-cert".to_owned()));
}

#[test]
fn invalid_listeners_are_reported_together() {
    let mut cluster = all_types_cluster();
    let ingress = cluster
        .spec
        .listeners
        .iter_mut()
        .find(|listener| listener.name == "ingress")
        .unwrap();
    let configuration = ingress.configuration.as_mut().unwrap();
    configuration.host_template = None;
    configuration.brokers =
        Some(serde_json::from_value(json!([{ "broker": 1, "host": "one.example.com" }])).unwrap());
    cluster.spec.listeners[1].port = 9092;
    cluster.spec.listeners[0].tls = false;
    let error = cluster.validate_listeners().unwrap_err();
    assert_eq!(error.reason(), "InvalidConfigurationException");
    assert_eq!(
        error.to_string(),
        "Listener configuration is not valid: [every listener needs to have a unique port number, \
         listener ingress is missing a broker host name for broker with ID 0 which is required for \
         Ingress based listeners, listener ingress is missing a broker host name for broker with ID 2 \
         which is required for Ingress based listeners]"
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn dns_1035_label(name: &str) -> bool {
        name.len() <= 63
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    }

    /// Whether the certificate requested by `spec` is valid for `host` (a name or an IP).
    fn certificate_names(spec: &LeafSpec, host: &str) -> bool {
        match host.parse::<std::net::IpAddr>() {
            Ok(ip) => spec.ip_addresses.contains(&ip),
            Err(_) => spec.dns_names.contains(host),
        }
    }

    fn listener_type() -> impl Strategy<Value = KafkaListenerType> {
        proptest::sample::select(KafkaListenerType::ALL.to_vec())
    }

    prop_compose! {
        fn generated_cluster()(
            name in "[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,5}){0,2}",
            pools in proptest::collection::btree_map("[a-z][a-z0-9]{0,8}", (1i32..4, any::<bool>()), 1..3),
            listeners in proptest::collection::btree_map("[a-z0-9]{1,11}", (listener_type(), any::<bool>(), any::<bool>()), 1..5),
        ) -> KafkaCluster {
            let listeners: Vec<Value> = listeners
                .into_iter()
                .enumerate()
                .map(|(index, (name, (listener_type, tls, overrides)))| {
                    let needs_tls = matches!(
                        listener_type,
                        KafkaListenerType::Route | KafkaListenerType::Ingress | KafkaListenerType::TlsRoute
                    );
                    // Host names may only be set on listeners that route by host name.
                    let mut configuration = if needs_tls {
                        json!({
                            "bootstrap": { "host": format!("{name}.example.com"), "alternativeNames": ["alt.example.com"] },
                            "hostTemplate": format!("{name}-{{nodeId}}.example.com"),
                        })
                    } else {
                        json!({ "bootstrap": { "alternativeNames": ["alt.example.com"] } })
                    };
                    if overrides {
                        configuration["advertisedHostTemplate"] = json!(format!("adv-{name}-{{nodePodName}}.example.com"));
                        configuration["brokers"] = json!([{ "broker": 0, "advertisedHost": "10.1.2.3" }]);
                    }
                    json!({
                        "name": name,
                        "port": 9092 + i32::try_from(index).unwrap(),
                        "type": listener_type,
                        "tls": tls || needs_tls,
                        "configuration": configuration,
                    })
                })
                .collect();
            let kafka: Kafka = serde_json::from_value(json!({
                "apiVersion": "kafka.strimzi.io/v1",
                "kind": "Kafka",
                "metadata": { "name": name, "namespace": NAMESPACE },
                "spec": { "kafka": { "listeners": listeners } },
            })).unwrap();
            // The first pool has both roles, so every cluster has brokers and controllers.
            let pools: Vec<KafkaNodePool> = pools
                .into_iter()
                .enumerate()
                .map(|(index, (pool, (replicas, broker)))| {
                    let roles = match (index, broker) {
                        (0, _) => json!(["controller", "broker"]),
                        (_, true) => json!(["broker"]),
                        (_, false) => json!(["controller"]),
                    };
                    serde_json::from_value(json!({
                        "apiVersion": "kafka.strimzi.io/v1",
                        "kind": "KafkaNodePool",
                        "metadata": { "name": pool, "labels": { "strimzi.io/cluster": name } },
                        "spec": {
                            "replicas": replicas,
                            "roles": roles,
                            "storage": { "type": "ephemeral" },
                        },
                    })).unwrap()
                })
                .collect();
            cluster(&kafka, &pools, model_support::default_model_config())
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn names_and_labels_are_valid(cluster in generated_cluster()) {
            let objects = cluster.listener_objects();
            let metadata = objects
                .services
                .iter()
                .map(|service| &service.metadata)
                .chain(objects.ingresses.iter().map(|ingress| &ingress.metadata))
                .chain(objects.routes.iter().map(|route| &route.metadata))
                .chain(objects.tls_routes.iter().map(|route| &route.metadata));
            for meta in metadata {
                let name = meta.name.clone().unwrap();
                prop_assert!(dns_1035_label(&name), "invalid name {name}");
                for (key, value) in meta.labels.iter().flatten() {
                    prop_assert!(is_label_value(value), "{name}: label {key}={value}");
                }
            }
            for service in &objects.services {
                for value in service.spec.as_ref().unwrap().selector.iter().flatten().map(|(_, value)| value) {
                    prop_assert!(is_label_value(value));
                }
                for port in service.spec.as_ref().unwrap().ports.iter().flatten() {
                    prop_assert!(port.name.as_ref().unwrap().len() <= 15);
                }
            }
        }

        #[test]
        fn advertised_addresses_are_in_the_certificates(cluster in generated_cluster()) {
            let objects = cluster.listener_objects();
            let addresses = cluster.listener_addresses(&model_support::observed_listeners(&objects, NAMESPACE));
            prop_assert!(addresses.pending.is_empty());
            let specs: BTreeMap<String, LeafSpec> = cluster
                .node_certificate_specs(&addresses)
                .into_iter()
                .map(|spec| (spec.name.clone(), spec))
                .collect();
            // Strimzi leaves the addresses of plain in-cluster listeners out of the certificates;
            // every other listener's addresses are in them.
            let needs_names = |listener: &&GenericKafkaListener| listener.tls || listener.r#type.is_external();
            for listener in cluster.spec.listeners.iter().filter(needs_names) {
                for node in cluster.brokers() {
                    let spec = &specs[&node.pod_name];
                    let advertised = &addresses.advertised[&(listener.name.clone(), node.node_id)];
                    if listener.r#type == KafkaListenerType::NodePort
                        && advertised.host.starts_with("${strimzifile:")
                    {
                        continue;
                    }
                    prop_assert!(certificate_names(spec, &advertised.host), "{} of {} not in {:?}", advertised.host, node.pod_name, spec);
                }
                for bootstrap in addresses.bootstrap.get(&listener.name).into_iter().flatten() {
                    for node in cluster.brokers() {
                        let spec = &specs[&node.pod_name];
                        prop_assert!(certificate_names(spec, &bootstrap.host), "bootstrap {} not in {}", bootstrap.host, node.pod_name);
                    }
                }
            }
        }
    }
}
