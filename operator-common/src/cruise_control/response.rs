//! Cruise Control's answers, read into types (pure).
//!
//! Errors come as `{"errorMessage": "...", "stackTrace": "...", "version": 1}` with an HTTP
//! error status. Cruise Control writes JSON with Gson, which spells non-finite numbers `NaN`
//! and `Infinity`; they are read as `null`.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::CruiseControlError;
use super::request::{Endpoint, USER_TASK_ID_HEADER};
use crate::http_client::Response;

/// What Cruise Control's error message says when its load monitor has too few metric windows.
const NOT_ENOUGH_DATA: &str = "NotEnoughValidWindowsException";
/// What Cruise Control's error message says when it runs as many user tasks as allowed.
const TOO_MANY_TASKS: &str = "reached the servlet capacity";

/// The answer to a proposal request.
#[derive(Clone, Debug, PartialEq)]
pub enum ProposalAnswer {
    /// The proposal (HTTP 200): computed, and being carried out unless it was a dry run.
    Ready {
        /// The user task that computed it.
        task_id: Option<String>,
        /// The proposal.
        result: Box<OptimizationResult>,
    },
    /// Still computing (HTTP 202): ask the user task for the result later.
    InProgress {
        /// The user task computing it.
        task_id: String,
    },
}

/// A proposal: Cruise Control's summary and the load of every broker.
#[derive(Clone, Debug, PartialEq)]
pub struct OptimizationResult {
    /// The summary as Cruise Control sent it (what a KafkaRebalance's
    /// `status.optimizationResult` shows).
    pub summary_json: Map<String, Value>,
    /// The summary's figures.
    pub summary: ProposalSummary,
    /// The load of each broker now; only in verbose answers.
    pub load_before: Option<Vec<BrokerLoad>>,
    /// The load of each broker once the proposal is carried out.
    pub load_after: Option<Vec<BrokerLoad>>,
}

/// The figures of a proposal's summary.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalSummary {
    /// Replicas moved between brokers.
    pub num_replica_movements: Option<i64>,
    /// Megabytes moved between brokers.
    #[serde(rename = "dataToMoveMB")]
    pub data_to_move_mb: Option<i64>,
    /// Replicas moved between the disks of a broker.
    pub num_intra_broker_replica_movements: Option<i64>,
    /// Megabytes moved between the disks of a broker.
    #[serde(rename = "intraBrokerDataToMoveMB")]
    pub intra_broker_data_to_move_mb: Option<i64>,
    /// Leaderships moved.
    pub num_leader_movements: Option<i64>,
    /// Metric windows the proposal is based on.
    pub recent_windows: Option<i64>,
    /// Percentage of the partitions with enough metrics.
    pub monitored_partitions_percentage: Option<f64>,
    /// Whether the cluster has the right number of brokers, e.g. `RIGHT_SIZED`.
    pub provision_status: Option<String>,
}

/// The load of one broker, as Cruise Control reports it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct BrokerLoad {
    /// Node ID of the broker.
    #[serde(rename = "Broker")]
    pub broker: i32,
    /// Leader replicas.
    #[serde(rename = "Leaders")]
    pub leaders: Option<i64>,
    /// Replicas.
    #[serde(rename = "Replicas")]
    pub replicas: Option<i64>,
    /// CPU use in percent.
    #[serde(rename = "CpuPct")]
    pub cpu_percentage: Option<f64>,
    /// Disk use in percent.
    #[serde(rename = "DiskPct")]
    pub disk_used_percentage: Option<f64>,
    /// Disk use in megabytes.
    #[serde(rename = "DiskMB")]
    pub disk_used_mb: Option<f64>,
    /// Outgoing network rate in KB/s.
    #[serde(rename = "NwOutRate")]
    pub network_out_rate_kb: Option<f64>,
    /// Incoming network rate of leader replicas in KB/s.
    #[serde(rename = "LeaderNwInRate")]
    pub leader_network_in_rate_kb: Option<f64>,
    /// Incoming network rate of follower replicas in KB/s.
    #[serde(rename = "FollowerNwInRate")]
    pub follower_network_in_rate_kb: Option<f64>,
    /// Outgoing network rate if every replica were a leader, in KB/s.
    #[serde(rename = "PnwOutRate")]
    pub potential_max_network_out_rate_kb: Option<f64>,
}

