//! Every transition of the state machine, driven with the answers Cruise Control would give.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, json};
use strimzi_api::common::Condition;
use strimzi_api::schema::FreeFormMap;
use strimzi_operator_common::cruise_control::{ProposalOptions, ProposalScope, ProposalSummary};
use strimzi_operator_common::http_client::HttpError;

use super::*;

fn condition(state: State, reason: Option<&str>) -> Condition {
    Condition {
        r#type: Some(state.as_str().to_owned()),
        status: Some("True".to_owned()),
        last_transition_time: Some("then".to_owned()),
        reason: reason.map(str::to_owned),
        message: reason.map(|_| "what happened".to_owned()),
    }
}

fn status(state: State, session: Option<&str>) -> KafkaRebalanceStatus {
    KafkaRebalanceStatus {
        conditions: (state != State::New).then(|| vec![condition(state, None)]),
        session_id: session.map(str::to_owned),
        observed_generation: Some(1),
        optimization_result: matches!(state, State::ProposalReady | State::Rebalancing)
            .then(|| FreeFormMap::from_iter([("numReplicaMovements".to_owned(), json!(3))])),
        ..KafkaRebalanceStatus::default()
    }
}

fn input(state: State, session: Option<&str>, request: Request) -> Input {
    Input {
        status: status(state, session),
        request,
        spec_changed: false,
        auto_approval: false,
        cluster: Ok(Cluster { kafka_ready: true }),
        proposal: Ok(ProposalRequest {
            scope: ProposalScope::Full {
                rebalance_disk: false,
                concurrent_intra_broker_partition_movements: None,
            },
            options: ProposalOptions::default(),
        }),
    }
}

fn result(moves: i64) -> OptimizationResult {
    let mut summary_json = Map::new();
    summary_json.insert("numReplicaMovements".to_owned(), json!(moves));
    OptimizationResult {
        summary_json,
        summary: ProposalSummary {
            num_replica_movements: Some(moves),
            ..ProposalSummary::default()
        },
        load_before: None,
        load_after: Some(Vec::new()),
    }
}

fn ready(task: &str) -> Answer {
    Answer::Proposal(ProposalAnswer::Ready {
        task_id: Some(task.to_owned()),
        result: Box::new(result(12)),
    })
}

fn in_progress(task: &str) -> Answer {
    Answer::Proposal(ProposalAnswer::InProgress {
        task_id: task.to_owned(),
    })
}

fn task(status: TaskStatus, result: Option<OptimizationResult>) -> Answer {
    Answer::UserTask(Some(UserTask {
        id: "t-1".to_owned(),
        status,
        request_url: None,
        result,
    }))
}

fn unreachable_cc() -> Answer {
    Answer::Failed(RebalanceError::CruiseControl(CruiseControlError::Http(
        HttpError::Connection {
            address: "10.0.0.9:9090".to_owned(),
            message: "connection refused".to_owned(),
        },
    )))
}

fn refused() -> Answer {
    Answer::Failed(RebalanceError::CruiseControl(
        CruiseControlError::Rejected {
            endpoint: "rebalance",
            status: 400,
            message: "Goal NoSuchGoal is not supported.".to_owned(),
        },
    ))
}

fn not_enough_data() -> Answer {
    Answer::Failed(RebalanceError::CruiseControl(
        CruiseControlError::NotEnoughData {
            message: "NotEnoughValidWindowsException: There are only 0 valid windows".to_owned(),
        },
    ))
}

fn executor() -> ExecutorState {
    ExecutorState {
        state: "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS".to_owned(),
        triggered_user_task_id: Some("t-1".to_owned()),
        triggered_task_reason: None,
        finished_data_movement_mb: Some(10),
        total_data_to_move_mb: Some(40),
        json: json!({}),
    }
}

/// Runs the machine on `input`, answering its calls with `replies` in order; the calls it
/// made and its decision. Fails if it asks more or fewer calls than there are replies.
fn drive(input: &Input, replies: &[Answer]) -> (Vec<Call>, Decision) {
    let mut calls = Vec::new();
    let mut answers = Vec::new();
    loop {
        match next(input, &answers) {
            Step::Done(decision) => {
                assert_eq!(answers.len(), replies.len(), "calls made: {calls:?}");
                return (calls, *decision);
            }
            Step::Call(call) => {
                let reply = replies
                    .get(answers.len())
                    .unwrap_or_else(|| panic!("unexpected call {call:?} after {calls:?}"));
                calls.push(call);
                answers.push(reply.clone());
            }
        }
    }
}

