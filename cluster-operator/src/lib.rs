//! The Strimzi cluster operator: turns `Kafka` and `KafkaNodePool` resources into running
//! clusters.
//!
//! - [`model`] is pure: custom resources in, desired Kubernetes objects out; [`rolling`]
//!   decides which pods to restart. Both are the crate `strimzi-cluster-model`, re-exported
//!   here, which has no Kubernetes client and no async runtime.
//! - [`kafka`] is the Kafka reconciler, a chain of named steps that applies the model.
//! - [`pod_set`] is the StrimziPodSet controller, which keeps the pods a set lists.
//! - [`rebalance`] is the KafkaRebalance controller, which drives Cruise Control.
//! - [`bridge`] is the KafkaBridge controller, which runs HTTP Bridges.
//! - [`connect`] holds the KafkaConnect, KafkaConnector and KafkaMirrorMaker2 controllers.
//! - [`config`] reads the operator's environment, [`platform`] what the API server serves.

pub mod bindings;
pub mod bridge;
pub mod config;
pub mod connect;
pub mod crds;
pub mod kafka;
pub mod kafka_init;
pub mod platform;
pub mod pod_set;
pub mod readiness;
pub mod rebalance;

pub use strimzi_cluster_model::{model, quorum, rolling};

#[cfg(test)]
mod model_tests;

use futures::future::BoxFuture;
use strimzi_operator_common::cache::CacheError;
use strimzi_operator_common::metrics::MetricsError;
use strimzi_operator_common::runtime::OperatorRuntime;

/// Why the controllers could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A cache could not be set up.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// A metric could not be registered.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
}

/// Stack size of the operator's worker threads. Kubernetes objects with deep
/// `managedFields` (a StrimziPodSet lists whole pods) deserialize recursively, which needs
/// more than Tokio's default 2 MiB in debug builds.
pub const THREAD_STACK_SIZE: usize = 16 * 1024 * 1024;

/// The controllers of the cluster operator (Kafka with its node pools, StrimziPodSet,
/// KafkaRebalance, KafkaBridge, KafkaConnect, KafkaConnector and KafkaMirrorMaker2) and the cleanup of the init ClusterRoleBindings of
/// deleted resources ([`bindings`]), to be run by
/// [`OperatorRuntime::run`].
pub fn controllers(
    runtime: &OperatorRuntime,
    config: &config::ClusterOperatorConfig,
) -> Result<Vec<BoxFuture<'static, ()>>, StartError> {
    let mut tasks = vec![
        kafka::KafkaAssembly::controller(runtime, config.clone())?,
        pod_set::PodSetReconciler::controller(runtime, config.concurrency)?,
        rebalance::RebalanceReconciler::controller(runtime, config)?,
        bridge::BridgeReconciler::controller(runtime, config)?,
        connect::ConnectReconciler::controller(runtime, config)?,
        connect::connector::ConnectorReconciler::controller(runtime, config)?,
        connect::mirror_maker2::MirrorMaker2Reconciler::controller(runtime, config)?,
    ];
    tasks.extend(bindings::orphaned_bindings_cleanup(runtime));
    Ok(tasks)
}
