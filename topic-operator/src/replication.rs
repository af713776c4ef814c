//! Replication-factor changes against Kafka or Cruise Control: one step per reconciliation,
//! never waiting for the movement itself. What the steps are is [`crate::replicas`]'s.
//!
//! Without Cruise Control the operator reassigns partitions itself: it looks for a
//! reassignment of the topic in progress (so that one started before a restart is followed,
//! not started again), otherwise places the missing or surplus replicas, throttles the
//! movement and submits it. Once Kafka lists no reassignment of the topic and every
//! partition has the target count, the throttle is removed.
//!
//! With Cruise Control (`STRIMZI_CRUISE_CONTROL_ENABLED=true`) the operator asks Cruise
//! Control's `topic_configuration` endpoint for the change and follows the user task it
//! answers with.

use std::collections::BTreeMap;

use strimzi_api::topic::{ReplicasChangeState, ReplicasChangeStatus};
use strimzi_operator_common::cruise_control::{CruiseControlClient, ProposalAnswer, TaskStatus};
use strimzi_operator_common::kafka::{AlterConfigOp, ConfigResource};

use crate::error::TopicError;
use crate::kafka::TopicKafka;
use crate::model::{ActualTopic, FOLLOWER_THROTTLED_REPLICAS, LEADER_THROTTLED_REPLICAS};
use crate::replicas::{
    self, CruiseControlAnswer, CruiseControlStep, FOLLOWER_THROTTLED_RATE, LEADER_THROTTLED_RATE,
    ReassignmentState, Throttle,
};

/// Who moves replicas.
#[derive(Clone)]
pub enum Mover {
    /// The operator, with partition reassignments throttled to this many bytes per second
    /// per broker (`None`: unthrottled).
    Reassignments {
        /// The throttle rate.
        throttle: Option<u64>,
    },
    /// Cruise Control.
    CruiseControl(CruiseControlClient),
}

/// Changes the replication factor of topics, one step at a time.
#[derive(Clone)]
pub struct ReplicationChanger {
    kafka: TopicKafka,
    mover: Mover,
}

impl ReplicationChanger {
    /// A changer talking to Kafka through `kafka`, moving replicas with `mover`.
    pub fn new(kafka: TopicKafka, mover: Mover) -> Self {
        Self { kafka, mover }
    }

    /// One step towards `target` replicas for every partition of topic `name` (`actual` in
    /// Kafka, `previous` the last `status.replicasChange`): the new `status.replicasChange`,
    /// `None` once the change is complete.
    pub async fn step(
        &self,
        name: &str,
        actual: &ActualTopic,
        target: i32,
        previous: Option<&ReplicasChangeStatus>,
    ) -> Result<Option<ReplicasChangeStatus>, TopicError> {
        match &self.mover {
            Mover::Reassignments { throttle } => {
                self.reassignment_step(name, actual, target, *throttle)
                    .await
            }
            Mover::CruiseControl(client) => {
                self.cruise_control_step(client, name, actual, target, previous)
                    .await
            }
        }
    }

    async fn reassignment_step(
        &self,
        name: &str,
        actual: &ActualTopic,
        target: i32,
        throttle: Option<u64>,
    ) -> Result<Option<ReplicasChangeStatus>, TopicError> {
        let partitions = actual
            .assignment
            .iter()
            .map(|partition| partition.partition)
            .collect();
        let reassigning = !self.kafka.reassigning(name, partitions).await?.is_empty();
        match ReassignmentState::of(target, &actual.assignment, reassigning) {
            ReassignmentState::Running => Ok(Some(replicas::ongoing(target))),
            ReassignmentState::Done => {
                if actual.is_throttled() {
                    self.unthrottle(name).await?;
                }
                Ok(None)
            }
            ReassignmentState::ToSubmit => {
                let brokers = self.kafka.brokers().await?;
                let targets =
                    replicas::place(&actual.assignment, &brokers, target).map_err(not_supported)?;
                if let (Some(rate), Some(replicas)) =
                    (throttle, Throttle::of(&actual.assignment, &targets))
                {
                    self.throttle(name, rate, &replicas, &brokers).await?;
                }
                tracing::info!(topic = name, target, ?targets, "reassigning partitions");
                self.kafka.reassign(name, &targets).await?;
                Ok(Some(replicas::ongoing(target)))
            }
        }
    }

    /// Throttles the movement of `replicas` of topic `name` to `rate` on every broker.
    async fn throttle(
        &self,
        name: &str,
        rate: u64,
        replicas: &Throttle,
        brokers: &[replicas::Broker],
    ) -> Result<(), TopicError> {
        let set = |name: &str, value: &str| AlterConfigOp::Set {
            name: name.to_owned(),
            value: value.to_owned(),
        };
        self.kafka
            .alter(
                name,
                vec![
                    set(LEADER_THROTTLED_REPLICAS, &replicas.leaders),
                    set(FOLLOWER_THROTTLED_REPLICAS, &replicas.followers),
                ],
            )
            .await?;
        let rate = rate.to_string();
        self.kafka
            .alter_brokers(on_every_broker(
                brokers,
                &[
                    set(LEADER_THROTTLED_RATE, &rate),
                    set(FOLLOWER_THROTTLED_RATE, &rate),
                ],
            ))
            .await
    }

