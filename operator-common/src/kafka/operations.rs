//! [`KafkaAdmin`] for [`AdminClient`]: each operation as Kafka requests.

use std::collections::BTreeMap;

use async_trait::async_trait;
use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{
    AddRaftVoterRequest, AlterClientQuotasRequest, AlterPartitionReassignmentsRequest,
    AlterUserScramCredentialsRequest, ApiVersionsRequest, CreateAclsRequest,
    CreatePartitionsRequest, CreateTopicsRequest, DeleteAclsRequest, DeleteTopicsRequest,
    DescribeAclsRequest, DescribeClientQuotasRequest, DescribeClusterRequest,
    DescribeConfigsRequest, DescribeLogDirsRequest, DescribeQuorumRequest,
    DescribeUserScramCredentialsRequest, IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest, RemoveRaftVoterRequest, TopicName, UnregisterBrokerRequest,
    UpdateFeaturesRequest, add_raft_voter_request, alter_client_quotas_request,
    alter_partition_reassignments_request, alter_user_scram_credentials_request,
    create_acls_request, create_partitions_request, create_topics_request, delete_acls_request,
    describe_client_quotas_request, describe_configs_request, describe_quorum_request,
    describe_user_scram_credentials_request, incremental_alter_configs_request,
    list_partition_reassignments_request, metadata_request, update_features_request,
};
use kafka_protocol::protocol::StrBytes;

use super::client::{AdminClient, KafkaAdmin, Target, item, metadata_request, text, timeout_ms};
use super::error::AdminError;
use super::model::*;
use super::scram;

/// The metadata log's topic, which DescribeQuorum names.
const METADATA_TOPIC: &str = "__cluster_metadata";

#[async_trait]
impl KafkaAdmin for AdminClient {
    async fn describe_cluster(&self) -> Result<ClusterDescription, AdminError> {
        self.cluster().await
    }

    async fn list_topics(&self) -> Result<Vec<String>, AdminError> {
        let request = metadata_request(None);
        let response = self
            .call("list topics", Target::Any, &request, |_| Ok(()))
            .await?;
        let mut names: Vec<String> = response
            .topics
            .iter()
            .filter(|topic| !topic.is_internal && topic.error_code == 0)
            .filter_map(|topic| topic.name.as_ref().map(|name| name.to_string()))
            .collect();
        names.sort();
        Ok(names)
    }

    async fn describe_topics(
        &self,
        topics: &[String],
    ) -> Result<BTreeMap<String, ItemResult<TopicDescription>>, AdminError> {
        let request = metadata_request(Some(
            topics
                .iter()
                .map(|name| {
                    metadata_request::MetadataRequestTopic::default()
                        .with_name(Some(TopicName(text(name))))
                })
                .collect(),
        ));
        let response = self
            .call("describe topics", Target::Any, &request, |_| Ok(()))
            .await?;
        Ok(response
            .topics
            .into_iter()
            .map(|topic| {
                let name = topic.name.map(|n| n.0.to_string()).unwrap_or_default();
                let result = item(topic.error_code, None).map(|()| {
                    let mut partitions: Vec<PartitionDescription> = topic
                        .partitions
                        .iter()
                        .map(|partition| PartitionDescription {
                            partition: partition.partition_index,
                            leader: partition.leader_id.0,
                            replicas: partition.replica_nodes.iter().map(|id| id.0).collect(),
                            isr: partition.isr_nodes.iter().map(|id| id.0).collect(),
                        })
                        .collect();
                    partitions.sort_by_key(|partition| partition.partition);
                    TopicDescription {
                        name: name.clone(),
                        topic_id: topic.topic_id,
                        internal: topic.is_internal,
                        partitions,
                    }
                });
                (name, result)
            })
            .collect())
    }

