//! Whether restarting nodes keeps the cluster available: the KRaft quorum for controllers,
//! `min.insync.replicas` for brokers. Pure functions over what the admin API described.

use std::collections::{BTreeMap, BTreeSet};

use strimzi_kafka_model::{QuorumInfo, QuorumReplica, TopicDescription};

/// Kafka's default of `controller.quorum.fetch.timeout.ms`.
pub const DEFAULT_QUORUM_FETCH_TIMEOUT_MS: i64 = 2000;

/// Why restarting controller `node_id` now would leave the metadata quorum without a
/// majority, or `None` when it would not.
///
/// A voter counts as caught up when its last catch-up is within `fetch_timeout_ms` of the
/// leader's (the leader itself always is). Without `node_id`, a majority of all voters must
/// remain caught up. A quorum of a single voter cannot survive any restart; it is restarted
/// all the same, as there is no other way to change it.
pub fn quorum_blocker(node_id: i32, quorum: &QuorumInfo, fetch_timeout_ms: i64) -> Option<String> {
    let voters = quorum.voters.len();
    if voters <= 1 {
        return None;
    }
    if quorum
        .voters
        .iter()
        .find(|voter| voter.replica_id == quorum.leader_id)
        .is_none_or(|leader| leader.last_caught_up_timestamp < 0)
    {
        return Some(format!(
            "the quorum leader {} reports no catch-up time",
            quorum.leader_id
        ));
    }
    let caught_up: BTreeSet<i32> = caught_up_voters(quorum, fetch_timeout_ms)
        .into_iter()
        .filter(|&id| id != node_id)
        .collect();
    let majority = voters / 2 + 1;
    (caught_up.len() < majority).then(|| {
        format!(
            "restarting controller {node_id} would leave {} of {voters} voters caught up with the leader (caught up: {caught_up:?}), fewer than the majority of {majority}",
            caught_up.len()
        )
    })
}

/// The voters of `quorum` caught up with its leader: the leader itself, and each voter whose
/// last catch-up is within `fetch_timeout_ms` of the leader's (none but the leader when the
/// leader reports no catch-up time).
pub fn caught_up_voters(quorum: &QuorumInfo, fetch_timeout_ms: i64) -> BTreeSet<i32> {
    quorum
        .voters
        .iter()
        .filter(|voter| {
            voter.replica_id == quorum.leader_id || is_caught_up(quorum, voter, fetch_timeout_ms)
        })
        .map(|voter| voter.replica_id)
        .collect()
}

/// Whether `replica` (a voter or an observer of `quorum`) last caught up within
/// `fetch_timeout_ms` of the leader's last catch-up (never when the leader reports none).
pub fn is_caught_up(quorum: &QuorumInfo, replica: &QuorumReplica, fetch_timeout_ms: i64) -> bool {
    let leader_caught_up = quorum
        .voters
        .iter()
        .find(|voter| voter.replica_id == quorum.leader_id)
        .map_or(-1, |leader| leader.last_caught_up_timestamp);
    leader_caught_up >= 0
        && replica.last_caught_up_timestamp >= 0
        && leader_caught_up - replica.last_caught_up_timestamp < fetch_timeout_ms
}

/// The partitions whose availability restarting all of `brokers` at once would harm, as
/// Strimzi judges it for one broker, described; empty when the restart is safe.
///
/// For each partition with more replicas than its `min.insync.replicas` (from `min_isr` by
/// topic, else `default_min_isr`): it blocks when it is already below its minimum and one of
/// `brokers` holds a replica, or when the in-sync replicas left after the restart would fall
/// below the minimum. A partition whose replicas are not more than its minimum cannot stay
/// writable through any restart and does not block.
pub fn availability_blockers(
    brokers: &BTreeSet<i32>,
    topics: &[TopicDescription],
    min_isr: &BTreeMap<String, i32>,
    default_min_isr: i32,
) -> Vec<String> {
    let mut blockers = Vec::new();
    for topic in topics {
        let minimum = min_isr.get(&topic.name).copied().unwrap_or(default_min_isr);
        for partition in &topic.partitions {
            let replicas = partition.replicas.len();
            if replicas <= usize::try_from(minimum).unwrap_or(0) {
                continue;
            }
            let hosts = partition.replicas.iter().any(|id| brokers.contains(id));
            let in_sync = partition.isr.len();
            let remaining = partition
                .isr
                .iter()
                .filter(|id| !brokers.contains(id))
                .count();
            let minimum_count = usize::try_from(minimum).unwrap_or(0);
            if in_sync < minimum_count && hosts {
                blockers.push(format!(
                    "{}-{} is already under its min.insync.replicas={minimum} (in sync: {:?})",
                    topic.name, partition.partition, partition.isr
                ));
            } else if in_sync >= minimum_count && remaining < minimum_count {
                blockers.push(format!(
                    "{}-{} would have {remaining} in-sync replica(s), under its min.insync.replicas={minimum} (in sync: {:?})",
                    topic.name, partition.partition, partition.isr
                ));
            }
        }
    }
    blockers
}

