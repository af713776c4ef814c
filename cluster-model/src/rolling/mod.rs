//! The rolling-restart decisions, free of I/O: why a pod must be restarted ([`reasons`] from
//! its annotations, [`config_diff`] from the static options its node runs with), whether
//! restarting it now keeps the cluster available ([`safety`]), and which pods to restart next
//! ([`next_restarts`]).
//!
//! The Kafka reconciler restarts what [`next_restarts`] chooses by deleting the pods (their
//! StrimziPodSet recreates them as now desired), then waits for them to be ready and back in
//! the cluster before asking again. Nothing is remembered between reconciliations: a pod
//! once restarted runs the desired definition and configuration, so an operator restarted
//! mid-roll carries on where the cluster is and never restarts a node twice for the same
//! change.

pub mod config_diff;
pub mod reasons;
pub mod reload;
pub mod safety;
pub mod unchecked;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use time::OffsetDateTime;

use crate::model::KafkaCluster;
pub use reasons::{PodRevisions, RESTART_REASON_NAMES, RestartReason, restart_reasons};

/// A node whose pod must be restarted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeToRoll {
    /// The pod name.
    pub pod: String,
    /// The node ID.
    pub node_id: i32,
    /// Whether it is a KRaft controller (alone or with the broker role).
    pub controller: bool,
    /// Whether it is a broker.
    pub broker: bool,
    /// Why it must be restarted, never empty.
    pub reasons: Vec<RestartReason>,
}

impl NodeToRoll {
    /// Each of its reasons as a sentence ([`RestartReason::explanation`]), for Events and logs.
    pub fn explanations(&self) -> Vec<String> {
        self.reasons
            .iter()
            .map(RestartReason::explanation)
            .collect()
    }

    /// Where the node comes in the rolling order, Strimzi's: the controllers first, the
    /// active controller last of them (its restart moves the leadership, once), then the
    /// brokers. Brokers restarted before a controller whose address then changes were seen
    /// to keep connecting to its old address (Kafka 4.3.1, a cluster with one controller),
    /// fenced, with every write stalled; restarted after it, they resolve its new one.
    fn rank(&self, active_controller: Option<i32>) -> (u8, i32) {
        let group = if self.controller && Some(self.node_id) == active_controller {
            1
        } else if self.controller {
            0
        } else {
            2
        };
        (group, self.node_id)
    }
}

/// What the roller must know, besides the pods, to tell why a node restarts: the cluster CA's
/// renewal period and whether a maintenance time window is open, at `now`.
#[derive(Clone, Copy, Debug)]
pub struct RollClock {
    /// When the decision is made.
    pub now: OffsetDateTime,
    /// The cluster CA's `renewalDays`.
    pub renewal_days: u32,
    /// Whether a maintenance time window is open at `now`.
    pub window_open: bool,
}

/// The nodes of `cluster` whose pods must restart, with why: those whose running pod (among
/// `running`, by name) differs from the pod its StrimziPodSet describes (among `desired`, by
/// name; [`restart_reasons`]), and those that reloaded certificates and must restart before
/// the certificate they started with expires ([`reload::startup_certificate_expiring`]). A
/// node without a running or desired pod is left out (it is being created or removed). The
/// rolling step and `kubectl strimzi plan` both decide with this.
pub fn nodes_to_roll(
    cluster: &KafkaCluster,
    desired: &BTreeMap<String, Pod>,
    running: &BTreeMap<String, Pod>,
    clock: RollClock,
) -> Vec<NodeToRoll> {
    let empty = BTreeMap::new();
    let annotations = |pod: &Pod| pod.metadata.annotations.as_ref().unwrap_or(&empty).clone();
    cluster
        .nodes()
        .filter_map(|node| {
            let running = annotations(running.get(&node.pod_name)?);
            let desired = annotations(desired.get(&node.pod_name)?);
            let mut reasons = restart_reasons(PodRevisions {
                running: &running,
                desired: &desired,
            });
            reasons.extend(reload::startup_certificate_expiring(
                &running,
                clock.now,
                clock.renewal_days,
                clock.window_open,
            ));
            (!reasons.is_empty()).then(|| NodeToRoll {
                controller: node.is_controller(),
                broker: node.is_broker(),
                pod: node.pod_name,
                node_id: node.node_id,
                reasons,
            })
        })
        .collect()
}

