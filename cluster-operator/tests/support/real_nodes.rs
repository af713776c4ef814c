//! Helpers of the tests that run real Kafka pods on the real-node test environment.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use strimzi_api::kafka::Kafka;
use strimzi_tests::environment::TestEnv;

use super::fast_start::{fast_start_jvm, heap_only_jvm, kafka_node_readiness_probe};

/// How long real pods may take: JVMs starting on two cores.
pub const POD_WAIT: Duration = Duration::from_secs(600);

/// The operator binaries, built once per test binary.
pub fn binaries() -> &'static Path {
    static BINARIES: OnceLock<PathBuf> = OnceLock::new();
    BINARIES.get_or_init(super::build_operator_binaries)
}

/// The bootstrap address the Kafka's status gives for `listener`.
pub fn bootstrap(kafka: &Kafka, listener: &str) -> String {
    kafka
        .status
        .as_ref()
        .and_then(|status| status.listeners.as_ref())
        .and_then(|listeners| {
            listeners
                .iter()
                .find(|found| found.name.as_deref() == Some(listener))
        })
        .and_then(|found| found.bootstrap_servers.clone())
        .unwrap_or_else(|| panic!("no {listener} listener in the status of {kafka:#?}"))
}

/// How a test cluster's JVMs and readiness probes are set.
#[derive(Clone, Copy, Debug)]
pub enum Startup {
    /// The settings of [`super::fast_start`]: JVM flags for a fast start and readiness probes
    /// that look more often, for tests that are not about Strimzi's defaults.
    Fast,
    /// Strimzi's JVM flags and probes, for tests about what runs with Strimzi's defaults.
    StrimziDefaults,
}

/// Sets, as `startup` says, the JVM options of a KafkaNodePool `document` (a heap from
/// 256 MiB up to `max_heap`) or the nodes' readiness probe of a Kafka `document`.
fn set_startup(document: &mut serde_json::Value, startup: Startup, max_heap: &str) {
    match (document["kind"].as_str(), startup) {
        (Some("KafkaNodePool"), Startup::Fast) => {
            document["spec"]["jvmOptions"] = fast_start_jvm("256m", max_heap);
        }
        (Some("KafkaNodePool"), Startup::StrimziDefaults) => {
            document["spec"]["jvmOptions"] = heap_only_jvm("256m", max_heap);
        }
        (Some("Kafka"), Startup::Fast) => {
            document["spec"]["kafka"]["readinessProbe"] = kafka_node_readiness_probe();
        }
        _ => {}
    }
}

/// [`super::cluster`] for real nodes: every pool on a persistent volume (deleted with its
/// pod, holding the KRaft metadata too) with a 256–512 MiB heap, its other JVM flags and
/// the nodes' readiness probe as `startup` says; `config` added to the Kafka's
/// `spec.kafka.config`; with `mutual_tls`, a listener `mtls` on 9094 that asks clients for a
/// certificate of the clients CA.
pub fn persistent_cluster(
    name: &str,
    (controllers, brokers): (i32, i32),
    config: &serde_json::Value,
    mutual_tls: bool,
    startup: Startup,
) -> Vec<serde_json::Value> {
    use serde_json::json;
    let mut documents = super::cluster(name, controllers, brokers);
    for document in &mut documents {
        set_startup(document, startup, "512m");
        match document["kind"].as_str() {
            Some("KafkaNodePool") => {
                document["spec"]["storage"] = json!({"type": "jbod", "volumes": [
                    {"id": 0, "type": "persistent-claim", "size": "1Gi", "deleteClaim": true, "kraftMetadata": "shared"},
                ]});
            }
            Some("Kafka") => {
                let kafka = &mut document["spec"]["kafka"];
                for (key, value) in config.as_object().into_iter().flatten() {
                    kafka["config"][key] = value.clone();
                }
                if mutual_tls {
                    add_mutual_tls_listener(document);
                }
            }
            _ => {}
        }
    }
    documents
}

/// Adds to the Kafka `document` a listener `mtls` on 9094 that asks clients for a
/// certificate of the clients CA.
pub fn add_mutual_tls_listener(document: &mut serde_json::Value) {
    document["spec"]["kafka"]["listeners"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "name": "mtls", "port": 9094, "type": "internal", "tls": true,
            "authentication": {"type": "tls"},
        }));
}

