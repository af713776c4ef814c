//! Why a KafkaUser could not be reconciled; each reason is the one its `NotReady` condition,
//! its Event and the failure metrics show.

use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::batch::BatcherStopped;

/// A reconciliation of a KafkaUser failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UserError {
    /// The KafkaUser asks for something that cannot be done: a name too long, an invalid ACL
    /// rule, a password Secret that is missing, ACLs while the Admin API may not manage them.
    #[error("{0}")]
    InvalidResource(String),
    /// The clients CA Secrets are missing or unusable, or a certificate could not be issued.
    #[error("{0}")]
    InvalidCertificate(String),
    /// The user's own Secret holds a credential the operator cannot read; it is left as it is.
    #[error("{0}")]
    InvalidSecret(String),
    /// Kafka refused a request or could not be reached.
    #[error("{0}")]
    Kafka(String),
    /// Kubernetes refused a request or could not be reached.
    #[error("{0}")]
    Kubernetes(String),
    /// The operator is stopping.
    #[error("{0}")]
    Internal(String),
}

impl ErrorReason for UserError {
    fn reason(&self) -> &'static str {
        match self {
            Self::InvalidResource(_) => "InvalidResourceException",
            Self::InvalidCertificate(_) => "InvalidCertificateException",
            Self::InvalidSecret(_) => "InvalidSecret",
            Self::Kafka(_) => "KafkaError",
            Self::Kubernetes(_) => "KubernetesError",
            Self::Internal(_) => "InternalError",
        }
    }
}

impl From<BatcherStopped> for UserError {
    fn from(error: BatcherStopped) -> Self {
        Self::Internal(error.to_string())
    }
}
