//! The REST API: `/kafkacruisecontrol/<endpoint>` with basic authentication and roles, the
//! parameters Cruise Control 2.5 takes (others refused with 400, naming them), and answers in
//! its JSON shapes.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};

use crate::config::{Role, simple_name};
use crate::executor::{self, ExecutionOptions};
use crate::model::{self, Scope};
use crate::render::{self, ProposalContext, VERSION};
use crate::service::{Execution, StandIn, TaskStatus, UserTask, new_task_id, now_ms};

/// Where the API lives.
pub const PREFIX: &str = "/kafkacruisecontrol/";
/// The header naming a request's user task.
pub const USER_TASK_ID: &str = "User-Task-ID";

/// Parameters every endpoint takes.
const COMMON: [&str; 4] = ["json", "verbose", "reason", "get_response_schema"];
/// Parameters of the proposal endpoints.
const PROPOSAL: [&str; 22] = [
    "dryrun",
    "goals",
    "kafka_assigner",
    "allow_capacity_estimation",
    "concurrent_partition_movements_per_broker",
    "concurrent_intra_broker_partition_movements",
    "concurrent_leader_movements",
    "max_partition_movements_in_cluster",
    "execution_progress_check_interval_ms",
    "skip_hard_goal_check",
    "excluded_topics",
    "use_ready_default_goals",
    "data_from",
    "replica_movement_strategies",
    "exclude_recently_demoted_brokers",
    "exclude_recently_removed_brokers",
    "replication_throttle",
    "review_id",
    "stop_ongoing_execution",
    "fast_mode",
    "skip_rack_awareness_check",
    "min_isr_based_concurrency_adjustment",
];

/// An endpoint the stand-in serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    State,
    Load,
    UserTasks,
    Proposals,
    Rebalance,
    AddBroker,
    RemoveBroker,
    TopicConfiguration,
    RemoveDisks,
    StopProposalExecution,
}

impl Endpoint {
    fn of(method: &Method, name: &str) -> Option<Self> {
        let endpoint = match name {
            "state" => Self::State,
            "load" => Self::Load,
            "user_tasks" => Self::UserTasks,
            "proposals" => Self::Proposals,
            "rebalance" => Self::Rebalance,
            "add_broker" => Self::AddBroker,
            "remove_broker" => Self::RemoveBroker,
            "topic_configuration" => Self::TopicConfiguration,
            "remove_disks" => Self::RemoveDisks,
            "stop_proposal_execution" => Self::StopProposalExecution,
            _ => return None,
        };
        (endpoint.method() == *method).then_some(endpoint)
    }

    fn method(self) -> Method {
        match self {
            Self::State | Self::Load | Self::UserTasks | Self::Proposals => Method::GET,
            _ => Method::POST,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::State => "state",
            Self::Load => "load",
            Self::UserTasks => "user_tasks",
            Self::Proposals => "proposals",
            Self::Rebalance => "rebalance",
            Self::AddBroker => "add_broker",
            Self::RemoveBroker => "remove_broker",
            Self::TopicConfiguration => "topic_configuration",
            Self::RemoveDisks => "remove_disks",
            Self::StopProposalExecution => "stop_proposal_execution",
        }
    }

    /// The lowest role allowed to call it.
    fn role(self) -> Role {
        match self {
            Self::State | Self::UserTasks => Role::Viewer,
            Self::Load | Self::Proposals => Role::User,
            _ => Role::Admin,
        }
    }

