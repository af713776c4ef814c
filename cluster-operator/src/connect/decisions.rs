//! The KafkaConnect reconciler's decisions against a mock Kubernetes API
//! (`strimzi_tests::mock_api`): each test calls `apply_objects` or `reconcile` directly and
//! states every Kubernetes request the decision makes, in order, with its answer; a request
//! not stated fails the test. The refusals here (a missing trusted certificate Secret, a
//! builder pod of another owner) and the first step of a build are tested here only; the objects of Strimzi's examples through
//! the real API server and the whole controller are in `tests/connect_objects.rs`, and the
//! cleanup pass in `operator-common/tests/apply.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use http::Method;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Resource;
use serde::Serialize;
use serde_json::{Value, json};
use strimzi_api::connect::KafkaConnect;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::controller::Reconciler;
use strimzi_operator_common::labels::selector_string;
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_tests::mock_api::{Scenario, status_body};

use super::{ConnectError, ConnectReconciler};
use crate::bindings::InitBindingKind;
use crate::config::{ClusterOperatorConfig, FIELD_MANAGER, OPERATOR_NAMES};
use crate::model::connect::build::ConnectBuild;
use crate::model::connect::{ConnectCluster, ConnectInputs, ConnectObjects};

/// The namespace of every KafkaConnect here.
const NAMESPACE: &str = "team-a";
/// The name of every KafkaConnect here.
const NAME: &str = "my-connect";

/// The operator's configuration, with NetworkPolicies generated or not.
fn operator_config(network_policies: bool) -> ClusterOperatorConfig {
    ClusterOperatorConfig::from_lookup(|name| match name {
        "STRIMZI_NAMESPACE" => Some(NAMESPACE.to_owned()),
        "STRIMZI_OPERATOR_NAMESPACE" => Some("strimzi".to_owned()),
        "STRIMZI_NETWORK_POLICY_GENERATION" => Some(network_policies.to_string()),
        _ => None,
    })
    .unwrap()
}

/// A reconciler on the mock API's `client`.
fn reconciler(client: kube::Client, config: &ClusterOperatorConfig) -> ConnectReconciler {
    let runtime = OperatorRuntime::new(client, config.operator.clone(), OPERATOR_NAMES).unwrap();
    ConnectReconciler::new(&runtime, config)
}

/// KafkaConnect [`NAME`] with one worker and `spec` merged into its spec.
fn kafka_connect(spec: Value) -> KafkaConnect {
    let mut document = json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaConnect",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "uid": "uid-connect", "generation": 1},
        "spec": {
            "replicas": 1,
            "bootstrapServers": "my-cluster-kafka-bootstrap:9092",
            "groupId": "my-group",
            "configStorageTopic": "my-configs",
            "statusStorageTopic": "my-status",
            "offsetStorageTopic": "my-offsets",
        },
    });
    document["spec"]
        .as_object_mut()
        .unwrap()
        .extend(spec.as_object().unwrap().clone());
    serde_json::from_value(document).unwrap()
}

/// JMX with password authentication: a `<name>-connect-jmx` Secret.
fn jmx_with_password() -> Value {
    json!({"jmxOptions": {"authentication": {"type": "password"}}})
}

/// A `spec.build`: a Dockerfile ConfigMap.
fn build() -> Value {
    json!({"build": {
        "output": {"type": "docker", "image": "registry.example/connect:1"},
        "plugins": [{"name": "file", "artifacts": [
            {"type": "maven", "group": "org.apache.kafka", "artifact": "connect-file", "version": "4.3.1"},
        ]}],
    }})
}

/// The cluster of `connect` and its objects (none of its inputs read).
fn cluster_and_objects(
    connect: &KafkaConnect,
    config: &ClusterOperatorConfig,
) -> (ConnectCluster, ConnectObjects) {
    let cluster = ConnectCluster::from_kafka_connect(connect, &config.model).unwrap();
    let objects = cluster.objects(&ConnectInputs::default()).unwrap();
    (cluster, objects)
}

/// The JSON of `object`.
fn json_of(object: &impl Serialize) -> Value {
    serde_json::to_value(object).unwrap()
}

