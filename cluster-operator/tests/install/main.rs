//! The operators installed the way a user installs them, on the real-node test environment.
//!
//! First a cluster that Strimzi's operator made moves to ours and back as the user guide's
//! migration page says ([`migration`]).
//!
//! Then the README's "Install on your cluster" section, every shell block run exactly as
//! written with `bash`, in order, in a folder of the release's files (`deploy/release.sh` with
//! the operator image the environment built): the image imported with `ctr` into the node's
//! containerd, the single-file manifest applied, Strimzi's `kafka-single-node.yaml` Ready, a
//! KafkaTopic, a record produced and consumed by Kafka's console tools in pods, and the
//! uninstall, after which no namespace, CRD or ClusterRole of it is left.
//!
//! Then our image (built from the workspace's `Dockerfile`), `deploy/install/cluster-operator`
//! applied with the documented namespace edit into a namespace that enforces the
//! `restricted` Pod Security Standard, and nothing else: the cluster operator runs as a pod
//! with exactly the bundle's permissions and turns Strimzi's `kafka-ephemeral.yaml` into a
//! working Kafka with its entity operator, and Strimzi's `kafka-bridge.yaml` into a running
//! HTTP Bridge; once the entity operator is removed, the standalone topic and
//! user operator bundles manage that cluster's KafkaTopics and KafkaUsers; a rack-aware Kafka with a `nodeport` listener gets its rack and
//! advertised address from our init program. Any permission error in an operator's log fails
//! the test.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../support/mod.rs"]
mod support;

mod migration;

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use k8s_openapi::api::core::v1::{Namespace, Pod, Secret, Service};
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, DeleteParams, ListParams, LogParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_tests::bundle::{Bundle, PLACEHOLDER_NAMESPACE};
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::command_line::run_ok;
use strimzi_tests::control_plane::binary;
use strimzi_tests::docs::{BlockRun, run_shell_block, shell_blocks};
use strimzi_tests::environment::TestEnv;
use strimzi_tests::measure::rss_mib;
use strimzi_tests::nodes::images_dir;
use strimzi_tests::reference::{reference_examples_dir, workspace_root};
use strimzi_tests::resources::{CustomResources, eventually_ok};
use support::real_nodes::{
    POD_WAIT, all_pods_ready, binaries, bootstrap, eventually, is_ready, process_named, round_trip,
};
use support::{apply, apply_as, documents, ready};

/// Field manager of what the test applies in the user's place.
const USER: &str = "kubectl";

fn env() -> &'static TestEnv {
    support::real_nodes::env_with_operator_image()
}

/// The README's section that this test runs.
const README_SECTION: &str = "## Install on your cluster";
/// What the README's consumer prints.
const README_RECORD: &str = "Hello from strimzi-rs";

/// The three scenarios in one test, in this order: the migration starts from a cluster with
/// Strimzi's install only (no CRD of ours) and ends with Strimzi's uninstall; the README's
/// uninstall deletes the CRDs and the ClusterRoles, which the bundles' scenario then creates
/// again.
#[tokio::test]
async fn a_user_moves_from_strimzi_and_back_installs_as_the_readme_says_then_from_the_bundles() {
    let shell = UserShell::new(env());
    migration::a_cluster_strimzis_operator_made_moves_to_ours_and_back_as_the_page_says(&shell)
        .await;
    the_readme_install_section_runs_as_written(&shell).await;
    the_install_bundles_run_our_operators_as_pods_with_least_privilege_under_restricted_pod_security().await;
}

