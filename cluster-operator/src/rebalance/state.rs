//! The KafkaRebalance state machine, pure: from the resource's state, the user's request
//! (the `strimzi.io/rebalance` annotation, a spec change, auto-approval) and what the
//! cluster allows, [`next`] says which call to make to Cruise Control, and, given the
//! answers so far, the next state with everything to report ([`Decision`]). The I/O shell
//! (`super::RebalanceReconciler`) makes the calls and feeds the answers back until a
//! decision comes out; no step waits, every wait is a recheck.
//!
//! | state | request | calls | next state |
//! |---|---|---|---|
//! | `New`, `ReconciliationPaused` (resumed) | any | proposal (dry run) | `ProposalReady` (200), `PendingProposal` (202, or not enough metrics yet: no session), `NotReady` (refused) |
//! | `PendingProposal` | none | user task of the session (or the proposal again without one) | `ProposalReady` once it has a result, `NotReady` when it failed, a new proposal when Cruise Control forgot it |
//! | `PendingProposal` | `refresh` / `stop` | proposal / none | as `New` / `Stopped` |
//! | `ProposalReady` | `approve` or auto-approval | proposal (executed) | `Rebalancing` |
//! | `ProposalReady` | `refresh` | proposal (dry run) | as `New` |
//! | `Rebalancing` | none | user task, then the executor's state | `Ready` (completed), `NotReady` (failed), else `Rebalancing` with its progress |
//! | `Rebalancing` | `stop` / `refresh` | stop execution / stop, then proposal | `Stopped` / as `New` |
//! | `Stopped`, `Ready`, `NotReady` | `refresh` | proposal (dry run) | as `New` |
//! | `NotReady` for a cause since gone (Kafka missing, no Cruise Control, Cruise Control unreachable) | none | proposal (dry run) | as `New` |
//!
//! A spec change (`metadata.generation` other than `status.observedGeneration`) is a
//! `refresh`. A request the state does not take is a `Warning` condition
//! (`InvalidAnnotation`) and stays on the resource; one that was carried out is removed once
//! the status says so. When Cruise Control (or the Kafka) cannot be asked right now, the state
//! stays, its condition says why, nothing is consumed and the resource is looked at again
//! shortly ([`Decision::waiting`]).

use std::time::Duration;

use strimzi_api::common::Condition;
use strimzi_api::conditions;
use strimzi_api::rebalance::KafkaRebalanceStatus;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::cruise_control::{
    CruiseControlError, ExecutorState, OptimizationResult, ProposalAnswer, ProposalRequest,
    TaskStatus, UserTask,
};

use super::RebalanceError;

/// How often a proposal being computed, or a rebalance being carried out, is looked at (as
/// Strimzi polls).
pub const POLL_INTERVAL: Duration = Duration::from_secs(5);
/// How soon a rebalance is looked at again after Cruise Control or the Kafka could not be
/// asked.
pub const RETRY_INTERVAL: Duration = Duration::from_secs(10);
/// How soon a proposal is asked for again while Cruise Control has too few metrics.
pub const NOT_ENOUGH_DATA_RETRY: Duration = Duration::from_secs(30);
/// Reason of the state condition while Cruise Control has too few metrics for a proposal.
pub const NOT_ENOUGH_DATA_REASON: &str = "NotEnoughValidWindows";
/// Reason of the `Warning` condition for a request the state does not take.
pub const INVALID_ANNOTATION: &str = "InvalidAnnotation";
/// Reason of the `Warning` condition when the progress of a rebalance could not be read.
pub const EXECUTOR_STATE_WARNING: &str = "CruiseControlExecutorState";

/// Reasons of a `NotReady` state whose cause can go away by itself (the Kafka or Cruise
/// Control appears, becomes ready or reachable): such a rebalance asks for a new proposal
/// when the cause is gone, as Strimzi does for its "issues" and connection failures.
const RENEWABLE_REASONS: [&str; 7] = [
    "InvalidResourceException",
    "NoSuchResourceException",
    "KafkaNotReady",
    "CruiseControlUnavailable",
    "CruiseControlRetriableConnectionException",
    "CruiseControlTooManyActiveTasks",
    "KubernetesApiError",
];