/// `object` as the API server returns it after our last apply: with the `managedFields`
/// entry of our field manager listing every field it set (maps field by field, lists and
/// values whole), so that only the comparison of [`contains`] and the owned fields decides.
///
/// [`contains`]: strimzi_operator_common::apply::contains
fn as_last_applied<K: Resource<DynamicType = ()> + Serialize>(object: &K) -> Value {
    fn owned_fields(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| (format!("f:{key}"), owned_fields(value)))
                    .collect(),
            ),
            _ => json!({}),
        }
    }
    let mut document = json_of(object);
    let mut fields = owned_fields(&document);
    for identity in ["f:apiVersion", "f:kind"] {
        fields.as_object_mut().unwrap().remove(identity);
    }
    document["metadata"]["managedFields"] = json!([{
        "manager": FIELD_MANAGER,
        "operation": "Apply",
        "apiVersion": K::api_version(&()),
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }]);
    document
}

/// `object` with a deletion timestamp: being deleted.
fn being_deleted<K: Resource + Serialize + Clone>(object: &K) -> Value {
    let mut object = object.clone();
    object.meta_mut().deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    json_of(&object)
}

/// The API path of `object`.
fn path_of<K: Resource<DynamicType = ()>>(object: &K) -> String {
    let meta = object.meta();
    format!(
        "{}/{}",
        K::url_path(&(), meta.namespace.as_deref()),
        meta.name.as_deref().unwrap()
    )
}

/// The Kubernetes requests of the KafkaConnect reconciler, for [`Scenario`].
trait ConnectRequests: Sized {
    /// Lists the objects of kind `K` by the selector of `cluster`, answered with `items`.
    fn lists_for<K: Resource<DynamicType = ()>>(
        self,
        cluster: &ConnectCluster,
        items: Vec<Value>,
    ) -> Self;
    /// Reads `object`, which does not exist.
    fn reads_absent<K: Resource<DynamicType = ()>>(self, object: &K) -> Self;
    /// Reads `object`, answered with it as we last applied it.
    fn reads_unchanged<K: Resource<DynamicType = ()> + Serialize>(self, object: &K) -> Self;
    /// Server-side applies exactly `object` with our field manager, forced.
    fn applies<K: Resource<DynamicType = ()> + Serialize>(self, object: &K) -> Self;
    /// Deletes `object` in the background.
    fn deletes<K: Resource<DynamicType = ()> + Serialize + Clone>(self, object: &K) -> Self;
    /// Reads `object` (absent), then applies it.
    fn creates<K: Resource<DynamicType = ()> + Serialize>(self, object: &K) -> Self {
        self.reads_absent(object).applies(object)
    }
    /// Reads the init ClusterRoleBinding of the Connect cluster, which does not exist (so
    /// nothing is deleted).
    fn reads_no_init_binding(self) -> Self {
        let name = InitBindingKind::CONNECT.binding_name(NAMESPACE, NAME);
        let mut binding = ClusterRoleBinding::default();
        binding.metadata.name = Some(name);
        self.reads_absent(&binding)
    }
    /// How a cluster none of whose objects exist yet starts: the pruned kinds listed (none
    /// there), the ServiceAccount, Role and RoleBinding created, the init ClusterRoleBinding
    /// read (none there).
    fn starts_a_new_cluster(self, cluster: &ConnectCluster, objects: &ConnectObjects) -> Self {
        self.lists_for::<Secret>(cluster, vec![])
            .lists_for::<ConfigMap>(cluster, vec![])
            .lists_for::<NetworkPolicy>(cluster, vec![])
            .creates(&objects.service_account)
            .creates(&objects.role)
            .creates(&objects.role_binding)
            .reads_no_init_binding()
    }
}

impl ConnectRequests for Scenario {
    fn lists_for<K: Resource<DynamicType = ()>>(
        self,
        cluster: &ConnectCluster,
        items: Vec<Value>,
    ) -> Self {
        Scenario::lists::<K>(
            self,
            NAMESPACE,
            &selector_string(&cluster.selector()),
            items,
        )
    }

    fn reads_absent<K: Resource<DynamicType = ()>>(self, object: &K) -> Self {
        let name = object.meta().name.clone().unwrap();
        self.expect(Method::GET, &path_of(object)).respond_json(
            404,
            status_body(
                404,
                "NotFound",
                &format!("{} {name} not found", K::kind(&())),
            ),
        )
    }

