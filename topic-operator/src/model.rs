//! What a KafkaTopic asks of Kafka and how it differs from what Kafka has: the desired
//! topic, the changes to make (partitions, configs, replication factor), the changes that
//! are not supported, and
//! which configs may be altered. Pure code: no I/O.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use strimzi_api::topic::KafkaTopic;
use strimzi_operator_common::kafka::{
    AlterConfigOp, ConfigEntry, ConfigSource, NewTopic, PartitionDescription,
};

/// The topic config listing the replicas whose leaders are throttled while they send.
pub const LEADER_THROTTLED_REPLICAS: &str = "leader.replication.throttled.replicas";
/// The topic config listing the replicas whose followers are throttled while they fetch.
pub const FOLLOWER_THROTTLED_REPLICAS: &str = "follower.replication.throttled.replicas";

/// Which topic configs the operator may change in Kafka (`STRIMZI_ALTERABLE_TOPIC_CONFIG`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AlterableConfigs {
    /// Every config (`ALL`, the default).
    #[default]
    All,
    /// No config (`NONE`).
    None,
    /// Only the listed configs.
    Only(BTreeSet<String>),
}

impl AlterableConfigs {
    /// Reads `ALL`, `NONE` (any case) or a comma-separated list of config names; empty means
    /// `ALL`.
    pub fn parse(value: &str) -> Self {
        let value = value.trim();
        if value.is_empty() || value.eq_ignore_ascii_case("ALL") {
            Self::All
        } else if value.eq_ignore_ascii_case("NONE") {
            Self::None
        } else {
            Self::Only(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect(),
            )
        }
    }

    /// Whether config `name` may be changed.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::None => false,
            Self::Only(names) => names.contains(name),
        }
    }
}

/// The Kafka topic a KafkaTopic asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredTopic {
    /// The Kafka topic name: `spec.topicName`, or the resource name.
    pub name: String,
    /// `spec.partitions`; the broker's default when unset.
    pub partitions: Option<i32>,
    /// `spec.replicas`; the broker's default when unset.
    pub replicas: Option<i32>,
    /// `spec.config`, every value as Kafka reads it.
    pub configs: BTreeMap<String, String>,
}

impl DesiredTopic {
    /// The topic `resource` asks for.
    pub fn of(resource: &KafkaTopic) -> Self {
        let configs = resource
            .spec
            .config
            .as_ref()
            .map(|config| {
                config
                    .iter()
                    .filter_map(|(name, value)| Some((name.clone(), config_value(value)?)))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            name: resource.topic_name().unwrap_or_default().to_owned(),
            partitions: resource.spec.partitions,
            replicas: resource.spec.replicas,
            configs,
        }
    }

    /// The creation request of this topic.
    pub fn new_topic(&self) -> NewTopic {
        let mut topic = NewTopic::new(&self.name);
        topic.partitions = self.partitions;
        topic.replication_factor = self
            .replicas
            .and_then(|replicas| i16::try_from(replicas).ok());
        topic.configs = self.configs.clone();
        topic
    }
}

/// A config value of `spec.config` as Kafka reads it: strings as they are, numbers and
/// booleans printed, lists joined with commas; `null` leaves the config unset.
fn config_value(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(config_value)
                .collect::<Vec<_>>()
                .join(","),
        ),
        other => Some(other.to_string()),
    }
}

/// What Kafka has of a topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActualTopic {
    /// The topic id.
    pub topic_id: String,
    /// The partition count.
    pub partitions: i32,
    /// The largest replica count of any partition.
    pub replicas: i32,
    /// Every config with its source.
    pub configs: Vec<ConfigEntry>,
    /// Every partition with its leader and replicas, by partition number.
    pub assignment: Vec<PartitionDescription>,
}

impl ActualTopic {
    /// Whether the topic has the throttled-replicas overrides of a replica movement.
    pub fn is_throttled(&self) -> bool {
        self.configs.iter().any(|entry| {
            is_throttle_config(&entry.name) && entry.source == ConfigSource::DynamicTopic
        })
    }
}

/// Whether `name` is one of the topic configs the operator sets while replicas move.
fn is_throttle_config(name: &str) -> bool {
    name == LEADER_THROTTLED_REPLICAS || name == FOLLOWER_THROTTLED_REPLICAS
}

/// A change a KafkaTopic asks for that the operator does not make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsupported {
    /// Fewer partitions than Kafka has.
    PartitionDecrease {
        /// Partitions in Kafka.
        current: i32,
        /// Partitions asked for.
        requested: i32,
    },
    /// A replication factor larger than the number of brokers (or below one).
    ReplicationFactorTooLarge {
        /// Replicas asked for.
        requested: i32,
        /// Brokers in the cluster.
        brokers: usize,
    },
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::PartitionDecrease { current, requested } => write!(
                formatter,
                "Decreasing partitions not supported (from {current} to {requested})"
            ),
            Self::ReplicationFactorTooLarge { requested, brokers } if *requested < 1 => write!(
                formatter,
                "Replication factor {requested} is invalid (the cluster has {brokers} brokers)"
            ),
            Self::ReplicationFactorTooLarge { requested, brokers } => write!(
                formatter,
                "Replication factor {requested} is larger than the {brokers} brokers"
            ),
        }
    }
}

