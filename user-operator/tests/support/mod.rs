//! Shared helpers of the user operator's tests: the operator started in-process on the shared
//! test environment (real API server, real Kafka with SCRAM and mutual-TLS listeners and the
//! standard authorizer), the broker's own CA as the clients CA, KafkaUsers written as JSON,
//! what Kafka has for a user read back with the admin client, and rdkafka clients that
//! authenticate as a user.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use rdkafka::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};
use serde_json::{Value, json};
use strimzi_api::user::KafkaUser;
use strimzi_operator_common::kafka::{
    AclBinding, AclBindingFilter, AdminClient, AdminConfig, KafkaAdmin, NewTopic,
    QuotaFilterComponent, QuotaMatch,
};
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_tests::environment::TestEnv;
use strimzi_tests::resources::CustomResources;
use strimzi_user_operator::config::UserOperatorConfig;
use strimzi_user_operator::kafka::UserKafka;

pub use strimzi_tests::resources::{WAIT, eventually};

/// Name of the clients CA certificate Secret the tests create.
pub const CA_CERT: &str = "my-cluster-clients-ca-cert";
/// Name of the clients CA key Secret the tests create.
pub const CA_KEY: &str = "my-cluster-clients-ca";

pub fn env() -> &'static TestEnv {
    TestEnv::shared()
}

/// Bootstrap address of one of the shared broker's listeners (`plain`, `scram`, `tls`).
pub fn bootstrap(listener: &str) -> String {
    env().kafka().listener(listener).unwrap().bootstrap.clone()
}

/// A super-user admin client of the shared broker (PLAINTEXT is `User:ANONYMOUS`).
pub fn admin() -> AdminClient {
    AdminClient::new(AdminConfig::plaintext(&bootstrap("plain"))).unwrap()
}

/// A test's namespace, its client, and the prefix its Kafka user names start with.
pub struct Scope {
    pub client: Client,
    pub namespace: String,
}

impl Scope {
    /// A namespace of its own for one test, holding the clients CA Secrets (the broker's CA,
    /// so that the TLS listener accepts the certificates the operator issues).
    pub async fn new(prefix: &str) -> Self {
        let client = env().client().await;
        let namespace = env().namespace(prefix).await;
        let scope = Self { client, namespace };
        scope
            .create_secret(CA_CERT, &[("ca.crt", &env().kafka().ca_pem())])
            .await;
        scope
            .create_secret(CA_KEY, &[("ca.key", &env().kafka().ca_key_pem())])
            .await;
        scope
    }

