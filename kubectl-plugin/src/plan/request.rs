//! What `plan` is asked to compare with the running cluster: a changed Kafka and node pools
//! from a file, or the live Kafka with `--set` changes.

use std::path::Path;

use serde_json::Value;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;

use crate::error::PluginError;

/// The resources a file holds: at most one Kafka, and node pools.
#[derive(Clone, Debug, Default)]
pub struct Proposed {
    /// The Kafka.
    pub kafka: Option<Value>,
    /// The node pools.
    pub pools: Vec<Value>,
}

impl Proposed {
    /// The Kafka's name: the Kafka's, else the node pools' `strimzi.io/cluster` label.
    pub fn kafka_name(&self) -> Result<String, PluginError> {
        let kafka_name = self.kafka.as_ref().and_then(name_of);
        let pool_cluster = self.pools.iter().find_map(|pool| {
            pool.pointer(&format!(
                "/metadata/labels/{}",
                strimzi_api::labels::CLUSTER.replace('/', "~1")
            ))
            .and_then(Value::as_str)
            .map(str::to_owned)
        });
        kafka_name.or(pool_cluster).ok_or_else(|| {
            PluginError::Input(
                "the file names no Kafka: it needs a Kafka, or KafkaNodePools labelled strimzi.io/cluster".to_owned(),
            )
        })
    }
}

/// `metadata.name` of a resource document.
fn name_of(document: &Value) -> Option<String> {
    document
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Reads the Kafka and KafkaNodePool documents of a YAML file (`-`: standard input); other
/// kinds are refused, so that a typo is not silently ignored.
pub fn read_file(path: &Path) -> Result<Proposed, PluginError> {
    let text = if path == Path::new("-") {
        std::io::read_to_string(std::io::stdin()).map_err(|source| PluginError::File {
            what: "reading standard input".to_owned(),
            source,
        })?
    } else {
        std::fs::read_to_string(path).map_err(|source| PluginError::File {
            what: format!("reading {}", path.display()),
            source,
        })?
    };
    parse_documents(&text, &path.display().to_string())
}

/// The Kafka and KafkaNodePool documents of YAML `text` (read from `origin`).
pub fn parse_documents(text: &str, origin: &str) -> Result<Proposed, PluginError> {
    let mut proposed = Proposed::default();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let value: Value = serde::Deserialize::deserialize(document).map_err(|error| {
            PluginError::Input(format!("{origin}: document {}: {error}", index + 1))
        })?;
        if value.is_null() {
            continue;
        }
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "Kafka" if proposed.kafka.is_some() => {
                return Err(PluginError::Input(format!(
                    "{origin}: more than one Kafka; plan one cluster at a time"
                )));
            }
            "Kafka" => proposed.kafka = Some(value),
            "KafkaNodePool" => proposed.pools.push(value),
            other => {
                return Err(PluginError::Input(format!(
                    "{origin}: document {} is a {other:?}: plan reads Kafka and KafkaNodePool resources only",
                    index + 1
                )));
            }
        }
    }
    if proposed.kafka.is_none() && proposed.pools.is_empty() {
        return Err(PluginError::Input(format!(
            "{origin}: no Kafka or KafkaNodePool in it"
        )));
    }
    Ok(proposed)
}

/// `document` with `change` (`path=value`) made: the path is dotted from the document's root
/// (`spec.kafka.replicas`); after a `config` segment, the rest of the path is one key
/// (`spec.kafka.config.log.retention.ms`); the value is read as YAML (`16`, `true`, `"16"`,
/// `{a: b}`), and `null` removes the field.
pub fn set(document: &mut Value, change: &str) -> Result<(), PluginError> {
    let (path, value) = change
        .split_once('=')
        .ok_or_else(|| PluginError::Input(format!("--set {change}: expected PATH=VALUE")))?;
    let value: Value = serde_yaml_ng::from_str(value)
        .map_err(|error| PluginError::Input(format!("--set {change}: the value: {error}")))?;
    let mut segments: Vec<String> = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let previous_is_config = segments.last().is_some_and(|segment| segment == "config");
        if previous_is_config {
            segments.push(rest.to_owned());
            break;
        }
        let (segment, remainder) = rest.split_once('.').unwrap_or((rest, ""));
        segments.push(segment.to_owned());
        rest = remainder;
    }
    let Some((last, parents)) = segments.split_last() else {
        return Err(PluginError::Input(format!("--set {change}: an empty path")));
    };
    let mut node = document;
    for segment in parents {
        let map = node.as_object_mut().ok_or_else(|| {
            PluginError::Input(format!(
                "--set {change}: {segment} is inside a value that is not an object"
            ))
        })?;
        node = map
            .entry(segment.clone())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    let map = node.as_object_mut().ok_or_else(|| {
        PluginError::Input(format!(
            "--set {change}: {last} is inside a value that is not an object"
        ))
    })?;
    if value.is_null() {
        map.remove(last);
    } else {
        map.insert(last.clone(), value);
    }
    Ok(())
}

