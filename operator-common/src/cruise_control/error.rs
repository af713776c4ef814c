//! What can go wrong talking to Cruise Control.

use crate::http_client::HttpError;

/// A failed call to Cruise Control's REST API.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CruiseControlError {
    /// Cruise Control could not be reached, or did not answer in time.
    #[error("Cruise Control: {0}")]
    Http(#[from] HttpError),
    /// Cruise Control refused the credentials (HTTP 401 or 403).
    #[error("Cruise Control refused the credentials for {endpoint} (HTTP {status})")]
    Unauthorized {
        /// The endpoint called, e.g. `rebalance`.
        endpoint: &'static str,
        /// The HTTP status.
        status: u16,
    },
    /// Cruise Control has not collected enough metric windows yet to compute a proposal (its
    /// `NotEnoughValidWindowsException`): asking again later helps.
    #[error("Cruise Control does not have enough metrics yet: {message}")]
    NotEnoughData {
        /// Cruise Control's error message.
        message: String,
    },
    /// Cruise Control already runs as many user tasks as it is configured to
    /// (`max.active.user.tasks`): asking again later helps.
    #[error("Cruise Control is busy: {message}")]
    TooManyActiveTasks {
        /// Cruise Control's error message.
        message: String,
    },
    /// Cruise Control answered the request with an error, e.g. an unknown goal.
    #[error("Cruise Control refused {endpoint} (HTTP {status}): {message}")]
    Rejected {
        /// The endpoint called.
        endpoint: &'static str,
        /// The HTTP status.
        status: u16,
        /// Cruise Control's `errorMessage`, or the body when it is not JSON.
        message: String,
    },
    /// The answer was not what the endpoint sends.
    #[error("Cruise Control sent an unreadable answer to {endpoint}: {message}")]
    Unreadable {
        /// The endpoint called.
        endpoint: &'static str,
        /// What could not be read.
        message: String,
    },
}

impl CruiseControlError {
    /// Whether asking again later may succeed without anything changing on our side: the
    /// connection failed, or Cruise Control is busy or still collecting metrics.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Http(_) | Self::NotEnoughData { .. } | Self::TooManyActiveTasks { .. }
        )
    }
}

impl crate::ErrorReason for CruiseControlError {
    fn reason(&self) -> &'static str {
        match self {
            // Strimzi's names for a connection failure and a refused or odd answer.
            Self::Http(_) => "CruiseControlRetriableConnectionException",
            Self::Rejected { .. } | Self::Unreadable { .. } => "CruiseControlRestException",
            Self::Unauthorized { .. } => "CruiseControlUnauthorized",
            Self::NotEnoughData { .. } => "NotEnoughValidWindows",
            Self::TooManyActiveTasks { .. } => "CruiseControlTooManyActiveTasks",
        }
    }
}
