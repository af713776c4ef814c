//! How the admin client reaches Kafka: the protocol, TLS material, SASL credentials (and
//! OAUTHBEARER's token source), timeouts and host resolution. [`super::env`] reads them from
//! the environment variables Strimzi's operators use.

use std::time::Duration;

use crate::redact::Redacted;

/// The Kafka `security.protocol` of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecurityProtocol {
    /// No TLS, no authentication.
    Plaintext,
    /// TLS, optionally with a client certificate.
    Ssl,
    /// SASL authentication without TLS.
    SaslPlaintext,
    /// SASL authentication over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// What [`Self::from_name`] accepts, for error messages.
    pub const EXPECTED: &'static str = "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL";

    /// The protocol of Kafka's name for it (any case), `None` for another name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Some(Self::Plaintext),
            "SSL" => Some(Self::Ssl),
            "SASL_PLAINTEXT" => Some(Self::SaslPlaintext),
            "SASL_SSL" => Some(Self::SaslSsl),
            _ => None,
        }
    }

    /// Whether connections use TLS.
    pub fn uses_tls(self) -> bool {
        matches!(self, Self::Ssl | Self::SaslSsl)
    }

    /// Whether connections authenticate with SASL.
    pub fn uses_sasl(self) -> bool {
        matches!(self, Self::SaslPlaintext | Self::SaslSsl)
    }
}

/// A SASL mechanism that authenticates with a user name and password.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaslMechanism {
    /// `PLAIN`: user name and password in clear (use with TLS).
    Plain,
    /// `SCRAM-SHA-256`: salted challenge-response with SHA-256.
    ScramSha256,
    /// `SCRAM-SHA-512`: salted challenge-response with SHA-512.
    ScramSha512,
}

impl SaslMechanism {
    /// The mechanism of Kafka's name for it (any case), `None` for one the client lacks.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_uppercase().as_str() {
            "SCRAM-SHA-512" => Some(Self::ScramSha512),
            "SCRAM-SHA-256" => Some(Self::ScramSha256),
            "PLAIN" => Some(Self::Plain),
            _ => None,
        }
    }

    /// Kafka's name of the mechanism.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "PLAIN",
            Self::ScramSha256 => "SCRAM-SHA-256",
            Self::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

/// How connections authenticate with SASL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaslConfig {
    /// `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512` with a user name and password.
    Password(SaslCredentials),
    /// `OAUTHBEARER` with a token from Strimzi OAuth's client options.
    OAuthBearer(OAuthBearerConfig),
}

/// A SASL user name and password.
#[derive(Clone, PartialEq, Eq)]
pub struct SaslCredentials {
    /// The mechanism.
    pub mechanism: SaslMechanism,
    /// The user name.
    pub username: String,
    /// The password.
    pub password: String,
}

impl std::fmt::Debug for SaslCredentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SaslCredentials")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .field("password", &Redacted)
            .finish()
    }
}

/// TLS material, PEM.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TlsConfig {
    /// CA certificates that sign the brokers' certificates; the system roots are not used.
    pub ca_pem: String,
    /// Client certificate chain and private key, for mutual TLS.
    pub client_identity_pem: Option<String>,
    /// Whether the broker's certificate must name the host connected to.
    pub verify_hostname: bool,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TlsConfig")
            .field(
                "ca_certificates",
                &self.ca_pem.matches("-----BEGIN CERTIFICATE-----").count(),
            )
            .field(
                "client_identity_pem",
                &self.client_identity_pem.as_ref().map(|_| Redacted),
            )
            .field("verify_hostname", &self.verify_hostname)
            .finish()
    }
}

/// Everything the admin client needs to reach Kafka.
#[derive(Clone, Debug)]
pub struct AdminConfig {
    /// `host:port` addresses to bootstrap from.
    pub bootstrap_servers: Vec<String>,
    /// The security protocol of every connection.
    pub security_protocol: SecurityProtocol,
    /// TLS material, required for `SSL` and `SASL_SSL`.
    pub tls: Option<TlsConfig>,
    /// SASL credentials, required for `SASL_PLAINTEXT` and `SASL_SSL`.
    pub sasl: Option<SaslConfig>,
    /// The client id sent with every request.
    pub client_id: String,
    /// Bound on connecting plus one request and its response.
    pub request_timeout: Duration,
    /// Bound on a whole operation, including retries.
    pub operation_timeout: Duration,
    /// How the host names of broker addresses are looked up.
    pub host_resolution: HostResolution,
    /// Settings given but not used, as Strimzi's client would not use them either (a PKCS#12
    /// or JKS key store without its password, SASL settings without a SASL protocol): one
    /// line each, for the operator to log as warnings once its logging is set up (the
    /// settings are read before, since they choose its level and format).
    pub unused_settings: Vec<String>,
}

