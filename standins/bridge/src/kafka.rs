//! The Kafka side, with rdkafka: one producer shared by every produce request, and one
//! consumer per bridge consumer instance. Consumer calls block; the server runs them off the
//! async runtime.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header as KafkaHeader, Headers, Message, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer as _};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};

use crate::records::{ConsumedRecord, EncodedRecord, Format, OffsetOrError};

/// How long metadata and commit requests may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

fn client_config(settings: &[(String, String)]) -> ClientConfig {
    let mut config = ClientConfig::new();
    for (key, value) in settings {
        config.set(key, value);
    }
    config
}

/// The HTTP-like status of a Kafka error: 404 for unknown topics and partitions.
pub fn status_of(error: &KafkaError) -> u16 {
    match error.rdkafka_error_code() {
        Some(
            RDKafkaErrorCode::UnknownTopicOrPartition
            | RDKafkaErrorCode::UnknownTopic
            | RDKafkaErrorCode::UnknownPartition,
        ) => 404,
        _ => 500,
    }
}

/// The shared producer.
pub struct Producer {
    producer: FutureProducer,
}

impl Producer {
    /// A producer with `settings` (librdkafka names).
    pub fn new(settings: &[(String, String)]) -> Result<Self, KafkaError> {
        Ok(Self {
            producer: client_config(settings).create()?,
        })
    }

    /// Sends `records` to `topic` and waits for each delivery report (unless `wait` is
    /// false): the offsets, or an error per record.
    pub async fn send(
        &self,
        topic: &str,
        records: &[EncodedRecord],
        wait: bool,
    ) -> Vec<OffsetOrError> {
        let mut pending = Vec::with_capacity(records.len());
        for record in records {
            let mut headers = OwnedHeaders::new();
            for (key, value) in &record.headers {
                headers = headers.insert(KafkaHeader {
                    key,
                    value: Some(value),
                });
            }
            let mut future = FutureRecord::<[u8], [u8]>::to(topic).headers(headers);
            if let Some(key) = &record.key {
                future = future.key(key.as_slice());
            }
            if let Some(value) = &record.value {
                future = future.payload(value.as_slice());
            }
            if let Some(partition) = record.partition {
                future = future.partition(partition);
            }
            if let Some(timestamp) = record.timestamp {
                future = future.timestamp(timestamp);
            }
            pending.push(
                self.producer
                    .send_result(future)
                    .map_err(|(error, _)| error),
            );
        }
        let mut outcomes = Vec::with_capacity(pending.len());
        for sent in pending {
            let outcome = match sent {
                Err(error) => Err(error),
                Ok(_) if !wait => continue,
                Ok(delivery) => match delivery.await {
                    Ok(Ok(delivered)) => Ok((delivered.partition, delivered.offset)),
                    Ok(Err((error, _))) => Err(error),
                    Err(_) => Err(KafkaError::Canceled),
                },
            };
            outcomes.push(match outcome {
                Ok((partition, offset)) => OffsetOrError::Offset { partition, offset },
                Err(error) => OffsetOrError::Error {
                    error_code: status_of(&error),
                    message: error.to_string(),
                },
            });
        }
        outcomes
    }

    /// Names of the cluster's topics, internal ones left out.
    pub fn topics(&self) -> Result<Vec<String>, KafkaError> {
        let metadata = self
            .producer
            .client()
            .fetch_metadata(None, REQUEST_TIMEOUT)?;
        let mut names: Vec<String> = metadata
            .topics()
            .iter()
            .map(|topic| topic.name().to_owned())
            .filter(|name| !name.starts_with("__"))
            .collect();
        names.sort();
        Ok(names)
    }

