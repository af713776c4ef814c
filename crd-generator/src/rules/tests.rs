//! Every rule and bound in the schemas, every example against all rules, and the rules'
//! estimated cost. (`tests/rules.rs` evaluates each rule on valid and invalid documents.)

use std::collections::{BTreeMap, BTreeSet};

use std::sync::OnceLock;

use kube_cel::{WarningKind, compile_schema, estimate_rule_cost};
use serde_json::{Value, json};
use strimzi_api::document::yaml_documents;
use strimzi_tests::reference::{own_examples_dir, reference_examples_dir, yaml_files};

use super::{BOUNDS, Bound, OWN_RULES, Rule, STRIMZI_RULES, all, attach, node_at};
use crate::CrdError;

/// The `openAPIV3Schema` of every generated CRD, by kind, as JSON.
fn schemas() -> &'static BTreeMap<String, Value> {
    static SCHEMAS: OnceLock<BTreeMap<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        crate::custom_resource_definitions()
            .expect("the CRDs generate")
            .into_iter()
            .map(|generated| {
                let crd = generated.crd;
                let schema = crd.spec.versions[0]
                    .schema
                    .as_ref()
                    .and_then(|validation| validation.open_api_v3_schema.as_ref())
                    .expect("every CRD has a schema");
                let schema = serde_json::to_value(schema).expect("the schema is JSON");
                (crd.spec.names.kind, schema)
            })
            .collect()
    })
}

fn kind_schema(kind: &str) -> &'static Value {
    schemas()
        .get(kind)
        .unwrap_or_else(|| panic!("no CRD for {kind}"))
}

/// The messages of every rule that fails (or cannot be evaluated) on `document`.
fn failures(kind: &str, document: &Value) -> Vec<String> {
    match kube_cel::validate(kind_schema(kind), document, None) {
        Ok(()) => Vec::new(),
        Err(errors) => errors
            .into_vec()
            .into_iter()
            .map(|error| error.message)
            .collect(),
    }
}

#[test]
fn rules_and_bounds_are_in_the_generated_schemas() {
    for rule in all() {
        let mut schema = kind_schema(rule.kind).clone();
        let node = node_at(&mut schema, rule.path).expect("the rule's path exists");
        // Exactly the rules of the tables at this path, Strimzi's first.
        let expected: Vec<Value> = all()
            .filter(|other| other.kind == rule.kind && other.path == rule.path)
            .map(|other| json!({"rule": other.rule, "message": other.message}))
            .collect();
        assert_eq!(
            node["x-kubernetes-validations"],
            Value::Array(expected),
            "{} {}",
            rule.kind,
            rule.path
        );
        // No transition rules.
        assert!(!rule.rule.contains("oldSelf"), "{}", rule.rule);
    }
    // Nothing else carries rules: Strimzi's 17 and ours, no more.
    let attached: usize = schemas()
        .values()
        .map(|schema| {
            schema
                .to_string()
                .matches("\"x-kubernetes-validations\"")
                .count()
        })
        .sum();
    let paths: BTreeSet<_> = all().map(|rule| (rule.kind, rule.path)).collect();
    assert_eq!(attached, paths.len());
    for bound in BOUNDS {
        let mut schema = kind_schema(bound.kind).clone();
        let node = node_at(&mut schema, bound.path).expect("the bound's path exists");
        assert_eq!(
            node[bound.keyword].as_u64(),
            Some(bound.value),
            "{}",
            bound.path
        );
    }
    // The listener name's pattern allows no more than its bound.
    let mut kafka = kind_schema("Kafka").clone();
    let name = node_at(&mut kafka, "spec.kafka.listeners[].name").expect("name");
    assert_eq!(name["pattern"], "^[a-z0-9]{1,11}$");
    assert_eq!(name["maxLength"], 11);
}

