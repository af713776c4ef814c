//! Helpers of the tests that run real Kafka pods on the real-node test environment.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use strimzi_api::kafka::Kafka;
use strimzi_tests::environment::TestEnv;

/// How long real pods may take: JVMs starting on two cores.
pub const POD_WAIT: Duration = Duration::from_secs(300);

/// The operator binaries, built once per test binary.
pub fn binaries() -> &'static Path {
    static BINARIES: OnceLock<PathBuf> = OnceLock::new();
    BINARIES.get_or_init(super::build_operator_binaries)
}

/// The bootstrap address the Kafka's status gives for `listener`.
pub fn bootstrap(kafka: &Kafka, listener: &str) -> String {
    kafka
        .status
        .as_ref()
        .and_then(|status| status.listeners.as_ref())
        .and_then(|listeners| {
            listeners
                .iter()
                .find(|found| found.name.as_deref() == Some(listener))
        })
        .and_then(|found| found.bootstrap_servers.clone())
        .unwrap_or_else(|| panic!("no {listener} listener in the status of {kafka:#?}"))
}

/// Writes `key` of Secret `name` to a file named after both, and returns its path.
pub async fn secret_file(client: &Client, ns: &str, name: &str, key: &str) -> PathBuf {
    let secret = Api::<Secret>::namespaced(client.clone(), ns)
        .get(name)
        .await
        .unwrap();
    let value = secret
        .data
        .as_ref()
        .and_then(|data| data.get(key))
        .unwrap_or_else(|| panic!("{key} in Secret {name}"));
    let path = TestEnv::shared_real()
        .log_dir()
        .join(format!("{ns}-{name}-{key}"));
    std::fs::write(&path, &value.0).unwrap();
    path
}

/// Retries a client call until it succeeds (the first calls after Ready may meet leader
/// elections), panicking with its last error after [`POD_WAIT`].
pub async fn eventually<T>(what: &str, mut call: impl FnMut() -> Result<T, String>) -> T {
    let started = Instant::now();
    loop {
        let error = match call() {
            Ok(value) => return value,
            Err(error) => error,
        };
        assert!(
            started.elapsed() < POD_WAIT,
            "{what} did not succeed in {POD_WAIT:?}: {error}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// The values `<prefix>-0` .. `<prefix>-<count - 1>` the client produces, sorted.
pub fn records(prefix: &str, count: usize) -> Vec<String> {
    sorted((0..count).map(|n| format!("{prefix}-{n}")).collect())
}

/// Records of several partitions arrive in no fixed order: compare them sorted.
pub fn sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort();
    values
}

pub fn is_ready(pod: &Pod) -> bool {
    strimzi_cluster_operator::pod_set::is_ready(pod)
}

/// Waits until every pod of the cluster is Running and Ready and returns them.
pub async fn all_pods_ready(client: &Client, ns: &str, cluster: &str, expected: usize) -> Vec<Pod> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let selector = format!("strimzi.io/cluster={cluster}");
    let started = Instant::now();
    loop {
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .unwrap();
        if list.items.len() == expected && list.items.iter().all(is_ready) {
            return list.items;
        }
        assert!(
            started.elapsed() < POD_WAIT,
            "pods not all Ready in {POD_WAIT:?}: {:#?}",
            list.items
                .iter()
                .map(|pod| (pod.name_any(), pod.status.clone()))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
