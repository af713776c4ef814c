//! The ConfigMap named as the KafkaRebalance (pure): the broker loads of its proposal and the
//! progress of its rebalance, with Strimzi's keys, per state:
//!
//! | state | `estimatedTimeToCompletionInMinutes` | `completedByteMovementPercentage` | `executorState.json` |
//! |---|---|---|---|
//! | `ProposalReady` | — | `0` | — |
//! | `Rebalancing` | from the data moved so far and the time since the start | data moved / data to move, rounded down | Cruise Control's executor state |
//! | `Stopped`, `NotReady` | — | as before | as before |
//! | `Ready` | `0` | `100` | — |
//!
//! `brokerLoad.json` holds, per broker ID, each load figure `before` and `after` the proposal
//! and their `diff` (only `after` when Cruise Control sent no load before).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use strimzi_operator_common::cruise_control::{BrokerLoad, ExecutorState, OptimizationResult};

use super::state::State;

/// Key of the broker loads before and after the proposal.
pub const BROKER_LOAD: &str = "brokerLoad.json";
/// Key of the estimated minutes until the rebalance completes.
pub const ESTIMATED_MINUTES: &str = "estimatedTimeToCompletionInMinutes";
/// Key of the percentage of the data moved so far.
pub const COMPLETED_PERCENTAGE: &str = "completedByteMovementPercentage";
/// Key of Cruise Control's executor state.
pub const EXECUTOR_STATE: &str = "executorState.json";

/// The ConfigMap's data after a reconciliation that ends in `state`, from what it holds now
/// (`existing`), the proposal the reconciliation got (`result`) and the executor's state it
/// read (`executor`) at `now`. `None` when the ConfigMap is to stay as it is (or absent).
pub fn config_map_data(
    existing: Option<&BTreeMap<String, String>>,
    state: State,
    result: Option<&OptimizationResult>,
    executor: Option<&ExecutorState>,
    now: jiff::Timestamp,
) -> Option<BTreeMap<String, String>> {
    if matches!(
        state,
        State::New | State::PendingProposal | State::ReconciliationPaused
    ) {
        return None;
    }
    let mut data = match (result, existing) {
        (Some(result), _) => BTreeMap::from([(BROKER_LOAD.to_owned(), broker_load_json(result))]),
        (None, Some(existing)) => existing.clone(),
        (None, None) => return None,
    };
    let mut set = |key: &str, value: Option<String>| match value {
        Some(value) => {
            data.insert(key.to_owned(), value);
        }
        None => {
            data.remove(key);
        }
    };
    match state {
        State::ProposalReady => {
            set(ESTIMATED_MINUTES, None);
            set(COMPLETED_PERCENTAGE, Some("0".to_owned()));
            set(EXECUTOR_STATE, None);
        }
        State::Rebalancing => {
            if let Some(executor) = executor {
                set(
                    ESTIMATED_MINUTES,
                    estimated_minutes(executor, now).map(|minutes| minutes.to_string()),
                );
                if let Some(percentage) = completed_percentage(executor) {
                    set(COMPLETED_PERCENTAGE, Some(percentage.to_string()));
                }
                set(EXECUTOR_STATE, Some(executor.json.to_string()));
            }
        }
        State::Stopped | State::NotReady => set(ESTIMATED_MINUTES, None),
        State::Ready => {
            set(ESTIMATED_MINUTES, Some("0".to_owned()));
            set(COMPLETED_PERCENTAGE, Some("100".to_owned()));
            set(EXECUTOR_STATE, None);
        }
        State::New | State::PendingProposal | State::ReconciliationPaused => {}
    }
    Some(data)
}

/// The minutes left at the average rate so far: unknown until some data has moved.
fn estimated_minutes(executor: &ExecutorState, now: jiff::Timestamp) -> Option<i64> {
    let total = executor.total_data_to_move_mb?;
    let finished = executor
        .finished_data_movement_mb
        .filter(|moved| *moved > 0)?;
    let elapsed = now.duration_since(executor.task_started()?).as_secs();
    if elapsed <= 0 || finished > total {
        return None;
    }
    let per_second = finished as f64 / elapsed as f64;
    Some(((total - finished) as f64 / (per_second * 60.0)) as i64)
}

/// The percentage of the data moved so far, rounded down; unknown without data to move.
fn completed_percentage(executor: &ExecutorState) -> Option<i64> {
    let total = executor.total_data_to_move_mb.filter(|total| *total > 0)?;
    let finished = executor.finished_data_movement_mb?.clamp(0, total);
    Some(finished * 100 / total)
}