/// The Kafka `name` of one node, both controller and broker (pool `<name>-dual`, one JVM
/// rather than two), for a component's real-node test: ephemeral storage, a heap from 256 MiB
/// up to `max_heap` and the other settings of [`Startup::Fast`], the plain and TLS listeners
/// of [`super::kafka`], and topics and internal topics of one replica.
pub fn small_ephemeral_cluster(name: &str, max_heap: &str) -> Vec<serde_json::Value> {
    use serde_json::json;
    let mut documents = vec![
        super::node_pool(name, &format!("{name}-dual"), 1, &["controller", "broker"]),
        super::kafka(name, 1),
    ];
    for document in &mut documents {
        set_startup(document, Startup::Fast, max_heap);
        if document["kind"] == "Kafka" {
            let config = &mut document["spec"]["kafka"]["config"];
            config["offsets.topic.replication.factor"] = json!(1);
            config["transaction.state.log.replication.factor"] = json!(1);
            config["transaction.state.log.min.isr"] = json!(1);
        }
    }
    documents
}

/// The value of `key` in Secret `name`.
pub async fn secret_value(client: &Client, ns: &str, name: &str, key: &str) -> Vec<u8> {
    let secret = Api::<Secret>::namespaced(client.clone(), ns)
        .get(name)
        .await
        .unwrap();
    secret
        .data
        .and_then(|mut data| data.remove(key))
        .unwrap_or_else(|| panic!("{key} in Secret {name}"))
        .0
}

/// Writes `key` of Secret `name` to a file named after both, and returns its path.
pub async fn secret_file(client: &Client, ns: &str, name: &str, key: &str) -> PathBuf {
    let value = secret_value(client, ns, name, key).await;
    let path = TestEnv::shared_real()
        .log_dir()
        .join(format!("{ns}-{name}-{key}"));
    std::fs::write(&path, value).unwrap();
    path
}

/// The cluster CA certificate of `cluster` (`<cluster>-cluster-ca-cert`, `ca.crt`) in a file.
pub async fn cluster_ca_file(client: &Client, ns: &str, cluster: &str) -> PathBuf {
    secret_file(client, ns, &format!("{cluster}-cluster-ca-cert"), "ca.crt").await
}

/// A client certificate for `user` signed by the clients CA of `cluster` (as the user operator
/// would issue), with `openssl`: (certificate file, key file).
pub async fn client_certificate(
    client: &Client,
    ns: &str,
    cluster: &str,
    user: &str,
) -> (PathBuf, PathBuf) {
    let ca_cert = secret_file(client, ns, &format!("{cluster}-clients-ca-cert"), "ca.crt").await;
    let ca_key = secret_file(client, ns, &format!("{cluster}-clients-ca"), "ca.key").await;
    let dir = TestEnv::shared_real().log_dir();
    let (key, request, cert) = (
        dir.join(format!("{ns}-{user}.key")),
        dir.join(format!("{ns}-{user}.csr")),
        dir.join(format!("{ns}-{user}.crt")),
    );
    let run = |args: &[&std::ffi::OsStr]| openssl(args);
    let subject = format!("/CN={user}");
    run(&[
        "req".as_ref(),
        "-new".as_ref(),
        "-newkey".as_ref(),
        "rsa:2048".as_ref(),
        "-nodes".as_ref(),
        "-subj".as_ref(),
        subject.as_ref(),
        "-keyout".as_ref(),
        key.as_os_str(),
        "-out".as_ref(),
        request.as_os_str(),
    ]);
    run(&[
        "x509".as_ref(),
        "-req".as_ref(),
        "-days".as_ref(),
        "1".as_ref(),
        "-in".as_ref(),
        request.as_os_str(),
        "-CA".as_ref(),
        ca_cert.as_os_str(),
        "-CAkey".as_ref(),
        ca_key.as_os_str(),
        "-CAcreateserial".as_ref(),
        "-out".as_ref(),
        cert.as_os_str(),
    ]);
    (cert, key)
}