    fn parameters(self) -> Vec<&'static str> {
        let mut names: Vec<&str> = COMMON.to_vec();
        match self {
            Self::State => names.extend(["substates", "super_verbose"]),
            Self::Load => names.extend([
                "time",
                "start",
                "end",
                "allow_capacity_estimation",
                "populate_disk_info",
                "capacity_only",
                "brokerid",
            ]),
            Self::UserTasks => names.extend([
                "user_task_ids",
                "client_ids",
                "endpoints",
                "types",
                "entries",
                "fetch_completed_task",
            ]),
            Self::Proposals => names.extend(PROPOSAL.iter().copied().chain([
                "ignore_proposal_cache",
                "destination_broker_ids",
                "rebalance_disk",
            ])),
            Self::Rebalance => names.extend(PROPOSAL.iter().copied().chain([
                "ignore_proposal_cache",
                "destination_broker_ids",
                "rebalance_disk",
            ])),
            Self::AddBroker => names.extend(PROPOSAL.iter().copied().chain(["brokerid"])),
            Self::RemoveBroker => names.extend(PROPOSAL.iter().copied().chain([
                "brokerid",
                "throttle_removed_broker",
                "destination_broker_ids",
            ])),
            Self::TopicConfiguration => names.extend(
                PROPOSAL
                    .iter()
                    .copied()
                    .chain(["topic", "replication_factor"]),
            ),
            Self::RemoveDisks => names.extend(["dryrun", "brokerid_and_logdirs"]),
            Self::StopProposalExecution => {
                names.extend(["force_stop", "stop_external_agent", "review_id"])
            }
        }
        names
    }
}

/// The router: every path goes to one handler.
pub fn router(standin: Arc<StandIn>) -> Router {
    Router::new().fallback(handle).with_state(standin)
}

/// A failed request: status and message.
#[derive(Debug)]
struct Failure(StatusCode, String);

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        json_response(self.0, &render::error_body(&self.1), None)
    }
}

fn json_response(status: StatusCode, body: &Value, task: Option<&str>) -> Response {
    let mut response = (status, body.to_string()).into_response();
    let headers = response.headers_mut();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    if let Some(value) = task.and_then(|task| HeaderValue::from_str(task).ok()) {
        headers.insert(USER_TASK_ID, value);
    }
    response
}

/// The query's parameters, decoded (`%XX`, `+`).
fn query(uri: &Uri) -> Vec<(String, String)> {
    uri.query()
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(name), decode(value))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'+' => out.push(b' '),
            b'%' if index + 2 < bytes.len() => {
                match u8::from_str_radix(&text[index + 1..index + 3], 16) {
                    Ok(byte) => {
                        out.push(byte);
                        index += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The request's parameters, read with errors naming them.
struct Params {
    endpoint: Endpoint,
    pairs: Vec<(String, String)>,
}

impl Params {
    fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    fn bad(&self, name: &str, problem: &str) -> Failure {
        Failure(
            StatusCode::BAD_REQUEST,
            format!(
                "Bad {} request '/{}' due to 'parameter {name}: {problem}'.",
                self.endpoint.method(),
                self.endpoint.name()
            ),
        )
    }

    fn flag(&self, name: &str, default: bool) -> Result<bool, Failure> {
        match self.get(name) {
            None => Ok(default),
            Some(value) if value.eq_ignore_ascii_case("true") => Ok(true),
            Some(value) if value.eq_ignore_ascii_case("false") => Ok(false),
            Some(value) => Err(self.bad(name, &format!("{value:?} is neither true nor false"))),
        }
    }

    fn number<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, Failure> {
        self.get(name)
            .map(|value| {
                value
                    .trim()
                    .parse()
                    .map_err(|_| self.bad(name, &format!("{value:?} is not a number")))
            })
            .transpose()
    }

    fn list(&self, name: &str) -> Vec<String> {
        self.get(name)
            .into_iter()
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::to_owned)
            .collect()
    }

    fn brokers(&self, name: &str) -> Result<BTreeSet<i32>, Failure> {
        self.list(name)
            .iter()
            .map(|id| {
                id.parse()
                    .map_err(|_| self.bad(name, &format!("{id:?} is not a broker ID")))
            })
            .collect()
    }
}

/// Why a request is refused before it is looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// No or wrong credentials (401).
    Unauthorized,
    /// A role too low for the endpoint (403).
    Forbidden,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Self::Unauthorized => {
                let mut response = (
                    StatusCode::UNAUTHORIZED,
                    "<html><body><h2>HTTP ERROR 401 Unauthorized</h2></body></html>",
                )
                    .into_response();
                response.headers_mut().insert(
                    "www-authenticate",
                    HeaderValue::from_static("basic realm=\"KafkaCruiseControlRealm\""),
                );
                response
            }
            Self::Forbidden => (
                StatusCode::FORBIDDEN,
                "<html><body><h2>HTTP ERROR 403 Forbidden</h2></body></html>",
            )
                .into_response(),
        }
    }
}

