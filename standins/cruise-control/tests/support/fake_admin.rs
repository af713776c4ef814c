//! A [`KafkaAdmin`] over an in-memory cluster: describes it, and applies reassignments after
//! they have been listed as ongoing a few times, so executions can be watched. Other
//! operations fail.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;
use strimzi_cruise_control_standin::model::Cluster;
use strimzi_operator_common::kafka::*;

/// A reassignment: topic, partition, target replicas, listings left as ongoing.
type Pending = (String, i32, Vec<i32>, u32);

pub struct FakeAdmin {
    pub cluster: Mutex<Cluster>,
    /// Pending reassignments with how many more times they are listed as ongoing.
    pending: Mutex<Vec<Pending>>,
    /// Each reassignment stays ongoing for this many listings.
    pub listings: u32,
    pub configs: Mutex<Vec<(ConfigResource, AlterConfigOp)>>,
    pub created_topics: Mutex<Vec<String>>,
}

impl FakeAdmin {
    pub fn new(cluster: Cluster, listings: u32) -> Self {
        Self {
            cluster: Mutex::new(cluster),
            pending: Mutex::new(Vec::new()),
            listings,
            configs: Mutex::new(Vec::new()),
            created_topics: Mutex::new(Vec::new()),
        }
    }

    pub fn snapshot(&self) -> Cluster {
        self.cluster.lock().unwrap().clone()
    }
}

fn unsupported<T>() -> Result<T, AdminError> {
    Err(AdminError::Protocol("not in the fake".into()))
}

