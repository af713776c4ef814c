//! The command line, read the way Kafka Exporter 1.9.0 reads it (its documented flag names,
//! `--flag=value` or `--flag value`, booleans as `--flag`, `--flag=true|false` or
//! `--no-flag`), into an [`ExporterConfig`]. Pure: no file is read here; the TLS files are
//! checked by [`crate::tls`].
//!
//! Differences from the real program, on purpose: `--kafka.server` has no default (a pod
//! that forgot it must fail, not scrape `kafka:9092`), unknown flags and flags of features the
//! stand-in lacks (ZooKeeper lag, SASL mechanisms other than PLAIN and SCRAM, server-side TLS
//! of the metrics endpoint) are refused instead of being half-honoured.

use std::fmt;

use fancy_regex::Regex;

/// A command line the stand-in cannot run with. Its `Display` is one line naming the flag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A flag nobody knows, or one of a feature the stand-in does not have.
    #[error("unknown or unsupported flag {0}")]
    UnknownFlag(String),
    /// A flag that takes a value came last, without one.
    #[error("flag {0} needs a value")]
    MissingValue(String),
    /// A flag's value is malformed.
    #[error("flag {flag}: {message}")]
    Invalid {
        /// The flag, with its `--`.
        flag: String,
        /// What is wrong with the value.
        message: String,
    },
    /// A flag that must be given was not.
    #[error("flag {0} is required")]
    Required(&'static str),
    /// A positional argument: the exporter takes none.
    #[error("unexpected argument {0:?}: the exporter takes flags only")]
    Positional(String),
    /// A variable of the pod's environment is missing or malformed (see [`pod_arguments`]).
    #[error("environment variable {name}: {message}")]
    Variable {
        /// The variable.
        name: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// SASL login of the exporter (`--sasl.*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaslConfig {
    /// `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512` (Kafka's names of `--sasl.mechanism`'s
    /// `plain`, `scram-sha256`, `scram-sha512`).
    pub mechanism: &'static str,
    /// `--sasl.username`.
    pub username: String,
    /// `--sasl.password`.
    pub password: String,
}

/// TLS towards Kafka (`--tls.*`): the files as given, read by [`crate::tls`].
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TlsConfig {
    /// `--tls.ca-file`: PEM certificates the brokers' certificates must chain to; `None` = the
    /// system's trust.
    pub ca_file: Option<String>,
    /// `--tls.cert-file`: the client certificate (PEM), with `key_file`.
    pub cert_file: Option<String>,
    /// `--tls.key-file`: the client certificate's private key (PEM).
    pub key_file: Option<String>,
    /// `--tls.insecure-skip-tls-verify`: no check of the brokers' certificates.
    pub insecure_skip_verify: bool,
}

/// A regular expression with the flag it came from. Matches anywhere in a name, as Go's
/// `MatchString` does (the real exporter's), so `.*` matches every name and `^$` none.
#[derive(Clone)]
pub struct Filter {
    source: String,
    regex: Regex,
}

impl Filter {
    /// Compiles `source`, the value of `flag`.
    pub fn new(flag: &str, source: &str) -> Result<Self, ConfigError> {
        let regex = Regex::new(source).map_err(|error| ConfigError::Invalid {
            flag: flag.to_owned(),
            message: format!("{source:?} is not a regular expression: {error}"),
        })?;
        Ok(Self {
            source: source.to_owned(),
            regex,
        })
    }

    /// Whether `name` has a match (a regex that fails at run time counts as no match).
    pub fn matches(&self, name: &str) -> bool {
        self.regex.is_match(name).unwrap_or(false)
    }

    /// The expression as given.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.source)
    }
}

impl PartialEq for Filter {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// Which topics and groups are exported: included by the filter and not by the exclude.
#[derive(Clone, Debug, PartialEq)]
pub struct Filters {
    /// `--topic.filter`, default `.*`.
    pub topic: Filter,
    /// `--topic.exclude`, default `^$`.
    pub topic_exclude: Filter,
    /// `--group.filter`, default `.*`.
    pub group: Filter,
    /// `--group.exclude`, default `^$`.
    pub group_exclude: Filter,
}

impl Filters {
    /// Whether topic `name` is exported.
    pub fn topic(&self, name: &str) -> bool {
        self.topic.matches(name) && !self.topic_exclude.matches(name)
    }

