//! `strimzi-testenv`: the environment it starts is usable, `down` stops it, and killing it
//! outright leaves no process behind.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod binary;

use binary::{BINARY, down, pids};

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

fn wait_until_gone(pids: &[u32]) {
    let started = Instant::now();
    while pids.iter().any(|pid| alive(*pid)) {
        let left: Vec<&u32> = pids.iter().filter(|pid| alive(**pid)).collect();
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "still running: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn killing_up_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut up = Command::new(BINARY)
        .args(["up", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !dir.path().join("env").exists() {
        assert!(up.try_wait().unwrap().is_none(), "up exited early");
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "not ready in time"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let components = pids(dir.path());
    assert_eq!(
        components.len(),
        6,
        "etcd, 3 Kubernetes components, kwok, Kafka"
    );
    assert!(components.iter().all(|pid| alive(*pid)));
    up.kill().unwrap(); // SIGKILL: no chance to clean up by itself
    up.wait().unwrap();
    wait_until_gone(&components);
}

#[test]
fn detached_environment_is_described_and_stopped_by_down() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(BINARY)
        .args(["up", "--detach", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
    for key in [
        "KUBECONFIG=",
        "KAFKA_BOOTSTRAP_SERVERS_PLAIN=127.0.0.1:",
        "KAFKA_BOOTSTRAP_SERVERS_SCRAM=127.0.0.1:",
        "KAFKA_BOOTSTRAP_SERVERS_TLS=127.0.0.1:",
    ] {
        assert!(env.contains(key), "{key} missing from:\n{env}");
    }
    let kubeconfig = std::fs::read_to_string(dir.path().join("kubeconfig")).unwrap();
    assert!(
        kubeconfig.contains("server: https://127.0.0.1:"),
        "{kubeconfig}"
    );
    let components = pids(dir.path());
    down(dir.path());
    wait_until_gone(&components);
}

#[test]
fn a_component_that_cannot_be_built_fails_with_one_line_naming_the_cause() {
    // An empty cache makes `up` provision; without Go on the PATH that fails at once.
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(BINARY)
        .args(["up", "--dir"])
        .arg(dir.path())
        .env("STRIMZI_TESTENV_CACHE", cache.path())
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("provisioning with tests/testenv/install.sh failed")
            && stderr.contains("go not found"),
        "{stderr}"
    );
}
