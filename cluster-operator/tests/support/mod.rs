//! Shared helpers of the cluster operator's tests: the operator started in-process on the
//! shared test environment (real API server, kwok nodes that make pods Ready), resources
//! written as YAML or JSON, and waiting for what the operator does.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

pub mod fast_start;
pub mod plugin;
pub mod real_nodes;
pub mod rolls;
pub mod strimzi_recorded;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::NamespaceResourceScope;
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_cluster_operator::config::ClusterOperatorConfig;
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_tests::environment::TestEnv;
pub use strimzi_tests::health::Health;
use strimzi_tests::resources::eventually_ok;

/// How long tests wait for the operator to act: generous, as tests run clusters side by
/// side and issuing their RSA certificates in a debug build takes a while.
pub const WAIT: Duration = Duration::from_secs(600);

pub fn env() -> &'static TestEnv {
    TestEnv::shared()
}

/// A client and a namespace of its own for one test.
pub async fn namespace(prefix: &str) -> (Client, String) {
    (env().client().await, env().namespace(prefix).await)
}

/// Cluster operator configuration watching `namespace`, with `extra` variables.
pub fn config_for(namespace: &str, extra: &[(&str, &str)]) -> ClusterOperatorConfig {
    let mut variables: BTreeMap<String, String> = BTreeMap::from([
        ("STRIMZI_NAMESPACE".to_owned(), namespace.to_owned()),
        (
            "STRIMZI_FULL_RECONCILIATION_INTERVAL_MS".to_owned(),
            "120000".to_owned(),
        ),
        // The operator runs outside the nodes' network: the cluster's names must not reach
        // the machine's resolver.
        (
            "STRIMZI_KAFKA_HOST_RESOLUTION".to_owned(),
            "ip-addresses-only".to_owned(),
        ),
    ]);
    for (key, value) in extra {
        variables.insert((*key).to_owned(), (*value).to_owned());
    }
    ClusterOperatorConfig::from_lookup(|name| variables.get(name).cloned()).unwrap()
}

/// A cluster operator running in this process, on a Tokio runtime of its own whose threads
/// have the stack the binary gives them (see `main.rs`).
pub struct Operator {
    pub runtime: OperatorRuntime,
    pub task: Option<tokio::task::JoinHandle<()>>,
    tokio: Option<tokio::runtime::Runtime>,
}

impl Operator {
    fn start(
        config: ClusterOperatorConfig,
        controllers: impl FnOnce(
            &OperatorRuntime,
            &ClusterOperatorConfig,
        ) -> Vec<futures::future::BoxFuture<'static, ()>>,
    ) -> Self {
        log_to_file();
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_stack_size(strimzi_cluster_operator::THREAD_STACK_SIZE)
            .enable_all()
            .build()
            .unwrap();
        // A client of its own, whose connections live on this runtime.
        let client = std::thread::scope(|scope| {
            scope
                .spawn(|| tokio.block_on(env().client()))
                .join()
                .unwrap()
        });
        let _entered = tokio.enter();
        let runtime = OperatorRuntime::new(
            client,
            config.operator.clone(),
            strimzi_cluster_operator::config::OPERATOR_NAMES,
        )
        .unwrap();
        let controllers = controllers(&runtime, &config);
        let running = runtime.clone();
        let task = tokio.spawn(async move {
            let ran = running.run(controllers).await;
            ran.expect("the operator stopped cleanly");
        });
        Self {
            runtime,
            task: Some(task),
            tokio: Some(tokio),
        }
    }

    /// Starts the Kafka and StrimziPodSet controllers on `namespace`.
    pub fn on(namespace: &str) -> Self {
        Self::on_with(namespace, &[])
    }

    /// Starts the Kafka and StrimziPodSet controllers on `namespace`, configured with the
    /// `extra` variables too.
    pub fn on_with(namespace: &str, extra: &[(&str, &str)]) -> Self {
        Self::with_config(config_for(namespace, extra))
    }

    /// Starts every controller with `config` (from [`config_for`], then changed).
    pub fn with_config(config: ClusterOperatorConfig) -> Self {
        Self::start(config, |runtime, config| {
            strimzi_cluster_operator::controllers(runtime, config).unwrap()
        })
    }

