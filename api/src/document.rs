//! Reading custom resources from JSON or YAML documents, with errors that name the field,
//! and listing the fields of a document that the types do not know.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a document could not be read as a custom resource.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// The text is not valid YAML or JSON.
    #[error("not valid YAML: {0}")]
    Syntax(String),
    /// A field has a value the type does not accept; `path` names it, e.g. `spec.replicas`.
    #[error("invalid field `{path}`: {message}")]
    InvalidField {
        /// Dotted path of the field, with `[i]` for list items.
        path: String,
        /// What is wrong with the value.
        message: String,
    },
    /// A typed value could not be turned back into JSON (for example a non-string map key).
    #[error("cannot serialize: {0}")]
    Serialize(String),
}

impl DocumentError {
    /// A stable CamelCase word for conditions, Events and metric labels.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Syntax(_) => "InvalidYaml",
            Self::InvalidField { .. } => "InvalidResource",
            Self::Serialize(_) => "SerializationError",
        }
    }
}

/// Deserializes `value` into `T`, naming the failing field's path on error.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, DocumentError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let mut path = error.path().to_string();
        let mut message = error.inner().to_string();
        // A union reports the failing field inside its variant at the start of the message.
        while let Some((nested, rest)) = message
            .strip_prefix(crate::union::NESTED_PATH_PREFIX)
            .and_then(|rest| rest.split_once("`: "))
        {
            path = if path == "." {
                nested.to_owned()
            } else {
                format!("{path}.{nested}")
            };
            message = rest.to_owned();
        }
        DocumentError::InvalidField {
            path: field_path(&path, &message),
            message,
        }
    })
}

/// Parses one YAML (or JSON) document into `T`, naming the failing field's path on error.
pub fn from_yaml<T: DeserializeOwned>(text: &str) -> Result<T, DocumentError> {
    let value: Value =
        serde_yaml_ng::from_str(text).map_err(|error| DocumentError::Syntax(error.to_string()))?;
    from_value(value)
}

/// Splits a multi-document YAML stream into JSON values, dropping empty documents.
pub fn yaml_documents(text: &str) -> Result<Vec<Value>, DocumentError> {
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let value = <Value as serde::Deserialize>::deserialize(document)
            .map_err(|error| DocumentError::Syntax(error.to_string()))?;
        if !value.is_null() {
            documents.push(value);
        }
    }
    Ok(documents)
}

/// Lists the paths of fields in `document` that `T` does not know, such as a misspelt
/// `spec.kafka.listner`. Fields set to `null` are not reported.
///
/// The document is read into `T` and written back; whatever is missing afterwards was not
/// understood. Operators report these paths as `UnknownFields` warnings.
pub fn unknown_fields<T: DeserializeOwned + Serialize>(
    document: &Value,
) -> Result<Vec<String>, DocumentError> {
    let typed: T = from_value(document.clone())?;
    let written = serde_json::to_value(&typed)
        .map_err(|error| DocumentError::Serialize(error.to_string()))?;
    let mut unknown = Vec::new();
    collect_missing(document, &written, "", &mut unknown);
    Ok(unknown)
}

/// JSON equality where numbers compare by value, so `1` equals `1.0`; YAML and JSON
/// readers do not agree on how to type whole numbers in floating-point fields.
pub fn equivalent(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(left), Value::Number(right)) => left.as_f64() == right.as_f64(),
        (Value::Array(left), Value::Array(right)) => {
            left.len() == right.len() && left.iter().zip(right).all(|(l, r)| equivalent(l, r))
        }
        (Value::Object(left), Value::Object(right)) => {
            left.len() == right.len()
                && left
                    .iter()
                    .all(|(key, l)| right.get(key).is_some_and(|r| equivalent(l, r)))
        }
        _ => left == right,
    }
}

fn collect_missing(original: &Value, written: &Value, path: &str, unknown: &mut Vec<String>) {
    match (original, written) {
        (Value::Object(original), Value::Object(written)) => {
            for (key, value) in original {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match written.get(key) {
                    Some(written_value) => collect_missing(value, written_value, &child, unknown),
                    None if value.is_null() => {}
                    None => unknown.push(child),
                }
            }
        }
        (Value::Array(original), Value::Array(written)) => {
            for (index, (value, written_value)) in original.iter().zip(written).enumerate() {
                collect_missing(value, written_value, &format!("{path}[{index}]"), unknown);
            }
        }
        _ => {}
    }
}

/// The path of the failing field. For a missing field serde reports the enclosing object,
/// so the missing field's name (from the message) is appended.
fn field_path(path: &str, message: &str) -> String {
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next());
    match (path, missing) {
        (".", Some(field)) => field.to_owned(),
        (".", None) => "(document)".to_owned(),
        (path, Some(field)) => format!("{path}.{field}"),
        (path, None) => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Serialize, Deserialize)]
    struct Outer {
        inner: Vec<Inner>,
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Inner {
        count: u32,
    }

    #[test]
    fn invalid_field_names_its_path() {
        let error = from_value::<Outer>(json!({"inner": [{"count": 1}, {"count": "x"}]}))
            .expect_err("a string is not a count");
        assert_eq!(error.reason(), "InvalidResource");
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "inner[1].count");
    }

    #[test]
    fn missing_field_path_names_the_field() {
        let error = from_value::<Outer>(json!({"inner": [{}]})).expect_err("count is required");
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "inner[0].count");
    }

    #[test]
    fn unknown_fields_are_listed_with_paths() {
        let document =
            json!({"inner": [{"count": 1, "colour": "red"}], "extra": {"a": 1}, "gone": null});
        let unknown = unknown_fields::<Outer>(&document).unwrap();
        assert_eq!(
            unknown,
            vec!["extra".to_owned(), "inner[0].colour".to_owned()]
        );
    }

    #[test]
    fn numbers_are_equivalent_by_value() {
        assert!(equivalent(
            &json!({"a": [1, 2.5]}),
            &json!({"a": [1.0, 2.5]})
        ));
        assert!(!equivalent(&json!({"a": 1}), &json!({"a": "1"})));
        assert!(!equivalent(&json!({"a": 1}), &json!({"a": 1, "b": null})));
    }

    #[test]
    fn yaml_streams_split_into_documents() {
        let documents = yaml_documents("a: 1\n---\n---\nb: 2\n").unwrap();
        assert_eq!(documents, vec![json!({"a": 1}), json!({"b": 2})]);
    }
}
