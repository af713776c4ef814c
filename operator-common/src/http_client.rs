//! The operators' HTTP/1.1 client for services inside the cluster: Strimzi's kafka-agent in
//! each Kafka pod ([`crate::kafka::agent`]) and Cruise Control's REST API
//! ([`crate::cruise_control`]).
//!
//! One request per connection (`Connection: close`), `GET` or `POST` without a body, with
//! URL-encoded query parameters and extra headers; over TLS checked against a PEM CA bundle
//! and a server name (mutual TLS when the [`TlsConfig`] carries a client identity), or plain.
//! The response is read by its `Content-Length`, its chunks, or to the end of the connection,
//! at most [`Exchange::max_bytes`] of it, and the whole exchange is bounded by
//! [`Exchange::timeout`]. The host is an IP address or a name; with
//! [`HostResolution::IpAddressesOnly`] a name is refused without being looked up, for an
//! operator outside the cluster's network.

use std::net::{IpAddr, Ipv6Addr};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::kafka::{HostResolution, TlsConfig};

/// How much is read from the connection at a time.
const READ_CHUNK: usize = 64 * 1024;

/// What went wrong in an HTTP exchange.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The TLS settings could not be used (no certificate in the CA bundle, an invalid server
    /// name, ...).
    #[error("TLS setup for {address} failed: {message}")]
    Tls {
        /// The server's `host:port`.
        address: String,
        /// What is wrong.
        message: String,
    },
    /// The host is a name while host names are not looked up.
    #[error("{address} was not asked: host names are not looked up here")]
    HostNameNotLookedUp {
        /// The server's `host:port`.
        address: String,
    },
    /// Connecting, the TLS handshake, writing or reading failed.
    #[error("connection to {address} failed: {message}")]
    Connection {
        /// The server's `host:port`.
        address: String,
        /// What failed.
        message: String,
    },
    /// No complete answer arrived in time.
    #[error("{address} did not answer within {after:?}")]
    Timeout {
        /// The server's `host:port`.
        address: String,
        /// The bound that passed.
        after: Duration,
    },
    /// The answer was not HTTP, was cut short, or was larger than allowed.
    #[error("{address} sent an unreadable answer: {message}")]
    Unreadable {
        /// The server's `host:port`.
        address: String,
        /// What could not be read.
        message: String,
    },
}

impl crate::ErrorReason for HttpError {
    fn reason(&self) -> &'static str {
        match self {
            Self::Tls { .. } => "HttpTlsSetupFailed",
            Self::HostNameNotLookedUp { .. } => "HostNameNotLookedUp",
            Self::Connection { .. } => "HttpConnectionFailed",
            Self::Timeout { .. } => "HttpTimeout",
            Self::Unreadable { .. } => "HttpAnswerUnreadable",
        }
    }
}

/// The server to talk to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// IP address or host name to connect to.
    pub host: String,
    /// Port to connect to.
    pub port: u16,
    /// TLS settings; `None` for plain HTTP.
    pub tls: Option<ServerTls>,
    /// How a host name is looked up.
    pub host_resolution: HostResolution,
}

/// How the server's certificate is checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerTls {
    /// The CA bundle (and the client identity for mutual TLS).
    pub config: TlsConfig,
    /// The name the server's certificate must carry (also sent as SNI and `Host`), e.g. a
    /// Service's DNS name when `host` is the address of one of its pods.
    pub server_name: String,
}

impl Server {
    /// `host:port`, with an IPv6 address in brackets.
    pub fn address(&self) -> String {
        match self.host.parse::<Ipv6Addr>() {
            Ok(_) => format!("[{}]:{}", self.host, self.port),
            Err(_) => format!("{}:{}", self.host, self.port),
        }
    }

    /// The `Host` header: the name the certificate is checked against, else the host.
    fn host_header(&self) -> String {
        let name = self
            .tls
            .as_ref()
            .map_or(self.host.as_str(), |tls| tls.server_name.as_str());
        match name.parse::<Ipv6Addr>() {
            Ok(_) => format!("[{name}]:{}", self.port),
            Err(_) => format!("{name}:{}", self.port),
        }
    }
}

/// An HTTP method the client sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
}

impl Method {
    /// The method's name in a request line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }
}

/// One request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The method.
    pub method: Method,
    /// The path, starting with `/`, without the query.
    pub path: String,
    /// Query parameters, URL-encoded when sent, in this order.
    pub query: Vec<(String, String)>,
    /// Extra headers (besides `Host`, `Connection` and `Content-Length`).
    pub headers: Vec<(String, String)>,
    /// The body, if any, sent with its `Content-Length`.
    pub body: Option<Vec<u8>>,
}

