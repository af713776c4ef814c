//! Benchmark of the user operator on the real test environment (API server and Kafka
//! broker), one operator process and one fresh namespace per scenario:
//!
//! - `scram=N`: N KafkaUsers with `scram-sha-512` authentication, 3 ACL rules of one
//!   operation each and a producer byte-rate quota;
//! - `tls=N`: N KafkaUsers with `tls` authentication (an RSA-2048 key each), the same ACL
//!   rules and a consumer byte-rate quota.
//!
//! For each: the time from the first create to all Ready, a check in Kafka (admin client)
//! and in Kubernetes that every user has exactly what it asks for, the operator's RSS, what
//! one periodic reconciliation with nothing changed costs (Kafka requests per API,
//! Kubernetes writes), and the time from deleting the KafkaUsers to Kafka holding none of
//! their credentials, ACLs and quotas.
//!
//! Run (release build of the binary first; it is started as a child process so that its RSS
//! is its own):
//!
//! ```text
//! cargo build --release -p strimzi-user-operator --bins --examples
//! target/release/examples/user_bench                 # scram=1000 tls=200
//! target/release/examples/user_bench scram=100 tls=0
//! ```
//!
//! `USER_BENCH_LOG_LEVEL` (default `WARN`) sets the operator's `STRIMZI_LOG_LEVEL`; its
//! output goes to `target/release/examples/user_bench-<namespace>.log`. The operator inherits
//! the bench's environment, so other settings can be tried, e.g.
//! `STRIMZI_CONTROLLER_THREAD_POOL_SIZE=200 target/release/examples/user_bench scram=1000`.
//!
//! The operator runs with `STRIMZI_IGNORED_USERS_PATTERN=^(?!(CN=)?<namespace>-).*`, so that
//! its sweep never touches Kafka users of others (such as the broker's `admin`); whatever
//! the operator leaves in Kafka is removed by the bench at the end of each scenario (and
//! reported as a problem). The exit status is 1 when a check failed.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::user::KafkaUser;
use strimzi_operator_common::kafka::{
    AclBindingFilter, AclOperation, AclPermission, AclResourceType, AdminClient, AdminConfig,
    KafkaAdmin, PatternType, QuotaAlteration, QuotaEntity, QuotaFilterComponent, QuotaMatch,
    ScramCredentialChange, ScramMechanism,
};
use strimzi_tests::environment::TestEnv;
use strimzi_tests::measure::{http_get, metric, rss_mib};
use strimzi_tests::resources::{CustomResources, is_ready};

/// Full reconciliation interval of the benchmarked operator.
const INTERVAL: Duration = Duration::from_secs(30);
/// Longest wait for all users Ready, or for a deletion to finish.
const TIMEOUT: Duration = Duration::from_secs(600);
/// KafkaUsers created at once.
const CREATE_CONCURRENCY: usize = 64;
/// Names of the clients CA Secrets (the broker's own CA, as in the integration tests).
const CA_CERT: &str = "my-cluster-clients-ca-cert";
const CA_KEY: &str = "my-cluster-clients-ca";
const KAFKA_REQUESTS: &str = "strimzi_user_operator_kafka_requests_total";
const API_WRITES: &str = "strimzi_operator_api_writes_total";
const RECONCILIATIONS: &str = "strimzi_reconciliations_total";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Auth {
    Scram,
    Tls,
}

impl Auth {
    fn name(self) -> &'static str {
        match self {
            Self::Scram => "scram",
            Self::Tls => "tls",
        }
    }

    /// The Kafka user name of the KafkaUser `name`.
    fn kafka_name(self, name: &str) -> String {
        match self {
            Self::Scram => name.to_owned(),
            Self::Tls => format!("CN={name}"),
        }
    }

    /// Quota key and value each user asks for.
    fn quota(self) -> (&'static str, &'static str, f64) {
        match self {
            Self::Scram => ("producerByteRate", "producer_byte_rate", 1_048_576.0),
            Self::Tls => ("consumerByteRate", "consumer_byte_rate", 2_097_152.0),
        }
    }

    /// Data keys every user's Secret must have.
    fn secret_keys(self) -> &'static [&'static str] {
        match self {
            Self::Scram => &["password", "sasl.jaas.config"],
            Self::Tls => &[
                "ca.crt",
                "user.crt",
                "user.key",
                "user.p12",
                "user.password",
            ],
        }
    }
}

