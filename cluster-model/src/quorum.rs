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

use strimzi_api::kafka::Kafka;
use strimzi_kafka_model::{QuorumInfo, QuorumMember, QuorumReplica};

use crate::model::config::options::Properties;
use crate::rolling::config_diff::QUORUM_VOTERS;
use crate::rolling::safety::{caught_up_voters, is_caught_up};

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
    /// Remove this voter: its node came back with another metadata directory (its disk was
    /// replaced) and observes the quorum under it, caught up; the new directory is added next.
    RemoveStale(QuorumMember),
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

/// Whether `kafka` asks for a dynamic quorum (annotation
/// [`strimzi_api::annotations::KRAFT_QUORUM`] set to [`DYNAMIC`]).
pub fn dynamic_quorum_requested(kafka: &Kafka) -> bool {
    kafka
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(strimzi_api::annotations::KRAFT_QUORUM))
        .is_some_and(|value| value == DYNAMIC)
}

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

/// The node IDs a node's `server.config` lists in `controller.quorum.voters` (`None` when it
/// has no such option).
pub fn listed_voter_ids(server_config: &str) -> Option<BTreeSet<i32>> {
    let properties = Properties::parse(server_config);
    let voters = properties.get(QUORUM_VOTERS)?;
    Some(
        voters
            .split(',')
            .filter_map(|voter| voter.split('@').next()?.trim().parse().ok())
            .collect(),
    )
}

/// What a cluster's node configurations and its annotation tell of its quorum, before Kafka
/// is asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfiguredQuorum {
    /// Nothing runs yet, or the controllers stay, no dynamic quorum is asked for and every
    /// node lists the running controllers: the configuration stays as Strimzi writes it, and
    /// Kafka need not be asked.
    Unchanged,
    /// The controllers change while every node lists the running ones and no dynamic quorum
    /// is asked for: a static quorum's controllers would change (refused), unless Kafka
    /// reports the quorum dynamic already.
    ControllersChange,
    /// A dynamic quorum is asked for, or is changing (a node lists other voters than the
    /// running controllers, as only a dynamic quorum's new controllers do).
    Dynamic {
        /// The IDs every node lists: the voters when the nodes were configured (each
        /// controller also lists itself).
        listed_by_all: BTreeSet<i32>,
    },
}

