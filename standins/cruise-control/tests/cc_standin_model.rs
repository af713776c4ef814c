//! The proposal computation as a pure function over synthetic clusters: balancing, adding
//! and removing brokers, rack awareness, leaders, excluded topics, replication factors, and
//! that the same input always gives the same proposal.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};

use strimzi_cruise_control_standin::executor::batches;
use strimzi_cruise_control_standin::model::{
    Broker, Cluster, ModelError, Partition, Request, Scope, propose,
};

/// A cluster of `brokers` (rack `r<id % racks>` when `racks > 0`) and topics given as
/// (name, replica lists).
fn cluster(brokers: &[i32], racks: i32, topics: &[(&str, Vec<Vec<i32>>)]) -> Cluster {
    Cluster {
        brokers: brokers
            .iter()
            .map(|id| {
                (
                    *id,
                    Broker {
                        rack: (racks > 0).then(|| format!("r{}", id % racks)),
                        host: format!("host-{id}"),
                    },
                )
            })
            .collect(),
        partitions: topics
            .iter()
            .flat_map(|(topic, partitions)| {
                partitions
                    .iter()
                    .enumerate()
                    .map(|(index, replicas)| Partition {
                        topic: (*topic).to_owned(),
                        partition: index as i32,
                        replicas: replicas.clone(),
                        leader: replicas[0],
                        size_bytes: 0,
                    })
            })
            .collect(),
    }
}

fn request(scope: Scope) -> Request {
    Request {
        scope,
        excluded_topics: BTreeSet::new(),
        rack_aware: true,
        balance_replicas: true,
        balance_leaders: true,
    }
}

fn spread(counts: &BTreeMap<i32, usize>) -> usize {
    counts.values().max().unwrap() - counts.values().min().unwrap()
}

fn assert_valid(cluster: &Cluster) {
    for partition in &cluster.partitions {
        let distinct: BTreeSet<i32> = partition.replicas.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            partition.replicas.len(),
            "{partition:?} has a broker twice"
        );
        assert!(
            partition
                .replicas
                .iter()
                .all(|id| cluster.brokers.contains_key(id)),
            "{partition:?} on an unknown broker"
        );
    }
}

#[test]
fn a_balanced_cluster_needs_no_movement() {
    let balanced = cluster(
        &[0, 1, 2],
        0,
        &[("t", vec![vec![0, 1], vec![1, 2], vec![2, 0]])],
    );
    let proposal = propose(&balanced, &request(Scope::Rebalance)).unwrap();
    assert!(proposal.movements.is_empty(), "{proposal:?}");
}

#[test]
fn a_rebalance_evens_out_replicas_and_leaders() {
    // Everything on brokers 0 and 1; broker 2 empty.
    let skewed = cluster(&[0, 1, 2], 0, &[("t", vec![vec![0, 1]; 6])]);
    let proposal = propose(&skewed, &request(Scope::Rebalance)).unwrap();
    let after = proposal.apply(&skewed);
    assert_valid(&after);
    let counts = after.counts();
    assert!(spread(&counts.replicas) <= 1, "{counts:?}");
    assert!(spread(&counts.leaders) <= 1, "{counts:?}");
    assert_eq!(proposal.replica_moves(), 4);
    assert!(proposal.leader_moves() > 0);
}

#[test]
fn adding_a_broker_moves_replicas_onto_it_only() {
    let before = cluster(
        &[0, 1, 2, 3],
        0,
        &[(
            "t",
            vec![
                vec![0, 1],
                vec![1, 2],
                vec![2, 0],
                vec![0, 1],
                vec![1, 2],
                vec![2, 0],
            ],
        )],
    );
    let proposal = propose(&before, &request(Scope::AddBrokers(BTreeSet::from([3])))).unwrap();
    let after = proposal.apply(&before);
    assert_valid(&after);
    assert_eq!(
        after.counts().replicas[&3],
        3,
        "the new broker gets its share"
    );
    for movement in &proposal.movements {
        let added: Vec<i32> = movement
            .new_replicas
            .iter()
            .copied()
            .filter(|id| !movement.old_replicas.contains(id))
            .collect();
        assert_eq!(added, [3], "only the new broker receives: {movement:?}");
    }
}

#[test]
fn removing_a_broker_moves_every_replica_off_it() {
    let before = cluster(
        &[0, 1, 2, 3],
        0,
        &[
            ("a", vec![vec![3, 0], vec![1, 3], vec![2, 3]]),
            ("b", vec![vec![3]; 3]),
        ],
    );
    let proposal = propose(&before, &request(Scope::RemoveBrokers(BTreeSet::from([3])))).unwrap();
    let after = proposal.apply(&before);
    assert_valid(&after);
    assert_eq!(after.counts().replicas[&3], 0);
    assert!(
        spread(
            &after
                .counts()
                .replicas
                .into_iter()
                .filter(|(id, _)| *id != 3)
                .collect()
        ) <= 1
    );
}

