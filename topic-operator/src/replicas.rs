//! Replication-factor changes, as pure code: where the replicas of each partition go
//! ([`place`]), which replicas are throttled while they move ([`Throttle::of`]), and how
//! `status.replicasChange` moves on, with partition reassignments of the operator's own
//! ([`ReassignmentState`]) or with Cruise Control ([`CruiseControlStep`]).

use std::collections::{BTreeMap, BTreeSet};

use strimzi_api::topic::{ReplicasChangeState, ReplicasChangeStatus};
use strimzi_operator_common::kafka::PartitionDescription;

use crate::model::Unsupported;

/// The broker config bounding the rate of throttled leader replicas, bytes per second.
pub const LEADER_THROTTLED_RATE: &str = "leader.replication.throttled.rate";
/// The broker config bounding the rate of throttled follower replicas, bytes per second.
pub const FOLLOWER_THROTTLED_RATE: &str = "follower.replication.throttled.rate";

/// A live broker, as far as placement goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    /// The node id.
    pub id: i32,
    /// Its `broker.rack`, if set.
    pub rack: Option<String>,
}

/// The new replica list of every partition of `partitions` whose replica count is not
/// `target`; partitions that have it already are left out.
///
/// Replicas that stay keep their order, with the current leader first: shrinking drops the
/// replicas at the end of the list, never the leader, so no leadership moves. Growing adds,
/// one at a time, the broker that is not yet a replica of the partition and comes first by:
/// its rack not used by the partition yet (brokers without a rack count as a rack of their
/// own), fewest replicas of this topic, smallest id.
pub fn place(
    partitions: &[PartitionDescription],
    brokers: &[Broker],
    target: i32,
) -> Result<BTreeMap<i32, Vec<i32>>, Unsupported> {
    let size = check_target(target, brokers.len())?;
    let rack_of: BTreeMap<i32, Option<&str>> = brokers
        .iter()
        .map(|broker| (broker.id, broker.rack.as_deref()))
        .collect();
    let mut load: BTreeMap<i32, usize> = brokers.iter().map(|broker| (broker.id, 0)).collect();
    let mut placed: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    // Shrink first, so that the load the additions see is the load that stays.
    for partition in partitions {
        let mut replicas = leader_first(partition);
        replicas.truncate(size);
        for replica in &replicas {
            *load.entry(*replica).or_default() += 1;
        }
        placed.insert(partition.partition, replicas);
    }
    for replicas in placed.values_mut() {
        while replicas.len() < size {
            let used_racks: BTreeSet<&str> = replicas
                .iter()
                .filter_map(|replica| rack_of.get(replica).copied().flatten())
                .collect();
            let Some(next) = brokers
                .iter()
                .filter(|broker| !replicas.contains(&broker.id))
                .min_by_key(|broker| {
                    let rack_used = broker
                        .rack
                        .as_deref()
                        .is_some_and(|rack| used_racks.contains(rack));
                    (
                        rack_used,
                        load.get(&broker.id).copied().unwrap_or_default(),
                        broker.id,
                    )
                })
            else {
                break;
            };
            *load.entry(next.id).or_default() += 1;
            replicas.push(next.id);
        }
    }
    Ok(partitions
        .iter()
        .filter(|partition| partition.replicas.len() != size)
        .filter_map(|partition| {
            placed
                .remove(&partition.partition)
                .map(|replicas| (partition.partition, replicas))
        })
        .collect())
}

/// `target` as a replica count, if a cluster of `brokers` brokers can have it.
pub fn check_target(target: i32, brokers: usize) -> Result<usize, Unsupported> {
    usize::try_from(target)
        .ok()
        .filter(|size| (1..=brokers).contains(size))
        .ok_or(Unsupported::ReplicationFactorTooLarge {
            requested: target,
            brokers,
        })
}

/// The status of a change to `target` replicas in progress.
pub fn ongoing(target: i32) -> ReplicasChangeStatus {
    ReplicasChangeStatus {
        target_replicas: Some(target),
        state: Some(ReplicasChangeState::Ongoing),
        message: None,
        session_id: None,
    }
}

/// The replicas of `partition` with the current leader first (when it is a replica).
fn leader_first(partition: &PartitionDescription) -> Vec<i32> {
    let mut replicas = Vec::with_capacity(partition.replicas.len());
    if partition.replicas.contains(&partition.leader) {
        replicas.push(partition.leader);
    }
    replicas.extend(
        partition
            .replicas
            .iter()
            .filter(|replica| **replica != partition.leader),
    );
    replicas
}

