//! The KafkaMirrorMaker2 controller: runs the Connect cluster of
//! [`crate::model::mirror_maker2::connect_cluster`] with the KafkaConnect controller's steps,
//! then drives the connectors of [`crate::model::mirror_maker2::connectors`] through the REST
//! API as the KafkaConnector controller does (configuration, `state`, `autoRestart`), and
//! deletes every other connector of that Connect cluster.
//!
//! `strimzi.io/restart-connector: <connector>` restarts a connector and
//! `strimzi.io/restart-connector-task: <connector>:<task>` one of its tasks; either
//! annotation is removed once acted on (or, naming no connector of the resource, with a
//! warning). `strimzi.io/connector-offsets` (`list`, `alter`, `reset`) with
//! `strimzi.io/mirrormaker-connector: <connector>` manages that connector's offsets as a
//! KafkaConnector's annotation does, through the `listOffsets`/`alterOffsets` ConfigMaps of its
//! `sourceConnector` or `checkpointConnector`, under the key `<connector with -- for ->>.json`;
//! both annotations are removed once acted on (a Warning condition `ConnectorOffsets` when the
//! request is dropped, or while one of the two is missing). The status lists each connector's REST status, the automatic restarts, the
//! plugins, the REST URL and the scale subresource's replicas and selector. A failed
//! connector or task makes the resource `NotReady` with `ConnectorFailed` and the failure's
//! first trace line; a duplicate alias, a topics or groups pattern Java cannot compile or an
//! incomplete security section `NotReady` with `InvalidResourceException` naming the field,
//! before anything is applied.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::{Resource, ResourceExt};
use serde_json::Value;
use strimzi_api::annotations;
use strimzi_api::connector::{ConnectorState, KafkaConnector};
use strimzi_api::labels;
use strimzi_api::mirror_maker2::{KafkaMirrorMaker2, KafkaMirrorMaker2Status};
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::schema::FreeFormMap;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::cache::CacheError;
use strimzi_operator_common::controller::{ControllerBuilder, Reconciled, Reconciler};
use strimzi_operator_common::events::Severity;
use strimzi_operator_common::labels::{owner_reference, selector_string};
use strimzi_operator_common::runtime::OperatorRuntime;

use super::connector::{
    ConnectorError, OffsetsOutcome, OffsetsRequest, STATE_RECHECK, auto_restart, desired_config,
    failed, state_change,
};
use super::rest::{ConnectApi, RestError};
use super::{ConnectError, ConnectReconciler, PODS_RECHECK, Workers, plugins, waiting_for_workers};
use crate::config::ClusterOperatorConfig;
use crate::model::connect::ConnectCluster;
use crate::model::mirror_maker2::{
    MirrorConnector, MirrorMaker2Error, connect_cluster, connectors, offsets_key,
};

/// Why a KafkaMirrorMaker2 could not be reconciled.
#[derive(Debug, thiserror::Error)]
pub enum MirrorMaker2ReconcileError {
    /// The spec cannot be turned into connectors.
    #[error(transparent)]
    Model(#[from] MirrorMaker2Error),
    /// The Connect cluster could not be run.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// A connector's configuration could not be made.
    #[error(transparent)]
    Connector(#[from] ConnectorError),
}

impl From<RestError> for MirrorMaker2ReconcileError {
    fn from(error: RestError) -> Self {
        Self::Connect(ConnectError::Rest(error))
    }
}

impl From<crate::model::ModelError> for MirrorMaker2ReconcileError {
    fn from(error: crate::model::ModelError) -> Self {
        Self::Connect(ConnectError::Model(error))
    }
}

impl ErrorReason for MirrorMaker2ReconcileError {
    fn reason(&self) -> &'static str {
        match self {
            Self::Model(error) => error.reason(),
            Self::Connect(error) => error.reason(),
            Self::Connector(error) => error.reason(),
        }
    }

    /// A spec error waits for the resource to change; the rest is retried with backoff.
    fn is_permanent(&self) -> bool {
        match self {
            Self::Model(_) => true,
            Self::Connect(error) => error.is_permanent(),
            Self::Connector(error) => error.is_permanent(),
        }
    }
}

/// Reconciles KafkaMirrorMaker2s.
pub struct MirrorMaker2Reconciler {
    connect: ConnectReconciler,
}

/// What a reconciliation found of one connector.
struct ConnectorOutcome {
    /// Its REST status.
    state: Value,
    /// Whether it is in the state its spec asks for.
    settled: bool,
}

impl MirrorMaker2Reconciler {
    /// The KafkaMirrorMaker2 controller on `runtime`, woken by changes of the StrimziPodSets
    /// it owns (their ready counts).
    pub fn controller(
        runtime: &OperatorRuntime,
        config: &ClusterOperatorConfig,
    ) -> Result<BoxFuture<'static, ()>, CacheError> {
        let reconciler = Self {
            connect: ConnectReconciler::new(runtime, config),
        };
        ControllerBuilder::new(runtime, reconciler)
            .concurrency(config.concurrency)
            .owns_metadata::<StrimziPodSet>(&format!("{}=KafkaMirrorMaker2", labels::KIND))
            .build()
    }

