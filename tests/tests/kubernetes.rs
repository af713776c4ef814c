//! Compatibility on a real API server: our CRDs are accepted and Established, every example
//! custom resource (Strimzi's and ours) is accepted, invalid ones are refused naming the
//! field, kwok makes pods Ready on the fake nodes, and the garbage collector deletes what our
//! custom resources own.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::document::yaml_documents;
use strimzi_api::topic::KafkaTopic;
use strimzi_tests::environment::{STORAGE_CLASS, TestEnv};
use strimzi_tests::reference::{own_examples_dir, reference_examples_dir, yaml_files};
use strimzi_tests::resources::{CustomResources, eventually};

/// How long the garbage collector may take to delete what a deleted custom resource owned:
/// about a second when it knows our CRDs from its start, up to 30 s (its discovery period)
/// more when it learns about them only later.
const GARBAGE_COLLECTION_TIMEOUT: Duration = Duration::from_secs(10);

/// Creates `document` in `namespace`, returning the API server's error message on refusal.
async fn create(client: &Client, namespace: &str, document: &Value) -> Result<(), String> {
    strimzi_tests::resources::create_document(client, namespace, document).await
}

#[tokio::test]
async fn our_crds_are_established() {
    let env = TestEnv::shared();
    let crds: Api<CustomResourceDefinition> = Api::all(env.client().await);
    let established: Vec<String> = crds
        .list(&ListParams::default())
        .await
        .unwrap()
        .into_iter()
        .filter(|crd| {
            crd.status
                .as_ref()
                .and_then(|status| status.conditions.as_ref())
                .is_some_and(|conditions| {
                    conditions
                        .iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                })
        })
        .map(|crd| crd.name_any())
        .collect();
    println!("established CRDs: {established:?}");
    assert_eq!(established.len(), 10, "{established:?}");
}

#[tokio::test]
async fn what_our_custom_resources_own_is_deleted_with_them() {
    let env = TestEnv::shared();
    let client = env.client().await;
    let namespace = env.namespace("owner").await;
    let topics = CustomResources::of::<KafkaTopic>(&client, &namespace);
    topics
        .create(json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic",
            "metadata": {"name": "owner"}, "spec": {},
        }))
        .await;
    let owner_uid = topics.get("owner").await.unwrap().metadata.uid.unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(client, &namespace);
    let child: ConfigMap = serde_json::from_value(json!({
        "metadata": {
            "name": "child",
            "ownerReferences": [{
                "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic",
                "name": "owner", "uid": owner_uid,
            }],
        },
    }))
    .unwrap();
    config_maps
        .create(&PostParams::default(), &child)
        .await
        .unwrap();
    let deleted = Instant::now();
    topics.delete("owner").await;
    eventually(
        "the garbage collector to delete the KafkaTopic's ConfigMap",
        GARBAGE_COLLECTION_TIMEOUT,
        || async { config_maps.get_opt("child").await.unwrap().is_none() },
    )
    .await;
    println!(
        "the owned ConfigMap was deleted {:.1} s after its KafkaTopic",
        deleted.elapsed().as_secs_f64()
    );
}

#[tokio::test]
async fn every_example_is_accepted() {
    let env = TestEnv::shared();
    let client = env.client().await;
    let mut files = yaml_files(&reference_examples_dir());
    files.extend(yaml_files(&own_examples_dir()));
    let (mut accepted, mut refused) = (0, Vec::new());
    for file in &files {
        // Examples reuse names (`my-cluster`), so each file gets a namespace of its own.
        let namespace = env.namespace("example").await;
        let text = std::fs::read_to_string(file).unwrap();
        for document in yaml_documents(&text).unwrap() {
            match create(&client, &namespace, &document).await {
                Ok(()) => accepted += 1,
                Err(message) => refused.push(format!("{}: {message}", file.display())),
            }
        }
    }
    println!("accepted {accepted} documents from {} files", files.len());
    // Strimzi 1.2 ships two Connect metrics examples without `groupId` and the storage
    // topics, which its own CRD requires: the API server refuses them, as it should.
    let (upstream, unexpected): (Vec<_>, Vec<_>) = refused.into_iter().partition(|message| {
        message.contains("kafka-connect-metrics.yaml") && message.contains("groupId")
    });
    assert!(unexpected.is_empty(), "refused:\n{}", unexpected.join("\n"));
    assert_eq!(upstream.len(), 2, "{upstream:?}");
    assert!(accepted >= 140, "only {accepted} documents accepted");
}

