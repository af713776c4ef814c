//! Shapes a derived schema like Strimzi's: no `nullable` or numeric `format` (Strimzi's CRDs
//! have neither), descriptions as flowing text, the
//! root's `apiVersion`, `kind` and `metadata` properties, and status conditions as a list keyed
//! by `type`.

use serde_json::{Map, Value, json};
use strimzi_api::schema::doc_to_description;

/// The syntax of a Kubernetes resource quantity such as `500m`, `2Gi` or `1e3`.
const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// Normalizes the `openAPIV3Schema` of a CRD in place and gives its root `description`.
pub fn normalize(schema: &mut Value, description: &str) {
    clean(schema);
    quantities(schema);
    let Some(root) = schema.as_object_mut() else {
        return;
    };
    root.remove("title");
    root.insert(
        "description".to_owned(),
        Value::String(description.to_owned()),
    );
    let properties = root
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(properties) = properties.as_object_mut() {
        properties.insert(
            "apiVersion".to_owned(),
            json!({
                "type": "string",
                "description": "Version of the API this object is written against, e.g. `kafka.strimzi.io/v1`.",
            }),
        );
        properties.insert(
            "kind".to_owned(),
            json!({
                "type": "string",
                "description": "Kind of object this is, in CamelCase.",
            }),
        );
        properties.insert("metadata".to_owned(), json!({"type": "object"}));
    }
}

/// Removes what Strimzi's schemas do not have, recursively.
fn clean(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            object.remove("nullable");
            let numeric = matches!(
                object.get("type").and_then(Value::as_str),
                Some("integer" | "number")
            );
            if numeric {
                object.remove("format");
            }
            if let Some(Value::String(description)) = object.get_mut("description") {
                // Doc comments wrap lines; a description reads as paragraphs.
                *description = doc_to_description(&[description.as_str()]);
            }
            object.values_mut().for_each(clean);
        }
        Value::Array(items) => items.iter_mut().for_each(clean),
        _ => {}
    }
}

/// Gives the values of resource `limits` and `requests` maps the quantity syntax (number or
/// string matching [`QUANTITY_PATTERN`]) instead of a long prose description.
fn quantities(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::Object(properties)) = object.get_mut("properties") {
                for name in ["limits", "requests"] {
                    let values = properties
                        .get_mut(name)
                        .and_then(|map| map.get_mut("additionalProperties"));
                    if let Some(values) = values
                        && values["x-kubernetes-int-or-string"] == true
                    {
                        *values = json!({
                            "anyOf": [{"type": "integer"}, {"type": "string"}],
                            "pattern": QUANTITY_PATTERN,
                            "x-kubernetes-int-or-string": true,
                        });
                    }
                }
            }
            object.values_mut().for_each(quantities);
        }
        Value::Array(items) => items.iter_mut().for_each(quantities),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_what_strimzi_does_not_have() {
        let mut schema = json!({
            "title": "Thing",
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "int32", "minimum": 1, "nullable": true},
                "text": {"type": "string", "description": "Wrapped\nline.\n\nNext paragraph."},
                "ratio": {"type": "number", "format": "double", "maximum": 1.0, "minimum": 0.5},
                "when": {"type": "string", "format": "date-time"},
                "resources": {"type": "object", "properties": {"limits": {
                    "type": "object",
                    "additionalProperties": {"x-kubernetes-int-or-string": true, "description": "long"}
                }}},
                "status": {"type": "object", "properties": {"conditions": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"type": {"type": "string"}}}
                }}}
            }
        });
        normalize(&mut schema, "A thing.");
        assert_eq!(schema["description"], "A thing.");
        assert!(schema.get("title").is_none());
        assert_eq!(
            schema["properties"]["count"],
            json!({"type": "integer", "minimum": 1})
        );
        assert_eq!(
            schema["properties"]["ratio"],
            json!({"type": "number", "maximum": 1.0, "minimum": 0.5})
        );
        assert_eq!(schema["properties"]["when"]["format"], "date-time");
        assert_eq!(
            schema["properties"]["text"]["description"],
            "Wrapped line.\n\nNext paragraph."
        );
        assert_eq!(schema["properties"]["metadata"], json!({"type": "object"}));
        assert_eq!(schema["properties"]["apiVersion"]["type"], "string");
        let conditions = &schema["properties"]["status"]["properties"]["conditions"];
        assert_eq!(
            schema["properties"]["resources"]["properties"]["limits"]["additionalProperties"]["pattern"],
            QUANTITY_PATTERN
        );
        // A plain list, as in Strimzi's CRDs: several `Warning` conditions may coexist.
        assert!(conditions.get("x-kubernetes-list-type").is_none());
        assert!(conditions["items"].get("required").is_none());
    }
}