    fn runtime(&self) -> &OperatorRuntime {
        &self.connect.runtime
    }

    /// Deletes the connectors of the Connect cluster that the resource does not define.
    async fn remove_other_connectors(
        &self,
        owner: &ObjectReference,
        api: &ConnectApi,
        wanted: &[MirrorConnector],
    ) -> Result<(), RestError> {
        for name in api.connectors().await? {
            if wanted.iter().any(|connector| connector.name == name) {
                continue;
            }
            api.delete_connector(&name).await?;
            self.runtime()
                .events()
                .publish_logged(
                    owner,
                    Severity::Normal,
                    "ConnectorDeleted",
                    "DeleteConnector",
                    &format!(
                        "Connector {name} was deleted: the KafkaMirrorMaker2 does not define it"
                    ),
                )
                .await;
        }
        Ok(())
    }

    /// Brings one connector to its configuration and state, as a KafkaConnector would be.
    async fn drive(
        &self,
        api: &ConnectApi,
        connector: &MirrorConnector,
    ) -> Result<ConnectorOutcome, MirrorMaker2ReconcileError> {
        let name = &connector.name;
        let config = desired_config(name, &KafkaConnector::new(name, connector.spec.clone()))?;
        let current = api.connector_config(name).await?;
        if current.as_ref() != Some(&config) {
            api.put_connector_config(name, &config).await?;
        }
        let wanted = connector.spec.state.unwrap_or(ConnectorState::Running);
        // Connect reports no status for a moment after a connector is created.
        let Some(state) = status_if_known(api, name).await? else {
            return Ok(ConnectorOutcome {
                state: serde_json::json!({"name": name}),
                settled: false,
            });
        };
        if let Some(action) = state["connector"]["state"]
            .as_str()
            .and_then(|state| state_change(state, wanted))
        {
            api.change_state(name, action).await?;
        }
        let state = api.connector_status(name).await?;
        let expected = match wanted {
            ConnectorState::Running => "RUNNING",
            ConnectorState::Paused => "PAUSED",
            ConnectorState::Stopped => "STOPPED",
        };
        Ok(ConnectorOutcome {
            settled: state["connector"]["state"] == expected,
            state,
        })
    }