    /// Whether consumer group `name` is exported.
    pub fn group(&self, name: &str) -> bool {
        self.group.matches(name) && !self.group_exclude.matches(name)
    }
}

/// Everything the exporter runs with.
#[derive(Clone, Debug, PartialEq)]
pub struct ExporterConfig {
    /// `--kafka.server` (repeatable; each may also hold a comma-separated list).
    pub servers: Vec<String>,
    /// `--kafka.version`: checked to be a version; the client negotiates the protocol itself.
    pub kafka_version: String,
    /// `--web.listen-address`, as `host:port` (a leading `:` means every IPv4 address).
    pub listen_address: String,
    /// `--web.telemetry-path`, default `/metrics`.
    pub telemetry_path: String,
    /// `--tls.enabled` and its files; `None` without TLS.
    pub tls: Option<TlsConfig>,
    /// `--sasl.enabled` and its login; `None` without SASL.
    pub sasl: Option<SaslConfig>,
    /// Topic and group selection.
    pub filters: Filters,
    /// `--offset.show-all` (default `true`): offsets and lag of groups without members too.
    pub show_all_offsets: bool,
    /// `--verbosity` (0 info, 1 debug, 2 and more trace).
    pub verbosity: u32,
}

/// Flags of the real exporter that only tune its Go client or concurrency: accepted, and
/// ignored (with or without a value, as the real one takes them).
const IGNORED_VALUE_FLAGS: [&str; 4] = [
    "topic.workers",
    "refresh.metadata",
    "kafka.labels",
    "tls.server-name",
];
const IGNORED_BOOL_FLAGS: [&str; 4] = [
    "log.enable-sarama",
    "concurrent.enable",
    "legacy.partitions",
    "kafka.allow-auto-topic-creation",
];
const VALUE_FLAGS: [&str; 16] = [
    "kafka.server",
    "kafka.version",
    "web.listen-address",
    "web.telemetry-path",
    "tls.ca-file",
    "tls.cert-file",
    "tls.key-file",
    "sasl.username",
    "sasl.password",
    "sasl.mechanism",
    "topic.filter",
    "topic.exclude",
    "group.filter",
    "group.exclude",
    "verbosity",
    "log.level",
];
const BOOL_FLAGS: [&str; 4] = [
    "tls.enabled",
    "tls.insecure-skip-tls-verify",
    "sasl.enabled",
    "offset.show-all",
];

/// One flag as given: its name without `--`, and its value.
enum Given {
    Value(String, String),
    Bool(String, bool),
}

/// Splits the arguments (without the program name) into flags.
fn split(args: &[String]) -> Result<Vec<Given>, ConfigError> {
    let mut given = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let Some(flag) = arg.strip_prefix("--") else {
            return Err(ConfigError::Positional(arg.clone()));
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (flag, None),
        };
        if VALUE_FLAGS.contains(&name) || IGNORED_VALUE_FLAGS.contains(&name) {
            let value = match inline {
                Some(value) => value,
                None => rest
                    .next()
                    .cloned()
                    .ok_or_else(|| ConfigError::MissingValue(arg.clone()))?,
            };
            given.push(Given::Value(name.to_owned(), value));
        } else if BOOL_FLAGS.contains(&name) || IGNORED_BOOL_FLAGS.contains(&name) {
            let value = match inline.as_deref() {
                None => true,
                Some("true") => true,
                Some("false") => false,
                Some(other) => {
                    return Err(ConfigError::Invalid {
                        flag: format!("--{name}"),
                        message: format!("{other:?} is not true or false"),
                    });
                }
            };
            given.push(Given::Bool(name.to_owned(), value));
        } else if let Some(negated) = name.strip_prefix("no-")
            && inline.is_none()
            && (BOOL_FLAGS.contains(&negated) || IGNORED_BOOL_FLAGS.contains(&negated))
        {
            given.push(Given::Bool(negated.to_owned(), false));
        } else {
            return Err(ConfigError::UnknownFlag(arg.clone()));
        }
    }
    Ok(given)
}

