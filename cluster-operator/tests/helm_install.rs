//! The Helm chart as a user runs it, on a real-node environment of its own: `helm install`
//! (helm built from the Go module proxy by the test environment) into one namespace, watching
//! two others; the cluster operator runs as a pod from our image and makes a Kafka in a
//! watched namespace work, with the chart's permissions and without a permission error.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::ResourceExt;
use kube::api::{Api, ListParams, LogParams};
use serde_json::json;
use strimzi_tests::bundle::helm_chart_dir;
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::command_line::run_ok;
use strimzi_tests::control_plane::binary;
use strimzi_tests::environment::TestEnv;
use strimzi_tests::layout::{Provision, provision};
use support::real_nodes::{all_pods_ready, binaries, bootstrap, is_ready, round_trip};
use support::{apply, ready};

#[tokio::test]
async fn the_helm_chart_installs_an_operator_that_watches_two_namespaces() {
    provision(Provision::OperatorImage).unwrap();
    let env = TestEnv::shared_real();
    let client = env.client().await;
    let network = env.network().expect("a real-node environment");
    let operator_ns = env.namespace("helm-operator").await;
    let watched = [env.namespace("helm-a").await, env.namespace("helm-b").await];

    let helm = binary("helm", "HELM_VERSION", "helm").unwrap();
    run_ok(
        "helm install",
        std::process::Command::new(&helm)
            .args(["install", "strimzi-rs"])
            .arg(helm_chart_dir())
            .args(["--namespace", &operator_ns, "--wait", "--timeout", "5m"])
            .arg("--set")
            .arg(format!("watchNamespaces={{{},{}}}", watched[0], watched[1]))
            .arg("--kubeconfig")
            .arg(env.control_plane().kubeconfig())
            .env("HELM_CACHE_HOME", env.log_dir().join("helm/cache"))
            .env("HELM_CONFIG_HOME", env.log_dir().join("helm/config"))
            .env("HELM_DATA_HOME", env.log_dir().join("helm/data")),
    );
    // `--wait` returned: the operator's pod is Ready.
    let pods: Api<Pod> = Api::namespaced(client.clone(), &operator_ns);
    let operator = pods
        .list(&ListParams::default().labels("name=strimzi-cluster-operator"))
        .await
        .unwrap()
        .items;
    assert!(
        operator.len() == 1 && is_ready(&operator[0]),
        "{operator:#?}"
    );
    for namespace in watched.iter().chain([&operator_ns]) {
        let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), namespace);
        for name in [
            "strimzi-cluster-operator",
            "strimzi-cluster-operator-watched",
        ] {
            assert!(
                bindings.get_opt(name).await.unwrap().is_some(),
                "RoleBinding {namespace}/{name}"
            );
        }
    }

    // A single-node Kafka in the first watched namespace.
    let ns = &watched[0];
    for document in [
        json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaNodePool",
            "metadata": {"name": "dual", "labels": {"strimzi.io/cluster": "helm"}},
            "spec": {"replicas": 1, "roles": ["controller", "broker"], "storage": {"type": "ephemeral"}},
        }),
        json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "Kafka",
            "metadata": {"name": "helm"},
            "spec": {"kafka": {
                "version": "4.3.1",
                "listeners": [{"name": "plain", "port": 9092, "type": "internal", "tls": false}],
                "config": {
                    "offsets.topic.replication.factor": 1,
                    "transaction.state.log.replication.factor": 1,
                    "transaction.state.log.min.isr": 1,
                },
            }},
        }),
    ] {
        apply(&client, ns, &document).await;
    }
    let kafka = ready(&client, ns, "helm").await;
    all_pods_ready(&client, ns, "helm", 1).await;
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &bootstrap(&kafka, "plain"),
    );
    round_trip(&plain, "charted", 3, "charted", "the plain listener").await;

    let logs = pods
        .logs(&operator[0].name_any(), &LogParams::default())
        .await
        .unwrap();
    let denied: Vec<&str> = logs
        .lines()
        .filter(|line| line.to_ascii_lowercase().contains("forbidden"))
        .collect();
    assert!(denied.is_empty(), "permission errors: {denied:#?}");
}