const DRY_RUN: Call = Call::Proposal { dry_run: true };
const EXECUTE: Call = Call::Proposal { dry_run: false };

fn why(decision: &Decision) -> (&str, &str) {
    let (reason, message) = decision.why.as_ref().expect("a reason");
    (reason, message)
}

// New

#[test]
fn a_new_rebalance_asks_for_a_dry_run_and_gets_its_proposal_at_once() {
    let (calls, decision) = drive(&input(State::New, None, Request::None), &[ready("t-1")]);
    assert_eq!(calls, [DRY_RUN]);
    assert_eq!(decision.state, State::ProposalReady);
    assert_eq!(decision.session_id.as_deref(), Some("t-1"));
    assert_eq!(
        decision.optimization,
        Optimization::New(Box::new(result(12)))
    );
    assert_eq!(decision.notice, Some(Notice::ProposalRequested));
    assert_eq!(decision.recheck_after, None);
    assert!(!decision.waiting && decision.warnings.is_empty());
}

#[test]
fn a_proposal_still_computing_is_pending_with_its_session() {
    let (_, decision) = drive(
        &input(State::New, None, Request::None),
        &[in_progress("t-2")],
    );
    assert_eq!(decision.state, State::PendingProposal);
    assert_eq!(decision.session_id.as_deref(), Some("t-2"));
    assert_eq!(decision.optimization, Optimization::Clear);
    assert_eq!(decision.recheck_after, Some(POLL_INTERVAL));
    assert_eq!(decision.notice, Some(Notice::ProposalRequested));
}

#[test]
fn without_enough_metrics_the_proposal_is_pending_without_a_session() {
    let (_, decision) = drive(
        &input(State::New, None, Request::None),
        &[not_enough_data()],
    );
    assert_eq!(decision.state, State::PendingProposal);
    assert_eq!(decision.session_id, None);
    assert_eq!(why(&decision).0, NOT_ENOUGH_DATA_REASON);
    assert_eq!(decision.recheck_after, Some(NOT_ENOUGH_DATA_RETRY));
    assert_eq!(decision.notice, None, "Cruise Control took no request");
    // The next look asks again, having no session to follow.
    let (calls, _) = drive(
        &input(State::PendingProposal, None, Request::None),
        &[in_progress("t-3")],
    );
    assert_eq!(calls, [DRY_RUN]);
}

#[test]
fn a_refused_proposal_is_not_ready_with_cruise_controls_message() {
    let (_, decision) = drive(&input(State::New, None, Request::None), &[refused()]);
    assert_eq!(decision.state, State::NotReady);
    let (reason, message) = why(&decision);
    assert_eq!(reason, "CruiseControlRestException");
    assert!(message.contains("NoSuchGoal"), "{message}");
    assert!(matches!(decision.notice, Some(Notice::Failed(_))));
    assert_eq!(decision.session_id, None);
}

#[test]
fn an_unreachable_cruise_control_keeps_the_state_and_looks_again_soon() {
    let (_, decision) = drive(&input(State::New, None, Request::None), &[unreachable_cc()]);
    assert_eq!(decision.state, State::New);
    assert!(decision.waiting);
    let (reason, message) = why(&decision);
    assert_eq!(reason, "CruiseControlRetriableConnectionException");
    assert!(message.contains("connection refused"), "{message}");
    assert_eq!(decision.recheck_after, Some(RETRY_INTERVAL));
    assert_eq!(decision.notice, None);
}

#[test]
fn a_proposal_waits_for_the_kafka_to_be_ready() {
    let mut not_ready = input(State::New, None, Request::None);
    not_ready.cluster = Ok(Cluster { kafka_ready: false });
    let (calls, decision) = drive(&not_ready, &[]);
    assert!(calls.is_empty());
    assert_eq!(decision.state, State::New);
    assert_eq!(why(&decision).0, "KafkaNotReady");
    assert!(decision.waiting);
}

