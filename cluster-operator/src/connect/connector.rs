//! The KafkaConnector controller: a KafkaConnector names its KafkaConnect with the
//! `strimzi.io/cluster` label, and a KafkaConnect with `strimzi.io/use-connector-resources:
//! "true"` has its connectors made by KafkaConnectors only (the KafkaConnect controller removes
//! the others).
//!
//! A reconciliation creates or updates the connector's configuration (`connector.class`,
//! `tasks.max` and `spec.config`) through the REST API, brings it to `spec.state` (`running`,
//! `paused`, `stopped`), acts on `strimzi.io/restart` (`"true"`, or a comma-separated list of
//! `includeTasks` and `onlyFailed`) and `strimzi.io/restart-task` (a task number), removing the
//! annotation once done, restarts a failed connector and its failed tasks when `autoRestart`
//! is enabled (after 0, 2, 6, 12, 20, 30, 42, 56 and then every 60 minutes, at most
//! `maxRestarts` times, counted in `status.autoRestart`, each with a Normal
//! `ConnectorRestarted` Event), and reports the connector's status,
//! `tasksMax` and `topics`; `strimzi.io/connector-offsets` (`list`, `alter`, `reset`) lists the
//! offsets into `spec.listOffsets.toConfigMap` (key `offsets.json`, other keys kept), alters them from
//! `spec.alterOffsets.fromConfigMap` or resets them, the last two only while the connector is
//! stopped (a Warning condition `ConnectorOffsets` says why a request was dropped). A failed connector or task is `NotReady` with `ConnectorFailed`, one
//! still on its way to the state asked for `Reconciling` with `WaitingForConnectorState`;
//! a refused configuration (an unknown class, say) is `NotReady` with
//! `ConnectRestException` and Connect's message. Deleting a KafkaConnector deletes its
//! connector (through the KafkaConnect's removal of unmanaged connectors).

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, ListParams};
use kube::{Resource, ResourceExt};
use serde_json::{Map, Value};
use strimzi_api::connect::KafkaConnect;
use strimzi_api::connector::{
    AutoRestart, AutoRestartStatus, ConnectorState, KafkaConnector, KafkaConnectorSpec,
    KafkaConnectorStatus,
};
use strimzi_api::schema::FreeFormMap;
use strimzi_api::{annotations, conditions, labels, naming};
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::apply::ApplyError;
use strimzi_operator_common::cache::CacheError;
use strimzi_operator_common::controller::{ControllerBuilder, Reconciled, Reconciler};
use strimzi_operator_common::events::Severity;
use strimzi_operator_common::kafka::HostResolution;
use strimzi_operator_common::labels::owner_reference;
use strimzi_operator_common::parent::{ParentError, labelled_parent};
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_operator_common::status::timestamp_now;

use super::rest::{ConnectApi, RestError, api_host};
use super::uses_connector_resources;
use crate::config::ClusterOperatorConfig;
use crate::model::config::options::config_value;

/// How soon a connector whose KafkaConnect is not ready, or which failed, is looked at
/// again.
const RECHECK: Duration = Duration::from_secs(10);
/// How soon a connector on its way to the state asked for is looked at again.
pub(crate) const STATE_RECHECK: Duration = Duration::from_secs(2);
/// Longest wait between automatic restarts, in minutes.
const MAX_BACKOFF_MINUTES: i64 = 60;

