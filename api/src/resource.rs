//! Any Strimzi custom resource, chosen by a document's `apiVersion` and `kind`.

use kube::Resource;
use serde_json::Value;

use crate::document::{self, DocumentError};

macro_rules! strimzi_resources {
    ($($kind:ident => $ty:ty),+ $(,)?) => {
        /// One Strimzi custom resource of any kind.
        #[derive(Clone, Debug, PartialEq)]
        pub enum StrimziResource {
            $(
                #[doc = concat!("A `", stringify!($kind), "`.")]
                $kind(Box<$ty>),
            )+
        }

        impl StrimziResource {
            /// `(apiVersion, kind)` of every Strimzi custom resource kind.
            pub const KINDS: &'static [(&'static str, &'static str)] = &[
                $((concat!(api_group_of!($kind), "/v1"), stringify!($kind)),)+
            ];

            /// The resource's kind, e.g. `KafkaTopic`.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Self::$kind(_) => stringify!($kind),)+
                }
            }

            /// Reads a document whose `apiVersion` and `kind` name a Strimzi resource.
            pub fn from_value(value: Value) -> Result<Self, ResourceError> {
                let (api_version, kind) = type_of(&value);
                $(
                    if api_version == <$ty as Resource>::api_version(&()) && kind == stringify!($kind) {
                        return document::from_value::<$ty>(value)
                            .map(|resource| Self::$kind(Box::new(resource)))
                            .map_err(ResourceError::Document);
                    }
                )+
                Err(ResourceError::NotStrimzi { api_version, kind })
            }

            /// Lists the fields of a Strimzi document that its kind does not know.
            pub fn unknown_fields(value: &Value) -> Result<Vec<String>, ResourceError> {
                let (api_version, kind) = type_of(value);
                $(
                    if api_version == <$ty as Resource>::api_version(&()) && kind == stringify!($kind) {
                        return document::unknown_fields::<$ty>(value).map_err(ResourceError::Document);
                    }
                )+
                Err(ResourceError::NotStrimzi { api_version, kind })
            }

            /// Writes the resource back to JSON.
            pub fn to_value(&self) -> Result<Value, ResourceError> {
                let written = match self {
                    $(Self::$kind(resource) => serde_json::to_value(resource),)+
                };
                written.map_err(|error| ResourceError::Document(DocumentError::Serialize(error.to_string())))
            }
        }
    };
}

macro_rules! api_group_of {
    (StrimziPodSet) => {
        "core.strimzi.io"
    };
    ($other:ident) => {
        "kafka.strimzi.io"
    };
}

strimzi_resources! {
    Kafka => crate::kafka::Kafka,
    KafkaNodePool => crate::node_pool::KafkaNodePool,
    KafkaTopic => crate::topic::KafkaTopic,
    KafkaUser => crate::user::KafkaUser,
    KafkaConnect => crate::connect::KafkaConnect,
    KafkaConnector => crate::connector::KafkaConnector,
    KafkaMirrorMaker2 => crate::mirror_maker2::KafkaMirrorMaker2,
    KafkaBridge => crate::bridge::KafkaBridge,
    KafkaRebalance => crate::rebalance::KafkaRebalance,
    StrimziPodSet => crate::pod_set::StrimziPodSet,
}

/// Why a document could not be read as a Strimzi resource.
#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    /// The document is of another kind (a ConfigMap, a Secret, ...).
    #[error("`{api_version}` `{kind}` is not a Strimzi custom resource")]
    NotStrimzi {
        /// The document's `apiVersion`, empty when missing.
        api_version: String,
        /// The document's `kind`, empty when missing.
        kind: String,
    },
    /// The document is a Strimzi kind but does not match its schema.
    #[error(transparent)]
    Document(#[from] DocumentError),
}

impl ResourceError {
    /// A stable CamelCase word for conditions, Events and metric labels.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NotStrimzi { .. } => "UnsupportedKind",
            Self::Document(error) => error.reason(),
        }
    }
}

fn type_of(value: &Value) -> (String, String) {
    let field = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (field("apiVersion"), field("kind"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_are_chosen_by_api_version_and_kind() {
        let topic = json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaTopic",
            "metadata": {"name": "orders"},
            "spec": {"partitions": 3}
        });
        let resource = StrimziResource::from_value(topic.clone()).unwrap();
        assert_eq!(resource.kind(), "KafkaTopic");
        assert_eq!(resource.to_value().unwrap(), topic);
    }

    #[test]
    fn other_kinds_are_refused_by_name() {
        let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap"});
        let error = StrimziResource::from_value(config_map).unwrap_err();
        assert_eq!(error.reason(), "UnsupportedKind");
        let old_version = json!({"apiVersion": "kafka.strimzi.io/v1beta2", "kind": "Kafka"});
        assert!(matches!(
            StrimziResource::from_value(old_version),
            Err(ResourceError::NotStrimzi { .. })
        ));
    }

    #[test]
    fn every_kind_is_listed() {
        assert_eq!(StrimziResource::KINDS.len(), 10);
        assert!(StrimziResource::KINDS.contains(&("core.strimzi.io/v1", "StrimziPodSet")));
    }
}
