//! The topic operator's Kafka requests, batched: describing topics with their configs,
//! creating topics, adding partitions, altering configs and deleting topics each go to Kafka
//! in requests of up to the batch size, however many reconciliations ask at once.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kafka_protocol::error::ResponseError;
use prometheus::{IntCounterVec, Opts};
use strimzi_operator_common::kafka::{
    AdminError, AlterConfigOp, ConfigResource, ItemResult, KafkaAdmin, NewTopic,
};
use strimzi_operator_common::metrics::{Metrics, MetricsError};

use crate::batch::{BatchSettings, Batcher};
use crate::error::TopicError;
use crate::model::ActualTopic;

/// The outcome of one item of a batch.
type Outcome<T> = Result<T, TopicError>;

/// Name of the counter of Kafka requests, labelled by Kafka API.
pub const KAFKA_REQUESTS: &str = "strimzi_topic_operator_kafka_requests_total";

/// Kafka requests sent since start, per Kafka API; served on `/metrics`.
#[derive(Debug, Clone)]
pub struct RequestCounts {
    counter: IntCounterVec,
}

impl RequestCounts {
    /// Counters registered in `metrics`.
    pub fn register(metrics: &Metrics) -> Result<Self, MetricsError> {
        let counter = IntCounterVec::new(
            Opts::new(
                KAFKA_REQUESTS,
                "Kafka admin requests sent by the topic operator",
            ),
            &["api"],
        )
        .map_err(MetricsError::from)?;
        metrics.register(Box::new(counter.clone()))?;
        Ok(Self { counter })
    }

    fn count(&self, api: &str) {
        self.counter.with_label_values(&[api]).inc();
    }

    /// Requests sent so far, all APIs together.
    pub fn total(&self) -> u64 {
        [
            DESCRIBE_TOPICS,
            DESCRIBE_CONFIGS,
            CREATE_TOPICS,
            CREATE_PARTITIONS,
            ALTER_CONFIGS,
            DELETE_TOPICS,
        ]
        .iter()
        .map(|api| self.counter.with_label_values(&[*api]).get())
        .sum()
    }
}

const DESCRIBE_TOPICS: &str = "Metadata";
const DESCRIBE_CONFIGS: &str = "DescribeConfigs";
const CREATE_TOPICS: &str = "CreateTopics";
const CREATE_PARTITIONS: &str = "CreatePartitions";
const ALTER_CONFIGS: &str = "IncrementalAlterConfigs";
const DELETE_TOPICS: &str = "DeleteTopics";

/// The batched Kafka operations of the topic operator; cloning shares them.
#[derive(Clone)]
pub struct TopicKafka {
    admin: Arc<dyn KafkaAdmin>,
    describe: Batcher<String, Outcome<Option<ActualTopic>>>,
    create: Batcher<NewTopic, Outcome<String>>,
    grow: Batcher<(String, i32), Outcome<()>>,
    alter: Batcher<(String, Vec<AlterConfigOp>), Outcome<()>>,
    delete: Batcher<String, Outcome<()>>,
    requests: Arc<RequestCounts>,
}

impl TopicKafka {
    /// Batched operations on `admin`, counting requests in `requests`; must be called
    /// inside a Tokio runtime.
    pub fn new(
        admin: Arc<dyn KafkaAdmin>,
        settings: BatchSettings,
        requests: RequestCounts,
    ) -> Self {
        let requests = Arc::new(requests);
        let describe = {
            let (admin, requests) = (admin.clone(), requests.clone());
            Batcher::spawn("describe", settings, move |names: Vec<String>| {
                describe_batch(admin.clone(), requests.clone(), names)
            })
        };
        let create = {
            let (admin, requests) = (admin.clone(), requests.clone());
            Batcher::spawn("create", settings, move |topics: Vec<NewTopic>| {
                let (admin, requests) = (admin.clone(), requests.clone());
                async move {
                    requests.count(CREATE_TOPICS);
                    let names: Vec<String> =
                        topics.iter().map(|topic| topic.name.clone()).collect();
                    let unique = unique_by_name(topics);
                    let results = admin.create_topics(&unique, false).await;
                    per_item(
                        &names,
                        results,
                        |name| name.clone(),
                        |created| created.topic_id.to_string(),
                    )
                }
            })
        };
        let grow = {
            let (admin, requests) = (admin.clone(), requests.clone());
            Batcher::spawn(
                "create partitions",
                settings,
                move |items: Vec<(String, i32)>| {
                    let (admin, requests) = (admin.clone(), requests.clone());
                    async move {
                        requests.count(CREATE_PARTITIONS);
                        let totals: BTreeMap<String, i32> = items.iter().cloned().collect();
                        let results = admin.create_partitions(&totals, false).await;
                        per_item(&items, results, |(name, _)| name.clone(), |()| ())
                    }
                },
            )
        };
        let alter = {
            let (admin, requests) = (admin.clone(), requests.clone());
            Batcher::spawn(
                "alter configs",
                settings,
                move |items: Vec<(String, Vec<AlterConfigOp>)>| {
                    let (admin, requests) = (admin.clone(), requests.clone());
                    async move {
                        requests.count(ALTER_CONFIGS);
                        let changes: BTreeMap<ConfigResource, Vec<AlterConfigOp>> = items
                            .iter()
                            .map(|(name, ops)| (ConfigResource::topic(name), ops.clone()))
                            .collect();
                        let results = admin.incremental_alter_configs(&changes, false).await;
                        per_item(
                            &items,
                            results,
                            |(name, _)| ConfigResource::topic(name),
                            |()| (),
                        )
                    }
                },
            )
        };
        let delete = {
            let (admin, requests) = (admin.clone(), requests.clone());
            Batcher::spawn("delete", settings, move |names: Vec<String>| {
                let (admin, requests) = (admin.clone(), requests.clone());
                async move {
                    requests.count(DELETE_TOPICS);
                    let unique: Vec<String> = names
                        .iter()
                        .cloned()
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect();
                    // A topic that does not exist any more is deleted already.
                    let results = admin.delete_topics(&unique).await.map(|results| {
                        results
                            .into_iter()
                            .map(|(name, result)| match result {
                                Err(error) if is_unknown_topic(&error) => (name, Ok(())),
                                other => (name, other),
                            })
                            .collect::<BTreeMap<_, _>>()
                    });
                    per_item(&names, results, |name| name.clone(), |()| ())
                }
            })
        };
        Self {
            admin,
            describe,
            create,
            grow,
            alter,
            delete,
            requests,
        }
    }

    /// The admin client underneath.
    pub fn admin(&self) -> &Arc<dyn KafkaAdmin> {
        &self.admin
    }

    /// Kafka requests sent so far.
    pub fn requests(&self) -> &RequestCounts {
        &self.requests
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
                None => Err(TopicError::Kafka(
                    "Kafka did not answer for this topic".into(),
                )),
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
    admin: Arc<dyn KafkaAdmin>,
    requests: Arc<RequestCounts>,
    names: Vec<String>,
) -> Vec<Outcome<Option<ActualTopic>>> {
    let unique: Vec<String> = names
        .iter()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    requests.count(DESCRIBE_TOPICS);
    let described = match admin.describe_topics(&unique).await {
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
            None => Err(TopicError::Kafka(
                "Kafka did not describe this topic".into(),
            )),
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
                })),
                Some(Err(error)) if is_unknown_topic(error) => Ok(None),
                Some(Err(error)) => Err(TopicError::kafka(error)),
                None => Err(TopicError::Kafka(
                    "Kafka did not describe this topic's configs".into(),
                )),
            },
        })
        .collect()
}
