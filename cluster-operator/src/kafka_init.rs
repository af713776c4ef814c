//! What the Kafka pods' init container writes before Kafka starts (`strimzi-kafka-init`,
//! started as `/opt/strimzi/bin/kafka_init_run.sh` like Strimzi's): the broker's rack, taken
//! from a label of the node the pod was scheduled to, and the node's addresses for `nodeport`
//! listeners. The broker configuration reads both through Kafka's config providers
//! (`${strimzidir:/opt/kafka/init:rack.id}`,
//! `${strimzifile:/opt/kafka/init/external.address:nodeport.<type>.address}`).
//!
//! The files are computed from the node object by pure functions; [`run`] only reads the
//! node and writes them.

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::{Node, NodeAddress};
use kube::{Api, Client};
use strimzi_api::kafka::listener::NodeAddressType;
use strimzi_operator_common::api_error::ApiCallError;
use thiserror::Error;

/// Folder the files go to (`INIT_FOLDER`), unless set otherwise.
pub const DEFAULT_INIT_FOLDER: &str = "/opt/kafka/init";
/// File holding the rack ID (the label's value, no line end).
pub const RACK_FILE: &str = "rack.id";
/// File holding `nodeport.<type>.address=<address>` lines.
pub const EXTERNAL_ADDRESS_FILE: &str = "external.address";

/// Everything that can stop the init container; [`KafkaInitError::reason`] names each kind.
#[derive(Debug, Error)]
pub enum KafkaInitError {
    /// A required variable is missing.
    #[error(
        "{0} is not set: the init container needs the name of its node (fieldRef spec.nodeName)"
    )]
    MissingVariable(&'static str),
    /// The node could not be read.
    #[error(transparent)]
    ReadNode(#[from] ApiCallError),
    /// The node lacks the rack label.
    #[error("node {node} has no label {key} to take the rack ID from")]
    MissingRackLabel {
        /// The node's name.
        node: String,
        /// The topology label key.
        key: String,
    },
    /// The node reports no address at all.
    #[error("node {0} reports no address for nodeport listeners to advertise")]
    NoAddress(String),
    /// A file could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl KafkaInitError {
    /// A stable name of the error's kind.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::MissingVariable(_) => "MissingVariable",
            Self::ReadNode(_) => "NodeUnreadable",
            Self::MissingRackLabel { .. } => "MissingRackLabel",
            Self::NoAddress(_) => "NoNodeAddress",
            Self::Write { .. } => "WriteFailed",
        }
    }
}

/// The init container's settings, from the variables the cluster operator gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KafkaInitConfig {
    /// The node the pod runs on (`NODE_NAME`).
    pub node_name: String,
    /// The node label holding the rack (`RACK_TOPOLOGY_KEY`); no rack file without it.
    pub rack_topology_key: Option<String>,
    /// Whether the node's addresses are written (`EXTERNAL_ADDRESS` set to anything).
    pub external_address: bool,
    /// Where the files go (`INIT_FOLDER`).
    pub init_folder: PathBuf,
}

impl KafkaInitConfig {
    /// Reads the settings from `lookup`, which returns a variable's value if set.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, KafkaInitError> {
        let get = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        Ok(Self {
            node_name: get("NODE_NAME").ok_or(KafkaInitError::MissingVariable("NODE_NAME"))?,
            rack_topology_key: get("RACK_TOPOLOGY_KEY"),
            external_address: get("EXTERNAL_ADDRESS").is_some(),
            init_folder: PathBuf::from(
                get("INIT_FOLDER").unwrap_or_else(|| DEFAULT_INIT_FOLDER.to_owned()),
            ),
        })
    }
}

/// The rack ID: the value of the node's `key` label.
pub fn rack_id(node: &Node, key: &str) -> Result<String, KafkaInitError> {
    node.metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(key))
        .cloned()
        .ok_or_else(|| KafkaInitError::MissingRackLabel {
            node: node.metadata.name.clone().unwrap_or_default(),
            key: key.to_owned(),
        })
}