    /// Partitions of `topic` with leader and replicas: `(partition, leader, replicas, isr)`.
    #[allow(clippy::type_complexity)]
    pub fn partitions(
        &self,
        topic: &str,
    ) -> Result<Vec<(i32, i32, Vec<i32>, Vec<i32>)>, KafkaError> {
        let metadata = self
            .producer
            .client()
            .fetch_metadata(Some(topic), REQUEST_TIMEOUT)?;
        let Some(found) = metadata.topics().first() else {
            return Err(KafkaError::MetadataFetch(
                RDKafkaErrorCode::UnknownTopicOrPartition,
            ));
        };
        if let Some(error) = found.error() {
            return Err(KafkaError::MetadataFetch(error.into()));
        }
        Ok(found
            .partitions()
            .iter()
            .map(|p| (p.id(), p.leader(), p.replicas().to_vec(), p.isr().to_vec()))
            .collect())
    }
}

/// Whether a consumer error is one the client recovers from by itself: a lost or refused
/// connection, a broker, leader or group coordinator not reachable yet. Java's
/// `KafkaConsumer.poll`, which Strimzi's bridge calls, retries these inside and never reports
/// them, so a poll that meets one goes on until its timeout, as the bridge's would.
fn recovers_by_itself(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::BrokerTransportFailure
                | RDKafkaErrorCode::AllBrokersDown
                | RDKafkaErrorCode::Resolve
                | RDKafkaErrorCode::OperationTimedOut
                | RDKafkaErrorCode::RequestTimedOut
                | RDKafkaErrorCode::NetworkException
                | RDKafkaErrorCode::BrokerNotAvailable
                | RDKafkaErrorCode::LeaderNotAvailable
                | RDKafkaErrorCode::NotLeaderForPartition
                | RDKafkaErrorCode::WaitingForCoordinator
                | RDKafkaErrorCode::CoordinatorNotAvailable
                | RDKafkaErrorCode::CoordinatorLoadInProgress
                | RDKafkaErrorCode::NotCoordinator
        )
    )
}

/// What a consumer reads from.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Subscription {
    /// Nothing yet (or unsubscribed).
    #[default]
    None,
    /// These topics, with the group's assignment.
    Topics(Vec<String>),
    /// Topics matching a pattern.
    Pattern(String),
    /// These partitions, assigned by the client.
    Partitions(Vec<(String, i32)>),
}

/// Why a consumer request failed, with the status the API answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConsumerError {
    /// HTTP status.
    pub status: u16,
    /// Message for the error body.
    pub message: String,
}

impl ConsumerError {
    fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

impl From<KafkaError> for ConsumerError {
    fn from(error: KafkaError) -> Self {
        Self::new(status_of(&error), error.to_string())
    }
}

/// One bridge consumer instance: its Kafka consumer and state.
pub struct ConsumerInstance {
    /// Group id.
    pub group: String,
    /// Instance name.
    pub name: String,
    /// Embedded format of its records.
    pub format: Format,
    /// Poll timeout when a request names none (`consumer.request.timeout.ms`).
    pub default_timeout: Duration,
    consumer: BaseConsumer,
    subscription: Mutex<Subscription>,
    last_used: Mutex<Instant>,
    max_records: usize,
}

impl ConsumerInstance {
    /// Creates the Kafka consumer with `settings` (librdkafka names, `group.id` included).
    pub fn new(
        group: &str,
        name: &str,
        format: Format,
        default_timeout: Duration,
        settings: &[(String, String)],
        max_records: usize,
    ) -> Result<Self, KafkaError> {
        Ok(Self {
            group: group.to_owned(),
            name: name.to_owned(),
            format,
            default_timeout,
            consumer: client_config(settings).create()?,
            subscription: Mutex::new(Subscription::None),
            last_used: Mutex::new(Instant::now()),
            max_records,
        })
    }

    /// Marks the instance used now.
    pub fn touch(&self) {
        if let Ok(mut last) = self.last_used.lock() {
            *last = Instant::now();
        }
    }

    /// Time since the last request.
    pub fn idle(&self) -> Duration {
        self.last_used
            .lock()
            .map(|last| last.elapsed())
            .unwrap_or_default()
    }

