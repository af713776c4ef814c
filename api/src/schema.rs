//! Schema helpers for fields whose JSON schema cannot be derived from their Rust type alone.

use std::collections::BTreeMap;

use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::Value;

/// A free-form JSON object, such as Kafka `config` maps, kept exactly as the user wrote it.
///
/// Fields of this type carry `#[schemars(schema_with = "crate::schema::free_form_object")]`
/// so that their CRD schema preserves unknown fields.
pub type FreeFormMap = BTreeMap<String, Value>;

/// Schema of an object whose content is not checked: `x-kubernetes-preserve-unknown-fields`.
pub fn free_form_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
    })
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

    #[test]
    fn doc_lines_join_into_paragraphs() {
        let text = doc_to_description(&[" First line", " continues.", "", " Second."]);
        assert_eq!(text, "First line continues.\n\nSecond.");
    }
}
