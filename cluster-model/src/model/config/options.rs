//! The Kafka `config` the user wrote: which options the operator keeps for itself, the defaults
//! it adds, and how the options are written in Java properties format.

use serde_json::Value;
use strimzi_api::kafka::{KafkaClusterSpec, QuotasPlugin};

use crate::model::{KafkaCluster, ModelError, ModelWarning};

/// Option prefixes the operator manages itself; user options starting with one are dropped.
pub const FORBIDDEN_PREFIXES: &[&str] = &[
    "listeners",
    "advertised.",
    "broker.",
    "listener.",
    "host.name",
    "port",
    "inter.broker.listener.name",
    "sasl.",
    "ssl.",
    "security.",
    "password.",
    "log.dir",
    "zookeeper.connect",
    "zookeeper.set.acl",
    "zookeeper.ssl",
    "zookeeper.clientCnxnSocket",
    "authorizer.",
    "super.user",
    "cruise.control.metrics.topic",
    "cruise.control.metrics.reporter.bootstrap.servers",
    "node.id",
    "process.roles",
    "controller.",
    "metadata.log.dir",
];

/// Options that start with a forbidden prefix and are still passed through.
pub const FORBIDDEN_PREFIX_EXCEPTIONS: &[&str] = &[
    "zookeeper.connection.timeout.ms",
    "sasl.server.max.receive.size",
    "ssl.cipher.suites",
    "ssl.protocol",
    "ssl.enabled.protocols",
    "ssl.secure.random.implementation",
    "cruise.control.metrics.topic.num.partitions",
    "cruise.control.metrics.topic.replication.factor",
    "cruise.control.metrics.topic.retention.ms",
    "cruise.control.metrics.topic.auto.create.retries",
    "cruise.control.metrics.topic.auto.create.timeout.ms",
    "cruise.control.metrics.topic.min.insync.replicas",
    "controller.quorum.election.backoff.max.ms",
    "controller.quorum.election.timeout.ms",
    "controller.quorum.fetch.timeout.ms",
];

/// Prefix of the listener options of `custom` authentication that the operator keeps for
/// itself (the listener's TLS settings).
pub const CUSTOM_AUTH_FORBIDDEN_PREFIX: &str = "ssl.";

/// Whether a `listenerConfig` option of `custom` authentication is dropped.
pub fn is_forbidden_listener_option(key: &str) -> bool {
    key.to_lowercase().starts_with(CUSTOM_AUTH_FORBIDDEN_PREFIX)
}

/// Options the operator sets when the user does not: `min.insync.replicas=1`, so that removing
/// the option from the resource turns it back to Kafka's default.
pub const DEFAULTS: &[(&str, &str)] = &[("min.insync.replicas", "1")];

/// Reason of the warning about a dropped option.
pub const FORBIDDEN_OPTION_REASON: &str = "ForbiddenConfigurationOption";

/// Whether the operator keeps `key` for itself (a forbidden prefix without an exception).
pub fn is_forbidden(key: &str) -> bool {
    let lower = key.to_lowercase();
    // Like Strimzi, only the key is lower-cased, so a prefix with capitals never matches.
    FORBIDDEN_PREFIXES
        .iter()
        .any(|prefix| lower.starts_with(prefix))
        && !FORBIDDEN_PREFIX_EXCEPTIONS.contains(&key)
}

/// An ordered list of options, as a Java properties file holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Properties {
    entries: Vec<(String, String)>,
}

