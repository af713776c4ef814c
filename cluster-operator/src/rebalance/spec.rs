//! A KafkaRebalance's spec as the Cruise Control request it asks for (pure).

use strimzi_api::rebalance::{KafkaRebalanceMode, KafkaRebalanceSpec};
use strimzi_operator_common::cruise_control::{
    BrokerLogDir, ProposalOptions, ProposalRequest, ProposalScope,
};

use super::RebalanceError;
use crate::model::config::broker::DATA_MOUNT_PATH;

/// The log directory of JBOD volume `volume` on broker `broker`, as the Kafka pods have it:
/// `/var/lib/kafka/data-<volume>/kafka-log<broker>`.
pub fn log_dir(volume: i32, broker: i32) -> String {
    format!("{DATA_MOUNT_PATH}/data-{volume}/kafka-log{broker}")
}

/// The proposal `spec` asks for: `full` rebalances the whole cluster (`spec.brokers` is
/// ignored, as Strimzi does), `add-brokers` and `remove-brokers` need `spec.brokers`,
/// `remove-disks` needs `spec.moveReplicasOffVolumes`. The goals and limits apply to every
/// mode but `remove-disks`; the disk settings to `full` only.
pub fn proposal_request(spec: &KafkaRebalanceSpec) -> Result<ProposalRequest, RebalanceError> {
    let mode = spec.mode_or_default();
    let brokers = || match spec.brokers.as_deref() {
        Some(brokers) if !brokers.is_empty() => Ok(brokers.to_vec()),
        _ => Err(RebalanceError::InvalidSpec(format!(
            "spec.brokers must list the brokers in mode {}",
            mode.as_str()
        ))),
    };
    let scope = match mode {
        KafkaRebalanceMode::Full => ProposalScope::Full {
            rebalance_disk: spec.rebalance_disk.unwrap_or(false),
            concurrent_intra_broker_partition_movements: spec
                .concurrent_intra_broker_partition_movements,
        },
        KafkaRebalanceMode::AddBrokers => ProposalScope::AddBrokers(brokers()?),
        KafkaRebalanceMode::RemoveBrokers => ProposalScope::RemoveBrokers(brokers()?),
        KafkaRebalanceMode::RemoveDisks => ProposalScope::RemoveDisks(log_dirs(spec)?),
    };
    Ok(ProposalRequest {
        scope,
        options: ProposalOptions {
            goals: spec.goals.clone().unwrap_or_default(),
            skip_hard_goal_check: spec.skip_hard_goal_check.unwrap_or(false),
            excluded_topics: spec.excluded_topics.clone(),
            concurrent_partition_movements_per_broker: spec
                .concurrent_partition_movements_per_broker,
            concurrent_leader_movements: spec.concurrent_leader_movements,
            replication_throttle: spec.replication_throttle,
            replica_movement_strategies: spec
                .replica_movement_strategies
                .clone()
                .unwrap_or_default(),
        },
    })
}

