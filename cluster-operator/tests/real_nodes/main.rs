//! The cluster operator's tests on real nodes (kubelet, containerd, runc) with Strimzi's Kafka
//! image and our operator image, as one test program so that they share one local control
//! plane and node.
//!
//! Each test works in namespaces of its own (deleted when it ends) with a cluster operator of
//! its own, so the test harness runs them side by side (one per core by default). Most of a
//! small real-node test is waiting: for pods to start, probes to pass, periodic
//! reconciliations. Run one by one in programs of their own, they left the cores idle most of
//! the time and each paid for starting a control plane and a node. Two tests with three brokers
//! or more ([`Weight::Heavy`]) may run side by side: before the node's pods had a fair CPU
//! weight and test clusters started fast, two such tests on two cores starved both clusters'
//! probes, and a heavy test ran alone.
//!
//! Run one of them with `cargo test -p strimzi-cluster-operator --test real_nodes -- <name>`,
//! e.g. `-- rolling_safety`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../support/mod.rs"]
mod support;

mod bridge;
mod connect;
mod connect_build;
mod cruise_control;
mod entity_operator;
mod examples;
mod mirror_maker2;
mod quorum;
mod real_kafka;
mod rolling;
mod rolling_safety;
mod takeover;

use strimzi_tests::environment::TestEnv;
use tokio::sync::{Semaphore, SemaphorePermit};

/// The share of the machine the running tests hold: two tests of any weight (the test
/// harness runs two at a time on two cores).
static MACHINE: Semaphore = Semaphore::const_new(2 * Weight::Heavy as usize);

/// How much of the machine a test's clusters take.
#[derive(Clone, Copy)]
enum Weight {
    /// Clusters of one controller and at most two brokers, and a component or two: runs
    /// beside another light test.
    Light = 1,
    /// A cluster of three brokers or more.
    Heavy = 2,
    /// A test whose work loads the disk and cores so that a test beside it misses its
    /// timings (a Connect build: Buildah copies the Kafka image's files several times): runs
    /// alone. Beside it, `rolling`'s steady producer timed out once during a graceful roll
    /// and wrote a record twice.
    Alone = 4,
}

/// Our cluster operator binary watching `namespace` alone, with its metrics on a free port,
/// stopped when dropped.
fn operator_on(namespace: &str) -> strimzi_tests::process::ManagedProcess {
    operator_with(namespace, &[])
}

/// A cluster operator for `namespace` with the `extra` environment variables.
fn operator_with(
    namespace: &str,
    extra: &[(&str, &str)],
) -> strimzi_tests::process::ManagedProcess {
    support::spawn_cluster_operator(
        env(),
        support::real_nodes::binaries(),
        namespace,
        strimzi_tests::layout::free_port().unwrap(),
        extra,
    )
}

/// Waits until the machine has room for a test of `weight`; the room is given back when the
/// permit is dropped at the end of the test.
async fn room_for(weight: Weight) -> SemaphorePermit<'static> {
    MACHINE
        .acquire_many(weight as u32)
        .await
        .expect("the semaphore is never closed")
}

/// The real-node environment shared by every test of this program. The operator image is
/// provisioned first (a no-op when up to date), since the node loads the images present
/// when it starts and the entity operator and Cruise Control tests run pods of it.
fn env() -> &'static TestEnv {
    support::real_nodes::env_with_operator_image()
}