/// A user's shell on the environment, in a folder of the release's files (as
/// `deploy/release.sh` writes them, with the operator image that the environment's nodes run):
/// kubectl and ctr on the `PATH`, the cluster in `KUBECONFIG`, the node's containerd in
/// `CONTAINERD_ADDRESS` (one node here; on several, `ctr` runs on each).
pub struct UserShell {
    /// The folder the commands run in.
    pub folder: PathBuf,
    environment: Vec<(&'static str, OsString)>,
}

impl UserShell {
    fn new(env: &TestEnv) -> Self {
        let folder = env.log_dir().join("release");
        let archive = images_dir().join("operator.oci.tar");
        run_ok(
            "deploy/release.sh",
            Command::new("bash")
                .arg(workspace_root().join("deploy/release.sh"))
                .arg("--image-archive")
                .arg(&archive)
                // The test build's plugin: a release build of it would take minutes.
                .arg("--plugin-binary")
                .arg(support::build_operator_binaries().join("kubectl-strimzi"))
                .arg("--out")
                .arg(&folder),
        );
        let kubectl = binary("kubernetes", "KUBERNETES_VERSION", "kubectl").unwrap();
        let (ctr, sockets) = env.real_nodes().expect("real nodes").ctr();
        assert_eq!(sockets.len(), 1, "{sockets:?}");
        let mut path = OsString::new();
        for dir in [kubectl.parent().unwrap(), ctr.parent().unwrap()] {
            path.push(dir);
            path.push(":");
        }
        path.push(std::env::var_os("PATH").unwrap_or_default());
        UserShell {
            folder,
            environment: vec![
                ("PATH", path),
                (
                    "KUBECONFIG",
                    env.control_plane().kubeconfig().as_os_str().to_owned(),
                ),
                ("CONTAINERD_ADDRESS", sockets[0].as_os_str().to_owned()),
            ],
        }
    }

    /// This shell with `name` set to `value` too.
    pub fn with(&self, name: &'static str, value: &str) -> Self {
        let mut environment = self.environment.clone();
        environment.push((name, value.into()));
        UserShell {
            folder: self.folder.clone(),
            environment,
        }
    }

    /// Runs `block` as [`run_shell_block`] does, failing the test with `what` (where the
    /// block comes from) and everything the block printed.
    pub fn run(&self, what: &str, block: &str) -> BlockRun {
        let environment: Vec<(&str, &OsStr)> = self
            .environment
            .iter()
            .map(|(name, value)| (*name, value.as_os_str()))
            .collect();
        run_shell_block(block, &self.folder, &environment)
            .unwrap_or_else(|failure| panic!("{what}: {failure}"))
    }
}

async fn the_readme_install_section_runs_as_written(shell: &UserShell) {
    let env = env();
    let client = env.client().await;
    let blocks = readme_install_blocks();
    let started = Instant::now();
    let mut printed = Vec::new();
    for (number, block) in blocks.iter().enumerate() {
        let run = shell.run(
            &format!("README, {README_SECTION:?}, block {}", number + 1),
            block,
        );
        println!(
            "figure: README install block {} ran in {:.1}s",
            number + 1,
            run.took.as_secs_f64()
        );
        printed.push(run.output);
    }
    println!(
        "figure: the README's install section, install to uninstall, in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        printed
            .iter()
            .any(|output| output.lines().any(|line| line == README_RECORD)),
        "no block printed {README_RECORD:?}: {printed:#?}"
    );

    // Nothing of it is left: the namespace, the CRDs and the ClusterRoles are gone.
    assert!(
        Api::<Namespace>::all(client.clone())
            .get_opt("kafka")
            .await
            .unwrap()
            .is_none()
    );
    let left = migration::strimzi_crds(&Api::all(client.clone())).await;
    assert!(left.is_empty(), "CRDs left after the uninstall: {left:?}");
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let left: Vec<String> = roles
        .list(&ListParams::default().labels("app=strimzi"))
        .await
        .unwrap()
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    assert!(
        left.is_empty(),
        "ClusterRoles left after the uninstall: {left:?}"
    );
}

/// The shell blocks of the README's install section.
fn readme_install_blocks() -> Vec<String> {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    shell_blocks(&readme, README_SECTION).unwrap()
}

/// The README's first Kafka is Strimzi's `kafka-single-node.yaml`, unchanged: the documents
/// of the first here-document that holds a Kafka equal the example's.
#[test]
fn the_readme_installs_strimzis_single_node_example_unchanged() {
    let blocks = readme_install_blocks();
    let here_document = blocks
        .iter()
        .filter_map(|block| {
            let (_, rest) = block.split_once("<<'YAML'\n")?;
            let (body, _) = rest.split_once("\nYAML\n")?;
            body.contains("\nkind: Kafka\n").then_some(body)
        })
        .next()
        .expect("a here-document with a Kafka in the README's install section");
    let readme: Vec<Value> = serde_yaml_ng::Deserializer::from_str(here_document)
        .map(|document| <Value as serde::Deserialize>::deserialize(document).unwrap())
        .collect();
    let example = documents(&reference_examples_dir().join("kafka/kafka-single-node.yaml"));
    assert_eq!(readme, example);
}

async fn the_install_bundles_run_our_operators_as_pods_with_least_privilege_under_restricted_pod_security()
 {
    let env = env();
    let client = env.client().await;
    let network = env.network().expect("a real-node environment");
    let ns = env.namespace("install").await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .patch(
            &ns,
            &PatchParams::apply(USER),
            &Patch::Apply(json!({
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {
                    "pod-security.kubernetes.io/enforce": "restricted",
                    "pod-security.kubernetes.io/enforce-version": "latest",
                }},
            })),
        )
        .await
        .unwrap();

