//! Why a KafkaTopic could not be reconciled; each reason is the one its condition shows.

use kafka_protocol::error::ResponseError;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::kafka::AdminError;

/// A reconciliation of a KafkaTopic failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopicError {
    /// The KafkaTopic asks for a change the operator does not make.
    #[error("{0}")]
    NotSupported(String),
    /// Another KafkaTopic manages the same Kafka topic.
    #[error("{0}")]
    ResourceConflict(String),
    /// Kafka refused a request or could not be reached.
    #[error("{0}")]
    Kafka(String),
    /// Kafka refused to create a topic that exists (its metadata may lag behind).
    #[error("{0}")]
    AlreadyExists(String),
    /// Kubernetes refused a request or could not be reached.
    #[error("{0}")]
    Kubernetes(String),
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
            } => Self::AlreadyExists(error.to_string()),
            _ => Self::Kafka(error.to_string()),
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