#[test]
fn an_invalid_spec_is_not_ready_without_asking_cruise_control() {
    let mut invalid = input(State::New, None, Request::None);
    invalid.proposal = Err(RebalanceError::InvalidSpec(
        "spec.brokers must list the brokers in mode add-brokers".to_owned(),
    ));
    let (calls, decision) = drive(&invalid, &[]);
    assert!(calls.is_empty());
    assert_eq!(decision.state, State::NotReady);
    assert_eq!(
        why(&decision),
        (
            "InvalidResourceException",
            "spec.brokers must list the brokers in mode add-brokers"
        )
    );
}

#[test]
fn a_missing_kafka_or_cruise_control_is_not_ready_in_any_state() {
    for (error, reason) in [
        (
            RebalanceError::ClusterLabelMissing,
            "InvalidResourceException",
        ),
        (
            RebalanceError::KafkaNotFound {
                cluster: "c".to_owned(),
                namespace: "ns".to_owned(),
            },
            "NoSuchResourceException",
        ),
        (
            RebalanceError::CruiseControlNotDeclared {
                cluster: "c".to_owned(),
            },
            "InvalidResourceException",
        ),
    ] {
        for state in [State::New, State::Rebalancing, State::Ready] {
            let mut missing = input(state, Some("t-1"), Request::None);
            missing.cluster = Err(error.clone());
            let (calls, decision) = drive(&missing, &[]);
            assert!(calls.is_empty());
            assert_eq!(decision.state, State::NotReady, "{state:?}");
            assert_eq!(why(&decision).0, reason);
            assert_eq!(decision.session_id, None);
            assert!(!decision.waiting);
        }
    }
}

#[test]
fn a_kafka_that_cannot_be_read_now_blocks_calls_only() {
    let timed_out = kube::core::Status::failure("timed out", "Timeout")
        .with_code(504)
        .boxed();
    let api = RebalanceError::from(strimzi_operator_common::api_error::ApiCallError::new(
        "get",
        "Kafka ns/c",
        kube::Error::Api(timed_out),
    ));
    let mut steady = input(State::ProposalReady, Some("t-1"), Request::None);
    steady.cluster = Err(api.clone());
    let (_, decision) = drive(&steady, &[]);
    assert_eq!(decision.state, State::ProposalReady);
    assert!(!decision.waiting, "nothing was to be done");
    let mut polling = input(State::Rebalancing, Some("t-1"), Request::None);
    polling.cluster = Err(api);
    let (calls, decision) = drive(&polling, &[]);
    assert!(calls.is_empty());
    assert_eq!(decision.state, State::Rebalancing);
    assert_eq!(why(&decision).0, "KubernetesApiError");
    assert!(decision.waiting);
    assert_eq!(decision.session_id.as_deref(), Some("t-1"));
}

// PendingProposal

#[test]
fn a_pending_proposal_is_polled_through_its_task() {
    let pending = input(State::PendingProposal, Some("t-1"), Request::None);
    let (calls, decision) = drive(&pending, &[task(TaskStatus::Active, None)]);
    assert_eq!(calls, [Call::UserTask("t-1".to_owned())]);
    assert_eq!(decision.state, State::PendingProposal);
    assert_eq!(decision.session_id.as_deref(), Some("t-1"));
    assert_eq!(decision.optimization, Optimization::Keep);
    assert_eq!(decision.recheck_after, Some(POLL_INTERVAL));
    let (_, decision) = drive(&pending, &[task(TaskStatus::Completed, Some(result(7)))]);
    assert_eq!(decision.state, State::ProposalReady);
    assert_eq!(decision.session_id.as_deref(), Some("t-1"));
    assert_eq!(
        decision.optimization,
        Optimization::New(Box::new(result(7)))
    );
    let (_, decision) = drive(&pending, &[task(TaskStatus::CompletedWithError, None)]);
    assert_eq!(decision.state, State::NotReady);
    assert_eq!(why(&decision).0, "CruiseControlRestException");
    assert_eq!(decision.session_id.as_deref(), Some("t-1"));
}

