//! The settings the operator keeps on the running cluster through the admin API, once
//! nothing is left to roll: the user's dynamically updatable broker options (set and removed
//! with incremental alter configs, no restart), the KRaft metadata version (raised with a
//! feature update once every node runs the Kafka version), the default user quotas of
//! `spec.kafka.quotas` of type `kafka`, and the unregistration of removed brokers.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};
use strimzi_api::kafka::QuotasPlugin;
use strimzi_operator_common::kafka::{
    AdminClient, AdminError, AlterConfigOp, ConfigEntry, ConfigResource, ConfigSource,
    FeatureUpdate, FeatureUpgradeType, KafkaAdmin, QuotaAlteration, QuotaEntity,
    QuotaFilterComponent, QuotaMatch,
};

use super::Reconciliation;
use crate::model::KafkaCluster;
use crate::model::config::options::is_dynamic_option;
use crate::model::nodes::images::{metadata_feature_level, metadata_version_name};

/// The KRaft feature whose level is the metadata version.
const METADATA_VERSION_FEATURE: &str = "metadata.version";
/// The client quota keys that `spec.kafka.quotas` of type `kafka` sets as defaults of every
/// user.
const DEFAULT_QUOTA_KEYS: [&str; 4] = [
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
];

/// The default user quotas `quotas` asks for, by key; `None` for each key it leaves unset
/// (Strimzi removes those, and all four when the quotas are not of type `kafka`).
pub(super) fn desired_default_quotas(
    quotas: Option<&QuotasPlugin>,
) -> BTreeMap<&'static str, Option<f64>> {
    let kafka = match quotas {
        Some(QuotasPlugin::Kafka(kafka)) => Some(kafka),
        _ => None,
    };
    let values = [
        kafka.and_then(|q| q.producer_byte_rate).map(|v| v as f64),
        kafka.and_then(|q| q.consumer_byte_rate).map(|v| v as f64),
        kafka.and_then(|q| q.request_percentage).map(f64::from),
        kafka
            .and_then(|q| q.controller_mutation_rate.as_ref())
            .and_then(serde_json::Number::as_f64),
    ];
    DEFAULT_QUOTA_KEYS.into_iter().zip(values).collect()
}

/// The changes that bring the default user quotas from `current` to `desired`.
fn quota_changes(
    desired: &BTreeMap<&'static str, Option<f64>>,
    current: &BTreeMap<String, f64>,
) -> BTreeMap<String, Option<f64>> {
    desired
        .iter()
        .filter(|(key, wanted)| current.get(**key).copied() != **wanted)
        .map(|(key, wanted)| ((*key).to_owned(), *wanted))
        .collect()
}

/// The quota entity of every user without quotas of their own.
fn default_user() -> QuotaEntity {
    QuotaEntity::from([("user".to_owned(), None)])
}