    async fn create_topics(
        &self,
        topics: &[NewTopic],
        validate_only: bool,
    ) -> Result<BTreeMap<String, ItemResult<CreatedTopic>>, AdminError> {
        let request = CreateTopicsRequest::default()
            .with_timeout_ms(timeout_ms(self.config().request_timeout))
            .with_validate_only(validate_only)
            .with_topics(
                topics
                    .iter()
                    .map(|topic| {
                        create_topics_request::CreatableTopic::default()
                            .with_name(TopicName(text(&topic.name)))
                            .with_num_partitions(topic.partitions.unwrap_or(-1))
                            .with_replication_factor(topic.replication_factor.unwrap_or(-1))
                            .with_configs(
                                topic
                                    .configs
                                    .iter()
                                    .map(|(name, value)| {
                                        create_topics_request::CreatableTopicConfig::default()
                                            .with_name(text(name))
                                            .with_value(Some(text(value)))
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let response = self
            .call("create topics", Target::Controller, &request, |response| {
                not_controller(response.topics.iter().map(|topic| topic.error_code))
            })
            .await?;
        Ok(response
            .topics
            .iter()
            .map(|topic| {
                let result =
                    item(topic.error_code, topic.error_message.as_ref()).map(|()| CreatedTopic {
                        topic_id: topic.topic_id,
                        partitions: topic.num_partitions,
                        replication_factor: topic.replication_factor,
                    });
                (topic.name.0.to_string(), result)
            })
            .collect())
    }

    async fn delete_topics(
        &self,
        topics: &[String],
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError> {
        let request = DeleteTopicsRequest::default()
            .with_timeout_ms(timeout_ms(self.config().request_timeout))
            .with_topic_names(topics.iter().map(|name| TopicName(text(name))).collect())
            .with_topics(
                topics
                    .iter()
                    .map(|name| {
                        kafka_protocol::messages::delete_topics_request::DeleteTopicState::default()
                            .with_name(Some(TopicName(text(name))))
                    })
                    .collect(),
            );
        let response = self
            .call("delete topics", Target::Controller, &request, |response| {
                not_controller(response.responses.iter().map(|topic| topic.error_code))
            })
            .await?;
        Ok(by_name(response.responses.iter().map(|topic| {
            let name = topic.name.as_ref().map_or("", |n| n.0.as_str());
            (name, topic.error_code, topic.error_message.as_ref())
        })))
    }

    async fn create_partitions(
        &self,
        totals: &BTreeMap<String, i32>,
        validate_only: bool,
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError> {
        let request = CreatePartitionsRequest::default()
            .with_timeout_ms(timeout_ms(self.config().request_timeout))
            .with_validate_only(validate_only)
            .with_topics(
                totals
                    .iter()
                    .map(|(name, count)| {
                        create_partitions_request::CreatePartitionsTopic::default()
                            .with_name(TopicName(text(name)))
                            .with_count(*count)
                            .with_assignments(None)
                    })
                    .collect(),
            );
        let response = self
            .call(
                "create partitions",
                Target::Controller,
                &request,
                |response| not_controller(response.results.iter().map(|topic| topic.error_code)),
            )
            .await?;
        Ok(by_name(response.results.iter().map(|topic| {
            (
                topic.name.0.as_str(),
                topic.error_code,
                topic.error_message.as_ref(),
            )
        })))
    }

    async fn describe_configs(
        &self,
        resources: &[ConfigResource],
    ) -> Result<BTreeMap<ConfigResource, ItemResult<Vec<ConfigEntry>>>, AdminError> {
        let mut results = BTreeMap::new();
        for (key, group) in by_target(resources.iter()) {
            results.extend(self.describe_configs_at(key.target(), &group).await?);
        }
        Ok(results)
    }

    async fn incremental_alter_configs(
        &self,
        changes: &BTreeMap<ConfigResource, Vec<AlterConfigOp>>,
        validate_only: bool,
    ) -> Result<BTreeMap<ConfigResource, ItemResult<()>>, AdminError> {
        let mut results = BTreeMap::new();
        for (key, group) in by_target(changes.keys()) {
            results.extend(
                self.incremental_alter_configs_at(key.target(), &group, changes, validate_only)
                    .await?,
            );
        }
        Ok(results)
    }

    async fn list_partition_reassignments(
        &self,
        topics: Option<&BTreeMap<String, Vec<i32>>>,
    ) -> Result<Vec<PartitionReassignment>, AdminError> {
        let request = ListPartitionReassignmentsRequest::default()
            .with_timeout_ms(timeout_ms(self.config().request_timeout))
            .with_topics(topics.map(|topics| {
                topics
                    .iter()
                    .map(|(name, partitions)| {
                        list_partition_reassignments_request::ListPartitionReassignmentsTopics::default()
                            .with_name(TopicName(text(name)))
                            .with_partition_indexes(partitions.clone())
                    })
                    .collect()
            }));
        let response = self
            .call(
                "list partition reassignments",
                Target::Controller,
                &request,
                |response| item(response.error_code, response.error_message.as_ref()),
            )
            .await?;
        let ids = |ids: &[kafka_protocol::messages::BrokerId]| ids.iter().map(|id| id.0).collect();
        Ok(response
            .topics
            .iter()
            .flat_map(|topic| {
                topic
                    .partitions
                    .iter()
                    .map(|partition| PartitionReassignment {
                        topic: topic.name.0.to_string(),
                        partition: partition.partition_index,
                        replicas: ids(&partition.replicas),
                        adding: ids(&partition.adding_replicas),
                        removing: ids(&partition.removing_replicas),
                    })
            })
            .collect())
    }

    async fn alter_partition_reassignments(
        &self,
        changes: &[ReassignmentChange],
    ) -> Result<BTreeMap<(String, i32), ItemResult<()>>, AdminError> {
        let mut by_topic: BTreeMap<&str, Vec<&ReassignmentChange>> = BTreeMap::new();
        for change in changes {
            by_topic.entry(&change.topic).or_default().push(change);
        }
        let request = AlterPartitionReassignmentsRequest::default()
            .with_timeout_ms(timeout_ms(self.config().request_timeout))
            .with_topics(
                by_topic
                    .iter()
                    .map(|(topic, changes)| {
                        alter_partition_reassignments_request::ReassignableTopic::default()
                            .with_name(TopicName(text(topic)))
                            .with_partitions(
                                changes
                                    .iter()
                                    .map(|change| {
                                        alter_partition_reassignments_request::ReassignablePartition::default()
                                            .with_partition_index(change.partition)
                                            .with_replicas(change.replicas.as_ref().map(|ids| {
                                                ids.iter().map(|id| (*id).into()).collect()
                                            }))
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let response = self
            .call(
                "alter partition reassignments",
                Target::Controller,
                &request,
                |response| item(response.error_code, response.error_message.as_ref()),
            )
            .await?;
        Ok(response
            .responses
            .iter()
            .flat_map(|topic| {
                topic.partitions.iter().map(|partition| {
                    (
                        (topic.name.0.to_string(), partition.partition_index),
                        item(partition.error_code, partition.error_message.as_ref()),
                    )
                })
            })
            .collect())
    }

    async fn describe_replica_sizes(&self, broker: i32) -> Result<Vec<ReplicaLogSize>, AdminError> {
        let request = DescribeLogDirsRequest::default().with_topics(None);
        let response = self
            .call(
                "describe log dirs",
                Target::Node(broker),
                &request,
                |response| item(response.error_code, None),
            )
            .await?;
        Ok(response
            .results
            .iter()
            .filter(|dir| dir.error_code == 0)
            .flat_map(|dir| {
                dir.topics.iter().flat_map(move |topic| {
                    topic
                        .partitions
                        .iter()
                        .map(move |partition| ReplicaLogSize {
                            topic: topic.name.0.to_string(),
                            partition: partition.partition_index,
                            log_dir: dir.log_dir.to_string(),
                            size_bytes: partition.partition_size,
                            future: partition.is_future_key,
                        })
                })
            })
            .collect())
    }

    async fn describe_acls(
        &self,
        filter: &AclBindingFilter,
    ) -> Result<Vec<AclBinding>, AdminError> {
        let request = DescribeAclsRequest::default()
            .with_resource_type_filter(filter.resource_type.code())
            .with_resource_name_filter(filter.resource_name.as_deref().map(text))
            .with_pattern_type_filter(filter.pattern_type.code())
            .with_principal_filter(filter.principal.as_deref().map(text))
            .with_host_filter(filter.host.as_deref().map(text))
            .with_operation(filter.operation.code())
            .with_permission_type(filter.permission.code());
        let response = self
            .call("describe ACLs", Target::Any, &request, |response| {
                item(response.error_code, response.error_message.as_ref())
            })
            .await?;
        let mut bindings = Vec::new();
        for resource in &response.resources {
            for acl in &resource.acls {
                bindings.push(binding(
                    [
                        resource.resource_type,
                        resource.pattern_type,
                        acl.operation,
                        acl.permission_type,
                    ],
                    &resource.resource_name,
                    &acl.principal,
                    &acl.host,
                )?);
            }
        }
        Ok(bindings)
    }

    async fn create_acls(
        &self,
        bindings: &[AclBinding],
    ) -> Result<Vec<ItemResult<()>>, AdminError> {
        let request = CreateAclsRequest::default().with_creations(
            bindings
                .iter()
                .map(|binding| {
                    create_acls_request::AclCreation::default()
                        .with_resource_type(binding.resource_type.code())
                        .with_resource_name(text(&binding.resource_name))
                        .with_resource_pattern_type(binding.pattern_type.code())
                        .with_principal(text(&binding.principal))
                        .with_host(text(&binding.host))
                        .with_operation(binding.operation.code())
                        .with_permission_type(binding.permission.code())
                })
                .collect(),
        );
        let response = self
            .call("create ACLs", Target::Any, &request, |_| Ok(()))
            .await?;
        Ok(response
            .results
            .iter()
            .map(|result| item(result.error_code, result.error_message.as_ref()))
            .collect())
    }

    async fn delete_acls(
        &self,
        filters: &[AclBindingFilter],
    ) -> Result<Vec<ItemResult<Vec<AclBinding>>>, AdminError> {
        let request = DeleteAclsRequest::default().with_filters(
            filters
                .iter()
                .map(|filter| {
                    delete_acls_request::DeleteAclsFilter::default()
                        .with_resource_type_filter(filter.resource_type.code())
                        .with_resource_name_filter(filter.resource_name.as_deref().map(text))
                        .with_pattern_type_filter(filter.pattern_type.code())
                        .with_principal_filter(filter.principal.as_deref().map(text))
                        .with_host_filter(filter.host.as_deref().map(text))
                        .with_operation(filter.operation.code())
                        .with_permission_type(filter.permission.code())
                })
                .collect(),
        );
        let response = self
            .call("delete ACLs", Target::Any, &request, |_| Ok(()))
            .await?;
        Ok(response
            .filter_results
            .iter()
            .map(|result| {
                item(result.error_code, result.error_message.as_ref())?;
                result
                    .matching_acls
                    .iter()
                    .map(|acl| {
                        item(acl.error_code, acl.error_message.as_ref())?;
                        binding(
                            [
                                acl.resource_type,
                                acl.pattern_type,
                                acl.operation,
                                acl.permission_type,
                            ],
                            &acl.resource_name,
                            &acl.principal,
                            &acl.host,
                        )
                    })
                    .collect()
            })
            .collect())
    }

    async fn describe_user_scram_credentials(
        &self,
        users: Option<&[String]>,
    ) -> Result<BTreeMap<String, ItemResult<Vec<ScramCredentialInfo>>>, AdminError> {
        let request =
            DescribeUserScramCredentialsRequest::default().with_users(users.map(|users| {
                users
                    .iter()
                    .map(|user| {
                        describe_user_scram_credentials_request::UserName::default()
                            .with_name(text(user))
                    })
                    .collect()
            }));
        let response = self
            .call(
                "describe SCRAM credentials",
                Target::Any,
                &request,
                |response| item(response.error_code, response.error_message.as_ref()),
            )
            .await?;
        Ok(response
            .results
            .iter()
            .map(|result| {
                let infos = item(result.error_code, result.error_message.as_ref()).and_then(|()| {
                    result
                        .credential_infos
                        .iter()
                        .map(|info| {
                            Ok(ScramCredentialInfo {
                                mechanism: ScramMechanism::from_code(info.mechanism)?,
                                iterations: info.iterations,
                            })
                        })
                        .collect()
                });
                (result.user.to_string(), infos)
            })
            .collect())
    }

    async fn alter_user_scram_credentials(
        &self,
        changes: &[ScramCredentialChange],
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError> {
        // Salting is thousands of HMAC rounds per user: done on the CPU pool, a share of the
        // batch per core, so that a batch of upserts neither holds up the async workers nor
        // waits for one core.
        let pool = crate::blocking::CpuPool::global();
        let share = changes.len().div_ceil(pool.limit()).max(1);
        let parts = futures::future::try_join_all(changes.chunks(share).map(|part| {
            let part = part.to_vec();
            async move {
                pool.run(move || scram_request(&part))
                    .await
                    .map_err(|error| {
                        AdminError::InvalidRequest(format!("salting passwords: {error}"))
                    })?
            }
        }))
        .await?;
        let mut request = AlterUserScramCredentialsRequest::default();
        for part in parts {
            request.upsertions.extend(part.upsertions);
            request.deletions.extend(part.deletions);
        }
        let response = self
            .call(
                "alter SCRAM credentials",
                Target::Controller,
                &request,
                |response| not_controller(response.results.iter().map(|result| result.error_code)),
            )
            .await?;
        Ok(by_name(response.results.iter().map(|result| {
            (
                result.user.as_str(),
                result.error_code,
                result.error_message.as_ref(),
            )
        })))
    }

    async fn describe_client_quotas(
        &self,
        components: &[QuotaFilterComponent],
        strict: bool,
    ) -> Result<Vec<(QuotaEntity, BTreeMap<String, f64>)>, AdminError> {
        let request = DescribeClientQuotasRequest::default()
            .with_strict(strict)
            .with_components(
                components
                    .iter()
                    .map(|component| {
                        let (match_type, name) = match &component.matching {
                            QuotaMatch::Exact(name) => (0, Some(text(name))),
                            QuotaMatch::Default => (1, None),
                            QuotaMatch::Any => (2, None),
                        };
                        describe_client_quotas_request::ComponentData::default()
                            .with_entity_type(text(&component.entity_type))
                            .with_match_type(match_type)
                            .with_match(name)
                    })
                    .collect(),
            );
        let response = self
            .call(
                "describe client quotas",
                Target::Any,
                &request,
                |response| item(response.error_code, response.error_message.as_ref()),
            )
            .await?;
        Ok(response
            .entries
            .unwrap_or_default()
            .iter()
            .map(|entry| {
                let entity = entry
                    .entity
                    .iter()
                    .map(|part| {
                        (
                            part.entity_type.to_string(),
                            part.entity_name.as_ref().map(|name| name.to_string()),
                        )
                    })
                    .collect();
                let values = entry
                    .values
                    .iter()
                    .map(|value| (value.key.to_string(), value.value))
                    .collect();
                (entity, values)
            })
            .collect())
    }

    async fn alter_client_quotas(
        &self,
        alterations: &[QuotaAlteration],
        validate_only: bool,
    ) -> Result<Vec<ItemResult<()>>, AdminError> {
        let request = AlterClientQuotasRequest::default()
            .with_validate_only(validate_only)
            .with_entries(
                alterations
                    .iter()
                    .map(|alteration| {
                        alter_client_quotas_request::EntryData::default()
                            .with_entity(
                                alteration
                                    .entity
                                    .iter()
                                    .map(|(kind, name)| {
                                        alter_client_quotas_request::EntityData::default()
                                            .with_entity_type(text(kind))
                                            .with_entity_name(name.as_deref().map(text))
                                    })
                                    .collect(),
                            )
                            .with_ops(
                                alteration
                                    .changes
                                    .iter()
                                    .map(|(key, value)| {
                                        alter_client_quotas_request::OpData::default()
                                            .with_key(text(key))
                                            .with_value(value.unwrap_or_default())
                                            .with_remove(value.is_none())
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let response = self
            .call("alter client quotas", Target::Any, &request, |_| Ok(()))
            .await?;
        Ok(response
            .entries
            .iter()
            .map(|entry| item(entry.error_code, entry.error_message.as_ref()))
            .collect())
    }

    async fn describe_metadata_quorum(&self) -> Result<QuorumInfo, AdminError> {
        let request = DescribeQuorumRequest::default().with_topics(vec![
            describe_quorum_request::TopicData::default()
                .with_topic_name(TopicName(StrBytes::from_static_str(METADATA_TOPIC)))
                .with_partitions(vec![
                    describe_quorum_request::PartitionData::default().with_partition_index(0),
                ]),
        ]);
        let partition = self
            .retrying("describe metadata quorum", || async {
                let response = self.send(Target::Any, &request).await?;
                item(response.error_code, response.error_message.as_ref())?;
                let partition = response
                    .topics
                    .into_iter()
                    .flat_map(|topic| topic.partitions)
                    .next()
                    .ok_or_else(|| {
                        AdminError::Protocol("DescribeQuorum returned no partition".to_owned())
                    })?;
                item(partition.error_code, partition.error_message.as_ref())?;
                Ok(partition)
            })
            .await?;
        let replicas =
            |states: &[kafka_protocol::messages::describe_quorum_response::ReplicaState]| {
                states
                    .iter()
                    .map(|state| QuorumReplica {
                        replica_id: state.replica_id.0,
                        directory_id: state.replica_directory_id,
                        log_end_offset: state.log_end_offset,
                        last_fetch_timestamp: state.last_fetch_timestamp,
                        last_caught_up_timestamp: state.last_caught_up_timestamp,
                    })
                    .collect()
            };
        Ok(QuorumInfo {
            leader_id: partition.leader_id.0,
            leader_epoch: partition.leader_epoch,
            high_watermark: partition.high_watermark,
            voters: replicas(&partition.current_voters),
            observers: replicas(&partition.observers),
        })
    }

    async fn describe_features(&self) -> Result<FeatureMetadata, AdminError> {
        let request = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("strimzi-rs-admin"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        let response = self
            .call("describe features", Target::Any, &request, |response| {
                item(response.error_code, None)
            })
            .await?;
        Ok(FeatureMetadata {
            finalized: response
                .finalized_features
                .iter()
                .map(|feature| (feature.name.to_string(), feature.max_version_level))
                .collect(),
            supported: response
                .supported_features
                .iter()
                .map(|feature| {
                    (
                        feature.name.to_string(),
                        (feature.min_version, feature.max_version),
                    )
                })
                .collect(),
            finalized_epoch: (response.finalized_features_epoch >= 0)
                .then_some(response.finalized_features_epoch),
        })
    }

    async fn registered_brokers(&self) -> Result<BTreeMap<i32, bool>, AdminError> {
        let request = DescribeClusterRequest::default().with_include_fenced_brokers(true);
        let response = self
            .call(
                "list registered brokers",
                Target::Any,
                &request,
                |response| item(response.error_code, response.error_message.as_ref()),
            )
            .await?;
        Ok(response
            .brokers
            .iter()
            .map(|broker| (broker.broker_id.0, broker.is_fenced))
            .collect())
    }

    async fn unregister_broker(&self, id: i32) -> Result<(), AdminError> {
        let request = UnregisterBrokerRequest::default().with_broker_id(id.into());
        let result = self
            .call("unregister broker", Target::Any, &request, |response| {
                item(response.error_code, response.error_message.as_ref())
            })
            .await;
        match result {
            Err(error) if error.is(ResponseError::BrokerIdNotRegistered) => Ok(()),
            other => other.map(drop),
        }
    }

    async fn update_features(
        &self,
        updates: &[FeatureUpdate],
        validate_only: bool,
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError> {
        let request = UpdateFeaturesRequest::default()
            .with_timeout_ms(timeout_ms(self.config().request_timeout))
            .with_validate_only(validate_only)
            .with_feature_updates(
                updates
                    .iter()
                    .map(|update| {
                        update_features_request::FeatureUpdateKey::default()
                            .with_feature(text(&update.feature))
                            .with_max_version_level(update.max_version_level)
                            .with_allow_downgrade(
                                update.upgrade_type != FeatureUpgradeType::Upgrade,
                            )
                            .with_upgrade_type(match update.upgrade_type {
                                FeatureUpgradeType::Upgrade => 1,
                                FeatureUpgradeType::SafeDowngrade => 2,
                                FeatureUpgradeType::UnsafeDowngrade => 3,
                            })
                    })
                    .collect(),
            );
        let response = self
            .call(
                "update features",
                Target::Controller,
                &request,
                |response| item(response.error_code, response.error_message.as_ref()),
            )
            .await?;
        // From version 2 on, a successful response lists no per-feature results.
        let mut results: BTreeMap<String, ItemResult<()>> = updates
            .iter()
            .map(|update| (update.feature.clone(), Ok(())))
            .collect();
        for result in &response.results {
            results.insert(
                result.feature.to_string(),
                item(result.error_code, result.error_message.as_ref()),
            );
        }
        Ok(results)
    }

    async fn add_raft_voter(
        &self,
        voter: &QuorumMember,
        endpoints: &[VoterEndpoint],
    ) -> Result<(), AdminError> {
        // Kafka checks the cluster ID the request names, and an empty one does not match.
        let cluster_id = self.cluster().await?.cluster_id;
        let request = AddRaftVoterRequest::default()
            .with_cluster_id(Some(text(&cluster_id)))
            .with_timeout_ms(timeout_ms(self.config().request_timeout))
            .with_voter_id(voter.node_id)
            .with_voter_directory_id(voter.directory_id)
            .with_listeners(
                endpoints
                    .iter()
                    .map(|endpoint| {
                        add_raft_voter_request::Listener::default()
                            .with_name(text(&endpoint.listener))
                            .with_host(text(&endpoint.host))
                            .with_port(endpoint.port)
                    })
                    .collect(),
            );
        // Sent once: a voter change answers when it is committed, and one Kafka refuses now
        // (an observer still catching up, another change under way) is for a later look.
        let response = self.send(Target::Any, &request).await?;
        item(response.error_code, response.error_message.as_ref())
    }

    async fn remove_raft_voter(&self, voter: &QuorumMember) -> Result<(), AdminError> {
        let cluster_id = self.cluster().await?.cluster_id;
        let request = RemoveRaftVoterRequest::default()
            .with_cluster_id(Some(text(&cluster_id)))
            .with_voter_id(voter.node_id)
            .with_voter_directory_id(voter.directory_id);
        let response = self.send(Target::Any, &request).await?;
        item(response.error_code, response.error_message.as_ref())
    }
}

/// `Err(NOT_CONTROLLER)` when any item says the request reached a former controller, so
/// the whole request is sent again to the new one.
fn not_controller(codes: impl IntoIterator<Item = i16>) -> Result<(), AdminError> {
    let code = ResponseError::NotController.code();
    if codes.into_iter().any(|c| c == code) {
        return AdminError::check(code, None);
    }
    Ok(())
}

/// Per-name results from `(name, error code, error message)` of each item.
fn by_name<'a>(
    items: impl Iterator<Item = (&'a str, i16, Option<&'a StrBytes>)>,
) -> BTreeMap<String, ItemResult<()>> {
    items
        .map(|(name, code, message)| (name.to_owned(), item(code, message)))
        .collect()
}

impl AdminClient {
    /// The configuration of node `node_id` (its broker resource) as that node tells it, for a
    /// client made for that node alone (its one bootstrap server): the request goes over the
    /// bootstrap connection, without looking the node up in the cluster's metadata. This is
    /// how a KRaft controller is asked, which describes its own configuration on its
    /// controller listener but serves no metadata.
    pub async fn describe_own_configs(&self, node_id: i32) -> Result<Vec<ConfigEntry>, AdminError> {
        let resource = ConfigResource::broker(node_id);
        self.describe_configs_at(Target::Any, &[&resource])
            .await?
            .remove(&resource)
            .unwrap_or_else(|| {
                Err(AdminError::Protocol(format!(
                    "node {node_id} did not describe its configuration"
                )))
            })
    }

    /// Sets `ops` on node `node_id` (its broker resource), for a client made for that node
    /// alone: the request goes over the bootstrap connection, as
    /// [`Self::describe_own_configs`] does, so a KRaft controller takes it on its controller
    /// listener.
    pub async fn alter_own_configs(
        &self,
        node_id: i32,
        ops: Vec<AlterConfigOp>,
    ) -> Result<(), AdminError> {
        let resource = ConfigResource::broker(node_id);
        let changes = BTreeMap::from([(resource.clone(), ops)]);
        self.incremental_alter_configs_at(Target::Any, &[&resource], &changes, false)
            .await?
            .remove(&resource)
            .unwrap_or_else(|| {
                Err(AdminError::Protocol(format!(
                    "node {node_id} did not answer the change of its configuration"
                )))
            })
    }

    /// Applies the `changes` of `resources` through `target` in one request.
    async fn incremental_alter_configs_at(
        &self,
        target: Target,
        resources: &[&ConfigResource],
        changes: &BTreeMap<ConfigResource, Vec<AlterConfigOp>>,
        validate_only: bool,
    ) -> Result<BTreeMap<ConfigResource, ItemResult<()>>, AdminError> {
        let request = IncrementalAlterConfigsRequest::default()
            .with_validate_only(validate_only)
            .with_resources(
                resources
                    .iter()
                    .map(|resource| {
                        incremental_alter_configs_request::AlterConfigsResource::default()
                            .with_resource_type(resource.resource_type.code())
                            .with_resource_name(text(&resource.name))
                            .with_configs(
                                changes
                                    .get(*resource)
                                    .into_iter()
                                    .flatten()
                                    .map(alterable_config)
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let response = self
            .call("alter configs", target, &request, |_| Ok(()))
            .await?;
        Ok(resources
            .iter()
            .zip(response.responses)
            .map(|(resource, result)| {
                (
                    (*resource).clone(),
                    item(result.error_code, result.error_message.as_ref()),
                )
            })
            .collect())
    }

    /// The configs of `resources`, asked of `target` in one request.
    async fn describe_configs_at(
        &self,
        target: Target,
        resources: &[&ConfigResource],
    ) -> Result<BTreeMap<ConfigResource, ItemResult<Vec<ConfigEntry>>>, AdminError> {
        let request = DescribeConfigsRequest::default().with_resources(
            resources
                .iter()
                .map(|resource| {
                    describe_configs_request::DescribeConfigsResource::default()
                        .with_resource_type(resource.resource_type.code())
                        .with_resource_name(text(&resource.name))
                        .with_configuration_keys(None)
                })
                .collect(),
        );
        let response = self
            .call("describe configs", target, &request, |_| Ok(()))
            .await?;
        Ok(resources
            .iter()
            .zip(response.results)
            .map(|(resource, result)| {
                let entries = item(result.error_code, result.error_message.as_ref()).map(|()| {
                    result
                        .configs
                        .iter()
                        .map(|config| ConfigEntry {
                            name: config.name.to_string(),
                            value: config.value.as_ref().map(|v| v.to_string()),
                            source: ConfigSource::from_code(config.config_source),
                            read_only: config.read_only,
                            sensitive: config.is_sensitive,
                        })
                        .collect()
                });
                ((*resource).clone(), entries)
            })
            .collect())
    }
}

/// Broker configs go to that broker; everything else to any broker.
fn by_target<'a>(
    resources: impl Iterator<Item = &'a ConfigResource>,
) -> BTreeMap<TargetKey, Vec<&'a ConfigResource>> {
    let mut groups: BTreeMap<TargetKey, Vec<&ConfigResource>> = BTreeMap::new();
    for resource in resources {
        let key = match (resource.resource_type, resource.name.parse::<i32>()) {
            (ConfigResourceType::Broker, Ok(id)) => TargetKey(Some(id)),
            _ => TargetKey(None),
        };
        groups.entry(key).or_default().push(resource);
    }
    groups
}

/// A sortable [`Target`]: a broker id or any broker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct TargetKey(Option<i32>);

impl TargetKey {
    fn target(self) -> Target {
        self.0.map_or(Target::Any, Target::Node)
    }
}

fn alterable_config(op: &AlterConfigOp) -> incremental_alter_configs_request::AlterableConfig {
    let config = incremental_alter_configs_request::AlterableConfig::default();
    match op {
        AlterConfigOp::Set { name, value } => config
            .with_name(text(name))
            .with_config_operation(0)
            .with_value(Some(text(value))),
        AlterConfigOp::Delete { name } => config
            .with_name(text(name))
            .with_config_operation(1)
            .with_value(None),
    }
}

/// An [`AclBinding`] from wire codes `[resource type, pattern type, operation, permission]`.
fn binding(
    [resource_type, pattern_type, operation, permission]: [i8; 4],
    resource_name: &StrBytes,
    principal: &StrBytes,
    host: &StrBytes,
) -> Result<AclBinding, AdminError> {
    Ok(AclBinding {
        resource_type: AclResourceType::from_code(resource_type)?,
        resource_name: resource_name.to_string(),
        pattern_type: PatternType::from_code(pattern_type)?,
        principal: principal.to_string(),
        host: host.to_string(),
        operation: AclOperation::from_code(operation)?,
        permission: AclPermission::from_code(permission)?,
    })
}

/// The AlterUserScramCredentials request of `changes`, with fresh salts.
fn scram_request(
    changes: &[ScramCredentialChange],
) -> Result<AlterUserScramCredentialsRequest, AdminError> {
    let mut request = AlterUserScramCredentialsRequest::default();
    for change in changes {
        match change {
            ScramCredentialChange::Upsert {
                user,
                password,
                iterations,
            } => {
                let rounds = u32::try_from(*iterations)
                    .ok()
                    .filter(|_| *iterations >= scram::MIN_ITERATIONS)
                    .ok_or_else(|| {
                        AdminError::InvalidRequest(format!(
                            "SCRAM iterations for {user} must be at least {}, not {iterations}",
                            scram::MIN_ITERATIONS
                        ))
                    })?;
                let salt = scram::random_bytes(32);
                let salted = scram::salted_password(password, &salt, rounds);
                request.upsertions.push(
                    alter_user_scram_credentials_request::ScramCredentialUpsertion::default()
                        .with_name(text(user))
                        .with_mechanism(ScramMechanism::ScramSha512.code())
                        .with_iterations(*iterations)
                        .with_salt(Bytes::from(salt))
                        .with_salted_password(Bytes::from(salted)),
                );
            }
            ScramCredentialChange::Delete { user, mechanism } => request.deletions.push(
                alter_user_scram_credentials_request::ScramCredentialDeletion::default()
                    .with_name(text(user))
                    .with_mechanism(mechanism.code()),
            ),
        }
    }
    Ok(request)
}