/// The throttled replicas of a topic while its partitions move, as the topic configs
/// [`crate::model::LEADER_THROTTLED_REPLICAS`] and
/// [`crate::model::FOLLOWER_THROTTLED_REPLICAS`] take them (`partition:broker,...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Throttle {
    /// The replicas that send data: the current replicas of each moving partition.
    pub leaders: String,
    /// The replicas that fetch data: the new replicas of each moving partition.
    pub followers: String,
}

impl Throttle {
    /// The throttle of moving `partitions` to `targets`; `None` when no replica is added
    /// (shrinking copies no data).
    pub fn of(
        partitions: &[PartitionDescription],
        targets: &BTreeMap<i32, Vec<i32>>,
    ) -> Option<Self> {
        let mut leaders = Vec::new();
        let mut followers = Vec::new();
        for partition in partitions {
            let Some(target) = targets.get(&partition.partition) else {
                continue;
            };
            let added: Vec<i32> = target
                .iter()
                .copied()
                .filter(|replica| !partition.replicas.contains(replica))
                .collect();
            if added.is_empty() {
                continue;
            }
            leaders.extend(
                partition
                    .replicas
                    .iter()
                    .map(|replica| format!("{}:{replica}", partition.partition)),
            );
            followers.extend(
                added
                    .iter()
                    .map(|replica| format!("{}:{replica}", partition.partition)),
            );
        }
        (!followers.is_empty()).then(|| Self {
            leaders: leaders.join(","),
            followers: followers.join(","),
        })
    }
}

/// Where a change made with partition reassignments stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReassignmentState {
    /// Kafka lists a reassignment of the topic: follow it (`ongoing`).
    Running,
    /// Nothing listed, and every partition has the target count: the change is complete.
    Done,
    /// Nothing listed, and some partitions are not at the target: submit them.
    ToSubmit,
}

impl ReassignmentState {
    /// The state of a change to `target` replicas of `partitions`, `reassigning` saying
    /// whether Kafka lists a reassignment of one of them.
    pub fn of(target: i32, partitions: &[PartitionDescription], reassigning: bool) -> Self {
        let size = usize::try_from(target).unwrap_or_default();
        if reassigning {
            Self::Running
        } else if partitions
            .iter()
            .all(|partition| partition.replicas.len() == size)
        {
            Self::Done
        } else {
            Self::ToSubmit
        }
    }
}

/// What to do next about a replication-factor change made with Cruise Control, from the
/// previous `status.replicasChange` and whether Kafka has the target already.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CruiseControlStep {
    /// Nothing to change: the status has no `replicasChange`.
    Done,
    /// Ask Cruise Control for the change (`pending`, or retry one that failed).
    Request,
    /// Ask Cruise Control how its task `session_id` is doing.
    Poll {
        /// Cruise Control's User-Task-ID.
        session_id: String,
    },
}

impl CruiseControlStep {
    /// The next step towards `target` replicas; `at_target` says whether every partition
    /// has them already.
    pub fn next(previous: Option<&ReplicasChangeStatus>, target: i32, at_target: bool) -> Self {
        match previous {
            Some(ReplicasChangeStatus {
                state: Some(ReplicasChangeState::Ongoing),
                session_id: Some(session_id),
                target_replicas,
                ..
            }) if *target_replicas == Some(target) => Self::Poll {
                session_id: session_id.clone(),
            },
            _ if at_target => Self::Done,
            _ => Self::Request,
        }
    }
}

/// What Cruise Control answered about a change, as the status needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CruiseControlAnswer {
    /// The task runs (or was just created) under this User-Task-ID.
    Running(String),
    /// The task finished.
    Completed,
    /// The task finished with an error.
    CompletedWithError,
    /// Cruise Control does not know the task (it restarted, or forgot the task).
    Unknown,
    /// The request failed; Cruise Control's error.
    Failed(String),
}