/// Checks the credentials against the users and the user's role against the endpoint's.
fn authorize(
    standin: &StandIn,
    headers: &HeaderMap,
    endpoint: Option<Endpoint>,
) -> Result<(), Refusal> {
    let Some(users) = &standin.settings.api.users else {
        return Ok(());
    };
    let credentials = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            value
                .strip_prefix("Basic ")
                .or_else(|| value.strip_prefix("basic "))
        })
        .and_then(|token| {
            base64::engine::general_purpose::STANDARD
                .decode(token.trim())
                .ok()
        })
        .and_then(|bytes| String::from_utf8(bytes).ok());
    let Some((name, password)) = credentials.as_deref().and_then(|text| text.split_once(':'))
    else {
        return Err(Refusal::Unauthorized);
    };
    let user = users
        .iter()
        .find(|user| user.name == name && user.password == password)
        .ok_or(Refusal::Unauthorized)?;
    match endpoint {
        Some(endpoint) if user.role < endpoint.role() => Err(Refusal::Forbidden),
        _ => Ok(()),
    }
}

async fn handle(
    State(standin): State<Arc<StandIn>>,
    ConnectInfo(crate::ClientAddress(client)): ConnectInfo<crate::ClientAddress>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let name = uri.path().strip_prefix(PREFIX).unwrap_or_default();
    let endpoint = Endpoint::of(&method, name.trim_end_matches('/'));
    if let Err(refusal) = authorize(&standin, &headers, endpoint) {
        return refusal.into_response();
    }
    let Some(endpoint) = endpoint else {
        return Failure(
            StatusCode::NOT_FOUND,
            format!(
                "Unrecognized endpoint in request '{}': {method} is not served by the Cruise Control stand-in",
                uri.path()
            ),
        )
        .into_response();
    };
    let params = Params {
        endpoint,
        pairs: query(&uri),
    };
    let allowed = endpoint.parameters();
    let unknown: Vec<&str> = params
        .pairs
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !allowed.iter().any(|known| known.eq_ignore_ascii_case(name)))
        .collect();
    if !unknown.is_empty() {
        return Failure(
            StatusCode::BAD_REQUEST,
            format!(
                "Unrecognized endpoint parameters in {} {method} request: [{}].",
                endpoint.name(),
                unknown.join(", ")
            ),
        )
        .into_response();
    }
    let request = Incoming {
        url: format!(
            "{method} {}",
            uri.path_and_query().map_or(uri.path(), |p| p.as_str())
        ),
        client: client.ip().to_string(),
        task: headers
            .get(USER_TASK_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned),
    };
    let result = match endpoint {
        Endpoint::State => state(&standin, &params),
        Endpoint::Load => load(&standin).await,
        Endpoint::UserTasks => user_tasks(&standin, &params),
        Endpoint::StopProposalExecution => Ok(stop(&standin)),
        Endpoint::RemoveDisks => Err(Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Error processing POST request '/remove_disks' due to: 'intra-broker (log directory) movements are not implemented by the Cruise Control stand-in'.".to_owned(),
        )),
        _ => proposal(&standin, &params, &request).await,
    };
    result.unwrap_or_else(IntoResponse::into_response)
}