/// The log directories of the volumes `spec.moveReplicasOffVolumes` lists.
fn log_dirs(spec: &KafkaRebalanceSpec) -> Result<Vec<BrokerLogDir>, RebalanceError> {
    let invalid = |message: &str| RebalanceError::InvalidSpec(message.to_owned());
    let volumes = spec
        .move_replicas_off_volumes
        .as_deref()
        .filter(|volumes| !volumes.is_empty())
        .ok_or_else(|| {
            invalid(
                "spec.moveReplicasOffVolumes must list the volumes to empty in mode remove-disks",
            )
        })?;
    let mut dirs = Vec::new();
    for (index, entry) in volumes.iter().enumerate() {
        let broker = entry.broker_id.ok_or_else(|| {
            invalid(&format!(
                "spec.moveReplicasOffVolumes[{index}].brokerId is required"
            ))
        })?;
        let ids = entry
            .volume_ids
            .as_deref()
            .filter(|ids| !ids.is_empty())
            .ok_or_else(|| {
                invalid(&format!(
                    "spec.moveReplicasOffVolumes[{index}].volumeIds must list at least one volume"
                ))
            })?;
        dirs.extend(ids.iter().map(|volume| BrokerLogDir {
            broker,
            log_dir: log_dir(*volume, broker),
        }));
    }
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use strimzi_api::rebalance::BrokerAndVolumeIds;
    use strimzi_operator_common::ErrorReason;

    #[test]
    fn a_full_rebalance_takes_the_disk_settings_and_every_option() {
        let spec = KafkaRebalanceSpec {
            brokers: Some(vec![1]),
            goals: Some(vec!["RackAwareGoal".to_owned()]),
            skip_hard_goal_check: Some(true),
            rebalance_disk: Some(true),
            excluded_topics: Some("archive-.*".to_owned()),
            concurrent_partition_movements_per_broker: Some(5),
            concurrent_intra_broker_partition_movements: Some(2),
            concurrent_leader_movements: Some(1000),
            replication_throttle: Some(1024),
            replica_movement_strategies: Some(vec!["a.B".to_owned()]),
            ..KafkaRebalanceSpec::default()
        };
        let request = proposal_request(&spec).unwrap();
        assert_eq!(
            request.scope,
            ProposalScope::Full {
                rebalance_disk: true,
                concurrent_intra_broker_partition_movements: Some(2)
            }
        );
        assert_eq!(
            request.options,
            ProposalOptions {
                goals: vec!["RackAwareGoal".to_owned()],
                skip_hard_goal_check: true,
                excluded_topics: Some("archive-.*".to_owned()),
                concurrent_partition_movements_per_broker: Some(5),
                concurrent_leader_movements: Some(1000),
                replication_throttle: Some(1024),
                replica_movement_strategies: vec!["a.B".to_owned()],
            }
        );
        let empty = proposal_request(&KafkaRebalanceSpec::default()).unwrap();
        assert_eq!(
            empty.scope,
            ProposalScope::Full {
                rebalance_disk: false,
                concurrent_intra_broker_partition_movements: None
            }
        );
        assert_eq!(empty.options, ProposalOptions::default());
    }

    #[test]
    fn adding_and_removing_brokers_needs_the_brokers() {
        let mut spec = KafkaRebalanceSpec {
            mode: Some(KafkaRebalanceMode::AddBrokers),
            brokers: Some(vec![3, 4]),
            ..KafkaRebalanceSpec::default()
        };
        assert_eq!(
            proposal_request(&spec).unwrap().scope,
            ProposalScope::AddBrokers(vec![3, 4])
        );
        spec.mode = Some(KafkaRebalanceMode::RemoveBrokers);
        assert_eq!(
            proposal_request(&spec).unwrap().scope,
            ProposalScope::RemoveBrokers(vec![3, 4])
        );
        spec.brokers = Some(Vec::new());
        let error = proposal_request(&spec).unwrap_err();
        assert_eq!(error.reason(), "InvalidResourceException");
        assert!(error.to_string().contains("mode remove-brokers"), "{error}");
    }

    #[test]
    fn removing_disks_names_the_log_directories_of_the_volumes() {
        let mut spec = KafkaRebalanceSpec {
            mode: Some(KafkaRebalanceMode::RemoveDisks),
            move_replicas_off_volumes: Some(vec![
                BrokerAndVolumeIds {
                    broker_id: Some(0),
                    volume_ids: Some(vec![1, 2]),
                },
                BrokerAndVolumeIds {
                    broker_id: Some(5),
                    volume_ids: Some(vec![0]),
                },
            ]),
            ..KafkaRebalanceSpec::default()
        };
        let dirs: Vec<(i32, String)> = match proposal_request(&spec).unwrap().scope {
            ProposalScope::RemoveDisks(dirs) => dirs
                .into_iter()
                .map(|dir| (dir.broker, dir.log_dir))
                .collect(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            dirs,
            [
                (0, "/var/lib/kafka/data-1/kafka-log0".to_owned()),
                (0, "/var/lib/kafka/data-2/kafka-log0".to_owned()),
                (5, "/var/lib/kafka/data-0/kafka-log5".to_owned()),
            ]
        );
        spec.move_replicas_off_volumes = Some(vec![BrokerAndVolumeIds {
            broker_id: Some(0),
            volume_ids: None,
        }]);
        let error = proposal_request(&spec).unwrap_err();
        assert!(error.to_string().contains("[0].volumeIds"), "{error}");
        spec.move_replicas_off_volumes = None;
        assert!(proposal_request(&spec).is_err());
    }
}
