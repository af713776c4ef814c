//! Which static Kafka options of a node must change: the difference between the configuration
//! a running node describes (Kafka's DescribeConfigs of its own broker resource) and the
//! `server.config` it should run with, restricted to the options that only a restart changes.
//!
//! The configuration hash on the pods covers only what Kafka does not know (plugin options) and
//! the advertised addresses, as Strimzi's does, so a changed Kafka option does not change the
//! pod. Like Strimzi's roller, the operator then asks each node what it runs and restarts the
//! nodes where a static option differs. Kafka prints back parsed values (lists without spaces,
//! lower-case booleans, numbers as it parsed them or as written, config provider placeholders
//! resolved, hidden values of sensitive options), so values are compared loosely and only
//! where a restart would change what Kafka describes: a difference that survives a restart
//! would restart the node again and again, so whatever cannot be judged is left alone.

use strimzi_kafka_model::{ConfigEntry, ConfigSource};

use crate::model::config::hash::is_kafka_broker_option;
use crate::model::config::options::{Properties, is_dynamic_option};

/// The placeholder the node's id replaces in a `server.config` (Strimzi's image fills it when
/// it writes the node's configuration file).
const NODE_ID_PLACEHOLDER: &str = "${STRIMZI_BROKER_ID}";

/// Options never compared: derived by Kafka (`broker.id` from `node.id`), part of the
/// configuration hash (`advertised.listeners`), or read from a file the node's init container
/// writes (`broker.rack`).
const NEVER_COMPARED: [&str; 3] = ["broker.id", "advertised.listeners", "broker.rack"];

/// Prefix of the KRaft quorum options, compared on controllers only: brokers follow the
/// quorum without a restart.
const QUORUM_PREFIX: &str = "controller.quorum.";

/// What is known of one node for the comparison.
#[derive(Clone, Copy, Debug)]
pub struct NodeConfiguration<'a> {
    /// The node id.
    pub node_id: i32,
    /// Whether the node is a KRaft controller (alone or with the broker role).
    pub controller: bool,
    /// The Kafka version the node runs (e.g. `4.3.1`), which decides which options exist.
    pub kafka_version: &'a str,
    /// The `server.config` the node should run with.
    pub desired: &'a str,
    /// The node's configuration as it describes it.
    pub described: &'a [ConfigEntry],
    /// Whether the quorum is dynamic: its voters live in the metadata log, and
    /// `controller.quorum.voters` only tells a node where to find them, so a change of it
    /// restarts nothing (it is read at the next start).
    pub dynamic_quorum: bool,
}

/// The option that lists the voters of a static quorum.
pub const QUORUM_VOTERS: &str = "controller.quorum.voters";

/// One static option whose running value is not the desired one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticChange {
    /// The option name.
    pub name: String,
    /// What the node runs with (`None` when Kafka describes no value).
    pub running: Option<String>,
    /// What it should run with (`None` when the option was removed from `server.config`).
    pub desired: Option<String>,
}

/// The static options of `node` whose desired value differs from the running one, sorted by
/// name; empty when the node needs no restart for its configuration.
///
/// An option counts when it is a Kafka broker option of the node's Kafka version that the
/// operator does not apply while the node runs (see [`is_dynamic_option`]; per-broker
/// dynamic options of Kafka, such as `ssl.cipher.suites`, are applied by a restart too), it is
/// not one of the options never compared (`broker.id`, `advertised.listeners`, `broker.rack`,
/// `controller.quorum.*` on a node without the controller role, and
/// `controller.quorum.voters` in a dynamic quorum), and either
///
/// - the desired value differs from the described one, where the described value comes from
///   the node's configuration file or Kafka's default (values set through the admin API stay
///   whatever a restart does) and is not hidden; a desired value holding a placeholder (`${`)
///   is never compared, as Kafka describes the resolved value; or
/// - the option is in the node's configuration file but no longer desired.
pub fn static_changes(node: &NodeConfiguration<'_>) -> Vec<StaticChange> {
    let compared = |name: &str| {
        is_kafka_broker_option(node.kafka_version, name)
            && !is_dynamic_option(name)
            && !NEVER_COMPARED.contains(&name)
            && (node.controller || !name.starts_with(QUORUM_PREFIX))
            && (!node.dynamic_quorum || name != QUORUM_VOTERS)
    };
    let node_id = node.node_id.to_string();
    let desired = Properties::parse(node.desired);
    let mut changes: Vec<StaticChange> = desired
        .entries()
        .iter()
        .filter(|(name, _)| compared(name))
        .filter_map(|(name, value)| {
            let value = value.replace(NODE_ID_PLACEHOLDER, &node_id);
            let entry = node.described.iter().find(|entry| entry.name == *name)?;
            differs(&value, entry).then(|| StaticChange {
                name: name.clone(),
                running: entry.value.clone(),
                desired: Some(value),
            })
        })
        .collect();
    changes.extend(
        node.described
            .iter()
            .filter(|entry| entry.source == ConfigSource::StaticBroker && compared(&entry.name))
            .filter(|entry| desired.get(&entry.name).is_none())
            .map(|entry| StaticChange {
                name: entry.name.clone(),
                running: entry.value.clone(),
                desired: None,
            }),
    );
    changes.sort_by(|a, b| a.name.cmp(&b.name));
    changes
}

