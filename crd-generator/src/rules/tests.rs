//! Every rule against valid and invalid documents, every example against all rules, the
//! bounds in the schema and the rules' estimated cost.

use std::collections::{BTreeMap, BTreeSet};

use std::sync::OnceLock;

use kube_cel::{WarningKind, compile_schema, estimate_rule_cost};
use serde_json::{Value, json};
use strimzi_api::document::yaml_documents;
use strimzi_tests::reference::{own_examples_dir, reference_examples_dir, yaml_files};

use super::{BOUNDS, Bound, RULES, Rule, attach, node_at};
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

fn listener(name: &str, port: i64, type_: &str, tls: bool) -> Value {
    json!({"name": name, "port": port, "type": type_, "tls": tls})
}

fn with(mut base: Value, extra: Value) -> Value {
    if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
        base.extend(extra.clone());
    }
    base
}

fn kafka(listeners: Value) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": "my-cluster"},
        "spec": {"kafka": {"listeners": listeners}},
    })
}

fn node_pool(roles: Value, storage: Value) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaNodePool",
        "metadata": {"name": "pool", "labels": {"strimzi.io/cluster": "my-cluster"}},
        "spec": {"replicas": 3, "roles": roles, "storage": storage},
    })
}

fn pool_with_storage(storage: Value) -> Value {
    node_pool(json!(["broker"]), storage)
}

fn jbod(volumes: Value) -> Value {
    pool_with_storage(json!({"type": "jbod", "volumes": volumes}))
}

/// A rule's message with documents that pass every rule and documents that fail only it.
struct Case {
    kind: &'static str,
    message: &'static str,
    valid: Vec<Value>,
    invalid: Vec<Value>,
}

fn message_of(kind: &str, path: &str, needle: &str) -> &'static str {
    RULES
        .iter()
        .find(|rule| rule.kind == kind && rule.path == path && rule.rule.contains(needle))
        .map(|rule| rule.message)
        .unwrap_or_else(|| panic!("no {kind} rule at {path} containing {needle}"))
}

