//! The KRaft controller quorum's membership, free of I/O: whether the controllers of a
//! cluster may change at all, and the next single step that brings the voters of a dynamic
//! quorum to the desired controllers.
//!
//! A static quorum (`kraft.version` 0) takes its voters from every node's
//! `controller.quorum.voters`; changing them means rewriting that option and restarting every
//! node, which loses the quorum's history of who voted and can elect a leader without the
//! committed metadata. Its controllers are therefore never changed here: the change is
//! refused until the user moves the cluster to a dynamic quorum. A dynamic quorum
//! (`kraft.version` 1, KIP-853) keeps its voter set in the metadata log and changes it one
//! voter at a time: a new controller joins as an observer, catches up and is then added; a
//! controller to remove is removed from the voters first and only then stopped.

use std::collections::BTreeSet;

use strimzi_kafka_model::{QuorumInfo, QuorumMember, QuorumReplica};

use crate::rolling::safety::caught_up_voters;

/// Kafka's feature that tells a static quorum (0) from a dynamic one (1).
pub const KRAFT_VERSION_FEATURE: &str = "kraft.version";

/// The `kraft.version` of a dynamic quorum.
pub const DYNAMIC_KRAFT_VERSION: i16 = 1;

/// What the operator read of a running cluster's quorum.
#[derive(Clone, Copy, Debug)]
pub struct QuorumView<'a> {
    /// Leader, voters and observers as DescribeQuorum reports them.
    pub quorum: &'a QuorumInfo,
    /// The finalized `kraft.version` (0 when Kafka finalized none).
    pub kraft_version: i16,
    /// The highest `kraft.version` the Kafka asked supports.
    pub supported_kraft_version: i16,
    /// `controller.quorum.fetch.timeout.ms`: how far behind the leader's last catch-up a
    /// voter's may be for it to count as caught up.
    pub fetch_timeout_ms: i64,
}

/// The next step of a quorum change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuorumStep {
    /// The voters are the desired controllers: nothing to do.
    Settled,
    /// Finalize `kraft.version` 1: the static quorum becomes dynamic (one-way).
    MoveToDynamic,
    /// Make this observer a voter.
    Add(QuorumMember),
    /// Remove this voter.
    Remove(QuorumMember),
    /// Nothing can change now, for this reason; a later look may find it possible.
    Wait(String),
    /// The change is refused until the user changes something.
    Refuse(QuorumRefusal),
}

/// Why the controllers of a cluster cannot change, with a stable reason for conditions and
/// Events.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct QuorumRefusal {
    /// `ControllerScalingRefused`, `DynamicQuorumUnsupported` or `QuorumWouldBeLost`.
    pub reason: &'static str,
    /// What is refused and what to do about it.
    pub message: String,
}

/// The reason of a controller change refused on a static quorum.
pub const CONTROLLER_SCALING_REFUSED: &str = "ControllerScalingRefused";
/// The reason of a move to a dynamic quorum that the Kafka version cannot make.
pub const DYNAMIC_QUORUM_UNSUPPORTED: &str = "DynamicQuorumUnsupported";
/// The reason of a voter removal that would leave too few caught-up voters.
pub const QUORUM_WOULD_BE_LOST: &str = "QuorumWouldBeLost";

/// The annotation value (on the Kafka, key [`strimzi_api::annotations::KRAFT_QUORUM`]) that
/// asks for a dynamic quorum.
pub const DYNAMIC: &str = "dynamic";

/// The node IDs of `ids` as a sorted list, `[0, 1, 2]`, as messages show them.
pub fn id_list(ids: &BTreeSet<i32>) -> String {
    format!("{:?}", ids.iter().collect::<Vec<_>>())
}

