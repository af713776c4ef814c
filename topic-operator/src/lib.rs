//! The topic operator: keeps Kafka topics in line with KafkaTopic resources, with Strimzi's
//! unidirectional semantics (Kubernetes is the source of truth; changes made directly in
//! Kafka are reverted at the next reconciliation).
//!
//! - [`config`]: Strimzi's environment variables and defaults.
//! - [`model`]: pure logic: the desired topic, the changes to make, what is not supported,
//!   which configs may be altered, which KafkaTopic owns a contested topic.
//! - [`kafka`]: the batched Kafka requests (batched with `strimzi_operator_common::batch`).
//! - [`replicas`]: pure logic of replication-factor changes: replica placement, throttled
//!   replicas, `status.replicasChange` transitions.
//! - [`replication`]: replication-factor changes with partition reassignments or with
//!   Cruise Control, one step per reconciliation.
//! - [`reconciler`]: the KafkaTopic reconciler on `operator-common`'s controller.
//!
//! # Deleting a namespace while Kafka is unreachable
//!
//! A KafkaTopic carries the finalizer `strimzi.io/topic-operator` (unless
//! `STRIMZI_USE_FINALIZERS=false`), so deleting it deletes the Kafka topic first. When
//! Kafka cannot be reached, deleting a single KafkaTopic waits (retrying with backoff)
//! until Kafka is back, so that no topic is left behind silently. When the KafkaTopic's
//! whole namespace is being deleted, the operator tries to delete the topic for up to
//! [`reconciler::TERMINATING_NAMESPACE_GRACE`]; if Kafka does not answer or fails, it logs a
//! warning, leaves the topic in Kafka and removes the finalizer, so that the namespace
//! deletion completes. (Strimzi's operator keeps the finalizer in that case and the
//! namespace stays `Terminating` until someone removes the finalizer by hand.)
//!
//! With `STRIMZI_USE_FINALIZERS=false` the finalizer is removed from every KafkaTopic that
//! still carries it, as Strimzi removes it. A KafkaTopic whose `spec.topicName` was changed
//! (refused) deletes neither topic when deleted, and stays until the spec is reverted.

pub mod config;
pub mod error;
pub mod kafka;
pub mod model;
pub mod reconciler;
pub mod replicas;
pub mod replication;

use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use kube::api::Api;
use kube::core::DeserializeGuard;
use kube::runtime::watcher;
use strimzi_api::topic::KafkaTopic;
use strimzi_operator_common::cache::CacheScope;
use strimzi_operator_common::config::WatchedNamespaces;
use strimzi_operator_common::kafka::{ConfigResource, KafkaAdmin};
use strimzi_operator_common::runtime::OperatorRuntime;

use crate::config::TopicOperatorConfig;
use crate::kafka::{TopicKafka, request_counts};
use crate::reconciler::TopicReconciler;
use crate::replication::{Mover, ReplicationChanger};

/// The operator's name: field manager and Event reporter.
pub const NAME: &str = "strimzi-topic-operator";
/// The operator's log4j2 file, where the entity operator's pod mounts its logging ConfigMap
/// (from `spec.entityOperator.topicOperator.logging`): its levels apply without a restart.
pub const LOGGING_FILE: &str = "/opt/topic-operator/custom-config/log4j2.properties";

pub use strimzi_operator_common::controller::{ControllerBuilder, StartError};

/// The topic controller of `runtime`, talking to Kafka through `admin`, and its batched
/// Kafka operations (whose request counts it exposes). Run the controller with
/// [`OperatorRuntime::run`].
pub fn controller(
    runtime: &OperatorRuntime,
    config: &TopicOperatorConfig,
    admin: Arc<dyn KafkaAdmin>,
) -> Result<(TopicKafka, BoxFuture<'static, ()>), StartError> {
    let requests = request_counts(runtime.metrics())?;
    let kafka = TopicKafka::new(admin, config.batching, requests);
    let namespaces: Vec<Option<String>> = match &runtime.config().namespaces {
        WatchedNamespaces::All => vec![None],
        WatchedNamespaces::List(namespaces) => namespaces.iter().cloned().map(Some).collect(),
    };
    let selector = runtime.config().selector_string();
    let mut resources = Vec::new();
    for namespace in namespaces {
        // The same cache the controller watches through: no second watch.
        let scope = CacheScope {
            namespace,
            selector: selector.clone(),
        };
        let api: Api<DeserializeGuard<KafkaTopic>> = runtime.api(scope.namespace.as_deref());
        let watch = scope.watcher_config();
        let subscription = runtime
            .caches()
            .subscribe::<DeserializeGuard<KafkaTopic>>(&scope, move || {
                watcher(api, watch).boxed()
            })?;
        resources.push(subscription.store);
    }
    let mover = match &config.cruise_control {
        Some(client) => Mover::CruiseControl(client.clone()),
        None => Mover::Reassignments {
            throttle: config.replication_throttle,
        },
    };
    let reconciler = TopicReconciler::new(
        kafka.clone(),
        ReplicationChanger::new(kafka.clone(), mover),
        runtime.client().clone(),
        resources,
        config.use_finalizers,
        config.alterable.clone(),
    );
    // Enough reconciliations at once to fill two batches; more would hold more connections
    // to the API server (and memory) without making batches bigger.
    let concurrency = (2 * config.batching.max_batch_size).min(config.batching.max_queue_size);
    let concurrency = u16::try_from(concurrency).unwrap_or(u16::MAX);
    let controller = ControllerBuilder::new(runtime, reconciler)
        .concurrency(concurrency)
        .build()?;
    Ok((kafka, controller))
}

/// The broker setting that makes Kafka create topics nobody declared.
const AUTO_CREATE_TOPICS: &str = "auto.create.topics.enable";

/// Whether a broker of the cluster has `auto.create.topics.enable=true`; logs a warning if
/// so, since topics created that way have no KafkaTopic.
pub async fn review_cluster_config(
    admin: &dyn KafkaAdmin,
) -> Result<bool, strimzi_operator_common::kafka::AdminError> {
    let cluster = admin.describe_cluster().await?;
    let Some(broker) = cluster.brokers.first() else {
        return Ok(false);
    };
    let resource = ConfigResource::broker(broker.id);
    let configs = admin
        .describe_configs(std::slice::from_ref(&resource))
        .await?;
    let enabled = configs
        .get(&resource)
        .and_then(|result| result.as_ref().ok())
        .is_some_and(|entries| {
            entries.iter().any(|entry| {
                entry.name == AUTO_CREATE_TOPICS && entry.value.as_deref() == Some("true")
            })
        });
    if enabled {
        tracing::warn!(
            "the Kafka cluster has {AUTO_CREATE_TOPICS}=true: topics that clients create implicitly have no KafkaTopic; consider setting it to false"
        );
    }
    Ok(enabled)
}