#[async_trait]
impl KafkaAdmin for FakeAdmin {
    async fn describe_cluster(&self) -> Result<ClusterDescription, AdminError> {
        let cluster = self.snapshot();
        Ok(ClusterDescription {
            cluster_id: "fake".into(),
            controller_id: *cluster.brokers.keys().next().unwrap_or(&0),
            brokers: cluster
                .brokers
                .iter()
                .map(|(id, broker)| BrokerNode {
                    id: *id,
                    host: broker.host.clone(),
                    port: 9091,
                    rack: broker.rack.clone(),
                })
                .collect(),
        })
    }
    async fn list_topics(&self) -> Result<Vec<String>, AdminError> {
        let mut names: Vec<String> = self
            .snapshot()
            .partitions
            .iter()
            .map(|p| p.topic.clone())
            .collect();
        names.dedup();
        Ok(names)
    }
    async fn describe_topics(
        &self,
        topics: &[String],
    ) -> Result<BTreeMap<String, ItemResult<TopicDescription>>, AdminError> {
        let cluster = self.snapshot();
        Ok(topics
            .iter()
            .map(|name| {
                let partitions = cluster
                    .partitions
                    .iter()
                    .filter(|p| &p.topic == name)
                    .map(|p| PartitionDescription {
                        partition: p.partition,
                        leader: p.leader,
                        replicas: p.replicas.clone(),
                        isr: p.replicas.clone(),
                    })
                    .collect();
                (
                    name.clone(),
                    Ok(TopicDescription {
                        name: name.clone(),
                        topic_id: uuid::Uuid::nil(),
                        internal: false,
                        partitions,
                    }),
                )
            })
            .collect())
    }
    async fn create_topics(
        &self,
        topics: &[NewTopic],
        _validate_only: bool,
    ) -> Result<BTreeMap<String, ItemResult<CreatedTopic>>, AdminError> {
        self.created_topics
            .lock()
            .unwrap()
            .extend(topics.iter().map(|t| t.name.clone()));
        Ok(topics
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    Ok(CreatedTopic {
                        topic_id: uuid::Uuid::nil(),
                        partitions: t.partitions.unwrap_or(1),
                        replication_factor: t.replication_factor.unwrap_or(1),
                    }),
                )
            })
            .collect())
    }
    async fn delete_topics(
        &self,
        _: &[String],
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError> {
        unsupported()
    }
    async fn create_partitions(
        &self,
        _: &BTreeMap<String, i32>,
        _: bool,
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError> {
        unsupported()
    }
    async fn describe_configs(
        &self,
        _: &[ConfigResource],
    ) -> Result<BTreeMap<ConfigResource, ItemResult<Vec<ConfigEntry>>>, AdminError> {
        unsupported()
    }
    async fn incremental_alter_configs(
        &self,
        changes: &BTreeMap<ConfigResource, Vec<AlterConfigOp>>,
        _: bool,
    ) -> Result<BTreeMap<ConfigResource, ItemResult<()>>, AdminError> {
        let mut configs = self.configs.lock().unwrap();
        for (resource, ops) in changes {
            configs.extend(ops.iter().map(|op| (resource.clone(), op.clone())));
        }
        Ok(changes.keys().map(|r| (r.clone(), Ok(()))).collect())
    }
    async fn list_partition_reassignments(
        &self,
        _: Option<&BTreeMap<String, Vec<i32>>>,
    ) -> Result<Vec<PartitionReassignment>, AdminError> {
        let mut pending = self.pending.lock().unwrap();
        let mut cluster = self.cluster.lock().unwrap();
        let mut ongoing = Vec::new();
        pending.retain_mut(|(topic, partition, replicas, left)| {
            if *left == 0 {
                if let Some(p) = cluster
                    .partitions
                    .iter_mut()
                    .find(|p| &p.topic == topic && p.partition == *partition)
                {
                    p.replicas = replicas.clone();
                    p.leader = replicas[0];
                }
                return false;
            }
            *left -= 1;
            ongoing.push(PartitionReassignment {
                topic: topic.clone(),
                partition: *partition,
                replicas: replicas.clone(),
                adding: vec![],
                removing: vec![],
            });
            true
        });
        Ok(ongoing)
    }
    async fn alter_partition_reassignments(
        &self,
        changes: &[ReassignmentChange],
    ) -> Result<BTreeMap<(String, i32), ItemResult<()>>, AdminError> {
        let mut pending = self.pending.lock().unwrap();
        for change in changes {
            pending.push((
                change.topic.clone(),
                change.partition,
                change.replicas.clone().unwrap(),
                self.listings,
            ));
        }
        Ok(changes
            .iter()
            .map(|c| ((c.topic.clone(), c.partition), Ok(())))
            .collect())
    }
    async fn describe_replica_sizes(&self, broker: i32) -> Result<Vec<ReplicaLogSize>, AdminError> {
        Ok(self
            .snapshot()
            .partitions
            .iter()
            .filter(|p| p.replicas.contains(&broker))
            .map(|p| ReplicaLogSize {
                topic: p.topic.clone(),
                partition: p.partition,
                log_dir: format!("/var/lib/kafka/data-0/kafka-log{broker}"),
                size_bytes: p.size_bytes as i64,
                future: false,
            })
            .collect())
    }
    async fn describe_acls(&self, _: &AclBindingFilter) -> Result<Vec<AclBinding>, AdminError> {
        unsupported()
    }
    async fn create_acls(&self, _: &[AclBinding]) -> Result<Vec<ItemResult<()>>, AdminError> {
        unsupported()
    }
    async fn delete_acls(
        &self,
        _: &[AclBindingFilter],
    ) -> Result<Vec<ItemResult<Vec<AclBinding>>>, AdminError> {
        unsupported()
    }
    async fn describe_user_scram_credentials(
        &self,
        _: Option<&[String]>,
    ) -> Result<BTreeMap<String, ItemResult<Vec<ScramCredentialInfo>>>, AdminError> {
        unsupported()
    }
    async fn alter_user_scram_credentials(
        &self,
        _: &[ScramCredentialChange],
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError> {
        unsupported()
    }
    async fn describe_client_quotas(
        &self,
        _: &[QuotaFilterComponent],
        _: bool,
    ) -> Result<Vec<(QuotaEntity, BTreeMap<String, f64>)>, AdminError> {
        unsupported()
    }
    async fn alter_client_quotas(
        &self,
        _: &[QuotaAlteration],
        _: bool,
    ) -> Result<Vec<ItemResult<()>>, AdminError> {
        unsupported()
    }
    async fn describe_metadata_quorum(&self) -> Result<QuorumInfo, AdminError> {
        unsupported()
    }
    async fn describe_features(&self) -> Result<FeatureMetadata, AdminError> {
        unsupported()
    }
    async fn registered_brokers(&self) -> Result<BTreeMap<i32, bool>, AdminError> {
        unsupported()
    }
    async fn unregister_broker(&self, _: i32) -> Result<(), AdminError> {
        unsupported()
    }
    async fn update_features(
        &self,
        _: &[FeatureUpdate],
        _: bool,
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError> {
        unsupported()
    }
}