/// Per broker ID, each load figure before and after the proposal and the difference.
pub fn broker_load_json(result: &OptimizationResult) -> String {
    let before: BTreeMap<i32, &BrokerLoad> = result
        .load_before
        .iter()
        .flatten()
        .map(|load| (load.broker, load))
        .collect();
    let mut brokers = Map::new();
    for after in result.load_after.iter().flatten() {
        let mut figures = Map::new();
        for (name, after_value) in figures_of(after) {
            let before_value = before.get(&after.broker).and_then(|before| {
                figures_of(before)
                    .into_iter()
                    .find(|(other, _)| *other == name)
                    .and_then(|(_, value)| value)
            });
            let figure = match (before_value, after_value) {
                (Some(before), Some(after)) => {
                    json!({"before": before, "after": after, "diff": after.minus(before)})
                }
                (None, Some(after)) => json!({"after": after}),
                (_, None) => continue,
            };
            figures.insert(name.to_owned(), figure);
        }
        brokers.insert(after.broker.to_string(), Value::Object(figures));
    }
    serde_json::to_string_pretty(&Value::Object(brokers)).unwrap_or_default()
}

/// One load figure: a count or a rate.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
enum Figure {
    Count(i64),
    Amount(f64),
}

impl Figure {
    fn minus(self, other: Self) -> Self {
        match (self, other) {
            (Self::Count(a), Self::Count(b)) => Self::Count(a - b),
            (a, b) => Self::Amount(a.as_f64() - b.as_f64()),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Self::Count(count) => count as f64,
            Self::Amount(amount) => amount,
        }
    }
}

