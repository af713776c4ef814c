//! Automatic rebalancing (`spec.cruiseControl.autoRebalance` of a Kafka), as Strimzi does it
//! when brokers are added or are to be removed: the KafkaRebalances the Kafka reconciler
//! creates, follows and deletes, the brokers it records in `status.autoRebalance`, and the
//! decision of what to do next ([`plan`]). Pure.
//!
//! The states of `status.autoRebalance.state`:
//!
//! - `Idle`: nothing runs. Brokers to be removed that still hold replicas (blocked: the
//!   scale-down waits) start a `remove-brokers` rebalance, else added brokers an `add-brokers`
//!   one — unless an `add-brokers` rebalance failed less than [`RETRY_AFTER`] ago.
//! - `RebalanceOnScaleDown`: the `remove-brokers` rebalance runs. Once `Ready` it is deleted
//!   and queued added brokers get theirs; the next reconciliation finds the brokers empty and
//!   removes them. A changed set of brokers to remove refreshes it; `NotReady` ends in `Idle`.
//! - `RebalanceOnScaleUp`: the `add-brokers` rebalance runs. A scale-down asked meanwhile stops
//!   and replaces it; once `Ready` it is deleted; a changed set of added brokers refreshes it.
//!   `NotReady` (Cruise Control refused it, say while it still restarted without the new
//!   brokers' capacity) deletes it and goes back to `Idle` with the added brokers still
//!   recorded, so that a later reconciliation starts it again, as Strimzi does since its fix
//!   of strimzi/strimzi-kafka-operator#11296. A broker recorded as added that is no longer in
//!   the cluster is forgotten.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use strimzi_api::kafka::{
    KafkaAutoRebalanceMode, KafkaAutoRebalanceState, KafkaAutoRebalanceStatus,
    KafkaAutoRebalanceStatusBrokers,
};
use strimzi_api::rebalance::{KafkaRebalance, KafkaRebalanceMode, KafkaRebalanceSpec};
use strimzi_api::{annotations, finalizers, labels, naming};

use super::state::State;

/// The KafkaRebalance that moves replicas onto the added brokers, or off the brokers to be
/// removed, of Kafka `cluster` in `namespace`: named `<cluster>-auto-rebalancing-<mode>`,
/// labelled for the cluster, approved automatically, with the finalizer
/// [`finalizers::AUTO_REBALANCING`], and the spec of `template` (the KafkaRebalance the
/// auto-rebalance configuration names, if any) with the mode and `brokers` set.
pub fn auto_rebalance(
    namespace: &str,
    cluster: &str,
    mode: KafkaAutoRebalanceMode,
    brokers: Vec<i32>,
    template: Option<&KafkaRebalanceSpec>,
) -> KafkaRebalance {
    let spec = KafkaRebalanceSpec {
        mode: Some(match mode {
            KafkaAutoRebalanceMode::AddBrokers => KafkaRebalanceMode::AddBrokers,
            KafkaAutoRebalanceMode::RemoveBrokers => KafkaRebalanceMode::RemoveBrokers,
        }),
        brokers: Some(brokers),
        ..template.cloned().unwrap_or_default()
    };
    KafkaRebalance {
        metadata: ObjectMeta {
            name: Some(naming::auto_rebalancing_kafka_rebalance(
                cluster,
                mode.as_str(),
            )),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                labels::CLUSTER.to_owned(),
                cluster.to_owned(),
            )])),
            annotations: Some(BTreeMap::from([(
                annotations::REBALANCE_AUTO_APPROVAL.to_owned(),
                "true".to_owned(),
            )])),
            finalizers: Some(vec![finalizers::AUTO_REBALANCING.to_owned()]),
            ..ObjectMeta::default()
        },
        spec,
        status: None,
    }
}

/// Whether `rebalance` is a template (`strimzi.io/rebalance-template: "true"`): the
/// configuration of automatic rebalances, never reconciled itself.
pub fn is_template(rebalance: &KafkaRebalance) -> bool {
    annotations::is_true(
        rebalance.metadata.annotations.as_ref(),
        annotations::REBALANCE_TEMPLATE,
    )
}

/// The state `rebalance` is in, as its status says.
pub fn state_of(rebalance: &KafkaRebalance) -> State {
    State::of(rebalance.status.as_ref()).0
}

