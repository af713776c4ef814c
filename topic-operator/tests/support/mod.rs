//! Shared helpers of the topic operator's tests: the operator started in-process on the
//! shared test environment (real API server, real Kafka), KafkaTopics written as JSON,
//! waiting for conditions, and reading topics back from Kafka with the admin client.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};
use strimzi_api::topic::KafkaTopic;
use strimzi_operator_common::kafka::{AdminClient, AdminConfig, ConfigResource, KafkaAdmin};
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_tests::environment::TestEnv;
use strimzi_tests::resources::CustomResources;
use strimzi_topic_operator::config::TopicOperatorConfig;
use strimzi_topic_operator::kafka::TopicKafka;

/// How long tests wait for the operator to act, and how they wait.
pub use strimzi_tests::resources::{WAIT, eventually};

pub fn env() -> &'static TestEnv {
    TestEnv::shared()
}

/// Bootstrap address of the shared broker's PLAINTEXT listener.
pub fn bootstrap() -> String {
    env().kafka().listener("plain").unwrap().bootstrap.clone()
}

/// An admin client of the shared broker, to check what the operator did.
pub fn admin() -> AdminClient {
    AdminClient::new(AdminConfig::plaintext(&bootstrap())).unwrap()
}

/// A client and a namespace of its own for one test.
pub async fn namespace(prefix: &str) -> (Client, String) {
    (env().client().await, env().namespace(prefix).await)
}

/// Topic operator configuration watching `namespace`, Kafka at `bootstrap`, with `extra`.
pub fn config_for(namespace: &str, bootstrap: &str, extra: &[(&str, &str)]) -> TopicOperatorConfig {
    let mut variables: BTreeMap<String, String> = BTreeMap::from([
        ("STRIMZI_NAMESPACE".to_owned(), namespace.to_owned()),
        (
            "STRIMZI_KAFKA_BOOTSTRAP_SERVERS".to_owned(),
            bootstrap.to_owned(),
        ),
        (
            "STRIMZI_FULL_RECONCILIATION_INTERVAL_MS".to_owned(),
            "120000".to_owned(),
        ),
    ]);
    for (key, value) in extra {
        variables.insert((*key).to_owned(), (*value).to_owned());
    }
    TopicOperatorConfig::from_lookup(|name| variables.get(name).cloned()).unwrap()
}

/// A topic operator running in this process.
pub struct Operator {
    pub runtime: OperatorRuntime,
    pub kafka: TopicKafka,
    pub task: tokio::task::JoinHandle<()>,
}

impl Operator {
    /// Starts the operator with `config`.
    pub fn start(client: &Client, config: TopicOperatorConfig) -> Self {
        let admin: Arc<dyn KafkaAdmin> = Arc::new(AdminClient::new(config.kafka.clone()).unwrap());
        let runtime = OperatorRuntime::new(
            client.clone(),
            config.operator.clone(),
            "strimzi-topic-operator",
        )
        .unwrap();
        let (kafka, controller) =
            strimzi_topic_operator::controller(&runtime, &config, admin).unwrap();
        let running = runtime.clone();
        let task = tokio::spawn(async move {
            let ran = running.run(vec![controller]).await;
            ran.expect("the operator stopped cleanly");
        });
        Self {
            runtime,
            kafka,
            task,
        }
    }

    /// Starts the operator on `namespace` and the shared broker, with `extra` variables.
    pub fn on(client: &Client, namespace: &str, extra: &[(&str, &str)]) -> Self {
        Self::start(client, config_for(namespace, &bootstrap(), extra))
    }

    /// Asks the operator to stop and waits until it has.
    pub async fn stop(self) {
        self.runtime.shutdown_token().cancel();
        self.task.await.unwrap();
    }
}

/// The KafkaTopics of `namespace`.
pub fn topics(client: &Client, namespace: &str) -> CustomResources {
    CustomResources::of::<KafkaTopic>(client, namespace)
}

/// A KafkaTopic document named `name` with `spec`.
pub fn kafka_topic(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaTopic",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": "my-cluster"}},
        "spec": spec,
    })
}

/// Partition count of `topic` in Kafka, `None` when it does not exist.
pub async fn partitions(admin: &AdminClient, topic: &str) -> Option<usize> {
    let described = admin.describe_topics(&[topic.to_owned()]).await.unwrap();
    described[topic]
        .as_ref()
        .ok()
        .map(|topic| topic.partitions.len())
}

/// Waits until `topic` has `expected` partitions in Kafka (the broker's metadata can lag
/// briefly behind the controller's after a change).
pub async fn wait_partitions(admin: &AdminClient, topic: &str, expected: usize) {
    eventually(
        &format!("{topic} with {expected} partitions"),
        WAIT,
        || async { partitions(admin, topic).await == Some(expected) },
    )
    .await;
}

/// Partition count of `topic` as rdkafka (an independent client) sees it, `None` when the
/// broker does not know the topic.
pub async fn rdkafka_partitions(topic: &str) -> Option<usize> {
    use rdkafka::producer::Producer;
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let producer: rdkafka::producer::BaseProducer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", bootstrap())
            .set("allow.auto.create.topics", "false")
            .create()
            .unwrap();
        let metadata = producer
            .client()
            .fetch_metadata(Some(&topic), Duration::from_secs(10))
            .unwrap();
        let found = metadata.topics().first()?;
        found.error().is_none().then(|| found.partitions().len())
    })
    .await
    .unwrap()
}

/// The dynamic (per-topic) config overrides of `topic` in Kafka.
pub async fn overrides(admin: &AdminClient, topic: &str) -> BTreeMap<String, String> {
    configs_from(
        admin,
        ConfigResource::topic(topic),
        strimzi_operator_common::kafka::ConfigSource::DynamicTopic,
    )
    .await
}

/// The configs of `resource` in Kafka that come from `source`.
pub async fn configs_from(
    admin: &AdminClient,
    resource: ConfigResource,
    source: strimzi_operator_common::kafka::ConfigSource,
) -> BTreeMap<String, String> {
    let configs = admin
        .describe_configs(std::slice::from_ref(&resource))
        .await
        .unwrap();
    configs[&resource]
        .as_ref()
        .unwrap()
        .iter()
        .filter(|entry| entry.source == source)
        .map(|entry| (entry.name.clone(), entry.value.clone().unwrap_or_default()))
        .collect()
}

/// A local cluster of three Kafka nodes, its logs in `target/testenv-logs/<name>-<pid>`.
pub async fn kafka_cluster(name: &str) -> strimzi_tests::kafka::KafkaCluster {
    let logs = strimzi_tests::layout::log_dir(name).unwrap();
    tokio::task::spawn_blocking(move || strimzi_tests::kafka::KafkaCluster::start(3, &logs))
        .await
        .unwrap()
        .unwrap_or_else(|error| panic!("starting the Kafka cluster: {error}"))
}

/// Asserts that `topic` has no throttled-replicas override and the brokers 1 to 3 no
/// throttle rate.
pub async fn assert_unthrottled(admin: &AdminClient, topic: &str) {
    let no_config_ending = |configs: BTreeMap<String, String>, suffix: &str| {
        assert!(
            !configs.keys().any(|name| name.ends_with(suffix)),
            "{configs:?}"
        );
    };
    no_config_ending(
        overrides(admin, topic).await,
        ".replication.throttled.replicas",
    );
    for broker in 1..=3 {
        let configs = configs_from(
            admin,
            ConfigResource::broker(broker),
            strimzi_operator_common::kafka::ConfigSource::DynamicBroker,
        )
        .await;
        no_config_ending(configs, ".replication.throttled.rate");
    }
}