/// Who asked what.
struct Incoming {
    url: String,
    client: String,
    task: Option<String>,
}

fn state(standin: &StandIn, params: &Params) -> Result<Response, Failure> {
    let substates: BTreeSet<String> = params
        .list("substates")
        .iter()
        .map(|name| name.to_ascii_lowercase())
        .collect();
    let wanted = |name: &str| substates.is_empty() || substates.contains(name);
    let mut answer = json!({"version": VERSION});
    if wanted("monitor") {
        let view = standin.monitor_view();
        answer["MonitorState"] = json!({
            "state": "RUNNING",
            "trainingPct": 100.0,
            "trained": true,
            "numFlawedPartitions": 0,
            "numValidPartitions": if view.valid_windows > 0 { view.partitions } else { 0 },
            "numTotalPartitions": view.partitions,
            "monitoringCoveragePct": view.coverage_pct,
            "numMonitoredWindows": view.valid_windows,
            "monitoredWindows": {},
            "isPausedSampling": false,
            "reasonOfLatestPauseOrResume": "N/A",
        });
    }
    if wanted("executor") {
        answer["ExecutorState"] = executor_state(standin.execution().as_ref());
    }
    if wanted("analyzer") {
        let ready = standin.monitor_view().valid_windows > 0;
        let goals: Vec<&str> = if ready {
            standin
                .settings
                .goals
                .supported
                .iter()
                .map(|goal| simple_name(goal))
                .collect()
        } else {
            Vec::new()
        };
        answer["AnalyzerState"] = json!({"isProposalReady": ready, "readyGoals": goals});
    }
    if wanted("anomaly_detector") {
        answer["AnomalyDetectorState"] = json!({
            "selfHealingEnabled": [], "selfHealingDisabled": [],
            "recentGoalViolations": [], "recentBrokerFailures": [],
            "recentMetricAnomalies": [], "recentDiskFailures": [],
            "metrics": {}, "ongoingSelfHealingAnomaly": "None", "balancednessScore": 100.0,
        });
    }
    if !params.flag("json", false)? {
        // The health check asks without `json=true`: plain text, as Cruise Control answers.
        let text = answer
            .as_object()
            .map(|map| {
                map.iter()
                    .filter(|(key, _)| *key != "version")
                    .map(|(key, value)| format!("{key}: {value}\n"))
                    .collect::<String>()
            })
            .unwrap_or_default();
        return Ok((StatusCode::OK, text).into_response());
    }
    Ok(json_response(StatusCode::OK, &answer, None))
}

fn executor_state(execution: Option<&Execution>) -> Value {
    match execution {
        None => json!({"state": "NO_TASK_IN_PROGRESS"}),
        Some(execution) => json!({
            "state": "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS",
            "triggeredUserTaskId": execution.task_id,
            "triggeredSelfHealingTaskId": "",
            "triggeredTaskReason": execution.reason,
            "numTotalPartitionMovements": execution.total,
            "numFinishedPartitionMovements": execution.finished,
            "numInProgressPartitionMovements": execution.in_progress,
            "numPendingPartitionMovements": execution.total.saturating_sub(execution.finished + execution.in_progress),
            "numCancelledPartitionMovements": 0,
            "abortingPartitions": 0,
            "abortedPartitions": 0,
            "deadPartitions": 0,
            "finishedDataMovement": crate::render::megabytes(execution.finished_bytes),
            "totalDataToMove": crate::render::megabytes(execution.total_bytes),
            "maximumConcurrentPartitionMovementsPerBroker": 0,
            "stopRequested": execution.stop_requested,
        }),
    }
}

async fn load(standin: &StandIn) -> Result<Response, Failure> {
    let cluster = standin
        .describe()
        .await
        .map_err(kafka_failure("GET", "load"))?;
    let mut answer = render::load(&cluster, &standin.settings.capacities);
    answer["version"] = json!(VERSION);
    Ok(json_response(StatusCode::OK, &answer, None))
}

