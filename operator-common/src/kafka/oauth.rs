//! OAUTHBEARER with Strimzi OAuth's client options: where the token comes from (a static
//! `oauth.access.token`, or the client-credentials grant against `oauth.token.endpoint.uri`),
//! the token kept and fetched again once 80% of its lifetime has passed (Kafka's default
//! `sasl.login.refresh.window.factor`), and the client's first message of RFC 7628.
//!
//! A token is taken when a connection authenticates; connections already open keep the
//! session they have (this client does not re-authenticate them, KIP-368): a broker with
//! `connections.max.reauth.ms` closes them when the session ends, and the next connection
//! authenticates with a fresh token.

use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

use super::config::{ClientCredentialsGrant, HostResolution, OAuthBearerConfig};
use super::error::AdminError;
use crate::http_client::{
    self, Exchange, HttpError, Method, Request, Server, ServerTls, url_encode,
};
use crate::redact::Redacted;

/// The share of a token's lifetime after which a new one is fetched.
const REFRESH_WINDOW_FACTOR: f64 = 0.8;
/// Most bytes of a token endpoint's answer read.
const MAX_TOKEN_RESPONSE: usize = 1024 * 1024;
/// Strimzi OAuth's default bound on connecting to the token endpoint, and on reading from it.
pub const DEFAULT_TOKEN_ENDPOINT_TIMEOUT: Duration = Duration::from_secs(60);

/// The token source of one admin client, shared by its connections.
#[derive(Debug)]
pub(crate) struct OAuthTokens {
    config: OAuthBearerConfig,
    host_resolution: HostResolution,
    current: tokio::sync::Mutex<Option<HeldToken>>,
}

struct HeldToken {
    token: String,
    /// When to fetch a new one; `None` when its lifetime is unknown.
    renew_after: Option<Instant>,
}

impl std::fmt::Debug for HeldToken {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("HeldToken")
            .field("token", &Redacted)
            .field("renew_after", &self.renew_after)
            .finish()
    }
}

impl OAuthTokens {
    /// A token source for `config`, reaching the token endpoint as `host_resolution` allows.
    pub(crate) fn new(config: OAuthBearerConfig, host_resolution: HostResolution) -> Self {
        Self {
            config,
            host_resolution,
            current: tokio::sync::Mutex::new(None),
        }
    }

    /// The token to authenticate with: the one held, or a new one when none is held yet or
    /// the held one is due for renewal.
    pub(crate) async fn token(&self) -> Result<String, AdminError> {
        let grant = match &self.config {
            OAuthBearerConfig::StaticToken(token) => return Ok(token.clone()),
            OAuthBearerConfig::ClientCredentials(grant) => grant,
        };
        let mut current = self.current.lock().await;
        if let Some(held) = current.as_ref()
            && held
                .renew_after
                .is_none_or(|renew_after| Instant::now() < renew_after)
        {
            return Ok(held.token.clone());
        }
        let requested_at = Instant::now();
        let (token, lifetime) = self.fetch(grant).await?;
        let lifetime = match (lifetime, grant.max_token_lifetime) {
            (Some(lifetime), Some(max)) => Some(lifetime.min(max)),
            (lifetime, max) => lifetime.or(max),
        };
        *current = Some(HeldToken {
            token: token.clone(),
            renew_after: lifetime
                .map(|lifetime| requested_at + lifetime.mul_f64(REFRESH_WINDOW_FACTOR)),
        });
        Ok(token)
    }

