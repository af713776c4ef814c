//! CEL rules (`x-kubernetes-validations`) for checks that Strimzi makes only inside its
//! operator, so that the API server refuses such specs when they are applied.

use serde_json::{Value, json};

use crate::kinds::CrdError;

/// One CEL rule attached to the schema node at `path`.
struct Rule {
    kind: &'static str,
    /// Dot-separated property names from the root; `[]` steps into list items.
    path: &'static str,
    rule: &'static str,
    message: &'static str,
}

const RULES: &[Rule] = &[];

/// Attaches the rules of `kind` to its schema.
pub fn apply(kind: &'static str, schema: &mut Value) -> Result<(), CrdError> {
    for rule in RULES.iter().filter(|rule| rule.kind == kind) {
        let node = node_at(schema, rule.path).ok_or(CrdError::RulePath {
            kind,
            path: rule.path,
        })?;
        let Some(node) = node.as_object_mut() else {
            return Err(CrdError::RulePath {
                kind,
                path: rule.path,
            });
        };
        let validations = node
            .entry("x-kubernetes-validations")
            .or_insert_with(|| json!([]));
        if let Some(validations) = validations.as_array_mut() {
            validations.push(json!({"rule": rule.rule, "message": rule.message}));
        }
    }
    Ok(())
}

/// The schema node at a dot-separated `path` such as `spec.kafka.listeners[]`.
fn node_at<'a>(schema: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut node = schema;
    for segment in path.split('.') {
        let (name, items) = match segment.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (segment, false),
        };
        node = node.get_mut("properties")?.get_mut(name)?;
        if items {
            node = node.get_mut("items")?;
        }
    }
    Some(node)
}