/// The address types in the order of preference used when a listener names none.
const DEFAULT_PREFERENCE: [&str; 5] = [
    "ExternalDNS",
    "ExternalIP",
    "InternalDNS",
    "InternalIP",
    "Hostname",
];

/// The node address advertised for `preferred`: the first address of that type, else the
/// first of the default preference order. Two addresses of one type: the first counts.
pub fn node_address(addresses: &[NodeAddress], preferred: Option<&str>) -> Option<String> {
    let first_of = |kind: &str| {
        addresses
            .iter()
            .find(|address| address.type_ == kind)
            .map(|address| address.address.clone())
    };
    preferred
        .and_then(first_of)
        .or_else(|| DEFAULT_PREFERENCE.into_iter().find_map(first_of))
}

/// The content of [`EXTERNAL_ADDRESS_FILE`]: the default address, then one line per address
/// type, each `nodeport.<type in lower case>.address=<address>`.
pub fn external_address_file(node: &Node) -> Result<String, KafkaInitError> {
    let addresses = node
        .status
        .as_ref()
        .and_then(|status| status.addresses.as_deref())
        .unwrap_or_default();
    let default = node_address(addresses, None)
        .ok_or_else(|| KafkaInitError::NoAddress(node.metadata.name.clone().unwrap_or_default()))?;
    let mut file = format!("nodeport.default.address={default}\n");
    for kind in [
        NodeAddressType::ExternalIp,
        NodeAddressType::ExternalDns,
        NodeAddressType::InternalIp,
        NodeAddressType::InternalDns,
        NodeAddressType::Hostname,
    ] {
        let name = address_type_name(kind);
        let address = node_address(addresses, Some(name)).unwrap_or(default.clone());
        file.push_str(&format!(
            "nodeport.{}.address={address}\n",
            name.to_ascii_lowercase()
        ));
    }
    Ok(file)
}

/// The name Kubernetes gives an address type in a node's status.
fn address_type_name(kind: NodeAddressType) -> &'static str {
    match kind {
        NodeAddressType::ExternalIp => "ExternalIP",
        NodeAddressType::ExternalDns => "ExternalDNS",
        NodeAddressType::InternalIp => "InternalIP",
        NodeAddressType::InternalDns => "InternalDNS",
        NodeAddressType::Hostname => "Hostname",
    }
}

/// The files to write for `node`: name and content.
pub fn files(
    config: &KafkaInitConfig,
    node: &Node,
) -> Result<Vec<(&'static str, String)>, KafkaInitError> {
    let mut files = Vec::new();
    if let Some(key) = &config.rack_topology_key {
        files.push((RACK_FILE, rack_id(node, key)?));
    }
    if config.external_address {
        files.push((EXTERNAL_ADDRESS_FILE, external_address_file(node)?));
    }
    Ok(files)
}

/// Reads the node and writes the files; returns what it wrote.
pub async fn run(client: Client, config: &KafkaInitConfig) -> Result<Vec<PathBuf>, KafkaInitError> {
    let node = Api::<Node>::all(client)
        .get(&config.node_name)
        .await
        .map_err(|source| {
            ApiCallError::new("reading", format!("node {}", config.node_name), source)
        })?;
    let mut written = Vec::new();
    for (name, content) in files(config, &node)? {
        written.push(write(&config.init_folder, name, &content)?);
    }
    Ok(written)
}

