//! The pure part: a cluster description in, a proposal out.
//!
//! The algorithm is deliberately simple and deterministic (same cluster, same request, same
//! proposal). It balances **replica counts** and **preferred-leader counts** per broker, not
//! measured load:
//!
//! 1. Replicas on brokers being removed (`remove_broker`) move to the eligible broker with the
//!    fewest replicas that does not hold the partition yet.
//! 2. With `RackAwareGoal` requested, a replica sharing its rack with another replica of the
//!    same partition moves to a broker of an unused rack, when one exists.
//! 3. Replica counts are evened out: while the fullest source broker has more than the
//!    emptiest destination broker plus one (`add_broker`: the destinations are the new
//!    brokers only, and they are filled up to the average), one replica moves from the first
//!    to the second. Candidates are tried in topic/partition order; a move never puts two
//!    replicas of a partition on one broker, nor (with `RackAwareGoal`) two on one rack.
//! 4. Preferred leaders are evened out (unless only `add`/`remove` goals forbid it): a
//!    partition led by the broker with the most leaders is reordered to be led by one of its
//!    other replicas on a broker with at least two fewer.
//!
//! Replication factor changes (`topic_configuration`) add replicas on the brokers with the
//! fewest replicas (other racks first) or drop the last non-leader replicas on the fullest.
//!
//! Not done: CPU, disk and network load (capacity goals pass when every broker has a capacity
//! entry), topic-level distribution, intra-broker (log directory) moves, minimal data movement.

use std::collections::{BTreeMap, BTreeSet};

/// A broker of the cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Broker {
    /// Its rack, if set.
    pub rack: Option<String>,
    /// Its host.
    pub host: String,
}

/// One partition with its replicas, preferred leader first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// The topic.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
    /// The replicas, preferred leader first.
    pub replicas: Vec<i32>,
    /// The current leader, `-1` when none.
    pub leader: i32,
    /// Size of its largest replica in bytes (0 when unknown).
    pub size_bytes: u64,
}

/// What the proposal is computed from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    /// Brokers by ID.
    pub brokers: BTreeMap<i32, Broker>,
    /// Every partition, ordered by topic and partition.
    pub partitions: Vec<Partition>,
}

/// What a proposal is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Balance the whole cluster (`rebalance`, `proposals`).
    Rebalance,
    /// Move replicas onto these brokers only (`add_broker`).
    AddBrokers(BTreeSet<i32>),
    /// Move every replica off these brokers (`remove_broker`).
    RemoveBrokers(BTreeSet<i32>),
    /// Change the replication factor of these topics (`topic_configuration`).
    ReplicationFactor {
        /// The topics.
        topics: BTreeSet<String>,
        /// The new factor.
        factor: usize,
    },
}

/// A proposal request, with everything already resolved against the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The scope.
    pub scope: Scope,
    /// Topics whose replicas stay where they are.
    pub excluded_topics: BTreeSet<String>,
    /// Whether no two replicas of a partition may share a rack (`RackAwareGoal`).
    pub rack_aware: bool,
    /// Whether replica counts are balanced (`ReplicaDistributionGoal` and similar).
    pub balance_replicas: bool,
    /// Whether preferred leaders are balanced (`LeaderReplicaDistributionGoal` and similar).
    pub balance_leaders: bool,
}

/// One partition whose replicas change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Movement {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The replicas now.
    pub old_replicas: Vec<i32>,
    /// The replicas proposed, preferred leader first.
    pub new_replicas: Vec<i32>,
    /// The leader now.
    pub old_leader: i32,
    /// Size of the partition in bytes (0 when unknown).
    pub size_bytes: u64,
}

impl Movement {
    /// Replicas placed on brokers that did not have them.
    pub fn replica_moves(&self) -> usize {
        self.new_replicas
            .iter()
            .filter(|broker| !self.old_replicas.contains(broker))
            .count()
    }

    /// Bytes copied to the brokers that receive a replica.
    pub fn data_to_move(&self) -> u64 {
        self.size_bytes * self.replica_moves() as u64
    }

    /// Whether the preferred leader changes.
    pub fn moves_leader(&self) -> bool {
        self.old_replicas.first() != self.new_replicas.first()
    }
}

/// A computed proposal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Proposal {
    /// The partitions that change, in topic/partition order.
    pub movements: Vec<Movement>,
}