/// The states of a rebalance: the type of its status condition with status `True`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Not looked at yet.
    New,
    /// Cruise Control is computing a proposal.
    PendingProposal,
    /// A proposal waits for approval.
    ProposalReady,
    /// The approved proposal is being carried out.
    Rebalancing,
    /// Stopped by the user.
    Stopped,
    /// The rebalance is done.
    Ready,
    /// Something went wrong; the condition says what.
    NotReady,
    /// `strimzi.io/pause-reconciliation: "true"` (set by the controller itself).
    ReconciliationPaused,
}

impl State {
    /// Every state.
    pub const ALL: [Self; 8] = [
        Self::New,
        Self::PendingProposal,
        Self::ProposalReady,
        Self::Rebalancing,
        Self::Stopped,
        Self::Ready,
        Self::NotReady,
        Self::ReconciliationPaused,
    ];

    /// The condition type of the state, e.g. `ProposalReady`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => conditions::REBALANCE_NEW,
            Self::PendingProposal => conditions::REBALANCE_PENDING_PROPOSAL,
            Self::ProposalReady => conditions::REBALANCE_PROPOSAL_READY,
            Self::Rebalancing => conditions::REBALANCE_REBALANCING,
            Self::Stopped => conditions::REBALANCE_STOPPED,
            Self::Ready => conditions::READY,
            Self::NotReady => conditions::NOT_READY,
            Self::ReconciliationPaused => conditions::RECONCILIATION_PAUSED,
        }
    }

    /// The state `status` records, with its condition: `New` when there is none.
    pub fn of(status: Option<&KafkaRebalanceStatus>) -> (Self, Option<&Condition>) {
        let conditions = status
            .and_then(|status| status.conditions.as_deref())
            .unwrap_or_default();
        conditions
            .iter()
            .filter(|condition| condition.status.as_deref() == Some(conditions::STATUS_TRUE))
            .find_map(|condition| {
                let r#type = condition.r#type.as_deref()?;
                let state = Self::ALL
                    .into_iter()
                    .find(|state| state.as_str() == r#type)?;
                Some((state, Some(condition)))
            })
            .unwrap_or((Self::New, None))
    }

    /// The requests the state takes.
    fn accepted(self) -> &'static [Request] {
        match self {
            Self::New | Self::ReconciliationPaused => &[],
            Self::PendingProposal | Self::Rebalancing => &[Request::Stop, Request::Refresh],
            Self::ProposalReady => &[Request::Approve, Request::Refresh],
            Self::Stopped | Self::Ready | Self::NotReady => &[Request::Refresh],
        }
    }
}

/// What the user asks with the `strimzi.io/rebalance` annotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// No annotation.
    None,
    /// `approve`: carry out the proposal.
    Approve,
    /// `stop`: stop waiting for the proposal, or stop the rebalance.
    Stop,
    /// `refresh`: ask for a new proposal.
    Refresh,
    /// Any other value (`template` included, which marks templates only as an annotation
    /// of its own).
    Other(String),
}

impl Request {
    /// The request an annotation value stands for.
    pub fn parse(annotation: Option<&str>) -> Self {
        match annotation {
            None => Self::None,
            Some("approve") => Self::Approve,
            Some("stop") => Self::Stop,
            Some("refresh") => Self::Refresh,
            Some(other) => Self::Other(other.to_owned()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Self::None => "",
            Self::Approve => "approve",
            Self::Stop => "stop",
            Self::Refresh => "refresh",
            Self::Other(other) => other,
        }
    }
}

/// What the Kafka cluster of the rebalance allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Whether the Kafka reports `Ready`: new proposals and rebalances wait for it.
    pub kafka_ready: bool,
}