/// An invalid Kafka or KafkaNodePool: what is wrong, the document, and a fragment the
/// refusal must contain (the field, or the rule's message).
fn invalid_documents() -> Vec<(&'static str, Value, &'static str)> {
    let kafka = |listeners: Value| {
        json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "Kafka",
            "metadata": {"name": "bad"},
            "spec": {"kafka": {"listeners": listeners}},
        })
    };
    let pool = |roles: Value, storage: Value| {
        json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaNodePool",
            "metadata": {"name": "bad", "labels": {"strimzi.io/cluster": "c"}},
            "spec": {"replicas": 1, "roles": roles, "storage": storage},
        })
    };
    let plain = json!({"name": "plain", "port": 9092, "type": "internal", "tls": false});
    let mut negative_replicas = pool(json!(["broker"]), json!({"type": "ephemeral"}));
    negative_replicas["spec"]["replicas"] = json!(-1);
    vec![
        (
            "wrong enum",
            kafka(json!([{"name": "a", "port": 9092, "type": "hostport", "tls": false}])),
            "spec.kafka.listeners[0].type",
        ),
        (
            "wrong type",
            kafka(json!([{"name": "a", "port": "ninety", "type": "internal", "tls": false}])),
            "spec.kafka.listeners[0].port",
        ),
        (
            "missing required field",
            kafka(json!([{"name": "a", "port": 9092, "type": "internal"}])),
            "tls",
        ),
        (
            "port below 9092",
            kafka(json!([{"name": "a", "port": 9000, "type": "internal", "tls": false}])),
            "spec.kafka.listeners[0].port",
        ),
        (
            "duplicate listener names",
            kafka(json!([plain, {"name": "plain", "port": 9093, "type": "internal", "tls": true}])),
            "listener names must be unique",
        ),
        (
            "duplicate listener ports",
            kafka(json!([plain, {"name": "tls", "port": 9092, "type": "internal", "tls": true}])),
            "listener ports must be unique",
        ),
        (
            "route without tls",
            kafka(json!([{"name": "r", "port": 9094, "type": "route", "tls": false}])),
            "set tls to true",
        ),
        (
            "tls authentication without tls",
            kafka(
                json!([{"name": "a", "port": 9093, "type": "internal", "tls": false, "authentication": {"type": "tls"}}]),
            ),
            "needs a listener with tls: true",
        ),
        (
            "reserved port",
            kafka(json!([{"name": "a", "port": 9999, "type": "internal", "tls": false}])),
            "9404 and 9999",
        ),
        (
            "ingress without bootstrap host",
            kafka(json!([{"name": "i", "port": 9094, "type": "ingress", "tls": true}])),
            "bootstrap.host",
        ),
        (
            "no roles",
            pool(json!([]), json!({"type": "ephemeral"})),
            "at least one role",
        ),
        (
            "a role twice",
            pool(json!(["broker", "broker"]), json!({"type": "ephemeral"})),
            "only once",
        ),
        (
            "jbod without volumes",
            pool(json!(["broker"]), json!({"type": "jbod", "volumes": []})),
            "at least one volume",
        ),
        (
            "jbod volume without id",
            pool(
                json!(["broker"]),
                json!({"type": "jbod", "volumes": [{"type": "ephemeral"}]}),
            ),
            "needs an id",
        ),
        (
            "duplicate jbod ids",
            pool(
                json!(["broker"]),
                json!({"type": "jbod", "volumes": [{"id": 0, "type": "ephemeral"}, {"id": 0, "type": "ephemeral"}]}),
            ),
            "different ids",
        ),
        (
            "two shared metadata volumes",
            pool(
                json!(["broker"]),
                json!({"type": "jbod", "volumes": [{"id": 0, "type": "ephemeral", "kraftMetadata": "shared"}, {"id": 1, "type": "ephemeral", "kraftMetadata": "shared"}]}),
            ),
            "kraftMetadata: shared",
        ),
        (
            "persistent claim without size",
            pool(json!(["broker"]), json!({"type": "persistent-claim"})),
            "needs a size",
        ),
        ("negative replicas", negative_replicas, "spec.replicas"),
    ]
}

