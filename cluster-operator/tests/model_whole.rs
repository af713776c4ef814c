//! The whole object set of the Kafka component, built by `model::desired::build` for every
//! Kafka example of Strimzi and ours (snapshots reviewed against what Strimzi 1.2 creates),
//! with listener addresses as Kubernetes would have assigned them; plus properties of the
//! objects built for generated clusters.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::path::Path;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use proptest::prelude::*;
use serde::Deserialize;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_certificate_manager::authority::{CaAction, CaKind, CertificateAuthority};
use strimzi_certificate_manager::leaf::IssueContext;
use strimzi_cluster_operator::model::config::ExternalConfiguration;
use strimzi_cluster_operator::model::desired::{
    BuildInputs, DesiredObjects, build, certificate_requests, cluster_operator_certificate_request,
    issue_certificate, issue_certificates,
};
use strimzi_cluster_operator::model::listeners::ObservedListeners;
use strimzi_cluster_operator::model::security::certificates::CustomListenerCertificates;
use strimzi_cluster_operator::model::{KafkaCluster, ModelInput, resolve};
use strimzi_operator_common::labels::is_label_value;
use strimzi_tests::reference::{own_examples_dir, reference_examples_dir, yaml_files};
use time::OffsetDateTime;

const NAMESPACE: &str = "myproject";
const REDACTED: &str = "[redacted]";

/// The resources of one example file.
struct Example {
    kafka: Kafka,
    pools: Vec<KafkaNodePool>,
    config_maps: Vec<ConfigMap>,
}

/// The Kafka, node pools and ConfigMaps of a multi-document YAML file, placed in
/// [`NAMESPACE`] with fixed UIDs; `None` without a Kafka.
fn read_example(path: &Path) -> Option<Example> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut kafka = None;
    let mut pools = Vec::new();
    let mut config_maps = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let mut value = serde_json::Value::deserialize(document).unwrap();
        if value.is_null() {
            continue;
        }
        value["metadata"]["namespace"] = NAMESPACE.into();
        let name = value["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        value["metadata"]["uid"] = format!("{name}-uid").into();
        match value["kind"].as_str().unwrap_or_default() {
            "Kafka" => kafka = Some(serde_json::from_value(value).unwrap()),
            "KafkaNodePool" => pools.push(serde_json::from_value(value).unwrap()),
            "ConfigMap" => config_maps.push(serde_json::from_value(value).unwrap()),
            _ => {}
        }
    }
    kafka.map(|kafka| Example {
        kafka,
        pools,
        config_maps,
    })
}

/// The value of the ConfigMap key `reference` (`{name, key}`) points to.
fn config_map_value(config_maps: &[ConfigMap], reference: &serde_json::Value) -> Option<String> {
    let name = reference["name"].as_str()?;
    let key = reference["key"].as_str()?;
    config_maps
        .iter()
        .find(|config_map| config_map.metadata.name.as_deref() == Some(name))?
        .data
        .as_ref()?
        .get(key)
        .cloned()
}

/// External logging and metrics configuration from the example's own ConfigMaps.
fn external_configuration(example: &Example) -> ExternalConfiguration {
    let spec = serde_json::to_value(&example.kafka.spec.kafka).unwrap();
    let lookup = |field: &str| {
        config_map_value(
            &example.config_maps,
            &spec[field]["valueFrom"]["configMapKeyRef"],
        )
    };
    ExternalConfiguration {
        logging: lookup("logging"),
        metrics: lookup("metricsConfig"),
    }
}

/// The users' Secrets with custom listener certificates the cluster refers to: a real
/// certificate under `tls.crt` (its thumbprint rolls the brokers) and a placeholder key.
fn custom_certificate_secrets(cluster: &KafkaCluster) -> Vec<Secret> {
    cluster
        .custom_certificate_secret_names()
        .into_iter()
        .map(|name| Secret {
            metadata: kube::api::ObjectMeta {
                name: Some(name),
                ..kube::api::ObjectMeta::default()
            },
            data: Some(BTreeMap::from([
                (
                    "tls.crt".to_owned(),
                    k8s_openapi::ByteString(CUSTOM_CERTIFICATE_PEM.clone().into_bytes()),
                ),
                (
                    "tls.key".to_owned(),
                    k8s_openapi::ByteString(b"key".to_vec()),
                ),
            ])),
            ..Secret::default()
        })
        .collect()
}