/// The figures of `load` under Strimzi's names.
fn figures_of(load: &BrokerLoad) -> [(&'static str, Option<Figure>); 9] {
    let amount = |value: Option<f64>| value.map(Figure::Amount);
    [
        ("leaders", load.leaders.map(Figure::Count)),
        ("replicas", load.replicas.map(Figure::Count)),
        ("cpuPercentage", amount(load.cpu_percentage)),
        ("diskUsedPercentage", amount(load.disk_used_percentage)),
        ("diskUsedMB", amount(load.disk_used_mb)),
        ("networkOutRateKB", amount(load.network_out_rate_kb)),
        (
            "leaderNetworkInRateKB",
            amount(load.leader_network_in_rate_kb),
        ),
        (
            "followerNetworkInRateKB",
            amount(load.follower_network_in_rate_kb),
        ),
        (
            "potentialMaxNetworkOutRateKB",
            amount(load.potential_max_network_out_rate_kb),
        ),
    ]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use strimzi_operator_common::cruise_control::ProposalSummary;

    fn load(broker: i32, leaders: i64, cpu: f64) -> BrokerLoad {
        BrokerLoad {
            broker,
            leaders: Some(leaders),
            cpu_percentage: Some(cpu),
            ..BrokerLoad::default()
        }
    }

    fn result(before: Option<Vec<BrokerLoad>>, after: Vec<BrokerLoad>) -> OptimizationResult {
        OptimizationResult {
            summary_json: Map::new(),
            summary: ProposalSummary::default(),
            load_before: before,
            load_after: Some(after),
        }
    }

    fn executor(finished: i64, total: i64) -> ExecutorState {
        ExecutorState {
            state: "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS".to_owned(),
            triggered_user_task_id: Some("t".to_owned()),
            triggered_task_reason: Some(
                "No reason provided (Client: 10.0.0.1, Date: 2026-11-25T10:00:00Z)".to_owned(),
            ),
            finished_data_movement_mb: Some(finished),
            total_data_to_move_mb: Some(total),
            json: json!({"state": "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS"}),
        }
    }

    fn at(time: &str) -> jiff::Timestamp {
        time.parse().unwrap()
    }

    #[test]
    fn broker_loads_are_aligned_by_broker_with_their_difference() {
        let loads = result(
            Some(vec![load(1, 2, 2.5), load(0, 10, 12.5)]),
            vec![load(0, 6, 7.5), load(1, 6, 7.5)],
        );
        let json: Value = serde_json::from_str(&broker_load_json(&loads)).unwrap();
        assert_eq!(
            json["0"]["leaders"],
            json!({"before": 10, "after": 6, "diff": -4})
        );
        assert_eq!(
            json["1"]["cpuPercentage"],
            json!({"before": 2.5, "after": 7.5, "diff": 5.0})
        );
        assert_eq!(
            json["0"].as_object().unwrap().len(),
            2,
            "figures Cruise Control did not send are left out"
        );
        let after_only = result(None, vec![load(3, 1, 1.0)]);
        let json: Value = serde_json::from_str(&broker_load_json(&after_only)).unwrap();
        assert_eq!(json["3"]["leaders"], json!({"after": 1}));
    }

    #[test]
    fn a_new_proposal_starts_the_config_map_over() {
        let existing = BTreeMap::from([
            (ESTIMATED_MINUTES.to_owned(), "0".to_owned()),
            (COMPLETED_PERCENTAGE.to_owned(), "100".to_owned()),
        ]);
        let loads = result(None, vec![load(0, 1, 1.0)]);
        let data = config_map_data(
            Some(&existing),
            State::ProposalReady,
            Some(&loads),
            None,
            at("2026-11-25T10:00:00Z"),
        )
        .unwrap();
        assert_eq!(
            data.keys().collect::<Vec<_>>(),
            [BROKER_LOAD, COMPLETED_PERCENTAGE]
        );
        assert_eq!(data[COMPLETED_PERCENTAGE], "0");
        assert_eq!(
            config_map_data(None, State::Stopped, None, None, at("2026-11-25T10:00:00Z")),
            None,
            "no ConfigMap without a proposal"
        );
        assert_eq!(
            config_map_data(
                Some(&existing),
                State::PendingProposal,
                None,
                None,
                at("2026-11-25T10:00:00Z")
            ),
            None
        );
    }

    #[test]
    fn a_running_rebalance_reports_its_progress_and_estimate() {
        let existing = BTreeMap::from([
            (BROKER_LOAD.to_owned(), "{}".to_owned()),
            (COMPLETED_PERCENTAGE.to_owned(), "0".to_owned()),
        ]);
        // 100 of 400 MB in 10 minutes: 30 minutes left.
        let data = config_map_data(
            Some(&existing),
            State::Rebalancing,
            None,
            Some(&executor(100, 400)),
            at("2026-11-25T10:10:00Z"),
        )
        .unwrap();
        assert_eq!(data[ESTIMATED_MINUTES], "30");
        assert_eq!(data[COMPLETED_PERCENTAGE], "25");
        assert_eq!(data[BROKER_LOAD], "{}");
        assert!(data[EXECUTOR_STATE].contains("INTER_BROKER_REPLICA_MOVEMENT"));
        // Nothing moved yet: no estimate.
        let data = config_map_data(
            Some(&existing),
            State::Rebalancing,
            None,
            Some(&executor(0, 400)),
            at("2026-11-25T10:10:00Z"),
        )
        .unwrap();
        assert!(!data.contains_key(ESTIMATED_MINUTES));
        assert_eq!(data[COMPLETED_PERCENTAGE], "0");
        // Without the executor's state, the progress stays as it was.
        let data = config_map_data(
            Some(&existing),
            State::Rebalancing,
            None,
            None,
            at("2026-11-25T10:10:00Z"),
        )
        .unwrap();
        assert_eq!(data, existing);
    }

    #[test]
    fn ending_states_settle_the_progress() {
        let running = BTreeMap::from([
            (BROKER_LOAD.to_owned(), "{}".to_owned()),
            (ESTIMATED_MINUTES.to_owned(), "30".to_owned()),
            (COMPLETED_PERCENTAGE.to_owned(), "25".to_owned()),
            (EXECUTOR_STATE.to_owned(), "{}".to_owned()),
        ]);
        let now = at("2026-11-25T10:10:00Z");
        let stopped = config_map_data(Some(&running), State::Stopped, None, None, now).unwrap();
        assert_eq!(
            stopped.keys().collect::<Vec<_>>(),
            [BROKER_LOAD, COMPLETED_PERCENTAGE, EXECUTOR_STATE]
        );
        assert_eq!(stopped[COMPLETED_PERCENTAGE], "25");
        let ready = config_map_data(Some(&running), State::Ready, None, None, now).unwrap();
        assert_eq!(
            (
                ready[ESTIMATED_MINUTES].as_str(),
                ready[COMPLETED_PERCENTAGE].as_str()
            ),
            ("0", "100")
        );
        assert!(!ready.contains_key(EXECUTOR_STATE));
        let failed = config_map_data(Some(&running), State::NotReady, None, None, now).unwrap();
        assert!(!failed.contains_key(ESTIMATED_MINUTES));
    }
}