    fn reads_unchanged<K: Resource<DynamicType = ()> + Serialize>(self, object: &K) -> Self {
        self.expect(Method::GET, &path_of(object))
            .respond_json(200, as_last_applied(object))
    }

    fn applies<K: Resource<DynamicType = ()> + Serialize>(self, object: &K) -> Self {
        let desired = json_of(object);
        let answer = desired.clone();
        self.expect(
            Method::PATCH,
            &format!(
                "{}?fieldManager={FIELD_MANAGER}&force=true",
                path_of(object)
            ),
        )
        .inspect_body(move |body| assert_eq!(*body, desired))
        .respond_json(200, answer)
    }

    fn deletes<K: Resource<DynamicType = ()> + Serialize + Clone>(self, object: &K) -> Self {
        self.expect(Method::DELETE, &path_of(object))
            .inspect_body(|body| assert_eq!(body["propagationPolicy"], "Background"))
            .respond_json(200, being_deleted(object))
    }
}

/// Runs `apply_objects` for `cluster` and `objects` against `scenario`, which it then
/// verifies.
async fn apply_objects(
    scenario: Scenario,
    client: kube::Client,
    config: &ClusterOperatorConfig,
    cluster: &ConnectCluster,
    objects: &ConnectObjects,
) {
    let verifier = scenario.start();
    reconciler(client, config)
        .apply_objects(cluster, objects)
        .await
        .unwrap();
    verifier.finish().await;
}

/// The error of a reconciliation of `connect` that must fail.
async fn refusal(reconciler: &ConnectReconciler, connect: KafkaConnect) -> ConnectError {
    match reconciler.reconcile(Arc::new(connect)).await {
        Ok(reconciled) => panic!("reconciled: {:?}", reconciled.status),
        Err(error) => error,
    }
}

#[tokio::test]
async fn a_new_cluster_lists_each_pruned_kind_once_and_creates_every_object_in_order() {
    let config = operator_config(true);
    let (cluster, objects) = cluster_and_objects(&kafka_connect(jmx_with_password()), &config);
    let jmx_secret = objects.jmx_secret.as_ref().unwrap();
    let network_policy = objects.network_policy.as_ref().unwrap();
    let budget = objects.pod_disruption_budget.as_ref().unwrap();
    let (client, scenario) = Scenario::new();
    let scenario = scenario
        .starts_a_new_cluster(&cluster, &objects)
        // Listed as absent: created without a read.
        .applies(jmx_secret)
        .applies(&objects.config_map)
        .creates(&objects.api_service)
        .creates(&objects.headless_service)
        .applies(network_policy)
        .creates(budget);
    apply_objects(scenario, client, &config, &cluster, &objects).await;
}

#[tokio::test]
async fn objects_no_longer_desired_are_deleted_and_those_being_deleted_are_left() {
    // The cluster had JMX authentication, with NetworkPolicies generated; now it has
    // neither, and the operator generates no NetworkPolicy. A ConfigMap of the cluster
    // (labelled as its Dockerfile was by earlier versions) is being deleted.
    let (_, before) = cluster_and_objects(
        &kafka_connect(json!({"jmxOptions": jmx_with_password()["jmxOptions"]})),
        &operator_config(true),
    );
    let mut old_dockerfile = before.config_map.clone();
    old_dockerfile.metadata.name = Some(format!("{NAME}-connect-dockerfile"));
    let config = operator_config(false);
    let (cluster, objects) = cluster_and_objects(&kafka_connect(json!({})), &config);
    assert!(objects.jmx_secret.is_none());
    assert!(objects.network_policy.is_none());
    let old_jmx_secret = before.jmx_secret.as_ref().unwrap();
    let old_policy = before.network_policy.as_ref().unwrap();
    let budget = objects.pod_disruption_budget.as_ref().unwrap();
    let (client, scenario) = Scenario::new();
    let scenario = scenario
        .lists_for::<Secret>(&cluster, vec![as_last_applied(old_jmx_secret)])
        .lists_for::<ConfigMap>(
            &cluster,
            vec![
                as_last_applied(&objects.config_map),
                being_deleted(&old_dockerfile),
            ],
        )
        .lists_for::<NetworkPolicy>(&cluster, vec![as_last_applied(old_policy)])
        .reads_unchanged(&objects.service_account)
        .reads_unchanged(&objects.role)
        .reads_unchanged(&objects.role_binding)
        .reads_no_init_binding()
        .reads_unchanged(&objects.api_service)
        .reads_unchanged(&objects.headless_service)
        .reads_unchanged(budget)
        // The Dockerfile ConfigMap is being deleted already: not deleted again.
        .deletes(old_jmx_secret)
        .deletes(old_policy);
    apply_objects(scenario, client, &config, &cluster, &objects).await;
}

