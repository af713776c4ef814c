//! Cruise Control (`spec.cruiseControl`): the `<cluster>-cruise-control` Deployment running
//! the Cruise Control that Strimzi's Kafka image carries, started by the image's own script
//! (`/opt/cruise-control/cruise_control_run.sh`) with the environment variables and files
//! that script and its helpers read:
//!
//! - the ConfigMap `<cluster>-cruise-control-config` with the server configuration
//!   (`cruisecontrol.properties`: Strimzi's defaults, then the user's options without the
//!   forbidden ones), the broker capacities (`capacity.json`, from the brokers' storage and
//!   resources or `brokerCapacity`) and the logging configuration;
//! - the Secret `<cluster>-cruise-control-certs` with its certificate (signed by the cluster
//!   CA, valid for the Service's names and `localhost`), used both by its REST API and as its
//!   client certificate towards the brokers;
//! - the Secret `<cluster>-cruise-control-api` with the REST API users: the credentials file
//!   Cruise Control reads (Jetty's `user: password,ROLE` lines) and the passwords of the
//!   operator's own users (`rebalance-operator`, `healthcheck`, and `topic-operator` when the
//!   topic operator runs);
//! - the Service `<cluster>-cruise-control` (port 9090, `rest-api`), the ServiceAccount and a
//!   NetworkPolicy that opens the REST API to the cluster operator and the entity operator.
//!
//! The brokers' side (the metrics reporter) is in the broker configuration.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, ExecAction, Probe, Secret, Service, ServiceAccount,
};
use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicySpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use rand::Rng;
use rand::distr::Alphanumeric;
use serde_json::{Value, json};
use strimzi_api::annotations;
use strimzi_api::common::Probe as ProbeOptions;
use strimzi_api::kafka::{ApiUsers, BrokerCapacity, BrokerCapacityOverride, CruiseControlSpec};
use strimzi_api::labels;
use strimzi_api::naming;
use strimzi_api::selectors::ComponentLabels;
use strimzi_api::storage::{SingleVolumeStorage, Storage};
use strimzi_certificate_manager::leaf::{IssuedCertificate, LeafSpec, LeafStorage, LeafUsage};

use super::{
    DeploymentParts, certificate_annotations, component_labels, log4j2_properties, secret_volume,
    tmp_volume,
};
use crate::model::config::hash_stub;
use crate::model::config::options::{FORBIDDEN_OPTION_REASON, Properties, config_value};
use crate::model::containers::{
    add_shared_and_template_env, container_port, env, mount, template_mounts,
};
use crate::model::listeners::services::REPLICATION_PORT;
use crate::model::meta::StringMap;
use crate::model::nodes::pods::{HeapSizing, jvm_env};
use crate::model::quantity;
use crate::model::security::policies::{ingress_rule, peer};
use crate::model::{KafkaCluster, ModelError, ModelWarning, NodePool};

/// The component type of Cruise Control's objects.
pub const COMPONENT_TYPE: &str = "cruise-control";
/// Port of the REST API.
pub const REST_API_PORT: i32 = 9090;
const REST_API_PORT_NAME: &str = "rest-api";
/// Path the health check asks.
const HEALTHCHECK_PATH: &str = "/kafkacruisecontrol/state";
/// Port of the JMX Prometheus exporter.
const METRICS_PORT: i32 = 9404;

/// The REST API user the cluster operator's rebalance controller uses (an administrator).
pub const REBALANCE_OPERATOR_USER: &str = "rebalance-operator";
/// Key of its password in the API Secret.
pub const REBALANCE_OPERATOR_PASSWORD_KEY: &str = "rebalance-operator.password";
/// The REST API user of the container's health check.
pub const HEALTHCHECK_USER: &str = "healthcheck";
/// Key of its password in the API Secret.
pub const HEALTHCHECK_PASSWORD_KEY: &str = "healthcheck.password";
/// Key of Cruise Control's credentials file in the API Secret.
pub const AUTH_FILE_KEY: &str = "cruise-control.authFile";
/// The REST API user of the topic operator (an administrator), when it runs.
pub const TOPIC_OPERATOR_USER: &str = "topic-operator";
/// Key of the topic operator's user name in its own API Secret.
pub const TOPIC_OPERATOR_USERNAME_KEY: &str = "topic-operator.apiAdminName";
/// Key of the topic operator's password in its own API Secret.
pub const TOPIC_OPERATOR_PASSWORD_KEY: &str = "topic-operator.apiAdminPassword";
/// User names the operators keep for themselves.
const RESERVED_USERS: [&str; 3] = [
    REBALANCE_OPERATOR_USER,
    HEALTHCHECK_USER,
    TOPIC_OPERATOR_USER,
];
/// Length of generated API passwords.
const PASSWORD_LENGTH: usize = 16;

/// File names in the ConfigMap.
const SERVER_CONFIG_FILE: &str = "cruisecontrol.properties";
const CAPACITY_FILE: &str = "capacity.json";
const LOGGING_FILE: &str = "log4j2.properties";
const METRICS_FILE: &str = "metrics-config.json";
/// Where the container finds them.
const CONFIG_MOUNT: &str = "/opt/cruise-control/custom-config/";
/// Where the container finds the API Secret.
const API_AUTH_MOUNT: &str = "/opt/cruise-control/api-auth-config/";