    // The cluster operator's bundle as the install guide says: bindings edited to name this
    // namespace, and the restricted pod security provider for this namespace's Kafka pods.
    let applied = Instant::now();
    for mut document in Bundle::load("cluster-operator").for_namespace(&ns) {
        if document["kind"] == "Deployment" {
            document["spec"]["template"]["spec"]["containers"][0]["env"]
                .as_array_mut()
                .unwrap()
                .push(
                    json!({"name": "STRIMZI_POD_SECURITY_PROVIDER_CLASS", "value": "restricted"}),
                );
        }
        apply_as(&client, &ns, &document, USER).await;
    }
    let operator = ready_pod(&client, &ns, "name=strimzi-cluster-operator").await;
    println!(
        "figure: cluster operator pod from the bundle applied to Ready in {:.1}s (pod created to Ready: {}s)",
        applied.elapsed().as_secs_f64(),
        created_to_ready_seconds(&operator)
    );

    // Strimzi's examples, unchanged: the Kafka, and the HTTP Bridge that connects to it.
    let example = reference_examples_dir().join("kafka/kafka-ephemeral.yaml");
    let bridge = reference_examples_dir().join("bridge/kafka-bridge.yaml");
    let started = Instant::now();
    for document in documents(&example).iter().chain(&documents(&bridge)) {
        apply(&client, &ns, document).await;
    }
    let kafka = ready(&client, &ns, "my-cluster").await;
    all_pods_ready(&client, &ns, "my-cluster", 6).await;
    println!(
        "figure: kafka-ephemeral.yaml (3 controllers + 3 brokers) Ready in {:.1}s with the operator in a pod",
        started.elapsed().as_secs_f64()
    );
    let client_binary = binaries().join("strimzi-kafka-client");
    let plain = ClusterClient::new(&client_binary, network, &bootstrap(&kafka, "plain"));
    round_trip(
        &plain,
        "installed",
        5,
        "installed",
        "my-cluster-kafka-bootstrap",
    )
    .await;
    // The bridge ran with the bundle's permissions, under restricted Pod Security.
    let bridges = CustomResources::of::<strimzi_api::bridge::KafkaBridge>(&client, &ns);
    ready_or_explain(
        &bridges,
        "my-bridge",
        &client,
        &ns,
        "name=strimzi-cluster-operator",
    )
    .await;