    /// Starts only the StrimziPodSet controller on `namespace`.
    pub fn pod_sets_only(namespace: &str) -> Self {
        Self::start(config_for(namespace, &[]), |runtime, config| {
            vec![
                strimzi_cluster_operator::pod_set::PodSetReconciler::controller(
                    runtime,
                    config.concurrency,
                )
                .unwrap(),
            ]
        })
    }

    /// API writes counted so far for `kind` and `verb`.
    pub fn writes(&self, kind: &str, verb: &str) -> u64 {
        self.runtime.metrics().writes(kind, verb)
    }

    /// Asks the operator to stop and waits until it has.
    pub async fn stop(mut self) {
        self.runtime.shutdown_token().cancel();
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        self.runtime.shutdown_token().cancel();
        if let Some(tokio) = self.tokio.take() {
            tokio.shutdown_background();
        }
    }
}

/// Sends the operator's logs of this test binary to `cluster-operator-<pid>.log` in the
/// environment's log folder.
fn log_to_file() {
    use tracing_subscriber::fmt::format::FmtSpan;
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        let path = env()
            .log_dir()
            .join(format!("cluster-operator-{}.log", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        let _ = tracing_subscriber::fmt()
            .with_env_filter("info,strimzi=debug,kube=warn")
            // Each reconciliation and step, when it starts and ends, with its busy time.
            .with_span_events(FmtSpan::NEW | FmtSpan::CLOSE)
            .with_writer(std::sync::Mutex::new(file))
            .with_ansi(false)
            .try_init();
        println!("operator logs: {}", path.display());
    });
}

/// Server-side applies a document (YAML or JSON value) in `namespace`.
pub async fn apply(client: &Client, namespace: &str, document: &Value) {
    apply_as(client, namespace, document, "test").await;
}

/// Merge-patches the `K` named `name` in `namespace` with `patch`, as `kubectl patch --type
/// merge` does (and `kubectl annotate` for an annotation).
pub async fn merge_patch<K>(client: &Client, namespace: &str, name: &str, patch: Value)
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    K::DynamicType: Default,
{
    Api::<K>::namespaced(client.clone(), namespace)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|error| panic!("patching {name} with {patch}: {error}"));
}

/// Server-side applies a document as `field_manager`, taking over conflicting fields (as
/// `kubectl apply --server-side --force-conflicts` does): namespaced kinds in `namespace`,
/// the cluster-scoped kinds of the install bundles and admission policies cluster-wide.
/// A request that never got an answer (the connection failed, as under a loaded API server)
/// is sent again, up to [`APPLY_ATTEMPTS`] times in all, as an apply is idempotent; an answer
/// of the API server, an error status included, is final.
pub async fn apply_as(client: &Client, namespace: &str, document: &Value, field_manager: &str) {
    let (object, api) = dynamic(client, namespace, document);
    let name = object.metadata.name.clone().unwrap();
    let mut attempt = 1;
    loop {
        let applied = api
            .patch(
                &name,
                &PatchParams::apply(field_manager).force(),
                &Patch::Apply(&object),
            )
            .await;
        match applied {
            Ok(_) => return,
            Err(error) if attempt < APPLY_ATTEMPTS && !matches!(error, kube::Error::Api(_)) => {
                eprintln!(
                    "applying {} {name}, attempt {attempt}: {error}; sending it again",
                    kind_of(&object)
                );
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(error) => panic!("applying {} {name}: {error}", kind_of(&object)),
        }
    }
}

/// How often [`apply_as`] sends a request that got no answer.
const APPLY_ATTEMPTS: u32 = 5;

/// `document` as a dynamic object, and the API of its kind: cluster-wide for the
/// cluster-scoped kinds of the install bundles and admission policies, else in `namespace`.
pub fn dynamic(
    client: &Client,
    namespace: &str,
    document: &Value,
) -> (DynamicObject, Api<DynamicObject>) {
    let object: DynamicObject = serde_json::from_value(document.clone()).unwrap();
    let types = object.types.clone().unwrap();
    let (group, version) = types
        .api_version
        .split_once('/')
        .unwrap_or(("", types.api_version.as_str()));
    let gvk = kube::api::GroupVersionKind::gvk(group, version, &types.kind);
    let resource = ApiResource::from_gvk(&gvk);
    let cluster_scoped = matches!(
        types.kind.as_str(),
        "ClusterRole"
            | "ClusterRoleBinding"
            | "CustomResourceDefinition"
            | "Namespace"
            | "ValidatingAdmissionPolicy"
            | "ValidatingAdmissionPolicyBinding"
    );
    let api = if cluster_scoped {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), namespace, &resource)
    };
    (object, api)
}