/// The goals Cruise Control may use, in Strimzi's priority order.
pub const GOALS: [&str; 17] = [
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.RackAwareGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.MinTopicLeadersPerBrokerGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.ReplicaCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.DiskCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.NetworkInboundCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.NetworkOutboundCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.CpuCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.ReplicaDistributionGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.PotentialNwOutGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.DiskUsageDistributionGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.NetworkInboundUsageDistributionGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.NetworkOutboundUsageDistributionGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.CpuUsageDistributionGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.TopicReplicaDistributionGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.LeaderReplicaDistributionGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.LeaderBytesInDistributionGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.PreferredLeaderElectionGoal",
];

/// The goals every proposal must meet unless a request skips the check.
const HARD_GOALS: [&str; 6] = [
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.RackAwareGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.ReplicaCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.DiskCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.NetworkInboundCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.NetworkOutboundCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.CpuCapacityGoal",
];

/// Cruise Control's own default anomaly detection goals, which must be among the default
/// goals for it to start.
const DEFAULT_ANOMALY_DETECTION_GOALS: [&str; 4] = [
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.RackAwareGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.MinTopicLeadersPerBrokerGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.ReplicaCapacityGoal",
    "com.linkedin.kafka.cruisecontrol.analyzer.goals.DiskCapacityGoal",
];

/// Topic of the brokers' metrics reporter, unless `metric.reporter.topic` says otherwise.
pub const METRICS_REPORTER_TOPIC: &str = "strimzi.cruisecontrol.metrics";

/// Option prefixes the operator keeps for itself (connection, TLS, web server paths, the
/// capacity file, self-healing, the topic configuration provider).
const FORBIDDEN_PREFIXES: [&str; 18] = [
    "bootstrap.servers",
    "client.id",
    "zookeeper.",
    "network.",
    "security.",
    "failed.brokers.zk.path",
    "webserver.http.",
    "webserver.api.urlprefix",
    "webserver.session.path",
    "webserver.accesslog.",
    "two.step.",
    "request.reason.required",
    "metric.reporter.sampler.bootstrap.servers",
    "capacity.config.file",
    "self.healing.",
    "ssl.",
    "kafka.broker.failure.detection.enable",
    "topic.config.provider.class",
];
/// Options under a forbidden prefix that still pass.
const FORBIDDEN_PREFIX_EXCEPTIONS: [&str; 8] = [
    "ssl.cipher.suites",
    "ssl.protocol",
    "ssl.enabled.protocols",
    "webserver.http.cors.enabled",
    "webserver.http.cors.origin",
    "webserver.http.cors.exposeheaders",
    "webserver.security.enable",
    "webserver.ssl.enable",
];

/// Capacity defaults when neither `brokerCapacity` nor the brokers' resources say: one core,
/// 10,000 KiB/s each way, 100,000 MiB of disk.
const DEFAULT_CPU_CORES: f64 = 1.0;
const DEFAULT_NETWORK_KIB: f64 = 10_000.0;
const DEFAULT_DISK_MIB: f64 = 100_000.0;

/// The Secret name and certificate spec of Cruise Control: a server certificate (also used
/// as its client certificate towards the brokers) for its Service's names and `localhost`,
/// where its own health check connects.
pub fn certificate(cluster: &KafkaCluster) -> (String, LeafSpec) {
    let service = naming::cruise_control(&cluster.name);
    let namespace = &cluster.namespace;
    let dns_names = BTreeSet::from([
        service.clone(),
        format!("{service}.{namespace}"),
        format!("{service}.{namespace}.svc"),
        format!(
            "{service}.{namespace}.svc.{}",
            cluster.config.cluster_domain
        ),
        "localhost".to_owned(),
    ]);
    (
        naming::cruise_control_certs_secret(&cluster.name),
        LeafSpec {
            name: COMPONENT_TYPE.to_owned(),
            common_name: service,
            organization: Some(strimzi_certificate_manager::authority::ORGANIZATION.to_owned()),
            dns_names,
            ip_addresses: BTreeSet::new(),
            usage: LeafUsage::Server,
            storage: LeafStorage::WithKeyStore,
        },
    )
}

/// Whether the REST API uses TLS and authentication (`webserver.ssl.enable`,
/// `webserver.security.enable`, both on unless the user turns them off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiSecurity {
    /// HTTPS with Cruise Control's certificate.
    pub tls: bool,
    /// HTTP basic authentication against the credentials file.
    pub authentication: bool,
}

impl ApiSecurity {
    /// The REST API's security as `spec` configures it.
    pub fn of(spec: &CruiseControlSpec) -> Self {
        let enabled = |key: &str| {
            spec.config
                .as_ref()
                .and_then(|config| config.get(key))
                .and_then(config_value)
                .is_none_or(|value| value.trim().eq_ignore_ascii_case("true"))
        };
        Self {
            tls: enabled("webserver.ssl.enable"),
            authentication: enabled("webserver.security.enable"),
        }
    }
}

