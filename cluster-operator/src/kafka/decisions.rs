//! Decisions of the Kafka reconciler that end its reconciliation early, against a mock
//! Kubernetes API (`strimzi_tests::mock_api`): each test calls `reconcile` directly and
//! states every Kubernetes request the decision makes, in order, with its answer; a request
//! not stated fails the test.
//!
//! - Another cluster operator holds the Kafka's claim: this one marks itself as the contender
//!   and stands back. Through the API server and two whole operators:
//!   `tests/kafka.rs`, `two_operators_claiming_one_kafka_both_stand_back_until_one_of_them_stops`.
//! - A CA certificate Secret without its key Secret, or a user-managed CA
//!   (`generateCertificateAuthority: false`) without its Secrets, is refused before any object
//!   is written (no new key made). The CA step's own decision is tested without Kubernetes in
//!   `certificate-manager/tests/ca_lifecycle.rs`; no API-server test covers it.
//! - A spec that cannot become a cluster (no node pools, brokers without controllers, a
//!   config provider alias the operator reserves) is refused for good, with its reason and
//!   message, once the CAs are made; nothing else is written. Through the API server and
//!   the whole controller (not retried with backoff, the fix picked up):
//!   `tests/kafka.rs`, `invalid_specs_end_not_ready_with_a_reason`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use http::Method;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::events::v1::Event;
use kube::Resource;
use serde_json::{Value, json};
use strimzi_api::kafka::{Kafka, KafkaStatus};
use strimzi_api::naming;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_certificate_manager::authority::CaKind;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::claim::CONTENDER_ANNOTATION;
use strimzi_operator_common::controller::{Reconciled, Reconciler};
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_tests::mock_api::{Scenario, status_body};

use super::{KafkaAssembly, ReconcileError};
use crate::config::{ClusterOperatorConfig, FIELD_MANAGER, OPERATOR_NAMES};
use crate::model::kafka_component_labels;

/// The namespace of the Kafka.
const NAMESPACE: &str = "team-a";
/// The name of the Kafka.
const NAME: &str = "my-cluster";
/// The claim identity of another cluster operator watching [`NAMESPACE`].
const OTHER_OPERATOR: &str = "elsewhere/strimzi-cluster-operator";

/// The operator's configuration (no leader election: its claim identity is
/// `strimzi/strimzi-cluster-operator`).
fn operator_config() -> ClusterOperatorConfig {
    ClusterOperatorConfig::from_lookup(|name| match name {
        "STRIMZI_NAMESPACE" => Some(NAMESPACE.to_owned()),
        "STRIMZI_OPERATOR_NAMESPACE" => Some("strimzi".to_owned()),
        _ => None,
    })
    .unwrap()
}

/// A Kafka reconciler on the mock API's `client`, and its claim identity.
fn reconciler(client: kube::Client) -> (KafkaAssembly, String) {
    let config = operator_config();
    let identity = config.claim_identity();
    let runtime = OperatorRuntime::new(client, config.operator.clone(), OPERATOR_NAMES).unwrap();
    (KafkaAssembly::new(&runtime, config).unwrap(), identity)
}

/// Kafka [`NAME`] with one plain listener and `cluster_ca` as `spec.clusterCa`.
fn kafka(cluster_ca: Value) -> Kafka {
    serde_json::from_value(json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "uid": "uid-kafka", "generation": 1},
        "spec": {
            "kafka": {"listeners": [{"name": "plain", "port": 9092, "type": "internal", "tls": false}]},
            "clusterCa": cluster_ca,
        },
    }))
    .unwrap()
}

/// The path of the namespaced object `name` of kind `K`.
fn path<K: Resource<DynamicType = ()>>(name: &str) -> String {
    format!("{}/{name}", K::url_path(&(), Some(NAMESPACE)))
}

/// The Kafka's claim Lease, held by `holder` since a fixed time.
fn claim(holder: &str) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": naming::cluster_operator_claim_lease(NAME),
            "namespace": NAMESPACE,
            "resourceVersion": "7",
        },
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 240,
            "acquireTime": "2026-11-30T10:00:00.000000Z",
            "renewTime": "2026-11-30T10:00:00.000000Z",
        },
    })
}

/// The requests every reconciliation of the Kafka starts with: its node pools are not in
/// the (empty) cache, so they are listed (none), and its claim Lease is read, answered with
/// `lease`.
fn pools_and_claim(scenario: Scenario, lease: Value) -> Scenario {
    listed_pools_and_claim(scenario, vec![], lease)
}

/// [`pools_and_claim`] with the node pools `pools` listed.
fn listed_pools_and_claim(scenario: Scenario, pools: Vec<Value>, lease: Value) -> Scenario {
    let lease_path = path::<Lease>(&naming::cluster_operator_claim_lease(NAME));
    scenario
        .lists::<KafkaNodePool>(NAMESPACE, &format!("strimzi.io/cluster={NAME}"), pools)
        .expect(Method::GET, &lease_path)
        .respond_json(200, lease)
}

