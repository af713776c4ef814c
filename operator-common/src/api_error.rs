//! The one shape of "a call to the API server failed", which every layer's error type wraps
//! (`Api(ApiCallError)`): what was attempted on which object, and the client's error kept as
//! the source. Each layer keeps its own reason for it (the apply layer's `KubernetesApiError`,
//! the topic operator's `KubernetesError`, ...), so conditions, Events and metrics keep theirs.

use std::fmt;

use kube::Resource;

/// A request to the API server was refused or could not be made.
#[derive(Debug, thiserror::Error)]
#[error("{verb} {object}: {source}")]
pub struct ApiCallError {
    /// What was attempted: `get`, `list`, `apply`, `patch`, `create`, `delete`, ..., with
    /// the kind (`get Secret`) where `object` is only a name.
    pub verb: &'static str,
    /// The object or objects concerned, as people read them: `Pod ns/name`, `CRD name`,
    /// `KafkaConnect ns/name status`.
    pub object: String,
    /// The client's error.
    #[source]
    pub source: Box<kube::Error>,
}

impl ApiCallError {
    /// `verb` on `object` (any description) failed with `source`.
    pub fn new(verb: &'static str, object: impl fmt::Display, source: kube::Error) -> Self {
        Self {
            verb,
            object: object.to_string(),
            source: Box::new(source),
        }
    }

    /// `verb` on the `K` named `name` in `namespace` failed with `source` (an empty
    /// namespace for a cluster-scoped object, an empty name for a list).
    pub fn of<K: Resource<DynamicType = ()>>(
        verb: &'static str,
        namespace: &str,
        name: &str,
        source: kube::Error,
    ) -> Self {
        Self::new(verb, object_name(&K::kind(&()), namespace, name), source)
    }

    /// The HTTP status the API server answered with, if it answered.
    pub fn status_code(&self) -> Option<u16> {
        match self.source.as_ref() {
            kube::Error::Api(status) => Some(status.code),
            _ => None,
        }
    }
}

/// Two failures are the same when they say the same: the same verb, object and client
/// message (the client's error itself cannot be compared). For errors kept in decisions
/// that tests compare.
impl PartialEq for ApiCallError {
    fn eq(&self, other: &Self) -> bool {
        self.verb == other.verb
            && self.object == other.object
            && self.source.to_string() == other.source.to_string()
    }
}

impl Eq for ApiCallError {}

/// `Kind namespace/name`, `Kind name` (cluster-scoped) or `Kind namespace/` (a list).
pub fn object_name(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Namespace, Pod};

    fn not_found() -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("pods \"p\" not found", "NotFound")
                .with_code(404)
                .boxed(),
        )
    }

    #[test]
    fn it_names_the_verb_and_the_object_and_keeps_the_source() {
        let error = ApiCallError::of::<Pod>("delete", "ns", "p", not_found());
        assert!(
            error.to_string().starts_with("delete Pod ns/p: "),
            "{error}"
        );
        assert_eq!(error.status_code(), Some(404));
        let source = std::error::Error::source(&error).expect("the client's error as source");
        assert!(source.to_string().contains("not found"), "{source}");
    }

    #[test]
    fn a_cluster_scoped_object_has_no_namespace() {
        let error = ApiCallError::of::<Namespace>("get", "", "kafka", not_found());
        assert!(
            error.to_string().starts_with("get Namespace kafka: "),
            "{error}"
        );
    }
}
