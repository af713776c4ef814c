//! Why a KafkaTopic could not be reconciled; each reason is the one its condition shows.

use std::sync::Arc;

use kafka_protocol::error::ResponseError;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::kafka::AdminError;

/// A reconciliation of a KafkaTopic failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TopicError {
    /// The KafkaTopic asks for a change the operator does not make.
    #[error("{0}")]
    NotSupported(String),
    /// Another KafkaTopic manages the same Kafka topic.
    #[error("{0}")]
    ResourceConflict(String),
    /// Kafka refused a request or could not be reached.
    #[error(transparent)]
    Kafka(AdminError),
    /// Kafka refused to create a topic that exists (its metadata may lag behind).
    #[error(transparent)]
    AlreadyExists(AdminError),
    /// Kubernetes refused a request or could not be reached.
    #[error(transparent)]
    Kubernetes(Arc<ApiCallError>),
    /// The operator is stopping.
    #[error("{0}")]
    Internal(String),
}

impl TopicError {
    /// The error of a failed Kafka request.
    pub fn kafka(error: &AdminError) -> Self {
        match error {
            AdminError::Kafka {
                error: ResponseError::TopicAlreadyExists,
                ..
            } => Self::AlreadyExists(error.clone()),
            _ => Self::Kafka(error.clone()),
        }
    }
}

impl ErrorReason for TopicError {
    fn reason(&self) -> &'static str {
        match self {
            Self::NotSupported(_) => "NotSupported",
            Self::ResourceConflict(_) => "ResourceConflict",
            Self::Kafka(_) | Self::AlreadyExists(_) => "KafkaError",
            Self::Kubernetes(_) => "KubernetesError",
            Self::Internal(_) => "InternalError",
        }
    }
}

impl From<strimzi_operator_common::batch::BatcherStopped> for TopicError {
    fn from(error: strimzi_operator_common::batch::BatcherStopped) -> Self {
        Self::Internal(error.to_string())
    }
}