#[tokio::test]
async fn objects_as_last_applied_are_not_written_and_a_dropped_key_is_removed() {
    let config = operator_config(true);
    let (cluster, objects) = cluster_and_objects(&kafka_connect(jmx_with_password()), &config);
    let jmx_secret = objects.jmx_secret.as_ref().unwrap();
    let network_policy = objects.network_policy.as_ref().unwrap();
    let budget = objects.pod_disruption_budget.as_ref().unwrap();
    // Our last apply of the JMX Secret set a key the desired Secret no longer has: the live
    // Secret has every desired field, but the key must go, so it is written.
    let mut with_dropped_key = jmx_secret.clone();
    with_dropped_key
        .data
        .as_mut()
        .unwrap()
        .insert("dropped".to_owned(), k8s_openapi::ByteString(b"x".to_vec()));
    let (client, scenario) = Scenario::new();
    let scenario = scenario
        .lists_for::<Secret>(&cluster, vec![as_last_applied(&with_dropped_key)])
        .lists_for::<ConfigMap>(&cluster, vec![as_last_applied(&objects.config_map)])
        .lists_for::<NetworkPolicy>(&cluster, vec![as_last_applied(network_policy)])
        .reads_unchanged(&objects.service_account)
        .reads_unchanged(&objects.role)
        .reads_unchanged(&objects.role_binding)
        .reads_no_init_binding()
        .applies(jmx_secret)
        .reads_unchanged(&objects.api_service)
        .reads_unchanged(&objects.headless_service)
        .reads_unchanged(budget);
    apply_objects(scenario, client, &config, &cluster, &objects).await;
}

/// An Event the API server accepted.
fn event_answer() -> Value {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
           "metadata": {"name": "e", "namespace": NAMESPACE},
           "eventTime": "2026-01-01T00:00:00.000000Z"})
}

#[tokio::test]
async fn a_new_build_starts_its_builder_and_writes_no_worker() {
    let config = operator_config(true);
    let connect = kafka_connect(build());
    let (cluster, objects) = cluster_and_objects(&connect, &config);
    let image_build = ConnectBuild::of(&cluster).unwrap().unwrap();
    let pod = image_build.builder_pod();
    let mut pod_set = StrimziPodSet::new(&format!("{NAME}-connect"), Default::default());
    pod_set.metadata.namespace = Some(NAMESPACE.to_owned());
    let (client, scenario) = Scenario::new();
    let verifier = scenario
        // Nothing recorded, no builder: the build starts.
        .reads_absent(&pod_set)
        .reads_absent(&pod)
        .creates(&image_build.dockerfile_config_map())
        .creates(&image_build.service_account())
        .creates(&pod)
        .expect(
            Method::POST,
            &format!("/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events"),
        )
        .inspect_body(|body| assert_eq!(body["reason"], "ConnectBuildStarted"))
        .respond_json(201, event_answer())
        .starts_a_new_cluster(&cluster, &objects)
        .applies(&objects.config_map)
        .creates(&objects.api_service)
        .creates(&objects.headless_service)
        .applies(objects.network_policy.as_ref().unwrap())
        .creates(objects.pod_disruption_budget.as_ref().unwrap())
        // No StrimziPodSet: no worker runs until the image is pushed.
        .start();
    let reconciled = reconciler(client, &config)
        .reconcile(Arc::new(connect))
        .await
        .unwrap();
    verifier.finish().await;
    let pending = reconciled.pending.unwrap();
    assert_eq!(pending.reason, "ConnectBuildRunning");
    assert!(!pending.stalled);
    assert!(
        pending.message.contains("registry.example/connect:1"),
        "{}",
        pending.message
    );
    // The builder pod builds the revision of the Dockerfile it mounts.
    assert_eq!(
        pod.metadata.annotations.as_ref().unwrap()["strimzi.io/connect-build-revision"],
        image_build.revision()
    );
    assert!(image_build.dockerfile().contains("connect-file"));
}