/// The 3 ACL rules (one operation each) of the KafkaUser `name`, and the bindings they make.
fn rules(name: &str) -> (Value, BTreeSet<(AclResourceType, String, AclOperation)>) {
    let topic = format!("{name}-t");
    let group = format!("{name}-g");
    let spec = json!([
        {"resource": {"type": "topic", "name": topic}, "operations": ["Read"]},
        {"resource": {"type": "topic", "name": topic}, "operations": ["Describe"]},
        {"resource": {"type": "group", "name": group}, "operations": ["Read"]},
    ]);
    let bindings = BTreeSet::from([
        (AclResourceType::Topic, topic.clone(), AclOperation::Read),
        (AclResourceType::Topic, topic, AclOperation::Describe),
        (AclResourceType::Group, group, AclOperation::Read),
    ]);
    (spec, bindings)
}

fn user_document(auth: Auth, name: &str) -> Value {
    let (quota, _, value) = auth.quota();
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaUser",
        "metadata": {"name": name, "labels": {"strimzi.io/cluster": "my-cluster"}},
        "spec": {
            "authentication": {"type": match auth { Auth::Scram => "scram-sha-512", Auth::Tls => "tls" }},
            "authorization": {"type": "simple", "acls": rules(name).0},
            "quotas": {quota: value as u64},
        },
    })
}

/// `^(?!(CN=)?<prefix>).*`: every Kafka user name that does not belong to this run.
fn ignored_pattern(prefix: &str) -> String {
    let escaped: String = prefix
        .chars()
        .flat_map(|c| {
            let escape = !c.is_ascii_alphanumeric();
            escape.then_some('\\').into_iter().chain([c])
        })
        .collect();
    format!("^(?!(CN=)?{escaped}).*")
}

/// The samples of metric `name` by their label text (`api="CreateAcls"`, ...).
fn samples(text: &str, name: &str) -> BTreeMap<String, f64> {
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        let (labels, value) = if let Some(rest) = rest.strip_prefix('{') {
            let Some((labels, value)) = rest.split_once("} ") else {
                continue;
            };
            (labels.to_owned(), value)
        } else if let Some(value) = rest.strip_prefix(' ') {
            (String::new(), value)
        } else {
            continue;
        };
        if let Ok(value) = value.trim().parse::<f64>() {
            *samples.entry(labels).or_default() += value;
        }
    }
    samples
}

/// `label=value` pairs whose counter grew between `before` and `after`, with the growth.
fn growth(before: &str, after: &str, name: &str) -> String {
    let before = samples(before, name);
    let parts: Vec<String> = samples(after, name)
        .into_iter()
        .filter_map(|(labels, value)| {
            let delta = value - before.get(&labels).copied().unwrap_or_default();
            (delta != 0.0).then(|| format!("{labels}: {delta}"))
        })
        .collect();
    if parts.is_empty() {
        "none".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Mean reconciliation duration between two scrapes, in milliseconds.
fn mean_reconciliation_ms(before: &str, after: &str) -> f64 {
    let delta = |name: &str| metric(after, name) - metric(before, name);
    let count = delta("strimzi_reconciliations_duration_seconds_count");
    if count == 0.0 {
        return 0.0;
    }
    delta("strimzi_reconciliations_duration_seconds_sum") / count * 1000.0
}

/// How many reconciliations between two scrapes took how long (the duration histogram's
/// buckets, not cumulative): `<=0.1s: 12, <=0.5s: 30, ...`.
fn duration_buckets(before: &str, after: &str) -> String {
    let name = "strimzi_reconciliations_duration_seconds_bucket";
    let by_bound = |text: &str| {
        let mut bounds: Vec<(f64, String, f64)> = Vec::new();
        for (labels, value) in samples(text, name) {
            let Some(bound) = labels
                .split(',')
                .find_map(|label| label.strip_prefix("le="))
                .map(|bound| bound.trim_matches('"').to_owned())
            else {
                continue;
            };
            let order = bound.parse().unwrap_or(f64::INFINITY);
            match bounds.iter_mut().find(|(_, known, _)| *known == bound) {
                Some(entry) => entry.2 += value,
                None => bounds.push((order, bound, value)),
            }
        }
        bounds.sort_by(|a, b| a.0.total_cmp(&b.0));
        bounds
    };
    let before = by_bound(before);
    let mut below = 0.0;
    let mut parts = Vec::new();
    for (_, bound, value) in by_bound(after) {
        let earlier = before
            .iter()
            .find(|(_, known, _)| *known == bound)
            .map_or(0.0, |entry| entry.2);
        let cumulative = value - earlier;
        if cumulative > below {
            parts.push(format!("<={bound}s: {}", cumulative - below));
        }
        below = cumulative;
    }
    parts.join(", ")
}

/// CPU time (user + system) process `pid` has used, in seconds; 0 when unknown.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces): state is the first, utime the
    // 12th and stime the 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |index: usize| {
        fields
            .get(index)
            .and_then(|field| field.parse::<f64>().ok())
            .unwrap_or_default()
    };
    // USER_HZ is 100 on Linux.
    (ticks(11) + ticks(12)) / 100.0
}