impl Reconciliation<'_> {
    /// Brings the running cluster's settings to the desired ones (see the module); whether
    /// everything is settled (a removed broker still shutting down is not yet).
    pub(super) async fn apply_live_settings(
        &mut self,
        cluster: &KafkaCluster,
        admin: &AdminClient,
        dynamic: &[(String, String)],
    ) -> Result<bool, AdminError> {
        self.apply_dynamic_configuration(cluster, admin, dynamic)
            .await?;
        self.metadata_version = self.reconcile_metadata_version(cluster, admin).await?;
        self.reconcile_default_quotas(cluster, admin).await?;
        self.unregister_removed_brokers(cluster, admin).await
    }

    /// Sets the default user quotas of `spec.kafka.quotas` (type `kafka`) and removes the
    /// ones it does not ask for, with a Normal Event when something changed.
    async fn reconcile_default_quotas(
        &self,
        cluster: &KafkaCluster,
        admin: &AdminClient,
    ) -> Result<(), AdminError> {
        let filter = [QuotaFilterComponent {
            entity_type: "user".to_owned(),
            matching: QuotaMatch::Default,
        }];
        let current = admin
            .describe_client_quotas(&filter, true)
            .await?
            .into_iter()
            .find(|(entity, _)| *entity == default_user())
            .map(|(_, values)| values)
            .unwrap_or_default();
        let changes = quota_changes(
            &desired_default_quotas(cluster.spec.quotas.as_ref()),
            &current,
        );
        if changes.is_empty() {
            return Ok(());
        }
        let alteration = QuotaAlteration {
            entity: default_user(),
            changes: changes.clone(),
        };
        for result in admin.alter_client_quotas(&[alteration], false).await? {
            result?;
        }
        let described: Vec<String> = changes
            .iter()
            .map(|(key, value)| match value {
                Some(value) => format!("{key}={value}"),
                None => format!("{key} removed"),
            })
            .collect();
        self.tell(
            "DefaultQuotasUpdated",
            "UpdateDefaultQuotas",
            &format!("Default user quotas updated: {}", described.join(", ")),
        )
        .await;
        Ok(())
    }

    /// Unregisters the brokers the controllers still know that the cluster no longer has
    /// (removed nodes, nodes that lost the broker role), once they are fenced, with a Normal
    /// Event each. Whether none is left registered.
    async fn unregister_removed_brokers(
        &self,
        cluster: &KafkaCluster,
        admin: &AdminClient,
    ) -> Result<bool, AdminError> {
        let desired: BTreeSet<i32> = cluster.brokers().map(|node| node.node_id).collect();
        let mut all_gone = true;
        for (id, fenced) in admin.registered_brokers().await? {
            if desired.contains(&id) {
                continue;
            }
            if !fenced {
                all_gone = false;
                continue;
            }
            admin.unregister_broker(id).await?;
            tracing::info!(cluster = %cluster.name, broker = id, "removed broker unregistered");
            self.tell(
                "BrokerUnregistered",
                "UnregisterBroker",
                &format!("Broker {id}, removed from the cluster, was unregistered"),
            )
            .await;
        }
        Ok(all_gone)
    }

    /// Raises the cluster's finalized `metadata.version` to the desired one with Kafka's
    /// feature update (every node runs the desired Kafka version by now: nothing is left to
    /// roll), with a Normal Event; a desired version older than the finalized one is only a
    /// warning, as Kafka cannot lower it. Returns the metadata version the cluster uses.
    async fn reconcile_metadata_version(
        &mut self,
        cluster: &KafkaCluster,
        admin: &AdminClient,
    ) -> Result<Option<String>, AdminError> {
        let desired_name = &cluster.version.metadata_version;
        let Some(desired) = metadata_feature_level(desired_name) else {
            return Ok(None);
        };
        let features = admin.describe_features().await?;
        let Some(&current) = features.finalized.get(METADATA_VERSION_FEATURE) else {
            return Ok(None);
        };
        let current_name = metadata_version_name(current)
            .map_or_else(|| format!("level {current}"), str::to_owned);
        if current > desired {
            self.warn(
                "MetadataVersionDowngradeNotSupported",
                &format!(
                    "the metadata version stays {current_name}: Kafka cannot lower it to {desired_name}"
                ),
            );
            return Ok(Some(current_name));
        }
        if current < desired {
            let update = FeatureUpdate {
                feature: METADATA_VERSION_FEATURE.to_owned(),
                max_version_level: desired,
                upgrade_type: FeatureUpgradeType::Upgrade,
            };
            for (_, result) in admin.update_features(&[update], false).await? {
                result?;
            }
            tracing::info!(cluster = %cluster.name, from = %current_name, to = %desired_name, "metadata version updated");
            self.tell(
                "MetadataVersionUpdated",
                "UpdateMetadataVersion",
                &format!("Metadata version updated from {current_name} to {desired_name}"),
            )
            .await;
        }
        Ok(Some(desired_name.clone()))
    }

    /// Sets the user's dynamically updatable options as cluster-wide broker defaults where
    /// they differ (some, like `min.insync.replicas`, Kafka accepts only cluster-wide),
    /// removes the ones the user dropped, and removes per-broker overrides of dynamic
    /// options, which would hide the defaults; with incremental alter configs and a Normal
    /// Event on the Kafka saying what changed.
    async fn apply_dynamic_configuration(
        &self,
        cluster: &KafkaCluster,
        admin: &AdminClient,
        dynamic: &[(String, String)],
    ) -> Result<(), AdminError> {
        let defaults = ConfigResource::broker_defaults();
        let mut resources: Vec<ConfigResource> = cluster
            .brokers()
            .map(|node| ConfigResource::broker(node.node_id))
            .collect();
        resources.push(defaults.clone());
        let mut changes = BTreeMap::new();
        for (resource, entries) in admin.describe_configs(&resources).await? {
            let entries = entries?;
            let ops = if resource == defaults {
                default_changes(dynamic, &entries)
            } else {
                stale_overrides(&entries)
            };
            if !ops.is_empty() {
                changes.insert(resource, ops);
            }
        }
        if changes.is_empty() {
            return Ok(());
        }
        for (resource, result) in admin.incremental_alter_configs(&changes, false).await? {
            result?;
            let described: Vec<String> = changes[&resource]
                .iter()
                .map(|op| match op {
                    AlterConfigOp::Set { name, value } => format!("{name}={value}"),
                    AlterConfigOp::Delete { name } => format!("{name} removed"),
                })
                .collect();
            let whom = if resource == defaults {
                "All brokers".to_owned()
            } else {
                format!("Broker {}", resource.name)
            };
            tracing::info!(cluster = %cluster.name, %whom, changes = %described.join(", "), "dynamic configuration applied");
            self.tell(
                "DynamicConfigurationUpdated",
                "UpdateBrokerConfiguration",
                &format!(
                    "{whom} reconfigured without a restart: {}",
                    described.join(", ")
                ),
            )
            .await;
        }
        Ok(())
    }
}