impl Request {
    /// A request of `method` for `path` without parameters or headers.
    pub fn new(method: Method, path: &str) -> Self {
        Self {
            method,
            path: path.to_owned(),
            query: Vec::new(),
            headers: Vec::new(),
            body: None,
        }
    }

    /// Adds a JSON body (and its `Content-Type`).
    pub fn json(mut self, body: &serde_json::Value) -> Self {
        self.headers
            .push(("Content-Type".to_owned(), "application/json".to_owned()));
        self.body = Some(body.to_string().into_bytes());
        self
    }

    /// Adds a query parameter.
    pub fn param(mut self, name: &str, value: impl Into<String>) -> Self {
        self.query.push((name.to_owned(), value.into()));
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// The path with the URL-encoded query, as sent in the request line.
    pub fn target(&self) -> String {
        if self.query.is_empty() {
            return self.path.clone();
        }
        let query: Vec<String> = self
            .query
            .iter()
            .map(|(name, value)| format!("{}={}", url_encode(name), url_encode(value)))
            .collect();
        format!("{}?{}", self.path, query.join("&"))
    }

    /// The request as sent to `server`: request line and headers.
    fn head(&self, server: &Server) -> String {
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.method.as_str(),
            self.target(),
            server.host_header()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        match &self.body {
            Some(body) => head.push_str(&format!("Content-Length: {}\r\n", body.len())),
            None if matches!(self.method, Method::Post | Method::Put | Method::Patch) => {
                head.push_str("Content-Length: 0\r\n");
            }
            None => {}
        }
        head.push_str("\r\n");
        head
    }
}

/// A response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers as received, in order.
    pub headers: Vec<(String, String)>,
    /// The body, chunks put together.
    pub body: Vec<u8>,
}

impl Response {
    /// The value of the first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body as text, invalid UTF-8 replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// The bounds of one exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// Bound on connecting, sending and reading the whole answer.
    pub timeout: Duration,
    /// Most bytes of answer (head and body) read; a larger one is unreadable.
    pub max_bytes: usize,
}

/// Sends `request` to `server` and reads its response, within `bounds`.
pub async fn send(
    server: &Server,
    request: &Request,
    bounds: Exchange,
) -> Result<Response, HttpError> {
    let address = server.address();
    if server.host_resolution == HostResolution::IpAddressesOnly
        && server.host.parse::<IpAddr>().is_err()
    {
        return Err(HttpError::HostNameNotLookedUp { address });
    }
    let tls = match &server.tls {
        Some(tls) => {
            let setup = |error: crate::kafka::AdminError| HttpError::Tls {
                address: address.clone(),
                message: error.to_string(),
            };
            let connector = crate::kafka::tls::connector(&tls.config).map_err(setup)?;
            let name = crate::kafka::tls::server_name(&tls.server_name).map_err(setup)?;
            Some((connector, name))
        }
        None => None,
    };
    let failed = |error: std::io::Error| HttpError::Connection {
        address: address.clone(),
        message: error.to_string(),
    };
    let mut head = request.head(server).into_bytes();
    head.extend_from_slice(request.body.as_deref().unwrap_or_default());
    let exchange = async {
        let tcp = TcpStream::connect(&address).await.map_err(failed)?;
        match tls {
            Some((connector, name)) => {
                let stream = connector.connect(name, tcp).await.map_err(failed)?;
                talk(stream, &head, bounds.max_bytes, &address).await
            }
            None => talk(tcp, &head, bounds.max_bytes, &address).await,
        }
    };
    tokio::time::timeout(bounds.timeout, exchange)
        .await
        .map_err(|_| HttpError::Timeout {
            address: address.clone(),
            after: bounds.timeout,
        })?
}

/// Writes `head` and reads the response from `stream`.
async fn talk<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    head: &[u8],
    max_bytes: usize,
    address: &str,
) -> Result<Response, HttpError> {
    let failed = |error: std::io::Error| HttpError::Connection {
        address: address.to_owned(),
        message: error.to_string(),
    };
    let unreadable = |message: String| HttpError::Unreadable {
        address: address.to_owned(),
        message,
    };
    stream.write_all(head).await.map_err(failed)?;
    stream.flush().await.map_err(failed)?;
    let mut raw = Vec::new();
    let mut chunk = vec![0; READ_CHUNK];
    loop {
        let read = match stream.read(&mut chunk).await {
            Ok(read) => read,
            // A TLS server that closes without `close_notify`: the end of the answer, which
            // the framing check below tells from a cut-short one.
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => 0,
            Err(error) => return Err(failed(error)),
        };
        raw.extend_from_slice(&chunk[..read]);
        if raw.len() > max_bytes {
            return Err(unreadable(format!("more than {max_bytes} bytes")));
        }
        if let Some(response) = complete_response(&raw, read == 0).map_err(unreadable)? {
            return Ok(response);
        }
    }
}