/// The brokers automatic rebalancing is about.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScalingBrokers {
    /// Brokers to be removed whose removal waits for their replicas to move off.
    pub blocked: BTreeSet<i32>,
    /// Brokers added to the cluster whose rebalance has not run yet.
    pub added: BTreeSet<i32>,
}

impl ScalingBrokers {
    /// The brokers of `mode`.
    fn of(&self, mode: KafkaAutoRebalanceMode) -> &BTreeSet<i32> {
        match mode {
            KafkaAutoRebalanceMode::AddBrokers => &self.added,
            KafkaAutoRebalanceMode::RemoveBrokers => &self.blocked,
        }
    }

    /// `status.autoRebalance.modes`: each mode with brokers, removal first.
    fn modes(&self) -> Option<Vec<KafkaAutoRebalanceStatusBrokers>> {
        let modes: Vec<_> = [
            KafkaAutoRebalanceMode::RemoveBrokers,
            KafkaAutoRebalanceMode::AddBrokers,
        ]
        .into_iter()
        .filter(|mode| !self.of(*mode).is_empty())
        .map(|mode| KafkaAutoRebalanceStatusBrokers {
            mode: Some(mode),
            brokers: Some(self.of(mode).iter().copied().collect()),
        })
        .collect();
        (!modes.is_empty()).then_some(modes)
    }
}

/// The added brokers recorded in `status`, waiting for their rebalance.
pub fn recorded_added(status: Option<&KafkaAutoRebalanceStatus>) -> BTreeSet<i32> {
    status
        .and_then(|status| status.modes.as_ref())
        .into_iter()
        .flatten()
        .filter(|mode| mode.mode == Some(KafkaAutoRebalanceMode::AddBrokers))
        .flat_map(|mode| mode.brokers.iter().flatten().copied())
        .collect()
}

/// How long after an `add-brokers` rebalance failed (state `Idle`, added brokers still
/// recorded) it is started again at the earliest: not by the reconciliation that the
/// failed rebalance's deletion wakes, but by a later one, so that a failure that lasts does
/// not start and fail rebalances back to back.
pub const RETRY_AFTER: Duration = Duration::from_secs(30);

/// How long `status` has been `Idle` at `now` (RFC 3339); `None` when it is in another state
/// or its transition time is unknown.
pub fn idle_for(status: Option<&KafkaAutoRebalanceStatus>, now: &str) -> Option<Duration> {
    let status = status?;
    if recorded_state(Some(status)) != KafkaAutoRebalanceState::Idle {
        return None;
    }
    let since: jiff::Timestamp = status.last_transition_time.as_deref()?.parse().ok()?;
    let now: jiff::Timestamp = now.parse().ok()?;
    let elapsed = now.duration_since(since);
    Some(Duration::try_from(elapsed).unwrap_or(Duration::ZERO))
}

/// The state `status` records; `Idle` when there is none.
pub fn recorded_state(status: Option<&KafkaAutoRebalanceStatus>) -> KafkaAutoRebalanceState {
    status
        .and_then(|status| status.state)
        .unwrap_or(KafkaAutoRebalanceState::Idle)
}

/// `status.autoRebalance` with the brokers `added` by this reconciliation recorded next to
/// those recorded before, keeping only brokers still among `desired_brokers`; a new cluster
/// (every desired broker added) records none. `Idle` since `now` when there was no status.
pub fn record_added(
    previous: Option<&KafkaAutoRebalanceStatus>,
    desired_brokers: &BTreeSet<i32>,
    added: &BTreeSet<i32>,
    now: &str,
) -> KafkaAutoRebalanceStatus {
    let scaled_up = if added.is_superset(desired_brokers) {
        BTreeSet::new()
    } else {
        added.clone()
    };
    let mut status = previous
        .cloned()
        .unwrap_or_else(|| KafkaAutoRebalanceStatus {
            state: Some(KafkaAutoRebalanceState::Idle),
            last_transition_time: Some(now.to_owned()),
            modes: None,
        });
    let recorded = recorded_added(Some(&status));
    let brokers: BTreeSet<i32> = recorded
        .union(&scaled_up)
        .filter(|id| desired_brokers.contains(id))
        .copied()
        .collect();
    if brokers == recorded {
        return status;
    }
    let mut modes = status.modes.take().unwrap_or_default();
    modes.retain(|mode| mode.mode != Some(KafkaAutoRebalanceMode::AddBrokers));
    if !brokers.is_empty() {
        modes.push(KafkaAutoRebalanceStatusBrokers {
            mode: Some(KafkaAutoRebalanceMode::AddBrokers),
            brokers: Some(brokers.into_iter().collect()),
        });
    }
    status.modes = (!modes.is_empty()).then_some(modes);
    status
}

