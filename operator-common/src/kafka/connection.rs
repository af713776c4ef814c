//! One connection to one broker: length-prefixed frames, correlation ids, many requests in
//! flight, ApiVersions negotiation and SASL authentication.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, RequestHeader, ResponseHeader, SaslAuthenticateRequest,
    SaslHandshakeRequest,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;

use super::config::{HostResolution, SaslConfig, SaslCredentials, SaslMechanism};
use super::error::AdminError;
use super::oauth::{self, OAuthTokens};
use super::scram::{ScramClient, ScramHash, plain_message};
use super::tls;

/// Largest response frame accepted.
const MAX_FRAME: usize = 256 * 1024 * 1024;

trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

type Reply = oneshot::Sender<Result<Bytes, AdminError>>;

/// Requests waiting for their response, or why the connection is gone.
struct InFlight {
    address: String,
    waiting: HashMap<i32, Reply>,
    closed: Option<String>,
}

/// How connections authenticate, with what the connections of one client share.
#[derive(Clone, Debug)]
pub(crate) enum SaslLogin {
    /// A user name and password.
    Password(SaslCredentials),
    /// OAUTHBEARER tokens, held for all connections.
    OAuthBearer(Arc<OAuthTokens>),
}

impl SaslLogin {
    /// The login for `config`, reaching a token endpoint as `host_resolution` allows.
    pub(crate) fn new(config: &SaslConfig, host_resolution: HostResolution) -> Self {
        match config {
            SaslConfig::Password(credentials) => Self::Password(credentials.clone()),
            SaslConfig::OAuthBearer(oauth) => {
                Self::OAuthBearer(Arc::new(OAuthTokens::new(oauth.clone(), host_resolution)))
            }
        }
    }

    fn mechanism_name(&self) -> &'static str {
        match self {
            Self::Password(credentials) => credentials.mechanism.name(),
            Self::OAuthBearer(_) => "OAUTHBEARER",
        }
    }
}

/// How to open connections.
#[derive(Clone)]
pub(crate) struct Connector {
    pub(crate) tls: Option<TlsConnector>,
    pub(crate) sasl: Option<SaslLogin>,
    pub(crate) client_id: String,
    pub(crate) timeout: Duration,
    pub(crate) host_resolution: HostResolution,
}

/// An open, authenticated connection to one broker.
pub(crate) struct Connection {
    address: String,
    client_id: StrBytes,
    timeout: Duration,
    writer: tokio::sync::Mutex<WriteHalf<Box<dyn Stream>>>,
    in_flight: Arc<Mutex<InFlight>>,
    next_correlation_id: AtomicI32,
    /// Versions the broker supports, by API key (empty until ApiVersions answered).
    versions: std::sync::OnceLock<HashMap<i16, (i16, i16)>>,
    reader: JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Connection")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl Connector {
    /// Connects to `address`, negotiates versions and authenticates, within the timeout.
    pub(crate) async fn connect(&self, address: &str) -> Result<Arc<Connection>, AdminError> {
        tokio::time::timeout(self.timeout, self.connect_unbounded(address))
            .await
            .map_err(|_| AdminError::Timeout {
                operation: format!("connecting to {address}"),
                after: self.timeout,
            })?
    }

    async fn connect_unbounded(&self, address: &str) -> Result<Arc<Connection>, AdminError> {
        let (tcp, host) = self.tcp(address).await?;
        let stream: Box<dyn Stream> = match &self.tls {
            None => Box::new(tcp),
            Some(connector) => Box::new(handshake(connector, address, host, tcp).await?),
        };
        let (reader, writer) = tokio::io::split(stream);
        let in_flight = Arc::new(Mutex::new(InFlight {
            address: address.to_owned(),
            waiting: HashMap::new(),
            closed: None,
        }));
        let connection = Arc::new(Connection {
            address: address.to_owned(),
            client_id: StrBytes::from_string(self.client_id.clone()),
            timeout: self.timeout,
            writer: tokio::sync::Mutex::new(writer),
            in_flight: in_flight.clone(),
            next_correlation_id: AtomicI32::new(0),
            versions: std::sync::OnceLock::new(),
            reader: tokio::spawn(read_responses(reader, in_flight)),
        });
        connection.negotiate_versions().await?;
        if let Some(sasl) = &self.sasl {
            connection.authenticate(sasl).await?;
        }
        Ok(connection)
    }
}