/// The changes that bring an existing Kafka topic in line with a KafkaTopic.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Changes {
    /// The new partition count, when it is to grow.
    pub partitions: Option<i32>,
    /// The replication factor asked for, when a partition has another replica count.
    pub replicas: Option<i32>,
    /// Configs to set and dynamic overrides to delete.
    pub configs: Vec<AlterConfigOp>,
    /// Configs of the spec that differ from Kafka but may not be altered.
    pub not_alterable: Vec<String>,
    /// Changes asked for that are refused.
    pub unsupported: Vec<Unsupported>,
}

impl Changes {
    /// Whether Kafka is to be changed.
    pub fn is_empty(&self) -> bool {
        self.partitions.is_none() && self.configs.is_empty()
    }
}

/// The changes that turn `actual` into `desired`, altering only `alterable` configs.
pub fn changes(
    desired: &DesiredTopic,
    actual: &ActualTopic,
    alterable: &AlterableConfigs,
) -> Changes {
    let mut changes = Changes::default();
    if let Some(requested) = desired.partitions {
        if requested > actual.partitions {
            changes.partitions = Some(requested);
        } else if requested < actual.partitions {
            changes.unsupported.push(Unsupported::PartitionDecrease {
                current: actual.partitions,
                requested,
            });
        }
    }
    if let Some(requested) = desired.replicas {
        let size = usize::try_from(requested).unwrap_or_default();
        if actual
            .assignment
            .iter()
            .any(|partition| partition.replicas.len() != size)
        {
            changes.replicas = Some(requested);
        }
    }
    let current: BTreeMap<&str, &ConfigEntry> = actual
        .configs
        .iter()
        .map(|entry| (entry.name.as_str(), entry))
        .collect();
    for (name, value) in &desired.configs {
        let entry = current.get(name.as_str());
        if entry.is_some_and(|entry| entry.value.as_ref() == Some(value)) {
            continue;
        }
        if alterable.allows(name) {
            changes.configs.push(AlterConfigOp::Set {
                name: name.clone(),
                value: value.clone(),
            });
        } else {
            changes.not_alterable.push(name.clone());
        }
    }
    for entry in &actual.configs {
        // The throttle of a replica movement is the operator's own, removed when it ends.
        let is_override = entry.source == ConfigSource::DynamicTopic
            && !entry.read_only
            && !is_throttle_config(&entry.name);
        if is_override && !desired.configs.contains_key(&entry.name) {
            if alterable.allows(&entry.name) {
                changes.configs.push(AlterConfigOp::Delete {
                    name: entry.name.clone(),
                });
            } else {
                changes.not_alterable.push(entry.name.clone());
            }
        }
    }
    changes
}

/// Why a KafkaTopic managing topic `managed` whose `spec.topicName` changed is not reconciled.
pub fn renamed_message(managed: &str) -> String {
    format!("Changing spec.topicName is not supported (the resource manages topic {managed})")
}

