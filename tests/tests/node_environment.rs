//! Real nodes of `strimzi-testenv up --real-nodes`: the nodes are Ready, pods run, and
//! Service names resolve in the nodes' network, and both `down` and a SIGKILL of `up` leave nothing behind: no
//! process, mount, cgroup, network namespace or host folder, and the kernel settings kubelet
//! changes are back.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde_json::json;

mod binary;

use binary::{BINARY, down, pids};

const SETTINGS: [&str; 3] = [
    "kernel.panic",
    "kernel.panic_on_oops",
    "vm.overcommit_memory",
];

fn kernel_settings() -> Vec<String> {
    SETTINGS
        .iter()
        .map(|key| {
            std::fs::read_to_string(format!("/proc/sys/{}", key.replace('.', "/")))
                .unwrap()
                .trim()
                .to_owned()
        })
        .collect()
}

/// What a real-node environment of process `owner` could leave on the host.
fn leftovers(owner: u32, pids: &[u32]) -> Vec<String> {
    let mut found = Vec::new();
    let namespace = format!("strimzi-testenv-{owner}");
    if Path::new("/run/netns").join(&namespace).exists() {
        found.push(format!("network namespace {namespace}"));
    }
    if Path::new("/etc/netns").join(&namespace).exists() {
        found.push(format!("/etc/netns/{namespace}"));
    }
    let folder = format!("strimzi-nodes-{owner}-");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    found.extend(
        mounts
            .lines()
            .filter(|line| line.contains(&folder))
            .map(|line| format!("mount {line}")),
    );
    for entry in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&folder) {
            found.push(format!("folder {}", entry.path().display()));
        }
    }
    for hierarchy in std::fs::read_dir("/sys/fs/cgroup").unwrap().flatten() {
        let group = hierarchy.path().join(&namespace);
        if group.exists() {
            found.push(format!("cgroup {}", group.display()));
        }
    }
    found.extend(
        pids.iter()
            .filter(|pid| strimzi_tests::process::is_running(**pid))
            .map(|pid| format!("process {pid}")),
    );
    found
}