/// Everything [`next`] decides from.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The resource's status (default when it has none).
    pub status: KafkaRebalanceStatus,
    /// The `strimzi.io/rebalance` annotation.
    pub request: Request,
    /// Whether the spec changed since the status was written.
    pub spec_changed: bool,
    /// `strimzi.io/rebalance-auto-approval: "true"`.
    pub auto_approval: bool,
    /// The cluster, or why it cannot be used: a cause the user must fix, or one that passes
    /// ([`RebalanceError::is_transient`]).
    pub cluster: Result<Cluster, RebalanceError>,
    /// The proposal the spec asks for, or why the spec is invalid.
    pub proposal: Result<ProposalRequest, RebalanceError>,
}

/// A call to Cruise Control.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// The proposal of the spec: computed only (`dry_run`), or computed and carried out.
    Proposal {
        /// Whether it is only computed.
        dry_run: bool,
    },
    /// The user task of the session.
    UserTask(String),
    /// The executor's state.
    ExecutorState,
    /// Stop the execution in progress.
    StopExecution,
}

/// The answer to a [`Call`].
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// To [`Call::Proposal`].
    Proposal(ProposalAnswer),
    /// To [`Call::UserTask`]: `None` when Cruise Control does not know the task.
    UserTask(Option<UserTask>),
    /// To [`Call::ExecutorState`].
    ExecutorState(ExecutorState),
    /// To [`Call::StopExecution`].
    Stopped,
    /// Any call failed, or Cruise Control could not be called.
    Failed(RebalanceError),
}

/// What [`next`] says: a call to make, or the decision.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Make this call and ask again with its answer added.
    Call(Call),
    /// Report this.
    Done(Box<Decision>),
}

/// What happens to `status.optimizationResult`.
#[derive(Clone, Debug, PartialEq)]
pub enum Optimization {
    /// Stays as it is.
    Keep,
    /// Removed.
    Clear,
    /// Replaced by this proposal's summary (its broker loads go to the ConfigMap).
    New(Box<OptimizationResult>),
}

/// Something the operator did for the user, told as a Kubernetes Event.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// A proposal was asked for and Cruise Control took the request.
    ProposalRequested,
    /// A proposal was handed to Cruise Control to carry out; the session.
    RebalanceStarted(Option<String>),
    /// The rebalance (or the wait for its proposal) was stopped.
    RebalanceStopped,
    /// The rebalance failed (a `Warning` Event).
    Failed(RebalanceError),
}

/// The outcome of one reconciliation.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The next state.
    pub state: State,
    /// Reason and message of the state's condition: why it is `NotReady`, or what it waits for.
    pub why: Option<(String, String)>,
    /// `status.sessionId`: the Cruise Control task of the state.
    pub session_id: Option<String>,
    /// `status.optimizationResult`.
    pub optimization: Optimization,
    /// The executor's state read for the progress of a running rebalance.
    pub executor: Option<ExecutorState>,
    /// `Warning` conditions: reason and message.
    pub warnings: Vec<(String, String)>,
    /// Whether the `strimzi.io/rebalance` annotation was acted on and is to be removed.
    pub consume_request: bool,
    /// Whether the reconciliation could not do what it should (Cruise Control or the Kafka
    /// could not be asked): nothing was consumed, a spec change is still to be acted on.
    pub waiting: bool,
    /// When to look again; `None` for the periodic reconciliation.
    pub recheck_after: Option<Duration>,
    /// What to tell the user with an Event.
    pub notice: Option<Notice>,
}

impl Decision {
    /// `state` with the session and proposal of `status` kept, to be looked at again after
    /// `recheck_after`.
    fn stay(state: State, status: &KafkaRebalanceStatus, recheck_after: Option<Duration>) -> Self {
        Self {
            state,
            why: None,
            session_id: status.session_id.clone(),
            optimization: Optimization::Keep,
            executor: None,
            warnings: Vec::new(),
            consume_request: false,
            waiting: false,
            recheck_after,
            notice: None,
        }
    }