    fn subscription(&self) -> Subscription {
        self.subscription
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    fn set_subscription(&self, subscription: Subscription) {
        if let Ok(mut current) = self.subscription.lock() {
            *current = subscription;
        }
    }

    /// Subscribes to topics or a pattern (replacing a subscription; refused while partitions
    /// are assigned by hand).
    pub fn subscribe(&self, subscription: Subscription) -> Result<(), ConsumerError> {
        if matches!(self.subscription(), Subscription::Partitions(_)) {
            return Err(ConsumerError::new(
                409,
                "Subscriptions to topics, partitions, and patterns are mutually exclusive.",
            ));
        }
        match &subscription {
            Subscription::Topics(topics) => {
                let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
                self.consumer.subscribe(&topics)?;
            }
            Subscription::Pattern(pattern) => {
                // librdkafka treats a topic starting with `^` as a regular expression; Java
                // patterns match whole names.
                self.consumer.subscribe(&[&format!("^({pattern})$")])?;
            }
            Subscription::Partitions(_) | Subscription::None => {}
        }
        self.set_subscription(subscription);
        Ok(())
    }

    /// Assigns partitions by hand (refused while subscribed).
    pub fn assign(&self, partitions: Vec<(String, i32)>) -> Result<(), ConsumerError> {
        if matches!(
            self.subscription(),
            Subscription::Topics(_) | Subscription::Pattern(_)
        ) {
            return Err(ConsumerError::new(
                409,
                "Subscriptions to topics, partitions, and patterns are mutually exclusive.",
            ));
        }
        let mut list = TopicPartitionList::new();
        for (topic, partition) in &partitions {
            list.add_partition(topic, *partition);
        }
        self.consumer.assign(&list)?;
        self.set_subscription(Subscription::Partitions(partitions));
        Ok(())
    }

    /// Drops subscription and assignment.
    pub fn unsubscribe(&self) {
        self.consumer.unsubscribe();
        self.set_subscription(Subscription::None);
    }

    /// Subscribed topics and the partitions assigned now, by topic.
    pub fn listing(&self) -> (Vec<String>, Vec<(String, Vec<i32>)>) {
        let topics = match self.subscription() {
            Subscription::Topics(topics) => topics,
            Subscription::Pattern(pattern) => vec![pattern],
            _ => Vec::new(),
        };
        let mut partitions: Vec<(String, Vec<i32>)> = Vec::new();
        if let Ok(assignment) = self.consumer.assignment() {
            for element in assignment.elements() {
                match partitions.iter_mut().find(|(t, _)| t == element.topic()) {
                    Some((_, list)) => list.push(element.partition()),
                    None => {
                        partitions.push((element.topic().to_owned(), vec![element.partition()]))
                    }
                }
            }
        }
        (topics, partitions)
    }

    /// Polls for up to `timeout`: the records of one fetch (at most `max.poll.records`).
    pub fn poll(&self, timeout: Duration) -> Result<Vec<ConsumedRecord>, ConsumerError> {
        if self.subscription() == Subscription::None {
            return Err(ConsumerError::new(
                500,
                "Consumer is not subscribed to any topics or assigned any partitions",
            ));
        }
        let deadline = Instant::now() + timeout;
        let mut records = Vec::new();
        loop {
            let wait = if records.is_empty() {
                deadline.saturating_duration_since(Instant::now())
            } else {
                Duration::ZERO
            };
            match self.consumer.poll(wait) {
                Some(Ok(message)) => {
                    let headers = message
                        .headers()
                        .map(|headers| {
                            headers
                                .iter()
                                .map(|h| (h.key.to_owned(), h.value.map(<[u8]>::to_vec)))
                                .collect()
                        })
                        .unwrap_or_default();
                    records.push(ConsumedRecord {
                        topic: message.topic().to_owned(),
                        partition: message.partition(),
                        offset: message.offset(),
                        timestamp: message.timestamp().to_millis(),
                        key: message.key().map(<[u8]>::to_vec),
                        value: message.payload().map(<[u8]>::to_vec),
                        headers,
                    });
                    if records.len() >= self.max_records {
                        break;
                    }
                }
                Some(Err(KafkaError::PartitionEOF(_))) => {}
                Some(Err(error)) if recovers_by_itself(&error) => {
                    eprintln!("bridge-standin: consumer {}: {error} (retried)", self.name);
                    if !records.is_empty() || Instant::now() >= deadline {
                        break;
                    }
                }
                Some(Err(error)) => {
                    if records.is_empty() {
                        return Err(error.into());
                    }
                    break;
                }
                None => {
                    if !records.is_empty() || Instant::now() >= deadline {
                        break;
                    }
                }
            }
        }
        Ok(records)
    }

    /// Commits `offsets` (topic, partition, offset), or with none the positions of the records
    /// polled so far.
    pub fn commit(&self, offsets: &[(String, i32, i64)]) -> Result<(), ConsumerError> {
        if offsets.is_empty() {
            return match self.consumer.commit_consumer_state(CommitMode::Sync) {
                // Nothing polled yet: nothing to commit.
                Err(KafkaError::ConsumerCommit(RDKafkaErrorCode::NoOffset)) => Ok(()),
                other => other.map_err(Into::into),
            };
        }
        let mut list = TopicPartitionList::new();
        for (topic, partition, offset) in offsets {
            list.add_partition_offset(topic, *partition, Offset::Offset(*offset))?;
        }
        self.consumer.commit(&list, CommitMode::Sync)?;
        Ok(())
    }

    /// Moves the positions of assigned partitions; 404 for a partition not assigned.
    pub fn seek(&self, positions: &[(String, i32, Offset)]) -> Result<(), ConsumerError> {
        let assignment = self.consumer.assignment()?;
        for (topic, partition, offset) in positions {
            if assignment.find_partition(topic, *partition).is_none() {
                return Err(ConsumerError::new(
                    404,
                    format!("No current assignment for partition {topic}-{partition}"),
                ));
            }
            self.consumer
                .seek(topic, *partition, *offset, REQUEST_TIMEOUT)?;
        }
        Ok(())
    }
}

impl Drop for ConsumerInstance {
    fn drop(&mut self) {
        self.consumer.unsubscribe();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_connections_and_missing_coordinators_are_retried_other_errors_reported() {
        for code in [
            RDKafkaErrorCode::BrokerTransportFailure,
            RDKafkaErrorCode::AllBrokersDown,
            RDKafkaErrorCode::CoordinatorNotAvailable,
        ] {
            assert!(recovers_by_itself(&KafkaError::MessageConsumption(code)));
        }
        for code in [
            RDKafkaErrorCode::TopicAuthorizationFailed,
            RDKafkaErrorCode::GroupAuthorizationFailed,
            RDKafkaErrorCode::OffsetOutOfRange,
            RDKafkaErrorCode::UnknownTopicOrPartition,
        ] {
            assert!(!recovers_by_itself(&KafkaError::MessageConsumption(code)));
        }
    }

    /// A poll while no broker answers (a port nothing listens on) ends at its timeout with no
    /// records, as the Java consumer's does, instead of answering the connection error.
    #[test]
    fn a_poll_while_the_brokers_are_unreachable_ends_empty_at_its_timeout() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let settings = [
            ("bootstrap.servers".to_owned(), format!("127.0.0.1:{port}")),
            ("group.id".to_owned(), "unreachable".to_owned()),
            ("reconnect.backoff.ms".to_owned(), "50".to_owned()),
        ];
        let instance = ConsumerInstance::new(
            "unreachable",
            "reader",
            Format::Json,
            Duration::from_secs(1),
            &settings,
            10,
        )
        .unwrap();
        instance
            .subscribe(Subscription::Topics(vec!["records".to_owned()]))
            .unwrap();
        let started = Instant::now();
        let polled = instance.poll(Duration::from_secs(3));
        assert_eq!(polled, Ok(Vec::new()));
        assert!(started.elapsed() >= Duration::from_secs(3));
    }
}