/// What Cruise Control's objects are built from besides the Kafka and its pools.
#[derive(Clone, Copy, Debug)]
pub struct CruiseControlInputs<'a> {
    /// Cruise Control's certificate, issued by the caller with [`certificate`]'s request.
    pub certificate: Option<&'a IssuedCertificate>,
    /// The cluster CA certificate generation.
    pub cluster_ca_cert_generation: u32,
    /// The cluster CA key generation.
    pub cluster_ca_key_generation: u32,
    /// The API Secret as it is, whose passwords are kept.
    pub api_secret: Option<&'a Secret>,
    /// The topic operator's API Secret as it is, whose password is kept.
    pub topic_operator_api_secret: Option<&'a Secret>,
    /// The value of `apiUsers.valueFrom.secretKeyRef` (the user's extra API users), when set
    /// and the Secret holds the key.
    pub user_api_users: Option<&'a str>,
    /// The content of the metrics ConfigMap `metricsConfig` refers to, when set and found.
    pub metrics: Option<&'a str>,
}

/// Every object of Cruise Control.
#[derive(Clone, Debug)]
pub struct CruiseControlObjects {
    /// `<cluster>-cruise-control`.
    pub service_account: ServiceAccount,
    /// `<cluster>-cruise-control`, the REST API.
    pub service: Service,
    /// `<cluster>-cruise-control-config`.
    pub config_map: ConfigMap,
    /// `<cluster>-cruise-control-certs` and `<cluster>-cruise-control-api`, and the topic
    /// operator's `<cluster>-entity-topic-operator-cc-api` when it runs.
    pub secrets: Vec<Secret>,
    /// `<cluster>-cruise-control`, unless the operator generates no NetworkPolicies.
    pub network_policy: Option<NetworkPolicy>,
    /// `<cluster>-cruise-control`.
    pub deployment: Deployment,
}

/// Checks `spec.cruiseControl`: at least two brokers and capacities that parse.
pub(crate) fn validate(cluster: &KafkaCluster) -> Result<(), ModelError> {
    let Some(spec) = &cluster.kafka.spec.cruise_control else {
        return Ok(());
    };
    let invalid = |message: String| Err(ModelError::InvalidConfiguration(message));
    if cluster.brokers().count() < 2 {
        return invalid(format!(
            "Kafka {}/{} has invalid configuration. Cruise Control needs at least two Kafka \
             brokers.",
            cluster.namespace, cluster.name
        ));
    }
    if let Some(capacity) = &spec.broker_capacity {
        let overrides = capacity.overrides.iter().flatten();
        let cpus = capacity
            .cpu
            .iter()
            .chain(overrides.clone().filter_map(|o| o.cpu.as_ref()));
        for cpu in cpus {
            if parse_cpu_cores(cpu).is_none() {
                return invalid(format!(
                    "spec.cruiseControl.brokerCapacity: CPU capacity {cpu:?} is not a number \
                     of cores (e.g. \"2\", \"1.5\" or \"1500m\")"
                ));
            }
        }
        let networks = [&capacity.inbound_network, &capacity.outbound_network]
            .into_iter()
            .flatten()
            .chain(overrides.flat_map(|o| {
                [&o.inbound_network, &o.outbound_network]
                    .into_iter()
                    .flatten()
            }));
        for network in networks {
            if parse_throughput_kib(network).is_none() {
                return invalid(format!(
                    "spec.cruiseControl.brokerCapacity: network capacity {network:?} is not a \
                     throughput (e.g. \"10000KB/s\", \"10MiB/s\")"
                ));
            }
        }
    }
    Ok(())
}

/// Warnings about the options of `spec.cruiseControl.config` the operator dropped.
pub(crate) fn configuration_warnings(cluster: &KafkaCluster) -> Vec<ModelWarning> {
    let Some(spec) = &cluster.kafka.spec.cruise_control else {
        return Vec::new();
    };
    let (_, dropped) = server_options(cluster, spec);
    dropped
        .into_iter()
        .map(|key| {
            ModelWarning::new(
                FORBIDDEN_OPTION_REASON,
                format!(
                    "Cruise Control configuration option \"{key}\" is forbidden or has an \
                     unsupported value and will be ignored"
                ),
            )
        })
        .collect()
}

/// Checks the user's extra API users (the content of the Secret `apiUsers` refers to): one
/// `name: password,ROLE` per line, no reserved name, no `ADMIN` role.
pub fn validate_user_api_users(content: &str) -> Result<(), ModelError> {
    for entry in parse_api_users(content)? {
        if RESERVED_USERS.contains(&entry.name.as_str()) {
            return Err(ModelError::InvalidConfiguration(format!(
                "The Cruise Control API user name {:?} is reserved for the operators ({})",
                entry.name,
                RESERVED_USERS.join(", ")
            )));
        }
        if entry.role.eq_ignore_ascii_case("ADMIN") {
            return Err(ModelError::InvalidConfiguration(format!(
                "The Cruise Control API user {:?} may not have the ADMIN role",
                entry.name
            )));
        }
    }
    Ok(())
}