/// The kind of a dynamic object.
pub fn kind_of(object: &DynamicObject) -> &str {
    object
        .types
        .as_ref()
        .map_or("object", |types| types.kind.as_str())
}

/// Every document of a YAML file.
pub fn documents(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|document| <Value as serde::Deserialize>::deserialize(document).unwrap())
        .filter(|value| !value.is_null())
        .collect()
}

/// Waits until `check` returns `Some` for the object `name` (or for its absence, `None`
/// given), up to [`WAIT`]; panics with the last object seen otherwise.
pub async fn wait_for<K, T>(
    api: &Api<K>,
    name: &str,
    what: &str,
    check: impl Fn(Option<&K>) -> Option<T>,
) -> T
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + Debug + DeserializeOwned,
{
    wait_for_within(api, name, what, WAIT, check).await
}

/// [`wait_for`], up to `timeout`.
pub async fn wait_for_within<K, T>(
    api: &Api<K>,
    name: &str,
    what: &str,
    timeout: Duration,
    check: impl Fn(Option<&K>) -> Option<T>,
) -> T
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + Debug + DeserializeOwned,
{
    eventually_ok(what, timeout, || async {
        let object = api.get_opt(name).await.unwrap();
        check(object.as_ref()).ok_or_else(|| {
            // What a failure shows: the object without its bulky field-ownership records.
            object.map(|mut object| {
                object.meta_mut().managed_fields = None;
                object
            })
        })
    })
    .await
}

/// Whether the ClusterRoleBinding `name` exists and is not being deleted.
pub async fn binding_exists(client: &Client, name: &str) -> bool {
    let api: Api<k8s_openapi::api::rbac::v1::ClusterRoleBinding> = Api::all(client.clone());
    api.get_opt(name)
        .await
        .unwrap()
        .is_some_and(|binding| binding.metadata.deletion_timestamp.is_none())
}

/// Waits until the ClusterRoleBinding `name` exists (`present`) or is gone, up to [`WAIT`].
pub async fn wait_binding(client: &Client, name: &str, present: bool) {
    eventually_ok(
        &format!("ClusterRoleBinding {name} present: {present}"),
        WAIT,
        || async {
            if binding_exists(client, name).await == present {
                Ok(())
            } else {
                Err(name.to_owned())
            }
        },
    )
    .await;
}

/// Waits for the init ClusterRoleBinding `binding` of a Connect, MirrorMaker 2 or Bridge and
/// checks that it grants `strimzi-kafka-client` to `service_account`.
pub async fn wait_client_binding(client: &Client, binding: &str, service_account: &str) {
    wait_binding(client, binding, true).await;
    let bound = Api::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>::all(client.clone())
        .get(binding)
        .await
        .unwrap();
    assert_eq!(bound.role_ref.name, "strimzi-kafka-client");
    assert_eq!(bound.subjects.unwrap()[0].name, service_account);
}

/// Gives `document` (a KafkaConnect, KafkaMirrorMaker2 or KafkaBridge named `name`) its
/// topology-label rack again, waits for its init ClusterRoleBinding `binding`, deletes the
/// resource and waits until the binding is gone (the cleanup of deleted resources' bindings).
pub async fn binding_goes_with_the_resource<K>(
    client: &Client,
    namespace: &str,
    document: &mut Value,
    name: &str,
    binding: &str,
) where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + DeserializeOwned,
{
    document["spec"]["rack"] = json!({"topologyKey": "topology.kubernetes.io/zone"});
    apply(client, namespace, document).await;
    wait_binding(client, binding, true).await;
    Api::<K>::namespaced(client.clone(), namespace)
        .delete(name, &kube::api::DeleteParams::default())
        .await
        .unwrap();
    wait_binding(client, binding, false).await;
}

/// Waits until the object `name` is gone, up to [`WAIT`] (`what` names it in the panic).
pub async fn wait_gone<K>(api: &Api<K>, name: &str, what: &str)
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + Debug + DeserializeOwned,
{
    wait_for(api, name, what, |object| object.is_none().then_some(())).await;
}