impl Proposal {
    /// Replicas placed on new brokers in all.
    pub fn replica_moves(&self) -> usize {
        self.movements.iter().map(Movement::replica_moves).sum()
    }

    /// Bytes copied in all.
    pub fn data_to_move(&self) -> u64 {
        self.movements.iter().map(Movement::data_to_move).sum()
    }

    /// Partitions whose preferred leader changes.
    pub fn leader_moves(&self) -> usize {
        self.movements.iter().filter(|m| m.moves_leader()).count()
    }

    /// The cluster once the proposal is carried out.
    pub fn apply(&self, cluster: &Cluster) -> Cluster {
        let mut after = cluster.clone();
        for partition in &mut after.partitions {
            if let Some(movement) = self
                .movements
                .iter()
                .find(|m| m.topic == partition.topic && m.partition == partition.partition)
            {
                partition.replicas = movement.new_replicas.clone();
                partition.leader = movement.new_replicas.first().copied().unwrap_or(-1);
            }
        }
        after
    }
}

/// Why no proposal can be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// A broker named in the request is not in the cluster.
    #[error("broker {0} is not in the cluster")]
    UnknownBroker(i32),
    /// Too few brokers remain to hold every replica.
    #[error(
        "{topic}-{partition} needs {needed} brokers but only {available} can take its replicas"
    )]
    NotEnoughBrokers {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// Brokers needed.
        needed: usize,
        /// Brokers available.
        available: usize,
    },
}

/// Replicas and preferred leaders per broker.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Replicas per broker ID (every broker present, with zero).
    pub replicas: BTreeMap<i32, usize>,
    /// Preferred leaders per broker ID.
    pub leaders: BTreeMap<i32, usize>,
    /// Bytes of the replicas on each broker.
    pub bytes: BTreeMap<i32, u64>,
}

impl Cluster {
    /// Replicas and preferred leaders per broker.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts {
            replicas: self.brokers.keys().map(|id| (*id, 0)).collect(),
            leaders: self.brokers.keys().map(|id| (*id, 0)).collect(),
            bytes: self.brokers.keys().map(|id| (*id, 0)).collect(),
        };
        for partition in &self.partitions {
            for broker in &partition.replicas {
                *counts.replicas.entry(*broker).or_default() += 1;
                *counts.bytes.entry(*broker).or_default() += partition.size_bytes;
            }
            if let Some(leader) = partition.replicas.first() {
                *counts.leaders.entry(*leader).or_default() += 1;
            }
        }
        counts
    }

    fn rack(&self, broker: i32) -> Option<&str> {
        self.brokers.get(&broker).and_then(|b| b.rack.as_deref())
    }
}

/// Computes the proposal for `request` on `cluster`.
pub fn propose(cluster: &Cluster, request: &Request) -> Result<Proposal, ModelError> {
    let mut planner = Planner::new(cluster, request);
    match &request.scope {
        Scope::Rebalance => {
            let all: BTreeSet<i32> = cluster.brokers.keys().copied().collect();
            if request.rack_aware {
                planner.fix_racks(&all);
            }
            if request.balance_replicas {
                planner.balance(&all, &all, false);
            }
            if request.balance_leaders {
                planner.balance_leaders(&all);
            }
        }
        Scope::AddBrokers(added) => {
            check_known(cluster, added)?;
            let all: BTreeSet<i32> = cluster.brokers.keys().copied().collect();
            let sources: BTreeSet<i32> = all.difference(added).copied().collect();
            planner.balance(&sources, added, true);
        }
        Scope::RemoveBrokers(removed) => {
            check_known(cluster, removed)?;
            let remaining: BTreeSet<i32> = cluster
                .brokers
                .keys()
                .copied()
                .filter(|id| !removed.contains(id))
                .collect();
            planner.drain(removed, &remaining)?;
        }
        Scope::ReplicationFactor { topics, factor } => {
            planner.change_factor(topics, *factor)?;
        }
    }
    Ok(planner.proposal())
}

fn check_known(cluster: &Cluster, brokers: &BTreeSet<i32>) -> Result<(), ModelError> {
    match brokers.iter().find(|id| !cluster.brokers.contains_key(id)) {
        Some(id) => Err(ModelError::UnknownBroker(*id)),
        None => Ok(()),
    }
}

