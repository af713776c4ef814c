//! Carries out a proposal through Kafka's admin API: partition reassignments
//! (AlterPartitionReassignments) in batches, each watched with ListPartitionReassignments
//! until done, with replication throttles set before and removed after when asked.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use strimzi_operator_common::kafka::{
    AdminError, AlterConfigOp, ConfigResource, KafkaAdmin, ReassignmentChange,
};

use crate::model::{Movement, Proposal};
use crate::service::{StandIn, TaskStatus, now_ms};

/// How to carry out a proposal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionOptions {
    /// Most replica movements into or out of one broker at a time.
    pub movements_per_broker: usize,
    /// Replication throttle in bytes per second while moving.
    pub throttle: Option<i64>,
}

/// Broker configs of the replication throttle rate.
const RATE_CONFIGS: [&str; 2] = [
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
];
/// Topic configs listing the throttled replicas.
const LEADER_REPLICAS: &str = "leader.replication.throttled.replicas";
const FOLLOWER_REPLICAS: &str = "follower.replication.throttled.replicas";

/// Splits `movements` into batches in which each broker gains or loses at most `per_broker`
/// replicas; leadership-only movements go in the first batch (pure).
pub fn batches(movements: &[Movement], per_broker: usize) -> Vec<Vec<Movement>> {
    let per_broker = per_broker.max(1);
    let mut pending: Vec<Movement> = movements.to_vec();
    let mut batches = Vec::new();
    while !pending.is_empty() {
        let mut load: BTreeMap<i32, usize> = BTreeMap::new();
        let mut batch = Vec::new();
        let mut rest = Vec::new();
        for movement in pending {
            let touched: BTreeSet<i32> = movement
                .new_replicas
                .iter()
                .filter(|b| !movement.old_replicas.contains(b))
                .chain(
                    movement
                        .old_replicas
                        .iter()
                        .filter(|b| !movement.new_replicas.contains(b)),
                )
                .copied()
                .collect();
            let fits = touched
                .iter()
                .all(|broker| load.get(broker).copied().unwrap_or(0) < per_broker);
            if fits || batch.is_empty() {
                for broker in touched {
                    *load.entry(broker).or_default() += 1;
                }
                batch.push(movement);
            } else {
                rest.push(movement);
            }
        }
        batches.push(batch);
        pending = rest;
    }
    batches
}

/// Carries out `proposal` for task `task_id`, then marks the task and ends the execution.
pub async fn execute(
    standin: Arc<StandIn>,
    task_id: String,
    proposal: Proposal,
    options: ExecutionOptions,
) {
    let result = run(&standin, &proposal, &options).await;
    let admin = standin.admin.as_ref();
    if options.throttle.is_some()
        && let Err(error) = throttle(admin, &proposal, None).await
    {
        tracing::warn!(%error, "removing the replication throttle failed");
    }
    let status = match &result {
        Ok(()) => TaskStatus::Completed,
        Err(error) => {
            tracing::error!(task = task_id, %error, "execution failed");
            TaskStatus::CompletedWithError
        }
    };
    standin.update_task(&task_id, |task| {
        task.status = status;
        task.finished_ms = Some(now_ms());
    });
    standin.end_execution();
    tracing::info!(task = task_id, status = status.name(), "execution finished");
}

async fn run(
    standin: &StandIn,
    proposal: &Proposal,
    options: &ExecutionOptions,
) -> Result<(), AdminError> {
    let admin = standin.admin.as_ref();
    if let Some(rate) = options.throttle {
        throttle(admin, proposal, Some(rate)).await?;
    }
    for batch in batches(&proposal.movements, options.movements_per_broker) {
        if standin.execution().is_some_and(|e| e.stop_requested) {
            tracing::info!("execution stopped on request");
            break;
        }
        let changes: Vec<ReassignmentChange> = batch
            .iter()
            .map(|movement| ReassignmentChange {
                topic: movement.topic.clone(),
                partition: movement.partition,
                replicas: Some(movement.new_replicas.clone()),
            })
            .collect();
        standin.update_execution(|execution| execution.in_progress = batch.len());
        let results = admin.alter_partition_reassignments(&changes).await?;
        for ((topic, partition), result) in results {
            if let Err(error) = result {
                return Err(AdminError::Protocol(format!(
                    "reassigning {topic}-{partition}: {error}"
                )));
            }
        }
        let watched: BTreeMap<String, Vec<i32>> =
            batch.iter().fold(BTreeMap::new(), |mut topics, movement| {
                topics
                    .entry(movement.topic.clone())
                    .or_insert_with(Vec::new)
                    .push(movement.partition);
                topics
            });
        loop {
            let ongoing = admin.list_partition_reassignments(Some(&watched)).await?;
            if ongoing.is_empty() {
                break;
            }
            standin.update_execution(|execution| execution.in_progress = ongoing.len());
            tokio::time::sleep(standin.settings.progress_check_interval).await;
        }
        // As Cruise Control's executor, a movement is done when the metadata shows it: the
        // brokers learn the new replicas shortly after the controller ends the reassignment.
        while !metadata_shows(admin, &batch).await? {
            tokio::time::sleep(standin.settings.progress_check_interval).await;
        }
        let copied: u64 = batch.iter().map(Movement::data_to_move).sum();
        standin.update_execution(|execution| {
            execution.finished += batch.len();
            execution.finished_bytes += copied;
            execution.in_progress = 0;
        });
    }
    Ok(())
}

