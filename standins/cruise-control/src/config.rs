//! What the stand-in reads at start, exactly where Cruise Control's pod has it (CONTRACT.md
//! 5.1, 5.2): the environment, `custom-config/cruisecontrol.properties` and `capacity.json`,
//! the credentials file, the REST API's certificate in `cc-certs/` and the cluster CA in
//! `cluster-ca-certs/`. Anything missing or malformed is a [`ConfigError`] naming the file,
//! variable or key.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use strimzi_operator_common::kafka::{AdminConfig, SecurityProtocol, TlsConfig};

use strimzi_standin_common::properties;

/// Package of Cruise Control's goal classes.
const GOALS_PACKAGE: &str = "com.linkedin.kafka.cruisecontrol.analyzer.goals.";
/// Package of the Kafka-assigner goal classes.
const ASSIGNER_PACKAGE: &str = "com.linkedin.kafka.cruisecontrol.analyzer.kafkaassigner.";

/// The goal classes Cruise Control 2.5 has (simple names, in [`GOALS_PACKAGE`]).
pub const KNOWN_GOALS: [&str; 21] = [
    "RackAwareGoal",
    "RackAwareDistributionGoal",
    "MinTopicLeadersPerBrokerGoal",
    "ReplicaCapacityGoal",
    "DiskCapacityGoal",
    "NetworkInboundCapacityGoal",
    "NetworkOutboundCapacityGoal",
    "CpuCapacityGoal",
    "ReplicaDistributionGoal",
    "PotentialNwOutGoal",
    "DiskUsageDistributionGoal",
    "NetworkInboundUsageDistributionGoal",
    "NetworkOutboundUsageDistributionGoal",
    "CpuUsageDistributionGoal",
    "TopicReplicaDistributionGoal",
    "LeaderReplicaDistributionGoal",
    "LeaderBytesInDistributionGoal",
    "PreferredLeaderElectionGoal",
    "BrokerSetAwareGoal",
    "IntraBrokerDiskCapacityGoal",
    "IntraBrokerDiskUsageDistributionGoal",
];
/// The Kafka-assigner goals (simple names, in [`ASSIGNER_PACKAGE`]).
pub const KNOWN_ASSIGNER_GOALS: [&str; 2] = [
    "KafkaAssignerDiskUsageDistributionGoal",
    "KafkaAssignerEvenRackAwareGoal",
];

/// Options the stand-in reads; every other key is accepted and listed once as ignored.
const READ_KEYS: [&str; 22] = [
    "goals",
    "default.goals",
    "hard.goals",
    "anomaly.detection.goals",
    "webserver.security.enable",
    "webserver.auth.credentials.file",
    "webserver.ssl.enable",
    "webserver.http.port",
    "partition.metrics.window.ms",
    "num.partition.metrics.windows",
    "metric.sampling.interval.ms",
    "completed.user.task.retention.time.ms",
    "max.active.user.tasks",
    "execution.progress.check.interval.ms",
    "num.concurrent.partition.movements.per.broker",
    "partition.metric.sample.store.topic",
    "broker.metric.sample.store.topic",
    "sample.store.topic.replication.factor",
    "partition.sample.store.topic.partition.count",
    "broker.sample.store.topic.partition.count",
    "capacity.config.file",
    "bootstrap.servers",
];

/// Where the pod mounts the files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// `custom-config/`: `cruisecontrol.properties`, `capacity.json`.
    pub config_dir: PathBuf,
    /// `cc-certs/`: `cruise-control.crt`, `cruise-control.key`.
    pub cc_certs_dir: PathBuf,
    /// `cluster-ca-certs/`: every `*.crt` is trusted for the brokers.
    pub cluster_ca_dir: PathBuf,
}

impl Default for Paths {
    fn default() -> Self {
        Self {
            config_dir: PathBuf::from("/opt/cruise-control/custom-config"),
            cc_certs_dir: PathBuf::from("/etc/cruise-control/cc-certs"),
            cluster_ca_dir: PathBuf::from("/etc/cruise-control/cluster-ca-certs"),
        }
    }
}