/// CPU seconds used so far by the operator, the Kubernetes control plane, Kafka and the
/// bench itself.
#[derive(Clone, Copy)]
struct CpuUse {
    at: Instant,
    operator: f64,
    control_plane: f64,
    kafka: f64,
    bench: f64,
}

impl CpuUse {
    fn now(env: &TestEnv, operator: u32) -> Self {
        let kafka_pid = env.kafka().pid();
        Self {
            at: Instant::now(),
            operator: cpu_seconds(operator),
            control_plane: env
                .pids()
                .into_iter()
                .filter(|pid| *pid != kafka_pid)
                .map(cpu_seconds)
                .sum(),
            kafka: cpu_seconds(kafka_pid),
            bench: cpu_seconds(std::process::id()),
        }
    }

    fn since(&self, earlier: &Self) -> String {
        let wall = self.at.duration_since(earlier.at).as_secs_f64();
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        format!(
            "CPU seconds over {wall:.1} s wall ({cores} cores): operator {:.1}, control plane {:.1}, \
             Kafka {:.1}, bench {:.1}",
            self.operator - earlier.operator,
            self.control_plane - earlier.control_plane,
            self.kafka - earlier.kafka,
            self.bench - earlier.bench,
        )
    }
}

/// The operator process; killed when dropped (a panicking bench leaves none behind).
struct OperatorProcess {
    child: std::process::Child,
    port: u16,
}

impl OperatorProcess {
    fn start(env: &TestEnv, namespace: &str, prefix: &str) -> Self {
        let examples = std::env::current_exe().unwrap();
        let examples = examples.parent().unwrap();
        let binary = examples.parent().unwrap().join("strimzi-user-operator");
        assert!(
            binary.exists(),
            "build it first: cargo build --release -p strimzi-user-operator --bins --examples"
        );
        let log_path = examples.join(format!("user_bench-{namespace}.log"));
        let log = std::fs::File::create(&log_path).unwrap();
        let port = strimzi_tests::layout::free_port().unwrap();
        let level = std::env::var("USER_BENCH_LOG_LEVEL").unwrap_or_else(|_| "WARN".to_owned());
        // setpriv: the operator dies with this process, however it ends (exec keeps the pid).
        let child = std::process::Command::new("setpriv")
            .args(["--pdeathsig", "KILL", "--"])
            .arg(&binary)
            .env("KUBECONFIG", env.control_plane().kubeconfig())
            .env("STRIMZI_NAMESPACE", namespace)
            .env("STRIMZI_CA_CERT_NAME", CA_CERT)
            .env("STRIMZI_CA_KEY_NAME", CA_KEY)
            .env(
                "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
                &env.kafka().listener("plain").unwrap().bootstrap,
            )
            .env("STRIMZI_IGNORED_USERS_PATTERN", ignored_pattern(prefix))
            .env("STRIMZI_HTTP_PORT", port.to_string())
            .env(
                "STRIMZI_FULL_RECONCILIATION_INTERVAL_MS",
                INTERVAL.as_millis().to_string(),
            )
            .env("STRIMZI_LOG_LEVEL", &level)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        println!(
            "  operator pid {} on port {port}, log level {level}, log {}",
            child.id(),
            log_path.display()
        );
        Self { child, port }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn metrics(&self) -> String {
        http_get(self.port, "/metrics")
    }

    /// `now` and `peak` RSS in MiB.
    fn rss(&self) -> (f64, f64) {
        (rss_mib(self.pid(), "VmRSS"), rss_mib(self.pid(), "VmHWM"))
    }

    /// Waits until `/ready` answers 200.
    async fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the operator exited at start: {status} (see its log)");
            }
            let answer = http_get(self.port, "/ready");
            if answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200") {
                return;
            }
            assert!(Instant::now() < deadline, "the operator never became ready");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGTERM, then waits for the exit.
    fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for OperatorProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// How many KafkaUsers of a namespace are Ready, kept up to date by a watch (cheaper for the