/// Whether `desired` differs from what `entry` describes, as far as a restart can tell.
fn differs(desired: &str, entry: &ConfigEntry) -> bool {
    if desired.contains("${") || entry.sensitive {
        return false;
    }
    if !matches!(
        entry.source,
        ConfigSource::StaticBroker | ConfigSource::Default
    ) {
        return false;
    }
    match &entry.value {
        Some(running) => !same_value(desired, running),
        // Kafka describes an option without a default and not set with no value: setting
        // it is a change; a value it does not print after a restart is not judged again
        // (its source is then the file).
        None => entry.source == ConfigSource::Default && !desired.trim().is_empty(),
    }
}

/// Whether two option values mean the same to Kafka: equal once trimmed, or as lists
/// (comma-separated, blanks around the items and empty items ignored) of items that are
/// equal once trimmed, equal booleans whatever their case, or equal numbers however written.
pub fn same_value(desired: &str, running: &str) -> bool {
    let items = |value: &str| -> Vec<String> {
        value
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let (desired, running) = (items(desired), items(running));
    desired.len() == running.len() && desired.iter().zip(&running).all(|(a, b)| same_item(a, b))
}

/// Whether two trimmed scalar values mean the same to Kafka.
fn same_item(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let boolean = |text: &str| {
        ["true", "false"]
            .into_iter()
            .find(|word| text.eq_ignore_ascii_case(word))
    };
    if let (Some(a), Some(b)) = (boolean(a), boolean(b)) {
        return a == b;
    }
    if let (Ok(a), Ok(b)) = (a.parse::<i64>(), b.parse::<i64>()) {
        return a == b;
    }
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(a), Ok(b)) if a.is_finite() && b.is_finite() => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The entries of a capture beside this file (see its header).
    fn captured(text: &str) -> Vec<ConfigEntry> {
        text.lines()
            .filter(|line| !line.starts_with('#') && !line.is_empty())
            .map(|line| {
                let fields: Vec<&str> = line.split('\t').collect();
                let value = fields[1]
                    .strip_prefix('[')
                    .and_then(|value| value.strip_suffix(']'))
                    .map(str::to_owned);
                assert!(value.is_some() || fields[1] == "<null>", "{line}");
                let source = match fields[2] {
                    "STATIC_BROKER_CONFIG" => ConfigSource::StaticBroker,
                    "DEFAULT_CONFIG" => ConfigSource::Default,
                    "DYNAMIC_BROKER_CONFIG" => ConfigSource::DynamicBroker,
                    "DYNAMIC_DEFAULT_BROKER_CONFIG" => ConfigSource::DynamicDefaultBroker,
                    other => panic!("source {other}"),
                };
                ConfigEntry {
                    name: fields[0].to_owned(),
                    value,
                    source,
                    read_only: fields[3] == "ro",
                    sensitive: fields[4] == "sensitive",
                }
            })
            .collect()
    }

    const BROKER_CONFIG: &str = include_str!("described/broker-3.properties");
    const CONTROLLER_CONFIG: &str = include_str!("described/controller-0.properties");

    fn broker_entries() -> Vec<ConfigEntry> {
        captured(include_str!("described/broker-3.tsv"))
    }

    fn controller_entries() -> Vec<ConfigEntry> {
        captured(include_str!("described/controller-0.tsv"))
    }

    fn changes(desired: &str, described: &[ConfigEntry], controller: bool) -> Vec<StaticChange> {
        static_changes(&NodeConfiguration {
            node_id: if controller { 0 } else { 3 },
            controller,
            kafka_version: "4.3.1",
            desired,
            described,
            dynamic_quorum: false,
        })
    }

    fn names(changes: &[StaticChange]) -> Vec<&str> {
        changes.iter().map(|change| change.name.as_str()).collect()
    }

    /// `config` with the line starting `key=` replaced by `line` (removed when empty).
    fn with(config: &str, key: &str, line: &str) -> String {
        let prefix = format!("{key}=");
        assert!(config.lines().any(|l| l.starts_with(&prefix)), "{key}");
        config
            .lines()
            .map(|l| if l.starts_with(&prefix) { line } else { l })
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_node_running_its_configuration_needs_no_restart() {
        // The captures hold lists with spaces given, FALSE, .2, a trailing space, resolved
        // placeholders, hidden plugin options and dynamically set values.
        assert_eq!(changes(BROKER_CONFIG, &broker_entries(), false), []);
        assert_eq!(changes(CONTROLLER_CONFIG, &controller_entries(), true), []);
    }

    #[test]
    fn a_changed_static_option_is_reported_with_both_values() {
        let desired = with(
            BROKER_CONFIG,
            "queued.max.requests",
            "queued.max.requests=700",
        );
        assert_eq!(
            changes(&desired, &broker_entries(), false),
            [StaticChange {
                name: "queued.max.requests".to_owned(),
                running: Some("600".to_owned()),
                desired: Some("700".to_owned()),
            }]
        );
        let desired = with(
            CONTROLLER_CONFIG,
            "queued.max.requests",
            "queued.max.requests=700",
        );
        assert_eq!(
            names(&changes(&desired, &controller_entries(), true)),
            ["queued.max.requests"]
        );
    }

    #[test]
    fn values_printed_back_differently_are_the_same() {
        let entries = broker_entries();
        for (key, line) in [
            (
                "auto.create.topics.enable",
                "auto.create.topics.enable=false",
            ),
            (
                "auto.create.topics.enable",
                "auto.create.topics.enable= False ",
            ),
            (
                "remote.log.manager.task.retry.jitter",
                "remote.log.manager.task.retry.jitter=0.2",
            ),
            (
                "remote.log.manager.task.retry.jitter",
                "remote.log.manager.task.retry.jitter=2e-1",
            ),
            ("num.partitions", "num.partitions=2"),
            (
                "ssl.cipher.suites",
                "ssl.cipher.suites=TLS_AES_256_GCM_SHA384,TLS_AES_128_GCM_SHA256",
            ),
            (
                "ssl.enabled.protocols",
                "ssl.enabled.protocols=TLSv1.3,  TLSv1.2,",
            ),
            (
                "group.consumer.assignors",
                "group.consumer.assignors= uniform , range",
            ),
        ] {
            let desired = with(BROKER_CONFIG, key, line);
            assert_eq!(changes(&desired, &entries, false), [], "{line}");
        }
    }

    #[test]
    fn values_that_differ_after_normalising_are_reported() {
        let entries = broker_entries();
        for (key, line) in [
            (
                "auto.create.topics.enable",
                "auto.create.topics.enable=true",
            ),
            (
                "remote.log.manager.task.retry.jitter",
                "remote.log.manager.task.retry.jitter=0.25",
            ),
            ("num.partitions", "num.partitions=3"),
            (
                "ssl.cipher.suites",
                "ssl.cipher.suites=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384",
            ),
            ("ssl.enabled.protocols", "ssl.enabled.protocols=TLSv1.3"),
            (
                "authorizer.class.name",
                "authorizer.class.name=org.example.Authorizer",
            ),
        ] {
            let desired = with(BROKER_CONFIG, key, line);
            assert_eq!(names(&changes(&desired, &entries, false)), [key], "{line}");
        }
    }

    #[test]
    fn a_removed_option_from_the_file_is_a_change_and_a_default_one_is_not() {
        let entries = broker_entries();
        let desired = with(BROKER_CONFIG, "authorizer.class.name", "");
        assert_eq!(
            changes(&desired, &entries, false),
            [StaticChange {
                name: "authorizer.class.name".to_owned(),
                running: Some("org.apache.kafka.metadata.authorizer.StandardAuthorizer".to_owned()),
                desired: None,
            }]
        );
        // Plugin options and dynamically applied ones leave without a restart.
        let desired = with(BROKER_CONFIG, "my.plugin.option", "");
        let desired = with(&desired, "log.retention.ms", "");
        let desired = with(&desired, "super.users", "");
        assert_eq!(changes(&desired, &entries, false), []);
    }

    #[test]
    fn a_new_option_counts_against_kafkas_default() {
        let entries = broker_entries();
        let desired = format!("{BROKER_CONFIG}\nsocket.listen.backlog.size=100\n");
        assert_eq!(
            names(&changes(&desired, &entries, false)),
            ["socket.listen.backlog.size"]
        );
        // An option without a default: set now, a change; set to nothing, none.
        let desired = format!("{BROKER_CONFIG}\nlog.retention.minutes=60\n");
        assert_eq!(
            names(&changes(&desired, &entries, false)),
            ["log.retention.minutes"]
        );
        let desired = format!("{BROKER_CONFIG}\nlog.retention.minutes=\n");
        assert_eq!(changes(&desired, &entries, false), []);
        let desired = format!("{BROKER_CONFIG}\nnum.partitions.typo=3\n");
        assert_eq!(changes(&desired, &entries, false), []);
    }

    #[test]
    fn what_a_restart_cannot_settle_is_never_reported() {
        let mut entries = broker_entries();
        // A placeholder: Kafka describes the resolved value.
        let desired = with(
            BROKER_CONFIG,
            "default.replication.factor",
            "default.replication.factor=${strimzienv:OTHER}",
        );
        assert_eq!(changes(&desired, &entries, false), []);
        // A value set through the admin API stays whatever the file says.
        let index = entries
            .iter()
            .position(|entry| entry.name == "queued.max.requests")
            .unwrap();
        entries[index].source = ConfigSource::DynamicBroker;
        let desired = with(
            BROKER_CONFIG,
            "queued.max.requests",
            "queued.max.requests=700",
        );
        assert_eq!(changes(&desired, &entries, false), []);
        // A hidden value.
        entries[index].source = ConfigSource::StaticBroker;
        entries[index].sensitive = true;
        entries[index].value = None;
        assert_eq!(changes(&desired, &entries, false), []);
        // An option set in the file that Kafka describes without a value.
        entries[index].sensitive = false;
        assert_eq!(changes(&desired, &entries, false), []);
    }

    #[test]
    fn quorum_options_count_on_controllers_and_derived_ones_never() {
        let voters = "controller.quorum.voters=0@127.0.0.1:39099";
        let desired = with(BROKER_CONFIG, "controller.quorum.voters", voters);
        assert_eq!(changes(&desired, &broker_entries(), false), []);
        let desired = with(CONTROLLER_CONFIG, "controller.quorum.voters", voters);
        assert_eq!(
            names(&changes(&desired, &controller_entries(), true)),
            ["controller.quorum.voters"]
        );
        // A dynamic quorum's voters live in the metadata log: the option restarts nothing.
        let in_dynamic_quorum = |desired: &str| {
            static_changes(&NodeConfiguration {
                node_id: 0,
                controller: true,
                kafka_version: "4.3.1",
                desired,
                described: &controller_entries(),
                dynamic_quorum: true,
            })
        };
        assert_eq!(in_dynamic_quorum(&desired), []);
        let desired = format!("{desired}\ncontroller.quorum.fetch.timeout.ms=3000\n");
        assert_eq!(
            names(&in_dynamic_quorum(&desired)),
            ["controller.quorum.fetch.timeout.ms"]
        );
        let desired = with(
            BROKER_CONFIG,
            "advertised.listeners",
            "advertised.listeners=PLAIN-9092://elsewhere:9092",
        );
        assert_eq!(changes(&desired, &broker_entries(), false), []);
    }

    #[test]
    fn the_node_id_placeholder_is_filled_before_comparing() {
        let desired = with(BROKER_CONFIG, "node.id", "node.id=${STRIMZI_BROKER_ID}");
        assert_eq!(changes(&desired, &broker_entries(), false), []);
        let other = static_changes(&NodeConfiguration {
            node_id: 4,
            controller: false,
            kafka_version: "4.3.1",
            desired: &desired,
            described: &broker_entries(),
            dynamic_quorum: false,
        });
        assert_eq!(names(&other), ["node.id"]);
    }

    #[test]
    fn options_new_in_a_kafka_version_count_only_from_that_version() {
        // cordoned.log.dirs came with Kafka 4.3: to 4.2 it is a plugin option (in the hash).
        let desired = format!("{BROKER_CONFIG}\ncordoned.log.dirs=/data\n");
        let described = [ConfigEntry {
            name: "cordoned.log.dirs".to_owned(),
            value: Some(String::new()),
            source: ConfigSource::Default,
            read_only: false,
            sensitive: false,
        }];
        let for_version = |kafka_version| {
            static_changes(&NodeConfiguration {
                node_id: 3,
                controller: false,
                kafka_version,
                desired: &desired,
                described: &described,
                dynamic_quorum: false,
            })
        };
        assert_eq!(names(&for_version("4.3.1")), ["cordoned.log.dirs"]);
        assert_eq!(for_version("4.2.0"), []);
    }

    #[test]
    fn values_compare_as_kafka_reads_them() {
        assert!(same_value(" a, b ,c", "a,b,c"));
        assert!(same_value("", ""));
        assert!(same_value("TRUE", "true"));
        assert!(same_value("1000", "1000.0"));
        assert!(same_value("1e3", "1000"));
        assert!(!same_value("a,b", "b,a"));
        assert!(!same_value("a", "a,b"));
        assert!(!same_value("x", "X"));
        assert!(!same_value("9007199254740993", "9007199254740992"));
    }
}
