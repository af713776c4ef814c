//! Compares our CRD schemas with Strimzi's, path by path: every property of Strimzi's, and
//! every CEL rule (`x-kubernetes-validations`) of Strimzi's at the same path with the same
//! expression and message, must be in ours.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::GeneratedCrd;

/// How much of one Strimzi CRD's schema our CRD covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// The kind, e.g. `Kafka`.
    pub kind: String,
    /// Property paths in Strimzi's schema.
    pub total: usize,
    /// Of those, how many our schema has.
    pub covered: usize,
    /// Paths Strimzi's schema has and ours lacks, such as `.spec.kafka.listeners[].name`.
    pub missing: Vec<String>,
    /// CEL rules in Strimzi's schema.
    pub rules_total: usize,
    /// Of those, how many ours has at the same path, with the same expression and message.
    pub rules_covered: usize,
    /// Strimzi's rules that ours lacks, as `path: rule (message)`, such as
    /// `.spec.kafka.rack: has(self.type) == false || ... (envVarName property is required)`.
    pub missing_rules: Vec<String>,
}

impl Coverage {
    /// Whether every property path and every rule of Strimzi's schema is in ours.
    pub fn is_complete(&self) -> bool {
        self.missing.is_empty() && self.missing_rules.is_empty()
    }
}

/// Why the reference CRDs could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CoverageError {
    /// A reference file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A reference file is not a readable CRD.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A reference CRD has a kind we do not generate.
    #[error("{}: we generate no CRD for kind {kind}", path.display())]
    UnknownKind {
        /// The file.
        path: PathBuf,
        /// Its kind.
        kind: String,
    },
}

impl CoverageError {
    /// A stable CamelCase word for logs and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Io { .. } => "IoFailed",
            Self::Invalid { .. } => "InvalidReference",
            Self::UnknownKind { .. } => "UnknownKind",
        }
    }
}

/// Compares every CRD file (`*.yaml`) in `reference_dir` with ours, in file-name order.
pub fn against_reference(
    crds: &[GeneratedCrd],
    reference_dir: &Path,
) -> Result<Vec<Coverage>, CoverageError> {
    let io = |path: &Path, source| CoverageError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(reference_dir)
        .map_err(|source| io(reference_dir, source))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "yaml")
        })
        .collect();
    files.sort();
    let mut report = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(|source| io(&path, source))?;
        let invalid = |message: String| CoverageError::Invalid {
            path: path.clone(),
            message,
        };
        let reference: Value =
            serde_yaml_ng::from_str(&text).map_err(|error| invalid(error.to_string()))?;
        let kind = reference
            .pointer("/spec/names/kind")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("no spec.names.kind".to_owned()))?;
        let ours = crds
            .iter()
            .find(|generated| generated.crd.spec.names.kind == kind)
            .ok_or_else(|| CoverageError::UnknownKind {
                path: path.clone(),
                kind: kind.to_owned(),
            })?;
        let ours = serde_json::to_value(&ours.crd).map_err(|error| invalid(error.to_string()))?;
        report.push(compare(kind, &ours, &reference));
    }
    Ok(report)
}

/// Compares the first version's schema of two CRDs given as JSON.
pub fn compare(kind: &str, ours: &Value, reference: &Value) -> Coverage {
    let schema_of = |crd: &Value| {
        let mut paths = BTreeSet::new();
        let mut rules = BTreeSet::new();
        if let Some(schema) = crd.pointer("/spec/versions/0/schema/openAPIV3Schema") {
            property_paths(schema, "", &mut paths);
            validation_rules(schema, "", &mut rules);
        }
        (paths, rules)
    };
    let (ours, our_rules) = schema_of(ours);
    let (theirs, their_rules) = schema_of(reference);
    let missing: Vec<String> = theirs.difference(&ours).cloned().collect();
    let missing_rules: Vec<String> = their_rules
        .difference(&our_rules)
        .map(|(path, rule, message)| format!("{path}: {rule} ({message})"))
        .collect();
    Coverage {
        kind: kind.to_owned(),
        total: theirs.len(),
        covered: theirs.len() - missing.len(),
        missing,
        rules_total: their_rules.len(),
        rules_covered: their_rules.len() - missing_rules.len(),
        missing_rules,
    }
}