/// Reads the exporter's command line (without the program name).
pub fn parse_args(args: &[String]) -> Result<ExporterConfig, ConfigError> {
    let mut servers = Vec::new();
    let mut kafka_version = "2.0.0".to_owned();
    let mut listen_address = ":9308".to_owned();
    let mut telemetry_path = "/metrics".to_owned();
    let mut tls_enabled = false;
    let mut tls = TlsConfig::default();
    let mut sasl_enabled = false;
    let (mut sasl_username, mut sasl_password, mut sasl_mechanism) = (None, None, None);
    let mut filters = [".*", "^$", ".*", "^$"].map(str::to_owned);
    let mut show_all_offsets = true;
    let mut verbosity = 0;
    for flag in split(args)? {
        match flag {
            Given::Value(name, value) => {
                let invalid = |message: String| ConfigError::Invalid {
                    flag: format!("--{name}"),
                    message,
                };
                match name.as_str() {
                    "kafka.server" => servers.extend(
                        value
                            .split(',')
                            .map(str::trim)
                            .filter(|server| !server.is_empty())
                            .map(str::to_owned),
                    ),
                    "kafka.version" => {
                        let parts: Vec<&str> = value.split('.').collect();
                        if parts.len() < 2
                            || parts.len() > 4
                            || parts.iter().any(|part| part.parse::<u32>().is_err())
                        {
                            return Err(invalid(format!("{value:?} is not a Kafka version")));
                        }
                        kafka_version = value;
                    }
                    "web.listen-address" => {
                        let port = value.rsplit_once(':').map(|(_, port)| port);
                        if port.and_then(|port| port.parse::<u16>().ok()).is_none() {
                            return Err(invalid(format!("{value:?} is not [host]:port")));
                        }
                        listen_address = value;
                    }
                    "web.telemetry-path" => {
                        if !value.starts_with('/') {
                            return Err(invalid(format!("{value:?} does not start with /")));
                        }
                        telemetry_path = value;
                    }
                    "tls.ca-file" => tls.ca_file = Some(value),
                    "tls.cert-file" => tls.cert_file = Some(value),
                    "tls.key-file" => tls.key_file = Some(value),
                    "sasl.username" => sasl_username = Some(value),
                    "sasl.password" => sasl_password = Some(value),
                    "sasl.mechanism" => {
                        sasl_mechanism = Some(match value.to_ascii_lowercase().as_str() {
                            "plain" | "" => "PLAIN",
                            "scram-sha256" => "SCRAM-SHA-256",
                            "scram-sha512" => "SCRAM-SHA-512",
                            _ => {
                                return Err(invalid(format!(
                                    "{value:?} is not plain, scram-sha256 or scram-sha512"
                                )));
                            }
                        });
                    }
                    "topic.filter" => filters[0] = value,
                    "topic.exclude" => filters[1] = value,
                    "group.filter" => filters[2] = value,
                    "group.exclude" => filters[3] = value,
                    "verbosity" => {
                        verbosity = value
                            .parse()
                            .map_err(|_| invalid(format!("{value:?} is not a number")))?;
                    }
                    "log.level"
                        if !["debug", "info", "warn", "error"].contains(&value.as_str()) =>
                    {
                        return Err(invalid(format!(
                            "{value:?} is not debug, info, warn or error"
                        )));
                    }
                    _ => {}
                }
            }
            Given::Bool(name, value) => match name.as_str() {
                "tls.enabled" => tls_enabled = value,
                "tls.insecure-skip-tls-verify" => tls.insecure_skip_verify = value,
                "sasl.enabled" => sasl_enabled = value,
                "offset.show-all" => show_all_offsets = value,
                _ => {}
            },
        }
    }
    if servers.is_empty() {
        return Err(ConfigError::Required("--kafka.server"));
    }
    if tls.cert_file.is_some() != tls.key_file.is_some() {
        return Err(if tls.cert_file.is_some() {
            ConfigError::Required("--tls.key-file (with --tls.cert-file)")
        } else {
            ConfigError::Required("--tls.cert-file (with --tls.key-file)")
        });
    }
    let sasl = if sasl_enabled {
        Some(SaslConfig {
            mechanism: sasl_mechanism.unwrap_or("PLAIN"),
            username: sasl_username.ok_or(ConfigError::Required(
                "--sasl.username (with --sasl.enabled)",
            ))?,
            password: sasl_password.ok_or(ConfigError::Required(
                "--sasl.password (with --sasl.enabled)",
            ))?,
        })
    } else {
        None
    };
    let [topic, topic_exclude, group, group_exclude] = filters;
    Ok(ExporterConfig {
        servers,
        kafka_version,
        listen_address,
        telemetry_path,
        tls: tls_enabled.then_some(tls),
        sasl,
        filters: Filters {
            topic: Filter::new("--topic.filter", &topic)?,
            topic_exclude: Filter::new("--topic.exclude", &topic_exclude)?,
            group: Filter::new("--group.filter", &group)?,
            group_exclude: Filter::new("--group.exclude", &group_exclude)?,
        },
        show_all_offsets,
        verbosity,
    })
}

