//! Building the `status` of a custom resource as Strimzi writes it: `Ready`, `NotReady`,
//! `Warning` and `ReconciliationPaused` conditions, `observedGeneration`, transition times
//! kept for conditions that did not change, and whether anything but timestamps changed.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use strimzi_api::common::Condition;
use strimzi_api::conditions;

/// The part every Strimzi status has: conditions and the generation they describe.
pub trait OperatorStatus:
    Clone + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The conditions, empty when unset.
    fn conditions(&self) -> &[Condition];
    /// Replaces the conditions.
    fn set_conditions(&mut self, conditions: Vec<Condition>);
    /// The generation the status describes.
    fn observed_generation(&self) -> Option<i64>;
    /// Sets the generation the status describes.
    fn set_observed_generation(&mut self, generation: Option<i64>);
}

macro_rules! operator_status {
    ($($status:ty),* $(,)?) => {$(
        impl OperatorStatus for $status {
            fn conditions(&self) -> &[Condition] {
                self.conditions.as_deref().unwrap_or_default()
            }
            fn set_conditions(&mut self, conditions: Vec<Condition>) {
                self.conditions = Some(conditions);
            }
            fn observed_generation(&self) -> Option<i64> {
                self.observed_generation
            }
            fn set_observed_generation(&mut self, generation: Option<i64>) {
                self.observed_generation = generation;
            }
        }
    )*};
}

operator_status!(
    strimzi_api::kafka::KafkaStatus,
    strimzi_api::node_pool::KafkaNodePoolStatus,
    strimzi_api::topic::KafkaTopicStatus,
    strimzi_api::user::KafkaUserStatus,
    strimzi_api::connect::KafkaConnectStatus,
    strimzi_api::connector::KafkaConnectorStatus,
    strimzi_api::mirror_maker2::KafkaMirrorMaker2Status,
    strimzi_api::bridge::KafkaBridgeStatus,
    strimzi_api::rebalance::KafkaRebalanceStatus,
    strimzi_api::pod_set::StrimziPodSetStatus,
);

/// The current time as a condition timestamp (RFC 3339, seconds, UTC).
pub fn timestamp_now() -> String {
    timestamp(jiff::Timestamp::now())
}

/// `time` as a condition timestamp (RFC 3339, seconds, UTC).
pub fn timestamp(time: jiff::Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn condition(r#type: &str, reason: Option<&str>, message: Option<&str>, now: &str) -> Condition {
    Condition {
        r#type: Some(r#type.to_owned()),
        status: Some(conditions::STATUS_TRUE.to_owned()),
        last_transition_time: Some(now.to_owned()),
        reason: reason.map(str::to_owned),
        message: message.map(str::to_owned),
    }
}

/// `Ready`: the resource is reconciled.
pub fn ready(now: &str) -> Condition {
    condition(conditions::READY, None, None, now)
}

/// `NotReady`: the last reconciliation failed (`reason` is the error category, `message`
/// the error text) or is still waiting for something (`reason` such as `WaitingForPods`,
/// `message` what is awaited).
pub fn not_ready(reason: &str, message: &str, now: &str) -> Condition {
    condition(conditions::NOT_READY, Some(reason), Some(message), now)
}

/// `Reconciling` (ours, see [`conditions::RECONCILING`]): the reconciliation makes progress
/// and waits for what `message` says (`reason` such as `RollingUpdate`).
pub fn reconciling(reason: &str, message: &str, now: &str) -> Condition {
    condition(conditions::RECONCILING, Some(reason), Some(message), now)
}

/// `NotReady` with reason `Creating` and Strimzi's message: a new Kafka being deployed.
pub fn creating_kafka(now: &str) -> Condition {
    not_ready(
        conditions::reasons::CREATING,
        "Kafka cluster is being deployed",
        now,
    )
}

/// The condition of type `type` with status `True` among `conditions`, if any.
pub fn find_true<'a>(conditions: &'a [Condition], r#type: &str) -> Option<&'a Condition> {
    conditions.iter().find(|condition| {
        condition.r#type.as_deref() == Some(r#type)
            && condition.status.as_deref() == Some(conditions::STATUS_TRUE)
    })
}

/// `Ready` with status `False`: the last reconciliation failed, as Strimzi's topic operator
/// reports it; `reason` is the error category, `message` the error text.
pub fn ready_false(reason: &str, message: &str, now: &str) -> Condition {
    Condition {
        status: Some(conditions::STATUS_FALSE.to_owned()),
        ..condition(conditions::READY, Some(reason), Some(message), now)
    }
}

/// `Warning`: something the user should fix that did not stop the reconciliation.
pub fn warning(reason: &str, message: &str, now: &str) -> Condition {
    condition(conditions::WARNING, Some(reason), Some(message), now)
}

/// `ReconciliationPaused`: the `strimzi.io/pause-reconciliation` annotation is `"true"`.
pub fn paused(now: &str) -> Condition {
    condition(
        conditions::RECONCILIATION_PAUSED,
        Some(conditions::reasons::RECONCILIATION_PAUSED),
        None,
        now,
    )
}