    // The example's entity operator ran with the bundle's permissions (Ready waits for it);
    // removing it from the Kafka removes it, and the standalone operators take over.
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(client.clone(), &ns);
    assert!(
        deployments
            .get_opt("my-cluster-entity-operator")
            .await
            .unwrap()
            .is_some()
    );
    Api::<Kafka>::namespaced(client.clone(), &ns)
        .patch(
            "my-cluster",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"entityOperator": null}})),
        )
        .await
        .unwrap();
    eventually_ok("the entity operator to be removed", POD_WAIT, || async {
        match deployments
            .get_opt("my-cluster-entity-operator")
            .await
            .unwrap()
        {
            None => Ok(()),
            Some(_) => Err("still there"),
        }
    })
    .await;

    // The standalone topic and user operators, from their bundles, on that cluster.
    for bundle in ["topic-operator", "user-operator"] {
        for document in Bundle::load(bundle).for_namespace(&ns) {
            if document["kind"] != "CustomResourceDefinition" {
                apply_as(&client, &ns, &document, USER).await;
            }
        }
    }
    ready_pod(&client, &ns, "name=strimzi-topic-operator").await;
    ready_pod(&client, &ns, "name=strimzi-user-operator").await;
    let topics = CustomResources::of::<strimzi_api::topic::KafkaTopic>(&client, &ns);
    topics
        .create(json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic",
            "metadata": {"name": "orders", "labels": {"strimzi.io/cluster": "my-cluster"}},
            "spec": {"partitions": 3, "replicas": 2},
        }))
        .await;
    ready_or_explain(
        &topics,
        "orders",
        &client,
        &ns,
        "name=strimzi-topic-operator",
    )
    .await;
    assert_eq!(
        eventually("describing topic orders", || plain.describe("orders")).await,
        (3, 2)
    );
    // Deleting it goes through the finalizer, which reads the namespace.
    topics.delete("orders").await;
    eventually_ok("KafkaTopic orders to be gone", POD_WAIT, || async {
        match topics.exists("orders").await {
            false => Ok(()),
            true => Err("still there"),
        }
    })
    .await;
    let users = CustomResources::of::<strimzi_api::user::KafkaUser>(&client, &ns);
    users
        .create(json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaUser",
            "metadata": {"name": "alice", "labels": {"strimzi.io/cluster": "my-cluster"}},
            "spec": {"authentication": {"type": "tls"}},
        }))
        .await;
    ready_or_explain(&users, "alice", &client, &ns, "name=strimzi-user-operator").await;
    let secret = Api::<Secret>::namespaced(client.clone(), &ns)
        .get("alice")
        .await
        .unwrap();
    assert!(secret.data.unwrap().contains_key("user.crt"));

    // Idle memory of the three operator pods, as the node's kernel counts it.
    let profile = strimzi_tests::layout::operator_image_profile();
    for (program, label) in [
        ("strimzi-cluster-operator", "cluster operator"),
        ("strimzi-topic-operator", "topic operator"),
        ("strimzi-user-operator", "user operator"),
    ] {
        let pid = process_named(program).unwrap_or_else(|| panic!("no {label} process"));
        println!(
            "figure: {label} pod RSS {:.1} MiB (peak {:.1} MiB; {profile} build)",
            rss_mib(pid, "VmRSS"),
            rss_mib(pid, "VmHWM")
        );
    }

    // A rack-aware Kafka with a nodeport listener: the init container (our program, in our
    // image) writes the node's zone and address; the broker uses both.
    Api::<Kafka>::namespaced(client.clone(), &ns)
        .delete("my-cluster", &DeleteParams::default())
        .await
        .unwrap();
    let zone = node_zone(&client).await;
    for document in zones_cluster() {
        apply(&client, &ns, &document).await;
    }
    ready(&client, &ns, "zones").await;
    all_pods_ready(&client, &ns, "zones", 1).await;
    let services: Api<Service> = Api::namespaced(client.clone(), &ns);
    let node_port = services
        .get("zones-kafka-external-bootstrap")
        .await
        .unwrap()
        .spec
        .and_then(|spec| spec.ports)
        .and_then(|ports| ports[0].node_port)
        .expect("a node port");
    let external = ClusterClient::new(
        &client_binary,
        network,
        &format!("{}:{node_port}", network.node_ip(0)),
    );
    round_trip(&external, "outside", 3, "outside", "the node port").await;
    assert_eq!(
        eventually("reading broker.rack", || external
            .broker_config(0, "broker.rack"))
        .await,
        zone
    );

    // Everything above ran with the bundles' permissions and nothing more.
    for selector in [
        "name=strimzi-cluster-operator",
        "name=strimzi-topic-operator",
        "name=strimzi-user-operator",
    ] {
        let logs = pod_logs(&client, &ns, selector).await;
        let denied: Vec<&str> = logs
            .lines()
            .filter(|line| line.to_ascii_lowercase().contains("forbidden"))
            .collect();
        assert!(
            denied.is_empty(),
            "{selector}: permission errors: {denied:#?}"
        );
    }
}

