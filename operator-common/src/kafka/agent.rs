//! The broker state Strimzi's kafka-agent reports from inside each Kafka pod: a JVM agent
//! in the Kafka image that serves `GET /v1/broker-state/` over HTTPS on port 8443 and
//! accepts only clients with a certificate of the cluster CA (the cluster operator's).
//!
//! The answer is Kafka's `BrokerState` metric as a number, with the logs and segments still
//! to recover while the broker is in log recovery, e.g.
//! `{"brokerState":2,"recoveryState":{"remainingLogsToRecover":12,"remainingSegmentsToRecover":40}}`.

use std::time::Duration;

use serde::Deserialize;

use super::config::{HostResolution, TlsConfig};
use crate::http_client::{self, Exchange, HttpError, Method, Request, Server, ServerTls};

/// The port the kafka-agent serves the broker state on.
pub const AGENT_PORT: u16 = 8443;
/// The path of the broker state.
const BROKER_STATE_PATH: &str = "/v1/broker-state/";
/// The most of an answer read: the broker state is a few dozen bytes.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// What went wrong asking a kafka-agent for its broker's state.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The request could not be made or its answer not read.
    #[error("kafka-agent: {0}")]
    Http(#[from] HttpError),
    /// The agent answered with an HTTP status other than 200 (404 while the broker has not
    /// registered its state metric yet).
    #[error("the kafka-agent at {address} answered {status}: {body}")]
    Status {
        /// The agent's address.
        address: String,
        /// The HTTP status code.
        status: u16,
        /// The body of the answer.
        body: String,
    },
    /// The answer was not the expected JSON.
    #[error("the kafka-agent at {address} sent an unreadable answer: {message}")]
    Answer {
        /// The agent's address.
        address: String,
        /// What could not be read.
        message: String,
    },
}

impl AgentError {
    /// A stable reason for logs, conditions and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Http(HttpError::Tls { .. }) => "KafkaAgentTlsSetupFailed",
            Self::Http(HttpError::HostNameNotLookedUp { .. }) => "KafkaAgentHostNameNotLookedUp",
            Self::Http(HttpError::Connection { .. }) => "KafkaAgentUnreachable",
            Self::Http(HttpError::Timeout { .. }) => "KafkaAgentTimeout",
            Self::Http(HttpError::Unreadable { .. }) | Self::Answer { .. } => {
                "KafkaAgentAnswerUnreadable"
            }
            Self::Status { .. } => "KafkaAgentStatus",
        }
    }
}

/// Kafka's `BrokerState` values as the agent reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BrokerState {
    /// The numeric state: 0 not running, 1 starting, 2 recovering logs, 3 running,
    /// 6 pending controlled shutdown, 7 shutting down, 127 unknown.
    pub code: i64,
    /// The logs and segments left to recover, reported while recovering.
    pub recovery: Option<RecoveryProgress>,
}

/// How much log recovery is left.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub struct RecoveryProgress {
    /// Logs (partition directories) still to recover.
    #[serde(rename = "remainingLogsToRecover")]
    pub remaining_logs: i64,
    /// Segments still to recover.
    #[serde(rename = "remainingSegmentsToRecover")]
    pub remaining_segments: i64,
}

/// The state code of a broker recovering its logs.
const RECOVERY: i64 = 2;

impl BrokerState {
    /// Whether the broker is recovering its logs after an unclean shutdown.
    pub fn is_recovering(&self) -> bool {
        self.code == RECOVERY
    }

    /// Kafka's name of the state.
    pub fn name(&self) -> &'static str {
        match self.code {
            0 => "NOT_RUNNING",
            1 => "STARTING",
            RECOVERY => "RECOVERY",
            3 => "RUNNING",
            6 => "PENDING_CONTROLLED_SHUTDOWN",
            7 => "SHUTTING_DOWN",
            _ => "UNKNOWN",
        }
    }

    /// Reads the agent's JSON answer.
    fn from_json(body: &[u8]) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct Answer {
            #[serde(rename = "brokerState")]
            broker_state: i64,
            #[serde(rename = "recoveryState")]
            recovery_state: Option<RecoveryProgress>,
        }
        let answer: Answer = serde_json::from_slice(body).map_err(|error| error.to_string())?;
        Ok(Self {
            code: answer.broker_state,
            recovery: answer.recovery_state,
        })
    }
}

/// Asks the kafka-agent on `host` (a name or an IP address) for its broker's state over
/// mutual TLS with `tls`, checking the agent's certificate against `server_name` (the pod's
/// DNS name), within `timeout`. With [`HostResolution::IpAddressesOnly`] a host name is
/// refused without being looked up.
pub async fn broker_state(
    tls: &TlsConfig,
    host: &str,
    server_name: &str,
    host_resolution: HostResolution,
    timeout: Duration,
) -> Result<BrokerState, AgentError> {
    let server = Server {
        host: host.to_owned(),
        port: AGENT_PORT,
        tls: Some(ServerTls {
            config: tls.clone(),
            server_name: server_name.to_owned(),
        }),
        host_resolution,
    };
    let request = Request::new(Method::Get, BROKER_STATE_PATH).header("Accept", "application/json");
    let bounds = Exchange {
        timeout,
        max_bytes: MAX_ANSWER_BYTES,
    };
    let response = http_client::send(&server, &request, bounds).await?;
    if response.status != 200 {
        return Err(AgentError::Status {
            address: server.address(),
            status: response.status,
            body: response.text().trim().to_owned(),
        });
    }
    BrokerState::from_json(&response.body).map_err(|message| AgentError::Answer {
        address: server.address(),
        message,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_running_broker_has_no_recovery_progress() {
        let state = BrokerState::from_json(br#"{"brokerState":3}"#).unwrap();
        assert_eq!(state.name(), "RUNNING");
        assert!(!state.is_recovering());
        assert_eq!(state.recovery, None);
    }

    #[test]
    fn a_recovering_broker_reports_what_is_left() {
        let state = BrokerState::from_json(
            br#"{"recoveryState":{"remainingLogsToRecover":12,"remainingSegmentsToRecover":40},"brokerState":2}"#,
        )
        .unwrap();
        assert!(state.is_recovering());
        assert_eq!(
            state.recovery,
            Some(RecoveryProgress {
                remaining_logs: 12,
                remaining_segments: 40
            })
        );
        assert!(BrokerState::from_json(b"Broker state metric not found").is_err());
    }

    #[tokio::test]
    async fn a_host_name_is_not_looked_up_when_only_addresses_are_allowed() {
        let tls = TlsConfig {
            ca_pem: String::new(),
            client_identity_pem: None,
            verify_hostname: true,
        };
        let error = broker_state(
            &tls,
            "c-broker-3.c-kafka-brokers.ns.svc",
            "c-broker-3.c-kafka-brokers.ns.svc",
            HostResolution::IpAddressesOnly,
            Duration::from_secs(1),
        )
        .await
        .unwrap_err();
        assert_eq!(error.reason(), "KafkaAgentHostNameNotLookedUp");
        assert!(error.to_string().contains(":8443"), "{error}");
    }
}