/// A configuration the stand-in cannot start with: one line naming what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {problem}")]
pub struct ConfigError {
    /// The file (with the key, `file: key`) or variable.
    pub place: String,
    /// What is wrong.
    pub problem: String,
}

fn error(place: impl Into<String>, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        place: place.into(),
        problem: problem.into(),
    }
}

/// A REST API role (Jetty's hash login roles Cruise Control uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// `state`, `user_tasks`, `kafka_cluster_state`, `review_board`.
    Viewer,
    /// Every GET endpoint.
    User,
    /// Everything.
    Admin,
}

/// A REST API user from the credentials file.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiUser {
    /// The name.
    pub name: String,
    /// The password.
    pub password: String,
    /// The highest role given.
    pub role: Role,
}

impl std::fmt::Debug for ApiUser {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ApiUser")
            .field("name", &self.name)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// The REST API's settings.
#[derive(Clone, Debug)]
pub struct ApiSettings {
    /// Port (`webserver.http.port`, default 9090).
    pub port: u16,
    /// HTTPS with this certificate chain and key (PEM), else plain HTTP.
    pub tls: Option<(String, String)>,
    /// Basic authentication against these users, else none.
    pub users: Option<Vec<ApiUser>>,
}

/// The goals configured: full class names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Goals {
    /// `goals`: what requests may name, in priority order.
    pub supported: Vec<String>,
    /// `default.goals`: used when a request names none.
    pub default: Vec<String>,
    /// `hard.goals`: a request naming goals must name these unless it skips the check.
    pub hard: Vec<String>,
}

impl Goals {
    /// The configured goal `name` (full or simple class name) stands for, if any.
    pub fn resolve(&self, name: &str) -> Option<&str> {
        self.supported
            .iter()
            .find(|goal| *goal == name || simple_name(goal) == name)
            .map(String::as_str)
    }
}

/// The simple class name of a goal class.
pub fn simple_name(goal: &str) -> &str {
    goal.rsplit('.').next().unwrap_or(goal)
}

/// Whether `class` is one of Cruise Control's goal classes (full name).
pub fn is_known_goal(class: &str) -> bool {
    let known = |package: &str, names: &[&str]| {
        class
            .strip_prefix(package)
            .is_some_and(|name| names.contains(&name))
    };
    known(GOALS_PACKAGE, &KNOWN_GOALS) || known(ASSIGNER_PACKAGE, &KNOWN_ASSIGNER_GOALS)
}

/// The capacity of one broker from `capacity.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct BrokerCapacity {
    /// Disk in MiB (the sum over log directories when given per directory).
    pub disk_mb: f64,
    /// CPU cores (`num.cores`), or the CPU figure as given.
    pub cpu: f64,
    /// Inbound network in KiB/s.
    pub network_in_kb: f64,
    /// Outbound network in KiB/s.
    pub network_out_kb: f64,
}

/// `capacity.json`: per broker ID, `-1` being the default for brokers not listed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Capacities(pub BTreeMap<i32, BrokerCapacity>);

impl Capacities {
    /// The capacity of `broker`, else the default entry's.
    pub fn of(&self, broker: i32) -> Option<&BrokerCapacity> {
        self.0.get(&broker).or_else(|| self.0.get(&-1))
    }
}

/// How the load monitor counts metric windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSettings {
    /// `partition.metrics.window.ms`.
    pub window: Duration,
    /// `num.partition.metrics.windows`.
    pub windows: u32,
    /// `metric.sampling.interval.ms`.
    pub sampling_interval: Duration,
}

/// A sample store topic the stand-in creates, as Cruise Control does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleTopic {
    /// Its name.
    pub name: String,
    /// Its partition count.
    pub partitions: i32,
    /// Its replication factor, `None` for the brokers' default.
    pub replication_factor: Option<i16>,
}