/// The certificate of every custom listener certificate Secret, the same in every build.
static CUSTOM_CERTIFICATE_PEM: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    strimzi_tests::certs::TestCa::new("custom")
        .unwrap()
        .cert_pem()
});

/// The CAs and the issue context shared by the builds of one cluster.
struct Cas {
    cluster: CertificateAuthority,
    clients: CertificateAuthority,
    action: CaAction,
}

impl Cas {
    fn new(name: &str) -> Self {
        Self {
            cluster: model_support::ecdsa_ca(CaKind::Cluster, name),
            clients: model_support::ecdsa_ca(CaKind::Clients, name),
            action: CaAction::Keep,
        }
    }

    /// The issue context of a build now, inside a maintenance window.
    fn context(&self) -> IssueContext<'_> {
        IssueContext {
            now: OffsetDateTime::now_utc(),
            window_open: true,
            ca_action: &self.action,
            trust_pending: false,
        }
    }

    /// Builds every object, issuing node certificates or reusing those in `existing`.
    fn build(
        &self,
        cluster: &KafkaCluster,
        observed: &ObservedListeners,
        external: &ExternalConfiguration,
        existing: &BTreeMap<String, Secret>,
    ) -> DesiredObjects {
        let custom = cluster
            .custom_listener_certificates(&custom_certificate_secrets(cluster))
            .unwrap();
        let context = self.context();
        let addresses = cluster.listener_addresses(observed);
        let requests = certificate_requests(cluster, &addresses, existing);
        let issued = issue_certificates(&self.cluster, &requests, &context).unwrap();
        let operator_request = cluster_operator_certificate_request(cluster, existing);
        let (_, operator) = issue_certificate(&self.cluster, &operator_request, &context).unwrap();
        let inputs = BuildInputs {
            observed,
            cluster_ca: &self.cluster,
            clients_ca: &self.clients,
            node_certificates: &issued,
            cluster_operator_certificate: &operator,
            external,
            jmx_secret: None,
            custom_certificates: &custom,
        };
        build(cluster, &inputs).unwrap()
    }
}

/// Replaces what differs from run to run (keys, certificates, passwords and what hashes
/// them) with a marker.
fn redact(manifests: &mut [serde_json::Value]) {
    for manifest in manifests {
        if manifest["kind"] == "Secret"
            && let Some(data) = manifest["data"].as_object_mut()
        {
            for value in data.values_mut() {
                *value = REDACTED.into();
            }
        }
        if manifest["kind"] == "StrimziPodSet"
            && let Some(pods) = manifest["spec"]["pods"].as_array_mut()
        {
            for pod in pods {
                if let Some(annotations) = pod["metadata"]["annotations"].as_object_mut() {
                    for key in [
                        "strimzi.io/server-cert-hash",
                        "strimzi.io/revision",
                        "strimzi.io/custom-listener-cert-thumbprints",
                    ] {
                        if annotations.contains_key(key) {
                            annotations.insert(key.into(), REDACTED.into());
                        }
                    }
                }
            }
        }
    }
}

fn resolve_example(example: &Example, stem: &str) -> KafkaCluster {
    let config = model_support::default_model_config();
    resolve(&ModelInput {
        kafka: &example.kafka,
        pools: &example.pools,
        cluster_id: "cluster-id",
        metadata_version_in_use: None,
        config: &config,
    })
    .unwrap_or_else(|error| panic!("{stem}: {error}"))
}