#[test]
fn every_example_passes_every_rule() {
    let mut files = yaml_files(&reference_examples_dir());
    let reference = files.len();
    files.extend(yaml_files(&own_examples_dir()));
    assert!(
        reference > 0 && files.len() > reference,
        "no examples found"
    );
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    let mut refused = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable example");
        let documents =
            yaml_documents(&text).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        for (index, document) in documents.iter().enumerate() {
            let group = document["apiVersion"].as_str().unwrap_or_default();
            let kind = document["kind"].as_str().unwrap_or_default();
            if !group.starts_with("kafka.strimzi.io/") || !schemas().contains_key(kind) {
                continue;
            }
            *checked.entry(kind.to_owned()).or_default() += 1;
            let failed = failures(kind, document);
            if !failed.is_empty() {
                refused.push(format!("{}#{index}: {failed:?}", file.display()));
            }
        }
    }
    assert!(
        refused.is_empty(),
        "examples refused by rules:\n{refused:#?}"
    );
    // The rules' kinds were really exercised.
    assert!(
        checked.get("Kafka").copied().unwrap_or(0) >= 10,
        "{checked:?}"
    );
    assert!(
        checked.get("KafkaNodePool").copied().unwrap_or(0) >= 10,
        "{checked:?}"
    );
    for rule in all() {
        assert!(checked.contains_key(rule.kind), "{checked:?}");
    }
}

#[test]
fn apply_refuses_a_path_that_is_not_in_the_schema() {
    let small = json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "items": {"type": "array", "items": {"type": "string"}},
            "name": {"type": "string"},
        }}},
    });
    const RULE_AT_MISSING: &[Rule] = &[Rule {
        kind: "Thing",
        path: "spec.missing",
        rule: "true",
        message: "never",
    }];
    const RULE_INSIDE_STRING_ITEMS: &[Rule] = &[Rule {
        kind: "Thing",
        path: "spec.items[].inner",
        rule: "true",
        message: "never",
    }];
    const BOUND_AT_MISSING: &[Bound] = &[Bound {
        kind: "Thing",
        path: "spec.gone[]",
        keyword: "maxItems",
        value: 1,
    }];
    const BOUND_OF_WRONG_TYPE: &[Bound] = &[Bound {
        kind: "Thing",
        path: "spec.name",
        keyword: "maxItems",
        value: 1,
    }];
    let cases: [(&[Rule], &[Bound], &str); 4] = [
        (RULE_AT_MISSING, &[], "spec.missing"),
        (RULE_INSIDE_STRING_ITEMS, &[], "spec.items[].inner"),
        (&[], BOUND_AT_MISSING, "spec.gone[]"),
        (&[], BOUND_OF_WRONG_TYPE, "spec.name"),
    ];
    for (rules, bounds, expected) in cases {
        let mut schema = small.clone();
        match attach("Thing", &mut schema, rules, bounds) {
            Err(CrdError::RulePath { kind, path }) => {
                assert_eq!((kind, path), ("Thing", expected));
            }
            other => panic!("{expected}: expected RulePath, got {other:?}"),
        }
        // Another kind's entries are ignored.
        let mut schema = small.clone();
        assert!(attach("Other", &mut schema, rules, bounds).is_ok());
    }
    // The real table on a schema without the Kafka paths.
    let mut schema = small.clone();
    assert!(matches!(
        super::apply("Kafka", &mut schema),
        Err(CrdError::RulePath { kind: "Kafka", .. })
    ));
}

/// Names a rule reads after a dot (`self.volumes`, `v.id`), leaving out methods such as
/// `.size()`.
fn fields_read(rule: &str) -> BTreeSet<&str> {
    rule.split('.')
        .skip(1)
        .filter_map(|after| {
            let end = after
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(after.len());
            let method = after[end..].starts_with('(');
            Some(&after[..end]).filter(|name| !name.is_empty() && !method)
        })
        .collect()
}

/// Lists and strings below `node` that the rule can reach through the fields it reads.
fn reachable<'a>(node: &'a Value, fields: &BTreeSet<&str>, found: &mut Vec<&'a Value>) {
    found.push(node);
    if let Some(items) = node.get("items") {
        reachable(items, fields, found);
    }
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        for (name, child) in properties {
            if fields.contains(name.as_str()) {
                reachable(child, fields, found);
            }
        }
    }
}

const COMPREHENSIONS: [&str; 5] = [".all(", ".exists(", ".exists_one(", ".filter(", ".map("];