#[test]
fn a_proposal_cruise_control_forgot_is_asked_for_again() {
    let pending = input(State::PendingProposal, Some("t-1"), Request::None);
    let (calls, decision) = drive(&pending, &[Answer::UserTask(None), in_progress("t-5")]);
    assert_eq!(calls, [Call::UserTask("t-1".to_owned()), DRY_RUN]);
    assert_eq!(decision.state, State::PendingProposal);
    assert_eq!(decision.session_id.as_deref(), Some("t-5"));
}

#[test]
fn stopping_a_pending_proposal_stops_waiting() {
    let (calls, decision) = drive(
        &input(State::PendingProposal, Some("t-1"), Request::Stop),
        &[],
    );
    assert!(calls.is_empty());
    assert_eq!(decision.state, State::Stopped);
    assert_eq!(decision.session_id, None);
    assert!(decision.consume_request);
    assert_eq!(decision.notice, Some(Notice::RebalanceStopped));
}

#[test]
fn refreshing_a_pending_proposal_asks_anew() {
    let (calls, decision) = drive(
        &input(State::PendingProposal, Some("t-1"), Request::Refresh),
        &[ready("t-6")],
    );
    assert_eq!(calls, [DRY_RUN]);
    assert_eq!(decision.state, State::ProposalReady);
    assert!(decision.consume_request);
}

#[test]
fn polling_an_unreachable_cruise_control_keeps_the_session() {
    let (_, decision) = drive(
        &input(State::PendingProposal, Some("t-1"), Request::None),
        &[unreachable_cc()],
    );
    assert_eq!(decision.state, State::PendingProposal);
    assert_eq!(decision.session_id.as_deref(), Some("t-1"));
    assert!(decision.waiting);
}

// ProposalReady

#[test]
fn a_ready_proposal_waits_for_approval() {
    let (calls, decision) = drive(
        &input(State::ProposalReady, Some("t-1"), Request::None),
        &[],
    );
    assert!(calls.is_empty());
    assert_eq!(decision.state, State::ProposalReady);
    assert_eq!(decision.optimization, Optimization::Keep);
    assert_eq!(decision.session_id.as_deref(), Some("t-1"));
    assert_eq!(decision.recheck_after, None);
    assert_eq!(decision.notice, None);
}

#[test]
fn an_approved_proposal_is_carried_out() {
    let approved = input(State::ProposalReady, Some("t-1"), Request::Approve);
    let (calls, decision) = drive(&approved, &[in_progress("t-8")]);
    assert_eq!(calls, [EXECUTE]);
    assert_eq!(decision.state, State::Rebalancing);
    assert_eq!(decision.session_id.as_deref(), Some("t-8"));
    assert_eq!(decision.optimization, Optimization::Clear);
    assert!(decision.consume_request);
    assert_eq!(decision.recheck_after, Some(POLL_INTERVAL));
    assert_eq!(
        decision.notice,
        Some(Notice::RebalanceStarted(Some("t-8".to_owned())))
    );
    let (_, decision) = drive(&approved, &[ready("t-8")]);
    assert_eq!(decision.state, State::Rebalancing);
    assert_eq!(
        decision.optimization,
        Optimization::New(Box::new(result(12)))
    );
    // Auto-approval needs no annotation.
    let mut auto = input(State::ProposalReady, Some("t-1"), Request::None);
    auto.auto_approval = true;
    let (calls, decision) = drive(&auto, &[in_progress("t-9")]);
    assert_eq!(calls, [EXECUTE]);
    assert_eq!(decision.state, State::Rebalancing);
    assert!(!decision.consume_request, "no annotation to remove");
}

#[test]
fn an_approval_that_cannot_be_sent_stays_for_later() {
    let (_, decision) = drive(
        &input(State::ProposalReady, Some("t-1"), Request::Approve),
        &[unreachable_cc()],
    );
    assert_eq!(decision.state, State::ProposalReady);
    assert!(decision.waiting);
    assert!(!decision.consume_request);
    let mut kafka_not_ready = input(State::ProposalReady, Some("t-1"), Request::Approve);
    kafka_not_ready.cluster = Ok(Cluster { kafka_ready: false });
    let (calls, decision) = drive(&kafka_not_ready, &[]);
    assert!(calls.is_empty());
    assert!(decision.waiting && !decision.consume_request);
    // Refused: NotReady, and the annotation stays, as Strimzi leaves it after a failure.
    let (_, decision) = drive(
        &input(State::ProposalReady, Some("t-1"), Request::Approve),
        &[refused()],
    );
    assert_eq!(decision.state, State::NotReady);
    assert!(!decision.consume_request);
}