/// The Kafka to plan: `live` (the Kafka as the API server has it) with the `spec`, labels and
/// annotations of `proposed` (a document of the same name); `proposed` alone for a new Kafka.
pub fn proposed_kafka(live: Option<&Kafka>, proposed: &Value) -> Result<Kafka, PluginError> {
    merged(live, proposed, "Kafka")
}

/// The node pools to plan: the live ones (`live`), each replaced as [`proposed_kafka`] does
/// by the file's pool of the same name, and the file's new pools.
pub fn proposed_pools(
    live: &[KafkaNodePool],
    proposed: &[Value],
) -> Result<Vec<KafkaNodePool>, PluginError> {
    let mut pools = Vec::new();
    for pool in live {
        let name = pool.metadata.name.clone().unwrap_or_default();
        let replacement = proposed
            .iter()
            .find(|document| name_of(document).as_deref() == Some(name.as_str()));
        pools.push(match replacement {
            Some(document) => merged(Some(pool), document, "KafkaNodePool")?,
            None => pool.clone(),
        });
    }
    for document in proposed {
        let name = name_of(document);
        if !live.iter().any(|pool| pool.metadata.name == name) {
            pools.push(merged(None, document, "KafkaNodePool")?);
        }
    }
    Ok(pools)
}

/// `live` with the spec, labels and annotations of `proposed`, as a `K`.
fn merged<K>(live: Option<&K>, proposed: &Value, kind: &str) -> Result<K, PluginError>
where
    K: serde::Serialize + serde::de::DeserializeOwned,
{
    let mut document = match live {
        Some(live) => serde_json::to_value(live)
            .map_err(|error| PluginError::Input(format!("the live {kind}: {error}")))?,
        None => proposed.clone(),
    };
    if live.is_some() {
        for pointer in ["/spec", "/metadata/labels", "/metadata/annotations"] {
            if let (Some(value), Some(target)) =
                (proposed.pointer(pointer), document.pointer_mut(pointer))
            {
                *target = value.clone();
            } else if let Some(value) = proposed.pointer(pointer) {
                let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
                if let Some(map) = document.pointer_mut(parent).and_then(Value::as_object_mut) {
                    map.insert(key.to_owned(), value.clone());
                }
            }
        }
    }
    serde_json::from_value(document).map_err(|error| {
        let name = name_of(proposed).unwrap_or_default();
        PluginError::Input(format!("{kind} {name} is not valid: {error}"))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn set_reads_the_rest_of_a_config_path_as_one_key() {
        let mut kafka = json!({"spec": {"kafka": {"config": {"a": 1}}}});
        set(&mut kafka, "spec.kafka.config.log.retention.ms=1000").unwrap();
        set(
            &mut kafka,
            "spec.kafka.template.pod.metadata.labels.team=blue",
        )
        .unwrap();
        set(&mut kafka, "spec.kafka.config.a=null").unwrap();
        assert_eq!(
            kafka,
            json!({"spec": {"kafka": {
                "config": {"log.retention.ms": 1000},
                "template": {"pod": {"metadata": {"labels": {"team": "blue"}}}},
            }}})
        );
        assert!(set(&mut kafka, "spec.kafka").is_err());
        assert!(set(&mut kafka, "spec.kafka.config.log.retention.ms.x=1").is_ok());
    }

    #[test]
    fn a_file_holds_one_kafka_and_its_pools_only() {
        let text = "kind: Kafka\nmetadata: {name: a}\n---\nkind: KafkaNodePool\nmetadata: {name: p, labels: {strimzi.io/cluster: a}}\n";
        let proposed = parse_documents(text, "f").unwrap();
        assert_eq!(proposed.kafka_name().unwrap(), "a");
        assert_eq!(proposed.pools.len(), 1);
        let error = parse_documents("kind: KafkaTopic\n", "f").unwrap_err();
        assert!(error.to_string().contains("KafkaTopic"), "{error}");
        let error = parse_documents("kind: Kafka\n---\nkind: Kafka\n", "f").unwrap_err();
        assert!(error.to_string().contains("more than one Kafka"), "{error}");
    }
}
