//! The options the operator applies to running brokers are ones Kafka itself lets change while
//! running, and every other option Kafka lets change while running is one the operator changes
//! by a restart on purpose: checked against a real broker (the test environment's Kafka jars),
//! whose described broker configuration marks every static option read-only.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;
use strimzi_cluster_operator::model::config::hash::is_kafka_broker_option;
use strimzi_cluster_operator::model::config::options::dynamic_options;

use strimzi_operator_common::kafka::{
    AdminClient, AdminConfig, AlterConfigOp, ConfigResource, KafkaAdmin,
};
use strimzi_tests::environment::TestEnv;

/// The Kafka version of the test environment's broker.
const KAFKA_VERSION: &str = "4.3.1";

/// Options Kafka 4.3 changes while running that the operator changes by restarting the nodes:
/// the per-broker ones (listeners and security, which Kafka takes per listener; the
/// operator sets cluster-wide defaults only), `config.providers` (the operator merges the
/// user's providers with its own) and the cluster-wide options Kafka 4.2 does not have.
fn restarted_on_purpose(name: &str) -> bool {
    name.starts_with("ssl.")
        || name.starts_with("sasl.")
        || [
            "listeners",
            "listener.security.protocol.map",
            "principal.builder.class",
            "cordoned.log.dirs",
            "config.providers",
            "follower.fetch.last.tiered.offset.enable",
            "group.consumer.assignment.interval.ms",
            "group.coordinator.cached.buffer.max.bytes",
            "group.share.assignment.interval.ms",
            "group.streams.assignment.interval.ms",
            "share.coordinator.cached.buffer.max.bytes",
        ]
        .contains(&name)
}

#[tokio::test]
async fn every_option_applied_without_a_restart_is_dynamic_in_kafka() {
    let broker = TestEnv::shared().kafka();
    let bootstrap = &broker.listener("plain").unwrap().bootstrap;
    let admin = AdminClient::new(AdminConfig::plaintext(bootstrap)).unwrap();
    let cluster = admin.describe_cluster().await.unwrap();
    let resource = ConfigResource::broker(cluster.brokers[0].id);
    let described = admin
        .describe_configs(std::slice::from_ref(&resource))
        .await
        .unwrap();
    let entries = described[&resource].as_ref().unwrap();
    let mut wrong = Vec::new();
    for option in dynamic_options() {
        match entries.iter().find(|entry| entry.name == *option) {
            // Kafka describes some dynamic-only options (the replication throttles) only
            // once set: ask it to validate setting one instead.
            None => {
                let change = BTreeMap::from([(
                    ConfigResource::broker_defaults(),
                    vec![AlterConfigOp::Set {
                        name: (*option).to_owned(),
                        value: "1000".to_owned(),
                    }],
                )]);
                let validated = admin.incremental_alter_configs(&change, true).await;
                if !validated.is_ok_and(|results| results.values().all(Result::is_ok)) {
                    wrong.push(format!("{option}: not settable while running"));
                }
            }
            Some(entry) if entry.read_only => wrong.push(format!("{option}: read-only")),
            Some(_) => {}
        }
    }
    assert!(wrong.is_empty(), "not dynamic in Kafka: {wrong:?}");
    // The other way round: what Kafka could change live and the operator restarts for.
    let unexpected: Vec<&str> = entries
        .iter()
        .filter(|entry| !entry.read_only && is_kafka_broker_option(KAFKA_VERSION, &entry.name))
        .map(|entry| entry.name.as_str())
        .filter(|name| !dynamic_options().contains(name) && !restarted_on_purpose(name))
        .collect();
    assert!(
        unexpected.is_empty(),
        "dynamic in Kafka, yet neither applied live nor known to restart: {unexpected:?}"
    );
    // And the static option the rolling test changes is read-only.
    let static_option = entries
        .iter()
        .find(|entry| entry.name == "queued.max.requests")
        .unwrap();
    assert!(static_option.read_only);
}
