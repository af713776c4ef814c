//! Schema helpers for fields whose JSON schema cannot be derived from their Rust type alone.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A free-form JSON object, such as a Kafka `config` map, kept exactly as the user wrote it.
///
/// Its schema is an object with `x-kubernetes-preserve-unknown-fields`, so fields of this type
/// (or `Option`s and lists of it) need no schema attributes. It dereferences to the map.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FreeFormMap(pub BTreeMap<String, Value>);

impl JsonSchema for FreeFormMap {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("FreeFormMap")
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        })
    }
}

impl Deref for FreeFormMap {
    type Target = BTreeMap<String, Value>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for FreeFormMap {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<BTreeMap<String, Value>> for FreeFormMap {
    fn from(map: BTreeMap<String, Value>) -> Self {
        Self(map)
    }
}

impl FromIterator<(String, Value)> for FreeFormMap {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(entries: I) -> Self {
        Self(entries.into_iter().collect())
    }
}

/// Joins doc-comment lines into one description, the way rustdoc paragraphs read.
pub fn doc_to_description(lines: &[&str]) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines.iter().flat_map(|chunk| chunk.split('\n')) {
        let line = line.trim();
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Holder {
        optional: Option<FreeFormMap>,
        many: Vec<FreeFormMap>,
    }

    #[test]
    fn free_form_maps_are_optional_and_preserve_unknown_fields() {
        let schema = serde_json::to_value(schemars::schema_for!(Holder)).unwrap();
        assert_eq!(schema["required"], serde_json::json!(["many"]));
        let preserved = |schema: &Value| schema["x-kubernetes-preserve-unknown-fields"] == true;
        assert!(
            preserved(&schema["properties"]["many"]["items"]),
            "{schema}"
        );
        let optional = &schema["properties"]["optional"];
        assert!(
            preserved(optional)
                || optional["anyOf"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(preserved)),
            "{schema}"
        );
    }

    #[test]
    fn doc_lines_join_into_paragraphs() {
        let text = doc_to_description(&[" First line", " continues.", "", " Second."]);
        assert_eq!(text, "First line continues.\n\nSecond.");
    }
}
