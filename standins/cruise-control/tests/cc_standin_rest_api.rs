//! The stand-in's REST API against our own operator's Cruise Control client
//! (`strimzi_operator_common::cruise_control`), over HTTPS with basic authentication as the
//! pod is configured, on an in-memory cluster (a fake admin client that applies
//! reassignments after watching them a few times): credentials and roles, metric windows,
//! proposals and their tasks, executions through the executor state, add/remove broker,
//! replication factors, goals, unknown endpoints and parameters, and the health check.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use strimzi_cruise_control_standin::model::{Broker, Cluster, Partition};
use strimzi_cruise_control_standin::service::{StandIn, now_ms};
use strimzi_operator_common::cruise_control::{
    Credentials, CruiseControlClient, CruiseControlError, ProposalAnswer, ProposalOptions,
    ProposalRequest, ProposalScope, TaskStatus,
};
use strimzi_operator_common::http_client::{self, Exchange, Method, Request, Server, ServerTls};
use strimzi_operator_common::kafka::{AlterConfigOp, HostResolution, TlsConfig};
use strimzi_tests::certs::TestCa;
use support::fake_admin::FakeAdmin;
use support::{HEALTHCHECK_PASSWORD, PASSWORD, Pod, SERVER_NAME, USER, eventually};

/// Our operator's credentials, for raw requests.
const OPERATOR: Option<(&str, &str)> = Some((USER, PASSWORD));

/// Brokers 0-3, racks r0/r1; topic `t` with 8 partitions on brokers 0 and 1 only.
fn skewed_cluster() -> Cluster {
    Cluster {
        brokers: (0..4)
            .map(|id| {
                (
                    id,
                    Broker {
                        rack: Some(format!("r{}", id % 2)),
                        host: format!("broker-{id}"),
                    },
                )
            })
            .collect(),
        partitions: (0..8)
            .map(|partition| Partition {
                topic: "t".into(),
                partition,
                replicas: if partition % 2 == 0 {
                    vec![0, 1]
                } else {
                    vec![1, 0]
                },
                leader: if partition % 2 == 0 { 0 } else { 1 },
                size_bytes: 3 << 20,
            })
            .collect(),
    }
}

struct Running {
    pod: Pod,
    standin: Arc<StandIn>,
    admin: Arc<FakeAdmin>,
    port: u16,
    server: tokio::task::JoinHandle<Result<(), String>>,
}

async fn start(extra: &[(&str, &str)]) -> Running {
    let pod = Pod::new(
        TestCa::new("cluster-ca").unwrap(),
        &[0, 1, 2, 3],
        extra,
        "my-cluster-kafka-bootstrap:9091",
    );
    let settings = pod.load().unwrap();
    let admin = Arc::new(FakeAdmin::new(skewed_cluster(), 2));
    let standin = StandIn::new(settings, admin.clone());
    let (port, server) = support::serve(standin.clone()).await;
    Running {
        pod,
        standin,
        admin,
        port,
        server,
    }
}

impl Running {
    fn server(&self) -> Server {
        Server {
            host: "127.0.0.1".into(),
            port: self.port,
            tls: Some(ServerTls {
                config: TlsConfig {
                    ca_pem: self.pod.ca.cert_pem(),
                    client_identity_pem: None,
                    verify_hostname: true,
                },
                server_name: SERVER_NAME.into(),
            }),
            host_resolution: HostResolution::System,
        }
    }

    fn client(&self, user: &str, password: &str) -> CruiseControlClient {
        CruiseControlClient::new(
            self.server(),
            Some(Credentials {
                user: user.into(),
                password: password.into(),
            }),
            Duration::from_secs(30),
        )
    }

    fn operator(&self) -> CruiseControlClient {
        self.client(USER, PASSWORD)
    }

    /// A window that ended with a sample in it.
    fn have_windows(&self) {
        let window = self.standin.settings.windows.window.as_millis() as u64;
        self.standin
            .record_sample(now_ms() - 2 * window + window / 2, 8);
        self.standin.record_sample(now_ms() - window, 8);
    }

