//! The topic operator's Kafka requests, batched: describing topics with their configs,
//! creating topics, adding partitions, altering configs and deleting topics each go to Kafka
//! in requests of up to the batch size, however many reconciliations ask at once. The
//! requests of replication-factor changes (brokers, partition reassignments, broker
//! throttles) are rare and go to Kafka one by one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kafka_protocol::error::ResponseError;
use strimzi_operator_common::kafka::{
    AdminError, AlterConfigOp, ConfigResource, ItemResult, KafkaAdmin, NewTopic,
    PartitionReassignment, ReassignmentChange,
};
use strimzi_operator_common::metrics::{KafkaRequestCounts, Metrics, MetricsError};

use crate::error::TopicError;
use crate::model::ActualTopic;
use crate::replicas::Broker;
use strimzi_operator_common::batch::{BatchSettings, Batcher};

/// The outcome of one item of a batch.
type Outcome<T> = Result<T, TopicError>;

/// Name of the counter of Kafka requests, labelled by Kafka API.
pub const KAFKA_REQUESTS: &str = "strimzi_topic_operator_kafka_requests_total";

/// Kafka requests sent since start, per Kafka API; served on `/metrics`.
pub type RequestCounts = KafkaRequestCounts;

/// The counter of the topic operator's Kafka requests, registered in `metrics`.
pub fn request_counts(metrics: &Metrics) -> Result<RequestCounts, MetricsError> {
    KafkaRequestCounts::register(
        metrics,
        KAFKA_REQUESTS,
        "Kafka admin requests sent by the topic operator",
        &APIS,
    )
}

const APIS: [&str; 9] = [
    DESCRIBE_TOPICS,
    DESCRIBE_CONFIGS,
    CREATE_TOPICS,
    CREATE_PARTITIONS,
    ALTER_CONFIGS,
    DELETE_TOPICS,
    DESCRIBE_CLUSTER,
    LIST_REASSIGNMENTS,
    ALTER_REASSIGNMENTS,
];
const DESCRIBE_TOPICS: &str = "Metadata";
const DESCRIBE_CONFIGS: &str = "DescribeConfigs";
const CREATE_TOPICS: &str = "CreateTopics";
const CREATE_PARTITIONS: &str = "CreatePartitions";
const ALTER_CONFIGS: &str = "IncrementalAlterConfigs";
const DELETE_TOPICS: &str = "DeleteTopics";
const DESCRIBE_CLUSTER: &str = "DescribeCluster";
const LIST_REASSIGNMENTS: &str = "ListPartitionReassignments";
const ALTER_REASSIGNMENTS: &str = "AlterPartitionReassignments";

/// What every batch handler uses: the admin client and the request counters.
struct Context {
    admin: Arc<dyn KafkaAdmin>,
    requests: RequestCounts,
}

/// The batched Kafka operations of the topic operator; cloning shares them.
#[derive(Clone)]
pub struct TopicKafka {
    context: Arc<Context>,
    describe: Batcher<String, Outcome<Option<ActualTopic>>>,
    create: Batcher<NewTopic, Outcome<String>>,
    grow: Batcher<(String, i32), Outcome<()>>,
    alter: Batcher<(String, Vec<AlterConfigOp>), Outcome<()>>,
    delete: Batcher<String, Outcome<()>>,
}

impl TopicKafka {
    /// Batched operations on `admin`, counting requests in `requests`; must be called
    /// inside a Tokio runtime.
    pub fn new(
        admin: Arc<dyn KafkaAdmin>,
        settings: BatchSettings,
        requests: RequestCounts,
    ) -> Self {
        let context = Arc::new(Context { admin, requests });
        Self {
            describe: Batcher::spawn_with(
                "describe",
                settings,
                &context,
                describe_batch,
                context.requests.queued("describe"),
            ),
            create: Batcher::spawn_with(
                "create",
                settings,
                &context,
                create_batch,
                context.requests.queued("create"),
            ),
            grow: Batcher::spawn_with(
                "create partitions",
                settings,
                &context,
                grow_batch,
                context.requests.queued("create partitions"),
            ),
            alter: Batcher::spawn_with(
                "alter configs",
                settings,
                &context,
                alter_batch,
                context.requests.queued("alter configs"),
            ),
            delete: Batcher::spawn_with(
                "delete",
                settings,
                &context,
                delete_batch,
                context.requests.queued("delete"),
            ),
            context,
        }
    }

    /// The admin client underneath.
    pub fn admin(&self) -> &Arc<dyn KafkaAdmin> {
        &self.context.admin
    }

    /// Kafka requests sent so far.
    pub fn requests(&self) -> &RequestCounts {
        &self.context.requests
    }

    /// The topic `name` as Kafka has it, `None` when it does not exist.
    pub async fn describe(&self, name: &str) -> Outcome<Option<ActualTopic>> {
        self.describe.call(name.to_owned()).await?
    }