/// Builds the cluster, topic and user operator binaries, the kubectl plugin and the test
/// environment's programs ([`strimzi_tests::binaries::workspace_binaries`]); their folder.
pub fn build_operator_binaries() -> std::path::PathBuf {
    let dir = strimzi_tests::binaries::workspace_binaries();
    assert!(
        dir.join("strimzi-cluster-operator").exists(),
        "no strimzi-cluster-operator in {}",
        dir.display()
    );
    dir
}

/// Starts the cluster operator binary of `env` on `namespace` as a child process tied to
/// this one.
pub fn spawn_cluster_operator(
    env: &TestEnv,
    binaries: &std::path::Path,
    namespace: &str,
    port: u16,
    extra: &[(&str, &str)],
) -> strimzi_tests::process::ManagedProcess {
    use strimzi_tests::process::{Lifetime, ManagedProcess, ProcessSpec};
    // A log of its own per namespace, as several tests of one program start operators.
    let spec = ProcessSpec::new(
        &format!("cluster-operator-{namespace}"),
        binaries.join("strimzi-cluster-operator"),
        env.log_dir(),
    )
    .env("KUBECONFIG", env.control_plane().kubeconfig())
    .env("STRIMZI_NAMESPACE", namespace)
    .env("STRIMZI_HTTP_PORT", port.to_string())
    .env("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "30000");
    // With real nodes it runs inside their network, where the cluster's names resolve and
    // the brokers are reachable; otherwise those names must not reach the machine's
    // resolver.
    let spec = match env.network() {
        Some(network) => spec.launched_by(network.exec_prefix()),
        None => spec.env("STRIMZI_KAFKA_HOST_RESOLUTION", "ip-addresses-only"),
    };
    let spec = extra
        .iter()
        .fold(spec, |spec, (key, value)| spec.env(key, value));
    ManagedProcess::start(&spec, Lifetime::Tied).unwrap()
}

/// An operator of the entity operator, run as a host process by [`spawn_entity_operator`].
#[derive(Clone, Copy, Debug)]
pub enum EntityOperator {
    /// `strimzi-topic-operator`, for the cluster's KafkaTopics.
    Topic,
    /// `strimzi-user-operator`, for the cluster's KafkaUsers: their certificates signed with
    /// the cluster's clients CA, no ACLs through the Admin API (as Strimzi configures it for
    /// a Kafka without authorization).
    User,
}

/// Starts the binary of `operator` of `env` for the resources of `cluster` in `namespace`,
/// talking plaintext to Kafka at `bootstrap`, as a child process tied to this one; with real
/// nodes it runs inside their network, where the cluster's Service names resolve.
pub fn spawn_entity_operator(
    env: &TestEnv,
    binaries: &std::path::Path,
    operator: EntityOperator,
    namespace: &str,
    cluster: &str,
    bootstrap: &str,
) -> strimzi_tests::process::ManagedProcess {
    use strimzi_tests::process::{Lifetime, ManagedProcess, ProcessSpec};
    let selector = format!("strimzi.io/cluster={cluster}");
    let (binary, variables) = match operator {
        EntityOperator::Topic => (
            "topic-operator",
            vec![("STRIMZI_RESOURCE_LABELS", selector)],
        ),
        EntityOperator::User => (
            "user-operator",
            vec![
                ("STRIMZI_LABELS", selector),
                ("STRIMZI_CA_CERT_NAME", format!("{cluster}-clients-ca-cert")),
                ("STRIMZI_CA_KEY_NAME", format!("{cluster}-clients-ca")),
                ("STRIMZI_ACLS_ADMIN_API_SUPPORTED", "false".to_owned()),
            ],
        ),
    };
    let mut spec = ProcessSpec::new(
        binary,
        binaries.join(format!("strimzi-{binary}")),
        env.log_dir(),
    )
    .env("KUBECONFIG", env.control_plane().kubeconfig())
    .env("STRIMZI_NAMESPACE", namespace)
    .env("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", bootstrap)
    .env(
        "STRIMZI_HTTP_PORT",
        strimzi_tests::layout::free_port().unwrap().to_string(),
    );
    for (key, value) in variables {
        spec = spec.env(key, value);
    }
    if let Some(network) = env.network() {
        spec = spec.launched_by(network.exec_prefix());
    }
    ManagedProcess::start(&spec, Lifetime::Tied).unwrap()
}

/// A KafkaTopic `name` of `cluster` with `partitions` and `replicas`.
pub fn kafka_topic(name: &str, cluster: &str, partitions: i32, replicas: i32) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaTopic",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": cluster}},
        "spec": {"partitions": partitions, "replicas": replicas},
    })
}