    /// `GET <target>` (path and query) as `user` (none: no credentials): status and body.
    async fn get(&self, target: &str, user: Option<(&str, &str)>) -> (u16, String) {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let mut request = Request::new(Method::Get, path);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            request = request.param(name, value);
        }
        if let Some((name, password)) = user {
            use base64::Engine;
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{name}:{password}"));
            request = request.header("Authorization", format!("Basic {token}"));
        }
        let response = http_client::send(
            &self.server(),
            &request,
            Exchange {
                timeout: Duration::from_secs(30),
                max_bytes: 1 << 24,
            },
        )
        .await
        .unwrap();
        (response.status, response.text())
    }
}

fn rebalance(goals: &[&str]) -> ProposalRequest {
    ProposalRequest {
        scope: ProposalScope::Full {
            rebalance_disk: false,
            concurrent_intra_broker_partition_movements: None,
        },
        options: ProposalOptions {
            goals: goals.iter().map(|g| (*g).to_owned()).collect(),
            ..ProposalOptions::default()
        },
    }
}

fn ready(
    answer: ProposalAnswer,
) -> (
    String,
    strimzi_operator_common::cruise_control::OptimizationResult,
) {
    match answer {
        ProposalAnswer::Ready { task_id, result } => (task_id.unwrap(), *result),
        other => panic!("not ready: {other:?}"),
    }
}

/// The proposal our operator's client gets for `request` (a dry run or not), ready at once.
async fn propose(
    operator: &CruiseControlClient,
    request: &ProposalRequest,
    dryrun: bool,
) -> (
    String,
    strimzi_operator_common::cruise_control::OptimizationResult,
) {
    ready(operator.request_proposal(request, dryrun).await.unwrap())
}

/// Waits until the user task `task` is `Completed`.
async fn until_completed(operator: &CruiseControlClient, task: &str, what: &str) {
    eventually(what, 30, async || {
        let task = operator.user_task(task).await.unwrap().unwrap();
        (task.status == TaskStatus::Completed).then_some(())
    })
    .await;
}

#[tokio::test]
async fn credentials_and_roles_are_checked() {
    let cc = start(&[]).await;
    let (status, _) = cc.get("/kafkacruisecontrol/state?json=true", None).await;
    assert_eq!(status, 401);
    let wrong = cc.client(USER, "wrong").executor_state().await.unwrap_err();
    assert!(
        matches!(wrong, CruiseControlError::Unauthorized { status: 401, .. }),
        "{wrong}"
    );
    assert!(cc.operator().executor_state().await.is_ok());
    // A viewer may read the state but not rebalance.
    assert!(
        cc.client("viewer", "viewer-secret")
            .executor_state()
            .await
            .is_ok()
    );
    let refused = cc
        .client("viewer", "viewer-secret")
        .request_proposal(&rebalance(&[]), true)
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            CruiseControlError::Unauthorized { status: 403, .. }
        ),
        "{refused}"
    );
    // The health check: GET state without json=true, as the healthcheck user.
    let (status, body) = cc
        .get(
            "/kafkacruisecontrol/state",
            Some(("healthcheck", HEALTHCHECK_PASSWORD)),
        )
        .await;
    assert_eq!(status, 200);
    assert!(body.contains("ExecutorState"), "{body}");
    cc.server.abort();
}

#[tokio::test]
async fn unknown_endpoints_and_parameters_are_refused_naming_them() {
    let cc = start(&[]).await;
    let (status, body) = cc
        .get("/kafkacruisecontrol/no_such_thing?json=true", OPERATOR)
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = cc
        .get("/kafkacruisecontrol/rebalance?json=true", OPERATOR)
        .await;
    assert_eq!(status, 404, "POST only: {body}");
    let (status, body) = cc
        .get("/kafkacruisecontrol/state?json=true&frobnicate=1", OPERATOR)
        .await;
    assert_eq!(status, 400);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert!(
        error["errorMessage"]
            .as_str()
            .unwrap()
            .contains("frobnicate"),
        "{body}"
    );
    assert_eq!(error["version"], 1);
    cc.server.abort();
}