/// Retries a client call until it succeeds (the first calls after Ready may meet leader
/// elections), panicking with its last error after [`POD_WAIT`].
pub async fn eventually<T>(what: &str, mut call: impl FnMut() -> Result<T, String>) -> T {
    let started = Instant::now();
    loop {
        let error = match call() {
            Ok(value) => return value,
            Err(error) => error,
        };
        assert!(
            started.elapsed() < POD_WAIT,
            "{what} did not succeed in {POD_WAIT:?}: {error}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// The values `<prefix>-0` .. `<prefix>-<count - 1>` the client produces, sorted.
pub fn records(prefix: &str, count: usize) -> Vec<String> {
    sorted((0..count).map(|n| format!("{prefix}-{n}")).collect())
}

/// Produces `count` records `<prefix>-<n>` to `topic` with `client`, reads them back and
/// checks that they are those records; `through` names the way in for a failure (a listener,
/// a Service). Each call is retried as [`eventually`] does.
pub async fn round_trip(
    client: &strimzi_tests::clients::ClusterClient,
    topic: &str,
    count: usize,
    prefix: &str,
    through: &str,
) {
    eventually(&format!("producing through {through}"), || {
        client.produce(topic, count, prefix)
    })
    .await;
    let read = eventually(&format!("consuming through {through}"), || {
        client.consume(topic, count)
    })
    .await;
    assert_eq!(
        sorted(read),
        records(prefix, count),
        "read through {through}"
    );
}

/// Records of several partitions arrive in no fixed order: compare them sorted.
pub fn sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort();
    values
}

pub fn is_ready(pod: &Pod) -> bool {
    strimzi_cluster_operator::pod_set::is_ready(pod)
}

/// Waits until every Kafka node pod of the cluster (not the entity operator's or other
/// components') is Running and Ready and returns them.
pub async fn all_pods_ready(client: &Client, ns: &str, cluster: &str, expected: usize) -> Vec<Pod> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let selector = format!("strimzi.io/cluster={cluster},strimzi.io/name={cluster}-kafka");
    let started = Instant::now();
    loop {
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .unwrap();
        if list.items.len() == expected && list.items.iter().all(is_ready) {
            return list.items;
        }
        assert!(
            started.elapsed() < POD_WAIT,
            "pods not all Ready in {POD_WAIT:?}: {:#?}",
            list.items
                .iter()
                .map(|pod| (pod.name_any(), pod.status.clone()))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The shared real-node environment of this test binary with our operator image loaded: the
/// image is built (or found up to date) before the nodes start, so they import it.
pub fn env_with_operator_image() -> &'static TestEnv {
    strimzi_tests::layout::provision(strimzi_tests::layout::Provision::OperatorImage).unwrap();
    TestEnv::shared_real()
}

/// The pid of the process whose executable is named `name` (the node's containers run on
/// this machine's kernel).
pub fn process_named(name: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(Result::ok)
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            (exe.file_name()? == name).then_some(pid)
        })
}

/// Waits until the KafkaTopic `name` in `ns` is Ready.
pub async fn topic_ready(client: &Client, ns: &str, name: &str) {
    let topics: Api<strimzi_api::topic::KafkaTopic> = Api::namespaced(client.clone(), ns);
    super::wait_for(
        &topics,
        name,
        &format!("KafkaTopic {ns}/{name} to be Ready"),
        |topic| {
            let conditions = topic?.status.as_ref()?.conditions.as_ref()?;
            conditions
                .iter()
                .any(|c| {
                    c.r#type.as_deref() == Some("Ready") && c.status.as_deref() == Some("True")
                })
                .then_some(())
        },
    )
    .await;
}

/// The running pod of a component's Deployment (`strimzi.io/name=<name>`).
pub async fn component_pod(client: &Client, ns: &str, name: &str) -> Pod {
    ready_component_pod(client, ns, name, None).await
}

/// The running pod of a component's Deployment that replaced `old` (a rollout the test
/// caused, which may not have begun when the test looks).
pub async fn replaced_component_pod(client: &Client, ns: &str, name: &str, old: &Pod) -> Pod {
    ready_component_pod(client, ns, name, old.metadata.uid.as_deref()).await
}

/// The one ready pod of a component's Deployment, other than the pod with UID `not`.
async fn ready_component_pod(client: &Client, ns: &str, name: &str, not: Option<&str>) -> Pod {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let selector = format!("strimzi.io/name={name}");
    strimzi_tests::resources::eventually_ok(&format!("a ready pod of {name}"), POD_WAIT, || {
        let pods = pods.clone();
        let selector = selector.clone();
        async move {
            let list = pods
                .list(&ListParams::default().labels(&selector))
                .await
                .unwrap();
            let ready: Vec<Pod> = list
                .items
                .into_iter()
                .filter(|pod| pod.metadata.deletion_timestamp.is_none())
                .filter(|pod| not.is_none() || pod.metadata.uid.as_deref() != not)
                .filter(is_ready)
                .collect();
            match ready.as_slice() {
                [pod] => Ok(pod.clone()),
                _ => Err(ready.len()),
            }
        }
    })
    .await
}

/// `GET http://<address>/<path>` from inside the nodes' network, with curl.
pub fn http_get(
    network: &strimzi_tests::network::NodeNetwork,
    url: &str,
) -> Result<String, String> {
    let prefix = network.exec_prefix();
    let output = std::process::Command::new(&prefix[0])
        .args(&prefix[1..])
        .args(["curl", "--silent", "--show-error", "--max-time", "10", url])
        .output()
        .map_err(|error| format!("curl: {error}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// Stops `producer` and checks that it lost nothing: no record failed, and `topic` holds each
/// acknowledged record (its other records, not the producer's, aside) exactly once, or at
/// least once where `redelivery` allows it (the duplicates are printed). The producer's
/// report.
pub async fn stop_and_check_nothing_lost(
    producer: strimzi_tests::clients::SteadyProducer,
    plain: &strimzi_tests::clients::ClusterClient,
    topic: &str,
    redelivery: strimzi_tests::clients::Redelivery,
) -> strimzi_tests::clients::SteadyReport {
    let report = producer.stop().unwrap();
    // A stall shows here even when no record failed. A figure, not an assertion.
    println!(
        "figure: steady producer on {topic}: {} records acknowledged, p99 {:.0} ms, max {:.0} ms",
        report.acked.len(),
        report.p99_ms,
        report.max_ms
    );
    assert_eq!(
        report.errors,
        0,
        "the producer lost records: {}",
        report.summary()
    );
    let read = eventually("consuming every record", || plain.consume_all(topic)).await;
    match report.check_read_back(&read, redelivery) {
        Ok(duplicates) if !duplicates.is_empty() => println!(
            "{topic}: {} acknowledged records read back more than once after a crash: {duplicates:?}",
            duplicates.len()
        ),
        Ok(_) => {}
        Err(difference) => {
            let replicas: Vec<String> = plain
                .assignments()
                .unwrap_or_default()
                .into_iter()
                .filter(|found| found.topic == topic)
                .map(|found| format!("{found:?}"))
                .collect();
            panic!(
                "records lost or duplicated: {difference}; the topic's partitions now: {replicas:?}"
            );
        }
    }
    report
}

/// Scales the node pool `broker` of the test clusters to `replicas`.
pub async fn scale_brokers(client: &Client, ns: &str, replicas: i32) {
    scale_pool(client, ns, "broker", replicas).await;
}

/// Sets the replicas of the KafkaNodePool `pool` in `ns`, as a user scales it.
pub async fn scale_pool(client: &Client, ns: &str, pool: &str, replicas: i32) {
    use kube::api::{Patch, PatchParams};
    Api::<strimzi_api::node_pool::KafkaNodePool>::namespaced(client.clone(), ns)
        .patch(
            pool,
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({"spec": {"replicas": replicas}})),
        )
        .await
        .unwrap();
}

/// Deletes a test's namespaces, and so its Kafka clusters, when dropped at the end of the test
/// (also when it fails): the tests of one program share the real node, and a cluster left
/// running takes CPU from the tests still running.
pub struct DeletedOnDrop {
    env: &'static TestEnv,
    namespaces: Vec<String>,
}

/// [`DeletedOnDrop`] for `namespaces` of `env`.
pub fn delete_when_done(env: &'static TestEnv, namespaces: &[&str]) -> DeletedOnDrop {
    DeletedOnDrop {
        env,
        namespaces: namespaces.iter().map(|name| (*name).to_owned()).collect(),
    }
}

impl Drop for DeletedOnDrop {
    fn drop(&mut self) {
        let env = self.env;
        let namespaces = std::mem::take(&mut self.namespaces);
        // The test's runtime is busy dropping this: a thread of its own, with a runtime and a
        // client of its own, does the deleting. Pods stop in the background.
        let deleting = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let namespaces_api: Api<k8s_openapi::api::core::v1::Namespace> =
                    Api::all(env.client().await);
                for namespace in &namespaces {
                    if let Err(error) = namespaces_api
                        .delete(namespace, &kube::api::DeleteParams::background())
                        .await
                    {
                        eprintln!("deleting namespace {namespace}: {error}");
                    }
                }
            });
        });
        if deleting.join().is_err() {
            eprintln!("deleting the namespaces of a test failed");
        }
    }
}

