//! Operator configuration read from Strimzi's environment variables, with Strimzi's defaults.
//!
//! A bad value is a [`ConfigError`] whose one-line message names the variable, the value and
//! what is allowed; binaries print it and exit non-zero.

use std::collections::BTreeMap;
use std::time::Duration;

/// Namespaces to watch: one, a comma-separated list, or `*` for all.
pub const NAMESPACE: &str = "STRIMZI_NAMESPACE";
/// Milliseconds between periodic reconciliations of every resource.
pub const FULL_RECONCILIATION_INTERVAL_MS: &str = "STRIMZI_FULL_RECONCILIATION_INTERVAL_MS";
/// Milliseconds an operation (e.g. waiting for a pod) may take before it fails.
pub const OPERATION_TIMEOUT_MS: &str = "STRIMZI_OPERATION_TIMEOUT_MS";
/// Labels (`key=value,...`) a custom resource must carry to be reconciled.
pub const CUSTOM_RESOURCE_SELECTOR: &str = "STRIMZI_CUSTOM_RESOURCE_SELECTOR";
/// Regular expression of user labels not copied from a custom resource to its objects.
pub const LABELS_EXCLUSION_PATTERN: &str = "STRIMZI_LABELS_EXCLUSION_PATTERN";
/// `+Name` / `-Name` list enabling or disabling feature gates.
pub const FEATURE_GATES: &str = "STRIMZI_FEATURE_GATES";
/// Log level: `ALL`, `TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR`, `FATAL` or `OFF`.
pub const LOG_LEVEL: &str = "STRIMZI_LOG_LEVEL";
/// Log output: `plain` or `json` (our addition; Strimzi configures this through log4j).
pub const LOG_FORMAT: &str = "STRIMZI_LOG_FORMAT";
/// Port of the health and metrics HTTP server (our addition).
pub const HTTP_PORT: &str = "STRIMZI_HTTP_PORT";
/// `true` runs several replicas with one leader elected through a Lease.
pub const LEADER_ELECTION_ENABLED: &str = "STRIMZI_LEADER_ELECTION_ENABLED";
/// Name of the Lease used for leader election.
pub const LEADER_ELECTION_LEASE_NAME: &str = "STRIMZI_LEADER_ELECTION_LEASE_NAME";
/// Namespace of the Lease used for leader election.
pub const LEADER_ELECTION_LEASE_NAMESPACE: &str = "STRIMZI_LEADER_ELECTION_LEASE_NAMESPACE";
/// This replica's identity in the Lease, usually the pod name.
pub const LEADER_ELECTION_IDENTITY: &str = "STRIMZI_LEADER_ELECTION_IDENTITY";
/// Milliseconds a Lease stays valid without renewal.
pub const LEADER_ELECTION_LEASE_DURATION_MS: &str = "STRIMZI_LEADER_ELECTION_LEASE_DURATION_MS";
/// Milliseconds within which the leader must renew the Lease or stop leading.
pub const LEADER_ELECTION_RENEW_DEADLINE_MS: &str = "STRIMZI_LEADER_ELECTION_RENEW_DEADLINE_MS";
/// Milliseconds between attempts to acquire or renew the Lease.
pub const LEADER_ELECTION_RETRY_PERIOD_MS: &str = "STRIMZI_LEADER_ELECTION_RETRY_PERIOD_MS";

/// Strimzi's default [`LABELS_EXCLUSION_PATTERN`]: every `app.kubernetes.io/` label except
/// `part-of`.
pub use strimzi_api::selectors::DEFAULT_LABELS_EXCLUSION_PATTERN;
/// Default of [`OperatorConfig::shutdown_grace`].
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Default [`HTTP_PORT`].
pub const DEFAULT_HTTP_PORT: u16 = 8080;

/// A configuration value that stops start-up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A variable has a value that is not allowed.
    #[error("{variable}={value:?} is not valid: expected {expected}")]
    Invalid {
        /// The environment variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What the variable accepts.
        expected: String,
    },
    /// A required variable is not set.
    #[error("{variable} is not set: expected {expected}")]
    Missing {
        /// The environment variable.
        variable: &'static str,
        /// What the variable accepts.
        expected: String,
    },
}