/// Why a KafkaConnector could not be reconciled.
#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    /// The KafkaConnector has no `strimzi.io/cluster` label.
    #[error("the KafkaConnector has no strimzi.io/cluster label naming its KafkaConnect")]
    ClusterLabelMissing,
    /// The KafkaConnect does not exist.
    #[error(
        "KafkaConnect resource '{connect}' identified by label 'strimzi.io/cluster' does not \
         exist in namespace {namespace}."
    )]
    ConnectNotFound {
        /// The KafkaConnect's name.
        connect: String,
        /// The namespace.
        namespace: String,
    },
    /// The KafkaConnect does not use connector resources.
    #[error(
        "KafkaConnect cluster is not configured with annotation \
         strimzi.io/use-connector-resources"
    )]
    ConnectorResourcesNotUsed,
    /// `spec.class` is missing.
    #[error("spec.class is required: the connector class to run")]
    ClassMissing,
    /// The API server could not be asked.
    #[error(transparent)]
    Api(#[from] ApiCallError),
    /// An object could not be applied.
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// The REST API refused or failed a call.
    #[error(transparent)]
    Rest(#[from] RestError),
}

impl ErrorReason for ConnectorError {
    fn reason(&self) -> &'static str {
        match self {
            Self::ClusterLabelMissing | Self::ClassMissing => "InvalidResourceException",
            Self::ConnectNotFound { .. } => "NoSuchResourceException",
            Self::ConnectorResourcesNotUsed => "InvalidResourceException",
            Self::Api(_) => "KubernetesApiError",
            Self::Apply(error) => error.reason(),
            Self::Rest(error) => error.reason(),
        }
    }

    fn is_permanent(&self) -> bool {
        matches!(
            self,
            Self::ClusterLabelMissing
                | Self::ClassMissing
                | Self::ConnectNotFound { .. }
                | Self::ConnectorResourcesNotUsed
        )
    }
}

/// Reconciles KafkaConnectors.
pub struct ConnectorReconciler {
    runtime: OperatorRuntime,
    host_resolution: HostResolution,
    call_timeout: Duration,
}

/// The configuration the REST API is given: the user's options, then the class, the task
/// count and the name, which the spec decides.
pub fn desired_config(name: &str, connector: &KafkaConnector) -> Result<Value, ConnectorError> {
    let class = connector
        .spec
        .class
        .clone()
        .ok_or(ConnectorError::ClassMissing)?;
    let mut config = Map::new();
    for (key, value) in connector
        .spec
        .config
        .as_ref()
        .map(|config| &config.0)
        .into_iter()
        .flatten()
    {
        if let Some(text) = config_value(value) {
            config.insert(key.clone(), Value::String(text));
        }
    }
    config.insert("connector.class".to_owned(), Value::String(class));
    if let Some(tasks) = connector.spec.tasks_max {
        config.insert("tasks.max".to_owned(), Value::String(tasks.to_string()));
    }
    if let Some(version) = &connector.spec.version {
        config.insert(
            "connector.plugin.version".to_owned(),
            Value::String(version.clone()),
        );
    }
    config.insert("name".to_owned(), Value::String(name.to_owned()));
    Ok(Value::Object(config))
}

/// Whether the connector's current configuration is the desired one.
fn same_config(current: &Value, desired: &Value) -> bool {
    current == desired
}

/// The REST call that brings a connector in `state` (`RUNNING`, `PAUSED`, `STOPPED`, ...) to
/// `wanted`, if any.
pub fn state_change(state: &str, wanted: ConnectorState) -> Option<&'static str> {
    match (wanted, state) {
        (ConnectorState::Paused, "RUNNING") => Some("pause"),
        (ConnectorState::Stopped, "RUNNING" | "PAUSED") => Some("stop"),
        (ConnectorState::Running, "PAUSED" | "STOPPED") => Some("resume"),
        (ConnectorState::Paused, "STOPPED") => Some("pause"),
        _ => None,
    }
}

/// What `strimzi.io/restart` asks: include the tasks, only the failed ones.
pub fn restart_options(value: &str) -> (bool, bool) {
    let words: Vec<String> = value
        .split(',')
        .map(|word| word.trim().to_ascii_lowercase())
        .collect();
    (
        words.iter().any(|word| word == "includetasks"),
        words.iter().any(|word| word == "onlyfailed"),
    )
}

/// Minutes to wait after restart number `count` before the next one: `count * (count + 1)`,
/// at most an hour.
pub fn backoff_minutes(count: i32) -> i64 {
    let count = i64::from(count.max(0));
    (count * (count + 1)).min(MAX_BACKOFF_MINUTES)
}

/// Whether the connector or one of its tasks failed, from its REST status.
pub fn failed(status: &Value) -> bool {
    status["connector"]["state"] == "FAILED"
        || status["tasks"]
            .as_array()
            .is_some_and(|tasks| tasks.iter().any(|task| task["state"] == "FAILED"))
}