#[tokio::test]
async fn the_load_monitor_reports_windows_and_proposals_wait_for_them() {
    let cc = start(&[
        ("partition.metrics.window.ms", "1000"),
        ("metric.sampling.interval.ms", "200"),
    ])
    .await;
    let (_, body) = cc
        .get("/kafkacruisecontrol/state?json=true", OPERATOR)
        .await;
    let state: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(state["ExecutorState"]["state"], "NO_TASK_IN_PROGRESS");
    for key in ["MonitorState", "AnalyzerState", "AnomalyDetectorState"] {
        assert!(state.get(key).is_some(), "{key}: {body}");
    }
    // Right after start there is no whole window yet (unless start fell at its very end).
    if state["MonitorState"]["numMonitoredWindows"] == 0 {
        let early = cc.operator().request_proposal(&rebalance(&[]), true).await;
        if let Err(error) = &early {
            assert!(
                matches!(error, CruiseControlError::NotEnoughData { .. }),
                "{error}"
            );
        }
    }
    // The sampler fills windows by itself.
    eventually("a valid window", 30, async || {
        let (_, body) = cc
            .get(
                "/kafkacruisecontrol/state?json=true&substates=monitor",
                OPERATOR,
            )
            .await;
        let state: Value = serde_json::from_str(&body).unwrap();
        (state["MonitorState"]["numMonitoredWindows"].as_i64() > Some(0)
            && state["MonitorState"]["monitoringCoveragePct"].as_f64() > Some(0.0))
        .then_some(())
    })
    .await;
    assert!(
        cc.operator()
            .request_proposal(&rebalance(&[]), true)
            .await
            .is_ok()
    );
    // The sample store topics were created.
    let created = cc.admin.created_topics.lock().unwrap().clone();
    assert!(
        created.contains(&"strimzi.cruisecontrol.partitionmetricsamples".to_owned()),
        "{created:?}"
    );
    cc.server.abort();
}

#[tokio::test]
async fn a_dry_run_proposal_is_a_task_with_its_answer() {
    let cc = start(&[]).await;
    cc.have_windows();
    let operator = cc.operator();
    let (task, result) = propose(&operator, &rebalance(&[]), true).await;
    let summary = &result.summary;
    assert_eq!(
        summary.num_replica_movements,
        Some(8),
        "{:?}",
        result.summary_json
    );
    assert_eq!(summary.data_to_move_mb, Some(24), "8 replicas of 3 MiB");
    assert!(summary.num_leader_movements.is_some());
    assert!(
        result
            .summary_json
            .contains_key("onDemandBalancednessScoreAfter")
    );
    let before = result.load_before.as_ref().unwrap();
    let after = result.load_after.as_ref().unwrap();
    assert_eq!(
        before
            .iter()
            .map(|b| b.replicas.unwrap())
            .collect::<Vec<_>>(),
        [8, 8, 0, 0]
    );
    assert_eq!(before[0].disk_used_mb, Some(24.0), "8 replicas of 3 MiB");
    assert_eq!(
        after
            .iter()
            .map(|b| b.replicas.unwrap())
            .collect::<Vec<_>>(),
        [4, 4, 4, 4]
    );
    // Nothing moved: a dry run.
    assert_eq!(cc.admin.snapshot(), skewed_cluster());
    let user_task = operator.user_task(&task).await.unwrap().unwrap();
    assert_eq!(user_task.status, TaskStatus::Completed);
    assert_eq!(user_task.result.unwrap().summary, result.summary);
    assert!(
        user_task
            .request_url
            .unwrap()
            .starts_with("POST /kafkacruisecontrol/rebalance?")
    );
    let again = ready(
        operator
            .proposal_of_task(&rebalance(&[]), true, &task)
            .await
            .unwrap(),
    );
    assert_eq!(again.0, task);
    assert_eq!(again.1.summary, result.summary);
    assert_eq!(operator.user_task("no-such-task").await.unwrap(), None);
    cc.server.abort();
}

