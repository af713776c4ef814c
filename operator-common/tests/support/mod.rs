//! A small test controller on the real `KafkaTopic` CRD: for each topic it applies a
//! ConfigMap `<topic>-topic` (Strimzi labels, owner reference, the partition count) and
//! reports the topic name in the status; a finalizer makes it delete the ConfigMap itself
//! when the topic is deleted. It records every reconciliation so that tests can
//! check ordering, concurrency and leadership.
//!
//! Its resource type, [`TestTopic`], reads `spec.partitions` as a `u16` while the CRD allows
//! any positive `int32`, so a topic with 70000 partitions is accepted by the API server but
//! does not deserialize: the fault a real broken resource causes.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client, CustomResource, ResourceExt};
use serde::{Deserialize, Serialize};
use serde_json::json;
use strimzi_api::topic::KafkaTopicStatus;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::config::OperatorConfig;
use strimzi_operator_common::controller::{ControllerBuilder, Reconciled, Reconciler};
use strimzi_operator_common::labels::{ComponentLabels, owner_reference};
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_operator_common::sync::{Listed, ObjectSync};

/// The test controller's view of a KafkaTopic.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    kind = "KafkaTopic",
    root = "TestTopic",
    namespaced,
    status = "KafkaTopicStatus",
    schema = "disabled"
)]
pub struct TestTopicSpec {
    pub partitions: Option<u16>,
    pub config: Option<BTreeMap<String, serde_json::Value>>,
}

/// Label selecting the ConfigMaps of the test controller.
pub const CHILD_SELECTOR: &str = "strimzi.io/kind=KafkaTopic";
/// The test controller's finalizer.
pub const FINALIZER: &str = "strimzi.io/test-operator";
/// `spec.config` key that makes reconciliation fail.
pub const FAIL: &str = "test.fail";

/// A reconciliation failure asked for by the topic.
#[derive(Debug, thiserror::Error)]
pub enum TestError {
    #[error("asked to fail by {FAIL}")]
    Asked,
    #[error(transparent)]
    Apply(#[from] strimzi_operator_common::apply::ApplyError),
}

impl ErrorReason for TestError {
    fn reason(&self) -> &'static str {
        match self {
            Self::Asked => "TestFailure",
            Self::Apply(error) => error.reason(),
        }
    }
}

/// What the test controller saw.
#[derive(Debug, Default)]
pub struct Journal {
    /// (topic name, start time) of every reconciliation.
    pub started: Vec<(String, Instant)>,
    /// Topics being reconciled now.
    pub in_flight: HashSet<String>,
    /// Largest number of topics reconciled at once.
    pub most_in_flight: usize,
    /// Reconciliations that started while the same topic was being reconciled.
    pub overlaps: usize,
    /// Topics cleaned up after their deletion.
    pub cleaned: Vec<String>,
}

pub struct TestReconciler {
    pub runtime: OperatorRuntime,
    pub journal: Arc<Mutex<Journal>>,
    /// Time each reconciliation takes before writing.
    pub work: Duration,
}

impl TestReconciler {
    pub fn count(&self, name: &str) -> usize {
        count(&self.journal, name)
    }
}

pub fn count(journal: &Mutex<Journal>, name: &str) -> usize {
    journal
        .lock()
        .unwrap()
        .started
        .iter()
        .filter(|(topic, _)| topic == name)
        .count()
}

impl Reconciler for TestReconciler {
    type Resource = TestTopic;
    type Status = KafkaTopicStatus;
    type Error = TestError;

    async fn reconcile(
        &self,
        topic: Arc<TestTopic>,
    ) -> Result<Reconciled<KafkaTopicStatus>, TestError> {
        let name = topic.name_any();
        {
            let mut journal = self.journal.lock().unwrap();
            journal.started.push((name.clone(), Instant::now()));
            if !journal.in_flight.insert(name.clone()) {
                journal.overlaps += 1;
            }
            journal.most_in_flight = journal.most_in_flight.max(journal.in_flight.len());
        }
        let result = self.reconcile_topic(&topic).await;
        self.journal.lock().unwrap().in_flight.remove(&name);
        result
    }

    fn finalizer(&self) -> Option<&'static str> {
        Some(FINALIZER)
    }

    async fn cleanup(&self, topic: Arc<TestTopic>) -> Result<(), TestError> {
        let selector = format!("{CHILD_SELECTOR},strimzi.io/name={}", topic.name_any());
        let namespace = topic.namespace().unwrap_or_default();
        let children: Listed<ConfigMap> =
            Listed::list(self.runtime.client(), [namespace.as_str()], &selector).await?;
        ObjectSync::new(self.runtime.applier())
            .prune(&children, [])
            .await?;
        self.journal.lock().unwrap().cleaned.push(topic.name_any());
        Ok(())
    }
}