impl ConnectorReconciler {
    /// The KafkaConnector controller on `runtime`, woken too when a KafkaConnect changes.
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
            .children_of::<KafkaConnect>()
            .build()
    }

    async fn connect(
        &self,
        connector: &KafkaConnector,
        namespace: &str,
    ) -> Result<KafkaConnect, ConnectorError> {
        labelled_parent(&self.runtime.api(Some(namespace)), connector)
            .await
            .map_err(|error| match error {
                ParentError::LabelMissing => ConnectorError::ClusterLabelMissing,
                ParentError::Api(error) => ConnectorError::Api(error),
                ParentError::NotFound { name } => ConnectorError::ConnectNotFound {
                    connect: name,
                    namespace: namespace.to_owned(),
                },
            })
    }

    async fn rest_api(&self, connect: &KafkaConnect) -> Result<Option<ConnectApi>, ConnectorError> {
        let namespace = connect.namespace().unwrap_or_default();
        let name = connect.name_any();
        let pods = match self.host_resolution {
            HostResolution::System => Vec::new(),
            HostResolution::IpAddressesOnly => {
                let api: Api<Pod> = self.runtime.api(Some(&namespace));
                let selector = format!("{}={}", labels::NAME, naming::connect_component(&name));
                api.list(&ListParams::default().labels(&selector))
                    .await
                    .map_err(|error| ApiCallError::of::<Pod>("list", &namespace, "", error))?
                    .items
            }
        };
        Ok(api_host(
            &naming::connect_api_service(&name),
            &namespace,
            self.host_resolution,
            &pods,
        )
        .map(|host| ConnectApi::new(host, self.host_resolution, self.call_timeout)))
    }

    /// Restarts a failed connector when `autoRestart` allows it now; returns the restart
    /// count to report.
    async fn auto_restart(
        &self,
        api: &ConnectApi,
        name: &str,
        connector: &KafkaConnector,
        status: &Value,
    ) -> Result<Option<AutoRestartStatus>, ConnectorError> {
        let previous = connector
            .status
            .as_ref()
            .and_then(|status| status.auto_restart.clone());
        Ok(auto_restart(
            &self.runtime,
            api,
            name,
            connector.spec.auto_restart.as_ref(),
            previous,
            &connector.object_ref(&()),
            status,
        )
        .await?)
    }
}

/// Restarts the failed connector `name` (with its REST `status`) when `settings` allow it
/// now, with a Normal `ConnectorRestarted` Event on `owner`; returns the restart count to
/// report, given the one reported before (`previous`).
pub(crate) async fn auto_restart(
    runtime: &OperatorRuntime,
    api: &ConnectApi,
    name: &str,
    settings: Option<&AutoRestart>,
    previous: Option<AutoRestartStatus>,
    owner: &ObjectReference,
    status: &Value,
) -> Result<Option<AutoRestartStatus>, RestError> {
    let previous = previous.filter(|restart| restart.connector_name.as_deref() == Some(name));
    let Some(settings) = settings.filter(|settings| settings.enabled.unwrap_or(true)) else {
        return Ok(None);
    };
    let count = previous
        .as_ref()
        .and_then(|restart| restart.count)
        .unwrap_or(0);
    let last = previous
        .as_ref()
        .and_then(|restart| restart.last_restart_timestamp.as_deref())
        .and_then(|text| text.parse::<jiff::Timestamp>().ok());
    let minutes_since = last.map(|last| (jiff::Timestamp::now() - last).get_minutes());
    let waited = minutes_since.is_none_or(|minutes| minutes >= backoff_minutes(count));
    if !failed(status) {
        // Healthy past the next restart's wait: the count starts again.
        return Ok(if count > 0 && !waited { previous } else { None });
    }
    let below_limit = settings.max_restarts.is_none_or(|max| count < max);
    if !waited || !below_limit {
        return Ok(previous);
    }
    api.restart_connector(name, true, true).await?;
    runtime
        .events()
        .publish_logged(
            owner,
            Severity::Normal,
            "ConnectorRestarted",
            "AutoRestart",
            &format!(
                "Connector {name} or one of its tasks failed and was restarted automatically \
                 (restart {} of {})",
                count + 1,
                settings
                    .max_restarts
                    .map_or_else(|| "unlimited".to_owned(), |max| max.to_string())
            ),
        )
        .await;
    Ok(Some(AutoRestartStatus {
        count: Some(count + 1),
        connector_name: Some(name.to_owned()),
        last_restart_timestamp: Some(timestamp_now()),
    }))
}

