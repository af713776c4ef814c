//! Our CRDs against Strimzi 1.2's: same names, labels, versions, subresources, printer
//! columns, properties, CEL rules, types, enums and bounds; and the same `required` lists
//! path by path, never looser and never stricter but for named exceptions.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use strimzi_api::document::equivalent;
use strimzi_crd_generator::{coverage, custom_resource_definitions};
use strimzi_tests::reference::reference_crds_dir;

/// Strimzi's CRDs and ours, as JSON, keyed by kind.
fn pairs() -> BTreeMap<String, (Value, Value)> {
    let ours: BTreeMap<String, Value> = custom_resource_definitions()
        .unwrap()
        .into_iter()
        .map(|generated| {
            (
                generated.crd.spec.names.kind.clone(),
                serde_json::to_value(&generated.crd).unwrap(),
            )
        })
        .collect();
    let mut pairs = BTreeMap::new();
    for entry in std::fs::read_dir(reference_crds_dir()).unwrap() {
        let path = entry.unwrap().path();
        let reference: Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let kind = reference["spec"]["names"]["kind"]
            .as_str()
            .unwrap()
            .to_owned();
        let mine = ours
            .get(&kind)
            .unwrap_or_else(|| panic!("no CRD generated for {kind}"));
        pairs.insert(kind, (mine.clone(), reference));
    }
    assert_eq!(pairs.len(), 10, "expected Strimzi's 10 CRDs");
    pairs
}

/// Every schema node below `schema`, by property path (`.a.b`, `[]` for items, `{}` for map
/// values).
fn nodes<'a>(schema: &'a Value, path: String, out: &mut BTreeMap<String, &'a Value>) {
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            nodes(property, format!("{path}.{name}"), out);
        }
    }
    if schema["items"].is_object() {
        nodes(&schema["items"], format!("{path}[]"), out);
    }
    if schema["additionalProperties"].is_object() {
        nodes(&schema["additionalProperties"], format!("{path}{{}}"), out);
    }
    out.insert(path, schema);
}

fn schema_nodes(crd: &Value) -> BTreeMap<String, &Value> {
    let mut out = BTreeMap::new();
    nodes(
        &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
        String::new(),
        &mut out,
    );
    out
}

#[test]
fn every_property_of_strimzis_crds_is_covered() {
    let crds = custom_resource_definitions().unwrap();
    let report = coverage::against_reference(&crds, &reference_crds_dir()).unwrap();
    for entry in &report {
        println!("{:<18} {}/{}", entry.kind, entry.covered, entry.total);
    }
    assert_eq!(report.len(), 10);
    let missing: Vec<String> = report
        .iter()
        .flat_map(|entry| {
            entry
                .missing
                .iter()
                .map(move |path| format!("{}{path}", entry.kind))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "missing property paths:\n{}",
        missing.join("\n")
    );
    let missing_rules: Vec<String> = report
        .iter()
        .flat_map(|entry| {
            entry
                .missing_rules
                .iter()
                .map(move |rule| format!("{}{rule}", entry.kind))
        })
        .collect();
    assert!(
        missing_rules.is_empty(),
        "missing CEL rules:\n{}",
        missing_rules.join("\n")
    );
    // Strimzi 1.2's CRDs carry 17 rules, all of them counted.
    let rules: usize = report.iter().map(|entry| entry.rules_total).sum();
    assert_eq!(rules, 17);
    assert!(report.iter().all(coverage::Coverage::is_complete));
}

#[test]
fn names_versions_subresources_and_columns_match() {
    for (kind, (ours, theirs)) in pairs() {
        for pointer in [
            "/metadata/name",
            "/metadata/labels",
            "/spec/group",
            "/spec/names",
            "/spec/scope",
            "/spec/conversion",
            "/spec/versions/0/name",
            "/spec/versions/0/served",
            "/spec/versions/0/storage",
            "/spec/versions/0/subresources",
        ] {
            assert_eq!(
                ours.pointer(pointer),
                theirs.pointer(pointer),
                "{kind}: {pointer}"
            );
        }
        assert_eq!(
            ours["spec"]["versions"].as_array().unwrap().len(),
            1,
            "{kind}"
        );
        // Column names, types, paths and priorities are what users see; descriptions are ours.
        let columns = |crd: &Value| -> Vec<Value> {
            crd["spec"]["versions"][0]["additionalPrinterColumns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|column| {
                    json!([
                        column["name"],
                        column["type"],
                        column["jsonPath"],
                        column["priority"]
                    ])
                })
                .collect()
        };
        assert_eq!(columns(&ours), columns(&theirs), "{kind}: printer columns");
    }
}