    /// Creates `topic`; its id.
    pub async fn create(&self, topic: NewTopic) -> Outcome<String> {
        self.create.call(topic).await?
    }

    /// Raises the partition count of `name` to `total`.
    pub async fn grow(&self, name: &str, total: i32) -> Outcome<()> {
        self.grow.call((name.to_owned(), total)).await?
    }

    /// Sets and deletes configs of `name`.
    pub async fn alter(&self, name: &str, changes: Vec<AlterConfigOp>) -> Outcome<()> {
        self.alter.call((name.to_owned(), changes)).await?
    }

    /// Deletes `name`; a topic that does not exist counts as deleted.
    pub async fn delete(&self, name: &str) -> Outcome<()> {
        self.delete.call(name.to_owned()).await?
    }

    /// The brokers of the cluster with their racks.
    pub async fn brokers(&self) -> Outcome<Vec<Broker>> {
        self.context.requests.count(DESCRIBE_CLUSTER);
        let cluster = self
            .context
            .admin
            .describe_cluster()
            .await
            .map_err(|error| TopicError::kafka(&error))?;
        Ok(cluster
            .brokers
            .into_iter()
            .map(|broker| Broker {
                id: broker.id,
                rack: broker.rack,
            })
            .collect())
    }

    /// The partitions of topic `name` among `partitions` that Kafka is reassigning.
    pub async fn reassigning(&self, name: &str, partitions: Vec<i32>) -> Outcome<Vec<i32>> {
        let topics = BTreeMap::from([(name.to_owned(), partitions)]);
        let listed = self.list_reassignments(Some(&topics)).await?;
        Ok(listed
            .into_iter()
            .filter(|reassignment| reassignment.topic == name)
            .map(|reassignment| reassignment.partition)
            .collect())
    }

    /// Whether Kafka is reassigning a partition of any topic.
    pub async fn any_reassignment(&self) -> Outcome<bool> {
        Ok(!self.list_reassignments(None).await?.is_empty())
    }

    async fn list_reassignments(
        &self,
        topics: Option<&BTreeMap<String, Vec<i32>>>,
    ) -> Outcome<Vec<PartitionReassignment>> {
        self.context.requests.count(LIST_REASSIGNMENTS);
        self.context
            .admin
            .list_partition_reassignments(topics)
            .await
            .map_err(|error| TopicError::kafka(&error))
    }

    /// Moves the partitions of topic `name` to the replicas of `targets`.
    pub async fn reassign(&self, name: &str, targets: &BTreeMap<i32, Vec<i32>>) -> Outcome<()> {
        self.context.requests.count(ALTER_REASSIGNMENTS);
        let changes: Vec<ReassignmentChange> = targets
            .iter()
            .map(|(partition, replicas)| ReassignmentChange {
                topic: name.to_owned(),
                partition: *partition,
                replicas: Some(replicas.clone()),
            })
            .collect();
        let results = self
            .context
            .admin
            .alter_partition_reassignments(&changes)
            .await
            .map_err(|error| TopicError::kafka(&error))?;
        first_error(results)
    }

    /// Sets and deletes configs of brokers, in one request.
    pub async fn alter_brokers(
        &self,
        changes: BTreeMap<ConfigResource, Vec<AlterConfigOp>>,
    ) -> Outcome<()> {
        self.context.requests.count(ALTER_CONFIGS);
        let results = self
            .context
            .admin
            .incremental_alter_configs(&changes, false)
            .await
            .map_err(|error| TopicError::kafka(&error))?;
        first_error(results)
    }
}

/// Creates `topics`; their ids.
async fn create_batch(context: Arc<Context>, topics: Vec<NewTopic>) -> Vec<Outcome<String>> {
    context.requests.count(CREATE_TOPICS);
    let names: Vec<String> = topics.iter().map(|topic| topic.name.clone()).collect();
    let results = context
        .admin
        .create_topics(&unique_by_name(topics), false)
        .await;
    per_item(&names, results, Clone::clone, |created| {
        created.topic_id.to_string()
    })
}

/// Raises partition counts.
async fn grow_batch(context: Arc<Context>, items: Vec<(String, i32)>) -> Vec<Outcome<()>> {
    context.requests.count(CREATE_PARTITIONS);
    let totals: BTreeMap<String, i32> = items.iter().cloned().collect();
    let results = context.admin.create_partitions(&totals, false).await;
    per_item(&items, results, |(name, _)| name.clone(), |()| ())
}

/// Sets and deletes topic configs.
async fn alter_batch(
    context: Arc<Context>,
    items: Vec<(String, Vec<AlterConfigOp>)>,
) -> Vec<Outcome<()>> {
    context.requests.count(ALTER_CONFIGS);
    let changes: BTreeMap<ConfigResource, Vec<AlterConfigOp>> = items
        .iter()
        .map(|(name, ops)| (ConfigResource::topic(name), ops.clone()))
        .collect();
    let results = context
        .admin
        .incremental_alter_configs(&changes, false)
        .await;
    per_item(
        &items,
        results,
        |(name, _)| ConfigResource::topic(name),
        |()| (),
    )
}