/// The working assignment.
struct Planner<'a> {
    cluster: &'a Cluster,
    request: &'a Request,
    replicas: Vec<Vec<i32>>,
    counts: BTreeMap<i32, usize>,
}

impl<'a> Planner<'a> {
    fn new(cluster: &'a Cluster, request: &'a Request) -> Self {
        Self {
            cluster,
            request,
            replicas: cluster
                .partitions
                .iter()
                .map(|p| p.replicas.clone())
                .collect(),
            counts: cluster.counts().replicas,
        }
    }

    fn movable(&self, index: usize) -> bool {
        !self
            .request
            .excluded_topics
            .contains(&self.cluster.partitions[index].topic)
    }

    /// Whether `to` may take a replica of partition `index` in place of `from`.
    fn fits(&self, index: usize, from: i32, to: i32) -> bool {
        let replicas = &self.replicas[index];
        if replicas.contains(&to) {
            return false;
        }
        if !self.request.rack_aware {
            return true;
        }
        let Some(rack) = self.cluster.rack(to) else {
            return true;
        };
        !replicas
            .iter()
            .filter(|broker| **broker != from)
            .any(|broker| self.cluster.rack(*broker) == Some(rack))
    }

    fn relocate(&mut self, index: usize, from: i32, to: i32) {
        if let Some(slot) = self.replicas[index].iter_mut().find(|b| **b == from) {
            *slot = to;
            *self.counts.entry(from).or_default() -= 1;
            *self.counts.entry(to).or_default() += 1;
        }
    }

    /// The broker of `candidates` with the fewest replicas that fits, lowest ID first.
    fn emptiest_fitting(&self, index: usize, from: i32, candidates: &BTreeSet<i32>) -> Option<i32> {
        candidates
            .iter()
            .copied()
            .filter(|to| self.fits(index, from, *to))
            .min_by_key(|to| (self.counts.get(to).copied().unwrap_or(0), *to))
    }

    fn drain(
        &mut self,
        removed: &BTreeSet<i32>,
        remaining: &BTreeSet<i32>,
    ) -> Result<(), ModelError> {
        for index in 0..self.replicas.len() {
            for from in self.replicas[index].clone() {
                if !removed.contains(&from) {
                    continue;
                }
                let to = self
                    .emptiest_fitting(index, from, remaining)
                    .or_else(|| {
                        // Racks cannot all differ: any broker not holding the partition.
                        remaining
                            .iter()
                            .copied()
                            .filter(|to| !self.replicas[index].contains(to))
                            .min_by_key(|to| (self.counts.get(to).copied().unwrap_or(0), *to))
                    })
                    .ok_or_else(|| {
                        let partition = &self.cluster.partitions[index];
                        ModelError::NotEnoughBrokers {
                            topic: partition.topic.clone(),
                            partition: partition.partition,
                            needed: partition.replicas.len(),
                            available: remaining.len(),
                        }
                    })?;
                self.relocate(index, from, to);
            }
        }
        Ok(())
    }

    fn fix_racks(&mut self, brokers: &BTreeSet<i32>) {
        for index in 0..self.replicas.len() {
            if !self.movable(index) {
                continue;
            }
            let mut seen = BTreeSet::new();
            for from in self.replicas[index].clone() {
                let Some(rack) = self.cluster.rack(from) else {
                    continue;
                };
                if seen.insert(rack.to_owned()) {
                    continue;
                }
                if let Some(to) = self.emptiest_fitting(index, from, brokers) {
                    self.relocate(index, from, to);
                    if let Some(rack) = self.cluster.rack(to) {
                        seen.insert(rack.to_owned());
                    }
                }
            }
        }
    }