    /// Removes the throttle of topic `name`, and the brokers' rates unless Kafka still
    /// reassigns a partition (of any topic).
    async fn unthrottle(&self, name: &str) -> Result<(), TopicError> {
        let delete = |name: &str| AlterConfigOp::Delete {
            name: name.to_owned(),
        };
        self.kafka
            .alter(
                name,
                vec![
                    delete(LEADER_THROTTLED_REPLICAS),
                    delete(FOLLOWER_THROTTLED_REPLICAS),
                ],
            )
            .await?;
        if self.kafka.any_reassignment().await? {
            tracing::info!(
                topic = name,
                "other reassignments run: the brokers' throttle rates stay"
            );
            return Ok(());
        }
        let brokers = self.kafka.brokers().await?;
        self.kafka
            .alter_brokers(on_every_broker(
                &brokers,
                &[
                    delete(LEADER_THROTTLED_RATE),
                    delete(FOLLOWER_THROTTLED_RATE),
                ],
            ))
            .await
    }

    async fn cruise_control_step(
        &self,
        client: &CruiseControlClient,
        name: &str,
        actual: &ActualTopic,
        target: i32,
        previous: Option<&ReplicasChangeStatus>,
    ) -> Result<Option<ReplicasChangeStatus>, TopicError> {
        let size = usize::try_from(target).unwrap_or_default();
        let at_target = actual
            .assignment
            .iter()
            .all(|partition| partition.replicas.len() == size);
        let answer = match CruiseControlStep::next(previous, target, at_target) {
            CruiseControlStep::Done => return Ok(None),
            CruiseControlStep::Request => {
                let brokers = self.kafka.brokers().await?.len();
                replicas::check_target(target, brokers).map_err(not_supported)?;
                let pattern = regex_of(name);
                match client.change_replication_factor(&pattern, target).await {
                    Ok(
                        ProposalAnswer::Ready {
                            task_id: Some(task_id),
                            ..
                        }
                        | ProposalAnswer::InProgress { task_id },
                    ) => CruiseControlAnswer::Running(task_id),
                    Ok(ProposalAnswer::Ready { task_id: None, .. }) => CruiseControlAnswer::Failed(
                        "Cruise Control answered without a User-Task-ID".to_owned(),
                    ),
                    Err(error) => CruiseControlAnswer::Failed(error.to_string()),
                }
            }
            CruiseControlStep::Poll { session_id } => match client.user_task(&session_id).await {
                Ok(Some(task)) => match task.status {
                    TaskStatus::Active | TaskStatus::InExecution => {
                        CruiseControlAnswer::Running(session_id)
                    }
                    TaskStatus::Completed => CruiseControlAnswer::Completed,
                    TaskStatus::CompletedWithError => CruiseControlAnswer::CompletedWithError,
                },
                Ok(None) => CruiseControlAnswer::Unknown,
                Err(error) => CruiseControlAnswer::Failed(error.to_string()),
            },
        };
        if let CruiseControlAnswer::Failed(error) = &answer {
            tracing::warn!(topic = name, %error, "replication factor change through Cruise Control");
        }
        Ok(replicas::cruise_control_status(previous, target, answer))
    }
}

/// The config changes `ops` on every broker of `brokers`.
fn on_every_broker(
    brokers: &[replicas::Broker],
    ops: &[AlterConfigOp],
) -> BTreeMap<ConfigResource, Vec<AlterConfigOp>> {
    brokers
        .iter()
        .map(|broker| (ConfigResource::broker(broker.id), ops.to_vec()))
        .collect()
}

/// The error of a change that cannot be made.
fn not_supported(unsupported: crate::model::Unsupported) -> TopicError {
    TopicError::NotSupported(unsupported.to_string())
}

/// Whether the reconciliation should look again soon: the change runs, or waits to be
/// asked for again (a failed one waits for the periodic reconciliation).
pub fn needs_recheck(status: &ReplicasChangeStatus) -> bool {
    status.state == Some(ReplicasChangeState::Ongoing) || status.message.is_none()
}

/// A regular expression matching exactly topic `name` (topic names are letters, digits,
/// `.`, `_` and `-`, of which only `.` is special).
fn regex_of(name: &str) -> String {
    format!("^{}$", name.replace('.', "\\."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_name_is_matched_exactly() {
        assert_eq!(regex_of("my.topic-1"), "^my\\.topic-1$");
    }

    #[test]
    fn running_and_unsent_changes_are_looked_at_again_soon() {
        let mut status = ReplicasChangeStatus {
            target_replicas: Some(3),
            state: Some(ReplicasChangeState::Pending),
            message: None,
            session_id: None,
        };
        assert!(needs_recheck(&status));
        status.message = Some("refused".into());
        assert!(!needs_recheck(&status));
        status.state = Some(ReplicasChangeState::Ongoing);
        assert!(needs_recheck(&status));
    }
}