/// The error of a reconciliation that must fail.
async fn refusal(reconciler: &KafkaAssembly, resource: Kafka) -> ReconcileError {
    match reconciler.reconcile(Arc::new(resource)).await {
        Ok(reconciled) => panic!("reconciled: {:?}", reconciled.pending),
        Err(error) => error,
    }
}

#[tokio::test]
async fn a_kafka_another_operator_claims_is_marked_contended_and_left_alone() {
    let (client, scenario) = Scenario::new();
    let (reconciler, identity) = reconciler(client);
    let mut contended = claim(OTHER_OPERATOR);
    contended["metadata"]["annotations"] = json!({CONTENDER_ANNOTATION: identity});
    let contender = identity.clone();
    let verifier = pools_and_claim(scenario, claim(OTHER_OPERATOR))
        // The mark: the Lease replaced as read (its resource version), the holder kept.
        .expect(
            Method::PUT,
            &path::<Lease>(&naming::cluster_operator_claim_lease(NAME)),
        )
        .inspect_body(move |lease| {
            assert_eq!(lease["metadata"]["resourceVersion"], "7");
            assert_eq!(lease["spec"]["holderIdentity"], OTHER_OPERATOR);
            assert_eq!(
                lease["metadata"]["annotations"][CONTENDER_ANNOTATION],
                contender.as_str()
            );
        })
        .respond_json(200, contended)
        // A Warning Event about the Kafka, then nothing else: no CA Secret read, no object.
        .expect(
            Method::POST,
            &Event::url_path(&(), Some(NAMESPACE)).to_string(),
        )
        .inspect_body(|event| {
            assert_eq!(event["type"], "Warning");
            assert_eq!(event["reason"], "ConflictingOperator");
            assert_eq!(event["regarding"]["name"], NAME);
        })
        .respond_json(
            201,
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                   "metadata": {"name": "my-cluster.1", "namespace": NAMESPACE}}),
        )
        .start();

    let reconciled: Reconciled<KafkaStatus> = reconciler
        .reconcile(Arc::new(kafka(json!({}))))
        .await
        .unwrap();
    verifier.finish().await;
    let pending = reconciled.pending.unwrap();
    assert_eq!(pending.reason, "ConflictingOperator");
    assert!(pending.stalled, "only stopping an operator ends it");
    assert!(
        pending.message.contains(OTHER_OPERATOR) && pending.message.contains(&identity),
        "{}",
        pending.message
    );
    assert!(reconciled.keep_observed_generation);
    assert_eq!(reconciled.status, KafkaStatus::default());
}

/// The refusal of a reconciliation of a Kafka with `cluster_ca` as `spec.clusterCa` whose
/// claim this operator holds, when the cluster CA's certificate Secret is `certificate`
/// (`None`: absent) and its key Secret is absent: the Lease and both CA Secrets are read,
/// and nothing is written.
async fn refused_for_missing_ca_secrets(
    cluster_ca: Value,
    certificate: Option<Value>,
) -> ReconcileError {
    let (client, scenario) = Scenario::new();
    let (reconciler, identity) = reconciler(client);
    let cert_name = CaKind::Cluster.cert_secret_name(NAME);
    let key_name = CaKind::Cluster.key_secret_name(NAME);
    let cert_answer = match certificate {
        Some(secret) => (200, secret),
        None => (404, absent_secret(&cert_name)),
    };
    // Held by this operator with no contender: it acts, and writes nothing to the Lease.
    let verifier = pools_and_claim(scenario, claim(&identity))
        .expect(Method::GET, &path::<Secret>(&cert_name))
        .respond_json(cert_answer.0, cert_answer.1)
        .expect(Method::GET, &path::<Secret>(&key_name))
        .respond_json(404, absent_secret(&key_name))
        .start();
    let error = refusal(&reconciler, kafka(cluster_ca)).await;
    verifier.finish().await;
    assert_eq!(error.reason(), "MissingCaSecret");
    // Retried with backoff, and nothing else runs meanwhile (no renewal of running nodes).
    assert!(!error.is_permanent());
    error
}

#[tokio::test]
async fn a_ca_certificate_without_its_key_is_refused_before_any_write() {
    let certificate = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": CaKind::Cluster.cert_secret_name(NAME), "namespace": NAMESPACE},
        "data": {"ca.crt": "UEVN"},
    });
    let message = refused_for_missing_ca_secrets(json!({}), Some(certificate))
        .await
        .to_string();
    assert!(
        message.contains(&CaKind::Cluster.key_secret_name(NAME))
            && message.contains("restore the key Secret"),
        "{message}"
    );
}

#[tokio::test]
async fn a_user_managed_ca_without_its_secrets_is_refused_before_any_write() {
    let message =
        refused_for_missing_ca_secrets(json!({"generateCertificateAuthority": false}), None)
            .await
            .to_string();
    assert!(
        message.contains("generateCertificateAuthority is false"),
        "{message}"
    );
}

/// The answer of the API server to a read of the Secret `name`, which does not exist.
fn absent_secret(name: &str) -> Value {
    status_body(404, "NotFound", &format!("secrets \"{name}\" not found"))
}