/// One line of a Jetty credentials file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ApiUser {
    name: String,
    password: String,
    role: String,
}

impl ApiUser {
    fn line(&self) -> String {
        format!("{}: {},{}\n", self.name, self.password, self.role)
    }
}

/// The entries of a credentials file; blank lines and `#` comments are skipped.
fn parse_api_users(content: &str) -> Result<Vec<ApiUser>, ModelError> {
    content
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let unreadable = || {
                ModelError::InvalidConfiguration(
                    "A Cruise Control API user entry is not of the form \"name: password,ROLE\""
                        .to_owned(),
                )
            };
            let (name, rest) = line.split_once(':').ok_or_else(unreadable)?;
            let (password, role) = rest.rsplit_once(',').ok_or_else(unreadable)?;
            let entry = ApiUser {
                name: name.trim().to_owned(),
                password: password.trim().to_owned(),
                role: role.trim().to_owned(),
            };
            if entry.name.is_empty() || entry.password.is_empty() || entry.role.is_empty() {
                return Err(unreadable());
            }
            Ok(entry)
        })
        .collect()
}

/// Whether the operator keeps the Cruise Control option `key` for itself.
fn is_forbidden(key: &str) -> bool {
    let lower = key.to_lowercase();
    FORBIDDEN_PREFIXES
        .iter()
        .any(|prefix| lower.starts_with(prefix))
        && !FORBIDDEN_PREFIX_EXCEPTIONS.contains(&key)
}

/// The server options: Strimzi's defaults (the goals, metric windows, sample topics, API
/// security, credentials file) overridden by the user's allowed options, with the anomaly
/// detection goals narrowed to the default goals when they are not all among them; and the
/// user's options that were dropped.
fn server_options(cluster: &KafkaCluster, spec: &CruiseControlSpec) -> (Properties, Vec<String>) {
    let goals = GOALS.join(",");
    let sample_replication = cluster
        .spec
        .config
        .as_ref()
        .and_then(|config| config.get("default.replication.factor"))
        .and_then(config_value);
    let mut defaults = BTreeMap::from([
        ("partition.metrics.window.ms", "300000".to_owned()),
        ("num.partition.metrics.windows", "1".to_owned()),
        ("broker.metrics.window.ms", "300000".to_owned()),
        ("num.broker.metrics.windows", "20".to_owned()),
        (
            "completed.user.task.retention.time.ms",
            "86400000".to_owned(),
        ),
        ("goals", goals.clone()),
        ("default.goals", goals),
        ("hard.goals", HARD_GOALS.join(",")),
        ("webserver.security.enable", "true".to_owned()),
        (
            "webserver.auth.credentials.file",
            format!("{API_AUTH_MOUNT}{AUTH_FILE_KEY}"),
        ),
        ("webserver.ssl.enable", "true".to_owned()),
        (
            "partition.metric.sample.store.topic",
            "strimzi.cruisecontrol.partitionmetricsamples".to_owned(),
        ),
        (
            "broker.metric.sample.store.topic",
            "strimzi.cruisecontrol.modeltrainingsamples".to_owned(),
        ),
        ("metric.reporter.topic", METRICS_REPORTER_TOPIC.to_owned()),
    ]);
    if let Some(factor) = sample_replication {
        defaults.insert("sample.store.topic.replication.factor", factor);
    }
    let mut options = Properties::from_pairs(defaults);
    let mut dropped = Vec::new();
    for (key, value) in spec.config.iter().flat_map(|config| config.0.iter()) {
        match config_value(value) {
            Some(text) if !is_forbidden(key) => options.set(key.clone(), text),
            _ => dropped.push(key.clone()),
        }
    }
    let split = |text: &str| -> BTreeSet<String> {
        text.split(',')
            .map(|goal| goal.trim().to_owned())
            .filter(|goal| !goal.is_empty())
            .collect()
    };
    let default_goals = options.get("default.goals").unwrap_or_default().to_owned();
    let anomaly = options
        .get("anomaly.detection.goals")
        .map(split)
        .unwrap_or_else(|| {
            DEFAULT_ANOMALY_DETECTION_GOALS
                .iter()
                .map(|goal| (*goal).to_owned())
                .collect()
        });
    if !anomaly.is_subset(&split(&default_goals)) {
        options.set("anomaly.detection.goals".to_owned(), default_goals);
    }
    (options, dropped)
}

/// CPU cores from a Kubernetes CPU quantity (`2`, `1.5`, `1500m`).
fn parse_cpu_cores(text: &str) -> Option<f64> {
    let text = text.trim();
    let cores = match text.strip_suffix('m') {
        Some(milli) => milli.parse::<f64>().ok()? / 1000.0,
        None => text.parse::<f64>().ok()?,
    };
    (cores.is_finite() && cores > 0.0).then_some(cores)
}