    /// Moves replicas from `sources` to `destinations` until counts differ by at most one;
    /// `fill_only`: stop once each destination holds the average of all brokers.
    fn balance(&mut self, sources: &BTreeSet<i32>, destinations: &BTreeSet<i32>, fill_only: bool) {
        let total: usize = self.counts.values().sum();
        let brokers = self.counts.len().max(1);
        let average = total / brokers;
        loop {
            let mut moved = false;
            let mut destination_order: Vec<i32> = destinations.iter().copied().collect();
            destination_order.sort_by_key(|id| (self.counts.get(id).copied().unwrap_or(0), *id));
            let mut source_order: Vec<i32> = sources.iter().copied().collect();
            source_order.sort_by_key(|id| {
                (
                    std::cmp::Reverse(self.counts.get(id).copied().unwrap_or(0)),
                    *id,
                )
            });
            'search: for to in &destination_order {
                let to_count = self.counts.get(to).copied().unwrap_or(0);
                if fill_only && to_count >= average {
                    continue;
                }
                for from in &source_order {
                    let from_count = self.counts.get(from).copied().unwrap_or(0);
                    if from == to || from_count <= to_count + 1 {
                        continue;
                    }
                    let candidate = (0..self.replicas.len()).find(|index| {
                        self.movable(*index)
                            && self.replicas[*index].contains(from)
                            && self.fits(*index, *from, *to)
                    });
                    if let Some(index) = candidate {
                        self.relocate(index, *from, *to);
                        moved = true;
                        break 'search;
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }

    fn leader_counts(&self) -> BTreeMap<i32, usize> {
        let mut leaders: BTreeMap<i32, usize> = self.counts.keys().map(|id| (*id, 0)).collect();
        for replicas in &self.replicas {
            if let Some(first) = replicas.first() {
                *leaders.entry(*first).or_default() += 1;
            }
        }
        leaders
    }

    fn balance_leaders(&mut self, brokers: &BTreeSet<i32>) {
        loop {
            let leaders = self.leader_counts();
            let count = |id: &i32| leaders.get(id).copied().unwrap_or(0);
            let mut order: Vec<i32> = brokers.iter().copied().collect();
            order.sort_by_key(|id| (std::cmp::Reverse(count(id)), *id));
            let mut changed = false;
            'search: for from in &order {
                for index in 0..self.replicas.len() {
                    if !self.movable(index) || self.replicas[index].first() != Some(from) {
                        continue;
                    }
                    let better = self.replicas[index]
                        .iter()
                        .skip(1)
                        .copied()
                        .filter(|to| count(to) + 1 < count(from))
                        .min_by_key(|to| (count(to), *to));
                    if let Some(to) = better {
                        let replicas = &mut self.replicas[index];
                        if let Some(position) = replicas.iter().position(|b| *b == to) {
                            replicas.swap(0, position);
                            changed = true;
                            break 'search;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    fn change_factor(
        &mut self,
        topics: &BTreeSet<String>,
        factor: usize,
    ) -> Result<(), ModelError> {
        let all: BTreeSet<i32> = self.cluster.brokers.keys().copied().collect();
        for index in 0..self.replicas.len() {
            let partition = &self.cluster.partitions[index];
            if !topics.contains(&partition.topic) {
                continue;
            }
            if factor > all.len() {
                return Err(ModelError::NotEnoughBrokers {
                    topic: partition.topic.clone(),
                    partition: partition.partition,
                    needed: factor,
                    available: all.len(),
                });
            }
            while self.replicas[index].len() < factor {
                let to = self.emptiest_fitting(index, -1, &all).or_else(|| {
                    all.iter()
                        .copied()
                        .filter(|to| !self.replicas[index].contains(to))
                        .min_by_key(|to| (self.counts.get(to).copied().unwrap_or(0), *to))
                });
                let Some(to) = to else { break };
                self.replicas[index].push(to);
                *self.counts.entry(to).or_default() += 1;
            }
            while self.replicas[index].len() > factor.max(1) {
                let Some(victim) = self.replicas[index]
                    .iter()
                    .skip(1)
                    .copied()
                    .max_by_key(|id| {
                        (
                            self.counts.get(id).copied().unwrap_or(0),
                            std::cmp::Reverse(*id),
                        )
                    })
                else {
                    break;
                };
                self.replicas[index].retain(|id| *id != victim);
                *self.counts.entry(victim).or_default() -= 1;
            }
        }
        Ok(())
    }

    fn proposal(self) -> Proposal {
        let movements = self
            .cluster
            .partitions
            .iter()
            .zip(self.replicas)
            .filter(|(partition, replicas)| partition.replicas != *replicas)
            .map(|(partition, replicas)| Movement {
                topic: partition.topic.clone(),
                partition: partition.partition,
                old_replicas: partition.replicas.clone(),
                new_replicas: replicas,
                old_leader: partition.leader,
                size_bytes: partition.size_bytes,
            })
            .collect();
        Proposal { movements }
    }
}
