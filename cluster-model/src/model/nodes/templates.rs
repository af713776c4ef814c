//! The templates of a pool's objects: the pool's template properties override the Kafka's one
//! by one.

use std::collections::BTreeMap;

use strimzi_api::common::{
    ContainerTemplate, MetadataTemplate, PodSetPodTemplate, ResourceTemplate,
};
use strimzi_api::labels;

use crate::model::{KafkaCluster, NodePool};

/// The templates that shape one pool's objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolTemplate {
    /// The pods.
    pub pod: Option<PodSetPodTemplate>,
    /// The StrimziPodSet.
    pub pod_set: Option<ResourceTemplate>,
    /// The PersistentVolumeClaims.
    pub persistent_volume_claim: Option<ResourceTemplate>,
    /// The Kafka container.
    pub kafka_container: Option<ContainerTemplate>,
    /// The init container.
    pub init_container: Option<ContainerTemplate>,
    /// The per-node Services of external listeners.
    pub per_pod_service: Option<ResourceTemplate>,
    /// The per-node Routes.
    pub per_pod_route: Option<ResourceTemplate>,
    /// The per-node Ingresses.
    pub per_pod_ingress: Option<ResourceTemplate>,
}

impl KafkaCluster {
    /// The templates of `pool`: each property from the pool's template when set there, else
    /// from the Kafka's.
    pub fn pool_template(&self, pool: &NodePool) -> PoolTemplate {
        let kafka = self.kafka_template();
        let own = pool.template.as_ref();
        macro_rules! pick {
            ($field:ident) => {
                own.and_then(|template| template.$field.clone())
                    .or_else(|| kafka.and_then(|template| template.$field.clone()))
            };
        }
        PoolTemplate {
            pod: pick!(pod),
            pod_set: pick!(pod_set),
            persistent_volume_claim: pick!(persistent_volume_claim),
            kafka_container: pick!(kafka_container),
            init_container: pick!(init_container),
            per_pod_service: pick!(per_pod_service),
            per_pod_route: pick!(per_pod_route),
            per_pod_ingress: pick!(per_pod_ingress),
        }
    }

    /// Labels that select a pool's pods (the StrimziPodSet selector).
    pub fn pool_selector(&self, pool: &NodePool) -> BTreeMap<String, String> {
        let mut selector = self.selector();
        selector.insert(labels::POOL_NAME.to_owned(), pool.name.clone());
        selector
    }
}

/// The metadata template of a resource template.
pub fn metadata(template: Option<&ResourceTemplate>) -> Option<&MetadataTemplate> {
    template.and_then(|template| template.metadata.as_ref())
}