/// Everything the stand-in starts with.
#[derive(Clone, Debug)]
pub struct Settings {
    /// How to reach Kafka: mutual TLS with `cc-certs` against the cluster CA.
    pub kafka: AdminConfig,
    /// The REST API.
    pub api: ApiSettings,
    /// The goals.
    pub goals: Goals,
    /// `capacity.json`.
    pub capacities: Capacities,
    /// The load monitor's windows.
    pub windows: WindowSettings,
    /// `completed.user.task.retention.time.ms`.
    pub task_retention: Duration,
    /// `max.active.user.tasks`.
    pub max_active_tasks: usize,
    /// `execution.progress.check.interval.ms`.
    pub progress_check_interval: Duration,
    /// `num.concurrent.partition.movements.per.broker`.
    pub movements_per_broker: usize,
    /// The sample store topics to create.
    pub sample_topics: Vec<SampleTopic>,
    /// Serve Prometheus metrics on [`METRICS_PORT`] (`CRUISE_CONTROL_JMX_EXPORTER_ENABLED`).
    pub metrics: bool,
    /// Keys of `cruisecontrol.properties` that the stand-in does not act on.
    pub ignored: Vec<String>,
}

/// The port of the Prometheus metrics, as the pod declares it (`tcp-prometheus`).
pub const METRICS_PORT: u16 = 9404;