#[tokio::test]
async fn goals_are_checked_as_cruise_control_checks_them() {
    let cc = start(&[]).await;
    cc.have_windows();
    let operator = cc.operator();
    let unknown = operator
        .request_proposal(&rebalance(&["com.example.NoSuchGoal"]), true)
        .await
        .unwrap_err();
    match &unknown {
        CruiseControlError::Rejected {
            status: 400,
            message,
            ..
        } => {
            assert!(message.contains("com.example.NoSuchGoal"), "{message}")
        }
        other => panic!("{other}"),
    }
    let missing_hard = operator
        .request_proposal(&rebalance(&["ReplicaDistributionGoal"]), true)
        .await
        .unwrap_err();
    assert!(
        missing_hard.to_string().contains("Missing hard goals"),
        "{missing_hard}"
    );
    let mut skipping = rebalance(&["ReplicaDistributionGoal"]);
    skipping.options.skip_hard_goal_check = true;
    let (_, result) = propose(&operator, &skipping, true).await;
    assert_eq!(result.summary.num_replica_movements, Some(8));
    // Leader balancing only: no replica moves.
    let mut leaders = rebalance(&["LeaderReplicaDistributionGoal"]);
    leaders.options.skip_hard_goal_check = true;
    let (_, result) = propose(&operator, &leaders, true).await;
    assert_eq!(result.summary.num_replica_movements, Some(0));
    cc.server.abort();
}

#[tokio::test]
async fn an_approved_rebalance_is_executed_and_reported_through_state_and_tasks() {
    let cc = start(&[("execution.progress.check.interval.ms", "100")]).await;
    cc.have_windows();
    let operator = cc.operator();
    let mut request = rebalance(&[]);
    request.options.replication_throttle = Some(1_000_000);
    request.options.concurrent_partition_movements_per_broker = Some(2);
    let (task, _) = propose(&operator, &request, false).await;
    let state = operator.executor_state().await.unwrap();
    assert_eq!(
        state.state,
        "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS"
    );
    assert_eq!(state.triggered_user_task_id.as_deref(), Some(task.as_str()));
    assert_eq!(state.total_data_to_move_mb, Some(24));
    assert!(
        state.task_started().is_some(),
        "{:?}",
        state.triggered_task_reason
    );
    assert_eq!(
        operator.user_task(&task).await.unwrap().unwrap().status,
        TaskStatus::InExecution
    );
    // Another execution is refused while this one runs.
    let busy = operator.request_proposal(&rebalance(&[]), false).await;
    assert!(busy.is_err() || cc.standin.execution().is_none());
    until_completed(&operator, &task, "the execution to finish").await;
    assert_eq!(
        operator.executor_state().await.unwrap().state,
        "NO_TASK_IN_PROGRESS"
    );
    let counts = cc.admin.snapshot().counts();
    assert_eq!(
        counts.replicas.values().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from([4])
    );
    // The throttle was set and removed again.
    let configs = cc.admin.configs.lock().unwrap().clone();
    assert!(configs.iter().any(|(_, op)| matches!(op, AlterConfigOp::Set { name, value } if name == "leader.replication.throttled.rate" && value == "1000000")));
    assert!(configs.iter().any(|(_, op)| matches!(op, AlterConfigOp::Delete { name } if name == "follower.replication.throttled.replicas")));
    // Balanced now: a new proposal moves nothing.
    let (_, result) = propose(&operator, &rebalance(&[]), true).await;
    assert_eq!(result.summary.num_replica_movements, Some(0));
    cc.server.abort();
}

