//! The KRaft controller quorum's membership (beyond Strimzi): the decisions are
//! [`crate::quorum`]'s, this module reads the quorum and carries them out.
//!
//! Two steps of the reconciliation take part:
//!
//! - Before the desired objects are built ([`Reconciliation::plan_quorum`]): when the
//!   controllers the StrimziPodSets run differ from the desired ones, or the Kafka asks for a
//!   dynamic quorum (annotation `strimzi.io/kraft-quorum: dynamic`), the quorum is read. A
//!   static quorum whose controllers would change is refused (nothing is applied), unless the
//!   move to a dynamic quorum is asked for and can be made now: then `kraft.version` 1 is
//!   finalized first. In a dynamic quorum each node's `controller.quorum.voters` lists the
//!   current voters (see [`crate::model::KafkaCluster::configured_voters`]), and the nodes of
//!   voters still to be removed are kept running.
//! - With every pod ready, before the roll ([`Reconciliation::change_quorum`]): one voter
//!   change, the lowest new controller added once it observes the quorum and has caught up,
//!   else one undesired voter removed when a caught-up majority stays; the reconciliation
//!   then ends pending (`ControllerQuorumChange`) and the next one goes on. A removed voter's
//!   node is deleted by the reconciliation after its removal is committed.
//!
//! Nothing is remembered between reconciliations: every decision starts from what Kafka
//! reports, so an operator stopped in the middle of a change carries on from the quorum as it
//! is.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use strimzi_operator_common::kafka::{
    AdminClient, AdminError, FeatureUpdate, FeatureUpgradeType, KafkaAdmin, QuorumInfo,
    QuorumMember, VoterEndpoint,
};

use super::objects::LiveObjects;
use super::{ClusterCas, ReconcileError, Reconciliation, Waiting, auto_rebalance};
use crate::model::KafkaCluster;
use crate::model::config::broker::CONTROL_PLANE_LISTENER;
use crate::model::listeners::services::CONTROL_PLANE_PORT;
use crate::quorum::{
    CONTROLLER_SCALING_REFUSED, ConfiguredQuorum, DYNAMIC_KRAFT_VERSION, KRAFT_VERSION_FEATURE,
    QuorumRefusal, QuorumStep, QuorumView, configured_quorum, dynamic_quorum_requested, id_list,
    next_step, static_change_refusal,
};
use crate::rolling::safety::DEFAULT_QUORUM_FETCH_TIMEOUT_MS;

/// How soon a Kafka whose quorum is changing is looked at again.
const QUORUM_RECHECK: Duration = Duration::from_secs(3);

/// The reason of the `Reconciling` condition while the voters change.
const QUORUM_CHANGE: &str = "ControllerQuorumChange";

/// The quorum as read for one decision.
struct ReadQuorum {
    quorum: QuorumInfo,
    kraft_version: i16,
    supported_kraft_version: i16,
}

impl ReadQuorum {
    fn view(&self, cluster: &KafkaCluster) -> QuorumView<'_> {
        QuorumView {
            quorum: &self.quorum,
            kraft_version: self.kraft_version,
            supported_kraft_version: self.supported_kraft_version,
            fetch_timeout_ms: super::roll::user_option(
                cluster,
                "controller.quorum.fetch.timeout.ms",
            )
            .unwrap_or(DEFAULT_QUORUM_FETCH_TIMEOUT_MS),
        }
    }

    fn voters(&self) -> BTreeSet<i32> {
        self.quorum
            .voters
            .iter()
            .map(|voter| voter.replica_id)
            .collect()
    }
}

/// Leader, voters and observers, and the `kraft.version` levels, as `admin` reports them.
async fn read_quorum(admin: &AdminClient) -> Result<ReadQuorum, AdminError> {
    let quorum = admin.describe_metadata_quorum().await?;
    let features = admin.describe_features().await?;
    Ok(ReadQuorum {
        quorum,
        kraft_version: features
            .finalized
            .get(KRAFT_VERSION_FEATURE)
            .copied()
            .unwrap_or(0),
        supported_kraft_version: features
            .supported
            .get(KRAFT_VERSION_FEATURE)
            .map_or(0, |&(_, max)| max),
    })
}

/// The node IDs of the cluster's desired controllers.
fn controller_ids(cluster: &KafkaCluster) -> BTreeSet<i32> {
    cluster.controllers().map(|node| node.node_id).collect()
}