/// A KafkaUser `name` of `cluster` with `spec`.
pub fn kafka_user(name: &str, cluster: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaUser",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": cluster}},
        "spec": spec,
    })
}

/// A cluster of `controllers` controllers and `brokers` brokers, ephemeral storage.
pub fn cluster(name: &str, controllers: i32, brokers: i32) -> Vec<Value> {
    vec![
        node_pool(name, "controller", controllers, &["controller"]),
        node_pool(name, "broker", brokers, &["broker"]),
        kafka(name, brokers),
    ]
}

/// [`cluster`] with its node pools named after the cluster (`<name>-controller`,
/// `<name>-broker`), so that many clusters fit in one namespace.
pub fn cluster_with_own_pool_names(name: &str, controllers: i32, brokers: i32) -> Vec<Value> {
    let mut documents = cluster(name, controllers, brokers);
    for document in &mut documents {
        if document["kind"] == "KafkaNodePool" {
            let pool = document["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            document["metadata"]["name"] = format!("{name}-{pool}").into();
        }
    }
    documents
}

/// The KafkaNodePool `pool` of Kafka `cluster`: `replicas` nodes of `roles`, ephemeral
/// storage.
pub fn node_pool(cluster: &str, pool: &str, replicas: i32, roles: &[&str]) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaNodePool",
        "metadata": {"name": pool, "labels": {"strimzi.io/cluster": cluster}},
        "spec": {"replicas": replicas, "roles": roles, "storage": {"type": "ephemeral"}},
    })
}

/// The Kafka `name` of node pools holding `brokers` brokers: plain and TLS listeners, topics
/// of up to three replicas and a `min.insync.replicas` that lets one broker restart.
pub fn kafka(name: &str, brokers: i32) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": name},
        "spec": {"kafka": {
            "listeners": [
                {"name": "plain", "port": 9092, "type": "internal", "tls": false},
                {"name": "tls", "port": 9093, "type": "internal", "tls": true},
            ],
            "config": {
                "default.replication.factor": brokers.min(3),
                "min.insync.replicas": (brokers - 1).clamp(1, 2),
            },
        }},
    })
}

/// Sets the force annotation `annotation` (`strimzi.io/force-renew` or
/// `strimzi.io/force-replace`) to `"true"` on the CA Secret `secret`, as a user does.
pub async fn force(client: &Client, ns: &str, secret: &str, annotation: &str) {
    Api::<k8s_openapi::api::core::v1::Secret>::namespaced(client.clone(), ns)
        .patch(
            secret,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {annotation: "true"}}})),
        )
        .await
        .unwrap();
}

/// The condition `kind` of the Kafka's status.
pub fn condition<'a>(kafka: &'a Kafka, kind: &str) -> Option<&'a strimzi_api::common::Condition> {
    condition_of(kafka.status.as_ref()?.conditions.as_ref(), kind)
}

/// The condition `kind` among a status's `conditions` (of any kind of resource).
pub fn condition_of<'a>(
    conditions: Option<&'a Vec<strimzi_api::common::Condition>>,
    kind: &str,
) -> Option<&'a strimzi_api::common::Condition> {
    conditions?
        .iter()
        .find(|condition| condition.r#type.as_deref() == Some(kind))
}

/// The first condition of the Kafka's status (of any type) with `reason`.
pub fn condition_with_reason<'a>(
    kafka: &'a Kafka,
    reason: &str,
) -> Option<&'a strimzi_api::common::Condition> {
    kafka
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|condition| condition.reason.as_deref() == Some(reason))
}