/// What the configurations `listed` (one set per node that has `controller.quorum.voters`)
/// tell of a cluster whose running controllers are `running` and desired ones `desired`,
/// with `dynamic_requested` the Kafka's annotation.
pub fn configured_quorum(
    running: &BTreeSet<i32>,
    listed: &[BTreeSet<i32>],
    desired: &BTreeSet<i32>,
    dynamic_requested: bool,
) -> ConfiguredQuorum {
    let settled = listed.iter().all(|voters| voters == running);
    if running.is_empty() || (!dynamic_requested && running == desired && settled) {
        return ConfiguredQuorum::Unchanged;
    }
    if !dynamic_requested && settled {
        return ConfiguredQuorum::ControllersChange;
    }
    let mut sets = listed.iter();
    let first = sets.next().cloned().unwrap_or_else(|| running.clone());
    ConfiguredQuorum::Dynamic {
        listed_by_all: sets.fold(first, |all, voters| &all & voters),
    }
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
/// - A voter whose node came back with a new metadata directory (a replaced disk: Kafka
///   counts the new directory an observer, the old one a voter that no longer fetches) is
///   removed once the node, under its new directory, has caught up and the old voter has
///   not, so that the new directory is added next (Kafka keeps one directory per node ID
///   among the voters).
/// - Then it removes the highest voter that is not desired, the leader last.
/// - A removal happens only when the voters left keep a caught-up majority among them; never
///   the last voter.
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
    let replaced = quorum.voters.iter().find(|voter| {
        !voter.directory_id.is_nil()
            && voter.replica_id != quorum.leader_id
            && !is_caught_up(quorum, voter, view.fetch_timeout_ms)
            && quorum.observers.iter().any(|observer| {
                observer.replica_id == voter.replica_id
                    && !observer.directory_id.is_nil()
                    && observer.directory_id != voter.directory_id
                    && is_caught_up(quorum, observer, view.fetch_timeout_ms)
            })
    });
    if let Some(stale) = replaced {
        return match removal_refusal(view, &voters, stale.replica_id) {
            Some(refusal) => QuorumStep::Refuse(refusal),
            None => QuorumStep::RemoveStale(member(stale)),
        };
    }
    let mut removed: Vec<i32> = voters.difference(desired).copied().collect();
    // Highest first, the leader last: removing it makes the quorum elect another.
    removed.sort_by_key(|&id| (id == quorum.leader_id, std::cmp::Reverse(id)));
    let Some(&removed) = removed.first() else {
        return QuorumStep::Settled;
    };
    if let Some(refusal) = removal_refusal(view, &voters, removed) {
        return QuorumStep::Refuse(refusal);
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

/// Why `removed` may not leave the `voters` (`None` when it may): the voters left must keep
/// a caught-up majority among them, and at least one must stay.
fn removal_refusal(
    view: &QuorumView<'_>,
    voters: &BTreeSet<i32>,
    removed: i32,
) -> Option<QuorumRefusal> {
    let left: BTreeSet<i32> = voters.iter().copied().filter(|&id| id != removed).collect();
    let caught_up_left: BTreeSet<i32> = caught_up_voters(view.quorum, view.fetch_timeout_ms)
        .into_iter()
        .filter(|&id| id != removed)
        .collect();
    let majority = left.len() / 2 + 1;
    (left.is_empty() || caught_up_left.len() < majority).then(|| QuorumRefusal {
        reason: QUORUM_WOULD_BE_LOST,
        message: format!(
            "Removing controller {removed} from the voters {} would leave {} of {} voters caught up with the leader (caught up: {}), fewer than the majority of {majority}: the controller stays until enough voters catch up",
            id_list(voters),
            caught_up_left.len(),
            left.len(),
            id_list(&caught_up_left)
        ),
    })
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

    #[test]
    fn a_voter_whose_disk_was_replaced_is_removed_once_its_new_directory_caught_up() {
        // Voter 2 stopped fetching; node 2 observes the quorum under a new directory.
        let mut replaced = quorum(0, &[(0, 10_000), (1, 10_000), (2, 4_000)], &[]);
        let mut new_directory = replica(2, 10_000);
        new_directory.directory_id = uuid(9);
        replaced.observers.push(new_directory);
        let desired = ids(&[0, 1, 2]);
        assert_eq!(
            next_step(&desired, &view(&replaced, 1), true),
            QuorumStep::RemoveStale(QuorumMember {
                node_id: 2,
                directory_id: uuid(3)
            })
        );
        // Removed: the new directory is added like any new controller.
        let mut removed = replaced.clone();
        removed.voters.retain(|voter| voter.replica_id != 2);
        assert_eq!(
            next_step(&desired, &view(&removed, 1), true),
            QuorumStep::Add(QuorumMember {
                node_id: 2,
                directory_id: uuid(9)
            })
        );
        // The new directory has not caught up yet: the voter stays.
        let mut behind = replaced.clone();
        behind.observers[0].last_caught_up_timestamp = 5_000;
        assert_eq!(
            next_step(&desired, &view(&behind, 1), true),
            QuorumStep::Settled
        );
        // The voter still fetches (the observer is another process, or left over): it stays.
        let mut alive = replaced.clone();
        alive.voters[2].last_caught_up_timestamp = 9_900;
        assert_eq!(
            next_step(&desired, &view(&alive, 1), true),
            QuorumStep::Settled
        );
        // Voters without directories (moved from a static quorum by an old Kafka) are never
        // taken for replaced.
        let mut nil = replaced.clone();
        nil.voters[2].directory_id = uuid::Uuid::nil();
        assert_eq!(
            next_step(&desired, &view(&nil, 1), true),
            QuorumStep::Settled
        );
        // Another voter lagging too: removing 2 would leave 0 caught up of 0 and 1.
        let mut lagging = replaced.clone();
        lagging.voters[1].last_caught_up_timestamp = 4_000;
        let step = next_step(&desired, &view(&lagging, 1), true);
        assert!(
            matches!(step, QuorumStep::Refuse(ref refusal) if refusal.reason == QUORUM_WOULD_BE_LOST),
            "{step:?}"
        );
    }

    #[test]
    fn the_configurations_tell_an_unchanged_quorum_from_a_changing_one() {
        let config = |voters: &str| format!("node.id=3\ncontroller.quorum.voters={voters}\n");
        assert_eq!(
            listed_voter_ids(&config("3@a-3.b:9090,4@a-4.b:9090")),
            Some(ids(&[3, 4]))
        );
        assert_eq!(listed_voter_ids("node.id=3\n"), None);
        let running = ids(&[3, 4, 5]);
        let all = vec![running.clone(), running.clone()];
        assert_eq!(
            configured_quorum(&running, &all, &running, false),
            ConfiguredQuorum::Unchanged
        );
        assert_eq!(
            configured_quorum(&ids(&[]), &[], &running, false),
            ConfiguredQuorum::Unchanged
        );
        assert_eq!(
            configured_quorum(&running, &all, &ids(&[3, 4, 5, 6]), false),
            ConfiguredQuorum::ControllersChange
        );
        assert_eq!(
            configured_quorum(&running, &all, &running, true),
            ConfiguredQuorum::Dynamic {
                listed_by_all: running.clone()
            }
        );
        // A new controller 6 lists the voters and itself: a dynamic quorum changing, even
        // without the annotation; the voters are what every node lists.
        let changing = vec![running.clone(), ids(&[3, 4, 5, 6])];
        let with_six = ids(&[3, 4, 5, 6]);
        assert_eq!(
            configured_quorum(&with_six, &changing, &with_six, false),
            ConfiguredQuorum::Dynamic {
                listed_by_all: running
            }
        );
    }
}