#[tokio::test]
async fn invalid_documents_are_refused_naming_the_field() {
    let env = TestEnv::shared();
    let client = env.client().await;
    let namespace = env.namespace("invalid").await;
    let mut wrong = Vec::new();
    let cases = invalid_documents();
    for (what, document, expected) in &cases {
        match create(&client, &namespace, document).await {
            Ok(()) => wrong.push(format!("{what}: accepted")),
            Err(message) if message.contains(expected) => {}
            Err(message) => wrong.push(format!("{what}: refused without `{expected}`: {message}")),
        }
    }
    println!("{} invalid documents refused", cases.len() - wrong.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn pods_become_ready_on_fake_nodes_and_claims_are_bound() {
    let env = TestEnv::shared();
    let client = env.client().await;
    let namespace = env.namespace("pods").await;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &namespace);
    let claim: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }))
    .unwrap();
    claims.create(&PostParams::default(), &claim).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "sleeper"},
        "spec": {
            "containers": [{"name": "main", "image": "example.invalid/sleeper:1"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    }))
    .unwrap();
    pods.patch(
        "sleeper",
        &PatchParams::apply("test").force(),
        &Patch::Apply(&pod),
    )
    .await
    .unwrap();
    let ready = kube::runtime::wait::await_condition(
        pods.clone(),
        "sleeper",
        kube::runtime::wait::conditions::is_pod_running(),
    );
    tokio::time::timeout(Duration::from_secs(60), ready)
        .await
        .expect("pod not running on a kwok node within 60 s")
        .unwrap();
    let pod = pods.get("sleeper").await.unwrap();
    let node = pod.spec.unwrap().node_name.unwrap();
    assert!(
        strimzi_tests::environment::ZONES
            .iter()
            .any(|zone| node == format!("kwok-{zone}")),
        "{node}"
    );
    let claim = claims.get("data").await.unwrap();
    assert_eq!(
        claim.spec.unwrap().storage_class_name.as_deref(),
        Some(STORAGE_CLASS)
    );
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"));
}

/// Socket inodes held open by `pid`.
fn socket_inodes(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read_link(entry.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            target
                .strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
                .map(str::to_owned)
        })
        .collect()
}

#[tokio::test]
async fn every_component_listens_on_loopback_only() {
    let env = TestEnv::shared();
    // The broker starts on first use, and no other test of this program uses it.
    let before_kafka = env.pids();
    let kafka = env.kafka().pid();
    assert!(
        !before_kafka.contains(&kafka),
        "the Kafka broker ran before its first use"
    );
    assert!(
        env.pids().contains(&kafka),
        "the started Kafka broker is missing from the components"
    );
    let tables: String = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .map(|file| std::fs::read_to_string(file).unwrap_or_default())
        .collect();
    let mut checked = 0;
    for pid in env.pids() {
        let inodes = socket_inodes(pid);
        for line in tables.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // Listening sockets (state 0A) owned by this component.
            if fields.len() > 9
                && fields[3] == "0A"
                && inodes.iter().any(|inode| inode == fields[9])
            {
                let address = fields[1].split(':').next().unwrap();
                let loopback = address == "0100007F"
                    || address == "0000000000000000FFFF00000100007F"
                    || address == "00000000000000000000000001000000";
                assert!(loopback, "process {pid} listens on {}", fields[1]);
                checked += 1;
            }
        }
    }
    println!(
        "{checked} listening sockets of {} processes, all on loopback",
        env.pids().len()
    );
    assert!(
        checked >= 8,
        "expected the listeners of every component, found {checked}"
    );
}