/// API server than listing them all twice a second while the operator works).
#[derive(Clone, Default)]
struct ReadyWatch {
    ready: Arc<Mutex<HashMap<String, bool>>>,
    /// When each user was first seen Ready.
    first_ready: Arc<Mutex<HashMap<String, Instant>>>,
}

impl ReadyWatch {
    fn start(api: Api<DynamicObject>) -> (Self, tokio::task::JoinHandle<()>) {
        let watch = Self::default();
        let ready = watch.ready.clone();
        let first_ready = watch.first_ready.clone();
        let task = tokio::spawn(async move {
            let mut events = watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = events.next().await {
                let mut ready = ready.lock().unwrap();
                match event {
                    Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
                        let is = is_ready(&object);
                        if is {
                            first_ready
                                .lock()
                                .unwrap()
                                .entry(object.name_any())
                                .or_insert_with(Instant::now);
                        }
                        ready.insert(object.name_any(), is);
                    }
                    Ok(watcher::Event::Delete(object)) => {
                        ready.remove(&object.name_any());
                    }
                    Ok(watcher::Event::Init | watcher::Event::InitDone) => {}
                    Err(error) => eprintln!("  watching KafkaUsers: {error}"),
                }
            }
        });
        (watch, task)
    }

    fn count(&self) -> usize {
        self.ready.lock().unwrap().values().filter(|r| **r).count()
    }

    /// Percentiles of the time from each create's answer to its user first seen Ready.
    fn latencies(&self, created: &HashMap<String, Instant>) -> String {
        let first_ready = self.first_ready.lock().unwrap();
        let mut latencies: Vec<Duration> = created
            .iter()
            .filter_map(|(name, at)| Some(first_ready.get(name)?.saturating_duration_since(*at)))
            .collect();
        if latencies.is_empty() {
            return "none".to_owned();
        }
        latencies.sort();
        let at = |fraction: f64| latencies[((latencies.len() - 1) as f64 * fraction) as usize];
        format!(
            "p50 {:.2?}, p90 {:.2?}, p99 {:.2?}, max {:.2?}",
            at(0.5),
            at(0.9),
            at(0.99),
            at(1.0)
        )
    }
}

/// What Kafka holds for Kafka user names starting with `prefix` (or `CN=<prefix>`).
#[derive(Debug, Default)]
struct KafkaState {
    /// Bindings per Kafka user name.
    acls: BTreeMap<String, Vec<(AclResourceType, String, AclOperation, bool)>>,
    /// Users with a SCRAM-SHA-512 credential.
    scram: BTreeSet<String>,
    /// Quotas per Kafka user name.
    quotas: BTreeMap<String, BTreeMap<String, f64>>,
}

impl KafkaState {
    async fn read(admin: &AdminClient, prefix: &str) -> Self {
        let ours = |kafka_name: &str| {
            kafka_name.starts_with(prefix)
                || kafka_name
                    .strip_prefix("CN=")
                    .is_some_and(|name| name.starts_with(prefix))
        };
        let mut state = Self::default();
        for binding in admin.describe_acls(&AclBindingFilter::any()).await.unwrap() {
            let Some(kafka_name) = binding.principal.strip_prefix("User:") else {
                continue;
            };
            if ours(kafka_name) {
                let plain = binding.host == "*"
                    && binding.pattern_type == PatternType::Literal
                    && binding.permission == AclPermission::Allow;
                state.acls.entry(kafka_name.to_owned()).or_default().push((
                    binding.resource_type,
                    binding.resource_name.clone(),
                    binding.operation,
                    plain,
                ));
            }
        }
        for (user, result) in admin.describe_user_scram_credentials(None).await.unwrap() {
            let has = result.as_ref().is_ok_and(|infos| {
                infos
                    .iter()
                    .any(|info| info.mechanism == ScramMechanism::ScramSha512)
            });
            if has && ours(&user) {
                state.scram.insert(user);
            }
        }
        let users = QuotaFilterComponent {
            entity_type: "user".to_owned(),
            matching: QuotaMatch::Any,
        };
        for (entity, values) in admin.describe_client_quotas(&[users], true).await.unwrap() {
            if let Some(Some(user)) = entity.get("user")
                && ours(user)
                && !values.is_empty()
            {
                state.quotas.insert(user.clone(), values);
            }
        }
        state
    }