/// Reads the configuration from the environment (`env`) and the files under `paths`.
pub fn load(env: impl Fn(&str) -> Option<String>, paths: &Paths) -> Result<Settings, ConfigError> {
    let variable = |name: &str| -> Result<String, ConfigError> {
        env(name)
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
            .ok_or_else(|| error(name, "not set"))
    };
    let flag = |name: &str| -> Result<bool, ConfigError> {
        let value = variable(name)?;
        match value.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(error(name, format!("{value:?} is neither true nor false"))),
        }
    };
    let bootstrap = variable("STRIMZI_KAFKA_BOOTSTRAP_SERVERS")?;
    let ssl_env = flag("STRIMZI_CC_API_SSL_ENABLED")?;
    let auth_env = flag("STRIMZI_CC_API_AUTH_ENABLED")?;
    let metrics = match env("CRUISE_CONTROL_JMX_EXPORTER_ENABLED") {
        None => false,
        Some(_) => flag("CRUISE_CONTROL_JMX_EXPORTER_ENABLED")?,
    };

    let properties_file = paths.config_dir.join("cruisecontrol.properties");
    if metrics {
        // The JMX exporter's rules: not applied (the stand-in has its own metrics), but the
        // file must be there as the operator mounts it.
        let file = paths.config_dir.join("metrics-config.json");
        serde_json::from_str::<Value>(&read(&file)?)
            .map_err(|problem| error(file.display().to_string(), problem.to_string()))?;
    }
    let options = properties::parse(&read(&properties_file)?)
        .map_err(|problem| error(properties_file.display().to_string(), problem.to_string()))?;
    let option = Options {
        file: &properties_file,
        entries: &options,
    };
    let ssl = option.flag("webserver.ssl.enable", true)?;
    let auth = option.flag("webserver.security.enable", true)?;
    if ssl != ssl_env {
        return Err(error(
            "STRIMZI_CC_API_SSL_ENABLED",
            format!(
                "{ssl_env} but webserver.ssl.enable is {ssl} in {}",
                properties_file.display()
            ),
        ));
    }
    if auth != auth_env {
        return Err(error(
            "STRIMZI_CC_API_AUTH_ENABLED",
            format!(
                "{auth_env} but webserver.security.enable is {auth} in {}",
                properties_file.display()
            ),
        ));
    }

    let certificate_file = paths.cc_certs_dir.join("cruise-control.crt");
    let key_file = paths.cc_certs_dir.join("cruise-control.key");
    let certificate = pem(&certificate_file, "CERTIFICATE")?;
    let key = pem(&key_file, "PRIVATE KEY")?;
    let ca_bundle = ca_bundle(&paths.cluster_ca_dir)?;

    let users = if auth {
        let file = option
            .text("webserver.auth.credentials.file")?
            .ok_or_else(|| {
                error(
                    place(&properties_file, "webserver.auth.credentials.file"),
                    "not set while webserver.security.enable is true",
                )
            })?;
        let file = PathBuf::from(file);
        Some(parse_users(&file, &read(&file)?)?)
    } else {
        None
    };
    let api = ApiSettings {
        port: option.number("webserver.http.port", 9090)?,
        tls: ssl.then(|| (certificate.clone(), key.clone())),
        users,
    };

    let goals = goals(&option)?;
    let capacity_file = paths.config_dir.join("capacity.json");
    let capacities = parse_capacities(&capacity_file, &read(&capacity_file)?)?;

    let windows = WindowSettings {
        window: Duration::from_millis(option.number("partition.metrics.window.ms", 300_000)?),
        windows: option.number("num.partition.metrics.windows", 1)?,
        sampling_interval: Duration::from_millis(
            option.number("metric.sampling.interval.ms", 120_000)?,
        ),
    };
    if windows.window.is_zero() || windows.windows == 0 || windows.sampling_interval.is_zero() {
        return Err(error(
            place(&properties_file, "partition.metrics.window.ms"),
            "the window length, window count and sampling interval must be positive",
        ));
    }
    let replication: Option<i16> = option
        .text("sample.store.topic.replication.factor")?
        .map(|_| option.number("sample.store.topic.replication.factor", 0))
        .transpose()?;
    let sample_topics = vec![
        SampleTopic {
            name: option
                .text("partition.metric.sample.store.topic")?
                .unwrap_or("__KafkaCruiseControlPartitionMetricSamples")
                .to_owned(),
            partitions: option.number("partition.sample.store.topic.partition.count", 32)?,
            replication_factor: replication,
        },
        SampleTopic {
            name: option
                .text("broker.metric.sample.store.topic")?
                .unwrap_or("__KafkaCruiseControlModelTrainingSamples")
                .to_owned(),
            partitions: option.number("broker.sample.store.topic.partition.count", 32)?,
            replication_factor: replication,
        },
    ];

    let mut kafka = AdminConfig::plaintext(&bootstrap);
    if kafka.bootstrap_servers.is_empty() {
        return Err(error("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "no host:port"));
    }
    kafka.security_protocol = SecurityProtocol::Ssl;
    kafka.client_id = "strimzi-cruise-control-standin".to_owned();
    kafka.tls = Some(TlsConfig {
        ca_pem: ca_bundle,
        client_identity_pem: Some(format!("{certificate}\n{key}")),
        verify_hostname: true,
    });

    Ok(Settings {
        kafka,
        api,
        goals,
        capacities,
        windows,
        task_retention: Duration::from_millis(
            option.number("completed.user.task.retention.time.ms", 86_400_000)?,
        ),
        max_active_tasks: option.number("max.active.user.tasks", 5)?,
        progress_check_interval: Duration::from_millis(
            option.number("execution.progress.check.interval.ms", 10_000)?,
        ),
        movements_per_broker: option.number("num.concurrent.partition.movements.per.broker", 5)?,
        sample_topics,
        metrics,
        ignored: options
            .keys()
            .filter(|key| !READ_KEYS.contains(&key.as_str()))
            .cloned()
            .collect(),
    })
}

/// `file: key`.
fn place(file: &Path, key: &str) -> String {
    format!("{}: {key}", file.display())
}

/// The options of `cruisecontrol.properties`, read with errors naming the file and key.
struct Options<'a> {
    file: &'a Path,
    entries: &'a BTreeMap<String, String>,
}