/// An iptables rule in the real-node environment's network namespace refusing connections
/// made from there (where the operators and the test clients run) to `ports` of the pods at
/// `addresses`, removed when dropped. The pods still reach each other: their traffic is
/// forwarded between pods, not sent from the environment's namespace. A NetworkPolicy could
/// not do it, as the one the operator generates lets the operator in.
pub struct ConnectionsRefused {
    network: Vec<String>,
    rule: Vec<String>,
}

impl ConnectionsRefused {
    /// Refuses connections to `ports` of `addresses` from the environment's namespace until
    /// dropped.
    pub fn new(
        network: &strimzi_tests::network::NodeNetwork,
        addresses: &[String],
        ports: &[u16],
    ) -> Self {
        let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
        let rule = [
            "OUTPUT",
            "-p",
            "tcp",
            "-d",
            &addresses.join(","),
            "-m",
            "multiport",
            "--dports",
            &ports.join(","),
            "-j",
            "REJECT",
            "--reject-with",
            "tcp-reset",
        ]
        .map(str::to_owned)
        .to_vec();
        let refused = Self {
            network: network.exec_prefix(),
            rule,
        };
        refused.iptables("-I").expect("adding the iptables rule");
        refused
    }

    fn iptables(&self, action: &str) -> Result<(), String> {
        let output = std::process::Command::new(&self.network[0])
            .args(&self.network[1..])
            .args(["iptables", "-w", action])
            .args(&self.rule)
            .output()
            .map_err(|error| error.to_string())?;
        if output.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    }
}

