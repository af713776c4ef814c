//! The options the operator treats as dynamically updatable (left out of the configuration
//! hash, applied to running brokers) are the ones Kafka itself lets change while running:
//! checked against a real broker (the test environment's Kafka jars), whose described
//! broker configuration marks every static option read-only.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;
use strimzi_cluster_operator::model::config::options::dynamic_options;

use strimzi_operator_common::kafka::{
    AdminClient, AdminConfig, AlterConfigOp, ConfigResource, KafkaAdmin,
};
use strimzi_tests::environment::TestEnv;

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
    // And the static option the rolling test changes is read-only.
    let static_option = entries
        .iter()
        .find(|entry| entry.name == "queued.max.requests")
        .unwrap();
    assert!(static_option.read_only);
}
