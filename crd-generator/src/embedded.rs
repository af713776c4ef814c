//! Kubernetes' own types embedded in our schemas (affinity, tolerations, volume sources,
//! resource requirements, label selectors, ...), and their `required` lists.
//!
//! k8s-openapi gives those types the `required` lists of Kubernetes' OpenAPI document, such as
//! `name` of a `LocalObjectReference` or `key` and `operator` of a label selector requirement.
//! Strimzi's CRDs have none of them: `imagePullSecrets: [{}]` or a ConfigMap volume without a
//! name are accepted when applied (and Kubernetes decides later). Ours must accept what
//! Strimzi's accept, so these lists are dropped; the `required` lists of Strimzi's own types,
//! which both CRDs share, stay.
//!
//! kube inlines every type's schema into the CRD, which hides where a type came from. So the
//! root type's schema is generated once more with named definitions: k8s-openapi names its
//! types' schemas after Kubernetes' OpenAPI document (`io.k8s.api.core.v1.Volume`), and every
//! node reached through such a definition is at a path that belongs to Kubernetes.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// Prefix of the schema names k8s-openapi gives Kubernetes' types.
const KUBERNETES_SCHEMA_PREFIX: &str = "io.k8s.";

/// Combinators whose choices describe the node itself, at the node's path.
const COMBINATORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];

/// Property paths (`.spec.template.pod.affinity`, `[]` for list items, `{}` for map values)
/// of the schema nodes of `T` whose `required` list comes from an embedded Kubernetes type,
/// and from nothing of ours. Paths are those of the CRD's schema, whose root is `T`.
pub fn kubernetes_required<T: JsonSchema>() -> Result<BTreeSet<String>, serde_json::Error> {
    let root = serde_json::to_value(
        SchemaSettings::openapi3()
            .with(|settings| settings.meta_schema = None)
            .into_generator()
            .into_root_schema_for::<T>(),
    )?;
    Ok(required_in(&root))
}

/// The paths below `root` (a schema with named definitions) where a definition named like a
/// Kubernetes type, or a node inside one, has a `required` list, and no other node has one.
fn required_in(root: &Value) -> BTreeSet<String> {
    let mut walk = Walk {
        root,
        expanding: Vec::new(),
        kubernetes: BTreeSet::new(),
        ours: BTreeSet::new(),
    };
    walk.node(root, String::new(), false);
    walk.kubernetes.difference(&walk.ours).cloned().collect()
}

/// The state of one walk through a schema.
struct Walk<'a> {
    /// The whole schema, which references resolve against.
    root: &'a Value,
    /// References being expanded, outermost first: a recursive type is walked once.
    expanding: Vec<&'a str>,
    /// Paths with a `required` list inside a Kubernetes type.
    kubernetes: BTreeSet<String>,
    /// Paths with a `required` list outside any Kubernetes type.
    ours: BTreeSet<String>,
}

impl<'a> Walk<'a> {
    /// Walks `node` at `path`; `inside` tells whether a Kubernetes type encloses it.
    fn node(&mut self, node: &'a Value, path: String, inside: bool) {
        if node.get("required").is_some() {
            if inside {
                self.kubernetes.insert(path.clone());
            } else {
                self.ours.insert(path.clone());
            }
        }
        if let Some(reference) = node.get("$ref").and_then(Value::as_str)
            && !self.expanding.contains(&reference)
            && let Some(target) = reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer))
        {
            let name = reference.rsplit('/').next().unwrap_or(reference);
            self.expanding.push(reference);
            let inside = inside || name.starts_with(KUBERNETES_SCHEMA_PREFIX);
            self.node(target, path.clone(), inside);
            self.expanding.pop();
        }
        for combinator in COMBINATORS {
            for choice in node
                .get(combinator)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.node(choice, path.clone(), inside);
            }
        }
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                self.node(property, format!("{path}.{name}"), inside);
            }
        }
        if let Some(items) = node.get("items").filter(|items| items.is_object()) {
            self.node(items, format!("{path}[]"), inside);
        }
        if let Some(values) = node
            .get("additionalProperties")
            .filter(|values| values.is_object())
        {
            self.node(values, format!("{path}{{}}"), inside);
        }
    }
}

/// Removes `required` (also inside combinators) from every node of `schema` whose path is
/// in `paths`.
pub fn drop_required(schema: &mut Value, paths: &BTreeSet<String>) {
    drop_below(schema, String::new(), paths);
}

fn drop_below(node: &mut Value, path: String, paths: &BTreeSet<String>) {
    let Some(object) = node.as_object_mut() else {
        return;
    };
    if paths.contains(&path) {
        object.remove("required");
        for combinator in COMBINATORS {
            let choices = object.get_mut(combinator).and_then(Value::as_array_mut);
            for choice in choices.into_iter().flatten() {
                if let Some(choice) = choice.as_object_mut() {
                    choice.remove("required");
                }
            }
        }
    }
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, property) in properties {
            drop_below(property, format!("{path}.{name}"), paths);
        }
    }
    if let Some(items) = object.get_mut("items") {
        drop_below(items, format!("{path}[]"), paths);
    }
    if let Some(values) = object.get_mut("additionalProperties") {
        drop_below(values, format!("{path}{{}}"), paths);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_required_lists_of_kubernetes_types_only() {
        let root = json!({
            "type": "object",
            "required": ["spec"],
            "properties": {"spec": {"$ref": "#/components/schemas/Spec"}},
            "components": {"schemas": {
                "Spec": {"type": "object", "required": ["name"], "properties": {
                    "secrets": {"type": "array", "items": {
                        "$ref": "#/components/schemas/io.k8s.api.core.v1.LocalObjectReference"
                    }},
                    "selector": {
                        "description": "Which pods.",
                        "allOf": [{"$ref": "#/components/schemas/io.k8s.LabelSelector"}],
                    },
                    "sizes": {"type": "object", "additionalProperties": {
                        "anyOf": [{"$ref": "#/components/schemas/io.k8s.Quantity"}]
                    }},
                    "name": {"type": "string"},
                    "nested": {"$ref": "#/components/schemas/Spec"},
                }},
                "io.k8s.api.core.v1.LocalObjectReference": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
                "io.k8s.LabelSelector": {"type": "object", "properties": {
                    "matchExpressions": {"type": "array", "items": {
                        "type": "object",
                        "properties": {"key": {"type": "string"}},
                        "required": ["key"],
                    }},
                }},
                "io.k8s.Quantity": {"type": "string"},
            }},
        });
        let expected = BTreeSet::from([
            ".spec.secrets[]".to_owned(),
            ".spec.selector.matchExpressions[]".to_owned(),
        ]);
        assert_eq!(required_in(&root), expected);
    }

    #[test]
    fn drops_required_only_at_the_given_paths() {
        let mut schema = json!({"type": "object", "required": ["spec"], "properties": {"spec": {
            "type": "object",
            "required": ["secrets"],
            "properties": {"secrets": {"type": "array", "items": {
                "type": "object",
                "required": ["name"],
                "oneOf": [{"required": ["name"]}],
                "properties": {"name": {"type": "string"}},
            }}},
        }}});
        let paths = BTreeSet::from([".spec.secrets[]".to_owned()]);
        drop_required(&mut schema, &paths);
        let item = &schema["properties"]["spec"]["properties"]["secrets"]["items"];
        assert!(item.get("required").is_none(), "{item}");
        assert_eq!(item["oneOf"], json!([{}]));
        assert_eq!(schema["required"], json!(["spec"]));
        assert_eq!(schema["properties"]["spec"]["required"], json!(["secrets"]));
    }
}