    /// Asks the token endpoint for a token: the token and its lifetime, when known.
    async fn fetch(
        &self,
        grant: &ClientCredentialsGrant,
    ) -> Result<(String, Option<Duration>), AdminError> {
        let endpoint = &grant.endpoint;
        let failed = |message: String| {
            AdminError::Authentication(format!("OAuth token endpoint {}: {message}", endpoint.uri))
        };
        let server = Server {
            host: endpoint.host.clone(),
            port: endpoint.port,
            tls: endpoint.tls.clone().map(|config| ServerTls {
                config,
                server_name: endpoint.host.clone(),
            }),
            host_resolution: self.host_resolution,
        };
        let mut form = vec![("grant_type", "client_credentials")];
        if let Some(scope) = &grant.scope {
            form.push(("scope", scope));
        }
        if let Some(audience) = &grant.audience {
            form.push(("audience", audience));
        }
        let body = form
            .iter()
            .map(|(name, value)| format!("{name}={}", url_encode(value)))
            .collect::<Vec<_>>()
            .join("&");
        let credentials = STANDARD.encode(format!("{}:{}", grant.client_id, grant.client_secret));
        let mut request = Request::new(Method::Post, &endpoint.path)
            .header("Authorization", format!("Basic {credentials}"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json");
        request.body = Some(body.into_bytes());
        let bounds = Exchange {
            timeout: grant.timeout,
            max_bytes: MAX_TOKEN_RESPONSE,
        };
        // An endpoint that cannot be reached, or fails itself, may answer later: the
        // operation is tried again. A refusal is final.
        let unavailable = |message: String| AdminError::Connection {
            address: format!("OAuth token endpoint {}", endpoint.uri),
            message,
        };
        let response = http_client::send(&server, &request, bounds)
            .await
            .map_err(|error| match error {
                HttpError::Connection { .. } | HttpError::Timeout { .. } => {
                    unavailable(error.to_string())
                }
                other => failed(other.to_string()),
            })?;
        if response.status >= 500 {
            return Err(unavailable(format!(
                "answered {} {}",
                response.status,
                response.text()
            )));
        }
        if response.status != 200 {
            return Err(failed(format!(
                "answered {} {}",
                response.status,
                response.text()
            )));
        }
        let answer: serde_json::Value = serde_json::from_slice(&response.body)
            .map_err(|error| failed(format!("the answer is not JSON: {error}")))?;
        let token = answer
            .get("access_token")
            .and_then(serde_json::Value::as_str)
            .filter(|token| !token.is_empty())
            .ok_or_else(|| failed("the answer has no access_token".to_owned()))?
            .to_owned();
        let lifetime = answer
            .get("expires_in")
            .and_then(serde_json::Value::as_u64)
            .map(Duration::from_secs)
            .or_else(|| grant.token_is_jwt.then(|| jwt_lifetime(&token)).flatten());
        Ok((token, lifetime))
    }
}

/// How long a JWT has left from now, read from its `exp` claim; `None` when the token is not
/// a JWT with one.
fn jwt_lifetime(token: &str) -> Option<Duration> {
    let payload = token.split('.').nth(1)?;
    let claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?)
            .ok()?;
    let expires = claims.get("exp")?.as_u64()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    Some(Duration::from_secs(expires.saturating_sub(now)))
}

/// The client's first (and only) OAUTHBEARER message (RFC 7628, section 3.1): no
/// authorization identity, the token as a Bearer `auth` value.
pub(crate) fn client_first_message(token: &str) -> Vec<u8> {
    format!("n,,\u{1}auth=Bearer {token}\u{1}\u{1}").into_bytes()
}

/// The client's answer to a server's error challenge (RFC 7628, section 3.2.3), after which
/// the server ends the exchange with a failure.
pub(crate) const ERROR_ACKNOWLEDGEMENT: &[u8] = &[0x01];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::kafka::config::{TlsConfig, TokenEndpoint};

    #[test]
    fn the_first_message_carries_the_token_as_rfc_7628_lays_it_out() {
        assert_eq!(
            client_first_message("abc.def.ghi"),
            b"n,,\x01auth=Bearer abc.def.ghi\x01\x01"
        );
    }