/// Waits for the custom resource to be Ready; when it is not in time, fails showing its status
/// and the log of the operator pod matching `selector`.
async fn ready_or_explain(
    resources: &CustomResources,
    name: &str,
    client: &Client,
    namespace: &str,
    selector: &str,
) {
    let deadline = Instant::now() + POD_WAIT;
    while !resources.is_ready(name).await {
        if Instant::now() > deadline {
            let logs = pod_logs(client, namespace, selector).await;
            let tail: Vec<&str> = logs.lines().rev().take(40).collect();
            panic!(
                "{name} not Ready in {POD_WAIT:?}: status {:#}\n{selector} log (last lines first):\n{}",
                resources.status(name).await,
                tail.join("\n")
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// Waits for the one pod matching `selector` to be Ready and returns it.
async fn ready_pod(client: &Client, namespace: &str, selector: &str) -> Pod {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    eventually_ok(&format!("a Ready pod {selector}"), POD_WAIT, || async {
        let listed = pods
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|error| error.to_string())?;
        match listed.items.as_slice() {
            [pod] if is_ready(pod) => Ok(pod.clone()),
            other => Err(format!(
                "{:#?}",
                other
                    .iter()
                    .map(|pod| pod.status.clone())
                    .collect::<Vec<_>>()
            )),
        }
    })
    .await
}

/// Seconds from the pod's creation to its Ready condition (the API's one-second resolution).
fn created_to_ready_seconds(pod: &Pod) -> i64 {
    let created = pod.metadata.creation_timestamp.as_ref().unwrap().0;
    let ready = pod
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .and_then(|conditions| conditions.iter().find(|c| c.type_ == "Ready"))
        .and_then(|condition| condition.last_transition_time.as_ref())
        .unwrap()
        .0;
    ready.as_second() - created.as_second()
}

/// The zone label of the environment's node.
async fn node_zone(client: &Client) -> String {
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
    let list = nodes.list(&ListParams::default()).await.unwrap();
    list.items[0].labels()["topology.kubernetes.io/zone"].clone()
}

/// One ephemeral dual-role node, rack-aware by zone, with an internal and a `nodeport`
/// listener.
fn zones_cluster() -> Vec<Value> {
    vec![
        json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaNodePool",
            "metadata": {"name": "dual", "labels": {"strimzi.io/cluster": "zones"}},
            "spec": {"replicas": 1, "roles": ["controller", "broker"],
                     "storage": {"type": "ephemeral"}},
        }),
        json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "Kafka",
            "metadata": {"name": "zones"},
            "spec": {"kafka": {
                "version": "4.3.1",
                "rack": {"topologyKey": "topology.kubernetes.io/zone"},
                "listeners": [
                    {"name": "plain", "port": 9092, "type": "internal", "tls": false},
                    {"name": "external", "port": 9094, "type": "nodeport", "tls": false},
                ],
                "config": {
                    "offsets.topic.replication.factor": 1,
                    "transaction.state.log.replication.factor": 1,
                    "transaction.state.log.min.isr": 1,
                },
            }},
        }),
    ]
}

/// The logs of the pods matching `selector`.
async fn pod_logs(client: &Client, namespace: &str, selector: &str) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut logs = String::new();
    for pod in pods
        .list(&ListParams::default().labels(selector))
        .await
        .unwrap()
    {
        logs.push_str(
            &pods
                .logs(&pod.name_any(), &LogParams::default())
                .await
                .unwrap(),
        );
    }
    logs
}

#[test]
fn the_placeholder_namespace_is_what_the_bundles_name() {
    let bundle = Bundle::load("cluster-operator");
    let named: Vec<&Value> = bundle
        .documents
        .iter()
        .filter_map(|(_, document)| document["subjects"].as_array())
        .flatten()
        .map(|subject| &subject["namespace"])
        .collect();
    assert!(!named.is_empty());
    assert!(
        named
            .iter()
            .all(|namespace| *namespace == PLACEHOLDER_NAMESPACE)
    );
}
