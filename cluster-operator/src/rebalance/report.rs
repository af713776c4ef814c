//! A [`Decision`] as the KafkaRebalance's status (pure).

use serde_json::Value;
use strimzi_api::common::Condition;
use strimzi_api::conditions;
use strimzi_api::rebalance::{KafkaRebalanceProgress, KafkaRebalanceStatus};
use strimzi_api::schema::FreeFormMap;

use super::state::{Decision, Optimization, State};

/// The key of `status.optimizationResult` naming the ConfigMap with the broker loads.
pub const LOAD_CONFIG_MAP_KEY: &str = "afterBeforeLoadConfigMap";

/// The status after `decision` for the KafkaRebalance `name` whose status was `previous`,
/// and its state condition (the controller puts it first among the conditions): the
/// condition keeps its transition time while the state stays, whatever its message says.
/// `config_map` is whether the ConfigMap named as the rebalance exists now.
pub fn status(
    decision: &Decision,
    previous: &KafkaRebalanceStatus,
    name: &str,
    config_map: bool,
    now: &str,
) -> (KafkaRebalanceStatus, Condition) {
    let optimization_result = match &decision.optimization {
        Optimization::Keep => previous.optimization_result.clone(),
        Optimization::Clear => None,
        Optimization::New(result) => {
            let mut summary: FreeFormMap = result.summary_json.clone().into_iter().collect();
            summary.insert(LOAD_CONFIG_MAP_KEY.to_owned(), Value::from(name));
            Some(summary)
        }
    };
    let status = KafkaRebalanceStatus {
        conditions: None,
        observed_generation: None,
        session_id: decision.session_id.clone(),
        progress: config_map.then(|| KafkaRebalanceProgress {
            rebalance_progress_config_map: Some(name.to_owned()),
        }),
        optimization_result,
    };
    let (state, before) = State::of(Some(previous));
    let since = before
        .filter(|_| state == decision.state)
        .and_then(|condition| condition.last_transition_time.clone())
        .unwrap_or_else(|| now.to_owned());
    let (reason, message) = match &decision.why {
        Some((reason, message)) => (Some(reason.clone()), Some(message.clone())),
        None => (None, None),
    };
    let condition = Condition {
        r#type: Some(decision.state.as_str().to_owned()),
        status: Some(conditions::STATUS_TRUE.to_owned()),
        last_transition_time: Some(since),
        reason,
        message,
    };
    (status, condition)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::{Map, json};
    use strimzi_operator_common::cruise_control::{OptimizationResult, ProposalSummary};

    fn decision(state: State, optimization: Optimization) -> Decision {
        Decision {
            state,
            why: None,
            session_id: Some("s-2".to_owned()),
            optimization,
            executor: None,
            warnings: Vec::new(),
            consume_request: false,
            waiting: false,
            recheck_after: None,
            notice: None,
        }
    }

    fn previous() -> KafkaRebalanceStatus {
        KafkaRebalanceStatus {
            conditions: Some(vec![Condition {
                r#type: Some("PendingProposal".to_owned()),
                status: Some("True".to_owned()),
                last_transition_time: Some("then".to_owned()),
                reason: None,
                message: None,
            }]),
            session_id: Some("s-1".to_owned()),
            optimization_result: Some(FreeFormMap::from_iter([(
                "numReplicaMovements".to_owned(),
                json!(3),
            )])),
            ..KafkaRebalanceStatus::default()
        }
    }

    #[test]
    fn a_new_proposal_replaces_the_summary_and_names_its_config_map() {
        let mut summary = Map::new();
        summary.insert("numReplicaMovements".to_owned(), json!(12));
        let result = OptimizationResult {
            summary_json: summary,
            summary: ProposalSummary::default(),
            load_before: None,
            load_after: None,
        };
        let (status, condition) = status(
            &decision(State::ProposalReady, Optimization::New(Box::new(result))),
            &previous(),
            "my-rebalance",
            true,
            "now",
        );
        let summary = status.optimization_result.unwrap();
        assert_eq!(summary["numReplicaMovements"], 12);
        assert_eq!(summary[LOAD_CONFIG_MAP_KEY], "my-rebalance");
        assert_eq!(status.session_id.as_deref(), Some("s-2"));
        assert_eq!(
            status
                .progress
                .unwrap()
                .rebalance_progress_config_map
                .as_deref(),
            Some("my-rebalance")
        );
        assert_eq!(condition.r#type.as_deref(), Some("ProposalReady"));
        assert_eq!(condition.status.as_deref(), Some("True"));
        assert_eq!(condition.last_transition_time.as_deref(), Some("now"));
    }

    #[test]
    fn a_kept_state_keeps_its_transition_time_and_says_why_it_waits() {
        let mut waiting = decision(State::PendingProposal, Optimization::Keep);
        waiting.why = Some(("KafkaNotReady".to_owned(), "not yet".to_owned()));
        let (status, condition) = status(&waiting, &previous(), "r", false, "now");
        assert_eq!(condition.last_transition_time.as_deref(), Some("then"));
        assert_eq!(condition.reason.as_deref(), Some("KafkaNotReady"));
        assert_eq!(condition.message.as_deref(), Some("not yet"));
        assert_eq!(status.optimization_result, previous().optimization_result);
        assert_eq!(status.progress, None);
        let (cleared, _) = status_of_cleared();
        assert_eq!(cleared.optimization_result, None);
    }

    fn status_of_cleared() -> (KafkaRebalanceStatus, Condition) {
        status(
            &decision(State::Stopped, Optimization::Clear),
            &previous(),
            "r",
            false,
            "now",
        )
    }
}
