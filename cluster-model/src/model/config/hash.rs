//! `strimzi.io/configuration-hash`, the annotation through which a change of a node's
//! configuration that Kafka cannot apply while running restarts the node.
//!
//! It is the value Strimzi 1.2's operator writes for the same configuration, so that pods either
//! operator makes from one spec are identical (same `strimzi.io/revision`): the hash stub of
//!
//! - for a broker, the addresses it advertises on the user's listeners (entries
//!   `<NAME>_<PORT>://<host>`, sorted and joined by spaces, directly followed by the entries
//!   `<NAME>_<PORT>://<port>` likewise), then
//! - for every node, the options of its `server.config` that are not Kafka broker options
//!   (plugin options, per-listener options, config providers) as `key=value` strings, printed
//!   as Java prints a `HashSet` of them: `[a=b, c=d]` in the set's iteration order.
//!
//! Options Kafka knows are not part of it: Kafka's dynamically updatable ones are applied
//! while the nodes run, and Strimzi's operator decides on the static ones by comparing the
//! running node's configuration.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use super::hash_stub;
use super::options::Properties;
use crate::model::listeners::ListenerAddresses;
use crate::model::meta::java_hash_set_order;
use crate::model::{KafkaCluster, KafkaNode};

/// The names of Kafka 4.2's broker options (see the file's header for how it was made).
static KAFKA_4_2_OPTIONS: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| option_names(include_str!("kafka-4.2-broker-options.txt")));
/// The names of Kafka 4.3's broker options (see the file's header for how it was made).
static KAFKA_4_3_OPTIONS: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| option_names(include_str!("kafka-4.3-broker-options.txt")));

/// The names in a list of option names: one a line, `#` starting a comment line.
fn option_names(list: &'static str) -> BTreeSet<&'static str> {
    list.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
}

/// Whether Kafka `version` defines a broker option named `key`. Versions are told apart by
/// their minor version (4.3.0 and 4.3.1 define the same options); a version newer than 4.3
/// is taken for 4.3.
pub fn is_kafka_broker_option(version: &str, key: &str) -> bool {
    let names = if version.starts_with("4.2.") {
        &KAFKA_4_2_OPTIONS
    } else {
        &KAFKA_4_3_OPTIONS
    };
    names.contains(key)
}

/// The options of a `server.config` Kafka `version` does not define, as `key=value` strings
/// printed like a Java `HashSet` of them (`[a=b, c=d]`, in that set's iteration order).
pub fn plugin_options_summary(version: &str, server_config: &str) -> String {
    let unknown: Vec<String> = Properties::parse(server_config)
        .entries()
        .iter()
        .filter(|(key, _)| !is_kafka_broker_option(version, key))
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    format!("[{}]", java_hash_set_order(unknown).join(", "))
}

impl KafkaCluster {
    /// `strimzi.io/configuration-hash` of every node by pod name.
    pub fn configuration_hashes(&self, addresses: &ListenerAddresses) -> BTreeMap<String, String> {
        self.nodes()
            .map(|node| {
                let hash = self.configuration_hash(&node, addresses);
                (node.pod_name, hash)
            })
            .collect()
    }

    /// `strimzi.io/configuration-hash` of `node` (see the module).
    pub fn configuration_hash(&self, node: &KafkaNode, addresses: &ListenerAddresses) -> String {
        let mut input = String::new();
        if node.is_broker() {
            input.push_str(&self.advertised_addresses_summary(node, addresses));
        }
        input.push_str(&plugin_options_summary(
            &self.version.version,
            &self.server_config(node, addresses),
        ));
        hash_stub(&input)
    }

    /// The hosts, then the ports, `node` (a broker) advertises on the user's listeners, each
    /// part as sorted `<NAME>_<PORT>://<value>` entries joined by spaces.
    fn advertised_addresses_summary(
        &self,
        node: &KafkaNode,
        addresses: &ListenerAddresses,
    ) -> String {
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        for listener in &self.spec.listeners {
            let identifier = format!("{}_{}", listener.name.to_uppercase(), listener.port);
            let (host, port) = self.advertised_address(listener, node, addresses);
            hosts.push(format!("{identifier}://{host}"));
            ports.push(format!("{identifier}://{port}"));
        }
        hosts.sort();
        ports.sort();
        format!("{}{}", hosts.join(" "), ports.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_options_are_known_and_plugin_options_are_not() {
        for key in [
            "node.id",
            "controller.quorum.voters",
            "listeners",
            "advertised.listeners",
            "config.providers",
            "min.insync.replicas",
        ] {
            assert!(is_kafka_broker_option("4.3.1", key), "{key}");
            assert!(is_kafka_broker_option("4.2.0", key), "{key}");
        }
        for key in [
            "listener.name.tls-9093.ssl.keystore.type",
            "config.providers.strimzienv.class",
            "client.quota.callback.static.produce",
        ] {
            assert!(!is_kafka_broker_option("4.3.1", key), "{key}");
        }
        // New in Kafka 4.3.
        assert!(is_kafka_broker_option("4.3.0", "cordoned.log.dirs"));
        assert!(!is_kafka_broker_option("4.2.0", "cordoned.log.dirs"));
    }

    #[test]
    fn plugin_options_are_printed_as_a_java_hash_set() {
        let server_config = "# comment\nnode.id=1\nlisteners=PLAIN-9092://0.0.0.0:9092\n\
            listener.name.tls-9093.ssl.keystore.type=PEM\n\
            config.providers.strimzienv.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n\
            my.plugin.option=1\nclient.quota.callback.static.produce=1000\n\
            min.insync.replicas=2\nauthorizer.plugin.setting=a=b\n";
        // What Java's `HashSet.toString()` gives for these entries.
        assert_eq!(
            plugin_options_summary("4.3.1", server_config),
            "[config.providers.strimzienv.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider, \
             my.plugin.option=1, listener.name.tls-9093.ssl.keystore.type=PEM, \
             client.quota.callback.static.produce=1000, authorizer.plugin.setting=a=b]"
        );
        assert_eq!(plugin_options_summary("4.3.1", "node.id=1\n"), "[]");
    }
}