    /// A fresh `state` with `session_id` and `optimization`.
    fn to(state: State, session_id: Option<String>, optimization: Optimization) -> Self {
        Self {
            session_id,
            optimization,
            consume_request: true,
            ..Self::stay(state, &KafkaRebalanceStatus::default(), None)
        }
    }

    /// `NotReady` because of `error`.
    fn failed(error: RebalanceError, session_id: Option<String>) -> Self {
        Self {
            why: Some((error.reason().to_owned(), error.to_string())),
            consume_request: false,
            notice: Some(Notice::Failed(error)),
            ..Self::to(State::NotReady, session_id, Optimization::Clear)
        }
    }

    fn recheck(mut self, after: Duration) -> Self {
        self.recheck_after = Some(after);
        self
    }

    fn notice(mut self, notice: Notice) -> Self {
        self.notice = Some(notice);
        self
    }
}

/// The next step for `input`, given the `answers` to the calls made so far (in order).
pub fn next(input: &Input, answers: &[Answer]) -> Step {
    let (state, condition) = State::of(Some(&input.status));
    let step = match &input.cluster {
        Err(error) if !error.is_transient() => done(Decision::failed(error.clone(), None)),
        _ => by_state(input, state, condition, answers),
    };
    match step {
        Step::Done(decision) => done(with_request_outcome(input, state, *decision)),
        call => call,
    }
}

/// The step that reports `decision`.
fn done(decision: Decision) -> Step {
    Step::Done(Box::new(decision))
}

/// The step of `state`.
fn by_state(
    input: &Input,
    state: State,
    condition: Option<&Condition>,
    answers: &[Answer],
) -> Step {
    let status = &input.status;
    let request = if input.spec_changed && state != State::New {
        &Request::Refresh
    } else {
        &input.request
    };
    match state {
        State::New | State::ReconciliationPaused => propose(input, state, true, answers),
        State::PendingProposal => match (request, &status.session_id) {
            (Request::Refresh, _) | (_, None) => propose(input, state, true, answers),
            (Request::Stop, _) => done(
                Decision::to(State::Stopped, None, Optimization::Clear)
                    .notice(Notice::RebalanceStopped),
            ),
            (_, Some(session)) => poll_proposal(input, state, session, answers),
        },
        State::ProposalReady => {
            if input.auto_approval || *request == Request::Approve {
                propose(input, state, false, answers)
            } else if *request == Request::Refresh {
                propose(input, state, true, answers)
            } else {
                done(Decision::stay(state, status, None))
            }
        }
        State::Rebalancing => match (request, answers) {
            // A new proposal is asked for only after stopping, so check first that it can be.
            (Request::Refresh, []) => match cannot_propose(input, state) {
                Some(decision) => done(decision),
                None => ask(input, state, Call::StopExecution),
            },
            (Request::Stop, []) => ask(input, state, Call::StopExecution),
            (Request::Stop, [Answer::Stopped]) => done(
                Decision::to(State::Stopped, None, Optimization::Clear)
                    .notice(Notice::RebalanceStopped),
            ),
            (Request::Refresh, [Answer::Stopped, rest @ ..]) => propose(input, state, true, rest),
            (Request::Stop | Request::Refresh, [Answer::Failed(error), ..]) => {
                done(failure(input, state, error, status.session_id.as_deref()))
            }
            (Request::Stop | Request::Refresh, [other, ..]) => {
                done(unexpected(input, state, other))
            }
            (_, _) => match &status.session_id {
                Some(session) => poll_rebalance(input, state, session, answers),
                None => propose(input, state, true, answers),
            },
        },
        State::Stopped | State::Ready => match request {
            Request::Refresh => propose(input, state, true, answers),
            _ => done(Decision::stay(state, status, None)),
        },
        State::NotReady => {
            let renewable = condition
                .and_then(|condition| condition.reason.as_deref())
                .is_some_and(|reason| RENEWABLE_REASONS.contains(&reason));
            if *request == Request::Refresh || renewable {
                propose(input, state, true, answers)
            } else {
                let mut stay = Decision::stay(state, status, None);
                stay.why = condition.and_then(|condition| {
                    Some((
                        condition.reason.clone()?,
                        condition.message.clone().unwrap_or_default(),
                    ))
                });
                done(stay)
            }
        }
    }
}