/// The state of a user task: a request Cruise Control keeps track of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStatus {
    /// Still computing.
    Active,
    /// Computed, and being carried out.
    InExecution,
    /// Done.
    Completed,
    /// Failed.
    CompletedWithError,
}

impl TaskStatus {
    /// The status of Cruise Control's name for it.
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "Active" => Some(Self::Active),
            "InExecution" => Some(Self::InExecution),
            "Completed" => Some(Self::Completed),
            "CompletedWithError" => Some(Self::CompletedWithError),
            _ => None,
        }
    }
}

/// One user task.
#[derive(Clone, Debug, PartialEq)]
pub struct UserTask {
    /// Its ID (the `User-Task-ID` of the request that created it).
    pub id: String,
    /// Its state.
    pub status: TaskStatus,
    /// The request that created it.
    pub request_url: Option<String>,
    /// The proposal it computed, once it has one (its original answer).
    pub result: Option<OptimizationResult>,
}

/// The executor's state: whether, and how far, a proposal is being carried out.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutorState {
    /// E.g. `NO_TASK_IN_PROGRESS`, `INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS`.
    pub state: String,
    /// The user task being carried out.
    pub triggered_user_task_id: Option<String>,
    /// Why, with the client and the start time: `<reason> (Client: <ip>, Date: <time>)`.
    pub triggered_task_reason: Option<String>,
    /// Megabytes moved between brokers so far.
    pub finished_data_movement_mb: Option<i64>,
    /// Megabytes to move between brokers in all.
    pub total_data_to_move_mb: Option<i64>,
    /// The state as Cruise Control sent it.
    pub json: Value,
}

impl ExecutorState {
    /// When the running execution started: the `Date:` Cruise Control writes at the end of
    /// the task's reason.
    pub fn task_started(&self) -> Option<jiff::Timestamp> {
        let reason = self.triggered_task_reason.as_deref()?;
        let (_, date) = reason.rsplit_once("Date: ")?;
        date.trim_end_matches(')').trim().parse().ok()
    }
}

impl OptimizationResult {
    /// Reads a proposal: an object with a `summary` object and, optionally, the load before
    /// and after as `{"brokers": [...]}`.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let summary_json = value
            .get("summary")
            .and_then(Value::as_object)
            .cloned()
            .ok_or("no summary")?;
        let summary = serde_json::from_value(Value::Object(summary_json.clone()))
            .map_err(|error| format!("summary: {error}"))?;
        Ok(Self {
            summary_json,
            summary,
            load_before: brokers(value, "loadBeforeOptimization")?,
            load_after: brokers(value, "loadAfterOptimization")?,
        })
    }
}

/// The broker loads under `key`, if there.
fn brokers(value: &Value, key: &str) -> Result<Option<Vec<BrokerLoad>>, String> {
    value
        .get(key)
        .and_then(|load| load.get("brokers"))
        .map(|brokers| {
            serde_json::from_value(brokers.clone()).map_err(|error| format!("{key}: {error}"))
        })
        .transpose()
}

/// The answer to a proposal request to `endpoint`.
pub fn proposal(
    endpoint: Endpoint,
    response: &Response,
) -> Result<ProposalAnswer, CruiseControlError> {
    let task_id = response.header(USER_TASK_ID_HEADER).map(str::to_owned);
    match response.status {
        200 => {
            let result = OptimizationResult::from_json(&json(endpoint, response)?)
                .map_err(|message| unreadable(endpoint, message))?;
            Ok(ProposalAnswer::Ready {
                task_id,
                result: Box::new(result),
            })
        }
        202 => task_id
            .map(|task_id| ProposalAnswer::InProgress { task_id })
            .ok_or_else(|| unreadable(endpoint, format!("HTTP 202 without {USER_TASK_ID_HEADER}"))),
        _ => Err(failure(endpoint, response)),
    }
}