    fn is_empty(&self) -> bool {
        self.acls.is_empty() && self.scram.is_empty() && self.quotas.is_empty()
    }

    fn summary(&self) -> String {
        format!(
            "{} users with ACLs ({} bindings), {} SCRAM credentials, {} users with quotas",
            self.acls.len(),
            self.acls.values().map(Vec::len).sum::<usize>(),
            self.scram.len(),
            self.quotas.len()
        )
    }

    /// Removes everything listed, as the super user (the bench's own cleanup when the
    /// operator left something behind).
    async fn remove(&self, admin: &AdminClient) {
        for kafka_name in self.acls.keys() {
            admin
                .delete_acls(&[AclBindingFilter::for_principal(format!(
                    "User:{kafka_name}"
                ))])
                .await
                .unwrap();
        }
        let changes: Vec<ScramCredentialChange> = self
            .scram
            .iter()
            .map(|user| ScramCredentialChange::Delete {
                user: user.clone(),
                mechanism: ScramMechanism::ScramSha512,
            })
            .collect();
        for chunk in changes.chunks(100) {
            admin.alter_user_scram_credentials(chunk).await.unwrap();
        }
        let alterations: Vec<QuotaAlteration> = self
            .quotas
            .iter()
            .map(|(user, values)| QuotaAlteration {
                entity: QuotaEntity::from([("user".to_owned(), Some(user.clone()))]),
                changes: values.keys().map(|key| (key.clone(), None)).collect(),
            })
            .collect();
        for chunk in alterations.chunks(100) {
            admin.alter_client_quotas(chunk, false).await.unwrap();
        }
    }
}

/// Checks that Kafka and the Secrets hold exactly what each of `names` asks for; the
/// problems found.
fn verify(auth: Auth, names: &[String], state: &KafkaState, secrets: &[Secret]) -> Vec<String> {
    let mut problems = Vec::new();
    let (_, quota_key, quota_value) = auth.quota();
    let secrets: HashMap<String, &Secret> = secrets
        .iter()
        .map(|secret| (secret.name_any(), secret))
        .collect();
    let (mut with_acls, mut with_scram, mut with_quota, mut with_secret) = (0, 0, 0, 0);
    for name in names {
        let kafka_name = auth.kafka_name(name);
        let expected = rules(name).1;
        let bindings = state.acls.get(&kafka_name).cloned().unwrap_or_default();
        let found: BTreeSet<(AclResourceType, String, AclOperation)> = bindings
            .iter()
            .filter(|binding| binding.3)
            .map(|(kind, resource, operation, _)| (*kind, resource.clone(), *operation))
            .collect();
        if bindings.len() == 3 && found == expected {
            with_acls += 1;
        } else {
            problems.push(format!("{kafka_name}: ACL bindings {bindings:?}"));
        }
        let scram = state.scram.contains(&kafka_name);
        match auth {
            Auth::Scram if scram => with_scram += 1,
            Auth::Scram => problems.push(format!("{kafka_name}: no SCRAM credential")),
            Auth::Tls if scram => problems.push(format!("{kafka_name}: a SCRAM credential")),
            Auth::Tls => {}
        }
        let quotas = state.quotas.get(&kafka_name).cloned().unwrap_or_default();
        if quotas == BTreeMap::from([(quota_key.to_owned(), quota_value)]) {
            with_quota += 1;
        } else {
            problems.push(format!("{kafka_name}: quotas {quotas:?}"));
        }
        let data = secrets
            .get(name)
            .and_then(|secret| secret.data.clone())
            .unwrap_or_default();
        let missing: Vec<&str> = auth
            .secret_keys()
            .iter()
            .copied()
            .filter(|key| data.get(*key).is_none_or(|value| value.0.is_empty()))
            .collect();
        if missing.is_empty() {
            with_secret += 1;
        } else {
            problems.push(format!("Secret {name}: missing {missing:?}"));
        }
    }
    let stray = state
        .acls
        .keys()
        .chain(&state.scram)
        .chain(state.quotas.keys())
        .filter(|kafka_name| {
            !names
                .iter()
                .any(|name| auth.kafka_name(name) == kafka_name.as_str())
        })
        .count();
    if stray > 0 {
        problems.push(format!("{stray} Kafka entries of unknown users"));
    }
    println!(
        "  verified: {with_acls}/{n} with exactly their 3 ACL bindings, {} SCRAM credentials, \
         {with_quota}/{n} with their {quota_key}, {with_secret}/{n} Secrets with {:?}",
        match auth {
            Auth::Scram => format!("{with_scram}/{}", names.len()),
            Auth::Tls => format!("{} (none expected)", state.scram.len()),
        },
        auth.secret_keys(),
        n = names.len(),
    );
    problems
}