/// `status.replicasChange` after Cruise Control's `answer` about the change to `target`
/// whose status was `previous`: `ongoing` with the task's ID while it runs, removed once it
/// completed, `pending` again when Cruise Control forgot the task or its task failed (with
/// `message` saying so); a failed request keeps the state it had (`pending` for a new
/// request) and says why in `message`.
pub fn cruise_control_status(
    previous: Option<&ReplicasChangeStatus>,
    target: i32,
    answer: CruiseControlAnswer,
) -> Option<ReplicasChangeStatus> {
    let pending = || ReplicasChangeStatus {
        target_replicas: Some(target),
        state: Some(ReplicasChangeState::Pending),
        message: None,
        session_id: None,
    };
    let current = previous
        .filter(|previous| previous.target_replicas == Some(target))
        .cloned()
        .unwrap_or_else(pending);
    let failed = |message: String| ReplicasChangeStatus {
        message: Some(message),
        ..current.clone()
    };
    match answer {
        CruiseControlAnswer::Running(session_id) => Some(ReplicasChangeStatus {
            target_replicas: Some(target),
            state: Some(ReplicasChangeState::Ongoing),
            message: None,
            session_id: Some(session_id),
        }),
        CruiseControlAnswer::Completed => None,
        CruiseControlAnswer::CompletedWithError => Some(ReplicasChangeStatus {
            message: Some("Replicas change completed with error in Cruise Control".to_owned()),
            ..pending()
        }),
        CruiseControlAnswer::Unknown => Some(pending()),
        CruiseControlAnswer::Failed(error) => {
            Some(failed(format!("Replicas change failed: {error}")))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn partition(partition: i32, leader: i32, replicas: &[i32]) -> PartitionDescription {
        PartitionDescription {
            partition,
            leader,
            replicas: replicas.to_vec(),
            isr: replicas.to_vec(),
        }
    }

    fn brokers(racks: &[(i32, Option<&str>)]) -> Vec<Broker> {
        racks
            .iter()
            .map(|(id, rack)| Broker {
                id: *id,
                rack: rack.map(str::to_owned),
            })
            .collect()
    }

    #[test]
    fn growing_keeps_the_replicas_and_spreads_the_new_ones() {
        let partitions = [
            partition(0, 1, &[1]),
            partition(1, 2, &[2]),
            partition(2, 3, &[3]),
        ];
        let placed = place(&partitions, &brokers(&[(1, None), (2, None), (3, None)]), 3).unwrap();
        assert_eq!(placed[&0], vec![1, 2, 3]);
        assert_eq!(placed[&1], vec![2, 1, 3]);
        assert_eq!(placed[&2], vec![3, 1, 2]);
        let two = place(&partitions, &brokers(&[(1, None), (2, None), (3, None)]), 2).unwrap();
        // Least-loaded at the time of each choice, ties to the smallest id.
        assert_eq!(two[&0], vec![1, 2]);
        assert_eq!(two[&1], vec![2, 1]);
        assert_eq!(two[&2], vec![3, 1]);
    }

    #[test]
    fn growing_prefers_racks_the_partition_does_not_use() {
        let cluster = brokers(&[
            (1, Some("a")),
            (2, Some("a")),
            (3, Some("b")),
            (4, Some("c")),
        ]);
        let placed = place(&[partition(0, 1, &[1])], &cluster, 3).unwrap();
        assert_eq!(placed[&0], vec![1, 3, 4]);
        let placed = place(&[partition(0, 3, &[3])], &cluster, 2).unwrap();
        assert_eq!(placed[&0], vec![3, 1], "rack a, smallest id");
    }

    #[test]
    fn shrinking_keeps_the_leader_and_drops_the_last_replicas() {
        let partitions = [partition(0, 3, &[1, 2, 3]), partition(1, 2, &[2, 3, 1])];
        let cluster = brokers(&[(1, None), (2, None), (3, None)]);
        let placed = place(&partitions, &cluster, 2).unwrap();
        assert_eq!(placed[&0], vec![3, 1]);
        assert_eq!(placed[&1], vec![2, 3]);
        let placed = place(&partitions, &cluster, 1).unwrap();
        assert_eq!(placed[&0], vec![3]);
        assert_eq!(placed[&1], vec![2]);
    }

    #[test]
    fn partitions_at_the_target_are_left_alone() {
        let partitions = [partition(0, 1, &[1, 2]), partition(1, 2, &[2])];
        let placed = place(&partitions, &brokers(&[(1, None), (2, None)]), 2).unwrap();
        assert_eq!(placed, BTreeMap::from([(1, vec![2, 1])]));
    }

    #[test]
    fn more_replicas_than_brokers_is_refused() {
        let error = place(
            &[partition(0, 1, &[1])],
            &brokers(&[(1, None), (2, None), (3, None)]),
            4,
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "Replication factor 4 is larger than the 3 brokers"
        );
        assert!(place(&[partition(0, 1, &[1])], &brokers(&[(1, None)]), 0).is_err());
    }

    #[test]
    fn only_added_replicas_are_throttled() {
        let partitions = [partition(0, 1, &[1]), partition(1, 2, &[2, 3])];
        let targets = BTreeMap::from([(0, vec![1, 2, 3]), (1, vec![2])]);
        let throttle = Throttle::of(&partitions, &targets).unwrap();
        assert_eq!(throttle.leaders, "0:1");
        assert_eq!(throttle.followers, "0:2,0:3");
        let shrink = BTreeMap::from([(1, vec![2])]);
        assert_eq!(Throttle::of(&partitions, &shrink), None);
    }

    #[test]
    fn a_reassignment_is_ongoing_while_listed_and_done_at_the_target() {
        let grown = [partition(0, 1, &[1, 2, 3])];
        assert_eq!(
            ReassignmentState::of(3, &grown, true),
            ReassignmentState::Running
        );
        assert_eq!(
            ReassignmentState::of(3, &grown, false),
            ReassignmentState::Done
        );
        assert_eq!(
            ReassignmentState::of(2, &grown, false),
            ReassignmentState::ToSubmit
        );
        let ongoing = ongoing(3);
        assert_eq!(ongoing.state, Some(ReplicasChangeState::Ongoing));
        assert_eq!(ongoing.target_replicas, Some(3));
    }

    fn status(state: ReplicasChangeState, session: Option<&str>) -> ReplicasChangeStatus {
        ReplicasChangeStatus {
            target_replicas: Some(3),
            state: Some(state),
            message: None,
            session_id: session.map(str::to_owned),
        }
    }

    #[test]
    fn cruise_control_steps() {
        let ongoing = status(ReplicasChangeState::Ongoing, Some("task-1"));
        assert_eq!(
            CruiseControlStep::next(None, 3, true),
            CruiseControlStep::Done
        );
        assert_eq!(
            CruiseControlStep::next(None, 3, false),
            CruiseControlStep::Request
        );
        assert_eq!(
            CruiseControlStep::next(Some(&ongoing), 3, true),
            CruiseControlStep::Poll {
                session_id: "task-1".into()
            },
            "a running task is followed even when the counts look right"
        );
        assert_eq!(
            CruiseControlStep::next(Some(&ongoing), 2, false),
            CruiseControlStep::Request,
            "a new target is a new request"
        );
        let failed = ReplicasChangeStatus {
            message: Some("boom".into()),
            ..status(ReplicasChangeState::Pending, None)
        };
        assert_eq!(
            CruiseControlStep::next(Some(&failed), 3, false),
            CruiseControlStep::Request
        );
        assert_eq!(
            CruiseControlStep::next(Some(&failed), 3, true),
            CruiseControlStep::Done
        );
    }

    #[test]
    fn cruise_control_status_transitions() {
        let requested =
            cruise_control_status(None, 3, CruiseControlAnswer::Running("task-1".into())).unwrap();
        assert_eq!(
            requested,
            status(ReplicasChangeState::Ongoing, Some("task-1"))
        );
        assert_eq!(
            cruise_control_status(Some(&requested), 3, CruiseControlAnswer::Completed),
            None
        );
        let failed = cruise_control_status(
            None,
            3,
            CruiseControlAnswer::Failed("Cruise Control refused topic_configuration".into()),
        )
        .unwrap();
        assert_eq!(failed.state, Some(ReplicasChangeState::Pending));
        assert_eq!(failed.target_replicas, Some(3));
        assert!(
            failed
                .message
                .unwrap()
                .contains("refused topic_configuration")
        );
        let errored =
            cruise_control_status(Some(&requested), 3, CruiseControlAnswer::CompletedWithError)
                .unwrap();
        assert_eq!(errored.state, Some(ReplicasChangeState::Pending));
        assert_eq!(errored.session_id, None);
        assert!(errored.message.is_some());
        let unreachable = cruise_control_status(
            Some(&requested),
            3,
            CruiseControlAnswer::Failed("connection refused".into()),
        )
        .unwrap();
        assert_eq!(unreachable.state, Some(ReplicasChangeState::Ongoing));
        assert_eq!(unreachable.session_id.as_deref(), Some("task-1"));
        let forgotten =
            cruise_control_status(Some(&requested), 3, CruiseControlAnswer::Unknown).unwrap();
        assert_eq!(forgotten, status(ReplicasChangeState::Pending, None));
    }
}
