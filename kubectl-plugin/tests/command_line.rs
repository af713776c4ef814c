//! `kubectl-strimzi` as a user runs it, without a cluster: its version, its man-style help and
//! man page, and the one-line errors and exit statuses of a missing kubeconfig and of bad
//! input.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use strimzi_tests::command_line::assert_prints_version;

const BINARY: &str = env!("CARGO_BIN_EXE_kubectl-strimzi");

fn run(args: &[&str]) -> Output {
    Command::new(BINARY)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_plugin_prints_its_version() {
    assert_prints_version(BINARY, "kubectl-strimzi", env!("CARGO_PKG_VERSION"));
}

#[test]
fn help_reads_like_a_man_page() {
    let help = run(&["--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for part in [
        "Usage: kubectl strimzi",
        "plan",
        "support-bundle",
        "Exit status:",
        "4  plan: the operator would refuse the change",
        "Examples:",
    ] {
        assert!(text.contains(part), "--help lacks {part:?}:\n{text}");
    }
    let man = run(&["man"]);
    assert!(man.status.success());
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(page.contains(".TH kubectl-strimzi 1"), "{page}");
    assert!(page.contains(".TH kubectl-strimzi-plan"), "{page}");
}

#[test]
fn no_kubeconfig_is_one_line_and_exit_status_2() {
    let output = run(&["status", "my-cluster"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.starts_with("kubectl strimzi: no usable Kubernetes configuration"),
        "{message}"
    );
    assert!(message.contains("--kubeconfig"), "{message}");
    let output = run(&[
        "--kubeconfig",
        "/nonexistent/kubeconfig",
        "plan",
        "my-cluster",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("/nonexistent/kubeconfig"));
}

#[test]
fn a_plan_without_a_file_or_a_kafka_is_refused_by_the_command_line() {
    let output = run(&["plan"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("required arguments were not provided"),
        "{}",
        stderr(&output)
    );
}
