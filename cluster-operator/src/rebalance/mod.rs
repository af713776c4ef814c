//! The KafkaRebalance controller: asks the Cruise Control of a Kafka for rebalance proposals
//! and, once approved, has them carried out, with Strimzi's states, annotations, status and
//! progress ConfigMap.
//!
//! A KafkaRebalance names its Kafka with the `strimzi.io/cluster` label; the Kafka must declare
//! `spec.cruiseControl`. Templates (`strimzi.io/rebalance-template: "true"`) are left alone. The
//! decisions are the pure state machine of [`state`]; this module reads what it needs (the
//! Kafka, the Secrets and pods to reach Cruise Control, the ConfigMap), makes the calls the
//! machine asks for ([`connection`] says how Cruise Control is reached), writes the ConfigMap
//! ([`progress`]) and returns the status ([`report`]); the controller writes it, removes the
//! `strimzi.io/rebalance` annotation acted on, and comes back when the machine says (every
//! five seconds while Cruise Control computes or moves, sooner on a change of the rebalance or
//! its Kafka). Nothing waits inside a reconciliation.
//!
//! KafkaRebalances are watched in every watched namespace whatever
//! `STRIMZI_CUSTOM_RESOURCE_SELECTOR` says; as in Strimzi, the selector applies to their Kafka,
//! and a rebalance of a Kafka the operator does not select is left alone.

pub mod auto;
pub mod connection;
pub mod progress;
pub mod report;
pub mod spec;
pub mod state;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams};
use kube::{Resource, ResourceExt};
use strimzi_api::kafka::Kafka;
use strimzi_api::rebalance::{KafkaRebalance, KafkaRebalanceStatus};
use strimzi_api::{annotations, conditions, naming};
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::cache::CacheError;
use strimzi_operator_common::controller::{ControllerBuilder, Reconciled, Reconciler};
use strimzi_operator_common::cruise_control::{
    CruiseControlClient, CruiseControlError, REST_API_PORT,
};
use strimzi_operator_common::events::Severity;
use strimzi_operator_common::http_client::{Server, ServerTls};
use strimzi_operator_common::kafka::{HostResolution, TlsConfig};
use strimzi_operator_common::parent::{ParentError, labelled_parent};
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_operator_common::status;

pub use auto::{auto_rebalance, is_template, state_of};
pub use state::State;

use crate::config::ClusterOperatorConfig;
use state::{Answer, Call, Cluster, Decision, Input, Notice, Optimization, Request, Step};

/// Why a rebalance is `NotReady`, or waits; the reason goes into its condition.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RebalanceError {
    /// The KafkaRebalance has no `strimzi.io/cluster` label.
    #[error(
        "the KafkaRebalance has no strimzi.io/cluster label naming the Kafka cluster to rebalance"
    )]
    ClusterLabelMissing,
    /// The Kafka the label names does not exist.
    #[error(
        "Kafka resource {cluster} (named by the strimzi.io/cluster label) does not exist in namespace {namespace}"
    )]
    KafkaNotFound {
        /// The Kafka's name.
        cluster: String,
        /// The namespace looked in.
        namespace: String,
    },
    /// The Kafka has no `spec.cruiseControl`.
    #[error(
        "Kafka resource {cluster} does not declare spec.cruiseControl, so there is no Cruise Control to rebalance with"
    )]
    CruiseControlNotDeclared {
        /// The Kafka's name.
        cluster: String,
    },
    /// The spec does not say what to rebalance.
    #[error("{0}")]
    InvalidSpec(String),
    /// The Kafka is not `Ready`: proposals and rebalances wait for it.
    #[error("the Kafka cluster is not Ready; Cruise Control is asked once it is")]
    KafkaNotReady,
    /// Cruise Control cannot be reached yet: its pod, Secrets or certificate are not there.
    #[error("Cruise Control cannot be reached yet: {0}")]
    CruiseControlUnavailable(String),
    /// A call to Cruise Control failed.
    #[error(transparent)]
    CruiseControl(#[from] CruiseControlError),
    /// Cruise Control reports the rebalance's task as failed.
    #[error("Cruise Control task {0} completed with an error (its log says why)")]
    TaskFailed(String),
    /// The API server could not be asked (shared: a rebalance's decisions are cloned and
    /// compared).
    #[error(transparent)]
    Api(Arc<ApiCallError>),
    /// An answer that does not fit the call made (a bug).
    #[error("an answer that does not fit the call made: {0}")]
    UnexpectedAnswer(String),
}

