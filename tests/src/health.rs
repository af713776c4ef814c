//! A resource's health as tools that know Strimzi read its status, for tests that check our
//! statuses keep Strimzi's meaning. The rules are those of Argo CD's health checks for
//! Strimzi's kinds, as issue 37 states them:
//!
//! - `Kafka`: `Degraded` when a `NotReady` condition is `True` with any reason but
//!   `Creating`; `Healthy` when `Ready` is `True`; `Progressing` otherwise.
//! - `KafkaConnect`, `KafkaTopic`, `KafkaUser`, `KafkaBridge` (and, in these tests, every
//!   other kind): `Degraded` when a `NotReady` condition is `True`, whatever its reason;
//!   `Healthy` when `Ready` is `True`; `Progressing` otherwise.
//!
//! `kubectl wait --for=condition=Ready` and alert rules read the `Ready` condition alone
//! ([`ready`]).

use serde_json::Value;

/// What a health check makes of a status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// Reconciled: `Ready`.
    Healthy,
    /// Being worked on.
    Progressing,
    /// Failed: someone should look.
    Degraded,
}

/// The `True` condition of type `type` in `status` (a resource's `status` object), if any.
fn true_condition<'a>(status: &'a Value, r#type: &str) -> Option<&'a Value> {
    status["conditions"].as_array()?.iter().find(|condition| {
        condition["type"].as_str() == Some(r#type) && condition["status"].as_str() == Some("True")
    })
}

/// The health of a resource of `kind` whose status is `status` (`Value::Null` when it has
/// none), by the rules above.
pub fn health(kind: &str, status: &Value) -> Health {
    let degraded = true_condition(status, "NotReady").is_some_and(|not_ready| {
        kind != "Kafka" || not_ready["reason"].as_str() != Some("Creating")
    });
    if degraded {
        Health::Degraded
    } else if ready(status) {
        Health::Healthy
    } else {
        Health::Progressing
    }
}

/// Whether `kubectl wait --for=condition=Ready` would return for `status`: its `Ready`
/// condition is `True`.
pub fn ready(status: &Value) -> bool {
    true_condition(status, "Ready").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(conditions: Value) -> Value {
        json!({"conditions": conditions})
    }

    #[test]
    fn a_kafka_being_created_progresses_and_any_other_not_ready_is_degraded() {
        let creating = with(json!([
            {"type": "NotReady", "status": "True", "reason": "Creating"},
            {"type": "Reconciling", "status": "True", "reason": "WaitingForPods"},
        ]));
        assert_eq!(health("Kafka", &creating), Health::Progressing);
        assert_eq!(health("KafkaConnect", &creating), Health::Degraded);
        let failed = with(json!([{"type": "NotReady", "status": "True", "reason": "X"}]));
        assert_eq!(health("Kafka", &failed), Health::Degraded);
        assert_eq!(health("KafkaTopic", &failed), Health::Degraded);
    }

    #[test]
    fn ready_is_healthy_and_anything_else_progressing() {
        let rolling = with(json!([
            {"type": "Ready", "status": "True"},
            {"type": "Reconciling", "status": "True", "reason": "RollingUpdate"},
            {"type": "Warning", "status": "True", "reason": "W"},
        ]));
        assert_eq!(health("Kafka", &rolling), Health::Healthy);
        assert!(ready(&rolling));
        let reconciling = with(json!([
            {"type": "Reconciling", "status": "True", "reason": "WaitingForPods"},
        ]));
        assert_eq!(health("KafkaBridge", &reconciling), Health::Progressing);
        assert!(!ready(&reconciling));
        assert_eq!(health("Kafka", &Value::Null), Health::Progressing);
        let not_ready_false = with(json!([{"type": "NotReady", "status": "False"}]));
        assert_eq!(health("KafkaUser", &not_ready_false), Health::Progressing);
    }
}