impl crate::ErrorReason for ConfigError {
    fn reason(&self) -> &'static str {
        "InvalidConfiguration"
    }
}

impl ConfigError {
    fn invalid(variable: &'static str, value: &str, expected: impl Into<String>) -> Self {
        Self::Invalid {
            variable,
            value: value.to_owned(),
            expected: expected.into(),
        }
    }
}

/// Which namespaces an operator watches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchedNamespaces {
    /// Every namespace (`*`).
    All,
    /// These namespaces, in the order given, without duplicates.
    List(Vec<String>),
}

/// Log verbosity, named as Strimzi's `STRIMZI_LOG_LEVEL` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Everything, same as `TRACE`.
    All,
    /// Trace and above.
    Trace,
    /// Debug and above.
    Debug,
    /// Info and above (the default).
    Info,
    /// Warnings and errors.
    Warn,
    /// Errors only.
    Error,
    /// Errors only (log4j's `FATAL`).
    Fatal,
    /// Nothing.
    Off,
}

impl LogLevel {
    /// The level log4j names `name` (any case, surrounding blanks ignored), if it names one.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.trim().to_ascii_uppercase().as_str() {
            "ALL" => Self::All,
            "TRACE" => Self::Trace,
            "DEBUG" => Self::Debug,
            "INFO" => Self::Info,
            "WARN" => Self::Warn,
            "ERROR" => Self::Error,
            "FATAL" => Self::Fatal,
            "OFF" => Self::Off,
            _ => return None,
        })
    }

    /// The `tracing` filter directive of this level.
    pub fn directive(self) -> &'static str {
        match self {
            Self::All | Self::Trace => "trace",
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error | Self::Fatal => "error",
            Self::Off => "off",
        }
    }
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Plain,
    /// One JSON object per line.
    Json,
}

/// A feature gate and whether it is on unless configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureGate {
    /// Name used in [`FEATURE_GATES`].
    pub name: &'static str,
    /// State when not configured.
    pub enabled_by_default: bool,
}

/// Keep reconciling other parts of a cluster when a manual rolling update fails.
pub const CONTINUE_ON_MANUAL_ROLLING_UPDATE_FAILURE: FeatureGate = FeatureGate {
    name: "ContinueReconciliationOnManualRollingUpdateFailure",
    enabled_by_default: true,
};
/// Kafka clusters stretched over several Kubernetes clusters.
pub const USE_STRETCH_CLUSTER: FeatureGate = FeatureGate {
    name: "UseStretchCluster",
    enabled_by_default: false,
};
/// KafkaConnect builds with Buildah; Kaniko when off.
pub const USE_CONNECT_BUILD_WITH_BUILDAH: FeatureGate = FeatureGate {
    name: "UseConnectBuildWithBuildah",
    enabled_by_default: true,
};
/// Every feature gate Strimzi 1.2 knows.
pub const KNOWN_FEATURE_GATES: [FeatureGate; 3] = [
    CONTINUE_ON_MANUAL_ROLLING_UPDATE_FAILURE,
    USE_STRETCH_CLUSTER,
    USE_CONNECT_BUILD_WITH_BUILDAH,
];

/// The feature gates set in [`FEATURE_GATES`]; the others have their default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureGates {
    configured: BTreeMap<&'static str, bool>,
}

impl FeatureGates {
    /// Whether `gate` is enabled.
    pub fn is_enabled(&self, gate: FeatureGate) -> bool {
        self.configured
            .get(gate.name)
            .copied()
            .unwrap_or(gate.enabled_by_default)
    }