/// KiB/s in a throughput as `brokerCapacity` writes it (`10000KB/s`, `10MiB/s`).
fn parse_throughput_kib(text: &str) -> Option<f64> {
    let amount = text.trim().strip_suffix("B/s")?;
    Some(quantity::value(amount)? / 1024.0)
}

/// A capacity value as Cruise Control's capacity file takes it: a decimal string.
fn capacity_number(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.1}")
    } else {
        value.to_string()
    }
}

/// The CPU cores a pool's brokers may use: the CPU request, else the limit.
fn pool_cpu_cores(pool: &NodePool) -> Option<f64> {
    let resources = pool.resources.as_ref()?;
    [&resources.requests, &resources.limits]
        .into_iter()
        .find_map(|map| map.as_ref()?.get("cpu"))
        .and_then(|quantity| parse_cpu_cores(&quantity.0))
}

/// The disk capacity of a broker of `storage`: one number (MiB) for a single volume, or one
/// per log directory for JBOD.
fn disk_capacity(storage: &Storage, node_id: i32) -> Value {
    let size_mib = |size: Option<&String>| {
        size.and_then(|size| quantity::value(size))
            .map_or(DEFAULT_DISK_MIB, |bytes| bytes / (1024.0 * 1024.0))
    };
    let volume_size = |volume: &SingleVolumeStorage| match volume {
        SingleVolumeStorage::Ephemeral(volume) => size_mib(volume.size_limit.as_ref()),
        SingleVolumeStorage::PersistentClaim(volume) => size_mib(volume.size.as_ref()),
    };
    match storage {
        Storage::Ephemeral(volume) => json!(capacity_number(size_mib(volume.size_limit.as_ref()))),
        Storage::PersistentClaim(volume) => json!(capacity_number(size_mib(volume.size.as_ref()))),
        Storage::Jbod(jbod) => {
            let dirs: serde_json::Map<String, Value> = jbod
                .volumes
                .iter()
                .flatten()
                .map(|volume| {
                    (
                        format!(
                            "/var/lib/kafka/data-{}/kafka-log{node_id}",
                            volume.id().unwrap_or_default()
                        ),
                        json!(capacity_number(volume_size(volume))),
                    )
                })
                .collect();
            Value::Object(dirs)
        }
    }
}

/// `capacity.json`: one entry per broker with its disk (from its pool's storage), CPU (the
/// broker's override, else `brokerCapacity.cpu`, else its pool's CPU request or limit, else
/// one core) and network capacities (override, else `brokerCapacity`, else 10,000 KiB/s).
fn capacity_file(cluster: &KafkaCluster, capacity: Option<&BrokerCapacity>) -> String {
    let mut overrides: BTreeMap<i32, &BrokerCapacityOverride> = BTreeMap::new();
    for entry in capacity
        .and_then(|capacity| capacity.overrides.as_ref())
        .into_iter()
        .flatten()
    {
        for broker in &entry.brokers {
            overrides.entry(*broker).or_insert(entry);
        }
    }
    let entries: Vec<Value> = cluster
        .brokers()
        .filter_map(|node| {
            let pool = cluster.pools.iter().find(|pool| pool.name == node.pool)?;
            let own = overrides.get(&node.node_id);
            let cpu = own
                .and_then(|o| o.cpu.as_deref())
                .or_else(|| capacity.and_then(|c| c.cpu.as_deref()))
                .and_then(parse_cpu_cores)
                .or_else(|| pool_cpu_cores(pool))
                .unwrap_or(DEFAULT_CPU_CORES);
            let network = |own: Option<&String>, common: Option<&String>| {
                own.or(common)
                    .and_then(|text| parse_throughput_kib(text))
                    .unwrap_or(DEFAULT_NETWORK_KIB)
            };
            let inbound = network(
                own.and_then(|o| o.inbound_network.as_ref()),
                capacity.and_then(|c| c.inbound_network.as_ref()),
            );
            let outbound = network(
                own.and_then(|o| o.outbound_network.as_ref()),
                capacity.and_then(|c| c.outbound_network.as_ref()),
            );
            Some(json!({
                "brokerId": node.node_id,
                "capacity": {
                    "DISK": disk_capacity(&pool.storage, node.node_id),
                    "CPU": {"num.cores": capacity_number(cpu)},
                    "NW_IN": capacity_number(inbound),
                    "NW_OUT": capacity_number(outbound),
                },
                "doc": format!("Capacity for Broker {}", node.node_id),
            }))
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "brokerCapacities": entries }))
        .unwrap_or_else(|_| String::from("{}"))
}

/// A new API password.
fn new_password() -> String {
    rand::rng()
        .sample_iter(Alphanumeric)
        .take(PASSWORD_LENGTH)
        .map(char::from)
        .collect()
}

/// The text of `key` in `secret`, if present and UTF-8.
fn secret_text(secret: Option<&Secret>, key: &str) -> Option<String> {
    let bytes = secret?.data.as_ref()?.get(key)?;
    String::from_utf8(bytes.0.clone())
        .ok()
        .filter(|text| !text.trim().is_empty())
}