impl Options<'_> {
    fn text(&self, key: &str) -> Result<Option<&str>, ConfigError> {
        Ok(self
            .entries
            .get(key)
            .map(|value| value.trim())
            .filter(|value| !value.is_empty()))
    }

    fn flag(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self.text(key)? {
            None => Ok(default),
            Some(value) if value.eq_ignore_ascii_case("true") => Ok(true),
            Some(value) if value.eq_ignore_ascii_case("false") => Ok(false),
            Some(value) => Err(error(
                place(self.file, key),
                format!("{value:?} is neither true nor false"),
            )),
        }
    }

    fn number<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, ConfigError> {
        match self.text(key)? {
            None => Ok(default),
            Some(value) => value.parse().map_err(|_| {
                error(
                    place(self.file, key),
                    format!("{value:?} is not a valid {}", std::any::type_name::<T>()),
                )
            }),
        }
    }

    fn goal_list(&self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        let Some(value) = self.text(key)? else {
            return Ok(None);
        };
        let goals: Vec<String> = value
            .split(',')
            .map(str::trim)
            .filter(|goal| !goal.is_empty())
            .map(str::to_owned)
            .collect();
        if let Some(unknown) = goals.iter().find(|goal| !is_known_goal(goal)) {
            return Err(error(
                place(self.file, key),
                format!("{unknown} is not one of Cruise Control's goal classes"),
            ));
        }
        Ok(Some(goals))
    }
}

/// `goals`, `default.goals`, `hard.goals`, `anomaly.detection.goals`: known classes, and the
/// default, hard and anomaly detection goals among the supported ones.
fn goals(option: &Options<'_>) -> Result<Goals, ConfigError> {
    let file = option.file;
    let supported = option
        .goal_list("goals")?
        .ok_or_else(|| error(place(file, "goals"), "not set"))?;
    let default = option
        .goal_list("default.goals")?
        .unwrap_or_else(|| supported.clone());
    let hard = option.goal_list("hard.goals")?.unwrap_or_default();
    let anomaly = option
        .goal_list("anomaly.detection.goals")?
        .unwrap_or_default();
    let set: BTreeSet<&String> = supported.iter().collect();
    for (key, list) in [
        ("default.goals", &default),
        ("hard.goals", &hard),
        ("anomaly.detection.goals", &anomaly),
    ] {
        if let Some(outside) = list.iter().find(|goal| !set.contains(goal)) {
            return Err(error(
                place(file, key),
                format!("{outside} is not among goals"),
            ));
        }
    }
    let defaults: BTreeSet<&String> = default.iter().collect();
    if let Some(outside) = anomaly.iter().find(|goal| !defaults.contains(goal)) {
        return Err(error(
            place(file, "anomaly.detection.goals"),
            format!("{outside} is not among default.goals"),
        ));
    }
    Ok(Goals {
        supported,
        default,
        hard,
    })
}

/// A file's text.
fn read(file: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(file)
        .map_err(|problem| error(file.display().to_string(), problem.to_string()))
}

/// A PEM file holding at least one `-----BEGIN <label>` block.
fn pem(file: &Path, label: &str) -> Result<String, ConfigError> {
    let text = read(file)?;
    if !text.contains(&format!("-----BEGIN {label}-----")) {
        return Err(error(
            file.display().to_string(),
            format!("no PEM {label} (an unencrypted PKCS#8 key and PEM certificates are expected)"),
        ));
    }
    Ok(text)
}

/// Every `*.crt` of the cluster CA directory, concatenated.
fn ca_bundle(dir: &Path) -> Result<String, ConfigError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|problem| error(dir.display().to_string(), problem.to_string()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "crt"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(error(
            dir.display().to_string(),
            "no *.crt file (the cluster CA certificate ca.crt is expected)",
        ));
    }
    let mut bundle = String::new();
    for file in files {
        bundle.push_str(&pem(&file, "CERTIFICATE")?);
        bundle.push('\n');
    }
    Ok(bundle)
}

