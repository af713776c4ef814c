//! The broker state Strimzi's kafka-agent reports from inside each Kafka pod: a JVM agent
//! in the Kafka image that serves `GET /v1/broker-state/` over HTTPS on port 8443 and
//! accepts only clients with a certificate of the cluster CA (the cluster operator's).
//!
//! The answer is Kafka's `BrokerState` metric as a number, with the logs and segments still
//! to recover while the broker is in log recovery, e.g.
//! `{"brokerState":2,"recoveryState":{"remainingLogsToRecover":12,"remainingSegmentsToRecover":40}}`.

use std::net::IpAddr;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::config::{HostResolution, TlsConfig};
use super::error::AdminError;
use super::tls;

/// The port the kafka-agent serves the broker state on.
pub const AGENT_PORT: u16 = 8443;
/// The path of the broker state.
const BROKER_STATE_PATH: &str = "/v1/broker-state/";
/// The most of an answer read: the broker state is a few dozen bytes.
const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// What went wrong asking a kafka-agent for its broker's state.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The TLS settings could not be used.
    #[error("TLS setup for the kafka-agent failed: {0}")]
    Setup(#[source] AdminError),
    /// The agent's host is a name while host names are not looked up.
    #[error("the kafka-agent at {address} was not asked: host names are not looked up here")]
    HostNameNotLookedUp {
        /// The agent's `host:port`.
        address: String,
    },
    /// Connecting, the TLS handshake, writing or reading failed.
    #[error("connection to the kafka-agent at {address} failed: {message}")]
    Connection {
        /// The agent's address.
        address: String,
        /// What failed.
        message: String,
    },
    /// No complete answer arrived in time.
    #[error("the kafka-agent at {address} did not answer within {after:?}")]
    Timeout {
        /// The agent's address.
        address: String,
        /// The bound that passed.
        after: Duration,
    },
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
    /// The answer was not HTTP or not the expected JSON.
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
            Self::Setup(_) => "KafkaAgentTlsSetupFailed",
            Self::HostNameNotLookedUp { .. } => "KafkaAgentHostNameNotLookedUp",
            Self::Connection { .. } => "KafkaAgentUnreachable",
            Self::Timeout { .. } => "KafkaAgentTimeout",
            Self::Status { .. } => "KafkaAgentStatus",
            Self::Answer { .. } => "KafkaAgentAnswerUnreadable",
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
    let address = format!("{host}:{AGENT_PORT}");
    if host_resolution == HostResolution::IpAddressesOnly && host.parse::<IpAddr>().is_err() {
        return Err(AgentError::HostNameNotLookedUp { address });
    }
    let connector = tls::connector(tls).map_err(AgentError::Setup)?;
    let name = tls::server_name(server_name).map_err(AgentError::Setup)?;
    let failed = |error: std::io::Error| AgentError::Connection {
        address: address.clone(),
        message: error.to_string(),
    };
    let exchange = async {
        let tcp = TcpStream::connect(&address).await.map_err(failed)?;
        let mut stream = connector.connect(name, tcp).await.map_err(failed)?;
        let request = format!(
            "GET {BROKER_STATE_PATH} HTTP/1.1\r\nHost: {server_name}:{AGENT_PORT}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.map_err(failed)?;
        let mut answer = Vec::new();
        stream
            .take(MAX_ANSWER_BYTES)
            .read_to_end(&mut answer)
            .await
            .map_err(failed)?;
        Ok(answer)
    };
    let answer = tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| AgentError::Timeout {
            address: address.clone(),
            after: timeout,
        })??;
    let unreadable = |message: String| AgentError::Answer {
        address: address.clone(),
        message,
    };
    let (status, body) = http_response(&answer).map_err(unreadable)?;
    if status != 200 {
        return Err(AgentError::Status {
            address,
            status,
            body: String::from_utf8_lossy(&body).trim().to_owned(),
        });
    }
    BrokerState::from_json(&body).map_err(unreadable)
}

/// The status code and body of an HTTP/1.1 response read to its end (the request asked the
/// server to close the connection), with a chunked body put together.
fn http_response(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let split = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or("no end of the HTTP headers")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let body = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| format!("not an HTTP status line: {status_line:?}"))?;
    let chunked = lines.any(|line| {
        line.split_once(':').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("transfer-encoding")
                && value.trim().eq_ignore_ascii_case("chunked")
        })
    });
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Ok((status, body))
}

/// The content of a chunked HTTP body.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut content = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|window| window == b"\r\n")
            .ok_or("a chunk without its size line")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|error| format!("chunk size {size_text:?}: {error}"))?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(content);
        }
        let chunk = body.get(..size).ok_or("a chunk shorter than its size")?;
        content.extend_from_slice(chunk);
        body = body.get(size + 2..).unwrap_or_default();
    }
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

    #[test]
    fn responses_are_read_with_a_plain_or_a_chunked_body() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"brokerState\":3}";
        assert_eq!(
            http_response(plain).unwrap(),
            (200, br#"{"brokerState":3}"#.to_vec())
        );
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n7\r\n{\"broke\r\na;ext=1\r\nrState\":3}\r\n0\r\n\r\n";
        assert_eq!(
            http_response(chunked).unwrap(),
            (200, br#"{"brokerState":3}"#.to_vec())
        );
        let missing =
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 29\r\n\r\nBroker state metric not found";
        assert_eq!(http_response(missing).unwrap().0, 404);
        assert!(http_response(b"SSH-2.0-OpenSSH\r\n").is_err());
        assert!(
            http_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").is_err()
        );
    }
}
