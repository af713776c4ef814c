//! The stand-in's state behind the REST API: the load monitor, the user tasks and the
//! executor, and the Kafka calls that feed them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafka_protocol::error::ResponseError;
use rand::Rng;
use strimzi_operator_common::kafka::{AdminError, KafkaAdmin, NewTopic};

use crate::config::Settings;
use crate::model::{Broker, Cluster, Partition};
use crate::monitor::LoadMonitor;

/// The state of a user task, with Cruise Control's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStatus {
    /// Being computed.
    Active,
    /// Computed, being carried out.
    InExecution,
    /// Done.
    Completed,
    /// Failed.
    CompletedWithError,
}

impl TaskStatus {
    /// Cruise Control's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Active => "Active",
            Self::InExecution => "InExecution",
            Self::Completed => "Completed",
            Self::CompletedWithError => "CompletedWithError",
        }
    }
}

/// A request the stand-in keeps track of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserTask {
    /// Its ID, sent as `User-Task-ID`.
    pub id: String,
    /// `METHOD /path?query`.
    pub request_url: String,
    /// The client's address.
    pub client: String,
    /// When it started, ms since the epoch.
    pub start_ms: u64,
    /// Its state.
    pub status: TaskStatus,
    /// Its answer: HTTP status and JSON body.
    pub answer: Option<(u16, String)>,
    /// When it finished, ms since the epoch.
    pub finished_ms: Option<u64>,
}

/// The execution in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    /// The task carried out.
    pub task_id: String,
    /// `<reason> (Client: <ip>, Date: <RFC 3339>)`.
    pub reason: String,
    /// Partition movements in all.
    pub total: usize,
    /// Partition movements finished.
    pub finished: usize,
    /// Partition movements submitted to Kafka and not finished.
    pub in_progress: usize,
    /// Bytes to copy in all.
    pub total_bytes: u64,
    /// Bytes of the finished movements.
    pub finished_bytes: u64,
    /// Whether a stop was asked for.
    pub stop_requested: bool,
}

#[derive(Debug)]
struct Inner {
    monitor: LoadMonitor,
    tasks: BTreeMap<String, UserTask>,
    execution: Option<Execution>,
    sample_topics_created: bool,
}

