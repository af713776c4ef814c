//! Errors of the Kafka admin client.

use std::time::Duration;

use kafka_protocol::error::ResponseError;

/// What went wrong talking to Kafka; cloned when one failed request fails many batched
/// items.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AdminError {
    /// A configuration value is missing or invalid.
    #[error("{variable}={value:?} is invalid: {allowed}")]
    InvalidConfig {
        /// The environment variable (or setting) that holds the value.
        variable: String,
        /// The value found.
        value: String,
        /// What would have been accepted.
        allowed: String,
    },
    /// A TLS file could not be read or used.
    #[error("TLS setup failed: {0}")]
    Tls(String),
    /// A network operation failed (connect, read, write, connection closed).
    #[error("connection to {address} failed: {message}")]
    Connection {
        /// `host:port` of the broker.
        address: String,
        /// What failed.
        message: String,
    },
    /// The address names a host while host names are not looked up (the admin client's
    /// `HostResolution::IpAddressesOnly`); trying again cannot help.
    #[error("connection to {address} not attempted: host names are not looked up here")]
    HostNameNotLookedUp {
        /// `host:port` of the broker.
        address: String,
    },
    /// No answer arrived within the configured bound.
    #[error("{operation} timed out after {after:?}")]
    Timeout {
        /// The request or operation that timed out.
        operation: String,
        /// The bound that was exceeded.
        after: Duration,
    },
    /// The broker refused the credentials.
    #[error("authentication failed: {0}")]
    Authentication(String),
    /// The broker does not support any version of an API this client knows.
    #[error("broker does not support {api} in a version this client knows")]
    UnsupportedVersion {
        /// The Kafka API name.
        api: String,
    },
    /// A message could not be encoded or decoded.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// Kafka answered with an error code.
    #[error("{error} (code {code}){}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Kafka {
        /// The Kafka error code.
        code: i16,
        /// Kafka's name of the error.
        error: ResponseError,
        /// The message the broker sent, if any.
        message: Option<String>,
    },
    /// A request does not make sense (for example an empty SCRAM password).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}

impl AdminError {
    /// An error for a Kafka error code, or `None` when the code means success.
    pub fn from_code(code: i16, message: Option<&str>) -> Option<Self> {
        let error = ResponseError::try_from_code(code)?;
        let message = message.filter(|text| !text.is_empty());
        Some(match error {
            ResponseError::SaslAuthenticationFailed | ResponseError::IllegalSaslState => {
                Self::Authentication(message.map_or_else(|| error.to_string(), str::to_owned))
            }
            _ => Self::Kafka {
                code,
                error,
                message: message.map(str::to_owned),
            },
        })
    }

    /// `Err` for a non-zero Kafka error code.
    pub fn check(code: i16, message: Option<&str>) -> Result<(), Self> {
        Self::from_code(code, message).map_or(Ok(()), Err)
    }

    /// The Kafka error code, when Kafka answered with one.
    pub fn code(&self) -> Option<i16> {
        match self {
            Self::Kafka { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Whether trying the same thing again later can succeed.
    pub fn is_retriable(&self) -> bool {
        match self {
            Self::Connection { .. } | Self::Timeout { .. } => true,
            Self::Kafka { error, .. } => {
                error.is_retriable()
                    || matches!(
                        error,
                        ResponseError::NotController | ResponseError::BrokerNotAvailable
                    )
            }
            _ => false,
        }
    }

    /// Whether no connection to Kafka could be opened at all.
    pub fn is_connection(&self) -> bool {
        matches!(
            self,
            Self::Connection { .. } | Self::HostNameNotLookedUp { .. }
        )
    }

    /// A stable, CamelCase reason for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::InvalidConfig { .. } => "KafkaInvalidConfig",
            Self::Tls(_) => "KafkaTlsError",
            Self::Connection { .. } | Self::HostNameNotLookedUp { .. } => "KafkaConnectionError",
            Self::Timeout { .. } => "KafkaTimeout",
            Self::Authentication(_) => "KafkaAuthenticationFailed",
            Self::UnsupportedVersion { .. } => "KafkaUnsupportedVersion",
            Self::Protocol(_) => "KafkaProtocolError",
            Self::Kafka { .. } => "KafkaError",
            Self::InvalidRequest(_) => "KafkaInvalidRequest",
        }
    }

    /// Whether this is the Kafka error `expected`.
    pub fn is(&self, expected: ResponseError) -> bool {
        matches!(self, Self::Kafka { error, .. } if *error == expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_errors_that_know_whether_to_retry() {
        assert!(AdminError::from_code(0, None).is_none());
        let missing = AdminError::from_code(3, Some("no such topic")).unwrap_or_else(|| panic!());
        assert_eq!(missing.code(), Some(3));
        assert!(missing.is_retriable());
        assert!(missing.to_string().contains("no such topic"));
        let exists = AdminError::from_code(36, None).unwrap_or_else(|| panic!());
        assert!(exists.is(ResponseError::TopicAlreadyExists));
        assert!(!exists.is_retriable());
        let auth = AdminError::from_code(58, Some("bad password")).unwrap_or_else(|| panic!());
        assert_eq!(auth.reason(), "KafkaAuthenticationFailed");
        assert!(!auth.is_retriable());
    }
}