    /// Acts on the restart annotations; returns those to remove and a warning for a request
    /// naming no connector of the resource.
    async fn restarts(
        &self,
        mirror_maker2: &KafkaMirrorMaker2,
        api: &ConnectApi,
        wanted: &[MirrorConnector],
    ) -> Result<(Vec<(&'static str, String)>, Vec<String>), RestError> {
        let mut done = Vec::new();
        let mut warnings = Vec::new();
        let known = |name: &str| wanted.iter().any(|connector| connector.name == name);
        if let Some(value) = mirror_maker2
            .annotations()
            .get(annotations::RESTART_CONNECTOR)
        {
            let name = value.trim();
            if known(name) {
                api.restart_connector(name, false, false).await?;
            } else {
                warnings.push(format!(
                    "{}: no connector {name} in this KafkaMirrorMaker2",
                    annotations::RESTART_CONNECTOR
                ));
            }
            done.push((annotations::RESTART_CONNECTOR, value.clone()));
        }
        if let Some(value) = mirror_maker2
            .annotations()
            .get(annotations::RESTART_CONNECTOR_TASK)
        {
            match parse_task(value) {
                Some((name, task)) if known(name) => api.restart_task(name, task).await?,
                _ => warnings.push(format!(
                    "{}: {value:?} names no task of a connector in this KafkaMirrorMaker2 \
                     (expected <connector>:<task number>)",
                    annotations::RESTART_CONNECTOR_TASK
                )),
            }
            done.push((annotations::RESTART_CONNECTOR_TASK, value.clone()));
        }
        Ok((done, warnings))
    }
}

/// What the offsets annotations of a KafkaMirrorMaker2 ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetsAnnotations<'a> {
    /// Neither annotation is set.
    Absent,
    /// `strimzi.io/connector-offsets` (`action`) on the connector that
    /// `strimzi.io/mirrormaker-connector` names.
    Request {
        /// `list`, `alter` or `reset`.
        action: &'a str,
        /// The connector's name.
        connector: &'a str,
    },
    /// One annotation without the other, the name of the missing one given: a warning, and
    /// both left for the user to complete.
    Incomplete(&'static str),
}

/// Reads `strimzi.io/connector-offsets` and `strimzi.io/mirrormaker-connector`.
pub fn offsets_annotations(annotations: &BTreeMap<String, String>) -> OffsetsAnnotations<'_> {
    match (
        annotations.get(annotations::CONNECTOR_OFFSETS),
        annotations.get(annotations::MIRRORMAKER_CONNECTOR),
    ) {
        (None, None) => OffsetsAnnotations::Absent,
        (Some(action), Some(connector)) => OffsetsAnnotations::Request {
            action: action.trim(),
            connector: connector.trim(),
        },
        (Some(_), None) => OffsetsAnnotations::Incomplete(annotations::MIRRORMAKER_CONNECTOR),
        (None, Some(_)) => OffsetsAnnotations::Incomplete(annotations::CONNECTOR_OFFSETS),
    }
}

/// The REST status of connector `name`, `None` while Connect has none yet.
async fn status_if_known(api: &ConnectApi, name: &str) -> Result<Option<Value>, RestError> {
    match api.connector_status(name).await {
        Ok(state) => Ok(Some(state)),
        Err(error) if error.status() == Some(404) => Ok(None),
        Err(error) => Err(error),
    }
}

/// `<connector>:<task>` of `strimzi.io/restart-connector-task`: the connector name may hold
/// colons itself, the task number follows the last one.
pub fn parse_task(value: &str) -> Option<(&str, i32)> {
    let (name, task) = value.trim().rsplit_once(':')?;
    Some((name, task.trim().parse().ok()?))
}

/// The first line of a failed connector's (or else task's) trace, for the condition.
pub fn failure_message(name: &str, state: &Value) -> String {
    let trace = std::iter::once(&state["connector"])
        .chain(state["tasks"].as_array().into_iter().flatten())
        .filter(|part| part["state"] == "FAILED")
        .find_map(|part| part["trace"].as_str())
        .and_then(|trace| trace.lines().next())
        .unwrap_or("no trace reported");
    format!(
        "connector {name} or one of its tasks failed: {trace} (status.connectors has the trace)"
    )
}

impl Reconciler for MirrorMaker2Reconciler {
    type Resource = KafkaMirrorMaker2;
    type Status = KafkaMirrorMaker2Status;
    type Error = MirrorMaker2ReconcileError;