fn snapshot_examples(dir: &Path, prefix: &str) {
    let mut seen = 0;
    for path in yaml_files(dir) {
        let Some(example) = read_example(&path) else {
            continue;
        };
        seen += 1;
        let relative = path.strip_prefix(dir).unwrap().with_extension("");
        let stem = relative.to_string_lossy().replace('/', "-");
        let cluster = resolve_example(&example, &stem);
        let observed =
            model_support::observed_listeners(&cluster.listener_objects(), &cluster.namespace);
        let external = external_configuration(&example);
        let cas = Cas::new(&cluster.name);
        let first = cas.build(&cluster, &observed, &external, &BTreeMap::new());

        // A second pass with the Secrets of the first reuses every certificate.
        let existing: BTreeMap<String, Secret> = first
            .node_certificates
            .iter()
            .chain([&first.cluster_operator_certificate])
            .map(|secret| (secret.metadata.name.clone().unwrap(), secret.clone()))
            .collect();
        let second = cas.build(&cluster, &observed, &external, &existing);
        assert_eq!(
            first.pod_sets, second.pod_sets,
            "{stem}: reused certificates must not change the pods"
        );

        let mut manifests = first.manifests();
        redact(&mut manifests);
        let warnings: Vec<String> = first
            .warnings
            .iter()
            .map(|warning| format!("{}: {}", warning.reason, warning.message))
            .collect();
        insta::assert_yaml_snapshot!(
            format!("{prefix}-{stem}"),
            serde_json::json!({"warnings": warnings, "objects": manifests})
        );
    }
    assert!(seen > 0, "no Kafka examples found in {}", dir.display());
}

#[test]
fn strimzi_reference_examples() {
    snapshot_examples(&reference_examples_dir(), "strimzi");
}

#[test]
fn our_examples() {
    snapshot_examples(&own_examples_dir().join("kafka"), "ours");
}

#[test]
fn the_operator_has_a_client_certificate_of_the_cluster_ca_reused_while_valid() {
    let path = reference_examples_dir().join("kafka/kafka-persistent.yaml");
    let example = read_example(&path).unwrap();
    let cluster = resolve_example(&example, "my-cluster");
    let cas = Cas::new(&cluster.name);
    let observed =
        model_support::observed_listeners(&cluster.listener_objects(), &cluster.namespace);
    let external = ExternalConfiguration::default();
    let first = cas.build(&cluster, &observed, &external, &BTreeMap::new());
    let secret = &first.cluster_operator_certificate;
    assert_eq!(
        secret.metadata.name.as_deref(),
        Some("my-cluster-cluster-operator-certs")
    );
    let data = secret.data.as_ref().unwrap();
    let certificate = strimzi_certificate_manager::certificate::ParsedCertificate::from_pem(
        &data["cluster-operator.crt"].0,
    )
    .unwrap();
    let subject = certificate.subject();
    for part in ["CN=cluster-operator", "O=io.strimzi"] {
        assert!(subject.contains(part), "{part} not in {subject}");
    }
    assert!(certificate.is_signed_by(cas.cluster.certificate()));
    assert!(!certificate.is_ca());
    // A second build with the Secret reuses the certificate.
    let existing = BTreeMap::from([(secret.metadata.name.clone().unwrap(), secret.clone())]);
    let second = cas.build(&cluster, &observed, &external, &existing);
    assert_eq!(
        second.cluster_operator_certificate.data.as_ref().unwrap()["cluster-operator.crt"],
        data["cluster-operator.crt"]
    );
}

#[test]
fn listeners_without_addresses_are_pending() {
    let path = own_examples_dir().join("kafka/kafka-listeners-all-types.yaml");
    let example = read_example(&path).unwrap();
    let cluster = resolve_example(&example, "all-types");
    let cas = Cas::new(&cluster.name);
    let context = cas.context();
    let operator_request = cluster_operator_certificate_request(&cluster, &BTreeMap::new());
    let (_, operator) = issue_certificate(&cas.cluster, &operator_request, &context).unwrap();
    let inputs = BuildInputs {
        observed: &ObservedListeners::default(),
        cluster_ca: &cas.cluster,
        clients_ca: &cas.clients,
        node_certificates: &BTreeMap::new(),
        cluster_operator_certificate: &operator,
        external: &ExternalConfiguration::default(),
        jmx_secret: None,
        custom_certificates: &CustomListenerCertificates::default(),
    };
    let error = build(&cluster, &inputs).unwrap_err();
    assert_eq!(error.reason(), "ListenerAddressesPending");
    let message = error.to_string();
    for listener in ["nodeport", "lb", "ingress", "route"] {
        assert!(message.contains(listener), "{message}");
    }
}