/// Waits until the Kafka `name` has a condition of type `type` with `reason` and returns the
/// condition's message.
async fn kafka_condition_with(
    client: &Client,
    ns: &str,
    name: &str,
    r#type: &str,
    reason: &str,
) -> String {
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    wait_for(
        &kafkas,
        name,
        &format!("Kafka {ns}/{name} to be {type} with {reason}"),
        |kafka| {
            let condition = condition(kafka?, r#type)?;
            (condition.reason.as_deref() == Some(reason))
                .then(|| condition.message.clone().unwrap_or_default())
        },
    )
    .await
}

/// Waits until the Kafka `name` is `NotReady` with `reason` and returns the condition's
/// message.
pub async fn not_ready_with(client: &Client, ns: &str, name: &str, reason: &str) -> String {
    kafka_condition_with(client, ns, name, "NotReady", reason).await
}

/// Waits until the Kafka `name` is `Reconciling` with `reason` (the operator works on it and
/// waits for what the message says) and returns the condition's message.
pub async fn reconciling_with(client: &Client, ns: &str, name: &str, reason: &str) -> String {
    kafka_condition_with(client, ns, name, "Reconciling", reason).await
}

/// The health tools that know Strimzi read from the status of `object`, a resource of
/// `kind` (see [`strimzi_tests::health`]).
pub fn health_of<K: serde::Serialize>(kind: &str, object: &K) -> Health {
    let document = serde_json::to_value(object).unwrap();
    strimzi_tests::health::health(kind, &document["status"])
}

/// A list the watch of a [`HealthLog`] appends to and the test reads.
type Shared<T> = std::sync::Arc<std::sync::Mutex<Vec<T>>>;

/// The health of a resource at each change of its status seen by a watch, from its start
/// until [`HealthLog::stop`], each with the status's conditions (`type/reason` ...) to show
/// what was read. The watch runs on a thread and runtime of its own, untyped, so that it
/// takes nothing of the test's stack.
pub struct HealthLog {
    seen: Shared<(Health, String)>,
    /// Every status the watch delivered, the first listing's included.
    statuses: Shared<serde_json::Value>,
    /// The watched resource, read once more by [`HealthLog::stop`].
    api: Api<DynamicObject>,
    name: String,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl HealthLog {
    /// Watches the resource `name` of kind `K` (`kind`) in `ns`; the state when it starts is
    /// not recorded, only its changes.
    pub async fn start<K>(ns: &str, kind: &'static str, name: &str) -> Self
    where
        K: Resource<DynamicType = ()>,
    {
        let resource = ApiResource::erase::<K>(&());
        let api = Api::namespaced_with(env().client().await, ns, &resource);
        let (ns, name) = (ns.to_owned(), name.to_owned());
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let statuses = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = (seen.clone(), statuses.clone());
        let watched = name.clone();
        let (started, running) = tokio::sync::oneshot::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .stack_size(strimzi_cluster_operator::THREAD_STACK_SIZE)
            .spawn(move || {
                let tokio = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                tokio.block_on(async move {
                    let client = env().client().await;
                    let api: Api<DynamicObject> = Api::namespaced_with(client, &ns, &resource);
                    let config = kube::runtime::watcher::Config::default()
                        .fields(&format!("metadata.name={watched}"));
                    let watch = watch_health(api, config, kind, log, started);
                    tokio::select! {
                        () = watch => {}
                        _ = stopped => {}
                    }
                });
            })
            .unwrap();
        running.await.unwrap();
        Self {
            seen,
            statuses,
            api,
            name,
            stop,
            thread,
        }
    }

    /// Waits until the watch has recorded the operator's progress (a status with a
    /// `Reconciling` condition) since it started. A test that checks a status with a GET can
    /// find the one of before still matching (a roll that waits, then another roll that
    /// waits for the same reason) and stop the watch before the operator has written anything
    /// for the change it is testing.
    pub async fn wait_for_progress(&self, phase: &str) {
        eventually_ok(
            &format!("{phase}: progress in the watched status"),
            WAIT,
            || async {
                let seen = self.seen.lock().unwrap().clone();
                if seen
                    .iter()
                    .any(|(_, conditions)| conditions.contains("Reconciling/"))
                {
                    Ok(())
                } else {
                    Err(seen)
                }
            },
        )
        .await;
    }

    /// Stops watching once the watch has delivered the status the resource has now (a test
    /// that has just read a status with a GET would otherwise stop a watch that lags behind
    /// it); what was seen, in order.
    pub async fn stop(self) -> Vec<(Health, String)> {
        let current = self.api.get(&self.name).await.unwrap().data["status"].clone();
        let caught_up = eventually_ok(
            "the health watch to catch up",
            std::time::Duration::from_secs(30),
            || async {
                if self.statuses.lock().unwrap().contains(&current) {
                    Ok(())
                } else {
                    Err(current.clone())
                }
            },
        );
        caught_up.await;
        let _ = self.stop.send(());
        self.thread.join().unwrap();
        self.seen.lock().unwrap().clone()
    }
}

/// Records into `log` the health of the object `api` and `config` watch (of `kind`) at each
/// change of its status after the first listing, which `started` is told about.
async fn watch_health(
    api: Api<DynamicObject>,
    config: kube::runtime::watcher::Config,
    kind: &str,
    (log, statuses): (Shared<(Health, String)>, Shared<serde_json::Value>),
    started: tokio::sync::oneshot::Sender<()>,
) {
    use futures::StreamExt;
    use kube::runtime::watcher::{Event, watcher};
    let mut events = std::pin::pin!(watcher(api, config));
    let mut started = Some(started);
    // The status last seen: changes of anything else (a user's annotation) are not recorded.
    let mut last = serde_json::Value::Null;
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::InitApply(object)) => {
                last = object.data["status"].clone();
                statuses.lock().unwrap().push(last.clone());
            }
            Ok(Event::InitDone) => {
                if let Some(started) = started.take() {
                    let _ = started.send(());
                }
            }
            Ok(Event::Apply(object)) if object.data["status"] != last => {
                last = object.data["status"].clone();
                statuses.lock().unwrap().push(last.clone());
                let status = &last;
                let conditions: Vec<String> = status["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|condition| {
                        format!(
                            "{}/{}",
                            condition["type"].as_str().unwrap_or_default(),
                            condition["reason"].as_str().unwrap_or_default()
                        )
                    })
                    .collect();
                let health = strimzi_tests::health::health(kind, status);
                log.lock().unwrap().push((health, conditions.join(" ")));
            }
            _ => {}
        }
    }
}