impl Drop for ConnectionsRefused {
    fn drop(&mut self) {
        if let Err(error) = self.iptables("-D") {
            eprintln!("removing the iptables rule {:?}: {error}", self.rule);
        }
    }
}

/// Kills with SIGKILL the JVM of the pod named `pod` (its containers see `HOSTNAME` set to
/// the pod's name and run on this machine's kernel), as a crash of the process would: the
/// kubelet restarts the container, the pod keeps its UID. Panics when no such JVM runs.
pub fn kill_jvm_of(pod: &str) {
    signal_jvm_of(pod, nix::sys::signal::Signal::SIGKILL);
}

/// Sends `signal` to the JVM of pod `pod` (found by its `HOSTNAME`), e.g. `SIGSTOP` to
/// freeze a node and `SIGCONT` to let it go on.
pub fn signal_jvm_of(pod: &str, signal: nix::sys::signal::Signal) {
    let hostname = format!("HOSTNAME={pod}");
    let pids: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            let named = environ
                .split(|byte| *byte == 0)
                .any(|variable| variable == hostname.as_bytes());
            (exe.file_name()? == "java" && named).then_some(pid)
        })
        .collect();
    assert!(!pids.is_empty(), "no JVM of pod {pod} runs");
    for pid in pids {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).unwrap();
    }
}

/// What draining a node of a Kafka's node pods did ([`drain_busiest_node`]).
#[derive(Debug)]
pub struct Drain {
    /// The node drained.
    pub node: String,
    /// The pods evicted from it, in order.
    pub evicted: Vec<String>,
    /// Evictions the API server refused with `429 Too Many Requests`: a PodDisruptionBudget
    /// allowed no disruption at that moment.
    pub refused: usize,
    /// The most node pods of the Kafka unavailable (missing or not Ready) at one time.
    pub most_unavailable: usize,
    /// From the cordon until every pod was Ready again.
    pub seconds: f64,
}

