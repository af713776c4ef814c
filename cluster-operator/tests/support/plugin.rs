//! `kubectl strimzi`, the binary a user runs, against the test environment with the admin's
//! kubeconfig; what its plans say.

use std::path::{Path, PathBuf};
use std::process::Command;

use kube::Client;
use serde_json::{Value, json};
use strimzi_tests::environment::TestEnv;

/// What one run of the plugin printed, and its exit code.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The `kubectl-strimzi` binary, built once per program.
pub fn binary() -> PathBuf {
    static BINARIES: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARIES
        .get_or_init(super::build_operator_binaries)
        .join("kubectl-strimzi")
}

/// Runs `kubectl-strimzi --kubeconfig <kubeconfig> --namespace <namespace> <args>`.
pub fn run_as(kubeconfig: &Path, namespace: &str, args: &[&str]) -> Run {
    let output = Command::new(binary())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--namespace", namespace])
        .args(args)
        .output()
        .unwrap();
    let run = Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    println!(
        "$ kubectl strimzi {} (exit {})\n{}{}",
        args.join(" "),
        run.code,
        run.stdout,
        run.stderr
    );
    run
}

/// Runs the plugin with the admin kubeconfig of `env` (the shared environment's, or the
/// real-node environment's) in `namespace`.
pub fn kubectl_strimzi(env: &TestEnv, namespace: &str, args: &[&str]) -> Run {
    run_as(env.control_plane().kubeconfig(), namespace, args)
}

/// The plan of `args` as JSON, which must succeed.
pub fn plan(env: &TestEnv, namespace: &str, args: &[&str]) -> Value {
    let mut all = vec!["plan", "--output", "json"];
    all.extend_from_slice(args);
    let run = kubectl_strimzi(env, namespace, &all);
    assert_eq!(run.code, 0, "plan failed: {run:?}");
    serde_json::from_str(&run.stdout).unwrap()
}

/// The pods a plan restarts, in its order, each with its reasons.
pub fn restarts(plan: &Value) -> Vec<(String, Vec<String>)> {
    plan["restarts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|restart| {
            let reasons = restart["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .map(|reason| reason["reason"].as_str().unwrap().to_owned())
                .collect();
            (restart["pod"].as_str().unwrap().to_owned(), reasons)
        })
        .collect()
}

/// The changed objects of a plan as `action kind name`.
pub fn objects(plan: &Value) -> Vec<String> {
    plan["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|object| {
            format!(
                "{} {} {}",
                object["action"].as_str().unwrap(),
                object["kind"].as_str().unwrap(),
                object["name"].as_str().unwrap()
            )
        })
        .collect()
}

/// A stand-in for the cluster operator's Deployment (no replicas), whose environment `plan`
/// reads: the operators of the tests run in-process or as host processes, with
/// `STRIMZI_NAMESPACE` the test's namespace and `variables` (those that shape the model; the
/// others are left out).
pub async fn operator_deployment(client: &Client, namespace: &str, variables: &[(&str, &str)]) {
    let mut env = vec![
        json!({"name": "STRIMZI_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}),
    ];
    env.extend(
        variables
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value})),
    );
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "strimzi-cluster-operator"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"name": "strimzi-cluster-operator"}},
            "template": {
                "metadata": {"labels": {"name": "strimzi-cluster-operator"}},
                "spec": {"containers": [{
                    "name": "strimzi-cluster-operator",
                    "image": "strimzi-rs/operator:test",
                    "env": env,
                }]},
            },
        },
    });
    super::apply(client, namespace, &deployment).await;
}

/// The pods a plan lists under `key` (`restarts` or `reloads`), in its order.
pub fn planned_pods(plan: &Value, key: &str) -> Vec<String> {
    plan[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {plan:#}"))
        .iter()
        .map(|entry| entry["pod"].as_str().unwrap().to_owned())
        .collect()
}

/// The options a plan sets on the running brokers.
pub fn live_options(plan: &Value) -> Vec<String> {
    plan["liveChanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["option"].as_str().unwrap().to_owned())
        .collect()
}

/// The plan of `documents` (Kafka and KafkaNodePool documents) as a user writes them to a
/// file, in `namespace`.
pub fn plan_documents(env: &TestEnv, namespace: &str, documents: &[Value]) -> Value {
    let file = tempfile::NamedTempFile::new().unwrap();
    let text: Vec<String> = documents
        .iter()
        .map(|document| serde_yaml_ng::to_string(document).unwrap())
        .collect();
    std::fs::write(file.path(), text.join("---\n")).unwrap();
    plan(env, namespace, &["-f", file.path().to_str().unwrap()])
}