/// The task `task_id` from the answer of `user_tasks`; `None` when Cruise Control does not
/// know it (it restarted, or forgot the task).
pub fn user_task(
    task_id: &str,
    response: &Response,
) -> Result<Option<UserTask>, CruiseControlError> {
    let endpoint = Endpoint::UserTasks;
    let answer = ok_json(endpoint, response)?;
    let tasks = answer
        .get("userTasks")
        .and_then(Value::as_array)
        .ok_or_else(|| unreadable(endpoint, "no userTasks".to_owned()))?;
    let Some(task) = tasks
        .iter()
        .find(|task| task.get("UserTaskId").and_then(Value::as_str) == Some(task_id))
    else {
        return Ok(None);
    };
    let text = |key: &str| task.get(key).and_then(Value::as_str);
    let status = text("Status")
        .and_then(TaskStatus::from_name)
        .ok_or_else(|| unreadable(endpoint, format!("task {task_id} has no known Status")))?;
    // The original answer is the JSON text of the task's answer; a failed task has the word
    // `CompletedWithError` there instead.
    let result = text("originalResponse")
        .and_then(|original| serde_json::from_str::<Value>(&finite_numbers(original)).ok())
        .filter(|original| original.get("summary").is_some())
        .map(|original| OptimizationResult::from_json(&original))
        .transpose()
        .map_err(|message| unreadable(endpoint, message))?;
    Ok(Some(UserTask {
        id: task_id.to_owned(),
        status,
        request_url: text("RequestURL").map(str::to_owned),
        result,
    }))
}

/// The executor state from the answer of `state?substates=executor`.
pub fn executor_state(response: &Response) -> Result<ExecutorState, CruiseControlError> {
    let endpoint = Endpoint::State;
    let answer = ok_json(endpoint, response)?;
    let json = answer
        .get("ExecutorState")
        .filter(|state| state.is_object())
        .cloned()
        .ok_or_else(|| unreadable(endpoint, "no ExecutorState".to_owned()))?;
    let text = |key: &str| {
        json.get(key)
            .and_then(Value::as_str)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
    };
    let state = text("state").ok_or_else(|| unreadable(endpoint, "no state".to_owned()))?;
    Ok(ExecutorState {
        state,
        triggered_user_task_id: text("triggeredUserTaskId"),
        triggered_task_reason: text("triggeredTaskReason"),
        finished_data_movement_mb: json.get("finishedDataMovement").and_then(Value::as_i64),
        total_data_to_move_mb: json.get("totalDataToMove").and_then(Value::as_i64),
        json,
    })
}

/// Whether a call without a meaningful body (stopping an execution) succeeded.
pub fn accepted(endpoint: Endpoint, response: &Response) -> Result<(), CruiseControlError> {
    match response.status {
        200 | 202 => Ok(()),
        _ => Err(failure(endpoint, response)),
    }
}

/// The JSON body of a 200 answer, else the failure.
fn ok_json(endpoint: Endpoint, response: &Response) -> Result<Value, CruiseControlError> {
    if response.status != 200 {
        return Err(failure(endpoint, response));
    }
    json(endpoint, response)
}

/// The body as JSON.
fn json(endpoint: Endpoint, response: &Response) -> Result<Value, CruiseControlError> {
    serde_json::from_str(&finite_numbers(&response.text()))
        .map_err(|error| unreadable(endpoint, format!("not JSON: {error}")))
}

