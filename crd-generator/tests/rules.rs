//! Every CEL rule, Strimzi's and ours, evaluated with `kube-cel` on the generated schemas:
//! valid documents pass every rule, invalid ones fail only their rule. Documents Strimzi's
//! CRDs accept pass our rules and `required` lists. (`tests/api_server.rs` applies the same
//! documents to a real API server.)

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use kube_cel::ErrorKind;
use serde_json::Value;
use strimzi_crd_generator::custom_resource_definitions;
use strimzi_crd_generator::rules::{self, OWN_RULES, Rule, STRIMZI_RULES};
use support::{accepted_as_by_strimzi, cases};

/// The `openAPIV3Schema` of every generated CRD, by kind, as JSON.
fn schemas() -> &'static BTreeMap<String, Value> {
    static SCHEMAS: OnceLock<BTreeMap<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        custom_resource_definitions()
            .unwrap()
            .into_iter()
            .map(|generated| {
                let crd = serde_json::to_value(&generated.crd).unwrap();
                let schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone();
                (generated.crd.spec.names.kind, schema)
            })
            .collect()
    })
}

fn kind_schema(kind: &str) -> &'static Value {
    schemas()
        .get(kind)
        .unwrap_or_else(|| panic!("no CRD for {kind}"))
}

/// How one rule refused a document.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// The rule was false: its message.
    False(String),
    /// The rule could not be evaluated: the evaluation error.
    Unevaluable(String),
}

/// Every rule that refuses `document`, with how.
fn refusals(document: &Value) -> Vec<(String, Refusal)> {
    let kind = document["kind"].as_str().unwrap();
    match kube_cel::validate(kind_schema(kind), document, None) {
        Ok(()) => Vec::new(),
        Err(errors) => errors
            .into_vec()
            .into_iter()
            .map(|error| {
                let refusal = match error.kind {
                    ErrorKind::ValidationFailure => Refusal::False(error.message),
                    _ => Refusal::Unevaluable(error.message),
                };
                (error.rule, refusal)
            })
            .collect(),
    }
}

#[test]
fn every_rule_has_a_case() {
    let cases = cases();
    let key = |rule: &&Rule| (rule.kind, rule.path, rule.rule);
    let mut tested: Vec<_> = cases.iter().map(|case| case.rule).collect();
    let mut defined: Vec<_> = rules::all().collect();
    tested.sort_by_key(key);
    defined.sort_by_key(key);
    assert_eq!(tested, defined, "one case per rule");
    assert_eq!(STRIMZI_RULES.len(), 17, "Strimzi 1.2 has 17 rules");
    let distinct: BTreeSet<_> = STRIMZI_RULES
        .iter()
        .map(|rule| (rule.rule, rule.message))
        .collect();
    assert_eq!(distinct.len(), 7, "of which 7 are distinct");
    // Our rules are told apart by their messages.
    let messages: BTreeSet<_> = OWN_RULES
        .iter()
        .map(|rule| (rule.kind, rule.message))
        .collect();
    assert_eq!(
        messages.len(),
        OWN_RULES.len(),
        "two of our rules share a message"
    );
    for case in &cases {
        assert!(!case.valid.is_empty(), "{}", case.rule.message);
        assert!(
            !case.invalid.is_empty() || !case.unevaluable.is_empty(),
            "{}",
            case.rule.message
        );
    }
}

#[test]
fn every_rule_accepts_valid_and_refuses_invalid_documents() {
    for case in cases() {
        let rule = case.rule;
        let what = format!("{} {}: `{}`", rule.kind, rule.path, rule.rule);
        for document in &case.valid {
            assert_eq!(
                refusals(document),
                Vec::new(),
                "valid for {what}: {document}"
            );
        }
        for document in &case.invalid {
            assert_eq!(
                refusals(document),
                vec![(
                    rule.rule.to_owned(),
                    Refusal::False(rule.message.to_owned())
                )],
                "invalid for {what}: {document}"
            );
        }
        for document in &case.unevaluable {
            let refused = refusals(document);
            let only_this_rule = refused.len() == 1
                && refused[0].0 == rule.rule
                && matches!(&refused[0].1, Refusal::Unevaluable(message) if message.contains("o such key"));
            assert!(
                only_this_rule,
                "unevaluable for {what}: {document}: {refused:?}"
            );
        }
    }
}

/// Fields of `document` that `schema` requires and it leaves out, following properties,
/// list items, map values and `oneOf`/`anyOf`/`allOf` choices' `required`.
fn missing_required(schema: &Value, document: &Value, path: &str, missing: &mut Vec<String>) {
    let Some(object) = document.as_object() else {
        if let (Some(items), Some(list)) = (schema.get("items"), document.as_array()) {
            for (index, item) in list.iter().enumerate() {
                missing_required(items, item, &format!("{path}[{index}]"), missing);
            }
        }
        return;
    };
    for name in support::required_names(schema) {
        if !object.contains_key(&name) {
            missing.push(format!("{path}.{name}"));
        }
    }
    for combinator in ["oneOf", "anyOf"] {
        let choices: Vec<Vec<String>> = schema[combinator]
            .as_array()
            .into_iter()
            .flatten()
            .map(support::required_names)
            .collect();
        let satisfied = choices
            .iter()
            .any(|choice| choice.iter().all(|name| object.contains_key(name)));
        if !choices.is_empty() && !satisfied {
            missing.push(format!("{path}: one of {choices:?}"));
        }
    }
    for choice in schema["allOf"].as_array().into_iter().flatten() {
        missing_required(choice, document, path, missing);
    }
    for (name, value) in object {
        if let Some(property) = schema["properties"].get(name) {
            missing_required(property, value, &format!("{path}.{name}"), missing);
        } else if schema["additionalProperties"].is_object() {
            let values = &schema["additionalProperties"];
            missing_required(values, value, &format!("{path}.{name}"), missing);
        }
    }
}

#[test]
fn what_strimzi_accepts_passes_our_required_lists_and_rules() {
    for (what, document) in accepted_as_by_strimzi() {
        let kind = document["kind"].as_str().unwrap();
        let mut missing = Vec::new();
        missing_required(kind_schema(kind), &document, "", &mut missing);
        assert_eq!(missing, Vec::<String>::new(), "{what}: {document}");
        assert_eq!(refusals(&document), Vec::new(), "{what}: {document}");
    }
}

#[test]
fn the_required_check_notices_missing_fields() {
    // The check above is not vacuous: our own types' required fields are noticed.
    let mut document = support::plain_kafka();
    document["spec"]["kafka"]["listeners"][0]
        .as_object_mut()
        .unwrap()
        .remove("tls");
    document = support::set(
        document,
        "spec.kafka.template.kafkaContainer.env",
        serde_json::json!([{"name": "NO_VALUE"}]),
    );
    let mut missing = Vec::new();
    missing_required(kind_schema("Kafka"), &document, "", &mut missing);
    assert_eq!(
        missing,
        [
            ".spec.kafka.listeners[0].tls",
            ".spec.kafka.template.kafkaContainer.env[0]: one of [[\"value\"], [\"valueFrom\"]]",
        ]
    );
}