/// The credentials file: `name: password,ROLE[,ROLE…]` per line; blank lines and `#`
/// comments skipped.
pub fn parse_users(file: &Path, text: &str) -> Result<Vec<ApiUser>, ConfigError> {
    let mut users = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |problem: &str| {
            error(
                format!("{}: line {}", file.display(), number + 1),
                format!("{problem}; expected `name: password,ROLE`"),
            )
        };
        let (name, rest) = line.split_once(':').ok_or_else(|| bad("no `:`"))?;
        let mut parts = rest.split(',').map(str::trim);
        let password = parts.next().unwrap_or_default();
        let roles: Vec<&str> = parts.collect();
        if name.trim().is_empty() || password.is_empty() || roles.is_empty() {
            return Err(bad("a name, a password and at least one role are needed"));
        }
        let mut role = None;
        for name in roles {
            let parsed = match name {
                "ADMIN" => Role::Admin,
                "USER" => Role::User,
                "VIEWER" => Role::Viewer,
                other => {
                    return Err(bad(&format!(
                        "unknown role {other:?} (ADMIN, USER, VIEWER)"
                    )));
                }
            };
            role = role.max(Some(parsed));
        }
        users.push(ApiUser {
            name: name.trim().to_owned(),
            password: password.to_owned(),
            role: role.unwrap_or(Role::Viewer),
        });
    }
    Ok(users)
}

/// `capacity.json`: `{"brokerCapacities": [{"brokerId", "capacity": {"DISK", "CPU", "NW_IN",
/// "NW_OUT"}}]}`, numbers as JSON numbers or decimal strings; `DISK` also per log directory,
/// `CPU` also as `{"num.cores": …}`.
pub fn parse_capacities(file: &Path, text: &str) -> Result<Capacities, ConfigError> {
    let at = |what: &str, problem: String| error(format!("{}: {what}", file.display()), problem);
    let json: Value =
        serde_json::from_str(text).map_err(|problem| at("JSON", problem.to_string()))?;
    let entries = json
        .get("brokerCapacities")
        .and_then(Value::as_array)
        .ok_or_else(|| at("brokerCapacities", "missing or not a list".to_owned()))?;
    let mut capacities = BTreeMap::new();
    for (index, entry) in entries.iter().enumerate() {
        let what = format!("brokerCapacities[{index}]");
        let broker = entry
            .get("brokerId")
            .and_then(|id| number(id).map(|id| id as i32))
            .ok_or_else(|| at(&what, "no brokerId".to_owned()))?;
        let capacity = entry
            .get("capacity")
            .ok_or_else(|| at(&what, "no capacity".to_owned()))?;
        let figure = |key: &str| -> Result<f64, ConfigError> {
            let value = capacity
                .get(key)
                .ok_or_else(|| at(&format!("{what}.capacity.{key}"), "missing".to_owned()))?;
            let parsed = match value {
                Value::Object(map) if key == "CPU" => map.get("num.cores").and_then(number),
                Value::Object(map) => map
                    .values()
                    .map(number)
                    .try_fold(0.0, |sum, item| item.map(|item| sum + item)),
                other => number(other),
            };
            parsed
                .filter(|figure| figure.is_finite() && *figure >= 0.0)
                .ok_or_else(|| {
                    at(
                        &format!("{what}.capacity.{key}"),
                        format!("{value} is not a non-negative number"),
                    )
                })
        };
        capacities.insert(
            broker,
            BrokerCapacity {
                disk_mb: figure("DISK")?,
                cpu: figure("CPU")?,
                network_in_kb: figure("NW_IN")?,
                network_out_kb: figure("NW_OUT")?,
            },
        );
    }
    if capacities.is_empty() {
        return Err(at("brokerCapacities", "empty".to_owned()));
    }
    Ok(Capacities(capacities))
}

/// A JSON number or decimal string.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}