/// Why the running controllers `running` of a static quorum may not become `desired`
/// (`None` when they are the same, or when nothing runs yet and the cluster is new).
pub fn static_change_refusal(
    running: &BTreeSet<i32>,
    desired: &BTreeSet<i32>,
    dynamic_requested: bool,
) -> Option<QuorumRefusal> {
    if running.is_empty() || running == desired {
        return None;
    }
    let how = if dynamic_requested {
        "the move to a dynamic quorum that the Kafka asks for comes first, once every voter is caught up"
    } else {
        "annotate the Kafka with strimzi.io/kraft-quorum=dynamic to move it to a dynamic quorum first (one-way: Strimzi 1.2 cannot change a dynamic quorum's controllers)"
    };
    Some(QuorumRefusal {
        reason: CONTROLLER_SCALING_REFUSED,
        message: format!(
            "The controllers of a static KRaft quorum cannot change safely (running {}, desired {}): {how}",
            id_list(running),
            id_list(desired)
        ),
    })
}

/// The member (node and directory) of a replica.
fn member(replica: &QuorumReplica) -> QuorumMember {
    QuorumMember {
        node_id: replica.replica_id,
        directory_id: replica.directory_id,
    }
}

/// The next step towards voters that are exactly `desired` (the controllers the cluster
/// should have), one voter change at a time.
///
/// - A static quorum moves to a dynamic one when `dynamic_requested` and the Kafka supports
///   it and every voter is caught up; otherwise it waits, or is refused when the Kafka cannot
///   or its controllers should change without the move being asked for.
/// - A dynamic quorum adds the lowest desired controller that is not a voter, once it
///   observes the quorum (Kafka itself refuses an observer that has not caught up), before
///   it removes anything, so that a replaced controller is added before the old one goes.
/// - Then it removes the highest voter that is not desired, the leader last, only when the
///   voters left keep a caught-up majority among them; never the last voter.
pub fn next_step(
    desired: &BTreeSet<i32>,
    view: &QuorumView<'_>,
    dynamic_requested: bool,
) -> QuorumStep {
    let quorum = view.quorum;
    let voters: BTreeSet<i32> = quorum.voters.iter().map(|voter| voter.replica_id).collect();
    if view.kraft_version < DYNAMIC_KRAFT_VERSION {
        if !dynamic_requested {
            return static_change_refusal(&voters, desired, false)
                .map_or(QuorumStep::Settled, QuorumStep::Refuse);
        }
        if view.supported_kraft_version < DYNAMIC_KRAFT_VERSION {
            return QuorumStep::Refuse(QuorumRefusal {
                reason: DYNAMIC_QUORUM_UNSUPPORTED,
                message: format!(
                    "The Kafka asks for a dynamic KRaft quorum, but its Kafka version supports kraft.version {} at most (a static quorum moves to a dynamic one from Kafka 4.1 on)",
                    view.supported_kraft_version
                ),
            });
        }
        let caught_up = caught_up_voters(quorum, view.fetch_timeout_ms);
        if caught_up != voters {
            return QuorumStep::Wait(format!(
                "waiting for every voter to catch up with the leader before moving to a dynamic quorum (voters {}, caught up {})",
                id_list(&voters),
                id_list(&caught_up)
            ));
        }
        return QuorumStep::MoveToDynamic;
    }
    if let Some(&added) = desired.difference(&voters).next() {
        return match quorum
            .observers
            .iter()
            .find(|observer| observer.replica_id == added)
        {
            Some(observer) if !observer.directory_id.is_nil() => QuorumStep::Add(member(observer)),
            _ => QuorumStep::Wait(format!(
                "waiting for controller {added} to observe the quorum before it becomes a voter"
            )),
        };
    }
    let mut removed: Vec<i32> = voters.difference(desired).copied().collect();
    // Highest first, the leader last: removing it makes the quorum elect another.
    removed.sort_by_key(|&id| (id == quorum.leader_id, std::cmp::Reverse(id)));
    let Some(&removed) = removed.first() else {
        return QuorumStep::Settled;
    };
    let left: BTreeSet<i32> = voters.iter().copied().filter(|&id| id != removed).collect();
    let caught_up_left: BTreeSet<i32> = caught_up_voters(quorum, view.fetch_timeout_ms)
        .into_iter()
        .filter(|&id| id != removed)
        .collect();
    let majority = left.len() / 2 + 1;
    if left.is_empty() || caught_up_left.len() < majority {
        return QuorumStep::Refuse(QuorumRefusal {
            reason: QUORUM_WOULD_BE_LOST,
            message: format!(
                "Removing controller {removed} from the voters {} would leave {} of {} voters caught up with the leader (caught up: {}), fewer than the majority of {majority}: the controller stays until enough voters catch up",
                id_list(&voters),
                caught_up_left.len(),
                left.len(),
                id_list(&caught_up_left)
            ),
        });
    }
    let voter = quorum
        .voters
        .iter()
        .find(|voter| voter.replica_id == removed)
        .map(member)
        .unwrap_or(QuorumMember {
            node_id: removed,
            directory_id: Default::default(),
        });
    QuorumStep::Remove(voter)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuid(n: u8) -> uuid::Uuid {
        uuid::Uuid::from_bytes([n; 16])
    }

    /// A replica `id` whose last catch-up was `at` (ms).
    fn replica(id: i32, at: i64) -> QuorumReplica {
        QuorumReplica {
            replica_id: id,
            directory_id: uuid(u8::try_from(id + 1).unwrap()),
            log_end_offset: 100,
            last_fetch_timestamp: at,
            last_caught_up_timestamp: at,
        }
    }

    fn quorum(leader: i32, voters: &[(i32, i64)], observers: &[i32]) -> QuorumInfo {
        QuorumInfo {
            leader_id: leader,
            leader_epoch: 3,
            high_watermark: 100,
            voters: voters.iter().map(|&(id, at)| replica(id, at)).collect(),
            observers: observers.iter().map(|&id| replica(id, 10_000)).collect(),
        }
    }

    fn view(quorum: &QuorumInfo, kraft_version: i16) -> QuorumView<'_> {
        QuorumView {
            quorum,
            kraft_version,
            supported_kraft_version: 1,
            fetch_timeout_ms: 2000,
        }
    }

    fn ids(ids: &[i32]) -> BTreeSet<i32> {
        ids.iter().copied().collect()
    }

    #[test]
    fn a_static_quorum_never_changes_its_controllers_and_moves_only_when_asked() {
        let static_one = quorum(0, &[(0, 10_000)], &[3]);
        let step = next_step(&ids(&[0, 1, 2]), &view(&static_one, 0), false);
        let QuorumStep::Refuse(refusal) = step else {
            panic!("{step:?}")
        };
        assert_eq!(refusal.reason, CONTROLLER_SCALING_REFUSED);
        assert!(
            refusal.message.contains("strimzi.io/kraft-quorum=dynamic"),
            "{refusal}"
        );
        assert_eq!(
            next_step(&ids(&[0]), &view(&static_one, 0), false),
            QuorumStep::Settled
        );
        // Asked for: the move comes first, whatever the desired controllers.
        assert_eq!(
            next_step(&ids(&[0, 1, 2]), &view(&static_one, 0), true),
            QuorumStep::MoveToDynamic
        );
        // A new cluster, nothing running yet: anything goes.
        assert_eq!(
            static_change_refusal(&ids(&[]), &ids(&[0, 1, 2]), false),
            None
        );
    }

    #[test]
    fn the_move_waits_for_every_voter_and_for_a_kafka_that_can() {
        let lagging = quorum(0, &[(0, 10_000), (1, 9_900), (2, 5_000)], &[]);
        let step = next_step(&ids(&[0, 1, 2]), &view(&lagging, 0), true);
        assert!(
            matches!(step, QuorumStep::Wait(ref why) if why.contains("caught up [0, 1]")),
            "{step:?}"
        );
        let healthy = quorum(0, &[(0, 10_000), (1, 9_900), (2, 9_800)], &[]);
        let old_kafka = QuorumView {
            supported_kraft_version: 0,
            ..view(&healthy, 0)
        };
        let step = next_step(&ids(&[0, 1, 2]), &old_kafka, true);
        assert!(
            matches!(step, QuorumStep::Refuse(ref refusal) if refusal.reason == DYNAMIC_QUORUM_UNSUPPORTED),
            "{step:?}"
        );
    }

    #[test]
    fn a_new_controller_is_added_once_it_observes_the_quorum() {
        let before = quorum(0, &[(0, 10_000)], &[3]);
        // Controller 1 has not started fetching yet: wait.
        let step = next_step(&ids(&[0, 1]), &view(&before, 1), true);
        assert!(matches!(step, QuorumStep::Wait(_)), "{step:?}");
        let observing = quorum(0, &[(0, 10_000)], &[1, 3]);
        assert_eq!(
            next_step(&ids(&[0, 1, 2]), &view(&observing, 1), true),
            QuorumStep::Add(QuorumMember {
                node_id: 1,
                directory_id: uuid(2)
            })
        );
        // Additions come before removals: 0 is replaced by 1 only once 1 votes.
        assert_eq!(
            next_step(&ids(&[1]), &view(&observing, 1), true),
            QuorumStep::Add(QuorumMember {
                node_id: 1,
                directory_id: uuid(2)
            })
        );
        // An observer reporting no directory (a Kafka too old to tell) is not added.
        let mut nil = observing.clone();
        nil.observers[0].directory_id = uuid::Uuid::nil();
        assert!(matches!(
            next_step(&ids(&[0, 1]), &view(&nil, 1), true),
            QuorumStep::Wait(_)
        ));
        // Without the annotation a dynamic quorum is still dynamic (there is no way back).
        assert!(matches!(
            next_step(&ids(&[0, 1]), &view(&observing, 1), false),
            QuorumStep::Add(_)
        ));
    }

    #[test]
    fn voters_are_removed_one_at_a_time_highest_first_and_the_leader_last() {
        let three = quorum(1, &[(0, 10_000), (1, 10_000), (2, 9_900)], &[]);
        assert_eq!(
            next_step(&ids(&[0]), &view(&three, 1), false),
            QuorumStep::Remove(QuorumMember {
                node_id: 2,
                directory_id: uuid(3)
            })
        );
        let two = quorum(1, &[(0, 10_000), (1, 10_000)], &[]);
        assert_eq!(
            next_step(&ids(&[0]), &view(&two, 1), false),
            QuorumStep::Remove(QuorumMember {
                node_id: 1,
                directory_id: uuid(2)
            })
        );
        assert_eq!(
            next_step(&ids(&[0, 1]), &view(&two, 1), false),
            QuorumStep::Settled
        );
    }

    #[test]
    fn a_removal_that_would_leave_no_caught_up_majority_is_refused() {
        // Voter 1 lags: removing 2 would leave 0 and 1, with only 0 caught up.
        let lagging = quorum(0, &[(0, 10_000), (1, 6_000), (2, 9_900)], &[]);
        let step = next_step(&ids(&[0, 1]), &view(&lagging, 1), false);
        let QuorumStep::Refuse(refusal) = step else {
            panic!("{step:?}")
        };
        assert_eq!(refusal.reason, QUORUM_WOULD_BE_LOST);
        assert!(refusal.message.contains("controller 2"), "{refusal}");
        // Removing the lagging voter itself is safe: 0 and 2 are caught up.
        assert_eq!(
            next_step(&ids(&[0, 2]), &view(&lagging, 1), false),
            QuorumStep::Remove(QuorumMember {
                node_id: 1,
                directory_id: uuid(2)
            })
        );
        // A leader that reports no catch-up time leaves no voter but itself caught up.
        let mut unknown = quorum(0, &[(0, -1), (1, 10_000), (2, 10_000)], &[]);
        unknown.voters[0].last_caught_up_timestamp = -1;
        assert!(matches!(
            next_step(&ids(&[0, 1]), &view(&unknown, 1), false),
            QuorumStep::Refuse(_)
        ));
        // The last voter is never removed.
        let one = quorum(0, &[(0, 10_000)], &[]);
        assert!(matches!(
            next_step(&ids(&[]), &view(&one, 1), false),
            QuorumStep::Refuse(_)
        ));
    }
}