/// Waits (up to 2 minutes) until no other real-node environment is on the machine: this test
/// compares the machine with its state before any real node ran, and the environment of a
/// test program that just ended may still be swept (its kubelet's kernel settings restored).
fn wait_until_no_other_environment() {
    let started = Instant::now();
    loop {
        let others: Vec<String> = std::fs::read_dir("/run/netns")
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("strimzi-testenv-"))
            .collect();
        if others.is_empty() {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "other real-node environments still on the machine: {others:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The CPU weight of the nodes' cgroup root `group` (cgroup v1), if the host has one.
fn cpu_shares(group: &str) -> Option<u64> {
    let path = Path::new("/sys/fs/cgroup/cpu")
        .join(group)
        .join("cpu.shares");
    let shares = std::fs::read_to_string(path).ok()?;
    Some(shares.trim().parse().unwrap())
}

/// How long the environment may take to leave nothing behind. The watchdog's sweep after a
/// SIGKILL removes two nodes' folders (their containerd state and unpacked images); with
/// builds writing to the same disk that took over 60 s twice (2026-12-02), without anything
/// being left for good.
const CLEANUP_PATIENCE: Duration = Duration::from_secs(180);

fn wait_until_clean(owner: u32, pids: &[u32], before: &[String], host_paths: &[(&str, bool)]) {
    let started = Instant::now();
    loop {
        let mut left = leftovers(owner, pids);
        if kernel_settings() != before {
            left.push(format!(
                "kernel settings {:?}, were {before:?}",
                kernel_settings()
            ));
        }
        for (path, existed) in host_paths {
            if !existed && Path::new(path).exists() {
                left.push(format!("host path {path}"));
            }
        }
        if left.is_empty() {
            println!(
                "figure: the environment cleaned up {:.1} s after the check began",
                started.elapsed().as_secs_f64()
            );
            return;
        }
        assert!(
            started.elapsed() < CLEANUP_PATIENCE,
            "left behind {:.0} s on: {left:#?}",
            CLEANUP_PATIENCE.as_secs_f64()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

async fn client(kubeconfig: &Path) -> Client {
    let file = Kubeconfig::read_from(kubeconfig).unwrap();
    let config = Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
        .await
        .unwrap();
    Client::try_from(config).unwrap()
}

/// `count` nodes Ready, a pod Running with an address of its node's range, and Service names
/// resolving in their network.
async fn check_usable(dir: &Path, namespace: &str, count: usize) {
    let client = client(&dir.join("kubeconfig")).await;
    let nodes: Api<Node> = Api::all(client.clone());
    for index in 0..count {
        let node = nodes.get(&format!("testenv-node-{index}")).await.unwrap();
        let ready = node.status.unwrap().conditions.unwrap();
        assert!(
            ready
                .iter()
                .any(|condition| condition.type_ == "Ready" && condition.status == "True"),
            "{ready:#?}"
        );
    }
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "pause"},
        "spec": {"containers": [{
            "name": "pause",
            "image": strimzi_tests::nodes::image_version("PAUSE_IMAGE"),
            "imagePullPolicy": "Never",
        }]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let started = Instant::now();
    loop {
        let pod = pods.get("pause").await.unwrap();
        let node = pod.spec.unwrap_or_default().node_name.unwrap_or_default();
        let status = pod.status.unwrap_or_default();
        if status.phase.as_deref() == Some("Running") {
            // Node `testenv-node-<i>` gives its pods addresses from 10.244.<i>.0/24.
            let index = node.rsplit('-').next().unwrap_or_default();
            let ip = status.pod_ip.unwrap_or_default();
            assert!(
                ip.starts_with(&format!("10.244.{index}.")),
                "pod address {ip} on node {node}"
            );
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "pause pod not Running: {status:#?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let resolved = Command::new("ip")
        .args(["netns", "exec", namespace, "getent", "hosts"])
        .arg("kubernetes.default.svc.cluster.local")
        .output()
        .unwrap();
    let resolved = String::from_utf8_lossy(&resolved.stdout);
    assert!(resolved.starts_with("10.0.0.1 "), "{resolved}");
}

/// The `up` process of a detached environment, killed when dropped while it still runs (a
/// failed assertion must not leave the environment, and the real-node lock, behind; its
/// watchdog sweeps after the kill).
struct Owner(u32);

impl Owner {
    fn kill(&self) {
        if strimzi_tests::process::is_running(self.0) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(self.0).unwrap()),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.kill();
    }
}

fn up_detached(dir: &Path, nodes: usize) -> (Owner, String, Vec<u32>) {
    let output = Command::new(BINARY)
        .args([
            "up",
            "--detach",
            "--real-nodes",
            &nodes.to_string(),
            "--dir",
        ])
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let owner: u32 = std::fs::read_to_string(dir.join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let env = std::fs::read_to_string(dir.join("env")).unwrap();
    let namespace = env
        .lines()
        .find_map(|line| line.strip_prefix("NETWORK_NAMESPACE="))
        .unwrap_or_else(|| panic!("no NETWORK_NAMESPACE in {env}"))
        .to_owned();
    (Owner(owner), namespace, pids(dir))
}

/// One test, as both halves compare the machine with its state before any real node ran.
#[tokio::test(flavor = "multi_thread")]
async fn real_nodes_run_pods_and_leave_nothing_after_down_or_a_kill() {
    wait_until_no_other_environment();
    let before = kernel_settings();
    let host_paths: Vec<(&str, bool)> = [
        "/var/lib/kubelet",
        "/var/log/containers",
        "/var/log/pods",
        "/var/lib/cni",
    ]
    .into_iter()
    .map(|path| (path, Path::new(path).exists()))
    .collect();

    // `up`, then `down`.
    let dir = tempfile::tempdir().unwrap();
    let (owner, namespace, pids) = up_detached(dir.path(), 1);
    assert_eq!(namespace, format!("strimzi-testenv-{}", owner.0));
    check_usable(dir.path(), &namespace, 1).await;
    assert_eq!(
        cpu_shares(&namespace),
        Some(strimzi_tests::nodes::NODE_CPU_SHARES),
        "the pods' cgroup root weighs more than one host thread"
    );
    assert_ne!(
        kernel_settings(),
        before,
        "kubelet changes the kernel settings"
    );
    down(dir.path());
    wait_until_clean(owner.0, &pids, &before, &host_paths);

    // `up` with two nodes, then SIGKILL: the watchdog sweeps.
    let dir = tempfile::tempdir().unwrap();
    let (owner, namespace, pids) = up_detached(dir.path(), 2);
    check_usable(dir.path(), &namespace, 2).await;
    owner.kill();
    wait_until_clean(owner.0, &pids, &before, &host_paths);
}