    fn parse(value: &str) -> Result<Self, ConfigError> {
        let mut configured = BTreeMap::new();
        let known: Vec<&str> = KNOWN_FEATURE_GATES.iter().map(|gate| gate.name).collect();
        let expected = format!(
            "comma-separated +Name or -Name, each gate once, with Name one of {}",
            known.join(", ")
        );
        for item in value.split(',').map(str::trim) {
            if item.is_empty() && value.trim().is_empty() {
                continue;
            }
            let (enabled, name) = match item.split_at_checked(1) {
                Some(("+", name)) => (true, name),
                Some(("-", name)) => (false, name),
                _ => return Err(ConfigError::invalid(FEATURE_GATES, value, expected)),
            };
            let Some(gate) = KNOWN_FEATURE_GATES.iter().find(|gate| gate.name == name) else {
                return Err(ConfigError::invalid(FEATURE_GATES, value, expected));
            };
            if configured.insert(gate.name, enabled).is_some() {
                return Err(ConfigError::invalid(FEATURE_GATES, value, expected));
            }
        }
        Ok(Self { configured })
    }
}

/// How this replica takes part in leader election.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderElectionConfig {
    /// Name of the Lease.
    pub lease_name: String,
    /// Namespace of the Lease.
    pub lease_namespace: String,
    /// This replica's identity, written into the Lease while it leads.
    pub identity: String,
    /// How long a Lease stays valid without renewal (15 s).
    pub lease_duration: Duration,
    /// How long the leader keeps leading without a successful renewal (10 s).
    pub renew_deadline: Duration,
    /// Time between attempts to acquire or renew (2 s).
    pub retry_period: Duration,
}

/// Everything an operator reads from its environment.
#[derive(Debug, Clone)]
pub struct OperatorConfig {
    /// Namespaces to watch.
    pub namespaces: WatchedNamespaces,
    /// Time between periodic reconciliations of every resource (120 s).
    pub full_reconciliation_interval: Duration,
    /// Time an operation may take before it fails (300 s).
    pub operation_timeout: Duration,
    /// Labels a custom resource must carry to be reconciled; empty selects all.
    pub custom_resource_selector: BTreeMap<String, String>,
    /// User labels matching this are not copied to the objects an operator creates.
    pub labels_exclusion: crate::labels::LabelExclusion,
    /// Leader election, when enabled.
    pub leader_election: Option<LeaderElectionConfig>,
    /// Feature gates.
    pub feature_gates: FeatureGates,
    /// Log verbosity.
    pub log_level: LogLevel,
    /// Log output.
    pub log_format: LogFormat,
    /// Port of the health and metrics server.
    pub http_port: u16,
    /// How long in-flight reconciliations may run on after shutdown was asked for before
    /// they are abandoned (30 s; not read from the environment).
    pub shutdown_grace: Duration,
}