/// Listener types with whether they must use TLS.
const LISTENER_TYPES: &[(&str, bool)] = &[
    ("internal", false),
    ("cluster-ip", false),
    ("loadbalancer", false),
    ("nodeport", false),
    ("route", true),
    ("ingress", true),
    ("tlsroute", true),
];

/// A listener of type `LISTENER_TYPES[kind]`.
fn listener_json(name: &str, port: i32, kind: usize, tls: bool) -> serde_json::Value {
    let (listener_type, needs_tls) = LISTENER_TYPES[kind];
    let mut listener = serde_json::json!({
        "name": name, "port": port, "type": listener_type, "tls": tls || needs_tls,
    });
    if matches!(listener_type, "ingress" | "tlsroute") {
        listener["configuration"] = serde_json::json!({
            "bootstrap": {"host": format!("{name}.example.com")},
            "hostTemplate": format!("{name}-{{nodeId}}.example.com"),
        });
        if listener_type == "tlsroute" {
            listener["configuration"]["parentRefs"] = serde_json::json!([{"name": "gateway"}]);
        }
    }
    listener
}

/// A cluster with generated pools and listeners; `None` when the pools cannot form one.
fn generated_cluster(
    name: &str,
    pools: &BTreeMap<String, (i32, bool, bool)>,
    listeners: &[serde_json::Value],
) -> Option<KafkaCluster> {
    let kafka: Kafka = serde_json::from_value(serde_json::json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": "u"},
        "spec": {"kafka": {"listeners": listeners}}
    }))
    .unwrap();
    let pools: Vec<KafkaNodePool> = pools
        .iter()
        .map(|(pool, (replicas, broker, controller))| {
            let roles: Vec<&str> = [(*broker, "broker"), (*controller, "controller")]
                .into_iter()
                .filter_map(|(wanted, role)| wanted.then_some(role))
                .collect();
            serde_json::from_value(serde_json::json!({
                "apiVersion": "kafka.strimzi.io/v1",
                "kind": "KafkaNodePool",
                "metadata": {"name": pool, "namespace": NAMESPACE, "uid": "p",
                             "labels": {"strimzi.io/cluster": name}},
                "spec": {"replicas": replicas, "roles": roles,
                         "storage": {"type": "persistent-claim", "size": "1Gi"}}
            }))
            .unwrap()
        })
        .collect();
    let config = model_support::default_model_config();
    resolve(&ModelInput {
        kafka: &kafka,
        pools: &pools,
        cluster_id: "id",
        metadata_version_in_use: None,
        config: &config,
    })
    .ok()
}

/// Where Kubernetes limits a name to a DNS label (63 characters): Services, pods (their host
/// names) and the label values that carry names.
fn check_names_and_labels(objects: &DesiredObjects) {
    for manifest in objects.manifests() {
        let kind = manifest["kind"].as_str().unwrap().to_owned();
        let name = manifest["metadata"]["name"].as_str().unwrap();
        let limit = if kind == "Service" { 63 } else { 253 };
        assert!(name.len() <= limit, "{kind} {name} is longer than {limit}");
        let mut label_maps = vec![&manifest["metadata"]["labels"]];
        for pod in manifest["spec"]["pods"].as_array().into_iter().flatten() {
            let pod_name = pod["metadata"]["name"].as_str().unwrap();
            assert!(pod_name.len() <= 63, "pod {pod_name} is longer than 63");
            label_maps.push(&pod["metadata"]["labels"]);
        }
        for labels in label_maps {
            for (key, value) in labels.as_object().into_iter().flatten() {
                let value = value.as_str().unwrap();
                assert!(is_label_value(value), "{kind} {name}: label {key}={value}");
            }
        }
    }
}

