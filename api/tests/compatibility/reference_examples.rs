//! Compatibility suite: every custom resource in Strimzi 1.2's examples reads into our types
//! and writes back without losing, renaming or re-typing a field.

use std::collections::BTreeMap;

use crate::support::{required_by_reference, round_trip, strimzi_documents};
use strimzi_api::document::DocumentError;
use strimzi_api::resource::{ResourceError, StrimziResource};
use strimzi_tests::reference::reference_examples_dir;

/// Whether reading `document` failed only because it lacks a field that Strimzi's own CRD
/// requires: such an example would be rejected by the API server too, so rejecting it is
/// correct (Strimzi 1.2 ships two Connect metrics examples without `groupId`).
fn rejected_by_reference_crd(document: &serde_json::Value) -> Option<String> {
    let Err(ResourceError::Document(DocumentError::InvalidField { path, message })) =
        StrimziResource::from_value(document.clone())
    else {
        return None;
    };
    let field = message.strip_prefix("missing field `")?.split('`').next()?;
    let parent = path.strip_suffix(field)?.trim_end_matches('.');
    let kind = document["kind"].as_str()?;
    required_by_reference(kind, parent, field).then(|| format!("{kind} lacks required `{path}`"))
}

#[test]
fn every_strimzi_example_round_trips() {
    let dir = reference_examples_dir();
    let (found, others) = strimzi_documents(&dir);
    let mut failures = Vec::new();
    let mut invalid_upstream = Vec::new();
    let mut per_kind: BTreeMap<&'static str, usize> = BTreeMap::new();
    for document in &found {
        match round_trip(document) {
            Ok(resource) => *per_kind.entry(resource.kind()).or_default() += 1,
            Err(message) => match rejected_by_reference_crd(&document.document) {
                Some(reason) => invalid_upstream.push(format!("{}: {reason}", document.origin)),
                None => failures.push(message),
            },
        }
    }
    println!(
        "checked {} Strimzi resources from {} ({per_kind:?}); passed over {others} other documents",
        found.len(),
        dir.display()
    );
    println!(
        "rejected {} examples that Strimzi's own CRDs reject too:\n  {}",
        invalid_upstream.len(),
        invalid_upstream.join("\n  ")
    );
    assert!(
        invalid_upstream.len() <= 2,
        "more invalid upstream examples than expected"
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
