//! The server certificate each node needs, and the per-node certificate Secrets. Owner:
//! listeners and services.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use strimzi_api::annotations;
use strimzi_certificate_manager::leaf::{LeafSpec, NodeLocation};

use super::listeners::ListenerAddresses;
use super::object_meta::StringMap;
use super::{KafkaCluster, KafkaNode};

impl KafkaCluster {
    /// The certificate request of every node: its pod name, Service names and, for brokers,
    /// the external addresses of the listeners.
    pub fn node_certificate_specs(&self, addresses: &ListenerAddresses) -> Vec<LeafSpec> {
        let location = NodeLocation {
            namespace: &self.namespace,
            cluster: &self.name,
            cluster_domain: &self.config.cluster_domain,
        };
        self.nodes()
            .map(|node| {
                let external: Vec<String> = addresses
                    .bootstrap_dns_names
                    .iter()
                    .chain(
                        addresses
                            .broker_dns_names
                            .get(&node.node_id)
                            .into_iter()
                            .flatten(),
                    )
                    .cloned()
                    .collect();
                LeafSpec::kafka_node(&location, &node.pod_name, node.is_broker(), &external)
            })
            .collect()
    }

    /// The Secret named after the node's pod that holds its certificate, key and key store
    /// (`data`, e.g. from `IssuedCertificate::secret_data`), annotated with the generation of
    /// the cluster CA certificate that signed it.
    pub fn node_certificate_secret(
        &self,
        node: &KafkaNode,
        data: BTreeMap<String, ByteString>,
        cluster_ca_cert_generation: u32,
    ) -> Secret {
        Secret {
            metadata: self.object_meta(
                &node.pod_name,
                self.labels(),
                StringMap::from([(
                    annotations::CLUSTER_CA_CERT_GENERATION.to_owned(),
                    cluster_ca_cert_generation.to_string(),
                )]),
            ),
            type_: Some("Opaque".to_owned()),
            data: Some(data),
            ..Secret::default()
        }
    }
}
