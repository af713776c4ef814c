//! The Strimzi cluster operator: turns `Kafka` and `KafkaNodePool` resources into running
//! clusters.
//!
//! - [`model`] is pure: custom resources in, desired Kubernetes objects out.
//! - [`assembly`] is the Kafka reconciler, a chain of named steps that applies the model.
//! - [`pod_set`] is the StrimziPodSet controller, which keeps the pods a set lists.
//! - [`config`] reads the operator's environment; [`cache`] holds the content caches the
//!   controllers read.

pub mod assembly;
pub mod cache;
pub mod config;
pub mod model;
pub mod pod_set;

use futures::future::BoxFuture;
use strimzi_operator_common::cache::CacheError;
use strimzi_operator_common::runtime::OperatorRuntime;

/// The controllers of the cluster operator (Kafka with its node pools, and StrimziPodSet), to
/// be run by [`OperatorRuntime::run`].
pub fn controllers(
    runtime: &OperatorRuntime,
    config: &config::ClusterOperatorConfig,
) -> Result<Vec<BoxFuture<'static, ()>>, CacheError> {
    Ok(vec![
        assembly::KafkaAssembly::controller(runtime, config.clone())?,
        pod_set::PodSetReconciler::controller(runtime)?,
    ])
}