impl OperatorConfig {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the configuration from `lookup`, which returns a variable's value if set.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        let namespace = get(NAMESPACE).ok_or_else(|| ConfigError::Missing {
            variable: NAMESPACE,
            expected: NAMESPACES_EXPECTED.to_owned(),
        })?;
        let leader_election = match get(LEADER_ELECTION_ENABLED) {
            Some(value) if parse_bool(LEADER_ELECTION_ENABLED, &value)? => {
                Some(leader_election(&get)?)
            }
            _ => None,
        };
        Ok(Self {
            namespaces: parse_namespaces(&namespace)?,
            full_reconciliation_interval: millis(
                FULL_RECONCILIATION_INTERVAL_MS,
                get(FULL_RECONCILIATION_INTERVAL_MS),
                120_000,
            )?,
            operation_timeout: millis(OPERATION_TIMEOUT_MS, get(OPERATION_TIMEOUT_MS), 300_000)?,
            custom_resource_selector: get(CUSTOM_RESOURCE_SELECTOR)
                .map(|value| parse_selector(&value))
                .transpose()?
                .unwrap_or_default(),
            labels_exclusion: crate::labels::LabelExclusion::new(
                get(LABELS_EXCLUSION_PATTERN)
                    .as_deref()
                    .unwrap_or(DEFAULT_LABELS_EXCLUSION_PATTERN),
            )
            .map_err(|error| {
                ConfigError::invalid(
                    LABELS_EXCLUSION_PATTERN,
                    get(LABELS_EXCLUSION_PATTERN).as_deref().unwrap_or_default(),
                    format!("a regular expression ({error})"),
                )
            })?,
            leader_election,
            feature_gates: FeatureGates::parse(&get(FEATURE_GATES).unwrap_or_default())?,
            log_level: get(LOG_LEVEL)
                .map(|value| parse_log_level(&value))
                .transpose()?
                .unwrap_or(LogLevel::Info),
            log_format: match get(LOG_FORMAT).as_deref() {
                None | Some("plain") => LogFormat::Plain,
                Some("json") => LogFormat::Json,
                Some(other) => {
                    return Err(ConfigError::invalid(LOG_FORMAT, other, "plain or json"));
                }
            },
            http_port: match get(HTTP_PORT) {
                None => DEFAULT_HTTP_PORT,
                Some(value) => value
                    .trim()
                    .parse()
                    .ok()
                    .filter(|port| *port > 0)
                    .ok_or_else(|| {
                        ConfigError::invalid(HTTP_PORT, &value, "a port number from 1 to 65535")
                    })?,
            },
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        })
    }

    /// The custom-resource selector as a Kubernetes label selector string, if any.
    pub fn selector_string(&self) -> Option<String> {
        (!self.custom_resource_selector.is_empty()).then(|| {
            self.custom_resource_selector
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect::<Vec<_>>()
                .join(",")
        })
    }
}

const NAMESPACES_EXPECTED: &str =
    "a namespace name, a comma-separated list of namespace names, or *";

fn parse_namespaces(value: &str) -> Result<WatchedNamespaces, ConfigError> {
    let items: Vec<&str> = value.split(',').map(str::trim).collect();
    if items == ["*"] {
        return Ok(WatchedNamespaces::All);
    }
    let mut namespaces: Vec<String> = Vec::new();
    for item in items {
        if !is_dns_label(item) {
            return Err(ConfigError::invalid(NAMESPACE, value, NAMESPACES_EXPECTED));
        }
        if !namespaces.iter().any(|known| known == item) {
            namespaces.push(item.to_owned());
        }
    }
    Ok(WatchedNamespaces::List(namespaces))
}

/// Whether `name` is a valid RFC 1123 label, as namespace names must be.
fn is_dns_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// A duration in milliseconds read from `variable`: `default` when unset, an error naming the
/// variable unless it is a positive integer.
pub fn millis(
    variable: &'static str,
    value: Option<String>,
    default: u64,
) -> Result<Duration, ConfigError> {
    match value {
        None => Ok(Duration::from_millis(default)),
        Some(value) => value
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|millis| *millis > 0)
            .map(Duration::from_millis)
            .ok_or_else(|| {
                ConfigError::invalid(variable, &value, "a positive number of milliseconds")
            }),
    }
}

/// A `true`/`false` switch read from `variable` (any case): `default` when unset, an error
/// naming the variable otherwise.
pub fn flag(
    variable: &'static str,
    value: Option<String>,
    default: bool,
) -> Result<bool, ConfigError> {
    value.map_or(Ok(default), |value| parse_bool(variable, &value))
}

/// A count read from `variable`: `default` when unset, an error naming the variable unless it
/// is a positive integer.
pub fn positive(
    variable: &'static str,
    value: Option<String>,
    default: usize,
) -> Result<usize, ConfigError> {
    match value {
        None => Ok(default),
        Some(text) => text
            .trim()
            .parse()
            .ok()
            .filter(|number| *number > 0)
            .ok_or_else(|| ConfigError::invalid(variable, &text, "a positive integer")),
    }
}

fn parse_bool(variable: &'static str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ConfigError::invalid(variable, value, "true or false")),
    }
}

fn parse_log_level(value: &str) -> Result<LogLevel, ConfigError> {
    LogLevel::from_name(value).ok_or_else(|| {
        ConfigError::invalid(
            LOG_LEVEL,
            value,
            "one of ALL, TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF",
        )
    })
}