/// The error an answer with an error status stands for.
fn failure(endpoint: Endpoint, response: &Response) -> CruiseControlError {
    let status = response.status;
    if matches!(status, 401 | 403) {
        return CruiseControlError::Unauthorized {
            endpoint: endpoint.name(),
            status,
        };
    }
    let text = response.text();
    let message = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|body| body.get("errorMessage")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| text.trim().to_owned());
    if message.contains(NOT_ENOUGH_DATA) {
        CruiseControlError::NotEnoughData { message }
    } else if message.contains(TOO_MANY_TASKS) {
        CruiseControlError::TooManyActiveTasks { message }
    } else {
        CruiseControlError::Rejected {
            endpoint: endpoint.name(),
            status,
            message,
        }
    }
}

fn unreadable(endpoint: Endpoint, message: String) -> CruiseControlError {
    CruiseControlError::Unreadable {
        endpoint: endpoint.name(),
        message,
    }
}

/// `text` with Gson's `NaN`, `Infinity` and `-Infinity` outside strings replaced by `null`,
/// which JSON can read.
fn finite_numbers(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(next) = rest.chars().next() {
        if in_string {
            out.push(next);
            match next {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            rest = &rest[next.len_utf8()..];
            continue;
        }
        let word = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|word| rest.starts_with(word));
        match word {
            Some(word) => {
                out.push_str("null");
                rest = &rest[word.len()..];
            }
            None => {
                in_string = next == '"';
                out.push(next);
                rest = &rest[next.len_utf8()..];
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    /// A verbose answer of `rebalance`, as Cruise Control 2.5 shapes it.
    fn proposal_json() -> Value {
        json!({
            "summary": {
                "numIntraBrokerReplicaMovements": 0, "numReplicaMovements": 12,
                "onDemandBalancednessScoreBefore": 78.5, "onDemandBalancednessScoreAfter": 93.2,
                "intraBrokerDataToMoveMB": 0, "monitoredPartitionsPercentage": 100.0,
                "provisionRecommendation": "", "excludedBrokersForReplicaMove": [],
                "excludedBrokersForLeadership": [], "provisionStatus": "RIGHT_SIZED",
                "numLeaderMovements": 4, "excludedTopics": [], "recentWindows": 5,
                "dataToMoveMB": 340
            },
            "goalSummary": [{"goal": "RackAwareGoal", "status": "NO-ACTION"}],
            "proposals": [],
            "loadBeforeOptimization": {"hosts": [], "brokers": [
                {"Broker": 0, "Leaders": 10, "Replicas": 30, "CpuPct": 12.5, "DiskPct": 40.0,
                 "DiskMB": 4000.0, "NwOutRate": 100.0, "LeaderNwInRate": 50.0,
                 "FollowerNwInRate": 40.0, "PnwOutRate": 300.0, "Rack": "a", "Host": "h0",
                 "BrokerState": "ALIVE"},
                {"Broker": 1, "Leaders": 2, "Replicas": 6, "CpuPct": 2.5, "DiskPct": 8.0,
                 "DiskMB": 800.0, "NwOutRate": 20.0, "LeaderNwInRate": 10.0,
                 "FollowerNwInRate": 8.0, "PnwOutRate": 60.0}
            ]},
            "loadAfterOptimization": {"hosts": [], "brokers": [
                {"Broker": 1, "Leaders": 6, "Replicas": 18, "CpuPct": 7.5, "DiskPct": 24.0,
                 "DiskMB": 2400.0, "NwOutRate": 60.0, "LeaderNwInRate": 30.0,
                 "FollowerNwInRate": 24.0, "PnwOutRate": 180.0},
                {"Broker": 0, "Leaders": 6, "Replicas": 18, "CpuPct": 7.5, "DiskPct": 24.0,
                 "DiskMB": 2400.0, "NwOutRate": 60.0, "LeaderNwInRate": 30.0,
                 "FollowerNwInRate": 24.0, "PnwOutRate": 180.0}
            ]},
            "version": 1
        })
    }

    #[test]
    fn a_ready_proposal_has_its_summary_loads_and_task() {
        let answer = proposal(
            Endpoint::Rebalance,
            &response(
                200,
                &[("User-Task-ID", "t-1")],
                &proposal_json().to_string(),
            ),
        )
        .unwrap();
        let ProposalAnswer::Ready { task_id, result } = answer else {
            panic!("not ready: {answer:?}");
        };
        assert_eq!(task_id.as_deref(), Some("t-1"));
        assert_eq!(result.summary.num_replica_movements, Some(12));
        assert_eq!(result.summary.data_to_move_mb, Some(340));
        assert_eq!(
            result.summary.provision_status.as_deref(),
            Some("RIGHT_SIZED")
        );
        assert_eq!(result.summary_json["onDemandBalancednessScoreAfter"], 93.2);
        assert_eq!(result.summary_json.len(), 14, "the whole summary is kept");
        let before = result.load_before.unwrap();
        assert_eq!(before[0].broker, 0);
        assert_eq!(before[0].leaders, Some(10));
        assert_eq!(before[1].potential_max_network_out_rate_kb, Some(60.0));
        assert_eq!(result.load_after.unwrap()[0].broker, 1);
    }

    #[test]
    fn a_proposal_still_computing_is_fetched_later_by_its_task() {
        let answer = proposal(
            Endpoint::AddBroker,
            &response(
                202,
                &[("user-task-id", "t-2")],
                r#"{"progress":[],"version":1}"#,
            ),
        )
        .unwrap();
        assert_eq!(
            answer,
            ProposalAnswer::InProgress {
                task_id: "t-2".to_owned()
            }
        );
        let error = proposal(Endpoint::AddBroker, &response(202, &[], "{}")).unwrap_err();
        assert!(matches!(error, CruiseControlError::Unreadable { .. }));
    }

    #[test]
    fn errors_are_told_apart_by_status_and_message() {
        let body = |message: &str| {
            json!({"errorMessage": message, "stackTrace": "...", "version": 1}).to_string()
        };
        let not_enough = proposal(
            Endpoint::Rebalance,
            &response(500, &[], &body("Error processing POST request '/rebalance' due to: 'com.linkedin.kafka.cruisecontrol.exception.NotEnoughValidWindowsException: There are only 0 valid windows.'.")),
        )
        .unwrap_err();
        assert!(matches!(
            not_enough,
            CruiseControlError::NotEnoughData { .. }
        ));
        assert!(not_enough.is_transient());
        let busy = proposal(
            Endpoint::Rebalance,
            &response(500, &[], &body("There are already 5 active user tasks, which has reached the servlet capacity.")),
        )
        .unwrap_err();
        assert!(matches!(
            busy,
            CruiseControlError::TooManyActiveTasks { .. }
        ));
        let goal = proposal(
            Endpoint::Rebalance,
            &response(
                400,
                &[],
                &body("Bad POST request '/rebalance' due to 'Goal NoSuchGoal is not supported.'."),
            ),
        )
        .unwrap_err();
        assert_eq!(
            goal,
            CruiseControlError::Rejected {
                endpoint: "rebalance",
                status: 400,
                message:
                    "Bad POST request '/rebalance' due to 'Goal NoSuchGoal is not supported.'."
                        .to_owned()
            }
        );
        assert!(!goal.is_transient());
        assert!(goal.to_string().contains("NoSuchGoal"));
        let denied = proposal(Endpoint::Rebalance, &response(401, &[], "<html>")).unwrap_err();
        assert!(matches!(
            denied,
            CruiseControlError::Unauthorized { status: 401, .. }
        ));
        let html = accepted(
            Endpoint::StopProposalExecution,
            &response(503, &[], " Service Unavailable "),
        )
        .unwrap_err();
        assert!(
            html.to_string()
                .ends_with("(HTTP 503): Service Unavailable"),
            "{html}"
        );
        assert_eq!(
            accepted(Endpoint::StopProposalExecution, &response(200, &[], "{}")),
            Ok(())
        );
    }

    #[test]
    fn user_tasks_carry_their_status_and_original_answer() {
        let original = proposal_json().to_string();
        let body = json!({"userTasks": [
            {"UserTaskId": "other", "Status": "Active", "RequestURL": "x", "ClientIdentity": "c", "StartMs": "1"},
            {"UserTaskId": "t-1", "Status": "Completed", "StartMs": "1700000000000",
             "RequestURL": "POST /kafkacruisecontrol/rebalance?dryrun=true", "ClientIdentity": "10.0.0.1",
             "originalResponse": original},
        ], "version": 1});
        let task = user_task("t-1", &response(200, &[], &body.to_string()))
            .unwrap()
            .unwrap();
        assert_eq!(task.status, TaskStatus::Completed);
        assert_eq!(
            task.request_url.as_deref(),
            Some("POST /kafkacruisecontrol/rebalance?dryrun=true")
        );
        assert_eq!(task.result.unwrap().summary.num_leader_movements, Some(4));
        let failed = json!({"userTasks": [{"UserTaskId": "t-3", "Status": "CompletedWithError",
            "originalResponse": "CompletedWithError"}], "version": 1});
        let task = user_task("t-3", &response(200, &[], &failed.to_string()))
            .unwrap()
            .unwrap();
        assert_eq!(
            (task.status, task.result),
            (TaskStatus::CompletedWithError, None)
        );
        let empty = json!({"userTasks": [], "version": 1}).to_string();
        assert_eq!(user_task("t-1", &response(200, &[], &empty)).unwrap(), None);
        let odd = json!({"userTasks": [{"UserTaskId": "t-1", "Status": "Sleeping"}]}).to_string();
        assert!(user_task("t-1", &response(200, &[], &odd)).is_err());
    }

    #[test]
    fn the_executor_state_tells_how_far_an_execution_got() {
        let body = json!({"ExecutorState": {
            "state": "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS",
            "triggeredUserTaskId": "t-9", "triggeredSelfHealingTaskId": "",
            "triggeredTaskReason": "No reason provided (Client: 10.0.0.1, Date: 2026-11-25T10:00:00Z)",
            "finishedDataMovement": 120, "totalDataToMove": 480,
            "numTotalPartitionMovements": 20, "numFinishedPartitionMovements": 5
        }, "version": 1});
        let state = executor_state(&response(200, &[], &body.to_string())).unwrap();
        assert_eq!(
            state.state,
            "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS"
        );
        assert_eq!(state.triggered_user_task_id.as_deref(), Some("t-9"));
        assert_eq!(
            (state.finished_data_movement_mb, state.total_data_to_move_mb),
            (Some(120), Some(480))
        );
        assert_eq!(
            state.task_started(),
            Some("2026-11-25T10:00:00Z".parse().unwrap())
        );
        assert_eq!(state.json["numTotalPartitionMovements"], 20);
        let idle = json!({"ExecutorState": {"state": "NO_TASK_IN_PROGRESS"}, "version": 1});
        let idle = executor_state(&response(200, &[], &idle.to_string())).unwrap();
        assert_eq!(
            (idle.task_started(), idle.triggered_user_task_id),
            (None, None)
        );
        assert!(executor_state(&response(200, &[], r#"{"version":1}"#)).is_err());
    }

    #[test]
    fn non_finite_numbers_read_as_null_outside_strings() {
        let text = r#"{"a": NaN, "b": -Infinity, "c": [Infinity, 1], "d": "NaN \" Infinity"}"#;
        let value: Value = serde_json::from_str(&finite_numbers(text)).unwrap();
        assert_eq!(
            value,
            json!({"a": null, "b": null, "c": [null, 1], "d": "NaN \" Infinity"})
        );
        assert!(matches!(
            finite_numbers("{}"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