/// Why a KafkaTopic managing topic `managed`, deleted while its `spec.topicName` names
/// `named`, deletes neither topic yet.
pub fn renamed_deletion_message(managed: &str, named: &str) -> String {
    format!(
        "{}; neither it nor topic {named} is deleted until spec.topicName is reverted to {managed}",
        renamed_message(managed)
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn entry(name: &str, value: &str, source: ConfigSource) -> ConfigEntry {
        ConfigEntry {
            name: name.into(),
            value: Some(value.into()),
            source,
            read_only: false,
            sensitive: false,
        }
    }

    fn actual(partitions: i32, replicas: i32, configs: Vec<ConfigEntry>) -> ActualTopic {
        ActualTopic {
            topic_id: "id".into(),
            partitions,
            replicas,
            configs,
            assignment: (0..partitions)
                .map(|partition| PartitionDescription {
                    partition,
                    leader: 1,
                    replicas: (1..=replicas).collect(),
                    isr: (1..=replicas).collect(),
                })
                .collect(),
        }
    }

    fn desired(partitions: Option<i32>, configs: &[(&str, &str)]) -> DesiredTopic {
        DesiredTopic {
            name: "t".into(),
            partitions,
            replicas: None,
            configs: configs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn reads_spec_values_as_kafka_does() {
        let topic: KafkaTopic = serde_json::from_value(json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic",
            "metadata": {"name": "resource-name"},
            "spec": {"partitions": 3, "config": {
                "retention.ms": 7200000, "cleanup.policy": ["compact", "delete"],
                "preallocate": true, "compression.type": "lz4", "segment.ms": null
            }}
        }))
        .unwrap();
        let topic = DesiredTopic::of(&topic);
        assert_eq!(topic.name, "resource-name");
        assert_eq!(topic.partitions, Some(3));
        assert_eq!(topic.configs["retention.ms"], "7200000");
        assert_eq!(topic.configs["cleanup.policy"], "compact,delete");
        assert_eq!(topic.configs["preallocate"], "true");
        assert_eq!(topic.configs["compression.type"], "lz4");
        assert!(!topic.configs.contains_key("segment.ms"));
    }

    #[test]
    fn grows_partitions_and_refuses_to_shrink_them() {
        let none = AlterableConfigs::All;
        assert_eq!(
            changes(&desired(Some(5), &[]), &actual(3, 1, vec![]), &none).partitions,
            Some(5)
        );
        assert!(changes(&desired(Some(3), &[]), &actual(3, 1, vec![]), &none).is_empty());
        assert!(changes(&desired(None, &[]), &actual(3, 1, vec![]), &none).is_empty());
        let shrink = changes(&desired(Some(2), &[]), &actual(3, 1, vec![]), &none);
        assert_eq!(shrink.partitions, None);
        assert_eq!(
            shrink.unsupported,
            vec![Unsupported::PartitionDecrease {
                current: 3,
                requested: 2
            }]
        );
        assert!(
            shrink.unsupported[0]
                .to_string()
                .contains("Decreasing partitions")
        );
    }

    #[test]
    fn asks_for_a_replication_factor_change_and_keeps_the_throttle() {
        let mut topic = desired(None, &[]);
        topic.replicas = Some(3);
        let throttled = vec![entry(
            LEADER_THROTTLED_REPLICAS,
            "0:1",
            ConfigSource::DynamicTopic,
        )];
        let changes = changes(&topic, &actual(1, 1, throttled), &AlterableConfigs::All);
        assert_eq!(changes.replicas, Some(3));
        assert!(changes.unsupported.is_empty());
        assert!(changes.configs.is_empty(), "the throttle is not drift");
        topic.replicas = Some(1);
        assert_eq!(
            super::changes(&topic, &actual(2, 1, vec![]), &AlterableConfigs::All).replicas,
            None
        );
    }

    #[test]
    fn sets_differing_configs_and_deletes_overrides_not_in_the_spec() {
        let kafka = vec![
            entry("retention.ms", "1000", ConfigSource::DynamicTopic),
            entry("segment.ms", "5000", ConfigSource::DynamicTopic),
            entry("cleanup.policy", "delete", ConfigSource::Default),
            entry("max.message.bytes", "100", ConfigSource::StaticBroker),
        ];
        let topic = desired(
            None,
            &[("retention.ms", "2000"), ("cleanup.policy", "delete")],
        );
        let changes = changes(&topic, &actual(1, 1, kafka), &AlterableConfigs::All);
        assert_eq!(
            changes.configs,
            vec![
                AlterConfigOp::Set {
                    name: "retention.ms".into(),
                    value: "2000".into()
                },
                AlterConfigOp::Delete {
                    name: "segment.ms".into()
                },
            ]
        );
        assert!(changes.not_alterable.is_empty());
    }

    #[test]
    fn alters_only_alterable_configs_and_names_the_rest() {
        let kafka = vec![
            entry("retention.ms", "1000", ConfigSource::DynamicTopic),
            entry("segment.ms", "5000", ConfigSource::DynamicTopic),
        ];
        let topic = desired(None, &[("retention.ms", "2000"), ("flush.ms", "9")]);
        let alterable = AlterableConfigs::parse("retention.ms, compression.type");
        let changes = changes(&topic, &actual(1, 1, kafka.clone()), &alterable);
        assert_eq!(
            changes.configs,
            vec![AlterConfigOp::Set {
                name: "retention.ms".into(),
                value: "2000".into()
            }]
        );
        assert_eq!(
            changes.not_alterable,
            vec!["flush.ms".to_owned(), "segment.ms".to_owned()]
        );
        let nothing = super::changes(
            &topic,
            &actual(1, 1, kafka),
            &AlterableConfigs::parse("none"),
        );
        assert!(nothing.configs.is_empty());
        assert_eq!(nothing.not_alterable.len(), 3);
    }

    #[test]
    fn parses_alterable_configs() {
        assert_eq!(AlterableConfigs::parse(""), AlterableConfigs::All);
        assert_eq!(AlterableConfigs::parse("ALL"), AlterableConfigs::All);
        assert_eq!(AlterableConfigs::parse("NONE"), AlterableConfigs::None);
        assert!(AlterableConfigs::parse("a,b").allows("b"));
        assert!(!AlterableConfigs::parse("a,b").allows("c"));
    }
}
