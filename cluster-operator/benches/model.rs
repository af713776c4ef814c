//! Time to build the model of a 3-pool, 100-node cluster (3 controllers, two pools of broker
//! nodes), with internal, TLS, load balancer and route listeners: each step and the whole
//! `desired::build`, excluding key generation (node certificates are reused from existing
//! Secrets, or their hashes passed in). Prints figures; asserts nothing about time.
//!
//! Run with `cargo bench -p strimzi-cluster-operator --bench model`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/model_support/mod.rs"]
mod model_support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_certificate_manager::authority::{self, CaAction, CaKind, CaSettings};
use strimzi_certificate_manager::keys::KeyAlgorithm;
use strimzi_certificate_manager::leaf::{self, ExistingLeaf, IssueContext};
use strimzi_cluster_operator::model::config::ExternalConfiguration;
use strimzi_cluster_operator::model::desired::{
    BuildInputs, build, certificate_requests, cluster_operator_certificate_request,
    issue_certificate, issue_certificates,
};
use strimzi_cluster_operator::model::nodes::pods::{CaGenerations, PodInputs};
use strimzi_cluster_operator::model::security::certificates::CustomListenerCertificates;
use strimzi_cluster_operator::model::{ModelInput, resolve};
use time::OffsetDateTime;

const CLUSTER: &str = "bench";
const NAMESPACE: &str = "bench";
/// Pools: name, replicas, roles.
const POOLS: &[(&str, i32, &[&str])] = &[
    ("controllers", 3, &["controller"]),
    ("brokers-a", 49, &["broker"]),
    ("brokers-b", 48, &["broker"]),
];
const ITERATIONS: u32 = 30;

fn resources() -> (Kafka, Vec<KafkaNodePool>) {
    let kafka = serde_json::from_value(serde_json::json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": CLUSTER, "namespace": NAMESPACE, "uid": "kafka-uid"},
        "spec": {"kafka": {
            "listeners": [
                {"name": "plain", "port": 9092, "type": "internal", "tls": false},
                {"name": "tls", "port": 9093, "type": "internal", "tls": true,
                 "authentication": {"type": "tls"}},
                {"name": "external", "port": 9094, "type": "loadbalancer", "tls": true,
                 "authentication": {"type": "scram-sha-512"}}
            ],
            "authorization": {"type": "simple", "superUsers": ["CN=admin"]},
            "rack": {"topologyKey": "topology.kubernetes.io/zone"},
            "config": {"default.replication.factor": 3, "min.insync.replicas": 2,
                       "offsets.topic.replication.factor": 3},
            "metricsConfig": {"type": "strimziMetricsReporter"}
        }}
    }))
    .unwrap();
    let pools = POOLS
        .iter()
        .map(|(name, replicas, roles)| {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "kafka.strimzi.io/v1",
                "kind": "KafkaNodePool",
                "metadata": {"name": name, "namespace": NAMESPACE, "uid": format!("{name}-uid"),
                             "labels": {"strimzi.io/cluster": CLUSTER}},
                "spec": {"replicas": replicas, "roles": roles, "storage": {"type": "jbod", "volumes": [
                    {"id": 0, "type": "persistent-claim", "size": "100Gi", "kraftMetadata": "shared"},
                    {"id": 1, "type": "persistent-claim", "size": "100Gi"}]}}
            }))
            .unwrap()
        })
        .collect();
    (kafka, pools)
}