/// Whether the brokers' metadata has the new replicas of every movement of `batch`; a
/// partition no longer there (its topic deleted meanwhile) has nothing left to move.
async fn metadata_shows(admin: &dyn KafkaAdmin, batch: &[Movement]) -> Result<bool, AdminError> {
    let topics: Vec<String> = batch
        .iter()
        .map(|movement| movement.topic.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let described = admin.describe_topics(&topics).await?;
    Ok(batch.iter().all(|movement| {
        described
            .get(&movement.topic)
            .and_then(|topic| topic.as_ref().ok())
            .and_then(|topic| {
                topic
                    .partitions
                    .iter()
                    .find(|p| p.partition == movement.partition)
            })
            .is_none_or(|partition| {
                partition.replicas.iter().collect::<BTreeSet<_>>()
                    == movement.new_replicas.iter().collect::<BTreeSet<_>>()
            })
    }))
}

/// Sets (`Some(rate)`) or removes (`None`) the replication throttle of the brokers and
/// partitions `proposal` moves.
async fn throttle(
    admin: &dyn KafkaAdmin,
    proposal: &Proposal,
    rate: Option<i64>,
) -> Result<(), AdminError> {
    let mut changes: BTreeMap<ConfigResource, Vec<AlterConfigOp>> = BTreeMap::new();
    let mut brokers: BTreeSet<i32> = BTreeSet::new();
    let mut leaders: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut followers: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for movement in &proposal.movements {
        brokers.extend(
            movement
                .old_replicas
                .iter()
                .chain(&movement.new_replicas)
                .copied(),
        );
        for broker in &movement.old_replicas {
            leaders
                .entry(&movement.topic)
                .or_default()
                .push(format!("{}:{broker}", movement.partition));
        }
        for broker in movement
            .new_replicas
            .iter()
            .filter(|b| !movement.old_replicas.contains(b))
        {
            followers
                .entry(&movement.topic)
                .or_default()
                .push(format!("{}:{broker}", movement.partition));
        }
    }
    for broker in brokers {
        let ops = RATE_CONFIGS
            .iter()
            .map(|name| match rate {
                Some(rate) => AlterConfigOp::Set {
                    name: (*name).to_owned(),
                    value: rate.to_string(),
                },
                None => AlterConfigOp::Delete {
                    name: (*name).to_owned(),
                },
            })
            .collect();
        changes.insert(ConfigResource::broker(broker), ops);
    }
    let topics: BTreeSet<&str> = leaders.keys().chain(followers.keys()).copied().collect();
    for topic in topics {
        let ops = [(LEADER_REPLICAS, &leaders), (FOLLOWER_REPLICAS, &followers)]
            .into_iter()
            .map(|(name, replicas)| match rate {
                Some(_) => AlterConfigOp::Set {
                    name: name.to_owned(),
                    value: replicas
                        .get(topic)
                        .map(|list| list.join(","))
                        .unwrap_or_default(),
                },
                None => AlterConfigOp::Delete {
                    name: name.to_owned(),
                },
            })
            .collect();
        changes.insert(ConfigResource::topic(topic), ops);
    }
    let results = admin.incremental_alter_configs(&changes, false).await?;
    for (resource, result) in results {
        if let Err(error) = result {
            return Err(AdminError::Protocol(format!(
                "throttle on {:?} {}: {error}",
                resource.resource_type, resource.name
            )));
        }
    }
    Ok(())
}
