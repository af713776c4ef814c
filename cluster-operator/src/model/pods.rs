//! The StrimziPodSet of each pool with its complete pod definitions, and the revision hash.
//! Owner: nodes and pods.

use std::collections::BTreeMap;

use strimzi_api::pod_set::StrimziPodSet;

use super::KafkaCluster;

/// The CA generations the pods were built against; a change rolls the pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaGenerations {
    /// `strimzi.io/cluster-ca-cert-generation`.
    pub cluster_ca_cert: u32,
    /// `strimzi.io/cluster-ca-key-generation`.
    pub cluster_ca_key: u32,
    /// `strimzi.io/clients-ca-cert-generation`.
    pub clients_ca_cert: u32,
}

/// Values computed by earlier steps that the pod definitions carry as annotations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodInputs {
    /// The CA generations.
    pub ca_generations: CaGenerations,
    /// `strimzi.io/server-cert-hash` by pod name.
    pub server_cert_hashes: BTreeMap<String, String>,
    /// Hash of each node's configuration by pod name
    /// (`strimzi.io/broker-configuration-hash`).
    pub configuration_hashes: BTreeMap<String, String>,
}

impl KafkaCluster {
    /// One StrimziPodSet per pool, holding every pod of the pool.
    pub fn pod_sets(&self, _inputs: &PodInputs) -> Vec<StrimziPodSet> {
        todo!("pod_sets")
    }
}