/// The CA step of a new cluster: for the cluster CA, then the clients CA, both Secrets are
/// read (absent); then the key Secret and the certificate Secret are each read again and
/// applied with the cluster's label, the key first.
fn creates_the_cas(mut scenario: Scenario) -> Scenario {
    for kind in [CaKind::Cluster, CaKind::Clients] {
        let cert = kind.cert_secret_name(NAME);
        let key = kind.key_secret_name(NAME);
        for name in [&cert, &key] {
            scenario = scenario
                .expect(Method::GET, &path::<Secret>(name))
                .respond_json(404, absent_secret(name));
        }
        for (name, data_key) in [(&key, "ca.key"), (&cert, "ca.crt")] {
            let written = name.clone();
            scenario = scenario
                .expect(Method::GET, &path::<Secret>(name))
                .respond_json(404, absent_secret(name))
                .expect(
                    Method::PATCH,
                    &format!(
                        "{}?fieldManager={FIELD_MANAGER}&force=true",
                        path::<Secret>(name)
                    ),
                )
                .inspect_body(move |secret| {
                    assert_eq!(secret["metadata"]["name"], written.as_str());
                    assert_eq!(secret["metadata"]["labels"]["strimzi.io/cluster"], NAME);
                    assert!(secret["data"][data_key].is_string(), "{secret}");
                })
                .respond_json(
                    200,
                    json!({"apiVersion": "v1", "kind": "Secret",
                           "metadata": {"name": name, "namespace": NAMESPACE}}),
                );
        }
    }
    scenario
}

/// The refusal of a Kafka whose spec (with its node pools `pools`) cannot become a cluster,
/// reconciled for the first time by the operator that holds its claim: its CAs are made as
/// for any new cluster, its pod sets are read for their storage (none), the spec is refused,
/// and the pod sets of running nodes are looked for (none) to renew their certificates.
/// Nothing else is read or written.
async fn refused_spec(kafka: Kafka, pools: Vec<Value>) -> ReconcileError {
    let (client, scenario) = Scenario::new();
    let (reconciler, identity) = reconciler(client);
    let running_nodes = kafka_component_labels(NAME, &operator_config().model).selector_string();
    let verifier = creates_the_cas(listed_pools_and_claim(scenario, pools, claim(&identity)))
        .lists::<StrimziPodSet>(NAMESPACE, &format!("strimzi.io/cluster={NAME}"), vec![])
        .lists::<StrimziPodSet>(NAMESPACE, &running_nodes, vec![])
        .start();
    let error = refusal(&reconciler, kafka).await;
    verifier.finish().await;
    // Not retried with backoff: only a change of the spec (or the periodic reconciliation)
    // looks again.
    assert!(error.is_permanent(), "{error}");
    error
}

/// Kafka [`NAME`] with `config` as `spec.kafka.config`, and a cluster ID from before.
fn kafka_with_config(config: Value) -> Kafka {
    let mut kafka = kafka(json!({}));
    kafka.spec.kafka.config = serde_json::from_value(config).unwrap();
    kafka.status = Some(KafkaStatus {
        cluster_id: Some("cluster-id-from-before".to_owned()),
        ..KafkaStatus::default()
    });
    kafka
}

/// Node pool `name` of [`NAME`] with `roles` and one replica on ephemeral storage.
fn node_pool(name: &str, roles: &[&str]) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaNodePool",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": format!("uid-{name}"),
                     "labels": {"strimzi.io/cluster": NAME}},
        "spec": {"replicas": 1, "roles": roles, "storage": {"type": "ephemeral"}},
    })
}

#[tokio::test]
async fn a_kafka_without_node_pools_is_refused_for_good_once_its_cas_are_made() {
    let error = refused_spec(kafka_with_config(json!({})), vec![]).await;
    assert_eq!(error.reason(), "InvalidKafkaNodePools");
    assert_eq!(
        error.to_string(),
        "No KafkaNodePools found for Kafka cluster my-cluster: at least one KafkaNodePool labelled strimzi.io/cluster=my-cluster is required"
    );
}

#[tokio::test]
async fn a_kafka_of_brokers_without_controllers_is_refused_for_good_once_its_cas_are_made() {
    let error = refused_spec(
        kafka_with_config(json!({})),
        vec![node_pool("brokers", &["broker"])],
    )
    .await;
    assert_eq!(error.reason(), "InvalidKafkaNodePools");
    assert!(error.to_string().contains("controller role"), "{error}");
}

#[tokio::test]
async fn a_config_provider_alias_of_the_operator_is_refused_for_good_once_its_cas_are_made() {
    let error = refused_spec(
        kafka_with_config(json!({"config.providers": "strimzienv"})),
        vec![
            node_pool("controllers", &["controller"]),
            node_pool("brokers", &["broker"]),
        ],
    )
    .await;
    assert_eq!(error.reason(), "InvalidConfigurationException");
    assert!(
        error
            .to_string()
            .contains("config.provider strimzienv not permitted"),
        "{error}"
    );
}