/// The automatic rebalance of one mode as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Running {
    /// Its state.
    pub state: State,
    /// The brokers of its spec.
    pub brokers: BTreeSet<i32>,
}

impl Running {
    /// The automatic rebalance `rebalance` as it is now.
    pub fn of(rebalance: &KafkaRebalance) -> Self {
        Self {
            state: state_of(rebalance),
            brokers: rebalance.spec.brokers.iter().flatten().copied().collect(),
        }
    }
}

/// A change to the automatic rebalances, carried out in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Create the rebalance of the mode for the brokers (from its template).
    Create(KafkaAutoRebalanceMode, BTreeSet<i32>),
    /// Set the brokers of the mode's rebalance and ask it for a new proposal.
    Refresh(KafkaAutoRebalanceMode, BTreeSet<i32>),
    /// Stop the mode's rebalance.
    Stop(KafkaAutoRebalanceMode),
    /// Delete the mode's rebalance (its finalizer removed first).
    Delete(KafkaAutoRebalanceMode),
}

/// What to do, and the state and brokers to record once done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The changes, in order.
    pub actions: Vec<Action>,
    /// The state to record.
    pub state: KafkaAutoRebalanceState,
    /// The brokers to record in `modes`.
    pub brokers: ScalingBrokers,
}

impl Plan {
    fn new(actions: Vec<Action>, state: KafkaAutoRebalanceState, brokers: ScalingBrokers) -> Self {
        Self {
            actions,
            state,
            brokers,
        }
    }

    /// Back to `Idle` with nothing recorded, after `actions`.
    pub fn idle(actions: Vec<Action>) -> Self {
        Self::new(
            actions,
            KafkaAutoRebalanceState::Idle,
            ScalingBrokers::default(),
        )
    }

    /// The plan's state with the brokers recorded, as `status.autoRebalance`: the transition
    /// time of `previous` when the state stays, else `now`.
    pub fn status(
        &self,
        previous: Option<&KafkaAutoRebalanceStatus>,
        now: &str,
    ) -> KafkaAutoRebalanceStatus {
        let since = previous
            .filter(|previous| previous.state == Some(self.state))
            .and_then(|previous| previous.last_transition_time.clone())
            .unwrap_or_else(|| now.to_owned());
        KafkaAutoRebalanceStatus {
            state: Some(self.state),
            last_transition_time: Some(since),
            modes: self.brokers.modes(),
        }
    }
}