/// Parses `key=value,key2=value2` with valid Kubernetes label keys and values.
fn parse_selector(value: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let expected = "comma-separated key=value labels with valid Kubernetes label keys and values";
    let mut labels = BTreeMap::new();
    for item in value.split(',').map(str::trim) {
        let Some((key, label)) = item.split_once('=') else {
            return Err(ConfigError::invalid(
                CUSTOM_RESOURCE_SELECTOR,
                value,
                expected,
            ));
        };
        let (key, label) = (key.trim(), label.trim());
        if !crate::labels::is_label_key(key) || !crate::labels::is_label_value(label) {
            return Err(ConfigError::invalid(
                CUSTOM_RESOURCE_SELECTOR,
                value,
                expected,
            ));
        }
        labels.insert(key.to_owned(), label.to_owned());
    }
    Ok(labels)
}

fn leader_election(
    get: &impl Fn(&str) -> Option<String>,
) -> Result<LeaderElectionConfig, ConfigError> {
    let required = |variable: &'static str| {
        get(variable).ok_or_else(|| ConfigError::Missing {
            variable,
            expected: format!("a name, as {LEADER_ELECTION_ENABLED} is true"),
        })
    };
    let config = LeaderElectionConfig {
        lease_name: required(LEADER_ELECTION_LEASE_NAME)?,
        lease_namespace: required(LEADER_ELECTION_LEASE_NAMESPACE)?,
        identity: required(LEADER_ELECTION_IDENTITY)?,
        lease_duration: millis(
            LEADER_ELECTION_LEASE_DURATION_MS,
            get(LEADER_ELECTION_LEASE_DURATION_MS),
            15_000,
        )?,
        renew_deadline: millis(
            LEADER_ELECTION_RENEW_DEADLINE_MS,
            get(LEADER_ELECTION_RENEW_DEADLINE_MS),
            10_000,
        )?,
        retry_period: millis(
            LEADER_ELECTION_RETRY_PERIOD_MS,
            get(LEADER_ELECTION_RETRY_PERIOD_MS),
            2_000,
        )?,
    };
    if config.renew_deadline >= config.lease_duration {
        return Err(ConfigError::invalid(
            LEADER_ELECTION_RENEW_DEADLINE_MS,
            &config.renew_deadline.as_millis().to_string(),
            format!("less than {LEADER_ELECTION_LEASE_DURATION_MS}"),
        ));
    }
    if config.retry_period >= config.renew_deadline {
        return Err(ConfigError::invalid(
            LEADER_ELECTION_RETRY_PERIOD_MS,
            &config.retry_period.as_millis().to_string(),
            format!("less than {LEADER_ELECTION_RENEW_DEADLINE_MS}"),
        ));
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn config(variables: &[(&str, &str)]) -> Result<OperatorConfig, ConfigError> {
        let variables: BTreeMap<String, String> = variables
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        OperatorConfig::from_lookup(|name| variables.get(name).cloned())
    }

    fn error(variables: &[(&str, &str)]) -> String {
        let mut all = vec![(NAMESPACE, "ns")];
        all.extend_from_slice(variables);
        config(&all).expect_err("invalid").to_string()
    }

    #[test]
    fn defaults_are_strimzi_defaults() {
        let config = config(&[(NAMESPACE, "kafka")]).unwrap();
        assert_eq!(
            config.namespaces,
            WatchedNamespaces::List(vec!["kafka".into()])
        );
        assert_eq!(
            config.full_reconciliation_interval,
            Duration::from_secs(120)
        );
        assert_eq!(config.operation_timeout, Duration::from_secs(300));
        assert!(config.custom_resource_selector.is_empty());
        assert_eq!(config.leader_election, None);
        assert_eq!(config.log_level, LogLevel::Info);
        assert_eq!(config.log_format, LogFormat::Plain);
        assert_eq!(config.http_port, 8080);
        assert!(
            config
                .feature_gates
                .is_enabled(CONTINUE_ON_MANUAL_ROLLING_UPDATE_FAILURE)
        );
        assert!(!config.feature_gates.is_enabled(USE_STRETCH_CLUSTER));
        assert!(config.labels_exclusion.excludes("app.kubernetes.io/name"));
        assert!(
            !config
                .labels_exclusion
                .excludes("app.kubernetes.io/part-of")
        );
    }

    #[test]
    fn every_value_is_read() {
        let config = config(&[
            (NAMESPACE, "a, b ,a"),
            (FULL_RECONCILIATION_INTERVAL_MS, "1000"),
            (OPERATION_TIMEOUT_MS, "2000"),
            (CUSTOM_RESOURCE_SELECTOR, "team=x, env=prod"),
            (
                FEATURE_GATES,
                "-ContinueReconciliationOnManualRollingUpdateFailure,+UseStretchCluster",
            ),
            (LOG_LEVEL, "debug"),
            (LOG_FORMAT, "json"),
            (HTTP_PORT, "9090"),
            (LEADER_ELECTION_ENABLED, "true"),
            (LEADER_ELECTION_LEASE_NAME, "lease"),
            (LEADER_ELECTION_LEASE_NAMESPACE, "ops"),
            (LEADER_ELECTION_IDENTITY, "pod-1"),
            (LABELS_EXCLUSION_PATTERN, "^secret/.*"),
        ])
        .unwrap();
        assert_eq!(
            config.namespaces,
            WatchedNamespaces::List(vec!["a".into(), "b".into()])
        );
        assert_eq!(config.full_reconciliation_interval, Duration::from_secs(1));
        assert_eq!(config.operation_timeout, Duration::from_secs(2));
        assert_eq!(config.selector_string().as_deref(), Some("env=prod,team=x"));
        assert!(
            !config
                .feature_gates
                .is_enabled(CONTINUE_ON_MANUAL_ROLLING_UPDATE_FAILURE)
        );
        assert!(config.feature_gates.is_enabled(USE_STRETCH_CLUSTER));
        assert_eq!(config.log_level, LogLevel::Debug);
        assert_eq!(config.log_format, LogFormat::Json);
        assert_eq!(config.http_port, 9090);
        let election = config.leader_election.unwrap();
        assert_eq!(election.lease_name, "lease");
        assert_eq!(election.lease_namespace, "ops");
        assert_eq!(election.identity, "pod-1");
        assert_eq!(election.lease_duration, Duration::from_secs(15));
        assert_eq!(election.renew_deadline, Duration::from_secs(10));
        assert_eq!(election.retry_period, Duration::from_secs(2));
        assert!(config.labels_exclusion.excludes("secret/x"));
        assert!(!config.labels_exclusion.excludes("app.kubernetes.io/name"));
        let all = super::parse_namespaces(" * ").unwrap();
        assert_eq!(all, WatchedNamespaces::All);
    }

    #[test]
    fn every_bad_value_names_variable_value_and_what_is_allowed() {
        let cases: [(&[(&str, &str)], &str); 16] = [
            (
                &[(NAMESPACE, "Bad_Name")],
                "STRIMZI_NAMESPACE=\"Bad_Name\" is not valid: expected a namespace name, a comma-separated list of namespace names, or *",
            ),
            (
                &[(NAMESPACE, "a,*")],
                "STRIMZI_NAMESPACE=\"a,*\" is not valid",
            ),
            (
                &[(FULL_RECONCILIATION_INTERVAL_MS, "2m")],
                "STRIMZI_FULL_RECONCILIATION_INTERVAL_MS=\"2m\" is not valid: expected a positive number of milliseconds",
            ),
            (
                &[(OPERATION_TIMEOUT_MS, "-1")],
                "STRIMZI_OPERATION_TIMEOUT_MS=\"-1\" is not valid: expected a positive number of milliseconds",
            ),
            (
                &[(CUSTOM_RESOURCE_SELECTOR, "team")],
                "STRIMZI_CUSTOM_RESOURCE_SELECTOR=\"team\" is not valid: expected comma-separated key=value labels",
            ),
            (
                &[(LABELS_EXCLUSION_PATTERN, "(")],
                "STRIMZI_LABELS_EXCLUSION_PATTERN=\"(\" is not valid: expected a regular expression",
            ),
            (
                &[(FEATURE_GATES, "+Nope")],
                "STRIMZI_FEATURE_GATES=\"+Nope\" is not valid: expected comma-separated +Name or -Name, each gate once, with Name one of ContinueReconciliationOnManualRollingUpdateFailure, UseStretchCluster, UseConnectBuildWithBuildah",
            ),
            (
                &[(FEATURE_GATES, "+UseStretchCluster,-UseStretchCluster")],
                "STRIMZI_FEATURE_GATES=\"+UseStretchCluster,-UseStretchCluster\" is not valid",
            ),
            (
                &[(LOG_LEVEL, "LOUD")],
                "STRIMZI_LOG_LEVEL=\"LOUD\" is not valid: expected one of ALL, TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF",
            ),
            (
                &[(LOG_FORMAT, "xml")],
                "STRIMZI_LOG_FORMAT=\"xml\" is not valid: expected plain or json",
            ),
            (
                &[(HTTP_PORT, "70000")],
                "STRIMZI_HTTP_PORT=\"70000\" is not valid: expected a port number from 1 to 65535",
            ),
            (
                &[(LEADER_ELECTION_ENABLED, "yes")],
                "STRIMZI_LEADER_ELECTION_ENABLED=\"yes\" is not valid: expected true or false",
            ),
            (
                &[(LEADER_ELECTION_ENABLED, "true")],
                "STRIMZI_LEADER_ELECTION_LEASE_NAME is not set: expected a name, as STRIMZI_LEADER_ELECTION_ENABLED is true",
            ),
            (
                &[
                    (LEADER_ELECTION_ENABLED, "true"),
                    (LEADER_ELECTION_LEASE_NAME, "l"),
                    (LEADER_ELECTION_LEASE_NAMESPACE, "n"),
                    (LEADER_ELECTION_IDENTITY, "i"),
                    (LEADER_ELECTION_LEASE_DURATION_MS, "x"),
                ],
                "STRIMZI_LEADER_ELECTION_LEASE_DURATION_MS=\"x\" is not valid",
            ),
            (
                &[
                    (LEADER_ELECTION_ENABLED, "true"),
                    (LEADER_ELECTION_LEASE_NAME, "l"),
                    (LEADER_ELECTION_LEASE_NAMESPACE, "n"),
                    (LEADER_ELECTION_IDENTITY, "i"),
                    (LEADER_ELECTION_RENEW_DEADLINE_MS, "20000"),
                ],
                "STRIMZI_LEADER_ELECTION_RENEW_DEADLINE_MS=\"20000\" is not valid: expected less than STRIMZI_LEADER_ELECTION_LEASE_DURATION_MS",
            ),
            (
                &[
                    (LEADER_ELECTION_ENABLED, "true"),
                    (LEADER_ELECTION_LEASE_NAME, "l"),
                    (LEADER_ELECTION_LEASE_NAMESPACE, "n"),
                    (LEADER_ELECTION_IDENTITY, "i"),
                    (LEADER_ELECTION_RETRY_PERIOD_MS, "10000"),
                ],
                "STRIMZI_LEADER_ELECTION_RETRY_PERIOD_MS=\"10000\" is not valid: expected less than STRIMZI_LEADER_ELECTION_RENEW_DEADLINE_MS",
            ),
        ];
        for (variables, expected) in cases {
            let message = error(variables);
            assert!(message.starts_with(expected), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
        let missing = config(&[]).expect_err("no namespace").to_string();
        assert_eq!(
            missing,
            "STRIMZI_NAMESPACE is not set: expected a namespace name, a comma-separated list of namespace names, or *"
        );
    }
}
