//! Helpers shared by the compatibility tests.

use std::path::Path;

use serde_json::Value;
use strimzi_api::document::{equivalent, yaml_documents};
use strimzi_api::resource::StrimziResource;
use strimzi_tests::reference::{reference_crds_dir, yaml_files};

/// A Strimzi document found in a file, with where it came from.
pub struct Found {
    /// `file#index` for messages.
    pub origin: String,
    /// The document as written.
    pub document: Value,
}

/// Every Strimzi custom resource document below `dir`, and how many other documents
/// (ConfigMaps, Secrets, ...) were passed over.
pub fn strimzi_documents(dir: &Path) -> (Vec<Found>, usize) {
    let mut found = Vec::new();
    let mut others = 0;
    for file in yaml_files(dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        let documents =
            yaml_documents(&text).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        for (index, document) in documents.into_iter().enumerate() {
            let api_version = document["apiVersion"].as_str().unwrap_or_default();
            if api_version.starts_with("kafka.strimzi.io/")
                || api_version.starts_with("core.strimzi.io/")
            {
                found.push(Found {
                    origin: format!("{}#{index}", file.display()),
                    document,
                });
            } else {
                others += 1;
            }
        }
    }
    (found, others)
}

/// Reads `found` as its kind and checks that nothing is lost writing it back.
/// Returns the typed resource, or a message describing the loss.
pub fn round_trip(found: &Found) -> Result<StrimziResource, String> {
    let unknown = StrimziResource::unknown_fields(&found.document)
        .map_err(|error| format!("{}: {error}", found.origin))?;
    if !unknown.is_empty() {
        return Err(format!(
            "{}: fields not understood: {unknown:?}",
            found.origin
        ));
    }
    let resource = StrimziResource::from_value(found.document.clone())
        .map_err(|error| format!("{}: {error}", found.origin))?;
    let written = resource.to_value().map_err(|error| error.to_string())?;
    if !equivalent(&found.document, &written) {
        return Err(format!(
            "{}: written back differently:\n  read:    {}\n  written: {}",
            found.origin, found.document, written
        ));
    }
    Ok(resource)
}

/// The `openAPIV3Schema` of `kind` in Strimzi's reference CRDs.
pub fn reference_schema(kind: &str) -> Value {
    for file in yaml_files(&reference_crds_dir()) {
        let text = std::fs::read_to_string(&file).unwrap();
        for crd in yaml_documents(&text).unwrap() {
            if crd["spec"]["names"]["kind"] == kind {
                return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone();
            }
        }
    }
    panic!("no CRD for {kind} among Strimzi's reference CRDs");
}

/// Whether Strimzi's own CRD lists `field` as required in the object at `path`
/// (dotted, with `[i]` for list items), i.e. whether the API server would reject a document
/// that lacks it.
pub fn required_by_reference(kind: &str, path: &str, field: &str) -> bool {
    let mut schema = reference_schema(kind);
    for segment in path.split('.').filter(|segment| !segment.is_empty()) {
        let (name, indexes) = segment.split_once('[').unwrap_or((segment, ""));
        schema = schema["properties"][name].clone();
        for _ in indexes.matches(']') {
            schema = schema["items"].clone();
        }
    }
    schema["required"]
        .as_array()
        .is_some_and(|required| required.iter().any(|name| name == field))
}