    async fn reconcile(
        &self,
        mirror_maker2: Arc<KafkaMirrorMaker2>,
    ) -> Result<Reconciled<KafkaMirrorMaker2Status>, MirrorMaker2ReconcileError> {
        let namespace = mirror_maker2.namespace().unwrap_or_default();
        let name = mirror_maker2.name_any();
        let wanted = connectors(&namespace, &name, &mirror_maker2.spec)?;
        let cluster = connect_cluster(&mirror_maker2, &self.connect.model)?;
        let inputs = self.connect.inputs(&cluster).await?;
        cluster.validate(&inputs)?;
        let objects = cluster.objects(&inputs)?;
        let previous = mirror_maker2.status.clone().unwrap_or_default();
        let mut status = with_cluster_fields(
            KafkaMirrorMaker2Status {
                connector_plugins: previous.connector_plugins.clone(),
                connectors: previous.connectors.clone(),
                auto_restart_statuses: previous.auto_restart_statuses.clone(),
                ..KafkaMirrorMaker2Status::default()
            },
            &cluster,
        );
        let warn = |mut reconciled: Reconciled<KafkaMirrorMaker2Status>| {
            for warning in &objects.warnings {
                reconciled = reconciled.warn(&warning.reason, &warning.message);
            }
            reconciled
        };
        self.connect.apply_objects(&cluster, &objects).await?;
        let owner = mirror_maker2.object_ref(&());
        let api = match self.connect.run_workers(&owner, &cluster, &objects).await? {
            Workers::Pending { message, stuck } => {
                return Ok(warn(waiting_for_workers(status, &message, stuck)));
            }
            Workers::Ready(None) => return Ok(warn(Reconciled::new(status))),
            Workers::Ready(Some(api)) => api,
        };
        let known = previous.connector_plugins.is_some()
            && previous.observed_generation == mirror_maker2.metadata.generation;
        if !known {
            status.connector_plugins = Some(plugins(api.connector_plugins().await?));
        }
        self.remove_other_connectors(&owner, &api, &wanted).await?;
        let mut states = Vec::new();
        let mut restarts = Vec::new();
        let mut failure = None;
        let mut unsettled = None;
        let offsets = offsets_annotations(mirror_maker2.annotations());
        let mut offsets_outcome = None;
        for connector in &wanted {
            let outcome = self.drive(&api, connector).await?;
            if let OffsetsAnnotations::Request {
                action,
                connector: named,
            } = offsets
                && named == connector.name
            {
                let request = OffsetsRequest {
                    connector: &connector.name,
                    spec: &connector.spec,
                    field: &connector.field,
                    namespace: &namespace,
                    owner: owner_reference(mirror_maker2.as_ref()),
                    key: &offsets_key(&connector.name),
                    action,
                    reported_state: outcome.state["connector"]["state"]
                        .as_str()
                        .unwrap_or_default(),
                };
                offsets_outcome = Some(request.carry_out(self.runtime(), &api).await?);
            }
            let earlier = previous
                .auto_restart_statuses
                .iter()
                .flatten()
                .find(|restart| restart.connector_name.as_deref() == Some(&connector.name))
                .cloned();
            if let Some(restart) = auto_restart(
                self.runtime(),
                &api,
                &connector.name,
                connector.spec.auto_restart.as_ref(),
                earlier,
                &owner,
                &outcome.state,
            )
            .await?
            {
                restarts.push(restart);
            }
            if failure.is_none() && failed(&outcome.state) {
                failure = Some(failure_message(&connector.name, &outcome.state));
            } else if unsettled.is_none() && !outcome.settled {
                unsettled = Some(format!(
                    "connector {} is {}, on its way to the state its spec asks for",
                    connector.name,
                    outcome.state["connector"]["state"]
                        .as_str()
                        .unwrap_or("unknown")
                ));
            }
            if let Value::Object(mut map) = outcome.state {
                map.entry("name")
                    .or_insert_with(|| Value::String(connector.name.clone()));
                states.push(FreeFormMap(map.into_iter().collect()));
            }
        }
        status.connectors = Some(states);
        status.auto_restart_statuses = Some(restarts);
        let (done, annotation_warnings) = self.restarts(&mirror_maker2, &api, &wanted).await?;
        let mut reconciled = if let Some(message) = failure {
            Reconciled::stalled(status, "ConnectorFailed", &message, PODS_RECHECK)
        } else if let Some(message) = unsettled {
            Reconciled::pending(status, "WaitingForConnectorState", &message, STATE_RECHECK)
        } else {
            Reconciled::new(status)
        };
        for (key, value) in done {
            reconciled = reconciled.remove_annotation(key, &value);
        }
        for message in annotation_warnings {
            reconciled = reconciled.warn("RestartConnector", &message);
        }
        let offsets_warning = match (offsets, offsets_outcome) {
            (OffsetsAnnotations::Absent, _) | (_, Some(OffsetsOutcome::Later)) => None,
            (OffsetsAnnotations::Incomplete(missing), _) => Some(format!(
                "{} and {} go together: {missing} is missing",
                annotations::CONNECTOR_OFFSETS,
                annotations::MIRRORMAKER_CONNECTOR
            )),
            (OffsetsAnnotations::Request { action, connector }, outcome) => {
                for key in [
                    annotations::CONNECTOR_OFFSETS,
                    annotations::MIRRORMAKER_CONNECTOR,
                ] {
                    if let Some(value) = mirror_maker2.annotations().get(key) {
                        reconciled = reconciled.remove_annotation(key, value);
                    }
                }
                match outcome {
                    Some(OffsetsOutcome::Refused(message)) => Some(message),
                    None => Some(format!(
                        "{}={action}: no connector {connector} in this KafkaMirrorMaker2",
                        annotations::CONNECTOR_OFFSETS
                    )),
                    _ => None,
                }
            }
        };
        if let Some(message) = offsets_warning {
            reconciled = reconciled.warn("ConnectorOffsets", &message);
        }
        Ok(warn(reconciled))
    }