/// Whether the operator may remove `entry` from where it is set with `source`: a dynamically
/// updatable option (not a replication throttle) set there.
fn removable(entry: &ConfigEntry, source: ConfigSource) -> bool {
    entry.source == source
        && is_dynamic_option(&entry.name)
        && !is_operational_throttle(&entry.name)
}

/// The changes that bring the cluster-wide defaults (`entries`) to the user's dynamic
/// options: a `Set` for each option not set there to its value, a `Delete` for each
/// dynamically updatable option set there that the user no longer asks for.
fn default_changes(dynamic: &[(String, String)], entries: &[ConfigEntry]) -> Vec<AlterConfigOp> {
    let set_here: BTreeMap<&str, &ConfigEntry> = entries
        .iter()
        .filter(|entry| entry.source == ConfigSource::DynamicDefaultBroker)
        .map(|entry| (entry.name.as_str(), entry))
        .collect();
    let wanted: BTreeSet<&str> = dynamic.iter().map(|(key, _)| key.as_str()).collect();
    let mut ops: Vec<AlterConfigOp> = dynamic
        .iter()
        .filter(|(key, value)| {
            set_here.get(key.as_str()).is_none_or(|entry| {
                !entry.sensitive && entry.value.as_deref().map(str::trim) != Some(value.trim())
            })
        })
        .map(|(key, value)| AlterConfigOp::Set {
            name: key.clone(),
            value: value.clone(),
        })
        .collect();
    ops.extend(
        entries
            .iter()
            .filter(|entry| removable(entry, ConfigSource::DynamicDefaultBroker))
            .filter(|entry| !wanted.contains(entry.name.as_str()))
            .map(|entry| AlterConfigOp::Delete {
                name: entry.name.clone(),
            }),
    );
    ops
}

/// The per-broker overrides of dynamically updatable options in one broker's `entries`,
/// to remove: they would hide the cluster-wide values.
fn stale_overrides(entries: &[ConfigEntry]) -> Vec<AlterConfigOp> {
    entries
        .iter()
        .filter(|entry| removable(entry, ConfigSource::DynamicBroker))
        .map(|entry| AlterConfigOp::Delete {
            name: entry.name.clone(),
        })
        .collect()
}

/// Whether `name` is a replication throttle, which partition reassignments (and Cruise
/// Control) set on brokers for the time they run: the operator never removes one it does
/// not ask for.
fn is_operational_throttle(name: &str) -> bool {
    name.ends_with(".replication.throttled.rate")
}