impl Properties {
    /// Properties with `entries` in order; later duplicates replace earlier values in place.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let mut properties = Self::default();
        for (key, value) in entries {
            properties.set(key.into(), value.into());
        }
        properties
    }

    /// Sets `key` to `value`, keeping the key's position when it is already present.
    pub fn set(&mut self, key: String, value: String) {
        match self
            .entries
            .iter_mut()
            .find(|(existing, _)| *existing == key)
        {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key, value)),
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(existing, _)| existing == key)
            .map(|(_, value)| value.as_str())
    }

    /// Removes `key` and gives its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        let index = self
            .entries
            .iter()
            .position(|(existing, _)| existing == key)?;
        Some(self.entries.remove(index).1)
    }

    /// The entries in order.
    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Reads a properties file as Java reads one: blank lines and `#`/`!` comments are
    /// skipped, a line ending in an odd number of backslashes continues on the next one, the
    /// key ends at the first unescaped `=`, `:` or white space, and backslash escapes
    /// (`\t`, `\n`, `\r`, `\f`, `\uXXXX`, any other character as itself) are resolved in
    /// keys and values. A key given twice keeps its first position and its last value.
    pub fn parse(text: &str) -> Self {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let mut properties = Self::default();
        let mut logical = String::new();
        for line in text.split('\n') {
            let line = line.trim_start_matches(PROPERTIES_WHITE_SPACE);
            if logical.is_empty() && (line.is_empty() || line.starts_with(['#', '!'])) {
                continue;
            }
            let trailing_backslashes = line.chars().rev().take_while(|c| *c == '\\').count();
            if trailing_backslashes % 2 == 1 {
                logical.push_str(&line[..line.len() - 1]);
                continue;
            }
            logical.push_str(line);
            let (key, value) = split_property(&logical);
            properties.set(key, value);
            logical.clear();
        }
        if !logical.is_empty() {
            let (key, value) = split_property(&logical);
            properties.set(key, value);
        }
        properties
    }

    /// Writes the entries as `key=value` lines, escaping like Strimzi: separators and white
    /// space in keys, line breaks, backslashes and leading white space in values.
    pub fn write(&self) -> String {
        let mut out = String::new();
        for (key, value) in &self.entries {
            for c in key.chars() {
                match c {
                    '\n' => out.push_str("\\n"),
                    '=' | ':' | ' ' | '\t' | '\u{c}' | '\\' => {
                        out.push('\\');
                        out.push(c);
                    }
                    _ => out.push(c),
                }
            }
            out.push('=');
            for (index, c) in value.chars().enumerate() {
                match c {
                    '\r' => out.push_str("\\r"),
                    '\n' => out.push_str("\\n"),
                    '\\' => out.push_str("\\\\"),
                    ' ' | '\t' | '\u{c}' if index == 0 => {
                        out.push('\\');
                        out.push(c);
                    }
                    _ => out.push(c),
                }
            }
            out.push('\n');
        }
        out
    }
}

/// The characters a properties file counts as white space around keys and separators.
const PROPERTIES_WHITE_SPACE: [char; 3] = [' ', '\t', '\u{c}'];

/// Splits one logical line of a properties file into its key and value, both unescaped.
fn split_property(line: &str) -> (String, String) {
    let mut escaped = false;
    let mut key_end = line.len();
    let mut has_separator = false;
    for (index, c) in line.char_indices() {
        if !escaped && (c == '=' || c == ':') {
            key_end = index;
            has_separator = true;
            break;
        }
        if !escaped && PROPERTIES_WHITE_SPACE.contains(&c) {
            key_end = index;
            break;
        }
        escaped = c == '\\' && !escaped;
    }
    let mut rest = line[key_end..].chars().peekable();
    if has_separator {
        rest.next();
    }
    while let Some(&c) = rest.peek() {
        if PROPERTIES_WHITE_SPACE.contains(&c) {
            rest.next();
        } else if !has_separator && (c == '=' || c == ':') {
            has_separator = true;
            rest.next();
        } else {
            break;
        }
    }
    (
        unescape_property(&line[..key_end]),
        unescape_property(&rest.collect::<String>()),
    )
}