fn cases() -> Vec<Case> {
    let ingress_config = json!({"configuration": {"bootstrap": {"host": "kafka.example.com"}}});
    let plain = listener("plain", 9092, "internal", false);
    let tls = listener("tls", 9093, "internal", true);
    vec![
        Case {
            kind: "Kafka",
            message: message_of("Kafka", "spec.kafka.listeners", "o.name == l.name"),
            valid: vec![
                kafka(json!([plain, tls])),
                kafka(json!([listener("a", 9092, "internal", false)])),
            ],
            invalid: vec![kafka(json!([
                listener("same", 9092, "internal", false),
                tls,
                listener("same", 9094, "internal", true),
            ]))],
        },
        Case {
            kind: "Kafka",
            message: message_of("Kafka", "spec.kafka.listeners", "o.port == l.port"),
            valid: vec![kafka(json!([
                plain,
                tls,
                listener("ext", 9094, "nodeport", false)
            ]))],
            invalid: vec![kafka(json!([
                plain,
                tls,
                listener("ext", 9092, "nodeport", false),
            ]))],
        },
        Case {
            kind: "Kafka",
            message: message_of("Kafka", "spec.kafka.listeners[]", "'tlsroute'"),
            valid: vec![kafka(json!([
                listener("route", 9094, "route", true),
                listener("tlsroute", 9095, "tlsroute", true),
                with(
                    listener("ingress", 9096, "ingress", true),
                    ingress_config.clone()
                ),
                listener("nodeport", 9097, "nodeport", false),
                listener("lb", 9098, "loadbalancer", false),
                listener("clusterip", 9099, "cluster-ip", false),
            ]))],
            invalid: vec![
                kafka(json!([listener("route", 9094, "route", false)])),
                kafka(json!([listener("tlsroute", 9094, "tlsroute", false)])),
                kafka(json!([with(
                    listener("ingress", 9094, "ingress", false),
                    ingress_config.clone()
                )])),
            ],
        },
        Case {
            kind: "Kafka",
            message: message_of(
                "Kafka",
                "spec.kafka.listeners[]",
                "self.authentication.type",
            ),
            valid: vec![kafka(json!([
                with(
                    plain.clone(),
                    json!({"authentication": {"type": "scram-sha-512"}})
                ),
                with(tls.clone(), json!({"authentication": {"type": "tls"}})),
                listener("none", 9094, "internal", false),
            ]))],
            invalid: vec![kafka(json!([with(
                plain.clone(),
                json!({"authentication": {"type": "tls"}})
            )]))],
        },
        Case {
            kind: "Kafka",
            message: message_of("Kafka", "spec.kafka.listeners[]", "9404"),
            valid: vec![kafka(json!([
                listener("a", 9403, "internal", false),
                listener("b", 9405, "internal", false),
                listener("c", 9998, "internal", false),
                listener("d", 10000, "internal", false),
            ]))],
            invalid: vec![
                kafka(json!([listener("metrics", 9404, "internal", false)])),
                kafka(json!([listener("jmx", 9999, "internal", false)])),
            ],
        },
        Case {
            kind: "Kafka",
            message: message_of("Kafka", "spec.kafka.listeners[]", "bootstrap.host"),
            valid: vec![
                kafka(json!([with(
                    listener("ingress", 9094, "ingress", true),
                    ingress_config.clone()
                )])),
                // Other types may leave the bootstrap out.
                kafka(json!([with(
                    listener("route", 9094, "route", true),
                    json!({"configuration": {"bootstrap": {}}})
                )])),
            ],
            invalid: vec![
                kafka(json!([listener("ingress", 9094, "ingress", true)])),
                kafka(json!([with(
                    listener("ingress", 9094, "ingress", true),
                    json!({"configuration": {"hostTemplate": "b-{nodeId}.example.com"}})
                )])),
                kafka(json!([with(
                    listener("ingress", 9094, "ingress", true),
                    json!({"configuration": {"bootstrap": {"alternativeNames": ["x"]}}})
                )])),
            ],
        },
        Case {
            kind: "KafkaNodePool",
            message: message_of("KafkaNodePool", "spec.roles", "size()"),
            valid: vec![
                node_pool(json!(["broker"]), json!({"type": "ephemeral"})),
                node_pool(json!(["controller"]), json!({"type": "ephemeral"})),
            ],
            invalid: vec![node_pool(json!([]), json!({"type": "ephemeral"}))],
        },
        Case {
            kind: "KafkaNodePool",
            message: message_of("KafkaNodePool", "spec.roles", "exists_one"),
            valid: vec![node_pool(
                json!(["controller", "broker"]),
                json!({"type": "ephemeral"}),
            )],
            invalid: vec![
                node_pool(json!(["broker", "broker"]), json!({"type": "ephemeral"})),
                node_pool(
                    json!(["controller", "controller"]),
                    json!({"type": "ephemeral"}),
                ),
            ],
        },
        Case {
            kind: "KafkaNodePool",
            message: message_of("KafkaNodePool", "spec.storage", "self.volumes.size() > 0"),
            valid: vec![
                jbod(json!([{"id": 0, "type": "ephemeral"}])),
                // Volumes only matter for jbod storage.
                pool_with_storage(json!({"type": "ephemeral"})),
            ],
            invalid: vec![pool_with_storage(json!({"type": "jbod"})), jbod(json!([]))],
        },
        Case {
            kind: "KafkaNodePool",
            message: message_of("KafkaNodePool", "spec.storage", "all(v, has(v.id))"),
            valid: vec![jbod(json!([
                {"id": 0, "type": "persistent-claim", "size": "100Gi"},
                {"id": 1, "type": "ephemeral"},
            ]))],
            invalid: vec![jbod(json!([
                {"id": 0, "type": "persistent-claim", "size": "100Gi"},
                {"type": "persistent-claim", "size": "100Gi"},
            ]))],
        },
        Case {
            kind: "KafkaNodePool",
            message: message_of("KafkaNodePool", "spec.storage", "o.id == v.id"),
            valid: vec![jbod(json!([
                {"id": 0, "type": "ephemeral"},
                {"id": 1, "type": "ephemeral"},
                {"id": 2, "type": "ephemeral"},
            ]))],
            invalid: vec![jbod(json!([
                {"id": 1, "type": "ephemeral"},
                {"id": 0, "type": "ephemeral"},
                {"id": 1, "type": "persistent-claim", "size": "10Gi"},
            ]))],
        },
        Case {
            kind: "KafkaNodePool",
            message: message_of("KafkaNodePool", "spec.storage", "kraftMetadata"),
            valid: vec![jbod(json!([
                {"id": 0, "type": "ephemeral", "kraftMetadata": "shared"},
                {"id": 1, "type": "ephemeral"},
            ]))],
            invalid: vec![jbod(json!([
                {"id": 0, "type": "ephemeral", "kraftMetadata": "shared"},
                {"id": 1, "type": "ephemeral"},
                {"id": 2, "type": "ephemeral", "kraftMetadata": "shared"},
            ]))],
        },
        Case {
            kind: "KafkaNodePool",
            message: message_of("KafkaNodePool", "spec.storage", "has(self.size)"),
            valid: vec![
                pool_with_storage(json!({"type": "persistent-claim", "size": "100Gi"})),
                pool_with_storage(json!({"type": "ephemeral"})),
            ],
            invalid: vec![pool_with_storage(
                json!({"type": "persistent-claim", "deleteClaim": true}),
            )],
        },
        Case {
            kind: "KafkaNodePool",
            message: message_of("KafkaNodePool", "spec.storage.volumes[]", "has(self.size)"),
            valid: vec![jbod(json!([
                {"id": 0, "type": "persistent-claim", "size": "1Ti", "class": "fast"},
                {"id": 1, "type": "ephemeral", "sizeLimit": "1Gi"},
            ]))],
            invalid: vec![jbod(json!([
                {"id": 0, "type": "persistent-claim", "size": "1Ti"},
                {"id": 1, "type": "persistent-claim", "class": "fast"},
            ]))],
        },
    ]
}