impl KafkaCluster {
    /// Cruise Control's objects, `None` without `spec.cruiseControl` or before its certificate
    /// was issued. The operators' API passwords are kept from the existing Secrets and
    /// generated only where missing.
    pub fn cruise_control(&self, inputs: &CruiseControlInputs<'_>) -> Option<CruiseControlObjects> {
        let spec = self.kafka.spec.cruise_control.as_ref()?;
        let certificate = inputs.certificate?;
        let labels = component_labels(self, naming::cruise_control(&self.name), COMPONENT_TYPE);
        let template = spec.template.as_ref();
        let pod_template = template.and_then(|template| template.pod.as_ref());
        let security = ApiSecurity::of(spec);
        let (server, _) = server_options(self, spec);
        let server = server.write();
        let capacity = capacity_file(self, spec.broker_capacity.as_ref());
        let logging = log4j2_properties("CruiseControlConfig", spec.logging.as_ref());
        let mut config_data = BTreeMap::from([
            (SERVER_CONFIG_FILE.to_owned(), server.clone()),
            (CAPACITY_FILE.to_owned(), capacity.clone()),
            (LOGGING_FILE.to_owned(), logging.clone()),
        ]);
        if let Some(metrics) = inputs.metrics.filter(|_| spec.metrics_config.is_some()) {
            config_data.insert(METRICS_FILE.to_owned(), metrics.to_owned());
        }
        let (api_secret, topic_operator_secret) = self.cruise_control_api_secrets(&labels, inputs);
        let auth_file = secret_text(Some(&api_secret), AUTH_FILE_KEY).unwrap_or_default();
        let (certs_secret_name, _) = self::certificate(self);
        let mut pod_annotations = certificate_annotations(
            inputs.cluster_ca_cert_generation,
            inputs.cluster_ca_key_generation,
            &[certificate.thumbprint()],
        );
        pod_annotations.extend([
            (
                annotations::SERVER_CONFIGURATION_HASH.to_owned(),
                hash_stub(&server),
            ),
            (
                annotations::CAPACITY_CONFIGURATION_HASH.to_owned(),
                hash_stub(&capacity),
            ),
            (annotations::LOGGING_HASH.to_owned(), hash_stub(&logging)),
            (annotations::AUTH_HASH.to_owned(), hash_stub(&auth_file)),
        ]);
        let mut secrets = vec![
            self.component_certificate_secret(
                &labels,
                &certs_secret_name,
                certificate.secret_data(),
                inputs.cluster_ca_cert_generation,
            ),
            api_secret,
        ];
        secrets.extend(topic_operator_secret);
        Some(CruiseControlObjects {
            service_account: self.component_service_account(
                &labels,
                template.and_then(|template| template.service_account.as_ref()),
            ),
            service: self.cruise_control_service(&labels, spec),
            config_map: ConfigMap {
                metadata: self.component_meta(
                    &labels,
                    &naming::cruise_control_config_map(&self.name),
                    None,
                ),
                data: Some(config_data),
                ..ConfigMap::default()
            },
            secrets,
            network_policy: self.cruise_control_network_policy(&labels, spec),
            deployment: self.component_deployment(DeploymentParts {
                labels: &labels,
                replicas: 1,
                deployment_template: template.and_then(|template| template.deployment.as_ref()),
                pod_template,
                strategy_from_template: true,
                pod_annotations,
                containers: vec![self.cruise_control_container(
                    spec,
                    &labels.component_name,
                    security,
                )],
                volumes: vec![
                    tmp_volume("strimzi-tmp", pod_template),
                    secret_volume("cc-certs", &certs_secret_name),
                    secret_volume(
                        "cluster-ca-certs",
                        &naming::cluster_ca_cert_secret(&self.name),
                    ),
                    secret_volume(
                        "api-auth-config",
                        &naming::cruise_control_api_secret(&self.name),
                    ),
                    super::config_map_volume(
                        "config",
                        &naming::cruise_control_config_map(&self.name),
                    ),
                ],
            }),
        })
    }