/// Drains the node that runs most of `cluster`'s `expected` node pods of those pods, as
/// `kubectl drain` does: starts the environment's standby node (the first time a test asks)
/// so that the pods have somewhere to go, cordons the node, evicts each pod through the
/// Eviction API (which honours PodDisruptionBudgets), controllers first, retrying a refused eviction every
/// second, then waits until every pod is Ready again (on the standby node: their volumes are
/// folders of the environment, so they move with them) and uncordons the node; the standby
/// node is cordoned again afterwards, the moved pods staying on it, so that later tests'
/// pods go where they went before. Pods of other namespaces on the drained node (the
/// clusters of tests running beside this one) are left alone. Meanwhile the Kafka's node
/// pods are counted twice a second, for [`Drain::most_unavailable`].
pub async fn drain_busiest_node(env: &TestEnv, ns: &str, cluster: &str, expected: usize) -> Drain {
    use k8s_openapi::api::core::v1::Node;
    use kube::api::{EvictParams, Patch, PatchParams};
    let client = env.client().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    // The client's default retrying of `429 Too Many Requests` would hide each refusal
    // (and retry it itself): evictions go through a client that returns them.
    let mut config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(env.control_plane().kubeconfig()).unwrap(),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    config.default_retry = false;
    let evictions: Api<Pod> = Api::namespaced(Client::try_from(config).unwrap(), ns);
    let selector = format!("strimzi.io/cluster={cluster},strimzi.io/name={cluster}-kafka");
    let node_of = |pod: &Pod| pod.spec.as_ref().and_then(|spec| spec.node_name.clone());
    let listed = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items;
    let mut by_node: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for pod in &listed {
        by_node
            .entry(node_of(pod).expect("a scheduled pod"))
            .or_default()
            .push(pod.name_any());
    }
    let (node, mut victims) = by_node
        .into_iter()
        .max_by_key(|(_, names)| names.len())
        .expect("pods of the cluster");
    // Controllers first. When the brokers moved before the controller, their KRaft I/O
    // threads spun at a full core each after the controller moved (Kafka 4.3.1; it resembles
    // KAFKA-20514, observers fetching from the leader's old address), which starved the
    // control plane on two cores in two runs of three beside other tests.
    let controllers: std::collections::BTreeSet<String> = listed
        .iter()
        .filter(|pod| {
            pod.labels()
                .get("strimzi.io/controller-role")
                .map(String::as_str)
                == Some("true")
        })
        .map(|pod| pod.name_any())
        .collect();
    victims.sort_by_key(|name| !controllers.contains(name));
    let nodes: Api<Node> = Api::all(client.clone());
    let cordon = |name: String, unschedulable: bool| {
        let nodes = nodes.clone();
        async move {
            nodes
                .patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(serde_json::json!({"spec": {"unschedulable": unschedulable}})),
                )
                .await
                .unwrap();
        }
    };
    // The standby node takes the evicted pods while this node is drained.
    let standby = env.standby_node().await.unwrap();
    assert_ne!(standby, node, "the pods already run on the standby node");

    let counting = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let counter = tokio::spawn({
        let (pods, selector, counting) = (pods.clone(), selector.clone(), counting.clone());
        async move {
            let mut most = 0;
            while counting.load(std::sync::atomic::Ordering::SeqCst) {
                if let Ok(list) = pods.list(&ListParams::default().labels(&selector)).await {
                    let ready = list
                        .items
                        .iter()
                        .filter(|pod| pod.metadata.deletion_timestamp.is_none() && is_ready(pod))
                        .count();
                    most = most.max(expected.saturating_sub(ready));
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            most
        }
    });

    let started = Instant::now();
    cordon(standby.clone(), false).await;
    cordon(node.clone(), true).await;
    let mut refused = 0;
    for victim in &victims {
        loop {
            match evictions.evict(victim, &EvictParams::default()).await {
                Ok(_) => break,
                Err(kube::Error::Api(response)) if response.code == 429 => refused += 1,
                Err(error) => panic!("evicting {victim}: {error}"),
            }
            assert!(
                started.elapsed() < POD_WAIT,
                "{victim} not evicted in {POD_WAIT:?}: every eviction refused"
            );
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
    loop {
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .unwrap()
            .items;
        let moved = list.len() == expected
            && list
                .iter()
                .all(|pod| is_ready(pod) && node_of(pod).as_deref() != Some(node.as_str()));
        if moved {
            break;
        }
        assert!(
            started.elapsed() < POD_WAIT,
            "the pods evicted from {node} not Ready elsewhere in {POD_WAIT:?}"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    cordon(node.clone(), false).await;
    cordon(standby, true).await;
    counting.store(false, std::sync::atomic::Ordering::SeqCst);
    Drain {
        node,
        evicted: victims,
        refused,
        most_unavailable: counter.await.unwrap(),
        seconds,
    }
}

/// The TLS settings of the cluster operator's own identity for `cluster` (its certificate
/// Secret), trusting the cluster CA: how the operator connects to the nodes.
pub async fn operator_tls(
    client: &Client,
    ns: &str,
    cluster: &str,
) -> strimzi_operator_common::kafka::TlsConfig {
    let text = |name: String, key: &'static str| async move {
        String::from_utf8(secret_value(client, ns, &name, key).await).unwrap()
    };
    let operator_certs = format!("{cluster}-cluster-operator-certs");
    strimzi_operator_common::kafka::TlsConfig {
        ca_pem: text(format!("{cluster}-cluster-ca-cert"), "ca.crt").await,
        client_identity_pem: Some(format!(
            "{}{}",
            text(operator_certs.clone(), "cluster-operator.crt").await,
            text(operator_certs, "cluster-operator.key").await
        )),
        verify_hostname: true,
    }
}

/// The DER of the certificate that `key` of the Secret named after `pod` holds (the first of
/// its chain): `<pod>.crt` is what its listeners serve, `<listener>-<port>.crt` the copy of a
/// user-provided listener certificate.
pub async fn stored_certificate(client: &Client, ns: &str, pod: &str, key: &str) -> Vec<u8> {
    let pem = secret_value(client, ns, pod, key).await;
    strimzi_certificate_manager::certificate::ParsedCertificate::from_pem(&pem)
        .unwrap()
        .der()
        .to_vec()
}

/// The DER of the certificate that the listener on `port` of `pod` (of `cluster`) serves, read
/// with a TLS handshake from inside the nodes' network as the operator's identity, whoever
/// signed it.
pub async fn served_certificate(
    client: &Client,
    ns: &str,
    cluster: &str,
    pod: &Pod,
    port: u16,
) -> Vec<u8> {
    use strimzi_operator_common::kafka::{
        AdminClient, AdminConfig, HostResolution, SecurityProtocol,
    };
    let tls = operator_tls(client, ns, cluster).await;
    let name = pod.name_any();
    // By IP address: the test's thread in the nodes' network has the machine's resolver.
    let ip = pod.status.as_ref().unwrap().pod_ip.clone().unwrap();
    let address = format!("{ip}:{port}");
    let config = AdminConfig {
        bootstrap_servers: vec![address.clone()],
        security_protocol: SecurityProtocol::Ssl,
        tls: Some(tls),
        sasl: None,
        client_id: "served-certificate".to_owned(),
        request_timeout: Duration::from_secs(20),
        operation_timeout: Duration::from_secs(20),
        host_resolution: HostResolution::IpAddressesOnly,
        unused_settings: Vec::new(),
    };
    // The client connects from the thread that entered the nodes' network.
    in_node_network(|| async { AdminClient::new(config)?.served_certificate(&address).await })
        .unwrap_or_else(|error| panic!("{name}:{port}: {error}"))
}

/// Runs the future `make` returns to its end on a thread of its own inside the nodes'
/// network, as the operator reaches the pods (by IP address: that thread has the machine's
/// resolver).
pub fn in_node_network<T, F>(make: impl FnOnce() -> F + Send) -> T
where
    T: Send,
    F: std::future::Future<Output = T>,
{
    TestEnv::shared_real()
        .network()
        .unwrap()
        .enter(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(make())
        })
        .unwrap()
}

/// Runs `openssl` with `args`, and fails the test with its error output if it fails.
pub fn openssl<S: AsRef<std::ffi::OsStr>>(args: &[S]) {
    let output = std::process::Command::new("openssl")
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "openssl: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