#[test]
fn every_rule_accepts_valid_and_refuses_invalid_documents() {
    let cases = cases();
    let tested: BTreeSet<_> = cases.iter().map(|case| (case.kind, case.message)).collect();
    let defined: BTreeSet<_> = RULES.iter().map(|rule| (rule.kind, rule.message)).collect();
    assert_eq!(
        tested, defined,
        "every rule needs a case, with its own message"
    );
    assert_eq!(defined.len(), RULES.len(), "two rules share a message");
    for case in &cases {
        assert!(!case.valid.is_empty() && !case.invalid.is_empty());
        for document in &case.valid {
            assert_eq!(
                failures(case.kind, document),
                Vec::<String>::new(),
                "valid for `{}`: {document}",
                case.message
            );
        }
        for document in &case.invalid {
            assert_eq!(
                failures(case.kind, document),
                vec![case.message.to_owned()],
                "invalid for `{}`: {document}",
                case.message
            );
        }
    }
}

#[test]
fn rules_and_bounds_are_in_the_generated_schemas() {
    for rule in RULES {
        let mut schema = kind_schema(rule.kind).clone();
        let node = node_at(&mut schema, rule.path).expect("the rule's path exists");
        let expected = json!({"rule": rule.rule, "message": rule.message});
        let validations = node["x-kubernetes-validations"].as_array().expect("rules");
        assert!(
            validations.contains(&expected),
            "{} {}",
            rule.kind,
            rule.path
        );
        // No transition rules.
        assert!(!rule.rule.contains("oldSelf"), "{}", rule.rule);
    }
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
    for rule in RULES {
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
    for rule in RULES.iter().filter(|rule| rule.rule.contains("exists_one")) {
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
    // The schema bounds suffice: neither kind carries CEL rules.
    for kind in ["KafkaUser", "KafkaTopic"] {
        assert!(!RULES.iter().any(|rule| rule.kind == kind), "{kind}");
        let text = kind_schema(kind).to_string();
        assert!(!text.contains("x-kubernetes-validations"), "{kind}");
    }
}