impl RebalanceError {
    /// Whether the cause may pass without the user doing anything: the rebalance keeps its
    /// state and is looked at again shortly.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::KafkaNotReady
            | Self::CruiseControlUnavailable(_)
            | Self::Api(_)
            | Self::UnexpectedAnswer(_) => true,
            Self::CruiseControl(error) => error.is_transient(),
            Self::ClusterLabelMissing
            | Self::KafkaNotFound { .. }
            | Self::CruiseControlNotDeclared { .. }
            | Self::InvalidSpec(_)
            | Self::TaskFailed(_) => false,
        }
    }
}

impl From<ApiCallError> for RebalanceError {
    fn from(error: ApiCallError) -> Self {
        Self::Api(Arc::new(error))
    }
}

impl ErrorReason for RebalanceError {
    fn reason(&self) -> &'static str {
        match self {
            // Strimzi's names for these.
            Self::ClusterLabelMissing
            | Self::CruiseControlNotDeclared { .. }
            | Self::InvalidSpec(_) => "InvalidResourceException",
            Self::KafkaNotFound { .. } => "NoSuchResourceException",
            Self::TaskFailed(_) => "CruiseControlRestException",
            Self::KafkaNotReady => "KafkaNotReady",
            Self::CruiseControlUnavailable(_) => "CruiseControlUnavailable",
            Self::CruiseControl(error) => error.reason(),
            Self::Api(_) => "KubernetesApiError",
            Self::UnexpectedAnswer(_) => "UnexpectedAnswer",
        }
    }
}

/// Reconciles KafkaRebalances.
pub struct RebalanceReconciler {
    runtime: OperatorRuntime,
    host_resolution: HostResolution,
    call_timeout: Duration,
}