/// No container of a pod declares a port twice.
fn check_ports(objects: &DesiredObjects) {
    for pod_set in &objects.pod_sets {
        for pod in pod_set.spec.pod_list().unwrap() {
            let spec = pod.spec.unwrap();
            let mut ports = BTreeSet::new();
            let mut names = BTreeSet::new();
            for container in spec
                .containers
                .iter()
                .chain(spec.init_containers.iter().flatten())
            {
                for port in container.ports.iter().flatten() {
                    assert!(
                        ports.insert(port.container_port),
                        "port {} twice",
                        port.container_port
                    );
                    if let Some(name) = &port.name {
                        assert!(names.insert(name.clone()), "port name {name} twice");
                        assert!(name.len() <= 15, "port name {name} longer than 15");
                    }
                }
            }
        }
    }
}

/// Every address a broker advertises on a TLS listener is in that broker's certificate
/// (except node port addresses, which the broker only learns at start-up).
fn check_advertised_addresses_in_certificates(cluster: &KafkaCluster, objects: &DesiredObjects) {
    let specs = cluster.node_certificate_specs(&objects.addresses);
    let tls_listeners: BTreeSet<&str> = cluster
        .spec
        .listeners
        .iter()
        .filter(|listener| {
            listener.tls && listener.r#type != strimzi_api::kafka::KafkaListenerType::NodePort
        })
        .map(|listener| listener.name.as_str())
        .collect();
    for ((listener, node_id), address) in &objects.addresses.advertised {
        if !tls_listeners.contains(listener.as_str()) {
            continue;
        }
        let node = cluster
            .nodes()
            .find(|node| node.node_id == *node_id)
            .unwrap();
        let spec = specs
            .iter()
            .find(|spec| spec.name == node.pod_name)
            .unwrap();
        let present = match address.host.parse::<IpAddr>() {
            Ok(ip) => spec.ip_addresses.contains(&ip),
            Err(_) => spec.dns_names.contains(&address.host),
        };
        assert!(
            present,
            "{listener}: {} missing from {}'s certificate",
            address.host, node.pod_name
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn generated_clusters_give_valid_objects(
        name in "[a-z][a-z0-9-]{0,18}[a-z0-9]",
        pools in proptest::collection::btree_map(
            "[a-z][a-z0-9]{0,14}", (1..5i32, any::<bool>(), any::<bool>()), 1..4),
        listeners in proptest::collection::btree_map(
            "[a-z][a-z0-9]{0,10}", (0..LISTENER_TYPES.len(), any::<bool>()), 1..5),
    ) {
        let listeners: Vec<serde_json::Value> = listeners
            .iter()
            .enumerate()
            .map(|(index, (listener, (kind, tls)))| {
                listener_json(listener, 9092 + i32::try_from(index).unwrap(), *kind, *tls)
            })
            .collect();
        let Some(cluster) = generated_cluster(&name, &pools, &listeners) else {
            return Ok(());
        };
        let observed = model_support::observed_listeners(&cluster.listener_objects(), &cluster.namespace);
        // Every node's certificate issued by the (ECDSA) cluster CA, as the reconciler does.
        let objects = GENERATED_CAS.build(
            &cluster,
            &observed,
            &ExternalConfiguration::default(),
            &BTreeMap::new(),
        );
        check_names_and_labels(&objects);
        check_ports(&objects);
        check_advertised_addresses_in_certificates(&cluster, &objects);
        let distinct: BTreeSet<_> = objects.warnings.iter().map(|warning| &warning.message).collect();
        prop_assert_eq!(distinct.len(), objects.warnings.len(), "{:?}", objects.warnings);
    }
}

/// One CA for all generated clusters: its key is not what these properties are about.
static GENERATED_CAS: std::sync::LazyLock<Cas> = std::sync::LazyLock::new(|| Cas::new("generated"));
