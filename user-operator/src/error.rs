//! Why a KafkaUser could not be reconciled; each reason is the one its `NotReady` condition,
//! its Event and the failure metrics show.

use std::sync::Arc;

use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::batch::BatcherStopped;
use strimzi_operator_common::kafka::AdminError;

/// A failed call to the API server ([`ApiCallError`], or the applier's error holding one),
/// shared between the reconciliations that see it.
///
/// [`ApiCallError`]: strimzi_operator_common::api_error::ApiCallError
pub type KubernetesError = Arc<dyn std::error::Error + Send + Sync>;

/// Reason of a KafkaUser whose name another namespace's KafkaUser owns.
pub const RESOURCE_CONFLICT: &str = "ResourceConflict";

/// A reconciliation of a KafkaUser failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UserError {
    /// The KafkaUser asks for something that cannot be done: a name too long, an invalid ACL
    /// rule, a password Secret that is missing, ACLs while the Admin API may not manage them.
    #[error("{0}")]
    InvalidResource(String),
    /// A KafkaUser of the same name in another watched namespace owns the Kafka user; nothing
    /// is written for this one.
    #[error("{0}")]
    ResourceConflict(String),
    /// The clients CA Secrets are missing or unusable, or a certificate could not be issued.
    #[error("{0}")]
    InvalidCertificate(String),
    /// The user's own Secret holds a credential the operator cannot read; it is left as it is.
    #[error("{0}")]
    InvalidSecret(String),
    /// Kafka refused a request or could not be reached.
    #[error("{action}: {source}")]
    Kafka {
        /// What the operator was doing.
        action: &'static str,
        /// Kafka's error.
        source: AdminError,
    },
    /// Kubernetes refused a request or could not be reached.
    #[error("{action}: {source}")]
    Kubernetes {
        /// What the operator was doing.
        action: &'static str,
        /// The client's error.
        source: KubernetesError,
    },
    /// Several users could not be cleaned up.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Several(Vec<UserError>),
    /// The operator is stopping.
    #[error("{0}")]
    Internal(String),
}

impl ErrorReason for UserError {
    fn reason(&self) -> &'static str {
        match self {
            Self::InvalidResource(_) => "InvalidResourceException",
            Self::ResourceConflict(_) => RESOURCE_CONFLICT,
            Self::InvalidCertificate(_) => "InvalidCertificateException",
            Self::InvalidSecret(_) => "InvalidSecret",
            Self::Kafka { .. } => "KafkaError",
            Self::Kubernetes { .. } => "KubernetesError",
            Self::Several(errors) => errors.first().map_or("KafkaError", ErrorReason::reason),
            Self::Internal(_) => "InternalError",
        }
    }
}

impl UserError {
    /// Kafka's `source` while doing `action`.
    pub fn kafka(action: &'static str, source: AdminError) -> Self {
        Self::Kafka { action, source }
    }

    /// The Kubernetes client's `source` while doing `action`.
    pub fn kubernetes(
        action: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Kubernetes {
            action,
            source: Arc::new(source),
        }
    }
}

impl From<BatcherStopped> for UserError {
    fn from(error: BatcherStopped) -> Self {
        Self::Internal(error.to_string())
    }
}