    /// A KafkaUser name unique to this test (its namespace plus `suffix`).
    pub fn user(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.namespace)
    }

    /// The KafkaUsers of the namespace.
    pub fn users(&self) -> CustomResources {
        CustomResources::of::<KafkaUser>(&self.client, &self.namespace)
    }

    pub fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Creates or replaces the Secret `name` with `data`.
    pub async fn create_secret(&self, name: &str, data: &[(&str, &str)]) {
        let secret = Secret {
            metadata: kube::api::ObjectMeta {
                name: Some(name.to_owned()),
                ..Default::default()
            },
            data: Some(
                data.iter()
                    .map(|(key, value)| ((*key).to_owned(), ByteString(value.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        };
        let params = PatchParams::apply("user-operator-tests").force();
        self.secrets()
            .patch(name, &params, &Patch::Apply(&secret))
            .await
            .unwrap();
    }

    /// The Secret `name`, `None` when it does not exist.
    pub async fn secret(&self, name: &str) -> Option<Secret> {
        self.secrets().get_opt(name).await.unwrap()
    }

    /// The data key `key` of Secret `name` as text.
    pub async fn secret_text(&self, name: &str, key: &str) -> String {
        let secret = self.secret(name).await.expect("secret exists");
        String::from_utf8(secret.data.unwrap()[key].0.clone()).unwrap()
    }

    /// Creates the KafkaUser `name` with `spec`.
    pub async fn create_user(&self, name: &str, spec: Value) {
        self.users()
            .create(json!({
                "apiVersion": "kafka.strimzi.io/v1",
                "kind": "KafkaUser",
                "metadata": {"name": name, "labels": {"strimzi.io/cluster": "my-cluster"}},
                "spec": spec,
            }))
            .await;
    }

    /// Configuration watching this namespace, with only this test's users (names starting
    /// with the namespace) subject to the sweep, and `extra` variables.
    pub fn config(&self, extra: &[(&str, &str)]) -> UserOperatorConfig {
        let ignore = format!("^(?!(CN=)?{}-).*", regex_escape(&self.namespace));
        let mut variables: BTreeMap<String, String> = BTreeMap::from([
            ("STRIMZI_NAMESPACE".to_owned(), self.namespace.clone()),
            ("STRIMZI_CA_CERT_NAME".to_owned(), CA_CERT.to_owned()),
            ("STRIMZI_CA_KEY_NAME".to_owned(), CA_KEY.to_owned()),
            (
                "STRIMZI_KAFKA_BOOTSTRAP_SERVERS".to_owned(),
                bootstrap("plain"),
            ),
            ("STRIMZI_IGNORED_USERS_PATTERN".to_owned(), ignore),
            (
                "STRIMZI_FULL_RECONCILIATION_INTERVAL_MS".to_owned(),
                "120000".to_owned(),
            ),
            (
                "STRIMZI_CACHE_REFRESH_INTERVAL_MS".to_owned(),
                "2000".to_owned(),
            ),
        ]);
        for (key, value) in extra {
            variables.insert((*key).to_owned(), (*value).to_owned());
        }
        UserOperatorConfig::from_lookup(|name| variables.get(name).cloned()).unwrap()
    }
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escape = !c.is_ascii_alphanumeric();
            escape.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// A user operator running in this process.
pub struct Operator {
    pub runtime: OperatorRuntime,
    pub kafka: UserKafka,
    pub task: tokio::task::JoinHandle<()>,
}

impl Operator {
    /// Starts the operator with `config`.
    pub fn start(client: &Client, config: UserOperatorConfig) -> Self {
        let admin_config =
            strimzi_user_operator::connection::admin_config(&config.kafka, None, None)
                .unwrap()
                .0;
        let admin: Arc<dyn KafkaAdmin> = Arc::new(AdminClient::new(admin_config).unwrap());
        let runtime = OperatorRuntime::new(
            client.clone(),
            config.operator.clone(),
            "strimzi-user-operator",
        )
        .unwrap();
        let (kafka, controller) =
            strimzi_user_operator::controller(&runtime, Arc::new(config), admin).unwrap();
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

    /// Starts the operator on the test's namespace with `extra` variables.
    pub fn on(scope: &Scope, extra: &[(&str, &str)]) -> Self {
        Self::start(&scope.client, scope.config(extra))
    }

    /// Asks the operator to stop and waits until it has.
    pub async fn stop(self) {
        self.runtime.shutdown_token().cancel();
        self.task.await.unwrap();
    }
}

/// The ACL bindings Kafka has for the Kafka user `kafka_name`.
pub async fn acls(admin: &AdminClient, kafka_name: &str) -> BTreeSet<AclBinding> {
    admin
        .describe_acls(&AclBindingFilter::for_principal(format!(
            "User:{kafka_name}"
        )))
        .await
        .unwrap()
        .into_iter()
        .collect()
}

/// The quotas Kafka has for the Kafka user `kafka_name`.
pub async fn quotas(admin: &AdminClient, kafka_name: &str) -> BTreeMap<String, f64> {
    let component = QuotaFilterComponent {
        entity_type: "user".to_owned(),
        matching: QuotaMatch::Exact(kafka_name.to_owned()),
    };
    admin
        .describe_client_quotas(&[component], true)
        .await
        .unwrap()
        .into_iter()
        .flat_map(|(_, values)| values)
        .collect()
}

/// Whether Kafka has a SCRAM credential for `kafka_name`.
pub async fn has_scram(admin: &AdminClient, kafka_name: &str) -> bool {
    let described = admin
        .describe_user_scram_credentials(Some(&[kafka_name.to_owned()]))
        .await
        .unwrap();
    described
        .get(kafka_name)
        .is_some_and(|result| result.as_ref().is_ok_and(|infos| !infos.is_empty()))
}

/// Creates `topic` with one partition, as the super user.
pub async fn create_topic(admin: &AdminClient, topic: &str) {
    let mut new = NewTopic::new(topic);
    new.partitions = Some(1);
    new.replication_factor = Some(1);
    let results = admin.create_topics(&[new], false).await.unwrap();
    results[topic].as_ref().unwrap();
}

/// How a client proves who it is.
pub enum Identity {
    /// Mutual TLS with a certificate and key (PEM).
    Certificate { cert: String, key: String },
    /// SCRAM-SHA-512.
    Scram { user: String, password: String },
}

/// Produces one record to `topic` as `identity`; Kafka's error message when refused.
pub async fn produce(identity: &Identity, topic: &str) -> Result<(), String> {
    let mut config = ClientConfig::new();
    config
        .set("message.timeout.ms", "15000")
        .set("socket.timeout.ms", "10000");
    match identity {
        Identity::Certificate { cert, key } => {
            config
                .set("bootstrap.servers", bootstrap("tls"))
                .set("security.protocol", "ssl")
                .set("ssl.ca.pem", env().kafka().ca_pem())
                .set("ssl.certificate.pem", cert)
                .set("ssl.key.pem", key)
                .set("ssl.endpoint.identification.algorithm", "none");
        }
        Identity::Scram { user, password } => {
            config
                .set("bootstrap.servers", bootstrap("scram"))
                .set("security.protocol", "sasl_plaintext")
                .set("sasl.mechanism", "SCRAM-SHA-512")
                .set("sasl.username", user)
                .set("sasl.password", password);
        }
    }
    let producer: FutureProducer = config.create().map_err(|error| error.to_string())?;
    producer
        .send(
            FutureRecord::<(), str>::to(topic).payload("hello"),
            Duration::from_secs(15),
        )
        .await
        .map(drop)
        .map_err(|(error, _)| error.to_string())
}

/// Waits until producing to `topic` as `identity` succeeds (credentials and ACLs reach the
/// broker's caches shortly after they are written).
pub async fn wait_produce(identity: &Identity, topic: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let Err(last) = produce(identity, topic).await else {
            return;
        };
        assert!(
            std::time::Instant::now() < deadline,
            "producing to {topic} kept failing: {last}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Creates a Secret in `namespace` through `client` (for chosen SCRAM passwords).
pub async fn post_secret(client: &Client, namespace: &str, secret: &Secret) {
    Api::<Secret>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), secret)
        .await
        .unwrap();
}