#[test]
fn a_refresh_or_a_spec_change_asks_for_a_new_proposal() {
    let (calls, decision) = drive(
        &input(State::ProposalReady, Some("t-1"), Request::Refresh),
        &[in_progress("t-2")],
    );
    assert_eq!(calls, [DRY_RUN]);
    assert_eq!(decision.state, State::PendingProposal);
    assert!(decision.consume_request);
    let mut changed = input(State::ProposalReady, Some("t-1"), Request::None);
    changed.spec_changed = true;
    let (calls, decision) = drive(&changed, &[ready("t-3")]);
    assert_eq!(calls, [DRY_RUN]);
    assert_eq!(decision.state, State::ProposalReady);
    assert_eq!(decision.session_id.as_deref(), Some("t-3"));
    // A spec change that cannot be acted on now is kept for the next look.
    let (_, decision) = drive(&changed, &[unreachable_cc()]);
    assert!(decision.waiting);
}

#[test]
fn a_request_the_state_does_not_take_is_a_warning_and_stays() {
    let (calls, decision) = drive(
        &input(State::ProposalReady, Some("t-1"), Request::Stop),
        &[],
    );
    assert!(calls.is_empty());
    assert_eq!(decision.state, State::ProposalReady);
    assert!(!decision.consume_request);
    assert_eq!(decision.warnings.len(), 1);
    let (reason, message) = &decision.warnings[0];
    assert_eq!(reason, INVALID_ANNOTATION);
    assert!(message.contains("strimzi.io/rebalance=stop"), "{message}");
    assert!(message.contains("approve, refresh"), "{message}");
    let (_, decision) = drive(
        &input(State::New, None, Request::Other("go".to_owned())),
        &[in_progress("t-1")],
    );
    assert_eq!(decision.state, State::PendingProposal);
    assert!(decision.warnings[0].1.contains("takes: none"));
    assert!(!decision.consume_request);
}

// Rebalancing

#[test]
fn a_running_rebalance_reports_its_progress() {
    let running = input(State::Rebalancing, Some("t-1"), Request::None);
    let (calls, decision) = drive(
        &running,
        &[
            task(TaskStatus::InExecution, Some(result(12))),
            Answer::ExecutorState(executor()),
        ],
    );
    assert_eq!(
        calls,
        [Call::UserTask("t-1".to_owned()), Call::ExecutorState]
    );
    assert_eq!(decision.state, State::Rebalancing);
    assert_eq!(decision.session_id.as_deref(), Some("t-1"));
    assert_eq!(decision.executor, Some(executor()));
    assert_eq!(decision.optimization, Optimization::Keep, "already known");
    assert_eq!(decision.recheck_after, Some(POLL_INTERVAL));
    // Started from a proposal still being computed: its result is added once known.
    let mut started_early = running.clone();
    started_early.status.optimization_result = None;
    let (_, decision) = drive(
        &started_early,
        &[
            task(TaskStatus::InExecution, Some(result(5))),
            Answer::ExecutorState(executor()),
        ],
    );
    assert_eq!(
        decision.optimization,
        Optimization::New(Box::new(result(5)))
    );
    // The progress cannot be read: a warning, the state stays.
    let (_, decision) = drive(
        &running,
        &[task(TaskStatus::InExecution, None), unreachable_cc()],
    );
    assert_eq!(decision.state, State::Rebalancing);
    assert_eq!(decision.warnings[0].0, EXECUTOR_STATE_WARNING);
    assert_eq!(decision.executor, None);
    // Still computing the proposal it is to carry out.
    let (calls, decision) = drive(&running, &[task(TaskStatus::Active, None)]);
    assert_eq!(calls.len(), 1);
    assert_eq!(decision.state, State::Rebalancing);
}