fn kafka_failure(
    method: &'static str,
    endpoint: &'static str,
) -> impl Fn(strimzi_operator_common::kafka::AdminError) -> Failure {
    move |error| {
        Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Error processing {method} request '/{endpoint}' due to: 'Kafka: {error}'."),
        )
    }
}

fn user_tasks(standin: &StandIn, params: &Params) -> Result<Response, Failure> {
    let ids: BTreeSet<String> = params.list("user_task_ids").into_iter().collect();
    let with_answers = params.flag("fetch_completed_task", false)?;
    let tasks: Vec<Value> = standin
        .tasks()
        .into_iter()
        .filter(|task| ids.is_empty() || ids.contains(&task.id))
        .map(|task| {
            let mut entry = json!({
                "UserTaskId": task.id,
                "RequestURL": task.request_url,
                "ClientIdentity": task.client,
                "StartMs": task.start_ms.to_string(),
                "Status": task.status.name(),
            });
            if with_answers {
                entry["originalResponse"] = match (&task.status, &task.answer) {
                    (TaskStatus::CompletedWithError, None) => json!("CompletedWithError"),
                    (_, Some((_, body))) => json!(body),
                    (_, None) => json!(""),
                };
            }
            entry
        })
        .collect();
    Ok(json_response(
        StatusCode::OK,
        &json!({"userTasks": tasks, "version": VERSION}),
        None,
    ))
}

fn stop(standin: &StandIn) -> Response {
    let message = if standin.request_stop() {
        "Proposal execution stopped."
    } else {
        "No ongoing proposal execution."
    };
    json_response(
        StatusCode::OK,
        &json!({"message": message, "version": VERSION}),
        None,
    )
}

/// A proposal request resolved against the configuration.
struct Resolved {
    request: model::Request,
    goals: Vec<String>,
    dry_run: bool,
    verbose: bool,
    options: ExecutionOptions,
}