impl Reconciliation<'_> {
    /// Whether the Kafka asks for a dynamic quorum.
    fn dynamic_quorum_requested(&self) -> bool {
        dynamic_quorum_requested(self.kafka)
    }

    /// Decides the quorum's form before the desired objects are built: refuses a change of a
    /// static quorum's controllers, moves the quorum to the dynamic form when asked to and
    /// possible, and for a dynamic quorum keeps the nodes of voters still to be removed and
    /// sets the voters the nodes' configurations list. `warnings_before_model` is where the
    /// model's warnings start, for a model resolved again.
    pub(super) async fn plan_quorum(
        &mut self,
        cluster: KafkaCluster,
        live: &LiveObjects,
        cas: &ClusterCas,
        warnings_before_model: usize,
    ) -> Result<KafkaCluster, ReconcileError> {
        let requested = self.dynamic_quorum_requested();
        let running = live.controller_node_ids();
        let desired = controller_ids(&cluster);
        self.desired_controllers = desired.clone();
        let listed = live.configured_voter_ids();
        let settled = listed.iter().all(|voters| *voters == running);
        if configured_quorum(&running, &listed, &desired, requested) == ConfiguredQuorum::Unchanged
        {
            // A new cluster, or nothing to change: the static form, as Strimzi writes it.
            return Ok(cluster);
        }
        let admin = match live.operator_secret() {
            Some(identity) => self
                .admin_client(&cluster, identity, cas)
                .map_err(|error| error.to_string()),
            None => Err(format!(
                "the Secret {} with the operator's client certificate is missing",
                strimzi_api::naming::cluster_operator_certs_secret(&self.name)
            )),
        };
        let read = match admin {
            Ok(admin) => read_quorum(&admin)
                .await
                .map(|read| (admin, read))
                .map_err(|error| error.to_string()),
            Err(error) => Err(error),
        };
        let (admin, mut read) = match read {
            Ok(read) => read,
            // Unchanged, settled controllers need no answer: the configuration stays as it is.
            Err(_) if running == desired && settled => return Ok(cluster),
            Err(error) => {
                return Err(QuorumRefusal {
                    reason: CONTROLLER_SCALING_REFUSED,
                    message: format!(
                        "The controllers cannot change (running {}, desired {}) while the metadata quorum cannot be read: {error}",
                        id_list(&running),
                        id_list(&desired)
                    ),
                }
                .into());
            }
        };
        if read.kraft_version < DYNAMIC_KRAFT_VERSION {
            match next_step(&desired, &read.view(&cluster), requested) {
                QuorumStep::MoveToDynamic => {
                    self.move_to_dynamic(&admin).await?;
                    read = read_quorum(&admin).await?;
                }
                QuorumStep::Refuse(refusal) => return Err(refusal.into()),
                _ => {
                    return match static_change_refusal(&running, &desired, requested) {
                        Some(refusal) => Err(refusal.into()),
                        None => Ok(cluster),
                    };
                }
            }
        }
        let voters = read.voters();
        let kept: BTreeSet<i32> = voters
            .intersection(&running)
            .filter(|id| !desired.contains(id))
            .copied()
            .collect();
        let mut cluster = cluster;
        if !kept.is_empty() {
            // Voters still to be removed keep running until they are.
            self.warnings.truncate(warnings_before_model);
            self.pools = auto_rebalance::undo_scale_down(&self.pools, &kept);
            cluster = self.resolve_model().await?;
            let controllers = controller_ids(&cluster);
            if !kept.is_subset(&controllers) {
                return Err(QuorumRefusal {
                    reason: CONTROLLER_SCALING_REFUSED,
                    message: format!(
                        "Controllers {} are still voters of the quorum and cannot be kept: only scaling a node pool down removes controllers from a dynamic quorum (they are removed from the voters first)",
                        id_list(&kept.difference(&controllers).copied().collect())
                    ),
                }
                .into());
            }
        }
        // A removal refused now shows while the nodes are not all ready and the voter
        // changes wait (a stopped voter keeps its own pod from being ready).
        if let QuorumStep::Refuse(refusal) = next_step(&desired, &read.view(&cluster), requested) {
            self.warn(refusal.reason, &refusal.message);
        }
        cluster.quorum_voters = Some(voters);
        Ok(cluster)
    }

    /// Finalizes `kraft.version` 1, with an Event: the static quorum becomes dynamic.
    async fn move_to_dynamic(&self, admin: &AdminClient) -> Result<(), ReconcileError> {
        let update = FeatureUpdate {
            feature: KRAFT_VERSION_FEATURE.to_owned(),
            max_version_level: DYNAMIC_KRAFT_VERSION,
            upgrade_type: FeatureUpgradeType::Upgrade,
        };
        for result in admin.update_features(&[update], false).await?.into_values() {
            result?;
        }
        tracing::info!(cluster = %self.name, "moved the KRaft quorum to the dynamic form (kraft.version 1)");
        self.tell(
            "KRaftQuorumMovedToDynamic",
            "MoveQuorum",
            "Moved the KRaft controller quorum to the dynamic form (kraft.version 1), as the strimzi.io/kraft-quorum annotation asks; this cannot be undone",
        )
        .await;
        Ok(())
    }

    /// With every pod ready: the next voter change of a dynamic quorum, if any, and what is
    /// awaited after it; `None` when the voters are the desired controllers.
    pub(super) async fn change_quorum(
        &self,
        cluster: &KafkaCluster,
        identity: &Secret,
        cas: &ClusterCas,
    ) -> Result<Option<Waiting>, ReconcileError> {
        if cluster.quorum_voters.is_none() {
            return Ok(None);
        }
        let admin = self.admin_client(cluster, identity, cas)?;
        let read = read_quorum(&admin).await?;
        let step = next_step(
            &self.desired_controllers,
            &read.view(cluster),
            self.dynamic_quorum_requested(),
        );
        let waiting = |message: String| {
            Some(Waiting {
                reason: QUORUM_CHANGE,
                message,
                recheck_after: QUORUM_RECHECK,
                stalled: false,
            })
        };
        let replaced_disk = matches!(step, QuorumStep::RemoveStale(_));
        match step {
            QuorumStep::Settled | QuorumStep::MoveToDynamic => Ok(None),
            QuorumStep::Wait(message) => Ok(waiting(message)),
            QuorumStep::Refuse(refusal) => Err(refusal.into()),
            QuorumStep::Add(member) => {
                let Some(caught_up) = read
                    .quorum
                    .observers
                    .iter()
                    .find(|observer| observer.replica_id == member.node_id)
                    .filter(|observer| observer.log_end_offset >= read.quorum.high_watermark)
                else {
                    return Ok(waiting(format!(
                        "waiting for controller {} to catch up with the metadata log before it becomes a voter",
                        member.node_id
                    )));
                };
                let result = admin
                    .add_raft_voter(&member, &self.voter_endpoints(cluster, &member))
                    .await;
                let change = VoterChange {
                    reason: "ControllerAdded",
                    action: "AddVoter",
                    done: format!(
                        "Added controller {} to the voters of the KRaft quorum (it had caught up to offset {})",
                        member.node_id, caught_up.log_end_offset
                    ),
                    refused: format!(
                        "Kafka did not add controller {} to the voters yet",
                        member.node_id
                    ),
                };
                self.after_voter_change(result, change).await.map(waiting)
            }
            QuorumStep::Remove(member) | QuorumStep::RemoveStale(member) => {
                let result = admin.remove_raft_voter(&member).await;
                let then = if replaced_disk {
                    "its node came back with a new metadata directory (a replaced disk), which is added next"
                } else {
                    "its node goes next"
                };
                let change = VoterChange {
                    reason: "ControllerRemoved",
                    action: "RemoveVoter",
                    done: format!(
                        "Removed controller {} (directory {}) from the voters of the KRaft quorum; {then}",
                        member.node_id, member.directory_id
                    ),
                    refused: format!(
                        "Kafka did not remove controller {} from the voters yet",
                        member.node_id
                    ),
                };
                self.after_voter_change(result, change).await.map(waiting)
            }
        }
    }

    /// What a voter change that ended with `result` leaves to wait for: once done, its note,
    /// also told as a Normal Event; refused for now, why; any other error fails the
    /// reconciliation.
    async fn after_voter_change(
        &self,
        result: Result<(), AdminError>,
        change: VoterChange,
    ) -> Result<String, ReconcileError> {
        match result {
            Ok(()) => {
                tracing::info!(cluster = %self.name, note = %change.done, "changed the voters of the KRaft quorum");
                self.tell(change.reason, change.action, &change.done).await;
                Ok(change.done)
            }
            Err(error) if refused_for_now(&error) => Ok(format!("{}: {error}", change.refused)),
            Err(error) => Err(error.into()),
        }
    }

    /// Where the new voter `member` takes the quorum's requests: its control plane listener
    /// at its pod's DNS name.
    fn voter_endpoints(&self, cluster: &KafkaCluster, member: &QuorumMember) -> Vec<VoterEndpoint> {
        cluster
            .nodes()
            .find(|node| node.node_id == member.node_id)
            .map(|node| VoterEndpoint {
                listener: CONTROL_PLANE_LISTENER.to_owned(),
                host: cluster.pod_dns_name(&node.pod_name),
                port: u16::try_from(CONTROL_PLANE_PORT).unwrap_or(9090),
            })
            .into_iter()
            .collect()
    }
}

/// How one voter change is reported.
struct VoterChange {
    /// The reason of its Event.
    reason: &'static str,
    /// The action of its Event.
    action: &'static str,
    /// Its note once done.
    done: String,
    /// What is awaited when Kafka refuses it for now.
    refused: String,
}

/// Whether Kafka refused a voter change for now (`REQUEST_TIMED_OUT`: another change not
/// committed yet, a new voter not caught up, a leader not settled; or no answer), so that a
/// later reconciliation tries again.
fn refused_for_now(error: &AdminError) -> bool {
    error.is_retriable()
}