impl TestReconciler {
    async fn reconcile_topic(
        &self,
        topic: &TestTopic,
    ) -> Result<Reconciled<KafkaTopicStatus>, TestError> {
        tokio::time::sleep(self.work).await;
        let config = topic.spec.config.clone().unwrap_or_default();
        if config.get(FAIL) == Some(&json!("true")) {
            return Err(TestError::Asked);
        }
        let name = topic.name_any();
        let component = ComponentLabels {
            kind: "KafkaTopic".into(),
            cluster: topic
                .labels()
                .get("strimzi.io/cluster")
                .cloned()
                .unwrap_or_default(),
            component_name: name.clone(),
            component_type: "topic".into(),
            managed_by: "test-operator".into(),
        };
        let child = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("{name}-topic")),
                namespace: topic.namespace(),
                labels: Some(
                    component.labels(topic.labels(), &self.runtime.config().labels_exclusion),
                ),
                owner_references: owner_reference(topic).map(|reference| vec![reference]),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([(
                "partitions".to_owned(),
                topic.spec.partitions.unwrap_or(1).to_string(),
            )])),
            ..ConfigMap::default()
        };
        self.runtime.applier().apply(&child, None).await?;
        let status = KafkaTopicStatus {
            topic_name: Some(name),
            ..KafkaTopicStatus::default()
        };
        let reconciled = Reconciled::new(status);
        Ok(if config.contains_key("test.warn") {
            reconciled.warn("TestWarning", "asked to warn")
        } else {
            reconciled
        })
    }
}

/// Configuration watching `namespace`, with `extra` variables.
pub fn config(namespace: &str, extra: &[(&str, &str)]) -> OperatorConfig {
    let mut variables: BTreeMap<String, String> =
        BTreeMap::from([("STRIMZI_NAMESPACE".to_owned(), namespace.to_owned())]);
    for (key, value) in extra {
        variables.insert((*key).to_owned(), (*value).to_owned());
    }
    OperatorConfig::from_lookup(|name| variables.get(name).cloned()).unwrap()
}

/// A running test controller.
pub struct Running {
    pub runtime: OperatorRuntime,
    pub journal: Arc<Mutex<Journal>>,
    pub task: tokio::task::JoinHandle<()>,
}

/// Starts the test controller with `config`, each reconciliation taking `work`.
pub fn start(client: Client, config: OperatorConfig, work: Duration) -> Running {
    let runtime = OperatorRuntime::new(client, config, "test-operator").unwrap();
    let journal = Arc::new(Mutex::new(Journal::default()));
    let reconciler = TestReconciler {
        runtime: runtime.clone(),
        journal: journal.clone(),
        work,
    };
    let controller = ControllerBuilder::new(&runtime, reconciler)
        .owns_metadata::<ConfigMap>(CHILD_SELECTOR)
        .build()
        .unwrap();
    let running = runtime.clone();
    let task = tokio::spawn(async move {
        let ran = running.run(vec![controller]).await;
        ran.expect("the operator stopped cleanly");
    });
    Running {
        runtime,
        journal,
        task,
    }
}

/// A KafkaTopic document.
pub fn topic(name: &str, spec: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaTopic",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": "my-cluster", "team": "a"}},
        "spec": spec,
    })
}

/// Creates a KafkaTopic from `document` in `namespace`.
pub async fn create(client: &Client, namespace: &str, document: serde_json::Value) {
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &kube::api::ApiResource::erase::<TestTopic>(&()),
    );
    let object: kube::api::DynamicObject = serde_json::from_value(document).unwrap();
    api.create(&PostParams::default(), &object).await.unwrap();
}

/// Waits up to `timeout` for `check` to hold, polling; panics with `what` otherwise.
pub async fn eventually<F, Fut>(timeout: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if check().await {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The condition of `type` of the topic, read from the API server as JSON.
pub async fn condition(
    client: &Client,
    namespace: &str,
    name: &str,
    r#type: &str,
) -> Option<serde_json::Value> {
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &kube::api::ApiResource::erase::<TestTopic>(&()),
    );
    let object = api.get_opt(name).await.unwrap()?;
    object.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|condition| condition["type"] == r#type)
        .cloned()
}

/// The topic's `status`, as JSON.
pub async fn status(client: &Client, namespace: &str, name: &str) -> serde_json::Value {
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &kube::api::ApiResource::erase::<TestTopic>(&()),
    );
    api.get(name).await.unwrap().data["status"].clone()
}

impl Running {
    /// Asks the controller to stop and waits until it has.
    pub async fn stop(self) {
        self.runtime.shutdown_token().cancel();
        self.task.await.unwrap();
    }
}

/// A client and a namespace of its own for one test.
pub async fn namespace(prefix: &str) -> (Client, String) {
    let env = strimzi_tests::environment::TestEnv::shared();
    (env.client().await, env.namespace(prefix).await)
}

/// Merges `patch` into the KafkaTopic `name`.
pub async fn patch(client: &Client, namespace: &str, name: &str, patch: serde_json::Value) {
    let topics: Api<TestTopic> = Api::namespaced(client.clone(), namespace);
    topics
        .patch(
            name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(patch),
        )
        .await
        .unwrap();
}

/// How long tests wait for the controller to act.
pub const WAIT: Duration = Duration::from_secs(30);

/// Starts the test controller on `namespace` with default settings.
pub fn start_default(client: &Client, namespace: &str, work: Duration) -> Running {
    start(client.clone(), config(namespace, &[]), work)
}

/// Waits until the topic has a condition of `type`.
pub async fn wait_for_condition(client: &Client, namespace: &str, name: &str, r#type: &str) {
    eventually(WAIT, &format!("{name} {type}"), || async {
        condition(client, namespace, name, r#type).await.is_some()
    })
    .await;
}

/// Waits until a reconciliation of `name` is in flight.
pub async fn wait_in_flight(running: &Running, name: &str) {
    eventually(WAIT, &format!("{name} being reconciled"), || async {
        running.journal.lock().unwrap().in_flight.contains(name)
    })
    .await;
}