fn write(folder: &Path, name: &str, content: &str) -> Result<PathBuf, KafkaInitError> {
    let path = folder.join(name);
    std::fs::write(&path, content).map_err(|source| KafkaInitError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::NodeStatus;
    use kube::api::ObjectMeta;

    fn node(labels: &[(&str, &str)], addresses: &[(&str, &str)]) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some("node-1".into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(key, value)| ((*key).into(), (*value).into()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            status: Some(NodeStatus {
                addresses: Some(
                    addresses
                        .iter()
                        .map(|(kind, address)| NodeAddress {
                            type_: (*kind).into(),
                            address: (*address).into(),
                        })
                        .collect(),
                ),
                ..NodeStatus::default()
            }),
            ..Node::default()
        }
    }

    fn config(lookup: &[(&str, &str)]) -> Result<KafkaInitConfig, KafkaInitError> {
        KafkaInitConfig::from_lookup(|name| {
            lookup
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn the_rack_is_the_value_of_the_topology_label() {
        let node = node(&[("topology.kubernetes.io/zone", "zone-b")], &[]);
        assert_eq!(
            rack_id(&node, "topology.kubernetes.io/zone").unwrap(),
            "zone-b"
        );
        let missing = rack_id(&node, "rack").unwrap_err();
        assert_eq!(missing.reason(), "MissingRackLabel");
        assert_eq!(
            missing.to_string(),
            "node node-1 has no label rack to take the rack ID from"
        );
    }

    #[test]
    fn addresses_follow_the_preference_and_fall_back_to_the_default_order() {
        let addresses = node(
            &[],
            &[
                ("Hostname", "node-1"),
                ("InternalIP", "10.0.0.7"),
                ("InternalIP", "10.0.0.8"),
                ("ExternalIP", "192.0.2.7"),
            ],
        );
        let file = external_address_file(&addresses).unwrap();
        assert_eq!(
            file,
            "nodeport.default.address=192.0.2.7\n\
             nodeport.externalip.address=192.0.2.7\n\
             nodeport.externaldns.address=192.0.2.7\n\
             nodeport.internalip.address=10.0.0.7\n\
             nodeport.internaldns.address=192.0.2.7\n\
             nodeport.hostname.address=node-1\n"
        );
        let internal_only = node(&[], &[("Hostname", "n"), ("InternalDNS", "n.example")]);
        assert_eq!(
            node_address(
                internal_only
                    .status
                    .as_ref()
                    .unwrap()
                    .addresses
                    .as_deref()
                    .unwrap(),
                None
            )
            .as_deref(),
            Some("n.example")
        );
        let none = external_address_file(&node(&[], &[])).unwrap_err();
        assert_eq!(none.reason(), "NoNodeAddress");
    }

    #[test]
    fn files_are_written_only_when_asked_for() {
        let node = node(
            &[("topology.kubernetes.io/zone", "zone-a")],
            &[("InternalIP", "10.0.0.7")],
        );
        let nothing = config(&[("NODE_NAME", "node-1")]).unwrap();
        assert!(files(&nothing, &node).unwrap().is_empty());
        assert_eq!(nothing.init_folder, PathBuf::from(DEFAULT_INIT_FOLDER));
        let both = config(&[
            ("NODE_NAME", "node-1"),
            ("RACK_TOPOLOGY_KEY", "topology.kubernetes.io/zone"),
            ("EXTERNAL_ADDRESS", "TRUE"),
            ("INIT_FOLDER", "/tmp/init"),
        ])
        .unwrap();
        let written = files(&both, &node).unwrap();
        assert_eq!(written[0], (RACK_FILE, "zone-a".to_owned()));
        assert_eq!(written[1].0, EXTERNAL_ADDRESS_FILE);
        assert!(
            written[1]
                .1
                .starts_with("nodeport.default.address=10.0.0.7\n")
        );
        assert_eq!(both.init_folder, PathBuf::from("/tmp/init"));
        assert_eq!(
            config(&[]).unwrap_err().to_string(),
            "NODE_NAME is not set: the init container needs the name of its node (fieldRef spec.nodeName)"
        );
    }

    #[test]
    fn files_land_in_the_init_folder() {
        let folder = std::env::temp_dir().join(format!("kafka-init-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let path = write(&folder, RACK_FILE, "zone-c").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "zone-c");
        let missing = write(&folder.join("absent"), RACK_FILE, "x").unwrap_err();
        assert_eq!(missing.reason(), "WriteFailed");
        std::fs::remove_dir_all(&folder).unwrap();
    }
}
