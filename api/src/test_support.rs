//! Helpers for the unit tests of the resource modules.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::document::{DocumentError, equivalent, from_value, unknown_fields};

/// Reads `document` as `T`, asserts that no field was unknown and that writing it back gives
/// an equivalent document, and returns the typed value.
pub fn round_trip<T: DeserializeOwned + Serialize>(document: &Value) -> T {
    let unknown = unknown_fields::<T>(document).expect("document reads");
    assert!(unknown.is_empty(), "unknown fields: {unknown:?}");
    let typed: T = from_value(document.clone()).expect("document reads");
    let written = serde_json::to_value(&typed).expect("document writes");
    assert!(
        equivalent(document, &written),
        "round trip changed the document:\n{document:#}\n{written:#}"
    );
    typed
}

/// The field path named by the error of reading an invalid `document` as `T`.
pub fn invalid_path<T: DeserializeOwned + std::fmt::Debug>(document: Value) -> String {
    match from_value::<T>(document) {
        Err(DocumentError::InvalidField { path, .. }) => path,
        other => panic!("expected an invalid field, got {other:?}"),
    }
}
