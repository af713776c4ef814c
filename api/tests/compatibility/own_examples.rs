//! Our own `examples/`: every file reads into our types and writes back losslessly, and
//! together they cover every kind and every `type` choice users are likely to reach for.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::{Found, round_trip, strimzi_documents};
use schemars::JsonSchema;
use serde_json::Value;
use strimzi_api::common::{KafkaClientAuthentication, Logging, MetricsConfig};
use strimzi_api::connect::{BuildArtifact, BuildOutput};
use strimzi_api::kafka::{
    KafkaAuthorization, KafkaListenerAuthentication, KafkaListenerType, QuotasPlugin, TieredStorage,
};
use strimzi_api::rebalance::KafkaRebalanceMode;
use strimzi_api::resource::StrimziResource;
use strimzi_api::storage::{SingleVolumeStorage, Storage};
use strimzi_api::user::{AclRuleResource, KafkaUserAuthentication};
use strimzi_tests::reference::own_examples_dir;

/// The values a string enum, or a union's `type` field, accepts according to its schema.
fn allowed_values<T: JsonSchema>() -> BTreeSet<String> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
    let schema = if schema["properties"]["type"].is_object() {
        &schema["properties"]["type"]
    } else {
        &schema
    };
    let mut values = BTreeSet::new();
    for value in schema["enum"].as_array().into_iter().flatten() {
        values.insert(value.as_str().unwrap().to_owned());
    }
    for choice in schema["oneOf"].as_array().into_iter().flatten() {
        for value in choice["enum"].as_array().into_iter().flatten() {
            values.insert(value.as_str().unwrap().to_owned());
        }
        if let Some(value) = choice["const"].as_str() {
            values.insert(value.to_owned());
        }
    }
    assert!(!values.is_empty(), "no enum values in {schema}");
    values
}

/// Every string found at `path` (dot-separated, `[]` for every list item) in `document`.
fn strings_at(document: &Value, path: &str) -> Vec<String> {
    let mut current = vec![document];
    for segment in path.split('.') {
        let (name, all_items) = match segment.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (segment, false),
        };
        current = current
            .into_iter()
            .filter_map(|value| value.get(name))
            .flat_map(|value| match (all_items, value) {
                (true, Value::Array(items)) => items.iter().collect(),
                (true, _) => Vec::new(),
                (false, value) => vec![value],
            })
            .collect();
    }
    current
        .into_iter()
        .filter_map(|value| value.as_str().map(str::to_owned))
        .collect()
}

struct Coverage<'a> {
    documents: &'a [Found],
    missing: Vec<String>,
}

impl Coverage<'_> {
    /// Checks that the strings at `paths` in documents of `kinds` include every `expected`.
    fn require(&mut self, what: &str, kinds: &[&str], paths: &[&str], expected: BTreeSet<String>) {
        let seen: BTreeSet<String> = self
            .documents
            .iter()
            .filter(|found| kinds.iter().any(|kind| found.document["kind"] == *kind))
            .flat_map(|found| {
                paths
                    .iter()
                    .flat_map(|path| strings_at(&found.document, path))
            })
            .collect();
        let missing: Vec<&String> = expected.difference(&seen).collect();
        if !missing.is_empty() {
            self.missing
                .push(format!("{what}: no example uses {missing:?}"));
        }
    }
}

#[test]
fn own_examples_round_trip_and_cover_every_choice() {
    let (found, others) = strimzi_documents(&own_examples_dir());
    let mut per_kind: BTreeMap<&'static str, usize> = BTreeMap::new();
    let failures: Vec<String> = found
        .iter()
        .filter_map(|document| match round_trip(document) {
            Ok(resource) => {
                *per_kind.entry(resource.kind()).or_default() += 1;
                None
            }
            Err(message) => Some(message),
        })
        .collect();
    println!(
        "checked {} of our example resources ({per_kind:?}); passed over {others} other documents",
        found.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for (_, kind) in StrimziResource::KINDS {
        assert!(per_kind.contains_key(kind), "no example of {kind}");
    }

    let mut coverage = Coverage {
        documents: &found,
        missing: Vec::new(),
    };
    let listener_types = KafkaListenerType::ALL
        .iter()
        .map(|t| t.as_str().to_owned())
        .collect();
    coverage.require(
        "listener types",
        &["Kafka"],
        &["spec.kafka.listeners[].type"],
        listener_types,
    );
    coverage.require(
        "listener authentication",
        &["Kafka"],
        &["spec.kafka.listeners[].authentication.type"],
        allowed_values::<KafkaListenerAuthentication>(),
    );
    coverage.require(
        "authorization",
        &["Kafka"],
        &["spec.kafka.authorization.type"],
        allowed_values::<KafkaAuthorization>(),
    );
    coverage.require(
        "storage",
        &["KafkaNodePool"],
        &["spec.storage.type"],
        allowed_values::<Storage>(),
    );
    coverage.require(
        "JBOD volumes",
        &["KafkaNodePool"],
        &["spec.storage.volumes[].type"],
        allowed_values::<SingleVolumeStorage>(),
    );
    coverage.require(
        "shared KRaft metadata volume",
        &["KafkaNodePool"],
        &["spec.storage.volumes[].kraftMetadata"],
        BTreeSet::from(["shared".to_owned()]),
    );
    coverage.require(
        "metrics",
        &["Kafka", "KafkaConnect", "KafkaMirrorMaker2", "KafkaBridge"],
        &["spec.kafka.metricsConfig.type", "spec.metricsConfig.type"],
        allowed_values::<MetricsConfig>(),
    );
    coverage.require(
        "logging",
        &["Kafka", "KafkaConnect", "KafkaMirrorMaker2", "KafkaBridge"],
        &["spec.kafka.logging.type", "spec.logging.type"],
        allowed_values::<Logging>(),
    );
    coverage.require(
        "quotas",
        &["Kafka"],
        &["spec.kafka.quotas.type"],
        allowed_values::<QuotasPlugin>(),
    );
    coverage.require(
        "tiered storage",
        &["Kafka"],
        &["spec.kafka.tieredStorage.type"],
        allowed_values::<TieredStorage>(),
    );
    coverage.require(
        "user authentication",
        &["KafkaUser"],
        &["spec.authentication.type"],
        allowed_values::<KafkaUserAuthentication>(),
    );
    coverage.require(
        "ACL resources",
        &["KafkaUser"],
        &["spec.authorization.acls[].resource.type"],
        allowed_values::<AclRuleResource>(),
    );
    coverage.require(
        "client authentication",
        &["KafkaConnect", "KafkaMirrorMaker2", "KafkaBridge"],
        &[
            "spec.authentication.type",
            "spec.target.authentication.type",
            "spec.mirrors[].source.authentication.type",
        ],
        allowed_values::<KafkaClientAuthentication>(),
    );
    coverage.require(
        "build outputs",
        &["KafkaConnect"],
        &["spec.build.output.type"],
        allowed_values::<BuildOutput>(),
    );
    coverage.require(
        "plugin artifacts",
        &["KafkaConnect"],
        &["spec.build.plugins[].artifacts[].type"],
        allowed_values::<BuildArtifact>(),
    );
    coverage.require(
        "rebalance modes",
        &["KafkaRebalance"],
        &["spec.mode"],
        allowed_values::<KafkaRebalanceMode>(),
    );
    assert!(
        coverage.missing.is_empty(),
        "{}",
        coverage.missing.join("\n")
    );
}