/// Bounds our CRDs may add where Strimzi's have none.
const BUDGET_BOUNDS: [&str; 2] = ["maxItems", "maxLength"];

#[test]
fn types_enums_and_bounds_match_and_required_is_never_looser() {
    let mut differences = Vec::new();
    for (kind, (ours, theirs)) in pairs() {
        let ours = schema_nodes(&ours);
        for (path, reference) in schema_nodes(&theirs) {
            let Some(mine) = ours.get(&path) else {
                continue; // reported by the coverage test
            };
            for key in [
                "type",
                "enum",
                "minimum",
                "maximum",
                "pattern",
                "minItems",
                "maxItems",
                "minLength",
                "maxLength",
                "x-kubernetes-preserve-unknown-fields",
                "x-kubernetes-int-or-string",
            ] {
                let same = match (mine.get(key), reference.get(key)) {
                    (Some(mine), Some(reference)) => equivalent(mine, reference),
                    // Upper bounds that keep CEL rules within the API server's cost budget;
                    // each is implied by a pattern or far above any real cluster.
                    (Some(_), None) if BUDGET_BOUNDS.contains(&key) => true,
                    (mine, reference) => mine == reference,
                };
                if !same {
                    differences.push(format!(
                        "{kind}{path}: {key} is {:?}, Strimzi has {:?}",
                        mine.get(key),
                        reference.get(key)
                    ));
                }
            }
            let mine_required = support::required_names(mine);
            for field in support::required_names(reference) {
                if !mine_required.contains(&field) {
                    differences.push(format!("{kind}{path}: `{field}` is not required"));
                }
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A place where our CRDs deliberately require more than Strimzi's: a field of one node, in
/// every kind that has the node.
struct Stricter {
    /// A name for the exception.
    name: &'static str,
    /// The node's property path, as in [`nodes`].
    path: &'static str,
    /// The field we require and Strimzi does not.
    field: &'static str,
    /// Why.
    reason: &'static str,
}

/// Every deliberate exception to "our `required` lists are never stricter than Strimzi's".
/// (Where our CRDs refuse more than Strimzi's beyond `required`, that is one of our CEL rules,
/// `strimzi_crd_generator::rules::OWN_RULES`, each named by its message and tested.)
const STRICTER: &[Stricter] = &[];

/// The `required` lists of a node: its own (`None` for the node itself) and those of the
/// choices of each combinator (`Some("oneOf")`).
fn required_lists(node: &Value) -> BTreeMap<Option<&'static str>, Vec<Vec<String>>> {
    let mut lists = BTreeMap::new();
    lists.insert(None, vec![support::required_names(node)]);
    for combinator in ["oneOf", "anyOf", "allOf"] {
        let choices: Vec<Vec<String>> = node[combinator]
            .as_array()
            .into_iter()
            .flatten()
            .map(support::required_names)
            .filter(|names| !names.is_empty())
            .collect();
        if !choices.is_empty() {
            lists.insert(Some(combinator), choices);
        }
    }
    lists
}

#[test]
fn required_is_never_stricter_than_strimzis() {
    let mut stricter = Vec::new();
    let mut used = vec![0; STRICTER.len()];
    let mut checked = 0;
    for (kind, (ours, theirs)) in pairs() {
        let theirs = schema_nodes(&theirs);
        let empty = json!({});
        for (path, mine) in schema_nodes(&ours) {
            checked += 1;
            let reference = required_lists(theirs.get(&path).copied().unwrap_or(&empty));
            for (combinator, lists) in required_lists(mine) {
                let Some(combinator) = combinator else {
                    // The node's own list: each field we require, Strimzi must too.
                    let theirs = reference.get(&None).and_then(|lists| lists.first());
                    for field in &lists[0] {
                        if theirs.is_some_and(|theirs| theirs.contains(field)) {
                            continue;
                        }
                        let exception = STRICTER.iter().position(|exception| {
                            exception.path == path && exception.field == field
                        });
                        match exception {
                            Some(index) => used[index] += 1,
                            None => stricter.push(format!("{kind}{path}: `{field}` is required")),
                        }
                    }
                    continue;
                };
                // A combinator's choices that require fields: Strimzi's must be the same.
                if reference.get(&Some(combinator)) != Some(&lists) {
                    stricter.push(format!(
                        "{kind}{path}: {combinator} requires one of {lists:?}, Strimzi's {:?}",
                        reference.get(&Some(combinator))
                    ));
                }
            }
        }
    }
    println!("{checked} schema nodes checked");
    assert!(
        stricter.is_empty(),
        "our CRDs require what Strimzi's do not; make the schema as lenient as Strimzi's, or \
         list a deliberate exception in STRICTER:\n{}",
        stricter.join("\n")
    );
    for (exception, uses) in STRICTER.iter().zip(used) {
        assert!(
            uses > 0,
            "exception {} ({}) no longer applies: remove it",
            exception.name,
            exception.reason
        );
    }
}

#[test]
fn schemas_are_structural() {
    for (kind, (ours, _)) in pairs() {
        for (path, node) in schema_nodes(&ours) {
            let typed = node.get("type").is_some()
                || node["x-kubernetes-int-or-string"] == true
                || node["x-kubernetes-preserve-unknown-fields"] == true;
            assert!(typed, "{kind}{path}: schema without a type: {node}");
            for combinator in ["oneOf", "anyOf", "allOf"] {
                for choice in node[combinator].as_array().into_iter().flatten() {
                    let allowed = choice.get("properties").is_none() || path.ends_with('}');
                    assert!(
                        allowed,
                        "{kind}{path}: {combinator} declares properties: {choice}"
                    );
                }
            }
            if node["x-kubernetes-preserve-unknown-fields"] == true {
                assert!(
                    node.get("properties").is_none(),
                    "{kind}{path}: keeps unknown fields next to declared properties"
                );
            }
        }
        let conditions = &ours["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
            ["properties"]["conditions"];
        // A plain list, as in Strimzi's: one condition per warning.
        assert!(conditions.get("x-kubernetes-list-type").is_none(), "{kind}");
        assert_eq!(conditions["type"], "array", "{kind}");
    }
}

#[test]
fn free_form_objects_are_exactly_strimzis() {
    for (kind, (ours, theirs)) in pairs() {
        let free_form = |crd: &Value| -> Vec<String> {
            schema_nodes(crd)
                .into_iter()
                .filter(|(_, node)| node["x-kubernetes-preserve-unknown-fields"] == true)
                .map(|(path, _)| path)
                .collect()
        };
        assert_eq!(free_form(&ours), free_form(&theirs), "{kind}");
    }
}

#[test]
fn crds_stay_well_under_the_api_server_request_limit() {
    // The API server refuses requests over 3 MiB and etcd values over 1.5 MiB; server-side
    // apply adds managed fields, so keep every CRD under a third of the smaller limit.
    const LIMIT: usize = 512 * 1024;
    for generated in custom_resource_definitions().unwrap() {
        let size = serde_json::to_vec(&generated.crd).unwrap().len();
        println!("{:<32} {size:>8} bytes of JSON", generated.file_name);
        assert!(size < LIMIT, "{} is {size} bytes", generated.file_name);
    }
}
