//! Builds a Kafka cluster with two node pools (three controllers, three brokers) in Rust and
//! prints the resources as YAML, ready for `kubectl apply -f -`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use strimzi_api::kafka::{
    GenericKafkaListener, Kafka, KafkaClusterSpec, KafkaListenerAuthentication,
    KafkaListenerAuthenticationTls, KafkaListenerType, KafkaSpec,
};
use strimzi_api::labels;
use strimzi_api::node_pool::{KafkaNodePool, KafkaNodePoolSpec, ProcessRole};
use strimzi_api::storage::{PersistentClaimStorage, Storage};

fn main() -> Result<(), serde_yaml_ng::Error> {
    let cluster = "my-cluster";
    let kafka = Kafka::new(
        cluster,
        KafkaSpec {
            kafka: KafkaClusterSpec {
                version: Some("4.3.1".into()),
                listeners: vec![
                    listener("plain", 9092, false, None),
                    listener(
                        "tls",
                        9093,
                        true,
                        Some(KafkaListenerAuthentication::Tls(
                            KafkaListenerAuthenticationTls::default(),
                        )),
                    ),
                ],
                ..Default::default()
            },
            entity_operator: None,
            cluster_ca: None,
            clients_ca: None,
            cruise_control: None,
            kafka_exporter: None,
            maintenance_time_windows: None,
        },
    );
    let controllers = node_pool(cluster, "controllers", ProcessRole::Controller, "20Gi");
    let brokers = node_pool(cluster, "brokers", ProcessRole::Broker, "100Gi");
    print!("{}", serde_yaml_ng::to_string(&kafka)?);
    for pool in [controllers, brokers] {
        print!("---\n{}", serde_yaml_ng::to_string(&pool)?);
    }
    Ok(())
}

fn listener(
    name: &str,
    port: i32,
    tls: bool,
    authentication: Option<KafkaListenerAuthentication>,
) -> GenericKafkaListener {
    GenericKafkaListener {
        name: name.into(),
        port,
        r#type: KafkaListenerType::Internal,
        tls,
        authentication,
        configuration: None,
        network_policy_peers: None,
    }
}

/// A pool of three nodes with one role, each with a persistent volume of `size`.
fn node_pool(cluster: &str, name: &str, role: ProcessRole, size: &str) -> KafkaNodePool {
    KafkaNodePool {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([(labels::CLUSTER.into(), cluster.into())])),
            ..Default::default()
        },
        spec: KafkaNodePoolSpec {
            replicas: 3,
            roles: vec![role],
            storage: Storage::PersistentClaim(PersistentClaimStorage {
                size: Some(size.into()),
                delete_claim: Some(false),
                ..Default::default()
            }),
            resources: None,
            jvm_options: None,
            template: None,
        },
        status: None,
    }
}