#[cfg(test)]
mod tests {
    use super::*;
    use strimzi_kafka_model::{PartitionDescription, QuorumReplica};

    fn quorum(leader: i32, caught_up: &[(i32, i64)]) -> QuorumInfo {
        QuorumInfo {
            leader_id: leader,
            leader_epoch: 1,
            high_watermark: 100,
            voters: caught_up
                .iter()
                .map(|&(replica_id, at)| QuorumReplica {
                    replica_id,
                    directory_id: Default::default(),
                    log_end_offset: 100,
                    last_fetch_timestamp: at,
                    last_caught_up_timestamp: at,
                })
                .collect(),
            observers: Vec::new(),
        }
    }

    #[test]
    fn a_controller_rolls_only_when_a_majority_stays_caught_up_without_it() {
        let healthy = quorum(1, &[(1, 10_000), (2, 9_500), (3, 9_000)]);
        assert_eq!(quorum_blocker(2, &healthy, 2000), None);
        assert_eq!(quorum_blocker(1, &healthy, 2000), None);
        // Controller 3 lags: without 2 only the leader is caught up.
        let lagging = quorum(1, &[(1, 10_000), (2, 9_500), (3, 5_000)]);
        let blocker = quorum_blocker(2, &lagging, 2000).unwrap();
        assert!(blocker.contains("1 of 3 voters"), "{blocker}");
        // Restarting the lagging one itself is fine.
        assert_eq!(quorum_blocker(3, &lagging, 2000), None);
        // A single controller is always restarted; a leader without catch-up time is not.
        assert_eq!(quorum_blocker(1, &quorum(1, &[(1, 10_000)]), 2000), None);
        let unknown = quorum(1, &[(1, -1), (2, 9_500), (3, 9_000)]);
        assert!(quorum_blocker(2, &unknown, 2000).is_some());
    }

    fn topic(name: &str, partitions: &[(&[i32], &[i32])]) -> TopicDescription {
        TopicDescription {
            name: name.to_owned(),
            topic_id: Default::default(),
            internal: false,
            partitions: partitions
                .iter()
                .enumerate()
                .map(|(index, (replicas, isr))| PartitionDescription {
                    partition: i32::try_from(index).unwrap_or_default(),
                    leader: isr.first().copied().unwrap_or(-1),
                    replicas: replicas.to_vec(),
                    isr: isr.to_vec(),
                })
                .collect(),
        }
    }

    fn brokers(ids: &[i32]) -> BTreeSet<i32> {
        ids.iter().copied().collect()
    }

    #[test]
    fn a_broker_rolls_only_when_every_partition_keeps_its_min_insync_replicas() {
        let topics = [topic(
            "orders",
            &[(&[3, 4, 5], &[3, 4, 5]), (&[4, 5, 3], &[4, 5])],
        )];
        let min_isr = BTreeMap::from([("orders".to_owned(), 2)]);
        // Broker 3 is out of sync on partition 1 and in sync on partition 0 with three.
        assert!(availability_blockers(&brokers(&[3]), &topics, &min_isr, 1).is_empty());
        // Broker 4 would leave partition 1 with only broker 5.
        let blockers = availability_blockers(&brokers(&[4]), &topics, &min_isr, 1);
        assert_eq!(blockers.len(), 1, "{blockers:?}");
        assert!(
            blockers[0].starts_with("orders-1 would have 1"),
            "{blockers:?}"
        );
        // Two at once break partition 0 too.
        assert_eq!(
            availability_blockers(&brokers(&[3, 5]), &topics, &min_isr, 1).len(),
            2
        );
        // The broker default applies to topics without their own value.
        assert!(availability_blockers(&brokers(&[4]), &topics, &BTreeMap::new(), 1).is_empty());
    }

    #[test]
    fn partitions_already_under_their_minimum_block_their_replicas_only() {
        let topics = [topic("t", &[(&[3, 4, 5], &[3])])];
        let min_isr = BTreeMap::from([("t".to_owned(), 2)]);
        let blockers = availability_blockers(&brokers(&[4]), &topics, &min_isr, 1);
        assert!(blockers[0].contains("already under"), "{blockers:?}");
        assert!(availability_blockers(&brokers(&[6]), &topics, &min_isr, 1).is_empty());
        // Replicas not above the minimum: never writable through a restart, not a blocker.
        let small = [topic("s", &[(&[3, 4], &[3, 4])])];
        let min_isr = BTreeMap::from([("s".to_owned(), 2)]);
        assert!(availability_blockers(&brokers(&[3]), &small, &min_isr, 1).is_empty());
    }
}