async fn create_ca_secrets(client: &Client, namespace: &str, env: &TestEnv) {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    for (name, key, value) in [
        (CA_CERT, "ca.crt", env.kafka().ca_pem()),
        (CA_KEY, "ca.key", env.kafka().ca_key_pem()),
    ] {
        let secret = Secret {
            metadata: kube::api::ObjectMeta {
                name: Some(name.to_owned()),
                ..Default::default()
            },
            data: Some(BTreeMap::from([(
                key.to_owned(),
                ByteString(value.into_bytes()),
            )])),
            ..Secret::default()
        };
        api.create(&PostParams::default(), &secret).await.unwrap();
    }
}

/// The user Secrets of the namespace (labelled `strimzi.io/kind=KafkaUser`).
async fn user_secrets(client: &Client, namespace: &str) -> Vec<Secret> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    api.list(&ListParams::default().labels("strimzi.io/kind=KafkaUser"))
        .await
        .unwrap()
        .items
}

/// Runs one scenario; the problems found.
async fn bench(env: &TestEnv, auth: Auth, count: usize) -> Vec<String> {
    let label = format!("{}={count}", auth.name());
    println!("== {label}");
    let client = env.client().await;
    let namespace = env.namespace(&format!("ub-{}", auth.name())).await;
    let prefix = format!("{namespace}-");
    let admin = AdminClient::new(AdminConfig::plaintext(
        &env.kafka().listener("plain").unwrap().bootstrap,
    ))
    .unwrap();
    let mut problems = Vec::new();
    let leftovers = KafkaState::read(&admin, &prefix).await;
    if !leftovers.is_empty() {
        problems.push(format!("before the run: {}", leftovers.summary()));
    }
    create_ca_secrets(&client, &namespace, env).await;
    let mut operator = OperatorProcess::start(env, &namespace, &prefix);
    let starting = Instant::now();
    operator.wait_ready().await;
    println!("  operator ready in {:.1?}", starting.elapsed());

    let resource = ApiResource::erase::<KafkaUser>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &namespace, &resource);
    let (ready, watch_task) = ReadyWatch::start(api.clone());
    let users = CustomResources::of::<KafkaUser>(&client, &namespace);
    let names: Vec<String> = (0..count).map(|i| format!("{prefix}u{i}")).collect();

    // Creation.
    let metrics_start = operator.metrics();
    let created: Mutex<HashMap<String, Instant>> = Mutex::default();
    let cpu_start = CpuUse::now(env, operator.pid());
    let started = Instant::now();
    futures::stream::iter(names.iter())
        .for_each_concurrent(CREATE_CONCURRENCY, |name| {
            let users = users.clone();
            let created = &created;
            async move {
                users.create(user_document(auth, name)).await;
                created.lock().unwrap().insert(name.clone(), Instant::now());
            }
        })
        .await;
    let created = created.into_inner().unwrap();
    let applied = started.elapsed();
    let mut last_report = Instant::now();
    let all_ready = loop {
        if ready.count() >= count {
            break Some(started.elapsed());
        }
        if started.elapsed() > TIMEOUT {
            break None;
        }
        if last_report.elapsed() >= Duration::from_secs(5) {
            println!(
                "  ... {} Ready after {:.0?}",
                ready.count(),
                started.elapsed()
            );
            last_report = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let metrics_ready = operator.metrics();
    let cpu_ready = CpuUse::now(env, operator.pid());
    let Some(all_ready) = all_ready else {
        problems.push(format!(
            "only {} of {count} Ready after {TIMEOUT:?}",
            ready.count()
        ));
        return finish(&client, &namespace, &prefix, &admin, operator, problems).await;
    };
    let (rss, peak) = operator.rss();
    println!(
        "  {label}: applied in {applied:.1?}, all Ready after {all_ready:.1?}: {:.1} users/s",
        count as f64 / all_ready.as_secs_f64()
    );
    println!("  {label}: operator RSS now {rss:.1} MiB, peak {peak:.1} MiB");
    println!(
        "  created to Ready, per user: {}",
        ready.latencies(&created)
    );
    println!("  creation: {}", cpu_ready.since(&cpu_start));
    let grew = |name: &str| metric(&metrics_ready, name) - metric(&metrics_start, name);
    println!(
        "  creation: {} reconciliations ({} failed; mean {:.0} ms; {}), Kafka requests: {}; Kubernetes writes: {}",
        grew(RECONCILIATIONS),
        grew("strimzi_reconciliations_failed_total"),
        mean_reconciliation_ms(&metrics_start, &metrics_ready),
        duration_buckets(&metrics_start, &metrics_ready),
        growth(&metrics_start, &metrics_ready, KAFKA_REQUESTS),
        growth(&metrics_start, &metrics_ready, API_WRITES),
    );

    if auth == Auth::Scram {
        // What the admin client does before sending one AlterUserScramCredentials request
        // of a full batch (100 users), on one blocking thread.
        let salting = Instant::now();
        for i in 0..100 {
            let password = format!("{i:032}");
            std::hint::black_box(strimzi_operator_common::kafka::scram::salted_password(
                &password, &[7; 32], 4096,
            ));
        }
        println!(
            "  salting 100 passwords (PBKDF2-HMAC-SHA512, 4096 rounds) on one thread: {:.0?}",
            salting.elapsed()
        );
    }

    // What Kafka and Kubernetes hold.
    let state = KafkaState::read(&admin, &prefix).await;
    println!("  Kafka: {}", state.summary());
    let secrets = user_secrets(&client, &namespace).await;
    problems.extend(verify(auth, &names, &state, &secrets));

    // One periodic reconciliation with nothing changed.
    let before = operator.metrics();
    let reconciled = metric(&before, RECONCILIATIONS);
    let waiting = Instant::now();
    let deadline = waiting + INTERVAL * 4;
    let mut first_seen = None;
    let after = loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = operator.metrics();
        let done = metric(&now, RECONCILIATIONS);
        if done > reconciled && first_seen.is_none() {
            first_seen = Some(Instant::now());
        }
        if done >= reconciled + count as f64 || Instant::now() > deadline {
            let took = first_seen.map(|first| first.elapsed());
            // Let the last reconciliations finish their requests.
            tokio::time::sleep(Duration::from_secs(2)).await;
            let after = operator.metrics();
            // Metrics are read every 250 ms: a shorter pass shows as under 0.25 s.
            println!(
                "  periodic reconciliation began {:.1?} after Ready and took {}",
                first_seen.map(|first| first - waiting).unwrap_or_default(),
                match took {
                    Some(took) if took >= Duration::from_millis(250) => format!("about {took:.1?}"),
                    Some(_) => "under 0.25 s".to_owned(),
                    None => "(not seen)".to_owned(),
                }
            );
            break after;
        }
    };
    let delta = |name: &str| metric(&after, name) - metric(&before, name);
    println!(
        "  {label}: one periodic reconciliation ({:.0?} window): {} reconciliations (mean {:.1} ms), \
         {} Kafka requests ({}), {} Kubernetes writes ({})",
        waiting.elapsed(),
        delta(RECONCILIATIONS),
        mean_reconciliation_ms(&before, &after),
        delta(KAFKA_REQUESTS),
        growth(&before, &after, KAFKA_REQUESTS),
        delta(API_WRITES),
        growth(&before, &after, API_WRITES),
    );
    if delta(RECONCILIATIONS) < count as f64 {
        problems.push(format!(
            "the periodic reconciliation reached only {} of {count} users",
            delta(RECONCILIATIONS)
        ));
    }
    if delta(API_WRITES) > 0.0 {
        problems.push(format!(
            "{} Kubernetes writes in a periodic reconciliation that changed nothing",
            delta(API_WRITES)
        ));
    }
    let (rss, peak) = operator.rss();
    println!("  {label}: operator RSS now {rss:.1} MiB, peak {peak:.1} MiB");

    // Deletion: every KafkaUser at once, as the namespace controller deletes them.
    let before = operator.metrics();
    let cpu_deleting = CpuUse::now(env, operator.pid());
    let deleting = Instant::now();
    api.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .unwrap();
    let mut kafka_clean = None;
    let mut secrets_gone = None;
    let mut last_report = Instant::now();
    while (kafka_clean.is_none() || secrets_gone.is_none()) && deleting.elapsed() < TIMEOUT {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if kafka_clean.is_none() {
            let state = KafkaState::read(&admin, &prefix).await;
            if state.is_empty() {
                kafka_clean = Some(deleting.elapsed());
            } else if last_report.elapsed() >= Duration::from_secs(5) {
                println!(
                    "  ... after {:.0?} Kafka still has {}",
                    deleting.elapsed(),
                    state.summary()
                );
                last_report = Instant::now();
            }
        }
        if secrets_gone.is_none() && user_secrets(&client, &namespace).await.is_empty() {
            secrets_gone = Some(deleting.elapsed());
        }
    }
    let after = operator.metrics();
    match kafka_clean {
        Some(took) => println!(
            "  {label}: KafkaUsers deleted; their Kafka credentials, ACLs and quotas gone after {took:.1?}"
        ),
        None => problems.push(format!(
            "Kafka still held users {TIMEOUT:?} after the deletion"
        )),
    }
    match secrets_gone {
        Some(took) => println!("  {label}: their Secrets gone after {took:.1?}"),
        None => problems.push(format!("Secrets left {TIMEOUT:?} after the deletion")),
    }
    println!(
        "  deletion: Kafka requests: {}; Kubernetes writes: {}",
        growth(&before, &after, KAFKA_REQUESTS),
        growth(&before, &after, API_WRITES),
    );
    println!(
        "  deletion: {}",
        CpuUse::now(env, operator.pid()).since(&cpu_deleting)
    );
    let (rss, peak) = operator.rss();
    println!("  {label}: operator RSS at the end {rss:.1} MiB, peak {peak:.1} MiB");
    watch_task.abort();
    finish(&client, &namespace, &prefix, &admin, operator, problems).await
}