/// The response in `raw` if it is complete: by its `Content-Length`, its last chunk, or
/// (without either) the end of the connection (`at_end`). `None` while more is to come; an
/// error for something that is not HTTP, or a response cut short by the end of the connection.
fn complete_response(raw: &[u8], at_end: bool) -> Result<Option<Response>, String> {
    let Some(split) = raw.windows(4).position(|window| window == b"\r\n\r\n") else {
        return if at_end {
            Err("the connection closed before the end of the headers".to_owned())
        } else {
            Ok(None)
        };
    };
    let (status, headers) = parse_head(&String::from_utf8_lossy(&raw[..split]))?;
    let body = &raw[split + 4..];
    let response = |body: Vec<u8>| {
        Some(Response {
            status,
            headers: headers.clone(),
            body,
        })
    };
    let header = |name: &str| {
        headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.trim())
    };
    if header("transfer-encoding").is_some_and(|value| value.eq_ignore_ascii_case("chunked")) {
        return match dechunk(body) {
            Ok(content) => Ok(response(content)),
            Err(_) if !at_end => Ok(None),
            Err(error) => Err(error),
        };
    }
    if let Some(length) = header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| format!("invalid Content-Length {length:?}"))?;
        return match body.get(..length) {
            Some(content) => Ok(response(content.to_vec())),
            None if !at_end => Ok(None),
            None => Err(format!(
                "the connection closed after {} of {length} body bytes",
                body.len()
            )),
        };
    }
    Ok(if at_end {
        response(body.to_vec())
    } else {
        None
    })
}

/// The status code and headers of a response head.
fn parse_head(head: &str) -> Result<(u16, Vec<(String, String)>), String> {
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.split_whitespace().nth(1))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| format!("not an HTTP status line: {status_line:?}"))?;
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    Ok((status, headers))
}

/// The content of a complete chunked body.
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
        body = body.get(size + 2..).ok_or("a chunk without its line end")?;
    }
}