#[test]
fn a_finished_rebalance_is_ready_and_a_failed_one_not_ready() {
    let running = input(State::Rebalancing, Some("t-1"), Request::None);
    let (_, decision) = drive(&running, &[task(TaskStatus::Completed, Some(result(12)))]);
    assert_eq!(decision.state, State::Ready);
    assert_eq!(decision.session_id, None);
    assert_eq!(
        decision.optimization,
        Optimization::New(Box::new(result(12)))
    );
    assert_eq!(decision.recheck_after, None);
    let (_, decision) = drive(&running, &[task(TaskStatus::Completed, None)]);
    assert_eq!(decision.optimization, Optimization::Keep);
    let (_, decision) = drive(&running, &[task(TaskStatus::CompletedWithError, None)]);
    assert_eq!(decision.state, State::NotReady);
    assert_eq!(decision.session_id.as_deref(), Some("t-1"));
    assert!(why(&decision).1.contains("t-1"));
}

#[test]
fn stopping_a_rebalance_stops_the_execution() {
    let stopping = input(State::Rebalancing, Some("t-1"), Request::Stop);
    let (calls, decision) = drive(&stopping, &[Answer::Stopped]);
    assert_eq!(calls, [Call::StopExecution]);
    assert_eq!(decision.state, State::Stopped);
    assert_eq!(decision.session_id, None);
    assert!(decision.consume_request);
    assert_eq!(decision.notice, Some(Notice::RebalanceStopped));
    let (_, decision) = drive(&stopping, &[unreachable_cc()]);
    assert_eq!(decision.state, State::Rebalancing);
    assert!(decision.waiting && !decision.consume_request);
}

#[test]
fn refreshing_a_rebalance_stops_it_and_asks_for_a_new_proposal() {
    let refreshing = input(State::Rebalancing, Some("t-1"), Request::Refresh);
    let (calls, decision) = drive(&refreshing, &[Answer::Stopped, in_progress("t-2")]);
    assert_eq!(calls, [Call::StopExecution, DRY_RUN]);
    assert_eq!(decision.state, State::PendingProposal);
    assert_eq!(decision.session_id.as_deref(), Some("t-2"));
    assert!(decision.consume_request);
    // Not stopped while a new proposal could not follow.
    let mut kafka_not_ready = refreshing.clone();
    kafka_not_ready.cluster = Ok(Cluster { kafka_ready: false });
    let (calls, decision) = drive(&kafka_not_ready, &[]);
    assert!(calls.is_empty());
    assert_eq!(decision.state, State::Rebalancing);
}

#[test]
fn a_rebalance_cruise_control_forgot_asks_for_a_new_proposal() {
    let (calls, decision) = drive(
        &input(State::Rebalancing, Some("t-1"), Request::None),
        &[Answer::UserTask(None), ready("t-4")],
    );
    assert_eq!(calls, [Call::UserTask("t-1".to_owned()), DRY_RUN]);
    assert_eq!(decision.state, State::ProposalReady);
}

// Stopped, Ready, NotReady, ReconciliationPaused

#[test]
fn ended_states_stay_until_refreshed() {
    for state in [State::Stopped, State::Ready] {
        let (calls, decision) = drive(&input(state, None, Request::None), &[]);
        assert!(calls.is_empty());
        assert_eq!(decision.state, state);
        assert_eq!(decision.recheck_after, None);
        let (calls, decision) = drive(&input(state, None, Request::Refresh), &[ready("t-2")]);
        assert_eq!(calls, [DRY_RUN]);
        assert_eq!(decision.state, State::ProposalReady);
        assert!(decision.consume_request);
    }
    let (_, decision) = drive(&input(State::Ready, None, Request::Approve), &[]);
    assert_eq!(decision.state, State::Ready);
    assert_eq!(decision.warnings[0].0, INVALID_ANNOTATION);
}

#[test]
fn not_ready_stays_with_its_cause_until_refreshed() {
    let mut failed = input(State::NotReady, None, Request::None);
    failed.status.conditions = Some(vec![condition(
        State::NotReady,
        Some("CruiseControlRestException"),
    )]);
    let (calls, decision) = drive(&failed, &[]);
    assert!(calls.is_empty());
    assert_eq!(decision.state, State::NotReady);
    assert_eq!(
        why(&decision),
        ("CruiseControlRestException", "what happened")
    );
    failed.request = Request::Refresh;
    let (calls, decision) = drive(&failed, &[in_progress("t-2")]);
    assert_eq!(calls, [DRY_RUN]);
    assert_eq!(decision.state, State::PendingProposal);
}