#[test]
fn every_rule_is_within_the_cost_budget() {
    for rule in all() {
        let mut schema = kind_schema(rule.kind).clone();
        let node = node_at(&mut schema, rule.path).expect("the rule's path exists");
        let compiled = compile_schema(node);
        assert_eq!(
            estimate_rule_cost(rule.rule, &compiled),
            Vec::new(),
            "{} {}",
            rule.kind,
            rule.rule
        );
        // The estimator above only looks at the node's own lists. Check more widely: every
        // list a comprehension can reach is bounded, and so is every string it can compare
        // (an enum bounds a string too).
        if COMPREHENSIONS
            .iter()
            .any(|macro_| rule.rule.contains(macro_))
        {
            let fields = fields_read(rule.rule);
            let mut found = Vec::new();
            reachable(node, &fields, &mut found);
            for reached in found {
                match reached["type"].as_str() {
                    Some("array") => assert!(
                        reached.get("maxItems").is_some(),
                        "{}: unbounded list",
                        rule.rule
                    ),
                    Some("string") => assert!(
                        reached.get("maxLength").is_some() || reached.get("enum").is_some(),
                        "{}: unbounded string",
                        rule.rule
                    ),
                    _ => {}
                }
            }
        }
        // A rule inside list items runs once per item: those lists are bounded as well.
        let mut prefix = String::new();
        for segment in rule.path.split('.') {
            if !prefix.is_empty() {
                prefix.push('.');
            }
            prefix.push_str(segment.trim_end_matches("[]"));
            if segment.ends_with("[]") {
                let mut schema = kind_schema(rule.kind).clone();
                let list = node_at(&mut schema, &prefix).expect("the list exists");
                assert!(list.get("maxItems").is_some(), "{prefix} is unbounded");
            }
        }
    }
}

#[test]
fn the_cost_estimator_notices_unbounded_lists() {
    // Without the bounds, the quadratic rules are over budget: the estimator is not silent.
    for rule in OWN_RULES
        .iter()
        .filter(|rule| rule.rule.contains("exists_one"))
    {
        let mut schema = kind_schema(rule.kind).clone();
        let node = node_at(&mut schema, rule.path).expect("the rule's path exists");
        strip_max_items(node);
        let warnings = estimate_rule_cost(rule.rule, &compile_schema(node));
        assert!(
            warnings
                .iter()
                .any(|warning| warning.kind == WarningKind::CostExceeded),
            "{}: {warnings:?}",
            rule.rule
        );
    }
}

fn strip_max_items(node: &mut Value) {
    match node {
        Value::Object(object) => {
            object.remove("maxItems");
            object.values_mut().for_each(strip_max_items);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_max_items),
        _ => {}
    }
}

#[test]
fn quotas_and_topic_sizes_are_bounded_by_the_schema_without_rules() {
    let user = kind_schema("KafkaUser");
    let quotas = &user["properties"]["spec"]["properties"]["quotas"]["properties"];
    for field in [
        "producerByteRate",
        "consumerByteRate",
        "requestPercentage",
        "controllerMutationRate",
    ] {
        assert_eq!(quotas[field]["minimum"].as_f64(), Some(0.0), "{field}");
    }
    let topic = &kind_schema("KafkaTopic")["properties"]["spec"]["properties"];
    assert_eq!(topic["partitions"]["minimum"].as_f64(), Some(1.0));
    assert_eq!(topic["replicas"]["minimum"].as_f64(), Some(1.0));
    assert_eq!(topic["replicas"]["maximum"].as_f64(), Some(32767.0));
    // The schema bounds suffice: neither kind carries rules of ours (KafkaUser has Strimzi's
    // certificate validity rules).
    for kind in ["KafkaUser", "KafkaTopic"] {
        assert!(!OWN_RULES.iter().any(|rule| rule.kind == kind), "{kind}");
    }
    assert!(
        !kind_schema("KafkaTopic")
            .to_string()
            .contains("x-kubernetes-validations")
    );
    assert!(STRIMZI_RULES.iter().any(|rule| rule.kind == "KafkaUser"));
}