/// What became of a `strimzi.io/connector-offsets` request.
pub enum OffsetsOutcome {
    /// Carried out: the annotation goes.
    Done,
    /// Waits for the connector to stop, as its spec asks: the annotation stays.
    Later,
    /// Not possible, for the reason given: the annotation goes, a warning says why.
    Refused(String),
}

/// Key of the offsets in the ConfigMaps of a KafkaConnector's `listOffsets` and
/// `alterOffsets`.
pub const OFFSETS_KEY: &str = "offsets.json";

/// A `strimzi.io/connector-offsets` request on one connector, of a KafkaConnector or of a
/// KafkaMirrorMaker2.
pub struct OffsetsRequest<'a> {
    /// The connector's name in Connect.
    pub connector: &'a str,
    /// Its spec: `state`, `listOffsets`, `alterOffsets`.
    pub spec: &'a KafkaConnectorSpec,
    /// Where that spec is in the resource (`spec`, `spec.mirrors[0].sourceConnector`), for
    /// messages.
    pub field: &'a str,
    /// The namespace of the resource and of its ConfigMaps.
    pub namespace: &'a str,
    /// The owner given to a `listOffsets` ConfigMap the request creates.
    pub owner: Option<OwnerReference>,
    /// The ConfigMaps' key holding this connector's offsets.
    pub key: &'a str,
    /// The annotation's value: `list`, `alter` or `reset`.
    pub action: &'a str,
    /// The connector's state as Connect reports it.
    pub reported_state: &'a str,
}

impl OffsetsRequest<'_> {
    /// Carries the request out: `list` writes `GET /connectors/<name>/offsets` under
    /// [`Self::key`] into `listOffsets.toConfigMap` (created, owned by [`Self::owner`], if
    /// missing; its other keys kept); `alter` sends that key of `alterOffsets.fromConfigMap`;
    /// `reset` deletes the offsets. Altering and resetting need a stopped connector.
    pub async fn carry_out(
        &self,
        runtime: &OperatorRuntime,
        api: &ConnectApi,
    ) -> Result<OffsetsOutcome, ConnectorError> {
        let (name, field, key, action) = (self.connector, self.field, self.key, self.action);
        let config_maps: Api<ConfigMap> = runtime.api(Some(self.namespace));
        let stopped = || {
            if self.reported_state == "STOPPED" {
                None
            } else if self.spec.state == Some(ConnectorState::Stopped) {
                Some(OffsetsOutcome::Later)
            } else {
                Some(OffsetsOutcome::Refused(format!(
                    "the offsets of connector {name} can only be {action}ed while it is stopped: \
                     set {field}.state to stopped first"
                )))
            }
        };
        let get_map = |map: String| {
            let config_maps = config_maps.clone();
            async move {
                config_maps
                    .get_opt(&map)
                    .await
                    .map_err(|error| ApiCallError::new("get", format!("ConfigMap {map}"), error))
            }
        };
        match action.trim() {
            "list" => {
                let Some(target) = self.spec.list_offsets.as_ref() else {
                    return Ok(OffsetsOutcome::Refused(format!(
                        "strimzi.io/connector-offsets=list needs {field}.listOffsets.toConfigMap"
                    )));
                };
                let map_name = target.to_config_map.name.clone();
                let offsets = api.offsets(name).await?;
                let existing = get_map(map_name.clone()).await?;
                let mut data = existing
                    .as_ref()
                    .and_then(|map| map.data.clone())
                    .unwrap_or_default();
                data.insert(
                    key.to_owned(),
                    serde_json::to_string_pretty(&offsets).unwrap_or_default(),
                );
                let desired = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(map_name),
                        namespace: Some(self.namespace.to_owned()),
                        owner_references: existing
                            .is_none()
                            .then(|| self.owner.clone().map(|owner| vec![owner]))
                            .flatten(),
                        ..ObjectMeta::default()
                    },
                    data: Some(data),
                    ..ConfigMap::default()
                };
                runtime
                    .applier()
                    .apply(&desired, existing.as_ref())
                    .await
                    .map_err(ConnectorError::Apply)?;
                Ok(OffsetsOutcome::Done)
            }
            "alter" => {
                if let Some(outcome) = stopped() {
                    return Ok(outcome);
                }
                let Some(source) = self.spec.alter_offsets.as_ref() else {
                    return Ok(OffsetsOutcome::Refused(format!(
                        "strimzi.io/connector-offsets=alter needs \
                         {field}.alterOffsets.fromConfigMap"
                    )));
                };
                let map_name = source.from_config_map.name.clone();
                let text = get_map(map_name.clone())
                    .await?
                    .and_then(|map| map.data)
                    .and_then(|data| data.get(key).cloned());
                let Some(offsets) = text.and_then(|text| serde_json::from_str::<Value>(&text).ok())
                else {
                    return Ok(OffsetsOutcome::Refused(format!(
                        "ConfigMap {map_name} has no {key} holding JSON offsets"
                    )));
                };
                api.alter_offsets(name, &offsets).await?;
                Ok(OffsetsOutcome::Done)
            }
            "reset" => {
                if let Some(outcome) = stopped() {
                    return Ok(outcome);
                }
                api.reset_offsets(name).await?;
                Ok(OffsetsOutcome::Done)
            }
            other => Ok(OffsetsOutcome::Refused(format!(
                "strimzi.io/connector-offsets={other} is not list, alter or reset"
            ))),
        }
    }
}