/// Visits every node below `schema` with its path, written as in [`property_paths`]: the root
/// is `""`, and a combinator's choices are at their node's path.
fn walk<'a>(schema: &'a Value, path: &str, visit: &mut dyn FnMut(&str, &'a Value)) {
    visit(path, schema);
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for choice in schema[combinator].as_array().into_iter().flatten() {
            walk(choice, path, visit);
        }
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            walk(property, &format!("{path}.{name}"), visit);
        }
    }
    if schema["items"].is_object() {
        walk(&schema["items"], &format!("{path}[]"), visit);
    }
    if schema["additionalProperties"].is_object() {
        walk(
            &schema["additionalProperties"],
            &format!("{path}{{}}"),
            visit,
        );
    }
}

/// Collects every CEL rule below `schema` as (path, expression, message).
fn validation_rules(schema: &Value, path: &str, rules: &mut BTreeSet<(String, String, String)>) {
    walk(schema, path, &mut |path, node| {
        for validation in node["x-kubernetes-validations"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let text = |key: &str| validation[key].as_str().unwrap_or_default().to_owned();
            rules.insert((path.to_owned(), text("rule"), text("message")));
        }
    });
}

/// Collects the path of every property below `schema`: `.a.b` for properties, `[]` for list
/// items and `{}` for map values.
fn property_paths(schema: &Value, path: &str, paths: &mut BTreeSet<String>) {
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for choice in schema[combinator].as_array().into_iter().flatten() {
            property_paths(choice, path, paths);
        }
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            let child = format!("{path}.{name}");
            paths.insert(child.clone());
            property_paths(property, &child, paths);
        }
    }
    if schema["items"].is_object() {
        property_paths(&schema["items"], &format!("{path}[]"), paths);
    }
    if schema["additionalProperties"].is_object() {
        property_paths(
            &schema["additionalProperties"],
            &format!("{path}{{}}"),
            paths,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(schema: Value) -> Value {
        json!({"spec": {"versions": [{"schema": {"openAPIV3Schema": schema}}]}})
    }

    #[test]
    fn reports_missing_paths_through_lists_and_maps() {
        let reference = crd(json!({"properties": {"spec": {"properties": {
            "listeners": {"items": {"properties": {"name": {}, "port": {}}}},
            "labels": {"additionalProperties": {"properties": {"x": {}}}}
        }}}}));
        let ours = crd(json!({"properties": {"spec": {"properties": {
            "listeners": {"items": {"properties": {"name": {}}}},
            "labels": {"additionalProperties": {"properties": {"x": {}}}},
            "extra": {}
        }}}}));
        let coverage = compare("Thing", &ours, &reference);
        assert_eq!(coverage.total, 6);
        assert_eq!(coverage.covered, 5);
        assert_eq!(coverage.missing, [".spec.listeners[].port"]);
    }

    #[test]
    fn reports_missing_and_changed_rules() {
        let rule = |rule: &str, message: &str| json!({"rule": rule, "message": message});
        let reference = crd(json!({"properties": {"spec": {
            "properties": {"rack": {
                "properties": {"topologyKey": {}},
                "x-kubernetes-validations": [rule("a", "needs a"), rule("b", "needs b")],
            }},
            "x-kubernetes-validations": [rule("c", "needs c")],
        }}}));
        let ours = crd(json!({"properties": {"spec": {
            "properties": {"rack": {
                "properties": {"topologyKey": {}},
                // Ours may add rules of its own; a changed message counts as missing.
                "x-kubernetes-validations": [
                    rule("ours", "ours"),
                    rule("a", "needs a"),
                    rule("b", "needs b, reworded"),
                ],
            }},
        }}}));
        let coverage = compare("Thing", &ours, &reference);
        assert!(coverage.missing.is_empty());
        assert_eq!((coverage.rules_total, coverage.rules_covered), (3, 1));
        assert_eq!(
            coverage.missing_rules,
            [".spec: c (needs c)", ".spec.rack: b (needs b)"]
        );
        assert!(!coverage.is_complete());
        assert!(compare("Thing", &reference, &reference).is_complete());
    }
}