/// The stand-in: settings, a Kafka admin client and the state the REST API reports.
pub struct StandIn {
    /// The configuration.
    pub settings: Settings,
    /// The Kafka admin client.
    pub admin: Arc<dyn KafkaAdmin>,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for StandIn {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("StandIn").finish_non_exhaustive()
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

/// A new task ID, shaped like Cruise Control's (a random UUID).
pub fn new_task_id() -> String {
    let bits: u128 = rand::rng().random();
    let hex = format!("{bits:032x}");
    format!(
        "{}-{}-4{}-a{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

impl StandIn {
    /// A stand-in with nothing sampled yet.
    pub fn new(settings: Settings, admin: Arc<dyn KafkaAdmin>) -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(Inner {
                monitor: LoadMonitor::new(settings.windows),
                tasks: BTreeMap::new(),
                execution: None,
                sample_topics_created: false,
            }),
            settings,
            admin,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The load monitor's view now.
    pub fn monitor_view(&self) -> crate::monitor::MonitorView {
        self.lock().monitor.view(now_ms())
    }

    /// Records a sample as of `now_ms` (also what tests use to skip waiting for windows).
    pub fn record_sample(&self, now_ms: u64, partitions: usize) {
        self.lock().monitor.record(now_ms, partitions);
    }

    /// The execution in progress, if any.
    pub fn execution(&self) -> Option<Execution> {
        self.lock().execution.clone()
    }

    /// Starts tracking an execution; `false` when one is already running.
    pub fn begin_execution(&self, execution: Execution) -> bool {
        let mut inner = self.lock();
        if inner.execution.is_some() {
            return false;
        }
        inner.execution = Some(execution);
        true
    }

    /// Changes the execution in progress.
    pub fn update_execution(&self, change: impl FnOnce(&mut Execution)) {
        if let Some(execution) = self.lock().execution.as_mut() {
            change(execution);
        }
    }

    /// Ends the execution in progress.
    pub fn end_execution(&self) {
        self.lock().execution = None;
    }

    /// Asks the execution in progress to stop after the movements under way; whether one runs.
    pub fn request_stop(&self) -> bool {
        let mut inner = self.lock();
        match inner.execution.as_mut() {
            Some(execution) => {
                execution.stop_requested = true;
                true
            }
            None => false,
        }
    }

    /// Adds or replaces a task.
    pub fn put_task(&self, task: UserTask) {
        let mut inner = self.lock();
        let retention = self.settings.task_retention.as_millis() as u64;
        let now = now_ms();
        inner.tasks.retain(|_, task| {
            task.finished_ms
                .is_none_or(|finished| finished + retention > now)
        });
        inner.tasks.insert(task.id.clone(), task);
    }

    /// Changes a task.
    pub fn update_task(&self, id: &str, change: impl FnOnce(&mut UserTask)) {
        if let Some(task) = self.lock().tasks.get_mut(id) {
            change(task);
        }
    }

    /// A task by ID.
    pub fn task(&self, id: &str) -> Option<UserTask> {
        self.lock().tasks.get(id).cloned()
    }

    /// Every task, oldest first.
    pub fn tasks(&self) -> Vec<UserTask> {
        let mut tasks: Vec<UserTask> = self.lock().tasks.values().cloned().collect();
        tasks.sort_by_key(|task| (task.start_ms, task.id.clone()));
        tasks
    }

    /// Tasks still being computed.
    pub fn active_tasks(&self) -> usize {
        self.lock()
            .tasks
            .values()
            .filter(|task| task.status == TaskStatus::Active)
            .count()
    }

    /// Describes the cluster through the admin API: brokers, and every non-internal topic's
    /// partitions.
    pub async fn describe(&self) -> Result<Cluster, AdminError> {
        describe(self.admin.as_ref()).await
    }

    /// One sample: describes the cluster and records the window; creates the sample store
    /// topics once the cluster answers.
    pub async fn sample(&self) -> Result<(), AdminError> {
        let cluster = self.describe().await?;
        self.record_sample(now_ms(), cluster.partitions.len());
        if !self.lock().sample_topics_created {
            self.create_sample_topics().await?;
            self.lock().sample_topics_created = true;
        }
        Ok(())
    }

    async fn create_sample_topics(&self) -> Result<(), AdminError> {
        let topics: Vec<NewTopic> = self
            .settings
            .sample_topics
            .iter()
            .map(|topic| NewTopic {
                partitions: Some(topic.partitions),
                replication_factor: topic.replication_factor,
                configs: BTreeMap::from([("cleanup.policy".to_owned(), "delete".to_owned())]),
                ..NewTopic::new(topic.name.clone())
            })
            .collect();
        let results = self.admin.create_topics(&topics, false).await?;
        for (name, result) in results {
            match result {
                Ok(_) => tracing::info!(topic = name, "created sample store topic"),
                Err(error) if error.is(ResponseError::TopicAlreadyExists) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// Samples every `metric.sampling.interval.ms`, forever.
    pub async fn sample_forever(self: Arc<Self>) {
        loop {
            if let Err(error) = self.sample().await {
                tracing::warn!(%error, "sampling the cluster failed");
            }
            tokio::time::sleep(
                self.settings
                    .windows
                    .sampling_interval
                    .max(Duration::from_millis(100)),
            )
            .await;
        }
    }
}

/// Kafka's internal topics, which `list_topics` leaves out but Cruise Control moves too (a
/// broker being removed must end up without any replica); absent ones are skipped.
const INTERNAL_TOPICS: [&str; 3] = [
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

/// Describes the cluster through `admin`: every topic, internal ones included.
pub async fn describe(admin: &dyn KafkaAdmin) -> Result<Cluster, AdminError> {
    let description = admin.describe_cluster().await?;
    let brokers = description
        .brokers
        .iter()
        .map(|node| {
            (
                node.id,
                Broker {
                    rack: node.rack.clone(),
                    host: node.host.clone(),
                },
            )
        })
        .collect();
    let mut topics = admin.list_topics().await?;
    topics.extend(INTERNAL_TOPICS.iter().map(|name| (*name).to_owned()));
    let described = admin.describe_topics(&topics).await?;
    let mut partitions = Vec::new();
    let mut names = BTreeSet::new();
    for (name, result) in described {
        // A topic deleted meanwhile is simply left out.
        let Ok(topic) = result else { continue };
        names.insert(name);
        partitions.extend(topic.partitions.iter().map(|partition| Partition {
            topic: topic.name.clone(),
            partition: partition.partition,
            replicas: partition.replicas.clone(),
            leader: partition.leader,
            size_bytes: 0,
        }));
    }
    partitions.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    // Sizes from each broker's log directories; a broker that cannot tell leaves them 0.
    let mut sizes: BTreeMap<(String, i32), u64> = BTreeMap::new();
    for broker in description.brokers.iter().map(|node| node.id) {
        match admin.describe_replica_sizes(broker).await {
            Ok(replicas) => {
                for replica in replicas.into_iter().filter(|r| !r.future) {
                    let size = sizes.entry((replica.topic, replica.partition)).or_default();
                    *size = (*size).max(u64::try_from(replica.size_bytes).unwrap_or(0));
                }
            }
            Err(error) => tracing::debug!(broker, %error, "no replica sizes"),
        }
    }
    for partition in &mut partitions {
        if let Some(size) = sizes.get(&(partition.topic.clone(), partition.partition)) {
            partition.size_bytes = *size;
        }
    }
    Ok(Cluster {
        brokers,
        partitions,
    })
}