/// Stops the operator, removes whatever the run left in Kafka, deletes the namespace.
async fn finish(
    client: &Client,
    namespace: &str,
    prefix: &str,
    admin: &AdminClient,
    operator: OperatorProcess,
    mut problems: Vec<String>,
) -> Vec<String> {
    operator.stop();
    let left = KafkaState::read(admin, prefix).await;
    if !left.is_empty() {
        println!(
            "  the bench removes what is left in Kafka: {}",
            left.summary()
        );
        left.remove(admin).await;
        let still = KafkaState::read(admin, prefix).await;
        if !still.is_empty() {
            problems.push(format!("left in Kafka after cleanup: {}", still.summary()));
        }
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let _ = namespaces.delete(namespace, &DeleteParams::default()).await;
    let deadline = Instant::now() + Duration::from_secs(120);
    while namespaces.get_opt(namespace).await.ok().flatten().is_some() && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for problem in &problems {
        println!("  PROBLEM: {problem}");
    }
    problems
}

fn main() -> ExitCode {
    let mut scenarios = Vec::new();
    for arg in std::env::args().skip(1) {
        let (kind, count) = arg
            .split_once('=')
            .unwrap_or_else(|| panic!("{arg}: expected scram=N or tls=N"));
        let count: usize = count
            .parse()
            .unwrap_or_else(|_| panic!("{arg}: not a count"));
        let auth = match kind {
            "scram" => Auth::Scram,
            "tls" => Auth::Tls,
            _ => panic!("{arg}: expected scram=N or tls=N"),
        };
        if count > 0 {
            scenarios.push((auth, count));
        }
    }
    if std::env::args().len() == 1 {
        scenarios = vec![(Auth::Scram, 1000), (Auth::Tls, 200)];
    }
    let starting = Instant::now();
    let env = TestEnv::shared();
    println!("test environment up in {:.1?}", starting.elapsed());
    let mut problems = Vec::new();
    env.runtime().block_on(async {
        for (auth, count) in scenarios {
            for problem in bench(env, auth, count).await {
                problems.push(format!("{}={count}: {problem}", auth.name()));
            }
        }
    });
    if problems.is_empty() {
        println!("all checks passed");
        ExitCode::SUCCESS
    } else {
        println!("FAILED:");
        for problem in &problems {
            println!("  {problem}");
        }
        ExitCode::FAILURE
    }
}