/// Resolves the backslash escapes of a properties file key or value.
fn unescape_property(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let digits: String = chars.clone().take(4).collect();
                match u32::from_str_radix(&digits, 16)
                    .ok()
                    .and_then(char::from_u32)
                {
                    Some(decoded) if digits.len() == 4 => {
                        out.push(decoded);
                        chars.nth(3);
                    }
                    _ => out.push('u'),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// The user's Kafka options after the forbidden ones were dropped, with the defaults added.
pub fn user_configuration(
    config: Option<&strimzi_api::schema::FreeFormMap>,
) -> (Properties, Vec<ModelWarning>) {
    allowed_options(config, DEFAULTS, is_forbidden)
}

/// The options of a component's `config` (Kafka, Connect, ...) over its `defaults`, without
/// those `is_forbidden` names or whose value is not a string, number or boolean; and a
/// warning per dropped option.
pub(crate) fn allowed_options(
    config: Option<&strimzi_api::schema::FreeFormMap>,
    defaults: &[(&str, &str)],
    is_forbidden: fn(&str) -> bool,
) -> (Properties, Vec<ModelWarning>) {
    let mut properties = Properties::from_pairs(defaults.iter().copied());
    let mut warnings = Vec::new();
    for (key, value) in config.map(|config| &config.0).into_iter().flatten() {
        if is_forbidden(key) {
            warnings.push(ModelWarning::new(
                FORBIDDEN_OPTION_REASON,
                format!("Configuration option \"{key}\" is forbidden and will be ignored"),
            ));
            continue;
        }
        match config_value(value) {
            Some(text) => properties.set(key.clone(), text),
            None => warnings.push(ModelWarning::new(
                FORBIDDEN_OPTION_REASON,
                format!(
                    "Configuration option \"{key}\" has an unsupported value type (only strings, numbers and booleans are allowed) and will be ignored"
                ),
            )),
        }
    }
    (properties, warnings)
}

/// The option naming the client quota callback class.
const QUOTA_CALLBACK_OPTION: &str = "client.quota.callback.class";
/// Config provider aliases the operator defines itself; the last two only on brokers.
pub const RESERVED_PROVIDER_ALIASES: &[&str] =
    &["strimzienv", "strimzisecrets", "strimzifile", "strimzidir"];

/// `spec.kafka.config` as it reaches `server.config`, with the warnings about dropped
/// options; resolved once per reconciliation ([`KafkaCluster::user_options`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserOptions {
    /// The options kept.
    pub properties: Properties,
    /// Forbidden options dropped, and a quota callback class that conflicts with `quotas`.
    pub warnings: Vec<ModelWarning>,
}

impl UserOptions {
    /// The user's options of `spec` as they reach `server.config`.
    pub fn of(spec: &KafkaClusterSpec) -> Self {
        let (mut config, mut warnings) = user_configuration(spec.config.as_ref());
        if let Some(quotas) = &spec.quotas
            && config.remove(QUOTA_CALLBACK_OPTION).is_some()
        {
            let plugin = match quotas {
                QuotasPlugin::Kafka(_) => "kafka",
                QuotasPlugin::Strimzi(_) => "strimzi",
            };
            warnings.push(ModelWarning::new(
            "QuotasPluginConflict",
            format!("Quotas plugin class cannot be configured in .spec.kafka.config, when .spec.kafka.quotas contains configuration of `{plugin}` plugin. The plugin from .spec.kafka.quotas will be used"),
        ));
        }
        Self {
            properties: config,
            warnings,
        }
    }
}

impl KafkaCluster {
    /// Checks the parts of the configuration that cannot be turned into a valid
    /// `server.config`: user config providers that reuse the operator's aliases, replication
    /// settings above the broker count, conflicting quota limits, and Cruise Control with
    /// fewer than two brokers.
    pub fn validate_configuration(&self) -> Result<(), ModelError> {
        let config = &self.user_options.properties;
        let reserved = config.get("config.providers").and_then(|aliases| {
            aliases
                .split(',')
                .find(|alias| RESERVED_PROVIDER_ALIASES.contains(alias))
        });
        if let Some(alias) = reserved {
            return Err(ModelError::InvalidConfiguration(format!(
                "config.provider {alias} not permitted as it reserved for Strimzi. Not permitted aliases: [{}]",
                RESERVED_PROVIDER_ALIASES.join(", ")
            )));
        }
        let brokers = self.brokers().count();
        for option in [
            "default.replication.factor",
            "offsets.topic.replication.factor",
            "transaction.state.log.replication.factor",
            "transaction.state.log.min.isr",
        ] {
            let Some(value) = self
                .spec
                .config
                .as_ref()
                .and_then(|config| config.get(option))
            else {
                continue;
            };
            let text = config_value(value).unwrap_or_default();
            let number: i64 = text.trim().parse().map_err(|_| {
                ModelError::InvalidConfiguration(format!("Property {option} should be an integer"))
            })?;
            if number > brokers as i64 {
                let or_less = if brokers > 1 { " or less" } else { "" };
                return Err(ModelError::InvalidConfiguration(format!(
                    "Kafka configuration option '{option}' should be set to {brokers}{or_less} because this cluster has only {brokers} Kafka broker(s)."
                )));
            }
        }
        if let Some(QuotasPlugin::Strimzi(quotas)) = &self.spec.quotas
            && quotas.min_available_bytes_per_volume.is_some()
            && quotas.min_available_ratio_per_volume.is_some()
        {
            return Err(ModelError::InvalidConfiguration(
                "You cannot configure both `minAvailableBytesPerVolume` and `minAvailableRatioPerVolume`, they are mutually exclusive.".to_owned(),
            ));
        }
        if self.kafka.spec.cruise_control.is_some() && brokers < 2 {
            return Err(ModelError::InvalidConfiguration(format!(
                "Kafka {}/{} has invalid configuration. Cruise Control cannot be deployed with a Kafka cluster which has only one broker. It requires at least two Kafka brokers.",
                self.namespace, self.name
            )));
        }
        Ok(())
    }

    /// The user options Kafka can change while running, which the operator applies to the
    /// running cluster.
    pub fn dynamic_configuration(&self) -> Vec<(String, String)> {
        self.user_options
            .properties
            .entries()
            .iter()
            .filter(|(key, _)| is_dynamic_option(key))
            .cloned()
            .collect()
    }
}

/// The text of a scalar option value; `None` for lists, objects and null.
pub fn config_value(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// The Kafka broker options the operator changes while the brokers run, as cluster-wide
/// defaults through the admin API: options Kafka can change that way in every supported Kafka
/// version. A change of any other Kafka option restarts the nodes (see
/// [`crate::rolling::config_diff`]), among them Kafka's per-broker dynamic options (listener
/// and security ones), `config.providers`, which the operator writes itself, and the
/// cluster-wide options new in Kafka 4.3.
const DYNAMIC_OPTIONS: &[&str] = &[
    "background.threads",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.type",
    "compression.zstd.level",
    "follower.replication.throttled.rate",
    "leader.replication.throttled.rate",
    "log.cleaner.backoff.ms",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.delete.retention.ms",
    "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio",
    "log.cleaner.min.compaction.lag.ms",
    "log.cleaner.threads",
    "log.cleanup.policy",
    "log.flush.interval.messages",
    "log.flush.interval.ms",
    "log.index.interval.bytes",
    "log.index.size.max.bytes",
    "log.local.retention.bytes",
    "log.local.retention.ms",
    "log.message.timestamp.after.max.ms",
    "log.message.timestamp.before.max.ms",
    "log.message.timestamp.type",
    "log.preallocate",
    "log.retention.bytes",
    "log.retention.ms",
    "log.roll.jitter.ms",
    "log.roll.ms",
    "log.segment.bytes",
    "log.segment.delete.delay.ms",
    "max.connection.creation.rate",
    "max.connections",
    "max.connections.per.ip",
    "max.connections.per.ip.overrides",
    "message.max.bytes",
    "metric.reporters",
    "min.insync.replicas",
    "num.io.threads",
    "num.network.threads",
    "num.recovery.threads.per.data.dir",
    "num.replica.fetchers",
    "producer.id.expiration.ms",
    "remote.fetch.max.wait.ms",
    "remote.list.offsets.request.timeout.ms",
    "remote.log.index.file.cache.total.size.bytes",
    "remote.log.manager.copier.thread.pool.size",
    "remote.log.manager.copy.max.bytes.per.second",
    "remote.log.manager.expiration.thread.pool.size",
    "remote.log.manager.fetch.max.bytes.per.second",
    "remote.log.manager.follower.thread.pool.size",
    "remote.log.reader.threads",
    "transaction.partition.verification.enable",
    "unclean.leader.election.enable",
];

/// Whether the operator changes `key` on the running brokers (so it needs no restart).
pub fn is_dynamic_option(key: &str) -> bool {
    DYNAMIC_OPTIONS.contains(&key)
}

/// Every option [`is_dynamic_option`] accepts.
pub fn dynamic_options() -> &'static [&'static str] {
    DYNAMIC_OPTIONS
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn forbidden_prefixes_and_exceptions() {
        assert!(is_forbidden("listeners"));
        assert!(is_forbidden("listener.name.plain.foo"));
        assert!(is_forbidden("ssl.keystore.location"));
        assert!(is_forbidden("SSL.keystore.location"));
        assert!(is_forbidden("controller.quorum.voters"));
        assert!(is_forbidden("metadata.log.dir"));
        assert!(is_forbidden("log.dirs"));
        assert!(is_forbidden("portal"));
        assert!(!is_forbidden("ssl.cipher.suites"));
        assert!(!is_forbidden("controller.quorum.fetch.timeout.ms"));
        assert!(!is_forbidden("auto.create.topics.enable"));
        assert!(!is_forbidden("log.retention.hours"));
    }

    #[test]
    fn user_configuration_drops_forbidden_keys_and_adds_defaults() {
        let config: strimzi_api::schema::FreeFormMap = serde_json::from_value(json!({
            "offsets.topic.replication.factor": 3,
            "listeners": "PLAINTEXT://:9092",
            "auto.create.topics.enable": false,
            "ratio": 0.5,
            "list": [1],
        }))
        .unwrap();
        let (properties, warnings) = user_configuration(Some(&config));
        assert_eq!(
            properties.write(),
            "min.insync.replicas=1\nauto.create.topics.enable=false\noffsets.topic.replication.factor=3\nratio=0.5\n"
        );
        assert_eq!(warnings.len(), 2);
        assert!(warnings[1].message.contains("\"listeners\" is forbidden"));
    }

    #[test]
    fn user_value_replaces_default_in_place() {
        let config: strimzi_api::schema::FreeFormMap =
            serde_json::from_value(json!({"min.insync.replicas": 2})).unwrap();
        let (properties, _) = user_configuration(Some(&config));
        assert_eq!(properties.write(), "min.insync.replicas=2\n");
    }

    #[test]
    fn writing_escapes_like_strimzi() {
        let properties = Properties::from_pairs([("a b=c", " x\\y\nz")]);
        assert_eq!(properties.write(), "a\\ b\\=c=\\ x\\\\y\\nz\n");
    }

    #[test]
    fn parsing_reads_what_writing_wrote() {
        let properties = Properties::from_pairs([
            ("a b=c:d", " x\\y\nz\r"),
            ("plain", "value with = and : inside"),
            ("empty", ""),
        ]);
        assert_eq!(Properties::parse(&properties.write()), properties);
    }

    #[test]
    fn parsing_follows_java_properties_files() {
        let text = "  spaced   value with trailing space \ncontinued = first \\\n    second\nescaped\\:key:\\u0041\\tB\n#comment\n!comment\ndup=1\ndup=2\nlast=end\\";
        let properties = Properties::parse(text);
        assert_eq!(
            properties.entries(),
            [
                ("spaced".to_owned(), "value with trailing space ".to_owned()),
                ("continued".to_owned(), "first second".to_owned()),
                ("escaped:key".to_owned(), "A\tB".to_owned()),
                ("dup".to_owned(), "2".to_owned()),
                ("last".to_owned(), "end".to_owned()),
            ]
        );
    }

    #[test]
    fn parsing_reads_pairs_and_skips_comments() {
        let properties = Properties::parse("# c\nname = Kafka\n\nmonitorInterval: 30\n! x\n");
        assert_eq!(properties.get("name"), Some("Kafka"));
        assert_eq!(properties.get("monitorInterval"), Some("30"));
        assert_eq!(properties.entries().len(), 2);
    }
}