    /// The API Secret and, when the topic operator runs, its own API Secret. Passwords come
    /// from the existing Secrets where present; the user's extra users (already validated)
    /// join the credentials file.
    fn cruise_control_api_secrets(
        &self,
        labels: &ComponentLabels,
        inputs: &CruiseControlInputs<'_>,
    ) -> (Secret, Option<Secret>) {
        let kept = |key: &str| secret_text(inputs.api_secret, key).unwrap_or_else(new_password);
        let rebalance_password = kept(REBALANCE_OPERATOR_PASSWORD_KEY);
        let healthcheck_password = kept(HEALTHCHECK_PASSWORD_KEY);
        let mut users = vec![
            ApiUser {
                name: REBALANCE_OPERATOR_USER.to_owned(),
                password: rebalance_password.clone(),
                role: "ADMIN".to_owned(),
            },
            ApiUser {
                name: HEALTHCHECK_USER.to_owned(),
                password: healthcheck_password.clone(),
                role: "USER".to_owned(),
            },
        ];
        let topic_operator_runs = self
            .kafka
            .spec
            .entity_operator
            .as_ref()
            .is_some_and(|eo| eo.topic_operator.is_some());
        let topic_operator_secret = topic_operator_runs.then(|| {
            let password = secret_text(
                inputs.topic_operator_api_secret,
                TOPIC_OPERATOR_PASSWORD_KEY,
            )
            .unwrap_or_else(new_password);
            users.push(ApiUser {
                name: TOPIC_OPERATOR_USER.to_owned(),
                password: password.clone(),
                role: "ADMIN".to_owned(),
            });
            let to_labels = component_labels(
                self,
                naming::entity_operator_deployment(&self.name),
                super::TOPIC_OPERATOR_TYPE,
            );
            self.opaque_secret(
                &to_labels,
                &naming::entity_topic_operator_cc_api_secret(&self.name),
                [
                    (TOPIC_OPERATOR_USERNAME_KEY, TOPIC_OPERATOR_USER.to_owned()),
                    (TOPIC_OPERATOR_PASSWORD_KEY, password),
                ],
            )
        });
        users.extend(
            inputs
                .user_api_users
                .and_then(|content| parse_api_users(content).ok())
                .into_iter()
                .flatten(),
        );
        let auth_file: String = users.iter().map(ApiUser::line).collect();
        let api_secret = self.opaque_secret(
            labels,
            &naming::cruise_control_api_secret(&self.name),
            [
                (REBALANCE_OPERATOR_PASSWORD_KEY, rebalance_password),
                (HEALTHCHECK_PASSWORD_KEY, healthcheck_password),
                (AUTH_FILE_KEY, auth_file),
            ],
        );
        (api_secret, topic_operator_secret)
    }

    /// An `Opaque` Secret of a component with text `entries`.
    fn opaque_secret<const N: usize>(
        &self,
        labels: &ComponentLabels,
        name: &str,
        entries: [(&str, String); N],
    ) -> Secret {
        Secret {
            metadata: self.component_meta(labels, name, None),
            type_: Some("Opaque".to_owned()),
            data: Some(
                entries
                    .into_iter()
                    .map(|(key, value)| (key.to_owned(), ByteString(value.into_bytes())))
                    .collect(),
            ),
            ..Secret::default()
        }
    }

    fn cruise_control_service(
        &self,
        labels: &ComponentLabels,
        spec: &CruiseControlSpec,
    ) -> Service {
        let template = spec
            .template
            .as_ref()
            .and_then(|template| template.api_service.as_ref());
        let metadata = template.and_then(|template| template.metadata.as_ref());
        Service {
            metadata: self.component_meta(labels, &labels.component_name, metadata),
            spec: Some(super::cluster_ip_service_spec(
                labels.selector(),
                vec![super::service_port(REST_API_PORT_NAME, REST_API_PORT)],
                template,
            )),
            status: None,
        }
    }

    fn cruise_control_network_policy(
        &self,
        labels: &ComponentLabels,
        spec: &CruiseControlSpec,
    ) -> Option<NetworkPolicy> {
        if !self.config.network_policy_generation {
            return None;
        }
        let namespaces = self.operator_namespace_selector();
        let mut peers = vec![peer(
            StringMap::from([(labels::KIND.to_owned(), "cluster-operator".to_owned())]),
            namespaces.clone(),
        )];
        if self
            .kafka
            .spec
            .entity_operator
            .as_ref()
            .is_some_and(|eo| eo.topic_operator.is_some())
        {
            peers.push(peer(
                StringMap::from([(
                    labels::NAME.to_owned(),
                    naming::entity_operator_deployment(&self.name),
                )]),
                None,
            ));
        }
        let mut rules = vec![ingress_rule(REST_API_PORT, peers)];
        if spec.metrics_config.is_some() {
            rules.push(ingress_rule(METRICS_PORT, Vec::new()));
        }
        Some(NetworkPolicy {
            metadata: self.component_meta(labels, &labels.component_name, None),
            spec: Some(NetworkPolicySpec {
                pod_selector: Some(LabelSelector {
                    match_labels: Some(labels.selector()),
                    ..LabelSelector::default()
                }),
                ingress: Some(rules),
                policy_types: Some(vec!["Ingress".to_owned()]),
                ..NetworkPolicySpec::default()
            }),
        })
    }