/// A fingerprint of what the operator keeps on the running cluster: the dynamic options, the
/// brokers they apply to, the metadata version, the default quotas, and each node's desired
/// `server.config` (`server_configs` by pod name), whose static options the rolling step
/// compares with what the nodes run.
pub(super) fn settings_fingerprint(
    cluster: &KafkaCluster,
    dynamic: &[(String, String)],
    server_configs: &BTreeMap<String, String>,
) -> String {
    let mut hasher = Sha256::new();
    hasher.update(format!(
        "metadata.version={}\n",
        cluster.version.metadata_version
    ));
    for (key, value) in desired_default_quotas(cluster.spec.quotas.as_ref()) {
        hasher.update(format!("quota {key}={value:?}\n"));
    }
    for (key, value) in dynamic {
        hasher.update(format!("{key}={value}\n"));
    }
    for node in cluster.brokers() {
        hasher.update(format!("broker {}\n", node.node_id));
    }
    for (pod, server_config) in server_configs {
        // The length keeps one node's text from passing for another's.
        hasher.update(format!(
            "server.config of {pod} ({})\n",
            server_config.len()
        ));
        hasher.update(server_config);
    }
    hasher
        .finalize()
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn entry(name: &str, value: &str, source: ConfigSource) -> ConfigEntry {
        ConfigEntry {
            name: name.to_owned(),
            value: Some(value.to_owned()),
            source,
            read_only: false,
            sensitive: false,
        }
    }

    #[test]
    fn default_quotas_follow_the_kafka_quotas_type_and_others_are_removed() {
        let kafka: QuotasPlugin = serde_json::from_value(serde_json::json!({
            "type": "kafka", "producerByteRate": 1000, "requestPercentage": 50,
        }))
        .unwrap();
        let desired = desired_default_quotas(Some(&kafka));
        assert_eq!(desired["producer_byte_rate"], Some(1000.0));
        assert_eq!(desired["consumer_byte_rate"], None);
        let current = BTreeMap::from([
            ("producer_byte_rate".to_owned(), 1000.0),
            ("consumer_byte_rate".to_owned(), 5.0),
        ]);
        assert_eq!(
            quota_changes(&desired, &current),
            BTreeMap::from([
                ("consumer_byte_rate".to_owned(), None),
                ("request_percentage".to_owned(), Some(50.0)),
            ])
        );
        assert!(desired_default_quotas(None).values().all(Option::is_none));
        assert!(quota_changes(&desired_default_quotas(None), &BTreeMap::new()).is_empty());
    }

    #[test]
    fn options_go_to_the_cluster_defaults_and_per_broker_overrides_are_removed() {
        let dynamic = vec![
            ("log.retention.ms".to_owned(), "60000".to_owned()),
            ("min.insync.replicas".to_owned(), "2".to_owned()),
        ];
        let defaults = [
            entry(
                "min.insync.replicas",
                "2",
                ConfigSource::DynamicDefaultBroker,
            ),
            entry("num.io.threads", "16", ConfigSource::DynamicDefaultBroker),
            entry(
                "follower.replication.throttled.rate",
                "1000",
                ConfigSource::DynamicDefaultBroker,
            ),
            entry("log.retention.ms", "60000", ConfigSource::StaticBroker),
        ];
        assert_eq!(
            default_changes(&dynamic, &defaults),
            [
                AlterConfigOp::Set {
                    name: "log.retention.ms".to_owned(),
                    value: "60000".to_owned()
                },
                AlterConfigOp::Delete {
                    name: "num.io.threads".to_owned()
                },
            ]
        );
        let applied = [
            entry(
                "log.retention.ms",
                "60000",
                ConfigSource::DynamicDefaultBroker,
            ),
            entry(
                "min.insync.replicas",
                "2",
                ConfigSource::DynamicDefaultBroker,
            ),
        ];
        assert!(default_changes(&dynamic, &applied).is_empty());
        let broker = [
            entry("log.retention.ms", "1", ConfigSource::DynamicBroker),
            entry(
                "leader.replication.throttled.rate",
                "1000",
                ConfigSource::DynamicBroker,
            ),
            entry("queued.max.requests", "600", ConfigSource::StaticBroker),
        ];
        assert_eq!(
            stale_overrides(&broker),
            [AlterConfigOp::Delete {
                name: "log.retention.ms".to_owned()
            }]
        );
    }
}