/// Median and minimum of `ITERATIONS` runs of `step`.
fn measure<T>(label: &str, mut step: impl FnMut() -> T) -> T {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..ITERATIONS {
        let start = Instant::now();
        last = Some(std::hint::black_box(step()));
        times.push(start.elapsed());
    }
    times.sort();
    let median = times[times.len() / 2];
    let min = times[0];
    println!(
        "{label:<52} median {:>9.3} ms   min {:>9.3} ms",
        ms(median),
        ms(min)
    );
    last.unwrap()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn main() {
    let (kafka, pools) = resources();
    let config = model_support::default_model_config();
    let input = ModelInput {
        kafka: &kafka,
        pools: &pools,
        cluster_id: "bench-cluster-id",
        metadata_version_in_use: None,
        config: &config,
    };
    let settings = CaSettings {
        key_algorithm: KeyAlgorithm::EcdsaP256,
        ..CaSettings::default()
    };
    let now = OffsetDateTime::now_utc();
    let cluster_ca =
        authority::reconcile(CaKind::Cluster, CLUSTER, &settings, None, None, now, true)
            .unwrap()
            .authority;
    let clients_ca =
        authority::reconcile(CaKind::Clients, CLUSTER, &settings, None, None, now, true)
            .unwrap()
            .authority;
    let keep = CaAction::Keep;
    let context = IssueContext {
        now,
        window_open: true,
        ca_action: &keep,
        trust_pending: false,
    };

    println!(
        "model of {} nodes in {} pools, {ITERATIONS} runs per step",
        POOLS.iter().map(|pool| pool.1).sum::<i32>(),
        POOLS.len()
    );
    let cluster = measure("resolve", || resolve(&input).unwrap());
    measure("listener_objects", || cluster.listener_objects());
    let observed =
        model_support::observed_listeners(&cluster.listener_objects(), &cluster.namespace);
    let addresses = measure("listener_addresses", || {
        cluster.listener_addresses(&observed)
    });
    assert!(
        addresses.pending.is_empty(),
        "pending: {:?}",
        addresses.pending
    );
    let specs = measure("node_certificate_specs", || {
        cluster.node_certificate_specs(&addresses)
    });

    // The Secrets a previous reconciliation wrote (issuing them is not measured).
    let start = Instant::now();
    let existing: BTreeMap<String, Secret> = cluster
        .nodes()
        .zip(&specs)
        .map(|(node, spec)| {
            let issued = leaf::issue_or_reuse(&cluster_ca, spec, None, &context).unwrap();
            let secret = cluster.node_certificate_secret(
                &node,
                issued.secret_data(),
                cluster_ca.cert_generation(),
            );
            (spec.name.clone(), secret)
        })
        .collect();
    println!(
        "(setup: issuing {} ECDSA node certificates took {:.1} ms)",
        existing.len(),
        ms(start.elapsed())
    );

    let hashes = measure(
        "reuse node certificates (parse, verify, thumbprint)",
        || {
            specs
                .iter()
                .map(|spec| {
                    let stored = ExistingLeaf::from_secret(&existing[&spec.name], &spec.name);
                    let issued =
                        leaf::issue_or_reuse(&cluster_ca, spec, Some(&stored), &context).unwrap();
                    (spec.name.clone(), issued.thumbprint())
                })
                .collect::<BTreeMap<_, _>>()
        },
    );
    let external = ExternalConfiguration::default();
    measure("config_maps", || cluster.config_maps(&addresses, &external));
    let configuration_hashes = measure("configuration_hashes", || {
        cluster.configuration_hashes(&addresses)
    });
    let pod_inputs = PodInputs {
        ca_generations: CaGenerations::default(),
        server_cert_hashes: hashes.clone(),
        configuration_hashes,
        custom_listener_cert_thumbprints: None,
    };
    measure("pod_sets", || cluster.pod_sets(&pod_inputs));
    measure("persistent_volume_claims", || {
        cluster.persistent_volume_claims()
    });

    let custom = CustomListenerCertificates::default();
    let requests = certificate_requests(&cluster, &addresses, &existing);
    let issued = measure("issue_certificates, reusing certificate Secrets", || {
        issue_certificates(&cluster_ca, &requests, &context).unwrap()
    });
    let operator_request = cluster_operator_certificate_request(&cluster, &existing);
    let (_, operator) = issue_certificate(&cluster_ca, &operator_request, &context).unwrap();
    let inputs = BuildInputs {
        observed: &observed,
        cluster_ca: &cluster_ca,
        clients_ca: &clients_ca,
        node_certificates: &issued,
        cluster_operator_certificate: &operator,
        external: &external,
        jmx_secret: None,
        custom_certificates: &custom,
    };
    let desired = measure("desired::build", || build(&cluster, &inputs).unwrap());
    measure("resolve + desired::build", || {
        let cluster = resolve(&input).unwrap();
        build(&cluster, &inputs).unwrap()
    });
    let manifests = measure("manifests (serialize every object to JSON)", || {
        desired.manifests()
    });
    let bytes: usize = manifests
        .iter()
        .map(|manifest| serde_json::to_vec(manifest).unwrap().len())
        .sum();
    println!(
        "{} objects, {:.1} MiB of JSON",
        manifests.len(),
        bytes as f64 / (1024.0 * 1024.0)
    );
}