/// Asserts that `seen` (from a [`HealthLog`] over `phase`) never shows `Degraded`: the
/// operator works as intended, and Strimzi's status would not say otherwise.
pub fn assert_never_degraded(phase: &str, seen: &[(Health, String)]) {
    assert!(
        seen.iter().all(|(health, _)| *health != Health::Degraded),
        "{phase}: Degraded: {seen:?}"
    );
}

/// Asserts that `seen` (from a [`HealthLog`] over `phase`) showed the operator's progress in
/// a `Reconciling` condition at least once.
pub fn assert_progress_shown(phase: &str, seen: &[(Health, String)]) {
    assert!(
        seen.iter()
            .any(|(_, conditions)| conditions.contains("Reconciling/")),
        "{phase}: no progress shown: {seen:?}"
    );
}

/// Waits until the Kafka is Ready for its current generation, with nothing left to do.
pub async fn ready(client: &Client, ns: &str, name: &str) -> Kafka {
    ready_within(client, ns, name, WAIT).await
}

/// [`ready`], up to `timeout`.
pub async fn ready_within(client: &Client, ns: &str, name: &str, timeout: Duration) -> Kafka {
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    wait_for_within(
        &kafkas,
        name,
        &format!("Kafka {ns}/{name} to be Ready"),
        timeout,
        |kafka| kafka.filter(|kafka| is_ready(kafka)).cloned(),
    )
    .await
}

/// Whether `kafka` is Ready and done reconciling its latest spec.
pub fn is_ready(kafka: &Kafka) -> bool {
    kafka.status.as_ref().is_some_and(|status| {
        condition(kafka, "Ready").is_some()
            && condition(kafka, "Reconciling").is_none()
            && status.observed_generation == kafka.metadata.generation
    })
}

/// The names of the objects of kind `K` in `ns` matching `selector` and not being deleted,
/// sorted.
pub async fn names<K>(client: &Client, ns: &str, selector: &str) -> Vec<String>
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned,
{
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let mut names: Vec<String> = api
        .list(&ListParams::default().labels(selector))
        .await
        .unwrap()
        .items
        .iter()
        .filter(|object| object.meta().deletion_timestamp.is_none())
        .map(ResourceExt::name_any)
        .collect();
    names.sort();
    names
}