/// How the client turns the host names of broker addresses into IP addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostResolution {
    /// The system resolver, as `/etc/resolv.conf` and `/etc/hosts` say.
    #[default]
    System,
    /// Names are never looked up: connecting to a host name fails at once, and only IP
    /// addresses are reached. For a process outside the cluster's network, whose resolver
    /// does not know the cluster's names and must not be asked about them.
    IpAddressesOnly,
}

/// Default bound on one request.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default bound on one operation with its retries.
pub const DEFAULT_OPERATION_TIMEOUT: Duration = Duration::from_secs(60);

impl AdminConfig {
    /// A PLAINTEXT configuration for `bootstrap` (`host:port[,host:port...]`).
    pub fn plaintext(bootstrap: &str) -> Self {
        Self {
            bootstrap_servers: split_list(bootstrap),
            security_protocol: SecurityProtocol::Plaintext,
            tls: None,
            sasl: None,
            client_id: "strimzi-admin".to_owned(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            operation_timeout: DEFAULT_OPERATION_TIMEOUT,
            host_resolution: HostResolution::System,
            unused_settings: Vec::new(),
        }
    }
}

pub(super) fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Where OAUTHBEARER tokens come from.
#[derive(Clone, PartialEq, Eq)]
pub enum OAuthBearerConfig {
    /// `oauth.access.token`: one token, used as it is and never renewed.
    StaticToken(String),
    /// The client-credentials grant against a token endpoint.
    ClientCredentials(Box<ClientCredentialsGrant>),
}

impl std::fmt::Debug for OAuthBearerConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::StaticToken(_) => formatter
                .debug_tuple("StaticToken")
                .field(&Redacted)
                .finish(),
            Self::ClientCredentials(grant) => formatter
                .debug_tuple("ClientCredentials")
                .field(grant)
                .finish(),
        }
    }
}

/// The OAuth 2.0 client-credentials grant (RFC 6749, section 4.4), as Strimzi OAuth's client
/// asks for it: a form `POST` with `grant_type=client_credentials` (and `scope`, `audience`
/// when set), the client's id and secret in a Basic `Authorization` header.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentialsGrant {
    /// The token endpoint.
    pub endpoint: TokenEndpoint,
    /// `oauth.client.id`.
    pub client_id: String,
    /// `oauth.client.secret`.
    pub client_secret: String,
    /// `oauth.scope`, sent as `scope`.
    pub scope: Option<String>,
    /// `oauth.audience`, sent as `audience`.
    pub audience: Option<String>,
    /// Bound on one exchange with the endpoint (`oauth.connect.timeout.seconds` plus
    /// `oauth.read.timeout.seconds`).
    pub timeout: Duration,
    /// `oauth.max.token.expiry.seconds`: a token is used at most this long, whatever its own
    /// lifetime.
    pub max_token_lifetime: Option<Duration>,
    /// Whether the token's lifetime may be read from its `exp` claim when the endpoint gives no
    /// `expires_in` (`oauth.access.token.is.jwt`, default `true`).
    pub token_is_jwt: bool,
}

impl std::fmt::Debug for ClientCredentialsGrant {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ClientCredentialsGrant")
            .field("endpoint", &self.endpoint.uri)
            .field("client_id", &self.client_id)
            .field("client_secret", &Redacted)
            .field("scope", &self.scope)
            .field("audience", &self.audience)
            .field("timeout", &self.timeout)
            .field("max_token_lifetime", &self.max_token_lifetime)
            .field("token_is_jwt", &self.token_is_jwt)
            .finish()
    }
}

/// A token endpoint's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenEndpoint {
    /// The URI as configured (`oauth.token.endpoint.uri`).
    pub uri: String,
    /// Host name or IP address.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Path of the request.
    pub path: String,
    /// For an `https` URI: the CA certificates (`oauth.ssl.truststore.*`) and whether the
    /// host name is checked (`oauth.ssl.endpoint.identification.algorithm`).
    pub tls: Option<TlsConfig>,
}

impl TokenEndpoint {
    /// Reads an `http` or `https` URI without query or fragment; `None` for anything else.
    /// `tls` is the trust for an `https` URI.
    pub fn parse(uri: &str, tls: Option<TlsConfig>) -> Option<Self> {
        let (rest, default_port, tls) = if let Some(rest) = uri.strip_prefix("https://") {
            (rest, 443, Some(tls?))
        } else {
            (uri.strip_prefix("http://")?, 80, None)
        };
        if rest.contains(['?', '#']) {
            return None;
        }
        let (authority, path) = rest.find('/').map_or((rest, "/"), |at| rest.split_at(at));
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (host, after) = bracketed.split_once(']')?;
            match after.strip_prefix(':') {
                Some(port) => (host, port.parse().ok()?),
                None if after.is_empty() => (host, default_port),
                None => return None,
            }
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, port.parse().ok()?),
                None => (authority, default_port),
            }
        };
        if host.is_empty() || host.contains('@') {
            return None;
        }
        Some(Self {
            uri: uri.to_owned(),
            host: host.to_owned(),
            port,
            path: path.to_owned(),
            tls,
        })
    }
}