impl RebalanceReconciler {
    /// The KafkaRebalance controller on `runtime`: rebalances in the watched namespaces, and
    /// those of a Kafka when the Kafka changes (metadata-only watch of the Kafkas the operator
    /// selects).
    pub fn controller(
        runtime: &OperatorRuntime,
        config: &ClusterOperatorConfig,
    ) -> Result<BoxFuture<'static, ()>, CacheError> {
        let reconciler = Self {
            runtime: runtime.clone(),
            host_resolution: config.kafka_host_resolution,
            call_timeout: config.rest_call_timeout(),
        };
        ControllerBuilder::new(runtime, reconciler)
            .concurrency(config.concurrency)
            .children_of::<Kafka>()
            .build()
    }

    /// The Kafka `rebalance` names.
    async fn kafka(
        &self,
        rebalance: &KafkaRebalance,
        namespace: &str,
    ) -> Result<Kafka, RebalanceError> {
        labelled_parent(&self.runtime.api(Some(namespace)), rebalance)
            .await
            .map_err(|error| match error {
                ParentError::LabelMissing => RebalanceError::ClusterLabelMissing,
                ParentError::Api(error) => RebalanceError::from(error),
                ParentError::NotFound { name } => RebalanceError::KafkaNotFound {
                    cluster: name,
                    namespace: namespace.to_owned(),
                },
            })
    }

    /// Whether the operator selects `kafka` (`STRIMZI_CUSTOM_RESOURCE_SELECTOR`).
    fn selects(&self, kafka: &Kafka) -> bool {
        let labels = kafka.labels();
        self.runtime
            .config()
            .custom_resource_selector
            .iter()
            .all(|(key, value)| labels.get(key) == Some(value))
    }

    /// A client of the Cruise Control of `kafka`.
    async fn connect(&self, kafka: &Kafka) -> Result<CruiseControlClient, RebalanceError> {
        let cluster = kafka.name_any();
        let namespace = kafka.namespace().unwrap_or_default();
        let spec = kafka.spec.cruise_control.as_ref().ok_or_else(|| {
            RebalanceError::CruiseControlNotDeclared {
                cluster: cluster.clone(),
            }
        })?;
        let security = connection::api_security(spec);
        let server_name = connection::server_name(&cluster, &namespace);
        let tls = if security.tls {
            let secret = self
                .secret(&namespace, &naming::cluster_ca_cert_secret(&cluster))
                .await?;
            Some(ServerTls {
                config: TlsConfig {
                    ca_pem: connection::cluster_ca_bundle(&secret)?,
                    client_identity_pem: None,
                    verify_hostname: true,
                },
                server_name: server_name.clone(),
            })
        } else {
            None
        };
        let credentials = if security.authentication {
            let secret = self
                .secret(&namespace, &naming::cruise_control_api_secret(&cluster))
                .await?;
            Some(connection::credentials(&secret)?)
        } else {
            None
        };
        let host = match self.host_resolution {
            HostResolution::System => server_name,
            HostResolution::IpAddressesOnly => {
                let selector = connection::pod_selector(&cluster);
                let api: Api<Pod> = self.runtime.api(Some(&namespace));
                let pods = api
                    .list(&ListParams::default().labels(&selector))
                    .await
                    .map_err(|error| {
                        ApiCallError::new("list", format!("Pods {selector} in {namespace}"), error)
                    })?;
                connection::ready_pod_address(&pods.items).ok_or_else(|| {
                    RebalanceError::CruiseControlUnavailable(format!(
                        "no ready Cruise Control pod ({selector})"
                    ))
                })?
            }
        };
        Ok(CruiseControlClient::new(
            Server {
                host,
                port: REST_API_PORT,
                tls,
                host_resolution: self.host_resolution,
            },
            credentials,
            self.call_timeout,
        ))
    }

    async fn secret(&self, namespace: &str, name: &str) -> Result<Secret, RebalanceError> {
        let api: Api<Secret> = self.runtime.api(Some(namespace));
        api.get_opt(name)
            .await
            .map_err(|error| ApiCallError::of::<Secret>("get", namespace, name, error))?
            .ok_or_else(|| {
                RebalanceError::CruiseControlUnavailable(format!("Secret {name} does not exist"))
            })
    }

    /// Makes `call` with `client` (connected on the first call).
    async fn answer(
        &self,
        kafka: &Result<Kafka, RebalanceError>,
        input: &Input,
        client: &mut Option<Result<CruiseControlClient, RebalanceError>>,
        call: Call,
    ) -> Answer {
        let kafka = match kafka {
            Ok(kafka) => kafka,
            Err(error) => return Answer::Failed(error.clone()),
        };
        let client = match client {
            Some(client) => client,
            None => client.insert(self.connect(kafka).await),
        };
        let client = match client {
            Ok(client) => client,
            Err(error) => return Answer::Failed(error.clone()),
        };
        let failed = |error: CruiseControlError| Answer::Failed(error.into());
        match call {
            Call::Proposal { dry_run } => match &input.proposal {
                Ok(proposal) => client
                    .request_proposal(proposal, dry_run)
                    .await
                    .map_or_else(failed, Answer::Proposal),
                Err(error) => Answer::Failed(error.clone()),
            },
            Call::UserTask(task) => client
                .user_task(&task)
                .await
                .map_or_else(failed, Answer::UserTask),
            Call::ExecutorState => client
                .executor_state()
                .await
                .map_or_else(failed, Answer::ExecutorState),
            Call::StopExecution => client
                .stop_execution()
                .await
                .map_or_else(failed, |()| Answer::Stopped),
        }
    }

    /// Brings the ConfigMap named as `rebalance` in line with `decision`; whether it exists
    /// afterwards. A failure to read or write it is a warning: the state still counts.
    async fn write_config_map(
        &self,
        rebalance: &KafkaRebalance,
        decision: &Decision,
        warnings: &mut Vec<(String, String)>,
    ) -> bool {
        let namespace = rebalance.namespace().unwrap_or_default();
        let name = rebalance.name_any();
        let api: Api<ConfigMap> = self.runtime.api(Some(&namespace));
        let mut warn = |error: RebalanceError| {
            warnings.push((error.reason().to_owned(), error.to_string()));
        };
        let existing = match api.get_opt(&name).await {
            Ok(existing) => existing,
            Err(error) => {
                warn(ApiCallError::of::<ConfigMap>("get", &namespace, &name, error).into());
                return rebalance
                    .status
                    .as_ref()
                    .is_some_and(|status| status.progress.is_some());
            }
        };
        let result = match &decision.optimization {
            Optimization::New(result) => Some(result.as_ref()),
            Optimization::Keep | Optimization::Clear => None,
        };
        let data = progress::config_map_data(
            existing
                .as_ref()
                .and_then(|config_map| config_map.data.as_ref()),
            decision.state,
            result,
            decision.executor.as_ref(),
            jiff::Timestamp::now(),
        );
        let Some(data) = data else {
            return existing.is_some();
        };
        let desired = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                labels: Some(BTreeMap::from([("app".to_owned(), "strimzi".to_owned())])),
                owner_references: strimzi_operator_common::labels::owner_reference(rebalance)
                    .map(|owner| vec![owner]),
                ..ObjectMeta::default()
            },
            data: Some(data),
            ..ConfigMap::default()
        };
        match self
            .runtime
            .applier()
            .apply_cached(&desired, existing.as_ref())
            .await
        {
            Ok(_) => true,
            Err(error) => {
                warnings.push((error.reason().to_owned(), error.to_string()));
                existing.is_some()
            }
        }
    }

    /// Publishes the Event of `notice` about `rebalance`, which was in `previous` (its state
    /// condition) before.
    async fn tell(
        &self,
        rebalance: &KafkaRebalance,
        notice: &Notice,
        previous: (State, Option<&strimzi_api::common::Condition>),
    ) {
        let (severity, reason, action, note) = match notice {
            Notice::ProposalRequested => (
                Severity::Normal,
                "ProposalRequested",
                "RequestProposal",
                format!(
                    "Asked Cruise Control for a rebalance proposal (mode {})",
                    rebalance.spec.mode_or_default().as_str()
                ),
            ),
            Notice::RebalanceStarted(session) => (
                Severity::Normal,
                "RebalanceStarted",
                "StartRebalance",
                format!(
                    "Handed the proposal to Cruise Control to carry out (user task {})",
                    session.as_deref().unwrap_or("unknown")
                ),
            ),
            Notice::RebalanceStopped => (
                Severity::Normal,
                "RebalanceStopped",
                "StopRebalance",
                if previous.0 == State::Rebalancing {
                    "Stopped the rebalance: movements under way finish, the others are dropped"
                        .to_owned()
                } else {
                    "Stopped waiting for the proposal".to_owned()
                },
            ),
            Notice::Failed(error) => {
                let message = error.to_string();
                let repeated = previous.0 == State::NotReady
                    && previous
                        .1
                        .and_then(|condition| condition.message.as_deref())
                        == Some(message.as_str());
                if repeated {
                    return;
                }
                (Severity::Warning, error.reason(), "Rebalance", message)
            }
        };
        self.runtime
            .events()
            .publish_logged(&rebalance.object_ref(&()), severity, reason, action, &note)
            .await;
    }
}