/// `call`, unless Cruise Control cannot be asked now.
fn ask(input: &Input, state: State, call: Call) -> Step {
    match &input.cluster {
        Err(error) => done(wait(input, state, error)),
        Ok(_) => Step::Call(call),
    }
}

/// The proposal of the spec, computed only (`dry_run`) or carried out; `answers` holds its
/// answer once asked.
fn propose(input: &Input, state: State, dry_run: bool, answers: &[Answer]) -> Step {
    let Some(answer) = answers.first() else {
        return match cannot_propose(input, state) {
            Some(decision) => done(decision),
            None => ask(input, state, Call::Proposal { dry_run }),
        };
    };
    let pending = if dry_run {
        State::PendingProposal
    } else {
        State::Rebalancing
    };
    done(match answer {
        Answer::Proposal(ProposalAnswer::Ready { task_id, result }) => {
            let optimization = Optimization::New(result.clone());
            if dry_run {
                Decision::to(State::ProposalReady, task_id.clone(), optimization)
                    .notice(Notice::ProposalRequested)
            } else {
                Decision::to(State::Rebalancing, task_id.clone(), optimization)
                    .notice(Notice::RebalanceStarted(task_id.clone()))
                    .recheck(POLL_INTERVAL)
            }
        }
        Answer::Proposal(ProposalAnswer::InProgress { task_id }) => {
            let notice = if dry_run {
                Notice::ProposalRequested
            } else {
                Notice::RebalanceStarted(Some(task_id.clone()))
            };
            Decision::to(pending, Some(task_id.clone()), Optimization::Clear)
                .notice(notice)
                .recheck(POLL_INTERVAL)
        }
        Answer::Failed(RebalanceError::CruiseControl(CruiseControlError::NotEnoughData {
            message,
        })) => {
            let mut decision = Decision::to(State::PendingProposal, None, Optimization::Clear)
                .recheck(NOT_ENOUGH_DATA_RETRY);
            decision.why = Some((NOT_ENOUGH_DATA_REASON.to_owned(), message.clone()));
            decision
        }
        Answer::Failed(error) => failure(input, state, error, None),
        other => unexpected(input, state, other),
    })
}

/// Why no proposal can be asked for now: the spec is invalid (`NotReady`), or the Kafka is
/// not ready (wait).
fn cannot_propose(input: &Input, state: State) -> Option<Decision> {
    match (&input.proposal, &input.cluster) {
        (Err(error), _) => Some(Decision::failed(error.clone(), None)),
        (Ok(_), Ok(cluster)) if !cluster.kafka_ready => {
            Some(wait(input, state, &RebalanceError::KafkaNotReady))
        }
        _ => None,
    }
}

/// A proposal being computed under `session`: its task, then a new proposal if Cruise Control
/// forgot the task.
fn poll_proposal(input: &Input, state: State, session: &str, answers: &[Answer]) -> Step {
    let status = &input.status;
    match answers {
        [] => ask(input, state, Call::UserTask(session.to_owned())),
        [Answer::UserTask(None), rest @ ..] => propose(input, state, true, rest),
        [Answer::UserTask(Some(task)), ..] => done(match (task.status, &task.result) {
            (TaskStatus::Completed | TaskStatus::InExecution, Some(result)) => Decision::to(
                State::ProposalReady,
                Some(session.to_owned()),
                Optimization::New(Box::new(result.clone())),
            ),
            (TaskStatus::CompletedWithError, _) => Decision::failed(
                RebalanceError::TaskFailed(session.to_owned()),
                Some(session.to_owned()),
            ),
            _ => Decision::stay(state, status, Some(POLL_INTERVAL)),
        }),
        [Answer::Failed(error), ..] => done(failure(input, state, error, Some(session))),
        [other, ..] => done(unexpected(input, state, other)),
    }
}