impl Connector {
    /// A TCP connection to `address` (`host:port`), and its host.
    async fn tcp<'a>(&self, address: &'a str) -> Result<(TcpStream, &'a str), AdminError> {
        let failed = |error: std::io::Error| AdminError::Connection {
            address: address.to_owned(),
            message: error.to_string(),
        };
        let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if self.host_resolution == HostResolution::IpAddressesOnly
            && host.parse::<std::net::IpAddr>().is_err()
        {
            return Err(AdminError::HostNameNotLookedUp {
                address: address.to_owned(),
            });
        }
        let tcp = TcpStream::connect(address).await.map_err(failed)?;
        tcp.set_nodelay(true).map_err(failed)?;
        Ok((tcp, host))
    }

    /// Whether the listener at `address` accepts the client certificate `inspecting` (a
    /// connector that accepts any server certificate) presents: it must answer an ApiVersions
    /// request on the connection, within the timeout. A refused certificate fails the
    /// handshake (TLS 1.2) or closes the connection before the answer (TLS 1.3).
    pub(crate) async fn client_certificate_accepted(
        &self,
        inspecting: &TlsConnector,
        address: &str,
    ) -> Result<(), AdminError> {
        let presenting = Self {
            tls: Some(inspecting.clone()),
            sasl: None,
            ..self.clone()
        };
        presenting.connect(address).await.map(drop)
    }

    /// The DER of the certificate the listener at `address` presents first in a TLS
    /// handshake (its own) through `inspecting`, a connector that accepts any certificate,
    /// within the timeout; no Kafka request is sent.
    pub(crate) async fn served_certificate(
        &self,
        inspecting: &TlsConnector,
        address: &str,
    ) -> Result<Vec<u8>, AdminError> {
        let handshake = async {
            let (tcp, host) = self.tcp(address).await?;
            let tls = handshake(inspecting, address, host, tcp).await?;
            tls.get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .map(|certificate| certificate.as_ref().to_vec())
                .ok_or_else(|| AdminError::Tls(format!("{address} presented no certificate")))
        };
        tokio::time::timeout(self.timeout, handshake)
            .await
            .map_err(|_| AdminError::Timeout {
                operation: format!("a TLS handshake with {address}"),
                after: self.timeout,
            })?
    }
}

/// The TLS handshake with `host` over `tcp`, a connection to `address`.
async fn handshake(
    connector: &TlsConnector,
    address: &str,
    host: &str,
    tcp: TcpStream,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, AdminError> {
    connector
        .connect(tls::server_name(host)?, tcp)
        .await
        .map_err(|error| AdminError::Tls(format!("handshake with {address}: {error}")))
}

impl Connection {
    /// `host:port` of the broker.
    pub(crate) fn address(&self) -> &str {
        &self.address
    }

    /// Whether the connection can no longer be used.
    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.in_flight).closed.is_some()
    }

    /// Sends `request` in the highest version both sides support and waits for the response.
    pub(crate) async fn send<R: Request>(&self, request: &R) -> Result<R::Response, AdminError> {
        let version = self.version_of::<R>()?;
        self.send_version(request, version).await
    }

    fn version_of<R: Request>(&self) -> Result<i16, AdminError> {
        let unsupported = || AdminError::UnsupportedVersion {
            api: api_name(R::KEY),
        };
        let versions = self.versions.get().ok_or_else(unsupported)?;
        let (min, max) = versions.get(&R::KEY).ok_or_else(unsupported)?;
        let version = (*max).min(R::VERSIONS.max);
        if version < (*min).max(R::VERSIONS.min) {
            return Err(unsupported());
        }
        Ok(version)
    }

    async fn send_version<R: Request>(
        &self,
        request: &R,
        version: i16,
    ) -> Result<R::Response, AdminError> {
        let correlation_id = self.next_correlation_id.fetch_add(1, Ordering::Relaxed);
        let frame = self.encode(request, version, correlation_id)?;
        let (reply, response) = oneshot::channel();
        {
            let mut in_flight = lock(&self.in_flight);
            if let Some(reason) = &in_flight.closed {
                return Err(self.closed_error(reason));
            }
            in_flight.waiting.insert(correlation_id, reply);
        }
        let operation = || format!("{} request to {}", api_name(R::KEY), self.address);
        let exchange = async {
            {
                let mut writer = self.writer.lock().await;
                if let Err(error) = writer.write_all(&frame).await {
                    self.close(&error.to_string());
                }
            }
            response
                .await
                .map_err(|_| self.closed_error("response channel dropped"))?
        };
        let mut bytes = match tokio::time::timeout(self.timeout, exchange).await {
            Ok(result) => result?,
            Err(_) => {
                lock(&self.in_flight).waiting.remove(&correlation_id);
                return Err(AdminError::Timeout {
                    operation: operation(),
                    after: self.timeout,
                });
            }
        };
        let decode_error =
            |error| AdminError::Protocol(format!("decoding {}: {error}", operation()));
        ResponseHeader::decode(&mut bytes, R::Response::header_version(version))
            .map_err(decode_error)?;
        R::Response::decode(&mut bytes, version).map_err(decode_error)
    }

    fn encode<R: Request>(
        &self,
        request: &R,
        version: i16,
        correlation_id: i32,
    ) -> Result<Bytes, AdminError> {
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY)
            .with_request_api_version(version)
            .with_correlation_id(correlation_id)
            .with_client_id(Some(self.client_id.clone()));
        let mut frame = BytesMut::new();
        frame.put_i32(0);
        let encoded = header
            .encode(&mut frame, R::header_version(version))
            .and_then(|()| request.encode(&mut frame, version));
        encoded.map_err(|error| {
            AdminError::Protocol(format!("encoding {}: {error}", api_name(R::KEY)))
        })?;
        let length = i32::try_from(frame.len() - 4)
            .map_err(|_| AdminError::Protocol("request too large".to_owned()))?;
        frame[..4].copy_from_slice(&length.to_be_bytes());
        Ok(frame.freeze())
    }

    fn close(&self, reason: &str) {
        close(&self.in_flight, reason);
    }

    fn closed_error(&self, reason: &str) -> AdminError {
        AdminError::Connection {
            address: self.address.clone(),
            message: reason.to_owned(),
        }
    }

    async fn negotiate_versions(&self) -> Result<(), AdminError> {
        let request = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("strimzi-rs-admin"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        let response = self.send_version(&request, 3).await?;
        AdminError::check(response.error_code, None)?;
        let versions = response
            .api_keys
            .iter()
            .map(|api| (api.api_key, (api.min_version, api.max_version)))
            .collect();
        let _ = self.versions.set(versions);
        Ok(())
    }

    async fn authenticate(&self, sasl: &SaslLogin) -> Result<(), AdminError> {
        let mechanism = sasl.mechanism_name();
        let handshake =
            SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism));
        let response = self.send_version(&handshake, 1).await?;
        if response.error_code != 0 {
            let enabled: Vec<&str> = response.mechanisms.iter().map(|m| m.as_str()).collect();
            return Err(AdminError::Authentication(format!(
                "the broker does not enable {mechanism} (enabled: {})",
                enabled.join(", ")
            )));
        }
        match sasl {
            SaslLogin::Password(credentials) => {
                let hash = match credentials.mechanism {
                    SaslMechanism::Plain => {
                        self.sasl_round(plain_message(
                            &credentials.username,
                            &credentials.password,
                        ))
                        .await?;
                        return Ok(());
                    }
                    SaslMechanism::ScramSha256 => ScramHash::Sha256,
                    SaslMechanism::ScramSha512 => ScramHash::Sha512,
                };
                let mut scram =
                    ScramClient::new(hash, &credentials.username, &credentials.password);
                let server_first = self.sasl_round(scram.client_first()).await?;
                let server_final = self.sasl_round(scram.client_final(&server_first)?).await?;
                scram.verify_server_final(&server_final)?;
            }
            SaslLogin::OAuthBearer(tokens) => {
                let token = tokens.token().await?;
                let challenge = self.sasl_round(oauth::client_first_message(&token)).await?;
                if !challenge.is_empty() {
                    // The broker refused the token and said why; the exchange ends with our
                    // acknowledgement, which the broker answers with a failure.
                    let reason = String::from_utf8_lossy(&challenge).into_owned();
                    let ended = self.sasl_round(oauth::ERROR_ACKNOWLEDGEMENT.to_vec()).await;
                    let broker_message = ended.err().map(|error| format!(" ({error})"));
                    return Err(AdminError::Authentication(format!(
                        "the broker refused the OAuth token: {reason}{}",
                        broker_message.unwrap_or_default()
                    )));
                }
            }
        }
        Ok(())
    }

    async fn sasl_round(&self, message: Vec<u8>) -> Result<Bytes, AdminError> {
        let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(message));
        let response = self.send(&request).await?;
        if response.error_code != 0 {
            let message = response
                .error_message
                .as_ref()
                .map_or("authentication failed", |m| m.as_str());
            return Err(AdminError::Authentication(message.to_owned()));
        }
        Ok(response.auth_bytes)
    }
}