/// Deletes topics; one that does not exist any more counts as deleted.
async fn delete_batch(context: Arc<Context>, names: Vec<String>) -> Vec<Outcome<()>> {
    context.requests.count(DELETE_TOPICS);
    let results = context
        .admin
        .delete_topics(&unique(&names))
        .await
        .map(|results| {
            results
                .into_iter()
                .map(|(name, result)| match result {
                    Err(error) if is_unknown_topic(&error) => (name, Ok(())),
                    other => (name, other),
                })
                .collect::<BTreeMap<_, _>>()
        });
    per_item(&names, results, Clone::clone, |()| ())
}

/// The first failure among per-item `results`, if any.
fn first_error<K>(results: BTreeMap<K, ItemResult<()>>) -> Outcome<()> {
    match results.into_values().find_map(Result::err) {
        Some(error) => Err(TopicError::kafka(&error)),
        None => Ok(()),
    }
}

/// `names` sorted, each once.
fn unique(names: &[String]) -> Vec<String> {
    names
        .iter()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// `topics` with one topic per name.
fn unique_by_name(topics: Vec<NewTopic>) -> Vec<NewTopic> {
    let mut seen = BTreeSet::new();
    topics
        .into_iter()
        .filter(|topic| seen.insert(topic.name.clone()))
        .collect()
}

/// Whether `error` says that the topic does not exist.
fn is_unknown_topic(error: &AdminError) -> bool {
    matches!(
        error,
        AdminError::Kafka {
            error: ResponseError::UnknownTopicOrPartition,
            ..
        }
    )
}

/// One outcome per item from the per-key results of a batch request: the item's result,
/// or the request's error for every item.
fn per_item<I, K: Ord, T, O>(
    items: &[I],
    results: Result<BTreeMap<K, ItemResult<T>>, AdminError>,
    key: impl Fn(&I) -> K,
    output: impl Fn(&T) -> O,
) -> Vec<Outcome<O>> {
    match results {
        Err(error) => all_failed(items.len(), &error),
        Ok(results) => items
            .iter()
            .map(|item| match results.get(&key(item)) {
                Some(Ok(value)) => Ok(output(value)),
                Some(Err(error)) => Err(TopicError::kafka(error)),
                None => Err(TopicError::Kafka(AdminError::Protocol(
                    "Kafka did not answer for this topic".into(),
                ))),
            })
            .collect(),
    }
}

/// `count` outcomes, each the failure of the whole request.
fn all_failed<O>(count: usize, error: &AdminError) -> Vec<Outcome<O>> {
    let error = TopicError::kafka(error);
    (0..count).map(|_| Err(error.clone())).collect()
}

/// Describes the topics `names` and their configs, in two requests.
async fn describe_batch(
    context: Arc<Context>,
    names: Vec<String>,
) -> Vec<Outcome<Option<ActualTopic>>> {
    let Context { admin, requests } = context.as_ref();
    requests.count(DESCRIBE_TOPICS);
    let described = match admin.describe_topics(&unique(&names)).await {
        Ok(described) => described,
        Err(error) => {
            return all_failed(names.len(), &error);
        }
    };
    let existing: Vec<ConfigResource> = described
        .iter()
        .filter(|(_, result)| result.is_ok())
        .map(|(name, _)| ConfigResource::topic(name))
        .collect();
    let configs = if existing.is_empty() {
        Ok(BTreeMap::new())
    } else {
        requests.count(DESCRIBE_CONFIGS);
        admin.describe_configs(&existing).await
    };
    let configs = match configs {
        Ok(configs) => configs,
        Err(error) => {
            return all_failed(names.len(), &error);
        }
    };
    names
        .iter()
        .map(|name| match described.get(name) {
            None => Err(TopicError::Kafka(AdminError::Protocol(
                "Kafka did not describe this topic".into(),
            ))),
            Some(Err(error)) if is_unknown_topic(error) => Ok(None),
            Some(Err(error)) => Err(TopicError::kafka(error)),
            Some(Ok(description)) => match configs.get(&ConfigResource::topic(name)) {
                Some(Ok(entries)) => Ok(Some(ActualTopic {
                    topic_id: description.topic_id.to_string(),
                    partitions: i32::try_from(description.partitions.len()).unwrap_or(i32::MAX),
                    replicas: description
                        .partitions
                        .iter()
                        .map(|partition| {
                            i32::try_from(partition.replicas.len()).unwrap_or(i32::MAX)
                        })
                        .max()
                        .unwrap_or_default(),
                    configs: entries.clone(),
                    assignment: description.partitions.clone(),
                })),
                Some(Err(error)) if is_unknown_topic(error) => Ok(None),
                Some(Err(error)) => Err(TopicError::kafka(error)),
                None => Err(TopicError::Kafka(AdminError::Protocol(
                    "Kafka did not describe this topic's configs".into(),
                ))),
            },
        })
        .collect()
}