    #[test]
    fn token_endpoints_are_read_with_their_ports_and_paths() {
        let endpoint = TokenEndpoint::parse("http://127.0.0.1:8080/realms/x/token", None).unwrap();
        assert_eq!(
            (
                endpoint.host.as_str(),
                endpoint.port,
                endpoint.path.as_str()
            ),
            ("127.0.0.1", 8080, "/realms/x/token")
        );
        let endpoint = TokenEndpoint::parse("http://[::1]/token", None).unwrap();
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("::1", 80));
        let tls = TlsConfig::default();
        let endpoint = TokenEndpoint::parse("https://sso.example", Some(tls.clone())).unwrap();
        assert_eq!((endpoint.port, endpoint.path.as_str()), (443, "/"));
        assert_eq!(endpoint.tls, Some(tls));
        for bad in [
            "ftp://sso/token",
            "http://sso/token?x=1",
            "http://:80/token",
            "http://sso:port/token",
            "http://user@sso/token",
        ] {
            assert_eq!(TokenEndpoint::parse(bad, None), None, "{bad}");
        }
        assert_eq!(TokenEndpoint::parse("https://sso/token", None), None);
    }

    #[test]
    fn a_jwt_lifetime_comes_from_its_exp_claim() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let claims = URL_SAFE_NO_PAD.encode(format!("{{\"sub\":\"a\",\"exp\":{}}}", now + 300));
        let lifetime = jwt_lifetime(&format!("e30.{claims}.")).unwrap();
        assert!((Duration::from_secs(298)..=Duration::from_secs(300)).contains(&lifetime));
        assert_eq!(jwt_lifetime("opaque-token"), None);
    }

    /// A token endpoint that answers every request with `token-<n>` valid for one second,
    /// at most `limit` times.
    async fn one_second_tokens(limit: usize) -> TokenEndpoint {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}/token", listener.local_addr().unwrap());
        tokio::spawn(async move {
            for number in 1..=limit {
                let (mut stream, _) = listener.accept().await.unwrap();
                let mut request = Vec::new();
                while !String::from_utf8_lossy(&request).contains("grant_type=client_credentials") {
                    let mut chunk = [0u8; 1024];
                    let read = stream.read(&mut chunk).await.unwrap();
                    assert!(read > 0, "the request ended before its form body");
                    request.extend_from_slice(&chunk[..read]);
                }
                let body = format!("{{\"access_token\":\"token-{number}\",\"expires_in\":1}}");
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                stream.write_all(answer.as_bytes()).await.unwrap();
            }
        });
        TokenEndpoint::parse(&uri, None).unwrap()
    }

    fn grant(endpoint: TokenEndpoint) -> ClientCredentialsGrant {
        ClientCredentialsGrant {
            endpoint,
            client_id: "operator".to_owned(),
            client_secret: "very-secret".to_owned(),
            scope: None,
            audience: None,
            timeout: DEFAULT_TOKEN_ENDPOINT_TIMEOUT,
            max_token_lifetime: None,
            token_is_jwt: true,
        }
    }

    #[tokio::test]
    async fn a_token_is_held_and_fetched_again_once_most_of_its_lifetime_has_passed() {
        let tokens = OAuthTokens::new(
            OAuthBearerConfig::ClientCredentials(Box::new(grant(one_second_tokens(2).await))),
            HostResolution::System,
        );
        assert_eq!(tokens.token().await.unwrap(), "token-1");
        assert_eq!(tokens.token().await.unwrap(), "token-1");
        tokio::time::sleep(Duration::from_millis(850)).await;
        assert_eq!(tokens.token().await.unwrap(), "token-2");
    }

    #[tokio::test]
    async fn an_unreachable_token_endpoint_is_a_retriable_connection_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let uri = format!("http://{}/token", listener.local_addr().unwrap());
        drop(listener);
        let tokens = OAuthTokens::new(
            OAuthBearerConfig::ClientCredentials(Box::new(grant(
                TokenEndpoint::parse(&uri, None).unwrap(),
            ))),
            HostResolution::System,
        );
        let error = tokens.token().await.unwrap_err();
        assert!(error.is_retriable(), "{error}");
        assert!(error.to_string().contains(&uri), "{error}");
    }

    #[test]
    fn secrets_stay_out_of_debug_output() {
        let grant = grant(TokenEndpoint::parse("http://sso/token", None).unwrap());
        let text = format!(
            "{:?} {:?}",
            OAuthBearerConfig::ClientCredentials(Box::new(grant)),
            OAuthBearerConfig::StaticToken("token-value".to_owned())
        );
        assert!(
            !text.contains("very-secret") && !text.contains("token-value"),
            "{text}"
        );
        assert!(text.contains("operator"), "{text}");
        assert!(
            text.contains("client_secret: <redacted>") && text.contains("StaticToken(<redacted>)"),
            "{text}"
        );
    }
}