/// `nodes` in the order the roller restarts them when nothing blocks and one broker restarts
/// at a time: the controllers by node ID, the active controller (when known) last of them,
/// then the brokers by node ID.
pub fn rolling_order(
    mut nodes: Vec<NodeToRoll>,
    active_controller: Option<i32>,
) -> Vec<NodeToRoll> {
    nodes.sort_by_key(|node| node.rank(active_controller));
    nodes
}

/// What the roller does now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RollDecision {
    /// Restart these nodes together (one controller, or brokers that share no partition
    /// whose in-sync replicas would drop below its minimum).
    Restart(Vec<NodeToRoll>),
    /// No node may be restarted now; the message says why.
    Blocked(String),
}

/// What the roller may ask about the cluster while choosing.
pub trait AvailabilityCheck {
    /// Why restarting controller `node_id` now would break the quorum, if it would.
    fn controller_blocker(&self, node_id: i32) -> Option<String>;
    /// Why restarting all of `brokers` at once would take partitions below their
    /// `min.insync.replicas`; empty when it would not.
    fn broker_blockers(&self, brokers: &BTreeSet<i32>) -> Vec<String>;
}

/// The nodes to restart now, from `nodes` (each needing a restart).
///
/// Controllers go first, one at a time and in node-ID order with the active controller last
/// of them, each only when the quorum stays healthy without it (combined nodes also need
/// their partitions to stay available); a blocked controller holds up everything after it.
/// Then brokers: as many as `max_parallel_brokers`, taken in node-ID order, skipping those
/// that cannot restart safely together with the ones already taken. Returns `None` when no
/// node needs a restart.
pub fn next_restarts(
    nodes: Vec<NodeToRoll>,
    active_controller: Option<i32>,
    max_parallel_brokers: usize,
    check: &impl AvailabilityCheck,
) -> Option<RollDecision> {
    let nodes = rolling_order(nodes, active_controller);
    let first = nodes.first()?;
    if first.controller {
        let blocker = check.controller_blocker(first.node_id).or_else(|| {
            first
                .broker
                .then(|| check.broker_blockers(&BTreeSet::from([first.node_id])))
                .and_then(|blockers| (!blockers.is_empty()).then(|| blockers.join("; ")))
        });
        return Some(match blocker {
            Some(why) => {
                RollDecision::Blocked(format!("{} cannot be restarted yet: {why}", first.pod))
            }
            None => RollDecision::Restart(vec![first.clone()]),
        });
    }
    let mut chosen: Vec<NodeToRoll> = Vec::new();
    let mut blocked = Vec::new();
    for node in nodes.iter().take_while(|node| !node.controller) {
        if chosen.len() >= max_parallel_brokers.max(1) {
            break;
        }
        let mut together: BTreeSet<i32> = chosen.iter().map(|taken| taken.node_id).collect();
        together.insert(node.node_id);
        let blockers = check.broker_blockers(&together);
        if blockers.is_empty() {
            chosen.push(node.clone());
        } else if chosen.is_empty() {
            blocked.push(format!(
                "{} cannot be restarted yet: {}",
                node.pod,
                blockers.join("; ")
            ));
        }
    }
    Some(if chosen.is_empty() {
        RollDecision::Blocked(blocked.join("; "))
    } else {
        RollDecision::Restart(chosen)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Controllers in `blocked_controllers` are blocked; brokers block when the set holds
    /// two that share a partition in `shared`.
    struct Fixed {
        blocked_controllers: Vec<i32>,
        shared: Vec<(i32, i32)>,
        blocked_brokers: Vec<i32>,
    }

    impl AvailabilityCheck for Fixed {
        fn controller_blocker(&self, node_id: i32) -> Option<String> {
            self.blocked_controllers
                .contains(&node_id)
                .then(|| "quorum".to_owned())
        }
        fn broker_blockers(&self, brokers: &BTreeSet<i32>) -> Vec<String> {
            let shared = self
                .shared
                .iter()
                .filter(|(a, b)| brokers.contains(a) && brokers.contains(b))
                .map(|(a, b)| format!("{a} and {b} share a partition"));
            let alone = brokers
                .iter()
                .filter(|id| self.blocked_brokers.contains(id))
                .map(|id| format!("{id} holds the last spare replica"));
            shared.chain(alone).collect()
        }
    }

    fn node(node_id: i32, controller: bool, broker: bool) -> NodeToRoll {
        NodeToRoll {
            pod: format!("c-pool-{node_id}"),
            node_id,
            controller,
            broker,
            reasons: vec![RestartReason::PodHasOldRevision],
        }
    }

    fn free() -> Fixed {
        Fixed {
            blocked_controllers: Vec::new(),
            shared: Vec::new(),
            blocked_brokers: Vec::new(),
        }
    }

    fn restarted(decision: Option<RollDecision>) -> Vec<i32> {
        match decision {
            Some(RollDecision::Restart(nodes)) => nodes.iter().map(|n| n.node_id).collect(),
            other => panic!("expected restarts, got {other:?}"),
        }
    }

    #[test]
    fn controllers_first_the_active_one_last_of_them_then_brokers() {
        let cluster = || {
            vec![
                node(3, false, true),
                node(0, true, false),
                node(4, false, true),
                node(1, true, false),
            ]
        };
        // Controller 0 leads: 1 goes first, then 0, then the brokers.
        assert_eq!(
            restarted(next_restarts(cluster(), Some(0), 1, &free())),
            [1]
        );
        let without = |done: &[i32]| {
            cluster()
                .into_iter()
                .filter(|n| !done.contains(&n.node_id))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            restarted(next_restarts(without(&[1]), Some(0), 1, &free())),
            [0]
        );
        assert_eq!(
            restarted(next_restarts(without(&[1, 0]), Some(0), 1, &free())),
            [3]
        );
        assert_eq!(
            restarted(next_restarts(without(&[1, 0, 3]), Some(0), 1, &free())),
            [4]
        );
        assert_eq!(next_restarts(Vec::new(), Some(0), 1, &free()), None);
    }

    #[test]
    fn a_blocked_controller_holds_up_the_roll() {
        let check = Fixed {
            blocked_controllers: vec![1],
            ..free()
        };
        let decision = next_restarts(
            vec![node(1, true, false), node(3, false, true)],
            Some(0),
            1,
            &check,
        );
        assert_eq!(
            decision,
            Some(RollDecision::Blocked(
                "c-pool-1 cannot be restarted yet: quorum".to_owned()
            ))
        );
    }

    #[test]
    fn brokers_roll_together_only_when_they_share_no_partition_at_risk() {
        let brokers = || (3..7).map(|id| node(id, false, true)).collect::<Vec<_>>();
        let check = Fixed {
            shared: vec![(3, 4), (5, 6)],
            ..free()
        };
        // One at a time by default, as Strimzi.
        assert_eq!(restarted(next_restarts(brokers(), None, 1, &check)), [3]);
        // In parallel: 3 with 5 (4 shares with 3, 6 with 5).
        assert_eq!(restarted(next_restarts(brokers(), None, 4, &check)), [3, 5]);
        assert_eq!(
            restarted(next_restarts(brokers(), None, 2, &free())),
            [3, 4]
        );
    }

    #[test]
    fn a_blocked_broker_is_skipped_and_reported_when_none_can_go() {
        let check = Fixed {
            blocked_brokers: vec![3],
            ..free()
        };
        let brokers = vec![node(3, false, true), node(4, false, true)];
        assert_eq!(restarted(next_restarts(brokers, None, 1, &check)), [4]);
        let decision = next_restarts(vec![node(3, false, true)], None, 1, &check);
        assert_eq!(
            decision,
            Some(RollDecision::Blocked(
                "c-pool-3 cannot be restarted yet: 3 holds the last spare replica".to_owned()
            ))
        );
    }

    #[test]
    fn a_combined_node_needs_both_checks() {
        let check = Fixed {
            blocked_brokers: vec![0],
            ..free()
        };
        let decision = next_restarts(vec![node(0, true, true)], Some(1), 1, &check);
        assert!(
            matches!(&decision, Some(RollDecision::Blocked(why)) if why.contains("last spare")),
            "{decision:?}"
        );
    }
}