fn resolve(
    standin: &StandIn,
    params: &Params,
    cluster: &model::Cluster,
) -> Result<Resolved, Failure> {
    let endpoint = params.endpoint;
    let configured = &standin.settings.goals;
    let asked = params.list("goals");
    let mut goals = Vec::new();
    let unknown: Vec<&String> = asked
        .iter()
        .filter(|goal| configured.resolve(goal).is_none())
        .collect();
    if !unknown.is_empty() {
        let names: Vec<&str> = unknown.iter().map(|goal| goal.as_str()).collect();
        return Err(Failure(
            StatusCode::BAD_REQUEST,
            format!(
                "Bad {} request '/{}' due to 'Unsupported goals [{}]; the supported goals (cruisecontrol.properties goals) are [{}]'.",
                endpoint.method(),
                endpoint.name(),
                names.join(", "),
                configured
                    .supported
                    .iter()
                    .map(|g| simple_name(g))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    for goal in &asked {
        if let Some(full) = configured.resolve(goal) {
            goals.push(full.to_owned());
        }
    }
    let skip_hard = params.flag("skip_hard_goal_check", false)?;
    if !asked.is_empty() && !skip_hard {
        let missing: Vec<&str> = configured
            .hard
            .iter()
            .filter(|hard| !goals.contains(hard))
            .map(|hard| simple_name(hard))
            .collect();
        if !missing.is_empty() {
            return Err(Failure(
                StatusCode::BAD_REQUEST,
                format!(
                    "Bad {} request '/{}' due to 'Missing hard goals [{}] in provided goal list [{}]. Add skip_hard_goal_check=true parameter to ignore this sanity check.'.",
                    endpoint.method(),
                    endpoint.name(),
                    missing.join(", "),
                    goals
                        .iter()
                        .map(|g| simple_name(g))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    if goals.is_empty() {
        goals = configured.default.clone();
    }
    if params.flag("rebalance_disk", false)? {
        return Err(Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "Error processing POST request '/{}' due to: 'rebalance_disk (intra-broker movements) is not implemented by the Cruise Control stand-in'.",
                endpoint.name()
            ),
        ));
    }
    let has = |names: &[&str]| goals.iter().any(|goal| names.contains(&simple_name(goal)));
    let excluded_topics = match params.get("excluded_topics").filter(|p| !p.is_empty()) {
        None => BTreeSet::new(),
        Some(pattern) => {
            let regex = fancy_regex::Regex::new(&format!("^(?:{pattern})$"))
                .map_err(|error| params.bad("excluded_topics", &error.to_string()))?;
            cluster
                .partitions
                .iter()
                .filter(|p| regex.is_match(&p.topic).unwrap_or(false))
                .map(|p| p.topic.clone())
                .collect()
        }
    };
    let scope = match endpoint {
        Endpoint::AddBroker | Endpoint::RemoveBroker => {
            let brokers = params.brokers("brokerid")?;
            if brokers.is_empty() {
                return Err(params.bad("brokerid", "missing"));
            }
            if endpoint == Endpoint::AddBroker {
                Scope::AddBrokers(brokers)
            } else {
                Scope::RemoveBrokers(brokers)
            }
        }
        Endpoint::TopicConfiguration => {
            let pattern = params
                .get("topic")
                .ok_or_else(|| params.bad("topic", "missing"))?;
            let regex = fancy_regex::Regex::new(&format!("^(?:{pattern})$"))
                .map_err(|error| params.bad("topic", &error.to_string()))?;
            let factor: usize = params
                .number("replication_factor")?
                .ok_or_else(|| params.bad("replication_factor", "missing"))?;
            if factor == 0 {
                return Err(params.bad("replication_factor", "must be positive"));
            }
            let topics = cluster
                .partitions
                .iter()
                .filter(|p| regex.is_match(&p.topic).unwrap_or(false))
                .map(|p| p.topic.clone())
                .collect();
            Scope::ReplicationFactor { topics, factor }
        }
        _ => Scope::Rebalance,
    };
    Ok(Resolved {
        request: model::Request {
            scope,
            excluded_topics,
            rack_aware: has(&[
                "RackAwareGoal",
                "RackAwareDistributionGoal",
                "KafkaAssignerEvenRackAwareGoal",
            ]),
            balance_replicas: has(&[
                "ReplicaDistributionGoal",
                "DiskUsageDistributionGoal",
                "NetworkInboundUsageDistributionGoal",
                "NetworkOutboundUsageDistributionGoal",
                "CpuUsageDistributionGoal",
                "TopicReplicaDistributionGoal",
                "KafkaAssignerDiskUsageDistributionGoal",
                "IntraBrokerDiskUsageDistributionGoal",
            ]),
            balance_leaders: has(&[
                "LeaderReplicaDistributionGoal",
                "LeaderBytesInDistributionGoal",
                "MinTopicLeadersPerBrokerGoal",
            ]),
        },
        goals,
        dry_run: endpoint == Endpoint::Proposals || params.flag("dryrun", true)?,
        verbose: params.flag("verbose", false)?,
        options: ExecutionOptions {
            movements_per_broker: params
                .number("concurrent_partition_movements_per_broker")?
                .filter(|limit: &usize| *limit > 0)
                .unwrap_or(standin.settings.movements_per_broker),
            throttle: params
                .number("replication_throttle")?
                .filter(|rate: &i64| *rate > 0),
        },
    })
}

async fn proposal(
    standin: &Arc<StandIn>,
    params: &Params,
    incoming: &Incoming,
) -> Result<Response, Failure> {
    let endpoint = params.endpoint;
    let method = if endpoint == Endpoint::Proposals {
        "GET"
    } else {
        "POST"
    };
    // The answer of an earlier request, asked again with its task's ID.
    if let Some(id) = &incoming.task {
        return match standin.task(id) {
            Some(UserTask {
                answer: Some((status, body)),
                ..
            }) => Ok(json_response(
                StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                &serde_json::from_str(&body).unwrap_or(Value::Null),
                Some(id),
            )),
            _ => Err(Failure(
                StatusCode::BAD_REQUEST,
                format!(
                    "Bad {method} request '/{}' due to 'User task {id} is not known (it expired, or the stand-in restarted)'.",
                    endpoint.name()
                ),
            )),
        };
    }
    if standin.active_tasks() >= standin.settings.max_active_tasks {
        return Err(Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "There are already {} active user tasks, which has reached the servlet capacity.",
                standin.active_tasks()
            ),
        ));
    }
    let view = standin.monitor_view();
    if view.valid_windows == 0 {
        return Err(Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "Error processing {method} request '/{}' due to: 'com.linkedin.kafka.cruisecontrol.exception.NotEnoughValidWindowsException: There are only 0 valid windows (the stand-in needs one whole metrics window of {} ms sampled)'.",
                endpoint.name(),
                standin.settings.windows.window.as_millis()
            ),
        ));
    }
    let cluster = standin
        .describe()
        .await
        .map_err(kafka_failure(method, endpoint.name()))?;
    let resolved = resolve(standin, params, &cluster)?;
    if let Some(broker) = cluster
        .brokers
        .keys()
        .find(|id| standin.settings.capacities.of(**id).is_none())
    {
        return Err(Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "Error processing {method} request '/{}' due to: 'capacity.json has no capacity for broker {broker} and no default (brokerId -1)'.",
                endpoint.name()
            ),
        ));
    }
    let proposal = model::propose(&cluster, &resolved.request).map_err(|error| {
        Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "Error processing {method} request '/{}' due to: 'com.linkedin.kafka.cruisecontrol.exception.OptimizationFailureException: {error}'.",
                endpoint.name()
            ),
        )
    })?;
    let answer = render::proposal(
        &cluster,
        &proposal,
        &standin.settings.capacities,
        &ProposalContext {
            goals: &resolved.goals,
            excluded_topics: &resolved.request.excluded_topics,
            windows: view.valid_windows,
            verbose: resolved.verbose,
        },
    );
    let id = new_task_id();
    let start_ms = now_ms();
    let body = answer.to_string();
    let executes = !resolved.dry_run && !proposal.movements.is_empty();
    if executes {
        let reason = format!(
            "{} (Client: {}, Date: {})",
            params
                .get("reason")
                .filter(|r| !r.is_empty())
                .unwrap_or("No reason provided"),
            incoming.client,
            jiff::Timestamp::from_millisecond(start_ms as i64)
                .map(|t| t.to_string())
                .unwrap_or_default()
        );
        let execution = Execution {
            task_id: id.clone(),
            reason,
            total: proposal.movements.len(),
            finished: 0,
            in_progress: 0,
            total_bytes: proposal.data_to_move(),
            finished_bytes: 0,
            stop_requested: false,
        };
        if !standin.begin_execution(execution) {
            return Err(Failure(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!(
                    "Error processing POST request '/{}' due to: 'java.lang.IllegalStateException: Cannot execute new proposals while there is an ongoing execution.'.",
                    endpoint.name()
                ),
            ));
        }
    }
    standin.put_task(UserTask {
        id: id.clone(),
        request_url: incoming.url.clone(),
        client: incoming.client.clone(),
        start_ms,
        status: if executes {
            TaskStatus::InExecution
        } else {
            TaskStatus::Completed
        },
        answer: Some((200, body)),
        finished_ms: (!executes).then_some(start_ms),
    });
    if executes {
        tracing::info!(
            task = id,
            movements = proposal.movements.len(),
            "executing proposal"
        );
        tokio::spawn(executor::execute(
            standin.clone(),
            id.clone(),
            proposal,
            resolved.options,
        ));
    }
    Ok(json_response(StatusCode::OK, &answer, Some(&id)))
}