#[test]
fn not_ready_for_a_cause_since_gone_asks_for_a_proposal_by_itself() {
    for reason in [
        "NoSuchResourceException",
        "InvalidResourceException",
        "CruiseControlRetriableConnectionException",
    ] {
        let mut gone = input(State::NotReady, None, Request::None);
        gone.status.conditions = Some(vec![condition(State::NotReady, Some(reason))]);
        let (calls, decision) = drive(&gone, &[ready("t-2")]);
        assert_eq!(calls, [DRY_RUN], "{reason}");
        assert_eq!(decision.state, State::ProposalReady);
    }
}

#[test]
fn a_resumed_rebalance_asks_for_a_new_proposal() {
    let (calls, decision) = drive(
        &input(State::ReconciliationPaused, Some("t-1"), Request::None),
        &[in_progress("t-2")],
    );
    assert_eq!(calls, [DRY_RUN]);
    assert_eq!(decision.state, State::PendingProposal);
}

// Whole machine

#[test]
fn states_and_requests_read_back_from_the_status_and_annotation() {
    for state in State::ALL {
        let recorded = status(state, None);
        let (read, condition) = State::of(Some(&recorded));
        assert_eq!(read, state);
        assert_eq!(condition.is_some(), state != State::New);
    }
    assert_eq!(State::of(None).0, State::New);
    let mut warned = status(State::Ready, None);
    warned.conditions = Some(vec![
        Condition {
            r#type: Some("Warning".to_owned()),
            status: Some("True".to_owned()),
            ..Condition::default()
        },
        condition(State::Rebalancing, None),
    ]);
    assert_eq!(State::of(Some(&warned)).0, State::Rebalancing);
    assert_eq!(Request::parse(Some("approve")), Request::Approve);
    assert_eq!(Request::parse(Some("stop")), Request::Stop);
    assert_eq!(Request::parse(Some("refresh")), Request::Refresh);
    assert_eq!(
        Request::parse(Some("template")),
        Request::Other("template".to_owned())
    );
    assert_eq!(Request::parse(None), Request::None);
}

#[test]
fn every_path_ends_within_two_calls_whatever_cruise_control_answers() {
    let replies = [
        ready("t-1"),
        in_progress("t-1"),
        not_enough_data(),
        refused(),
        unreachable_cc(),
        Answer::UserTask(None),
        task(TaskStatus::Active, None),
        task(TaskStatus::InExecution, Some(result(1))),
        task(TaskStatus::Completed, None),
        task(TaskStatus::CompletedWithError, None),
        Answer::ExecutorState(executor()),
        Answer::Stopped,
    ];
    let requests = [
        Request::None,
        Request::Approve,
        Request::Stop,
        Request::Refresh,
        Request::Other("x".to_owned()),
    ];
    let mut runs = 0;
    for state in State::ALL {
        for request in &requests {
            for session in [None, Some("t-1")] {
                for auto_approval in [false, true] {
                    let mut base = input(state, session, request.clone());
                    base.auto_approval = auto_approval;
                    for first in &replies {
                        for second in &replies {
                            for third in &replies {
                                let sequence = [first.clone(), second.clone(), third.clone()];
                                let mut answers = Vec::new();
                                let decision = loop {
                                    match next(&base, &answers) {
                                        Step::Done(decision) => break decision,
                                        Step::Call(_) => {
                                            assert!(
                                                answers.len() < 2,
                                                "{state:?} {request:?} asks a third call"
                                            );
                                            answers.push(sequence[answers.len()].clone());
                                        }
                                    }
                                };
                                runs += 1;
                                // What is consumed was taken by the state, never while waiting.
                                assert!(
                                    !decision.consume_request
                                        || (!decision.waiting
                                            && *request != Request::None
                                            && state.accepted().contains(request)),
                                    "{state:?} {request:?} {decision:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(runs > 100_000);
}
