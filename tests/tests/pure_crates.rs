//! The crates that hold pure code stay pure: `strimzi-cluster-model` (the cluster operator's
//! model and rolling decisions) and what it depends on have no Kubernetes client and no async
//! runtime, so a change that would make the model talk to the API server or `await` does not
//! compile there (see `docs/controller-shape.md`).
//!
//! The test asks `cargo tree` for the crate's normal dependencies, with the features a build of
//! that crate alone resolves (the workspace's other members enable `kube`'s client on the same
//! `kube`, which does not make the model depend on it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

/// The crates that bring a Kubernetes client, an HTTP stack or an async runtime.
const NOT_PURE: &[&str] = &[
    "tokio",
    "hyper",
    "kube-client",
    "kube-runtime",
    "strimzi-operator-common",
];

/// The normal dependencies of `package`, transitively, one `name vX.Y.Z` line each.
fn normal_dependencies(package: &str) -> Vec<String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--package",
            package,
            "--edges",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "--offline",
        ])
        .current_dir(workspace)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_cluster_model_has_no_kubernetes_client_and_no_async_runtime() {
    let dependencies = normal_dependencies("strimzi-cluster-model");
    // The tree is the model's: its own types are in it.
    for expected in ["strimzi-api ", "strimzi-kafka-model ", "kube-core "] {
        assert!(
            dependencies.iter().any(|line| line.starts_with(expected)),
            "{expected}in {dependencies:#?}"
        );
    }
    let impure: Vec<&String> = dependencies
        .iter()
        .filter(|line| NOT_PURE.contains(&line.split_whitespace().next().unwrap_or_default()))
        .collect();
    assert!(
        impure.is_empty(),
        "strimzi-cluster-model depends on {impure:?}: it must stay free of a Kubernetes \
         client and an async runtime (cargo tree -p strimzi-cluster-model -e normal -i <crate> \
         shows the path)"
    );
}
