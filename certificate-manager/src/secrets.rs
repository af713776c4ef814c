//! Reading and building the Kubernetes Secrets that hold certificates and keys.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The bytes of `key` in the Secret's `data`, if present.
pub(crate) fn data<'a>(secret: &'a Secret, key: &str) -> Option<&'a [u8]> {
    secret
        .data
        .as_ref()
        .and_then(|data| data.get(key))
        .map(|value| value.0.as_slice())
}

/// The value of an annotation, if present.
pub(crate) fn annotation<'a>(secret: &'a Secret, key: &str) -> Option<&'a str> {
    secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(key))
        .map(String::as_str)
}

/// The Secret's name, or an empty string.
pub(crate) fn name(secret: &Secret) -> &str {
    secret.metadata.name.as_deref().unwrap_or_default()
}

/// A Secret with a name, annotations and data; labels, namespace and owner references are the
/// caller's to add.
pub(crate) fn build(
    name: &str,
    annotations: BTreeMap<String, String>,
    data: BTreeMap<String, Vec<u8>>,
) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".to_owned()),
        data: Some(
            data.into_iter()
                .map(|(key, value)| (key, ByteString(value)))
                .collect(),
        ),
        ..Secret::default()
    }
}