#[tokio::test]
async fn a_builder_pod_of_another_owner_is_neither_replaced_nor_deleted() {
    let config = operator_config(true);
    let connect = kafka_connect(build());
    let (cluster, _) = cluster_and_objects(&connect, &config);
    let image_build = ConnectBuild::of(&cluster).unwrap().unwrap();
    let mut foreign = image_build.builder_pod();
    foreign.metadata.owner_references = None;
    let mut pod_set = StrimziPodSet::new(&format!("{NAME}-connect"), Default::default());
    pod_set.metadata.namespace = Some(NAMESPACE.to_owned());
    let (client, scenario) = Scenario::new();
    let verifier = scenario
        .reads_absent(&pod_set)
        .expect(Method::GET, &path_of(&foreign))
        .respond_json(200, json_of(&foreign))
        // Nothing else: no delete, no write.
        .start();
    let error = refusal(&reconciler(client, &config), connect).await;
    verifier.finish().await;
    assert_eq!(error.reason(), "ConnectBuildPodConflict");
    assert!(
        error.to_string().contains(&format!("{NAME}-connect-build")),
        "{error}"
    );
}

#[tokio::test]
async fn a_removed_build_deletes_its_objects_but_not_a_builder_pod_of_another_owner() {
    let config = operator_config(true);
    let connect = kafka_connect(build());
    let (cluster, _) = cluster_and_objects(&connect, &config);
    let image_build = ConnectBuild::of(&cluster).unwrap().unwrap();
    let dockerfile = image_build.dockerfile_config_map();
    let account = image_build.service_account();
    // A pod with the builder's name and labels that the KafkaConnect does not own.
    let mut foreign = image_build.builder_pod();
    foreign.metadata.owner_references = None;
    let selector = super::build::build_selector(&cluster);
    let (client, scenario) = Scenario::new();
    let verifier = scenario
        .lists::<ConfigMap>(NAMESPACE, &selector, vec![as_last_applied(&dockerfile)])
        .lists::<Pod>(NAMESPACE, &selector, vec![json_of(&foreign)])
        .lists::<ServiceAccount>(NAMESPACE, &selector, vec![as_last_applied(&account)])
        // The pod is left: no delete of it.
        .deletes(&account)
        .deletes(&dockerfile)
        .start();
    reconciler(client, &config)
        .remove_build(&connect, &cluster)
        .await
        .unwrap();
    verifier.finish().await;
}

#[tokio::test]
async fn build_options_the_builder_does_not_allow_are_refused_before_any_request() {
    let config = operator_config(true);
    let mut spec = build();
    spec["build"]["output"]["additionalBuildOptions"] = json!(["--retry=2", "--volume=/:/host"]);
    let (client, scenario) = Scenario::new();
    let verifier = scenario.start();
    let error = refusal(&reconciler(client, &config), kafka_connect(spec)).await;
    verifier.finish().await;
    assert_eq!(error.reason(), "InvalidResourceException");
    assert!(error.is_permanent());
    assert_eq!(
        error.to_string(),
        ".spec.build.output.additionalBuildOptions contains forbidden options: [--volume]"
    );
}

#[tokio::test]
async fn a_missing_trusted_certificate_secret_refuses_the_cluster_before_any_write() {
    let config = operator_config(true);
    let connect = kafka_connect(json!({"tls": {"trustedCertificates": [
        {"secretName": "my-cluster-cluster-ca-cert", "pattern": "*.crt"},
    ]}}));
    let mut ca_secret = Secret::default();
    ca_secret.metadata.name = Some("my-cluster-cluster-ca-cert".to_owned());
    ca_secret.metadata.namespace = Some(NAMESPACE.to_owned());
    let (client, scenario) = Scenario::new();
    let verifier = scenario.reads_absent(&ca_secret).start();
    let error = refusal(&reconciler(client, &config), connect).await;
    verifier.finish().await;
    assert_eq!(error.reason(), "InvalidConfigurationException");
    // Retried with backoff: the Secret may appear.
    assert!(!error.is_permanent());
    assert!(
        error.to_string().contains("my-cluster-cluster-ca-cert"),
        "{error}"
    );
}