    fn cruise_control_container(
        &self,
        spec: &CruiseControlSpec,
        name: &str,
        security: ApiSecurity,
    ) -> Container {
        let template = spec
            .template
            .as_ref()
            .and_then(|template| template.cruise_control_container.as_ref());
        let metrics = spec.metrics_config.is_some();
        let jvm = spec.jvm_options.as_ref();
        let mut vars = vec![
            env("CRUISE_CONTROL_JMX_EXPORTER_ENABLED", metrics.to_string()),
            env(
                "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
                format!(
                    "{}:{REPLICATION_PORT}",
                    naming::bootstrap_service(&self.name)
                ),
            ),
            env(
                "STRIMZI_KAFKA_GC_LOG_ENABLED",
                jvm.and_then(|jvm| jvm.gc_logging_enabled)
                    .unwrap_or(false)
                    .to_string(),
            ),
            env("STRIMZI_CC_API_SSL_ENABLED", security.tls.to_string()),
            env(
                "STRIMZI_CC_API_AUTH_ENABLED",
                security.authentication.to_string(),
            ),
            env("API_HEALTHCHECK_USERNAME", HEALTHCHECK_USER),
            env("API_PORT", REST_API_PORT.to_string()),
            env("API_HEALTHCHECK_PATH", HEALTHCHECK_PATH),
        ];
        vars.extend(jvm_env(
            jvm,
            spec.resources.as_ref(),
            HeapSizing {
                percentage: "75",
                max: None,
            },
        ));
        add_shared_and_template_env(&mut vars, &self.config.shared_env, template);
        let mut mounts = vec![
            mount("strimzi-tmp", "/tmp"),
            mount("cc-certs", "/etc/cruise-control/cc-certs/"),
            mount("cluster-ca-certs", "/etc/cruise-control/cluster-ca-certs/"),
            mount("api-auth-config", API_AUTH_MOUNT),
            mount("config", CONFIG_MOUNT),
        ];
        mounts.extend(template_mounts(template));
        let mut ports = vec![container_port(REST_API_PORT_NAME, REST_API_PORT)];
        if metrics {
            ports.push(container_port("tcp-prometheus", METRICS_PORT));
        }
        let image = spec
            .image
            .clone()
            .or_else(|| self.config.cruise_control_image.clone())
            .unwrap_or_else(|| self.version.image.clone());
        let probe = |options: Option<&ProbeOptions>| {
            let options = options.cloned().unwrap_or_default();
            Probe {
                exec: Some(ExecAction {
                    command: Some(vec![
                        "/opt/cruise-control/cruise_control_healthcheck.sh".to_owned(),
                    ]),
                }),
                initial_delay_seconds: Some(options.initial_delay_seconds.unwrap_or(15)),
                timeout_seconds: Some(options.timeout_seconds.unwrap_or(5)),
                period_seconds: options.period_seconds,
                success_threshold: options.success_threshold,
                failure_threshold: options.failure_threshold,
                ..Probe::default()
            }
        };
        Container {
            name: name.to_owned(),
            image_pull_policy: Some(self.image_pull_policy(&image)),
            image: Some(image),
            args: Some(vec!["/opt/cruise-control/cruise_control_run.sh".to_owned()]),
            env: Some(vars),
            ports: Some(ports),
            liveness_probe: Some(probe(spec.liveness_probe.as_ref())),
            readiness_probe: Some(probe(spec.readiness_probe.as_ref())),
            resources: spec.resources.clone(),
            volume_mounts: Some(mounts),
            security_context: self.container_security_context(template),
            ..Container::default()
        }
    }
}

/// The API users section of `spec.cruiseControl`, for the caller to read the Secret it refers
/// to: `(secret name, key)`.
pub fn user_api_users_reference(spec: &CruiseControlSpec) -> Option<(String, String)> {
    match spec.api_users.as_ref()? {
        ApiUsers::HashLoginService(users) => {
            let reference = users.value_from.secret_key_ref.as_ref()?;
            Some((reference.name.clone(), reference.key.clone()))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp)]
    use super::*;

    #[test]
    fn quantities_become_capacities() {
        assert_eq!(parse_cpu_cores("2"), Some(2.0));
        assert_eq!(parse_cpu_cores("1500m"), Some(1.5));
        assert_eq!(parse_cpu_cores("lots"), None);
        assert_eq!(parse_throughput_kib("10000KiB/s"), Some(10_000.0));
        assert_eq!(parse_throughput_kib("1MiB/s"), Some(1024.0));
        assert_eq!(parse_throughput_kib("1024KB/s"), Some(1000.0));
        assert_eq!(parse_throughput_kib("fast"), None);
        assert_eq!(capacity_number(100_000.0), "100000.0");
        assert_eq!(capacity_number(9765.625), "9765.625");
    }

    #[test]
    fn forbidden_options_keep_their_exceptions() {
        assert!(is_forbidden("bootstrap.servers"));
        assert!(is_forbidden("ssl.keystore.location"));
        assert!(is_forbidden("webserver.http.port"));
        assert!(!is_forbidden("webserver.ssl.enable"));
        assert!(!is_forbidden("ssl.protocol"));
        assert!(!is_forbidden("partition.metrics.window.ms"));
    }

    #[test]
    fn api_users_are_jetty_lines_without_reserved_names_or_admins() {
        let users =
            parse_api_users("# extra users\nalice: secret,VIEWER\n\nbob: p:w,USER\n").unwrap();
        assert_eq!(users.len(), 2);
        assert_eq!(users[1].password, "p:w");
        assert_eq!(users[0].line(), "alice: secret,VIEWER\n");
        assert!(validate_user_api_users("alice: secret,VIEWER").is_ok());
        assert!(validate_user_api_users("healthcheck: x,USER").is_err());
        assert!(validate_user_api_users("carol: x,ADMIN").is_err());
        assert!(validate_user_api_users("no role here").is_err());
    }
}
