//! Compatibility suite: every custom resource in Strimzi 1.2's examples reads into our types
//! and writes back without losing, renaming or re-typing a field.

mod support;

use std::collections::BTreeMap;

use support::{reference_dir, round_trip, strimzi_documents};

#[test]
fn every_strimzi_example_round_trips() {
    let dir = reference_dir().join("examples");
    let (found, others) = strimzi_documents(&dir);
    let mut failures = Vec::new();
    let mut per_kind: BTreeMap<&'static str, usize> = BTreeMap::new();
    for document in &found {
        match round_trip(document) {
            Ok(resource) => *per_kind.entry(resource.kind()).or_default() += 1,
            Err(message) => failures.push(message),
        }
    }
    println!(
        "checked {} Strimzi resources from {} ({per_kind:?}); passed over {others} other documents",
        found.len(),
        dir.display()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        found.len() >= 40,
        "expected Strimzi's examples, found {}",
        found.len()
    );
    for kind in [
        "Kafka",
        "KafkaNodePool",
        "KafkaTopic",
        "KafkaUser",
        "KafkaConnect",
        "KafkaConnector",
        "KafkaMirrorMaker2",
        "KafkaBridge",
        "KafkaRebalance",
    ] {
        assert!(
            per_kind.contains_key(kind),
            "no {kind} among the reference examples"
        );
    }
}