    fn failure_status(
        &self,
        mirror_maker2: &KafkaMirrorMaker2,
        previous: KafkaMirrorMaker2Status,
    ) -> KafkaMirrorMaker2Status {
        // A spec refused as a whole leaves the running cluster's fields as they were.
        let namespace = mirror_maker2.namespace().unwrap_or_default();
        let valid = connectors(&namespace, &mirror_maker2.name_any(), &mirror_maker2.spec);
        match (valid, connect_cluster(mirror_maker2, &self.connect.model)) {
            (Ok(_), Ok(cluster)) => with_cluster_fields(previous, &cluster),
            _ => previous,
        }
    }
}

/// `status` with the fields a KafkaMirrorMaker2 reports whatever the reconciliation's
/// outcome, as Strimzi does: the REST API's URL, the replicas and the workers' selector.
fn with_cluster_fields(
    status: KafkaMirrorMaker2Status,
    cluster: &ConnectCluster,
) -> KafkaMirrorMaker2Status {
    KafkaMirrorMaker2Status {
        url: cluster.reported_url(),
        replicas: Some(cluster.replicas()),
        label_selector: Some(selector_string(&cluster.selector())),
        ..status
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn task_annotations_name_the_connector_and_the_task() {
        assert_eq!(
            parse_task("a->b.MirrorSourceConnector:1"),
            Some(("a->b.MirrorSourceConnector", 1))
        );
        assert_eq!(parse_task("a:b:2"), Some(("a:b", 2)));
        assert_eq!(parse_task("a->b.MirrorSourceConnector"), None);
        assert_eq!(parse_task("x:one"), None);
    }

    #[test]
    fn offsets_requests_need_both_annotations() {
        let annotated = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect()
        };
        assert_eq!(
            offsets_annotations(&annotated(&[])),
            OffsetsAnnotations::Absent
        );
        let both = annotated(&[
            (annotations::CONNECTOR_OFFSETS, "list"),
            (
                annotations::MIRRORMAKER_CONNECTOR,
                " a->b.MirrorSourceConnector",
            ),
        ]);
        assert_eq!(
            offsets_annotations(&both),
            OffsetsAnnotations::Request {
                action: "list",
                connector: "a->b.MirrorSourceConnector"
            }
        );
        assert_eq!(
            offsets_annotations(&annotated(&[(annotations::CONNECTOR_OFFSETS, "reset")])),
            OffsetsAnnotations::Incomplete(annotations::MIRRORMAKER_CONNECTOR)
        );
        assert_eq!(
            offsets_annotations(&annotated(&[(annotations::MIRRORMAKER_CONNECTOR, "x")])),
            OffsetsAnnotations::Incomplete(annotations::CONNECTOR_OFFSETS)
        );
    }

    #[test]
    fn failures_report_the_first_trace_line_of_what_failed() {
        let state = json!({
            "connector": {"state": "RUNNING"},
            "tasks": [
                {"id": 0, "state": "RUNNING"},
                {"id": 1, "state": "FAILED", "trace": "java.lang.Oops: broken\n\tat x"}
            ]
        });
        let message = failure_message("c", &state);
        assert!(message.contains("java.lang.Oops: broken"), "{message}");
        assert!(!message.contains("at x"), "{message}");
        let state = json!({"connector": {"state": "FAILED"}, "tasks": []});
        assert!(failure_message("c", &state).contains("no trace reported"));
    }
}