/// Whether `kafka` reports `Ready`.
fn is_ready(kafka: &Kafka) -> bool {
    kafka
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions.iter().any(|condition| {
                condition.r#type.as_deref() == Some(conditions::READY)
                    && condition.status.as_deref() == Some(conditions::STATUS_TRUE)
            })
        })
}

impl Reconciler for RebalanceReconciler {
    type Resource = KafkaRebalance;
    type Status = KafkaRebalanceStatus;
    type Error = RebalanceError;

    async fn reconcile(
        &self,
        rebalance: Arc<KafkaRebalance>,
    ) -> Result<Reconciled<KafkaRebalanceStatus>, RebalanceError> {
        if is_template(&rebalance) {
            return Ok(Reconciled::ignored());
        }
        let namespace = rebalance.namespace().unwrap_or_default();
        let kafka = self.kafka(&rebalance, &namespace).await;
        if kafka.as_ref().is_ok_and(|kafka| !self.selects(kafka)) {
            return Ok(Reconciled::ignored());
        }
        let cluster = kafka
            .clone()
            .and_then(|kafka| match kafka.spec.cruise_control {
                Some(_) => Ok(Cluster {
                    kafka_ready: is_ready(&kafka),
                }),
                None => Err(RebalanceError::CruiseControlNotDeclared {
                    cluster: kafka.name_any(),
                }),
            });
        let annotation = rebalance.annotations().get(annotations::REBALANCE).cloned();
        let previous = rebalance.status.clone().unwrap_or_default();
        let input = Input {
            spec_changed: previous.observed_generation.is_some()
                && previous.observed_generation != rebalance.meta().generation,
            request: Request::parse(annotation.as_deref()),
            auto_approval: annotations::is_true(
                rebalance.metadata.annotations.as_ref(),
                annotations::REBALANCE_AUTO_APPROVAL,
            ),
            cluster,
            proposal: spec::proposal_request(&rebalance.spec),
            status: previous,
        };
        let mut client = None;
        let mut answers = Vec::new();
        let decision = loop {
            match state::next(&input, &answers) {
                Step::Done(decision) => break *decision,
                Step::Call(call) => {
                    tracing::debug!(?call, "asking Cruise Control");
                    answers.push(self.answer(&kafka, &input, &mut client, call).await);
                }
            }
        };
        let before = State::of(Some(&input.status));
        if before.0 != decision.state {
            tracing::info!(
                from = before.0.as_str(),
                to = decision.state.as_str(),
                "rebalance state changed"
            );
        }
        if let Some((reason, message)) = decision.why.as_ref().filter(|_| decision.waiting) {
            tracing::info!(reason, message, "rebalance waits");
        }
        let mut warnings = decision.warnings.clone();
        let config_map = self
            .write_config_map(&rebalance, &decision, &mut warnings)
            .await;
        if let Some(notice) = &decision.notice {
            self.tell(&rebalance, notice, before).await;
        }
        let (kind_status, condition) = report::status(
            &decision,
            &input.status,
            &rebalance.name_any(),
            config_map,
            &status::timestamp_now(),
        );
        let mut reconciled = Reconciled::in_state(kind_status, condition, decision.recheck_after);
        for (reason, message) in &warnings {
            reconciled = reconciled.warn(reason, message);
        }
        if decision.waiting {
            reconciled = reconciled.keep_observed_generation();
        }
        if let Some(value) = annotation.filter(|_| decision.consume_request) {
            reconciled = reconciled.remove_annotation(annotations::REBALANCE, &value);
        }
        Ok(reconciled)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use kube::core::PartialObjectMeta;
    use serde_json::json;

    fn kafka(ready: &str) -> Kafka {
        serde_json::from_value(json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "Kafka",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"kafka": {"listeners": [], "config": {}}},
            "status": {"conditions": [{"type": "Ready", "status": ready}]},
        }))
        .unwrap()
    }

    #[test]
    fn a_rebalance_belongs_to_the_kafka_its_label_names_in_its_namespace() {
        let rebalance: KafkaRebalance = serde_json::from_value(json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaRebalance",
            "metadata": {"name": "r", "namespace": "ns", "labels": {"strimzi.io/cluster": "c"}},
            "spec": {},
        }))
        .unwrap();
        let meta = |namespace: &str, name: &str| {
            serde_json::from_value::<PartialObjectMeta<Kafka>>(json!({
                "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                "metadata": {"name": name, "namespace": namespace},
            }))
            .unwrap()
        };
        assert!(strimzi_operator_common::parent::names_parent(
            &meta("ns", "c"),
            &rebalance
        ));
        assert!(!strimzi_operator_common::parent::names_parent(
            &meta("other", "c"),
            &rebalance
        ));
        assert!(!strimzi_operator_common::parent::names_parent(
            &meta("ns", "d"),
            &rebalance
        ));
        assert!(is_ready(&kafka("True")));
        assert!(!is_ready(&kafka("False")));
    }

    #[test]
    fn causes_that_pass_are_told_from_those_the_user_must_fix() {
        assert!(RebalanceError::KafkaNotReady.is_transient());
        assert!(
            RebalanceError::CruiseControl(CruiseControlError::TooManyActiveTasks {
                message: String::new()
            })
            .is_transient()
        );
        assert!(!RebalanceError::ClusterLabelMissing.is_transient());
        assert_eq!(
            RebalanceError::KafkaNotFound {
                cluster: "c".to_owned(),
                namespace: "ns".to_owned()
            }
            .reason(),
            "NoSuchResourceException"
        );
        assert_eq!(
            RebalanceError::CruiseControl(CruiseControlError::Rejected {
                endpoint: "rebalance",
                status: 500,
                message: "no".to_owned()
            })
            .reason(),
            "CruiseControlRestException"
        );
    }
}