/// `status` with `conditions` and `observed_generation`, the transition time of every
/// condition that is unchanged since `previous` carried over.
pub fn with_conditions<S: OperatorStatus>(
    mut status: S,
    previous: Option<&S>,
    mut conditions: Vec<Condition>,
    observed_generation: Option<i64>,
) -> S {
    let before = previous.map(OperatorStatus::conditions).unwrap_or_default();
    for condition in &mut conditions {
        let unchanged = before.iter().find(|old| {
            old.r#type == condition.r#type
                && old.status == condition.status
                && old.reason == condition.reason
                && old.message == condition.message
        });
        if let Some(old) = unchanged.filter(|old| old.last_transition_time.is_some()) {
            condition.last_transition_time = old.last_transition_time.clone();
        }
    }
    status.set_conditions(conditions);
    status.set_observed_generation(observed_generation);
    status
}

/// Whether `next` differs from `previous` in anything but condition timestamps, so that it
/// is worth writing.
pub fn changed<S: Serialize>(previous: Option<&S>, next: &S) -> bool {
    let Some(previous) = previous else {
        return true;
    };
    match (serde_json::to_value(previous), serde_json::to_value(next)) {
        (Ok(previous), Ok(next)) => without_timestamps(previous) != without_timestamps(next),
        _ => true,
    }
}

fn without_timestamps(mut status: Value) -> Value {
    if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        for condition in conditions.iter_mut().filter_map(Value::as_object_mut) {
            condition.remove("lastTransitionTime");
        }
    }
    status
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use strimzi_api::topic::KafkaTopicStatus;

    #[test]
    fn conditions_look_like_strimzi() {
        let ready = ready("t");
        assert_eq!(ready.r#type.as_deref(), Some("Ready"));
        assert_eq!(ready.status.as_deref(), Some("True"));
        let failed = not_ready("InvalidConfig", "bad", "t");
        assert_eq!(failed.r#type.as_deref(), Some("NotReady"));
        assert_eq!(failed.reason.as_deref(), Some("InvalidConfig"));
        assert_eq!(failed.message.as_deref(), Some("bad"));
        let failed = ready_false("NotSupported", "no", "t");
        assert_eq!(failed.r#type.as_deref(), Some("Ready"));
        assert_eq!(failed.status.as_deref(), Some("False"));
        assert_eq!(failed.reason.as_deref(), Some("NotSupported"));
        assert_eq!(warning("W", "m", "t").r#type.as_deref(), Some("Warning"));
        assert_eq!(paused("t").r#type.as_deref(), Some("ReconciliationPaused"));
        let progress = reconciling("RollingUpdate", "rolling", "t");
        assert_eq!(progress.r#type.as_deref(), Some("Reconciling"));
        assert_eq!(progress.status.as_deref(), Some("True"));
        let creating = creating_kafka("t");
        assert_eq!(
            (creating.r#type.as_deref(), creating.reason.as_deref()),
            (Some("NotReady"), Some("Creating"))
        );
        assert_eq!(
            creating.message.as_deref(),
            Some("Kafka cluster is being deployed")
        );
        let listed = [warning("W", "m", "t"), super::ready("t")];
        assert_eq!(find_true(&listed, "Ready"), Some(&listed[1]));
        assert_eq!(find_true(&[failed], "Ready"), None, "Ready False");
        let now = timestamp_now();
        assert!(
            now.parse::<jiff::Timestamp>().is_ok() && now.ends_with('Z'),
            "{now}"
        );
    }

    #[test]
    fn unchanged_conditions_keep_their_transition_time() {
        let previous = with_conditions(
            KafkaTopicStatus::default(),
            None,
            vec![ready("old"), warning("W", "m", "old")],
            Some(1),
        );
        let next = with_conditions(
            KafkaTopicStatus::default(),
            Some(&previous),
            vec![ready("new"), warning("W", "other", "new")],
            Some(2),
        );
        assert_eq!(
            next.conditions()[0].last_transition_time.as_deref(),
            Some("old")
        );
        assert_eq!(
            next.conditions()[1].last_transition_time.as_deref(),
            Some("new")
        );
        assert_eq!(next.observed_generation(), Some(2));
    }

    #[test]
    fn only_timestamps_changing_is_no_change() {
        let previous =
            with_conditions(KafkaTopicStatus::default(), None, vec![ready("a")], Some(1));
        let same = with_conditions(KafkaTopicStatus::default(), None, vec![ready("b")], Some(1));
        assert!(!changed(Some(&previous), &same));
        let newer = with_conditions(KafkaTopicStatus::default(), None, vec![ready("b")], Some(2));
        assert!(changed(Some(&previous), &newer));
        let failed = with_conditions(
            KafkaTopicStatus::default(),
            None,
            vec![not_ready("R", "m", "a")],
            Some(1),
        );
        assert!(changed(Some(&previous), &failed));
        assert!(changed(None, &previous));
    }
}