/// The next step of automatic rebalancing in `state`, for the brokers in `scaling`, with the
/// rebalance of the state's mode as it is now (`None` when it is gone: started again from
/// `Idle`), the state having been `Idle` for `idle_for` (see [`idle_for`]).
pub fn plan(
    state: KafkaAutoRebalanceState,
    scaling: &ScalingBrokers,
    running: Option<&Running>,
    idle_for: Option<Duration>,
) -> Plan {
    use KafkaAutoRebalanceMode::{AddBrokers, RemoveBrokers};
    use KafkaAutoRebalanceState::{Idle, RebalanceOnScaleDown, RebalanceOnScaleUp};
    let scaling = scaling.clone();
    let (state, running) = match (state, running) {
        (Idle, _) | (_, None) => (Idle, None),
        (state, Some(running)) => (state, Some(running)),
    };
    let Some(running) = running else {
        return if !scaling.blocked.is_empty() {
            let brokers = scaling.blocked.clone();
            Plan::new(
                vec![Action::Create(RemoveBrokers, brokers)],
                RebalanceOnScaleDown,
                scaling,
            )
        } else if !scaling.added.is_empty() {
            if idle_for.is_some_and(|idle| idle < RETRY_AFTER) {
                // Back from a failed rebalance just now (or a moment ago from another one):
                // a later reconciliation starts it.
                return Plan::new(Vec::new(), Idle, scaling);
            }
            let brokers = scaling.added.clone();
            Plan::new(
                vec![Action::Create(AddBrokers, brokers)],
                RebalanceOnScaleUp,
                scaling,
            )
        } else {
            Plan::idle(Vec::new())
        };
    };
    let in_progress = !matches!(running.state, State::Ready | State::NotReady);
    if state == RebalanceOnScaleDown {
        let changed = !scaling.blocked.is_empty() && scaling.blocked != running.brokers;
        return match running.state {
            State::NotReady => Plan::idle(vec![Action::Delete(RemoveBrokers)]),
            _ if changed => {
                let brokers = scaling.blocked.clone();
                Plan::new(
                    vec![Action::Refresh(RemoveBrokers, brokers)],
                    RebalanceOnScaleDown,
                    scaling,
                )
            }
            _ if in_progress => Plan::new(Vec::new(), RebalanceOnScaleDown, scaling),
            _ if scaling.added.is_empty() => Plan::idle(vec![Action::Delete(RemoveBrokers)]),
            _ => {
                let added = scaling.added.clone();
                Plan::new(
                    vec![
                        Action::Delete(RemoveBrokers),
                        Action::Create(AddBrokers, added),
                    ],
                    RebalanceOnScaleUp,
                    scaling,
                )
            }
        };
    }
    // RebalanceOnScaleUp.
    let changed = scaling.added != running.brokers;
    if !scaling.blocked.is_empty() && running.state != State::NotReady {
        let mut actions = if in_progress {
            vec![Action::Stop(AddBrokers)]
        } else {
            Vec::new()
        };
        actions.push(Action::Delete(AddBrokers));
        actions.push(Action::Create(RemoveBrokers, scaling.blocked.clone()));
        // Added brokers that are now removed need no rebalance of their own any more.
        let brokers = if in_progress && scaling.blocked == scaling.added {
            ScalingBrokers {
                blocked: scaling.blocked,
                added: BTreeSet::new(),
            }
        } else {
            scaling
        };
        return Plan::new(actions, RebalanceOnScaleDown, brokers);
    }
    if changed {
        let added = scaling.added.clone();
        return Plan::new(
            vec![Action::Refresh(AddBrokers, added)],
            RebalanceOnScaleUp,
            scaling,
        );
    }
    if in_progress {
        return Plan::new(Vec::new(), RebalanceOnScaleUp, scaling);
    }
    if running.state == State::NotReady {
        // Failed for the same brokers, maybe for a passing reason (Cruise Control restarting
        // with the new capacity): the added brokers stay recorded, to be started again.
        return Plan::new(vec![Action::Delete(AddBrokers)], Idle, scaling);
    }
    Plan::idle(vec![Action::Delete(AddBrokers)])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use strimzi_api::common::Condition;
    use strimzi_api::rebalance::KafkaRebalanceStatus;

    #[test]
    fn an_auto_rebalance_takes_the_template_spec_with_its_mode_and_brokers() {
        let template = KafkaRebalanceSpec {
            mode: Some(KafkaRebalanceMode::Full),
            brokers: Some(vec![9]),
            goals: Some(vec!["RackAwareGoal".to_owned()]),
            skip_hard_goal_check: Some(true),
            ..KafkaRebalanceSpec::default()
        };
        let rebalance = auto_rebalance(
            "kafka",
            "my-cluster",
            KafkaAutoRebalanceMode::AddBrokers,
            vec![3, 4],
            Some(&template),
        );
        assert_eq!(
            rebalance.metadata.name.as_deref(),
            Some("my-cluster-auto-rebalancing-add-brokers")
        );
        assert_eq!(rebalance.metadata.namespace.as_deref(), Some("kafka"));
        assert_eq!(
            rebalance.metadata.labels.as_ref().unwrap()[labels::CLUSTER],
            "my-cluster"
        );
        assert!(annotations::is_true(
            rebalance.metadata.annotations.as_ref(),
            annotations::REBALANCE_AUTO_APPROVAL
        ));
        assert_eq!(
            rebalance.metadata.finalizers,
            Some(vec![finalizers::AUTO_REBALANCING.to_owned()])
        );
        assert_eq!(rebalance.spec.mode, Some(KafkaRebalanceMode::AddBrokers));
        assert_eq!(rebalance.spec.brokers, Some(vec![3, 4]));
        assert_eq!(rebalance.spec.goals, template.goals);
        assert_eq!(rebalance.spec.skip_hard_goal_check, Some(true));
        assert!(!is_template(&rebalance));
        assert_eq!(state_of(&rebalance), State::New);

        let plain = auto_rebalance(
            "kafka",
            "c",
            KafkaAutoRebalanceMode::RemoveBrokers,
            vec![5],
            None,
        );
        assert_eq!(plain.spec.mode, Some(KafkaRebalanceMode::RemoveBrokers));
        assert_eq!(plain.spec.goals, None);
    }

    #[test]
    fn templates_and_states_are_read_from_the_resource() {
        let mut rebalance =
            auto_rebalance("ns", "c", KafkaAutoRebalanceMode::AddBrokers, vec![1], None);
        rebalance.metadata.annotations.as_mut().unwrap().insert(
            annotations::REBALANCE_TEMPLATE.to_owned(),
            "true".to_owned(),
        );
        assert!(is_template(&rebalance));
        rebalance.status = Some(KafkaRebalanceStatus {
            conditions: Some(vec![Condition {
                r#type: Some("Rebalancing".to_owned()),
                status: Some("True".to_owned()),
                ..Condition::default()
            }]),
            ..KafkaRebalanceStatus::default()
        });
        assert_eq!(state_of(&rebalance), State::Rebalancing);
    }

    fn brokers(blocked: &[i32], added: &[i32]) -> ScalingBrokers {
        ScalingBrokers {
            blocked: blocked.iter().copied().collect(),
            added: added.iter().copied().collect(),
        }
    }

    fn running(state: State, brokers: &[i32]) -> Running {
        Running {
            state,
            brokers: brokers.iter().copied().collect(),
        }
    }

    fn set(ids: &[i32]) -> BTreeSet<i32> {
        ids.iter().copied().collect()
    }

    use KafkaAutoRebalanceMode::{AddBrokers, RemoveBrokers};
    use KafkaAutoRebalanceState::{Idle, RebalanceOnScaleDown, RebalanceOnScaleUp};

    #[test]
    fn idle_starts_the_removal_first_then_the_addition() {
        let both = brokers(&[5], &[3, 4]);
        let plan = plan(Idle, &both, None, None);
        assert_eq!(plan.actions, vec![Action::Create(RemoveBrokers, set(&[5]))]);
        assert_eq!(plan.state, RebalanceOnScaleDown);
        assert_eq!(plan.brokers, both);
        let added = brokers(&[], &[3, 4]);
        let plan = super::plan(Idle, &added, None, None);
        assert_eq!(plan.actions, vec![Action::Create(AddBrokers, set(&[3, 4]))]);
        assert_eq!(plan.state, RebalanceOnScaleUp);
        let nothing = super::plan(Idle, &ScalingBrokers::default(), None, None);
        assert_eq!(nothing, Plan::idle(Vec::new()));
        // A rebalance that is gone is started again.
        let gone = super::plan(RebalanceOnScaleUp, &added, None, None);
        assert_eq!(gone.actions, vec![Action::Create(AddBrokers, set(&[3, 4]))]);
    }

    #[test]
    fn scale_down_waits_refreshes_and_ends_or_hands_over_to_the_addition() {
        let blocked = brokers(&[5], &[]);
        let waiting = plan(
            RebalanceOnScaleDown,
            &blocked,
            Some(&running(State::Rebalancing, &[5])),
            None,
        );
        assert!(waiting.actions.is_empty());
        assert_eq!(waiting.state, RebalanceOnScaleDown);
        let more = brokers(&[4, 5], &[]);
        let refreshed = plan(
            RebalanceOnScaleDown,
            &more,
            Some(&running(State::ProposalReady, &[5])),
            None,
        );
        assert_eq!(
            refreshed.actions,
            vec![Action::Refresh(RemoveBrokers, set(&[4, 5]))]
        );
        // Done: the blocked brokers are empty now, so none is blocked any more.
        let done = plan(
            RebalanceOnScaleDown,
            &ScalingBrokers::default(),
            Some(&running(State::Ready, &[5])),
            None,
        );
        assert_eq!(done, Plan::idle(vec![Action::Delete(RemoveBrokers)]));
        let queued = brokers(&[], &[7]);
        let next = plan(
            RebalanceOnScaleDown,
            &queued,
            Some(&running(State::Ready, &[5])),
            None,
        );
        assert_eq!(
            next.actions,
            vec![
                Action::Delete(RemoveBrokers),
                Action::Create(AddBrokers, set(&[7]))
            ]
        );
        assert_eq!(next.state, RebalanceOnScaleUp);
        let failed = plan(
            RebalanceOnScaleDown,
            &blocked,
            Some(&running(State::NotReady, &[5])),
            None,
        );
        assert_eq!(failed, Plan::idle(vec![Action::Delete(RemoveBrokers)]));
    }

    #[test]
    fn scale_up_is_replaced_by_a_scale_down_refreshed_or_ended() {
        let added = brokers(&[], &[3]);
        let waiting = plan(
            RebalanceOnScaleUp,
            &added,
            Some(&running(State::PendingProposal, &[3])),
            None,
        );
        assert!(waiting.actions.is_empty());
        let done = plan(
            RebalanceOnScaleUp,
            &added,
            Some(&running(State::Ready, &[3])),
            None,
        );
        assert_eq!(done, Plan::idle(vec![Action::Delete(AddBrokers)]));
        let more = brokers(&[], &[3, 4]);
        let refreshed = plan(
            RebalanceOnScaleUp,
            &more,
            Some(&running(State::Ready, &[3])),
            None,
        );
        assert_eq!(
            refreshed.actions,
            vec![Action::Refresh(AddBrokers, set(&[3, 4]))]
        );
        assert_eq!(refreshed.state, RebalanceOnScaleUp);
        // The added broker is removed again while its rebalance runs: stop, replace, and
        // forget the addition.
        let undo = brokers(&[3], &[3]);
        let replaced = plan(
            RebalanceOnScaleUp,
            &undo,
            Some(&running(State::Rebalancing, &[3])),
            None,
        );
        assert_eq!(
            replaced.actions,
            vec![
                Action::Stop(AddBrokers),
                Action::Delete(AddBrokers),
                Action::Create(RemoveBrokers, set(&[3]))
            ]
        );
        assert_eq!(replaced.state, RebalanceOnScaleDown);
        assert_eq!(replaced.brokers, brokers(&[3], &[]));
        let retried = plan(
            RebalanceOnScaleUp,
            &more,
            Some(&running(State::NotReady, &[3])),
            None,
        );
        assert_eq!(
            retried.actions,
            vec![Action::Refresh(AddBrokers, set(&[3, 4]))]
        );
    }

    #[test]
    fn a_failed_scale_up_keeps_its_brokers_and_is_started_again_later() {
        // Cruise Control refused the proposal (say, still restarting without the new broker's
        // capacity): the rebalance goes, the added broker stays recorded in Idle.
        let added = brokers(&[], &[3]);
        let failed = plan(
            RebalanceOnScaleUp,
            &added,
            Some(&running(State::NotReady, &[3])),
            None,
        );
        assert_eq!(failed.actions, vec![Action::Delete(AddBrokers)]);
        assert_eq!(failed.state, Idle);
        assert_eq!(failed.brokers, added);
        let status = failed.status(None, "2026-01-01T00:00:00Z");
        assert_eq!(recorded_added(Some(&status)), set(&[3]));
        // The reconciliation the deletion wakes leaves it; one after RETRY_AFTER starts it.
        let soon = idle_for(Some(&status), "2026-01-01T00:00:02Z");
        assert_eq!(soon, Some(Duration::from_secs(2)));
        let held = plan(Idle, &added, None, soon);
        assert_eq!(held, Plan::new(Vec::new(), Idle, added.clone()));
        assert_eq!(
            recorded_added(Some(&held.status(Some(&status), "t"))),
            set(&[3])
        );
        let later = idle_for(Some(&status), "2026-01-01T00:00:31Z");
        let retried = plan(Idle, &added, None, later);
        assert_eq!(retried.actions, vec![Action::Create(AddBrokers, set(&[3]))]);
        assert_eq!(retried.state, RebalanceOnScaleUp);
        // A removal to make waits for no retry of an addition.
        let blocked = brokers(&[5], &[3]);
        assert_eq!(
            plan(Idle, &blocked, None, soon).actions,
            vec![Action::Create(RemoveBrokers, set(&[5]))]
        );
    }

    #[test]
    fn idle_time_is_read_from_the_transition_time_of_an_idle_state_only() {
        let status = |state, since: Option<&str>| KafkaAutoRebalanceStatus {
            state: Some(state),
            last_transition_time: since.map(str::to_owned),
            modes: None,
        };
        let now = "2026-01-01T00:10:00Z";
        let idle = status(Idle, Some("2026-01-01T00:00:00Z"));
        assert_eq!(idle_for(Some(&idle), now), Some(Duration::from_secs(600)));
        let running = status(RebalanceOnScaleUp, Some("2026-01-01T00:00:00Z"));
        assert_eq!(idle_for(Some(&running), now), None);
        assert_eq!(idle_for(Some(&status(Idle, None)), now), None);
        assert_eq!(idle_for(Some(&status(Idle, Some("yesterday"))), now), None);
        assert_eq!(idle_for(None, now), None);
        // A clock behind the transition time: no time at all.
        let ahead = status(Idle, Some("2026-01-01T00:20:00Z"));
        assert_eq!(idle_for(Some(&ahead), now), Some(Duration::ZERO));
    }

    #[test]
    fn added_brokers_no_longer_in_the_cluster_are_forgotten() {
        let recorded = record_added(None, &set(&[0, 1, 2]), &set(&[0, 1, 2]), "t0");
        let recorded = record_added(Some(&recorded), &set(&[0, 1, 2, 3, 4]), &set(&[3, 4]), "t1");
        assert_eq!(recorded_added(Some(&recorded)), set(&[3, 4]));
        let shrunk = record_added(Some(&recorded), &set(&[0, 1, 2, 3]), &BTreeSet::new(), "t2");
        assert_eq!(recorded_added(Some(&shrunk)), set(&[3]));
        let gone = record_added(Some(&shrunk), &set(&[0, 1, 2]), &BTreeSet::new(), "t3");
        assert_eq!(gone.modes, None);
        assert_eq!(gone.state, Some(Idle));
        // A recorded removal stays.
        let mut both = shrunk.clone();
        both.modes.get_or_insert_default().insert(
            0,
            KafkaAutoRebalanceStatusBrokers {
                mode: Some(RemoveBrokers),
                brokers: Some(vec![2]),
            },
        );
        let kept = record_added(Some(&both), &set(&[0, 1, 2]), &BTreeSet::new(), "t4");
        assert_eq!(
            kept.modes,
            Some(vec![KafkaAutoRebalanceStatusBrokers {
                mode: Some(RemoveBrokers),
                brokers: Some(vec![2]),
            }])
        );
    }

    #[test]
    fn added_brokers_are_recorded_and_merged_but_not_for_a_new_cluster() {
        let desired = set(&[0, 1, 2, 3]);
        let fresh = record_added(None, &desired, &desired, "t0");
        assert_eq!(fresh.state, Some(Idle));
        assert_eq!(fresh.last_transition_time.as_deref(), Some("t0"));
        assert_eq!(fresh.modes, None);
        let first = record_added(Some(&fresh), &desired, &set(&[3]), "t1");
        assert_eq!(recorded_added(Some(&first)), set(&[3]));
        assert_eq!(first.last_transition_time.as_deref(), Some("t0"));
        let second = record_added(Some(&first), &set(&[0, 1, 2, 3, 4]), &set(&[4]), "t2");
        assert_eq!(recorded_added(Some(&second)), set(&[3, 4]));
        assert_eq!(recorded_state(Some(&second)), Idle);
        assert_eq!(recorded_state(None), Idle);
    }

    #[test]
    fn the_status_keeps_its_transition_time_while_the_state_stays() {
        let plan = plan(Idle, &brokers(&[5], &[3]), None, None);
        let status = plan.status(None, "t1");
        assert_eq!(status.state, Some(RebalanceOnScaleDown));
        assert_eq!(status.last_transition_time.as_deref(), Some("t1"));
        let modes = status.modes.clone().unwrap();
        assert_eq!(modes[0].mode, Some(RemoveBrokers));
        assert_eq!(modes[0].brokers, Some(vec![5]));
        assert_eq!(modes[1].mode, Some(AddBrokers));
        assert_eq!(
            plan.status(Some(&status), "t2")
                .last_transition_time
                .as_deref(),
            Some("t1")
        );
    }
}