#[tokio::test]
async fn brokers_are_filled_and_drained_and_replication_factors_change() {
    let cc = start(&[("execution.progress.check.interval.ms", "50")]).await;
    cc.have_windows();
    let operator = cc.operator();
    let add = ProposalRequest {
        scope: ProposalScope::AddBrokers(vec![2, 3]),
        options: ProposalOptions::default(),
    };
    let (task, result) = propose(&operator, &add, false).await;
    assert_eq!(result.summary.num_replica_movements, Some(8));
    until_completed(&operator, &task, "add_broker done").await;
    let counts = cc.admin.snapshot().counts();
    assert_eq!(counts.replicas[&2] + counts.replicas[&3], 8, "{counts:?}");

    let remove = ProposalRequest {
        scope: ProposalScope::RemoveBrokers(vec![3]),
        options: ProposalOptions::default(),
    };
    let (task, _) = propose(&operator, &remove, false).await;
    until_completed(&operator, &task, "remove_broker done").await;
    assert_eq!(cc.admin.snapshot().counts().replicas[&3], 0);

    let unknown = ProposalRequest {
        scope: ProposalScope::RemoveBrokers(vec![42]),
        options: ProposalOptions::default(),
    };
    let error = operator.request_proposal(&unknown, true).await.unwrap_err();
    assert!(error.to_string().contains("broker 42"), "{error}");

    let answer = operator.change_replication_factor("^t$", 3).await.unwrap();
    let (task, result) = ready(answer);
    assert_eq!(result.summary.num_replica_movements, Some(8));
    until_completed(&operator, &task, "replication factor 3").await;
    for partition in cc.admin.snapshot().partitions {
        let distinct: BTreeSet<i32> = partition.replicas.iter().copied().collect();
        assert_eq!(distinct.len(), 3, "{partition:?}");
    }
    operator.stop_execution().await.unwrap();
    cc.server.abort();
}

/// Runs the health check script against the stand-in with the pod's environment and files.
fn health_check(cc: &Running, password: &str) -> std::process::Output {
    let auth = cc.pod.root().join("api-auth-config");
    std::fs::write(auth.join("healthcheck.password"), password).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/cruise_control_healthcheck.sh");
    std::process::Command::new("bash")
        .arg(script)
        .envs(&cc.pod.env)
        .env("API_PORT", cc.port.to_string())
        .env("CRUISE_CONTROL_CC_CERTS_DIR", &cc.pod.paths.cc_certs_dir)
        .env("CRUISE_CONTROL_API_AUTH_DIR", &auth)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_check_script_passes_with_the_mounted_password_only() {
    let cc = start(&[]).await;
    let passed = tokio::task::block_in_place(|| health_check(&cc, HEALTHCHECK_PASSWORD));
    assert!(
        passed.status.success(),
        "{}",
        String::from_utf8_lossy(&passed.stderr)
    );
    let refused = tokio::task::block_in_place(|| health_check(&cc, "wrong"));
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("401"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    cc.server.abort();
}

#[tokio::test]
async fn stopping_an_execution_ends_it_after_the_batch_under_way() {
    let cc = start(&[
        ("execution.progress.check.interval.ms", "100"),
        ("num.concurrent.partition.movements.per.broker", "1"),
    ])
    .await;
    cc.have_windows();
    let operator = cc.operator();
    let (task, result) = propose(&operator, &rebalance(&[]), false).await;
    assert_eq!(result.summary.num_replica_movements, Some(8));
    operator.stop_execution().await.unwrap();
    let state = operator.executor_state().await.unwrap();
    assert_eq!(state.json["stopRequested"], true, "{:?}", state.json);
    until_completed(&operator, &task, "the stopped execution to end").await;
    assert_eq!(
        operator.executor_state().await.unwrap().state,
        "NO_TASK_IN_PROGRESS"
    );
    // One batch of at most one movement per broker was carried out, not the whole proposal.
    let moved = cc
        .admin
        .snapshot()
        .partitions
        .iter()
        .zip(skewed_cluster().partitions)
        .filter(|(now, before)| now.replicas != before.replicas)
        .count();
    assert!(moved < 8, "{moved} partitions moved");
    cc.server.abort();
}