/// Where the pod mounts the cluster CA (`<cluster>-trustbundle`).
pub const POD_CA_FILE: &str = "/etc/kafka-exporter/cluster-ca-certs/cluster-ca.crt";
/// Where the pod mounts the exporter's certificate (`<cluster>-kafka-exporter-certs`).
pub const POD_CERT_FILE: &str = "/etc/kafka-exporter/kafka-exporter-certs/kafka-exporter.crt";
/// Where the pod mounts the exporter's key.
pub const POD_KEY_FILE: &str = "/etc/kafka-exporter/kafka-exporter-certs/kafka-exporter.key";

/// The flags the pod's start script (`kafka_exporter_run.sh`) passes, from the variables our
/// operator sets (CONTRACT.md section 6), read through `env`: the metrics on `:9404`, mutual
/// TLS with the mounted files, each regex one argument. For running the stand-in without a
/// shell script in between; a missing or malformed variable is an error naming it.
pub fn pod_arguments(env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<String>, ConfigError> {
    let required = |name: &'static str| {
        env(name)
            .filter(|value| !value.is_empty())
            .ok_or(ConfigError::Variable {
                name,
                message: "missing".to_owned(),
            })
    };
    let boolean = |name: &'static str, default: bool| match env(name).as_deref() {
        None | Some("") => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => Err(ConfigError::Variable {
            name,
            message: format!("{other:?} is not true or false"),
        }),
    };
    let mut args = vec![
        format!(
            "--kafka.server={}",
            required("KAFKA_EXPORTER_KAFKA_SERVER")?
        ),
        "--web.listen-address=:9404".to_owned(),
        "--tls.enabled".to_owned(),
        format!("--tls.ca-file={POD_CA_FILE}"),
        format!("--tls.cert-file={POD_CERT_FILE}"),
        format!("--tls.key-file={POD_KEY_FILE}"),
    ];
    if let Some(version) = env("KAFKA_EXPORTER_KAFKA_VERSION").filter(|v| !v.is_empty()) {
        args.push(format!("--kafka.version={version}"));
    }
    for (name, flag, default) in [
        ("KAFKA_EXPORTER_GROUP_REGEX", "--group.filter", Some(".*")),
        ("KAFKA_EXPORTER_TOPIC_REGEX", "--topic.filter", Some(".*")),
        (
            "KAFKA_EXPORTER_GROUP_EXCLUDE_REGEX",
            "--group.exclude",
            None,
        ),
        (
            "KAFKA_EXPORTER_TOPIC_EXCLUDE_REGEX",
            "--topic.exclude",
            None,
        ),
    ] {
        match env(name).filter(|value| !value.is_empty()) {
            Some(value) => args.push(format!("{flag}={value}")),
            None => args.extend(default.map(|value| format!("{flag}={value}"))),
        }
    }
    if let Some(level) = env("KAFKA_EXPORTER_LOGGING").filter(|v| !v.is_empty()) {
        if level.parse::<u32>().is_err() {
            return Err(ConfigError::Variable {
                name: "KAFKA_EXPORTER_LOGGING",
                message: format!("{level:?} is not a number"),
            });
        }
        args.push(format!("--verbosity={level}"));
    }
    if boolean("KAFKA_EXPORTER_ENABLE_SARAMA", false)? {
        args.push("--log.enable-sarama".to_owned());
    }
    args.push(if boolean("KAFKA_EXPORTER_OFFSET_SHOW_ALL", true)? {
        "--offset.show-all".to_owned()
    } else {
        "--no-offset.show-all".to_owned()
    });
    Ok(args)
}