/// A rebalance being carried out under `session`: its task, then the executor's state for
/// the progress while it runs.
fn poll_rebalance(input: &Input, state: State, session: &str, answers: &[Answer]) -> Step {
    let status = &input.status;
    let task = match answers {
        [] => return ask(input, state, Call::UserTask(session.to_owned())),
        [Answer::UserTask(None), rest @ ..] => return propose(input, state, true, rest),
        [Answer::UserTask(Some(task)), ..] => task,
        [Answer::Failed(error), ..] => {
            return done(failure(input, state, error, Some(session)));
        }
        [other, ..] => return done(unexpected(input, state, other)),
    };
    done(match task.status {
        TaskStatus::Completed => {
            let optimization = task.result.clone().map_or(Optimization::Keep, |result| {
                Optimization::New(Box::new(result))
            });
            Decision::to(State::Ready, None, optimization)
        }
        TaskStatus::CompletedWithError => Decision::failed(
            RebalanceError::TaskFailed(session.to_owned()),
            Some(session.to_owned()),
        ),
        TaskStatus::Active => Decision::stay(state, status, Some(POLL_INTERVAL)),
        TaskStatus::InExecution => {
            let mut running = Decision::stay(state, status, Some(POLL_INTERVAL));
            // Started while its proposal was still being computed: the proposal is known now.
            if status.optimization_result.is_none()
                && let Some(result) = &task.result
            {
                running.optimization = Optimization::New(Box::new(result.clone()));
            }
            match &answers[1..] {
                [] => return ask(input, state, Call::ExecutorState),
                [Answer::ExecutorState(executor), ..] => running.executor = Some(executor.clone()),
                [Answer::Failed(error), ..] => running.warnings.push((
                    EXECUTOR_STATE_WARNING.to_owned(),
                    format!("the progress of the rebalance is not updated: {error}"),
                )),
                [other, ..] => return done(unexpected(input, state, other)),
            }
            running
        }
    })
}

/// A failed call: wait when it may pass, else `NotReady`.
fn failure(input: &Input, state: State, error: &RebalanceError, session: Option<&str>) -> Decision {
    if error.is_transient() {
        wait(input, state, error)
    } else {
        Decision::failed(error.clone(), session.map(str::to_owned))
    }
}

/// `state` kept as it is, its condition saying why nothing could be done, nothing consumed;
/// looked at again soon.
fn wait(input: &Input, state: State, error: &RebalanceError) -> Decision {
    let mut decision = Decision::stay(state, &input.status, Some(RETRY_INTERVAL));
    decision.why = Some((error.reason().to_owned(), error.to_string()));
    decision.waiting = true;
    decision
}

/// An answer that does not fit the call (a bug of the shell): reported, not acted on.
fn unexpected(input: &Input, state: State, answer: &Answer) -> Decision {
    wait(
        input,
        state,
        &RebalanceError::UnexpectedAnswer(format!("{answer:?}").chars().take(200).collect()),
    )
}

/// `decision` with the `InvalidAnnotation` warning for a request `state` does not take, and
/// the request consumed only when the state takes it.
fn with_request_outcome(input: &Input, state: State, mut decision: Decision) -> Decision {
    let request = &input.request;
    if *request == Request::None {
        decision.consume_request = false;
        return decision;
    }
    if state.accepted().contains(request) {
        decision.consume_request &= !decision.waiting;
    } else {
        decision.consume_request = false;
        let accepted: Vec<&str> = state.accepted().iter().map(Request::as_str).collect();
        decision.warnings.push((
            INVALID_ANNOTATION.to_owned(),
            format!(
                "strimzi.io/rebalance={} is not taken in state {}; the state takes: {}",
                request.as_str(),
                state.as_str(),
                if accepted.is_empty() {
                    "none".to_owned()
                } else {
                    accepted.join(", ")
                }
            ),
        ));
    }
    decision
}

#[cfg(test)]
mod tests;