impl Reconciler for ConnectorReconciler {
    type Resource = KafkaConnector;
    type Status = KafkaConnectorStatus;
    type Error = ConnectorError;

    async fn reconcile(
        &self,
        connector: Arc<KafkaConnector>,
    ) -> Result<Reconciled<KafkaConnectorStatus>, ConnectorError> {
        let namespace = connector.namespace().unwrap_or_default();
        let name = connector.name_any();
        let connect = self.connect(&connector, &namespace).await?;
        if !uses_connector_resources(&connect) {
            return Err(ConnectorError::ConnectorResourcesNotUsed);
        }
        let config = desired_config(&name, &connector)?;
        let mut status = KafkaConnectorStatus {
            tasks_max: connector.spec.tasks_max,
            ..connector.status.clone().unwrap_or_default()
        };
        status.conditions = None;
        let connect_ready = connect
            .status
            .as_ref()
            .and_then(|status| status.conditions.as_ref())
            .is_some_and(|conditions| {
                conditions.iter().any(|condition| {
                    condition.r#type.as_deref() == Some(conditions::READY)
                        && condition.status.as_deref() == Some("True")
                })
            });
        let api = match self.rest_api(&connect).await? {
            Some(api) if connect_ready => api,
            _ => {
                return Ok(Reconciled::pending(
                    status,
                    "KafkaConnectNotReady",
                    &format!(
                        "waiting for KafkaConnect {} to be ready",
                        connect.name_any()
                    ),
                    RECHECK,
                ));
            }
        };
        let current = api.connector_config(&name).await?;
        if current
            .as_ref()
            .is_none_or(|current| !same_config(current, &config))
        {
            api.put_connector_config(&name, &config).await?;
        }
        let wanted = connector.spec.state.unwrap_or(ConnectorState::Running);
        let state = api.connector_status(&name).await?;
        if let Some(action) = state["connector"]["state"]
            .as_str()
            .and_then(|state| state_change(state, wanted))
        {
            api.change_state(&name, action).await?;
        }
        let mut done = Vec::new();
        if let Some(value) = connector.annotations().get(annotations::RESTART) {
            let (include_tasks, only_failed) = restart_options(value);
            api.restart_connector(&name, include_tasks, only_failed)
                .await?;
            done.push((annotations::RESTART, value.clone()));
        }
        if let Some(value) = connector.annotations().get(annotations::RESTART_TASK) {
            if let Ok(task) = value.trim().parse::<i32>() {
                api.restart_task(&name, task).await?;
            }
            done.push((annotations::RESTART_TASK, value.clone()));
        }
        let mut offsets_warning = None;
        if let Some(value) = connector.annotations().get(annotations::CONNECTOR_OFFSETS) {
            let reported = state["connector"]["state"].as_str().unwrap_or_default();
            let request = OffsetsRequest {
                connector: &name,
                spec: &connector.spec,
                field: "spec",
                namespace: &connector.namespace().unwrap_or_default(),
                owner: owner_reference(connector.as_ref()),
                key: OFFSETS_KEY,
                action: value,
                reported_state: reported,
            };
            match request.carry_out(&self.runtime, &api).await? {
                OffsetsOutcome::Done => done.push((annotations::CONNECTOR_OFFSETS, value.clone())),
                OffsetsOutcome::Later => {}
                OffsetsOutcome::Refused(message) => {
                    offsets_warning = Some(message);
                    done.push((annotations::CONNECTOR_OFFSETS, value.clone()));
                }
            }
        }
        let state = api.connector_status(&name).await?;
        status.auto_restart = self.auto_restart(&api, &name, &connector, &state).await?;
        status.topics = Some(api.connector_topics(&name).await.unwrap_or_default());
        status.connector_status = match &state {
            Value::Object(map) => Some(FreeFormMap(map.clone().into_iter().collect())),
            _ => None,
        };
        let reported = state["connector"]["state"].as_str().unwrap_or_default();
        let expected = match wanted {
            ConnectorState::Running => "RUNNING",
            ConnectorState::Paused => "PAUSED",
            ConnectorState::Stopped => "STOPPED",
        };
        let mut reconciled = if failed(&state) {
            Reconciled::stalled(
                status,
                "ConnectorFailed",
                &format!(
                    "connector {name} or one of its tasks failed (status.connectorStatus has \
                     the trace)"
                ),
                RECHECK,
            )
        } else if reported != expected {
            Reconciled::pending(
                status,
                "WaitingForConnectorState",
                &format!("connector {name} is {reported}, asked to be {expected}"),
                STATE_RECHECK,
            )
        } else {
            Reconciled::new(status)
        };
        for (key, value) in done {
            reconciled = reconciled.remove_annotation(key, &value);
        }
        if let Some(message) = offsets_warning {
            reconciled = reconciled.warn("ConnectorOffsets", &message);
        }
        Ok(reconciled)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn states_are_reached_with_one_call() {
        assert_eq!(
            state_change("RUNNING", ConnectorState::Paused),
            Some("pause")
        );
        assert_eq!(
            state_change("RUNNING", ConnectorState::Stopped),
            Some("stop")
        );
        assert_eq!(
            state_change("PAUSED", ConnectorState::Running),
            Some("resume")
        );
        assert_eq!(
            state_change("STOPPED", ConnectorState::Running),
            Some("resume")
        );
        assert_eq!(state_change("RUNNING", ConnectorState::Running), None);
        assert_eq!(state_change("FAILED", ConnectorState::Running), None);
    }

    #[test]
    fn restart_backoff_grows_to_an_hour() {
        let waits: Vec<i64> = (0..9).map(backoff_minutes).collect();
        assert_eq!(waits, vec![0, 2, 6, 12, 20, 30, 42, 56, 60]);
    }

    #[test]
    fn restart_annotation_options() {
        assert_eq!(restart_options("true"), (false, false));
        assert_eq!(restart_options("includeTasks,onlyFailed"), (true, true));
        assert_eq!(restart_options("includeTasks"), (true, false));
    }

    #[test]
    fn failures_of_the_connector_or_a_task_count() {
        assert!(failed(
            &json!({"connector": {"state": "FAILED"}, "tasks": []})
        ));
        assert!(failed(
            &json!({"connector": {"state": "RUNNING"}, "tasks": [{"id": 0, "state": "FAILED"}]})
        ));
        assert!(!failed(
            &json!({"connector": {"state": "RUNNING"}, "tasks": [{"id": 0, "state": "RUNNING"}]})
        ));
    }

    #[test]
    fn the_spec_decides_class_tasks_and_name() {
        let connector: KafkaConnector = serde_json::from_value(json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaConnector",
            "metadata": {"name": "c", "labels": {"strimzi.io/cluster": "x"}},
            "spec": {"class": "A", "tasksMax": 2, "config": {"tasks.max": 9, "file": "/f", "n": 1}}
        }))
        .unwrap();
        assert_eq!(
            desired_config("c", &connector).unwrap(),
            json!({"connector.class": "A", "tasks.max": "2", "file": "/f", "n": "1", "name": "c"})
        );
    }
}