impl ExporterConfig {
    /// The socket address to bind: `:9404` becomes `0.0.0.0:9404`.
    pub fn bind_address(&self) -> String {
        match self.listen_address.strip_prefix(':') {
            Some(port) => format!("0.0.0.0:{port}"),
            None => self.listen_address.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<ExporterConfig, ConfigError> {
        parse_args(&args.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>())
    }

    /// The flags the pod's start script passes for a cluster `my-cluster` (CONTRACT.md 6).
    const POD_FLAGS: [&str; 12] = [
        "--kafka.server=my-cluster-kafka-bootstrap:9091",
        "--kafka.version=4.3.1",
        "--web.listen-address=:9404",
        "--tls.enabled",
        "--tls.ca-file=/etc/kafka-exporter/cluster-ca-certs/cluster-ca.crt",
        "--tls.cert-file=/etc/kafka-exporter/kafka-exporter-certs/kafka-exporter.crt",
        "--tls.key-file=/etc/kafka-exporter/kafka-exporter-certs/kafka-exporter.key",
        "--group.filter=.*",
        "--topic.filter=.*",
        "--verbosity=0",
        "--no-log.enable-sarama",
        "--offset.show-all",
    ];

    #[test]
    fn the_pods_flags_are_read() {
        let config = parse(&POD_FLAGS).unwrap();
        assert_eq!(config.servers, ["my-cluster-kafka-bootstrap:9091"]);
        assert_eq!(config.kafka_version, "4.3.1");
        assert_eq!(config.bind_address(), "0.0.0.0:9404");
        assert_eq!(config.telemetry_path, "/metrics");
        let tls = config.tls.unwrap();
        assert_eq!(
            tls.ca_file.as_deref(),
            Some("/etc/kafka-exporter/cluster-ca-certs/cluster-ca.crt")
        );
        assert_eq!(
            tls.key_file.as_deref(),
            Some("/etc/kafka-exporter/kafka-exporter-certs/kafka-exporter.key")
        );
        assert!(!tls.insecure_skip_verify);
        assert!(config.sasl.is_none());
        assert!(config.show_all_offsets);
        assert_eq!(config.verbosity, 0);
    }

    #[test]
    fn values_may_follow_as_the_next_argument_and_booleans_be_negated() {
        let config = parse(&[
            "--kafka.server",
            "a:9092,b:9092",
            "--kafka.server=c:9092",
            "--no-offset.show-all",
            "--topic.exclude",
            "^__",
            "--group.filter=^(watchers|readers)$",
        ])
        .unwrap();
        assert_eq!(config.servers, ["a:9092", "b:9092", "c:9092"]);
        assert!(!config.show_all_offsets);
        assert!(config.tls.is_none());
        assert!(config.filters.topic("lagging"));
        assert!(!config.filters.topic("__consumer_offsets"));
        assert!(config.filters.group("watchers"));
        assert!(!config.filters.group("watchers-2"));
        assert_eq!(config.bind_address(), "0.0.0.0:9308");
    }

    #[test]
    fn filters_match_anywhere_like_go() {
        let config = parse(&["--kafka.server=k:9092", "--topic.filter=lag"]).unwrap();
        assert!(config.filters.topic("my-lagging-topic"));
        assert!(!config.filters.topic("other"));
        // The default exclude `^$` excludes nothing named.
        assert!(config.filters.group("anything"));
    }

    fn pod_env(name: &str) -> Option<String> {
        [
            ("KAFKA_EXPORTER_LOGGING", "1"),
            ("KAFKA_EXPORTER_KAFKA_VERSION", "4.3.1"),
            ("KAFKA_EXPORTER_GROUP_REGEX", "^(watchers|readers)$"),
            ("KAFKA_EXPORTER_TOPIC_REGEX", ".*"),
            ("KAFKA_EXPORTER_TOPIC_EXCLUDE_REGEX", "^__ *"),
            (
                "KAFKA_EXPORTER_KAFKA_SERVER",
                "my-cluster-kafka-bootstrap:9091",
            ),
            ("KAFKA_EXPORTER_ENABLE_SARAMA", "false"),
            ("KAFKA_EXPORTER_OFFSET_SHOW_ALL", "false"),
        ]
        .iter()
        .find(|(key, _)| *key == name)
        .map(|(_, value)| (*value).to_owned())
    }

    #[test]
    fn the_pods_environment_gives_the_start_scripts_flags() {
        let args = pod_arguments(&pod_env).unwrap();
        assert_eq!(
            args,
            [
                "--kafka.server=my-cluster-kafka-bootstrap:9091",
                "--web.listen-address=:9404",
                "--tls.enabled",
                "--tls.ca-file=/etc/kafka-exporter/cluster-ca-certs/cluster-ca.crt",
                "--tls.cert-file=/etc/kafka-exporter/kafka-exporter-certs/kafka-exporter.crt",
                "--tls.key-file=/etc/kafka-exporter/kafka-exporter-certs/kafka-exporter.key",
                "--kafka.version=4.3.1",
                "--group.filter=^(watchers|readers)$",
                "--topic.filter=.*",
                "--topic.exclude=^__ *",
                "--verbosity=1",
                "--no-offset.show-all",
            ]
        );
        // A regex with spaces and quotes stays one argument.
        let config = parse_args(&args).unwrap();
        assert!(!config.filters.topic("__ consumer"));
        assert!(!config.show_all_offsets);
        assert_eq!(config.verbosity, 1);
    }

    #[test]
    fn a_missing_or_malformed_variable_is_named() {
        let without_server = |name: &str| {
            (name != "KAFKA_EXPORTER_KAFKA_SERVER")
                .then(|| pod_env(name))
                .flatten()
        };
        assert_eq!(
            pod_arguments(&without_server).unwrap_err().to_string(),
            "environment variable KAFKA_EXPORTER_KAFKA_SERVER: missing"
        );
        let bad_boolean = |name: &str| {
            if name == "KAFKA_EXPORTER_OFFSET_SHOW_ALL" {
                Some("yes".to_owned())
            } else {
                pod_env(name)
            }
        };
        assert_eq!(
            pod_arguments(&bad_boolean).unwrap_err().to_string(),
            "environment variable KAFKA_EXPORTER_OFFSET_SHOW_ALL: \"yes\" is not true or false"
        );
        let only_server =
            |name: &str| (name == "KAFKA_EXPORTER_KAFKA_SERVER").then(|| "k:9091".to_owned());
        let args = pod_arguments(&only_server).unwrap();
        assert!(args.contains(&"--group.filter=.*".to_owned()));
        assert!(args.contains(&"--offset.show-all".to_owned()));
    }

    #[test]
    fn sasl_logins_are_read() {
        let config = parse(&[
            "--kafka.server=k:9092",
            "--sasl.enabled",
            "--sasl.mechanism=scram-sha512",
            "--sasl.username=exporter",
            "--sasl.password=secret",
        ])
        .unwrap();
        assert_eq!(
            config.sasl,
            Some(SaslConfig {
                mechanism: "SCRAM-SHA-512",
                username: "exporter".into(),
                password: "secret".into()
            })
        );
    }

    #[test]
    fn what_is_missing_or_malformed_is_refused_naming_the_flag() {
        let cases: [(&[&str], &str); 11] = [
            (&[], "flag --kafka.server is required"),
            (
                &["--kafka.server=k:1", "--topic.filter=(unclosed"],
                "flag --topic.filter: \"(unclosed\" is not a regular expression",
            ),
            (
                &["--kafka.server=k:1", "--group.exclude=["],
                "flag --group.exclude:",
            ),
            (&["--kafka.server"], "flag --kafka.server needs a value"),
            (
                &["--kafka.server=k:1", "--kafka.version=latest"],
                "flag --kafka.version: \"latest\" is not a Kafka version",
            ),
            (
                &["--kafka.server=k:1", "--web.listen-address=9404"],
                "flag --web.listen-address: \"9404\" is not [host]:port",
            ),
            (
                &["--kafka.server=k:1", "--use.consumelag.zookeeper"],
                "unknown or unsupported flag --use.consumelag.zookeeper",
            ),
            (
                &["--kafka.server=k:1", "--tls.cert-file=/c"],
                "flag --tls.key-file (with --tls.cert-file) is required",
            ),
            (
                &["--kafka.server=k:1", "--sasl.enabled", "--sasl.username=u"],
                "flag --sasl.password (with --sasl.enabled) is required",
            ),
            (
                &["--kafka.server=k:1", "--tls.enabled=yes"],
                "flag --tls.enabled: \"yes\" is not true or false",
            ),
            (
                &["--kafka.server=k:1", "\"--topic.filter=.*\""],
                "unexpected argument",
            ),
        ];
        for (args, expected) in cases {
            let error = parse(args).unwrap_err().to_string();
            assert!(
                error.starts_with(expected),
                "{args:?}: {error:?} does not start with {expected:?}"
            );
            assert!(!error.contains('\n'), "{error:?} is not one line");
        }
    }
}
