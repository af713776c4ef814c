//! The runtime every operator shares, so that the cluster, topic and user operators behave
//! alike.
//!
//! - [`config`]: [`config::OperatorConfig`] from Strimzi's environment variables and defaults
//!   (`STRIMZI_NAMESPACE`, `STRIMZI_FULL_RECONCILIATION_INTERVAL_MS`, leader election, feature
//!   gates, ...); a bad value is one line naming the variable, the value and what is allowed.
//! - [`runtime`]: [`runtime::OperatorRuntime`], what one process shares: client, metrics,
//!   writer, Event recorder, caches, readiness, leadership; it runs the controllers until
//!   SIGTERM, lets in-flight reconciliations finish within a grace and releases the Lease.
//! - [`controller`]: a [`controller::Reconciler`] turns a resource into its status; the
//!   builder puts it on kube-runtime's `Controller` with shared caches, metadata-only watches
//!   of owned objects, a periodic full reconciliation, backoff with jitter, pause, an
//!   optional finalizer with a cleanup step (removed from every resource again when it is
//!   turned off), status conditions written only on change, and
//!   resources that do not deserialize reported in their status.
//! - [`status`]: `Ready`, `NotReady`, `Warning` and `ReconciliationPaused` conditions,
//!   `observedGeneration`, kept transition times.
//! - [`apply`]: server-side apply with a field manager, skipped when nothing would change;
//!   status writes; deletion of owned objects no longer wanted. [`labels`]: Strimzi's labels,
//!   propagated user labels, owner references.
//! - [`leader`]: leader election through a Lease; [`cache`]: caches shared by controllers;
//!   [`http`]: `/healthy`, `/ready`, `/metrics`; [`metrics`]: Strimzi's metric names;
//!   [`events`]: Kubernetes Events; [`logging`]: plain or JSON logs; [`api_reads`]: every
//!   get and list the runtime's client sends, counted in the metrics.
//! - [`kafka`]: the Kafka admin client the operators use to talk to Kafka (topics, configs,
//!   ACLs, SCRAM credentials, quotas, quorum, features, reassignments).
//! - [`cruise_control`]: a client of Cruise Control's REST API (proposals, rebalances, user
//!   tasks, executor state, stopping an execution, topic replication factors), on
//!   [`http_client`], the HTTP/1.1 client shared with the kafka-agent calls.
//! - [`ownership`]: which of several resources naming one Kafka topic or user manages it.
//!   [`claim`]: which of several operators watching one resource acts on it.
//! - [`blocking`]: [`blocking::CpuPool`] runs CPU-heavy work such as RSA key generation on
//!   tokio's blocking threads, at most one closure per core at a time.
//! - [`redact`]: secrets kept out of logs and messages; [`VERSION`]: the version every binary
//!   states (`--version`, [`runtime::answer_command_line`]; the first log line,
//!   [`logging::log_start`]).
//!
//! Every error enum implements [`ErrorReason`], whose stable reason is used in conditions,
//! Events and metric labels.
//!
//! # Example
//!
//! An operator that reports each KafkaTopic's name in its status:
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use strimzi_api::topic::{KafkaTopic, KafkaTopicStatus};
//! use strimzi_operator_common::ErrorReason;
//! use strimzi_operator_common::config::OperatorConfig;
//! use strimzi_operator_common::controller::{ControllerBuilder, Reconciled, Reconciler};
//! use strimzi_operator_common::runtime::OperatorRuntime;
//!
//! #[derive(Debug, thiserror::Error)]
//! #[error("topic {0} was refused")]
//! struct TopicError(String);
//!
//! impl ErrorReason for TopicError {
//!     fn reason(&self) -> &'static str {
//!         "TopicRefused"
//!     }
//! }
//!
//! struct Topics;
//!
//! impl Reconciler for Topics {
//!     type Resource = KafkaTopic;
//!     type Status = KafkaTopicStatus;
//!     type Error = TopicError;
//!
//!     async fn reconcile(
//!         &self,
//!         topic: Arc<KafkaTopic>,
//!     ) -> Result<Reconciled<KafkaTopicStatus>, TopicError> {
//!         let status = KafkaTopicStatus {
//!             topic_name: topic.topic_name().map(str::to_owned),
//!             ..KafkaTopicStatus::default()
//!         };
//!         Ok(Reconciled::new(status))
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let config = OperatorConfig::from_env().unwrap_or_else(|error| {
//!         eprintln!("{error}");
//!         std::process::exit(1)
//!     });
//!     // Logs its version and configuration, and follows its logging ConfigMap's file.
//!     let logging_file = "/opt/topic-operator/custom-config/log4j2.properties";
//!     strimzi_operator_common::logging::start("my-operator", &config, logging_file, &config)?;
//!     let port = config.http_port;
//!     let client = kube::Client::try_default().await?;
//!     let runtime = OperatorRuntime::new(client, config, "strimzi-topic-operator")?;
//!     runtime.serve_http(([0, 0, 0, 0], port).into()).await?;
//!     runtime.shutdown_on_signals();
//!     let topics = ControllerBuilder::new(&runtime, Topics).build()?;
//!     runtime.run(vec![topics]).await?;
//!     Ok(())
//! }
//! ```

pub mod api_error;
pub mod api_reads;
pub mod apply;
pub mod batch;
pub mod blocking;
pub mod cache;
pub mod claim;
pub mod config;
pub mod controller;
pub mod cruise_control;
pub mod events;
pub mod http;
pub mod http_client;
pub mod kafka;
/// Strimzi's labels, user labels and owner references (in `strimzi-api`, which the pure
/// cluster model uses too).
pub use strimzi_api::selectors as labels;
pub mod leader;
pub mod logging;
pub mod metrics;
pub mod ownership;
pub mod parent;
/// Secrets kept out of what the operators print (in `strimzi-api`).
pub use strimzi_api::redact;
pub mod referenced;
pub mod runtime;
pub mod scoped_cache;
pub mod status;
pub mod sync;

/// The workspace's version and our operator image's name (in `strimzi-api`, which the pure
/// cluster model uses too).
pub use strimzi_api::{OPERATOR_IMAGE, VERSION};

/// An error with a stable CamelCase reason, used as the `reason` of `NotReady` conditions
/// and Events and as a metric label. Every error enum of the operators implements it.
pub trait ErrorReason: std::error::Error {
    /// The error's category, e.g. `InvalidConfig`.
    fn reason(&self) -> &'static str;

    /// Whether only a change of the resource can cure the error (an invalid spec): the
    /// controller then waits for that change instead of retrying with backoff. `false` by
    /// default.
    fn is_permanent(&self) -> bool {
        false
    }
}