/// `text` with every byte but the unreserved characters of RFC 3986 percent-encoded.
pub fn url_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::ErrorReason;

    fn server(host: &str) -> Server {
        Server {
            host: host.to_owned(),
            port: 9090,
            tls: None,
            host_resolution: HostResolution::System,
        }
    }

    #[test]
    fn requests_carry_an_encoded_query_and_their_headers() {
        let request = Request::new(Method::Post, "/kafkacruisecontrol/rebalance")
            .param("goals", "RackAwareGoal,CpuCapacityGoal")
            .param("excluded_topics", "archive-.* x&y=é")
            .header("User-Task-ID", "abc");
        assert_eq!(
            request.target(),
            "/kafkacruisecontrol/rebalance?goals=RackAwareGoal%2CCpuCapacityGoal&excluded_topics=archive-.%2A%20x%26y%3D%C3%A9"
        );
        let mut tls_server = server("10.0.0.7");
        tls_server.tls = Some(ServerTls {
            config: TlsConfig::default(),
            server_name: "c-cruise-control.ns.svc".to_owned(),
        });
        let head = request.head(&tls_server);
        assert!(head.starts_with("POST /kafkacruisecontrol/rebalance?goals="));
        assert!(
            head.contains("\r\nHost: c-cruise-control.ns.svc:9090\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nUser-Task-ID: abc\r\n"));
        assert!(head.contains("\r\nContent-Length: 0\r\n"));
        assert!(head.ends_with("\r\n\r\n"));
        let get = Request::new(Method::Get, "/v1/broker-state/").head(&server("::1"));
        assert!(get.starts_with("GET /v1/broker-state/ HTTP/1.1\r\nHost: [::1]:9090\r\n"));
        assert!(!get.contains("Content-Length"));
        assert_eq!(server("::1").address(), "[::1]:9090");
    }

    #[test]
    fn a_json_body_is_announced_by_type_and_length() {
        let body = serde_json::json!({"connector.class": "A", "tasks.max": "1"});
        let request = Request::new(Method::Put, "/connectors/c/config").json(&body);
        let head = request.head(&server("10.0.0.7"));
        assert!(
            head.starts_with("PUT /connectors/c/config HTTP/1.1\r\n"),
            "{head}"
        );
        assert!(
            head.contains("\r\nContent-Type: application/json\r\n"),
            "{head}"
        );
        let sent = body.to_string();
        assert!(
            head.contains(&format!("\r\nContent-Length: {}\r\n", sent.len())),
            "{head}"
        );
        assert_eq!(request.body.as_deref(), Some(sent.as_bytes()));
        let patch = Request::new(Method::Patch, "/connectors/c/offsets").head(&server("::1"));
        assert!(patch.contains("\r\nContent-Length: 0\r\n"), "{patch}");
        let delete = Request::new(Method::Delete, "/connectors/c").head(&server("::1"));
        assert!(delete.starts_with("DELETE /connectors/c HTTP/1.1\r\n"));
        assert!(!delete.contains("Content-Length"), "{delete}");
    }

    #[test]
    fn responses_are_complete_by_length_chunks_or_end_of_connection() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nUser-Task-ID: 5\r\nContent-Length: 17\r\n\r\n{\"brokerState\":3}";
        let response = complete_response(plain, false).unwrap().unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.body, br#"{"brokerState":3}"#);
        assert_eq!(response.header("user-task-id"), Some("5"));
        // Waits for the rest of the body, refuses a body cut short.
        assert_eq!(
            complete_response(&plain[..plain.len() - 3], false),
            Ok(None)
        );
        assert!(complete_response(&plain[..plain.len() - 3], true).is_err());
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n7\r\n{\"broke\r\na;ext=1\r\nrState\":3}\r\n0\r\n\r\n";
        let response = complete_response(chunked, false).unwrap().unwrap();
        assert_eq!(response.body, br#"{"brokerState":3}"#);
        assert_eq!(complete_response(&chunked[..60], false), Ok(None));
        assert!(complete_response(&chunked[..60], true).is_err());
        let unframed = b"HTTP/1.0 404 Not Found\r\n\r\nBroker state metric not found";
        assert_eq!(complete_response(unframed, false), Ok(None));
        let response = complete_response(unframed, true).unwrap().unwrap();
        assert_eq!(response.status, 404);
        assert_eq!(response.text(), "Broker state metric not found");
        assert!(complete_response(b"SSH-2.0-OpenSSH\r\n\r\n", false).is_err());
        assert!(complete_response(b"HTTP/1.1 200 OK\r\n", true).is_err());
        assert!(
            complete_response(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
                true
            )
            .is_err()
        );
    }

    #[tokio::test]
    async fn a_host_name_is_not_looked_up_when_only_addresses_are_allowed() {
        let mut named = server("c-cruise-control.ns.svc");
        named.host_resolution = HostResolution::IpAddressesOnly;
        let bounds = Exchange {
            timeout: Duration::from_secs(1),
            max_bytes: 1024,
        };
        let error = send(&named, &Request::new(Method::Get, "/"), bounds)
            .await
            .unwrap_err();
        assert_eq!(error.reason(), "HostNameNotLookedUp");
        assert!(error.to_string().contains("c-cruise-control.ns.svc:9090"));
    }

    #[tokio::test]
    async fn a_server_that_is_not_there_is_a_connection_failure() {
        // Bound, then dropped: nothing listens on that port any more.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let mut gone = server("127.0.0.1");
        gone.port = port;
        let bounds = Exchange {
            timeout: Duration::from_secs(5),
            max_bytes: 1024,
        };
        let error = send(&gone, &Request::new(Method::Get, "/"), bounds)
            .await
            .unwrap_err();
        assert_eq!(error.reason(), "HttpConnectionFailed", "{error}");
    }

    #[tokio::test]
    async fn a_server_that_does_not_answer_times_out_and_a_large_answer_is_refused() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let serve = tokio::spawn(async move {
            // The first connection never gets an answer; the second gets a large one.
            let (_silent, _) = listener.accept().await.unwrap();
            let (mut talkative, _) = listener.accept().await.unwrap();
            let mut request = [0; 1024];
            let _ = talkative.read(&mut request).await.unwrap();
            let body = "x".repeat(4096);
            let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n{body}");
            let _ = talkative.write_all(answer.as_bytes()).await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        });
        let mut local = server("127.0.0.1");
        local.port = port;
        let bounds = Exchange {
            timeout: Duration::from_millis(300),
            max_bytes: 1024,
        };
        let request = Request::new(Method::Get, "/");
        let error = send(&local, &request, bounds).await.unwrap_err();
        assert_eq!(error.reason(), "HttpTimeout", "{error}");
        let bounds = Exchange {
            timeout: Duration::from_secs(5),
            max_bytes: 1024,
        };
        let error = send(&local, &request, bounds).await.unwrap_err();
        assert_eq!(error.reason(), "HttpAnswerUnreadable", "{error}");
        assert!(error.to_string().contains("more than 1024 bytes"));
        serve.abort();
    }

    #[test]
    fn unreserved_characters_are_kept() {
        assert_eq!(url_encode("Az09-._~"), "Az09-._~");
        assert_eq!(
            url_encode("1-/var/lib/kafka/data-0/kafka-log1"),
            "1-%2Fvar%2Flib%2Fkafka%2Fdata-0%2Fkafka-log1"
        );
    }
}