async fn read_responses(mut reader: ReadHalf<Box<dyn Stream>>, in_flight: Arc<Mutex<InFlight>>) {
    let reason = loop {
        let length = match reader.read_i32().await {
            Ok(length) => length,
            Err(error) => break format!("connection closed: {error}"),
        };
        let Ok(length) = usize::try_from(length) else {
            break format!("negative frame length {length}");
        };
        if !(4..=MAX_FRAME).contains(&length) {
            break format!("frame length {length} out of bounds");
        }
        let mut frame = BytesMut::zeroed(length);
        if let Err(error) = reader.read_exact(&mut frame).await {
            break format!("connection closed: {error}");
        }
        let frame = frame.freeze();
        let correlation_id = frame.clone().get_i32();
        if let Some(reply) = lock(&in_flight).waiting.remove(&correlation_id) {
            let _ = reply.send(Ok(frame));
        }
    };
    close(&in_flight, &reason);
}

fn close(in_flight: &Mutex<InFlight>, reason: &str) {
    let mut in_flight = lock(in_flight);
    in_flight.closed.get_or_insert_with(|| reason.to_owned());
    let address = in_flight.address.clone();
    for (_, reply) in in_flight.waiting.drain() {
        let _ = reply.send(Err(AdminError::Connection {
            address: address.clone(),
            message: reason.to_owned(),
        }));
    }
}

fn lock(in_flight: &Mutex<InFlight>) -> std::sync::MutexGuard<'_, InFlight> {
    in_flight.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Kafka's name of the API with `key`.
pub(crate) fn api_name(key: i16) -> String {
    ApiKey::try_from(key).map_or_else(|()| format!("API {key}"), |api| format!("{api:?}"))
}