#[test]
fn removing_too_many_brokers_is_refused() {
    let before = cluster(&[0, 1, 2], 0, &[("t", vec![vec![0, 1, 2]])]);
    let error = propose(&before, &request(Scope::RemoveBrokers(BTreeSet::from([2])))).unwrap_err();
    assert!(
        matches!(
            error,
            ModelError::NotEnoughBrokers {
                needed: 3,
                available: 2,
                ..
            }
        ),
        "{error}"
    );
    let error = propose(&before, &request(Scope::AddBrokers(BTreeSet::from([9])))).unwrap_err();
    assert_eq!(error, ModelError::UnknownBroker(9));
}

#[test]
fn rack_awareness_separates_replicas_sharing_a_rack() {
    // Brokers 0 and 2 share rack r0; brokers 1 and 3 share r1.
    let before = cluster(&[0, 1, 2, 3], 2, &[("t", vec![vec![0, 2], vec![1, 3]])]);
    let proposal = propose(&before, &request(Scope::Rebalance)).unwrap();
    let after = proposal.apply(&before);
    for partition in &after.partitions {
        let racks: BTreeSet<i32> = partition.replicas.iter().map(|id| id % 2).collect();
        assert_eq!(racks.len(), 2, "{partition:?}");
    }
    // Without the goal, racks are not looked at.
    let mut unaware = request(Scope::Rebalance);
    unaware.rack_aware = false;
    assert!(propose(&before, &unaware).unwrap().movements.is_empty());
}

#[test]
fn excluded_topics_stay_where_they_are() {
    let before = cluster(
        &[0, 1],
        0,
        &[("keep", vec![vec![0]; 4]), ("move", vec![vec![0]; 4])],
    );
    let mut asked = request(Scope::Rebalance);
    asked.excluded_topics = BTreeSet::from(["keep".to_owned()]);
    let proposal = propose(&before, &asked).unwrap();
    assert!(proposal.movements.iter().all(|m| m.topic == "move"));
    assert_eq!(proposal.replica_moves(), 4);
}

#[test]
fn replication_factors_go_up_and_down_on_distinct_brokers() {
    let before = cluster(
        &[0, 1, 2],
        0,
        &[("t", vec![vec![0], vec![1], vec![2]]), ("u", vec![vec![0]])],
    );
    let up = propose(
        &before,
        &request(Scope::ReplicationFactor {
            topics: BTreeSet::from(["t".to_owned()]),
            factor: 3,
        }),
    )
    .unwrap();
    let three = up.apply(&before);
    assert_valid(&three);
    for partition in &three.partitions {
        let expected = if partition.topic == "t" { 3 } else { 1 };
        assert_eq!(partition.replicas.len(), expected, "{partition:?}");
    }
    let down = propose(
        &three,
        &request(Scope::ReplicationFactor {
            topics: BTreeSet::from(["t".to_owned()]),
            factor: 2,
        }),
    )
    .unwrap();
    let two = down.apply(&three);
    for (before, after) in three.partitions.iter().zip(&two.partitions) {
        if before.topic == "t" {
            assert_eq!(after.replicas.len(), 2);
            assert_eq!(after.replicas[0], before.replicas[0], "the leader stays");
        }
    }
    let error = propose(
        &before,
        &request(Scope::ReplicationFactor {
            topics: BTreeSet::from(["t".to_owned()]),
            factor: 4,
        }),
    )
    .unwrap_err();
    assert!(matches!(error, ModelError::NotEnoughBrokers { .. }));
}

#[test]
fn proposals_are_deterministic_and_converge() {
    let topics: Vec<(&str, Vec<Vec<i32>>)> = vec![
        ("a", (0..10).map(|i| vec![i % 2, (i + 1) % 2]).collect()),
        ("b", (0..7).map(|i| vec![0, 1, 2 + i % 2]).collect()),
    ];
    let before = cluster(&[0, 1, 2, 3, 4], 3, &topics);
    let first = propose(&before, &request(Scope::Rebalance)).unwrap();
    let second = propose(&before, &request(Scope::Rebalance)).unwrap();
    assert_eq!(first, second);
    let after = first.apply(&before);
    assert_valid(&after);
    assert!(
        spread(&after.counts().replicas) <= 1,
        "{:?}",
        after.counts()
    );
    // Balanced once, nothing left to move.
    assert!(
        propose(&after, &request(Scope::Rebalance))
            .unwrap()
            .movements
            .is_empty()
    );
}

#[test]
fn executions_are_batched_per_broker() {
    let before = cluster(&[0, 1, 2], 0, &[("t", vec![vec![0]; 9])]);
    let proposal = propose(&before, &request(Scope::Rebalance)).unwrap();
    assert_eq!(proposal.replica_moves(), 6);
    let batched = batches(&proposal.movements, 2);
    // Broker 0 loses six replicas, two per batch.
    assert_eq!(batched.len(), 3);
    assert_eq!(
        batched.iter().map(Vec::len).sum::<usize>(),
        proposal.movements.len()
    );
}
