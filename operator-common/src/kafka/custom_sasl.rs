//! `STRIMZI_SASL_CUSTOM_CONFIG_JSON`: SASL client properties that replace the standard SASL
//! settings, read as Strimzi 1.2's topic operator reads them (a JSON object, comments
//! allowed, of `sasl.*` properties), then turned into what this client can do:
//!
//! - `sasl.mechanism` `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512` with Kafka's login module
//!   for it in `sasl.jaas.config` and its `username` and `password` options;
//! - `sasl.mechanism` `OAUTHBEARER` with Kafka's `OAuthBearerLoginModule` and
//!   `sasl.login.callback.handler.class` Strimzi OAuth's
//!   `io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler`, whose `oauth.*`
//!   options are in `sasl.jaas.config` (see [`OAUTH_OPTIONS`]).
//!
//! Any other mechanism, property, login module or option is an error naming it: a setting
//! this client cannot honour is never dropped.

use std::collections::BTreeMap;
use std::time::Duration;

use super::config::{
    ClientCredentialsGrant, OAuthBearerConfig, SaslConfig, SaslCredentials, SaslMechanism,
    TlsConfig, TokenEndpoint,
};
use super::error::AdminError;
use super::oauth::DEFAULT_TOKEN_ENDPOINT_TIMEOUT;
use super::stores::StoreFile;
use crate::redact::REDACTED;

/// The environment variable.
pub(crate) const VARIABLE: &str = "STRIMZI_SASL_CUSTOM_CONFIG_JSON";
const MECHANISM: &str = "sasl.mechanism";
const JAAS_CONFIG: &str = "sasl.jaas.config";
const LOGIN_CALLBACK_HANDLER: &str = "sasl.login.callback.handler.class";
const PLAIN_LOGIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
const SCRAM_LOGIN_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";
const OAUTHBEARER_LOGIN_MODULE: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";
const STRIMZI_OAUTH_HANDLER: &str =
    "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler";

/// The Strimzi OAuth client options this client reads from `sasl.jaas.config`. The last four
/// change nothing that is sent: Strimzi's client uses them only to name its own principal, or
/// its configuration in logs and metrics (`oauth.config.id`).
pub const OAUTH_OPTIONS: [&str; 18] = [
    "oauth.access.token",
    "oauth.token.endpoint.uri",
    "oauth.client.id",
    "oauth.client.secret",
    "oauth.scope",
    "oauth.audience",
    "oauth.ssl.truststore.location",
    "oauth.ssl.truststore.password",
    "oauth.ssl.truststore.type",
    "oauth.ssl.endpoint.identification.algorithm",
    "oauth.connect.timeout.seconds",
    "oauth.read.timeout.seconds",
    "oauth.max.token.expiry.seconds",
    "oauth.access.token.is.jwt",
    "oauth.username.claim",
    "oauth.fallback.username.claim",
    "oauth.fallback.username.prefix",
    "oauth.config.id",
];

/// Reads the variable's value (not blank) into the SASL settings it stands for.
pub(crate) fn parse(json: &str) -> Result<SaslConfig, AdminError> {
    let mut properties = read_properties(json)?;
    let mechanism = properties.remove(MECHANISM).ok_or_else(|| {
        error(
            MECHANISM,
            "",
            "required (Kafka's default, GSSAPI, is not supported): PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
        )
    })?;
    let jaas_config = properties
        .remove(JAAS_CONFIG)
        .ok_or_else(|| error(JAAS_CONFIG, "", "required: a JAAS login module line"))?;
    let handler = properties.remove(LOGIN_CALLBACK_HANDLER);
    if let Some(key) = properties.into_keys().next() {
        return Err(error(
            &key,
            REDACTED,
            &format!(
                "not supported by this operator's Kafka client (it reads {MECHANISM}, {JAAS_CONFIG} and {LOGIN_CALLBACK_HANDLER})"
            ),
        ));
    }
    let login = JaasLogin::parse(&jaas_config)?;
    let upper = mechanism.to_ascii_uppercase();
    let password_mechanism = SaslMechanism::from_name(&upper);
    match (password_mechanism, upper.as_str()) {
        (Some(password_mechanism), _) => {
            if let Some(handler) = handler {
                return Err(error(
                    LOGIN_CALLBACK_HANDLER,
                    &handler,
                    &format!("not supported with {upper}"),
                ));
            }
            let module = match password_mechanism {
                SaslMechanism::Plain => PLAIN_LOGIN_MODULE,
                SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512 => SCRAM_LOGIN_MODULE,
            };
            login.expect_module(module)?;
            let mut options = login.options;
            let mut required = |name: &str| {
                options
                    .remove(name)
                    .filter(|value| !value.is_empty())
                    .ok_or_else(|| {
                        option_error(name, &format!("required and not empty with {upper}"))
                    })
            };
            let username = required("username")?;
            let password = required("password")?;
            refuse_remaining(options)?;
            Ok(SaslConfig::Password(SaslCredentials {
                mechanism: password_mechanism,
                username,
                password,
            }))
        }
        (None, "OAUTHBEARER") => {
            match handler.as_deref() {
                Some(STRIMZI_OAUTH_HANDLER) => {}
                other => {
                    return Err(error(
                        LOGIN_CALLBACK_HANDLER,
                        other.unwrap_or(""),
                        &format!(
                            "{STRIMZI_OAUTH_HANDLER} with OAUTHBEARER (Strimzi OAuth's client; Kafka's own login callback handlers are not supported)"
                        ),
                    ));
                }
            }
            login.expect_module(OAUTHBEARER_LOGIN_MODULE)?;
            Ok(SaslConfig::OAuthBearer(oauth_config(login.options)?))
        }
        (None, _) => Err(error(
            MECHANISM,
            &mechanism,
            "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER (the mechanisms this operator's Kafka client implements)",
        )),
    }
}

/// The JSON object's properties, checked as Strimzi checks them: an object of scalar values,
/// not empty, every key starting with `sasl.`.
fn read_properties(json: &str) -> Result<BTreeMap<String, String>, AdminError> {
    let whole = |allowed: &str| AdminError::InvalidConfig {
        variable: VARIABLE.to_owned(),
        value: REDACTED.to_owned(),
        allowed: allowed.to_owned(),
    };
    let object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&without_comments(json)).map_err(|parse| {
            whole(&format!(
                "a JSON object of sasl.* properties with string values ({parse})"
            ))
        })?;
    if object.is_empty() {
        return Err(whole("a JSON object with at least one sasl.* property"));
    }
    let mut properties = BTreeMap::new();
    for (key, value) in object {
        let value = match value {
            serde_json::Value::String(text) => text,
            serde_json::Value::Number(number) => number.to_string(),
            serde_json::Value::Bool(flag) => flag.to_string(),
            _ => return Err(error(&key, REDACTED, "a string")),
        };
        if !key.starts_with("sasl.") {
            return Err(error(
                &key,
                REDACTED,
                "not a SASL property: every key must start with sasl.",
            ));
        }
        properties.insert(key, value);
    }
    Ok(properties)
}

/// `text` with its `//` and `/* */` comments outside strings blanked out (Jackson's
/// `ALLOW_COMMENTS`).
fn without_comments(text: &str) -> String {
    let mut output = String::with_capacity(text.len());
    let mut characters = text.chars().peekable();
    let mut in_string = false;
    while let Some(character) = characters.next() {
        if in_string {
            output.push(character);
            match character {
                '\\' => output.extend(characters.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (character, characters.peek()) {
            ('"', _) => {
                in_string = true;
                output.push(character);
            }
            ('/', Some('/')) => {
                for skipped in characters.by_ref() {
                    if skipped == '\n' {
                        output.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                characters.next();
                let mut previous = ' ';
                for skipped in characters.by_ref() {
                    if previous == '*' && skipped == '/' {
                        break;
                    }
                    previous = skipped;
                }
                output.push(' ');
            }
            _ => output.push(character),
        }
    }
    output
}

/// The one login module line of a `sasl.jaas.config`.
#[derive(Debug, PartialEq, Eq)]
struct JaasLogin {
    module: String,
    options: BTreeMap<String, String>,
}

impl JaasLogin {
    /// Reads `<login module class> <flag> [name=value ...];`, values quoted (with backslash
    /// escapes) or bare.
    fn parse(text: &str) -> Result<Self, AdminError> {
        let malformed = |what: &str| {
            error(
                JAAS_CONFIG,
                REDACTED,
                &format!(
                    "one JAAS login module line, `<class> required name=\"value\" ... ;` ({what})"
                ),
            )
        };
        let mut tokens = JaasTokens {
            rest: text.trim_start(),
        };
        let module = tokens
            .word()
            .ok_or_else(|| malformed("no login module class"))?;
        let flag = tokens.word().ok_or_else(|| malformed("no control flag"))?;
        if !["required", "requisite", "sufficient", "optional"]
            .iter()
            .any(|known| flag.eq_ignore_ascii_case(known))
        {
            return Err(malformed(
                "the control flag is not required, requisite, sufficient or optional",
            ));
        }
        let mut options = BTreeMap::new();
        loop {
            if let Some(after) = tokens.rest.strip_prefix(';') {
                if !after.trim().is_empty() {
                    return Err(malformed("Kafka takes exactly one login module"));
                }
                break;
            }
            let name = tokens.word().ok_or_else(|| malformed("no closing ;"))?;
            tokens.rest = tokens
                .rest
                .strip_prefix('=')
                .ok_or_else(|| malformed("an option without =value"))?;
            let value = tokens
                .value()
                .ok_or_else(|| malformed("an option value is cut short"))?;
            options.insert(name, value);
            tokens.rest = tokens.rest.trim_start();
        }
        Ok(Self { module, options })
    }

    fn expect_module(&self, expected: &str) -> Result<(), AdminError> {
        if self.module == expected {
            Ok(())
        } else {
            Err(error(
                JAAS_CONFIG,
                &self.module,
                &format!("the login module {expected} for this mechanism"),
            ))
        }
    }
}

struct JaasTokens<'a> {
    rest: &'a str,
}

impl JaasTokens<'_> {
    /// A bare word up to white space, `=`, `;` or `"`, and the white space after it.
    fn word(&mut self) -> Option<String> {
        let end = self
            .rest
            .find(|c: char| c.is_whitespace() || matches!(c, '=' | ';' | '"'))
            .unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let word = self.rest[..end].to_owned();
        self.rest = self.rest[end..].trim_start();
        Some(word)
    }

    /// A quoted string (Java's escapes) or a bare word.
    fn value(&mut self) -> Option<String> {
        let Some(quoted) = self.rest.strip_prefix('"') else {
            return self.word();
        };
        let mut value = String::new();
        let mut characters = quoted.char_indices();
        while let Some((at, character)) = characters.next() {
            match character {
                '"' => {
                    self.rest = &quoted[at + 1..];
                    return Some(value);
                }
                '\\' => value.push(match characters.next()?.1 {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => other,
                }),
                other => value.push(other),
            }
        }
        None
    }
}

/// Strimzi OAuth's client options into a token source.
fn oauth_config(mut options: BTreeMap<String, String>) -> Result<OAuthBearerConfig, AdminError> {
    if let Some(name) = options
        .keys()
        .find(|name| !OAUTH_OPTIONS.contains(&name.as_str()))
    {
        return Err(option_error(
            name,
            &format!(
                "not supported by this operator's OAuth client (it reads {})",
                OAUTH_OPTIONS.join(", ")
            ),
        ));
    }
    if let Some(token) = take(&mut options, "oauth.access.token") {
        return Ok(OAuthBearerConfig::StaticToken(token));
    }
    let uri = take(&mut options, "oauth.token.endpoint.uri").ok_or_else(|| {
        option_error(
            "oauth.token.endpoint.uri",
            "required without oauth.access.token (the client-credentials grant)",
        )
    })?;
    let client_id = take(&mut options, "oauth.client.id").ok_or_else(|| {
        option_error(
            "oauth.client.id",
            "required for the client-credentials grant",
        )
    })?;
    let client_secret = take(&mut options, "oauth.client.secret").ok_or_else(|| {
        option_error(
            "oauth.client.secret",
            "required: this operator's OAuth client uses the client-credentials grant (refresh tokens, the password grant and client assertions are not supported)",
        )
    })?;
    let tls = token_endpoint_tls(&mut options)?;
    if uri.starts_with("https://") && tls.is_none() {
        return Err(option_error(
            "oauth.ssl.truststore.location",
            "required for an https token endpoint: this operator has no system CA certificates to trust it with",
        ));
    }
    let endpoint = TokenEndpoint::parse(&uri, tls).ok_or_else(|| {
        option_error(
            "oauth.token.endpoint.uri",
            "an http:// or https:// URI without query or fragment",
        )
    })?;
    let connect = seconds(&mut options, "oauth.connect.timeout.seconds")?;
    let read = seconds(&mut options, "oauth.read.timeout.seconds")?;
    let max_token_lifetime = seconds(&mut options, "oauth.max.token.expiry.seconds")?;
    let token_is_jwt = match take(&mut options, "oauth.access.token.is.jwt") {
        None => true,
        Some(value) if value.eq_ignore_ascii_case("true") => true,
        Some(value) if value.eq_ignore_ascii_case("false") => false,
        Some(_) => {
            return Err(option_error("oauth.access.token.is.jwt", "true or false"));
        }
    };
    Ok(OAuthBearerConfig::ClientCredentials(Box::new(
        ClientCredentialsGrant {
            endpoint,
            client_id,
            client_secret,
            scope: take(&mut options, "oauth.scope"),
            audience: take(&mut options, "oauth.audience"),
            timeout: connect.unwrap_or(DEFAULT_TOKEN_ENDPOINT_TIMEOUT)
                + read.unwrap_or(DEFAULT_TOKEN_ENDPOINT_TIMEOUT),
            max_token_lifetime,
            token_is_jwt,
        },
    )))
}

/// The trust for the token endpoint from the `oauth.ssl.*` options, `None` without
/// `oauth.ssl.truststore.location`.
fn token_endpoint_tls(
    options: &mut BTreeMap<String, String>,
) -> Result<Option<TlsConfig>, AdminError> {
    let password = take(options, "oauth.ssl.truststore.password");
    let kind = take(options, "oauth.ssl.truststore.type");
    let algorithm = options.remove("oauth.ssl.endpoint.identification.algorithm");
    let Some(location) = take(options, "oauth.ssl.truststore.location") else {
        if let Some(name) = [
            (password.is_some(), "oauth.ssl.truststore.password"),
            (kind.is_some(), "oauth.ssl.truststore.type"),
            (
                algorithm.is_some(),
                "oauth.ssl.endpoint.identification.algorithm",
            ),
        ]
        .iter()
        .find_map(|(given, name)| given.then_some(*name))
        {
            return Err(option_error(
                name,
                "used only with oauth.ssl.truststore.location, which is not set",
            ));
        }
        return Ok(None);
    };
    if let Some(kind) = kind
        && !["PKCS12", "JKS", "PEM"].contains(&kind.to_ascii_uppercase().as_str())
    {
        return Err(option_error(
            "oauth.ssl.truststore.type",
            "PKCS12, JKS or PEM (the store's format is told by its content)",
        ));
    }
    let verify_hostname = match algorithm.as_deref() {
        None => true,
        Some("") => false,
        Some(algorithm) if algorithm.eq_ignore_ascii_case("HTTPS") => true,
        Some(_) => {
            return Err(option_error(
                "oauth.ssl.endpoint.identification.algorithm",
                "HTTPS or empty",
            ));
        }
    };
    let store = StoreFile::read(
        &format!("{VARIABLE}: {JAAS_CONFIG} option oauth.ssl.truststore.location"),
        &location,
        "oauth.ssl.truststore.password",
    )?;
    Ok(Some(TlsConfig {
        ca_pem: store.trusted_certificates_pem(password.as_deref())?,
        client_identity_pem: None,
        verify_hostname,
    }))
}

/// Removes the option `name` and gives its value, `None` when it is missing or empty.
fn take(options: &mut BTreeMap<String, String>, name: &str) -> Option<String> {
    options.remove(name).filter(|value| !value.is_empty())
}

/// Removes the option `name`, a positive number of seconds.
fn seconds(
    options: &mut BTreeMap<String, String>,
    name: &str,
) -> Result<Option<Duration>, AdminError> {
    take(options, name)
        .map(|value| {
            value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|seconds| *seconds > 0)
                .map(Duration::from_secs)
                .ok_or_else(|| option_error(name, "a positive number of seconds"))
        })
        .transpose()
}

/// Refuses the first option left over after a login module's own options were taken.
fn refuse_remaining(options: BTreeMap<String, String>) -> Result<(), AdminError> {
    match options.into_keys().next() {
        Some(name) => Err(option_error(
            &name,
            "not supported by this operator's Kafka client",
        )),
        None => Ok(()),
    }
}

fn error(key: &str, value: &str, allowed: &str) -> AdminError {
    AdminError::InvalidConfig {
        variable: format!("{VARIABLE}: {key}"),
        value: value.to_owned(),
        allowed: allowed.to_owned(),
    }
}

/// An error about one option of `sasl.jaas.config`, whose value is never shown.
fn option_error(name: &str, allowed: &str) -> AdminError {
    error(&format!("{JAAS_CONFIG} option {name}"), REDACTED, allowed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const STRIMZI_OAUTH: &str = r#"
        // Strimzi OAuth's client with the client-credentials grant.
        {
            "sasl.mechanism": "OAUTHBEARER", /* Kafka's name */
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required oauth.token.endpoint.uri=\"http://127.0.0.1:8080/realms/kafka/token\" oauth.client.id=\"topic-operator\" oauth.client.secret=\"s3cr\\\"et\" oauth.scope=\"kafka\" oauth.audience=kafka-broker oauth.username.claim=preferred_username oauth.read.timeout.seconds=5 ;",
            "sasl.login.callback.handler.class": "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler"
        }"#;

    fn message(json: &str) -> String {
        parse(json).unwrap_err().to_string()
    }

    fn oauth_json(options: &str) -> String {
        serde_json::json!({
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": format!("{OAUTHBEARER_LOGIN_MODULE} required {options};"),
            "sasl.login.callback.handler.class": STRIMZI_OAUTH_HANDLER,
        })
        .to_string()
    }

    #[test]
    fn strimzi_oauth_client_credentials_are_read_with_comments_and_escapes() {
        let SaslConfig::OAuthBearer(OAuthBearerConfig::ClientCredentials(grant)) =
            parse(STRIMZI_OAUTH).unwrap()
        else {
            panic!("expected the client-credentials grant");
        };
        assert_eq!(grant.endpoint.host, "127.0.0.1");
        assert_eq!(grant.endpoint.port, 8080);
        assert_eq!(grant.endpoint.path, "/realms/kafka/token");
        assert_eq!(grant.endpoint.tls, None);
        assert_eq!(grant.client_id, "topic-operator");
        assert_eq!(grant.client_secret, "s3cr\"et");
        assert_eq!(grant.scope.as_deref(), Some("kafka"));
        assert_eq!(grant.audience.as_deref(), Some("kafka-broker"));
        assert_eq!(
            grant.timeout,
            DEFAULT_TOKEN_ENDPOINT_TIMEOUT + Duration::from_secs(5)
        );
        assert!(grant.token_is_jwt);
    }

    #[test]
    fn a_static_access_token_is_used_as_it_is() {
        assert_eq!(
            parse(&oauth_json(r#"oauth.access.token="eyJ.token.""#)).unwrap(),
            SaslConfig::OAuthBearer(OAuthBearerConfig::StaticToken("eyJ.token.".to_owned()))
        );
    }

    #[test]
    fn password_mechanisms_take_their_credentials_from_the_login_module() {
        for (mechanism, module, expected) in [
            ("PLAIN", PLAIN_LOGIN_MODULE, SaslMechanism::Plain),
            (
                "scram-sha-256",
                SCRAM_LOGIN_MODULE,
                SaslMechanism::ScramSha256,
            ),
            (
                "SCRAM-SHA-512",
                SCRAM_LOGIN_MODULE,
                SaslMechanism::ScramSha512,
            ),
        ] {
            let json = serde_json::json!({
                "sasl.mechanism": mechanism,
                "sasl.jaas.config": format!("{module} required username=\"alice\" password=\"pw\";"),
            });
            assert_eq!(
                parse(&json.to_string()).unwrap(),
                SaslConfig::Password(SaslCredentials {
                    mechanism: expected,
                    username: "alice".to_owned(),
                    password: "pw".to_owned(),
                })
            );
        }
    }

    #[test]
    fn what_strimzi_refuses_is_refused() {
        let cases = [
            (
                "{}",
                "STRIMZI_SASL_CUSTOM_CONFIG_JSON=\"<redacted>\" is invalid: a JSON object with at least one sasl.* property",
            ),
            (
                "[1]",
                "STRIMZI_SASL_CUSTOM_CONFIG_JSON=\"<redacted>\" is invalid: a JSON object of sasl.* properties",
            ),
            (
                "{\"sasl.mechanism\": \"PLAIN\",",
                "STRIMZI_SASL_CUSTOM_CONFIG_JSON=\"<redacted>\" is invalid: a JSON object",
            ),
            (
                r#"{"sasl.mechanism": "PLAIN", "security.protocol": "SSL"}"#,
                "STRIMZI_SASL_CUSTOM_CONFIG_JSON: security.protocol=\"<redacted>\" is invalid: not a SASL property",
            ),
        ];
        for (json, expected) in cases {
            let error = message(json);
            assert!(error.starts_with(expected), "{json}: {error}");
        }
    }

    #[test]
    fn what_this_client_cannot_honour_is_named() {
        let cases = [
            (
                r#"{"sasl.jaas.config": "x required;"}"#.to_owned(),
                "STRIMZI_SASL_CUSTOM_CONFIG_JSON: sasl.mechanism=\"\" is invalid: required",
            ),
            (
                r#"{"sasl.mechanism": "AWS_MSK_IAM", "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;"}"#.to_owned(),
                "STRIMZI_SASL_CUSTOM_CONFIG_JSON: sasl.mechanism=\"AWS_MSK_IAM\" is invalid",
            ),
            (
                r#"{"sasl.mechanism": "PLAIN", "sasl.jaas.config": "x required;", "sasl.client.callback.handler.class": "a.B"}"#.to_owned(),
                "STRIMZI_SASL_CUSTOM_CONFIG_JSON: sasl.client.callback.handler.class=\"<redacted>\" is invalid: not supported",
            ),
            (
                r#"{"sasl.mechanism": "PLAIN", "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required username=a password=b;"}"#.to_owned(),
                "sasl.jaas.config=\"org.apache.kafka.common.security.scram.ScramLoginModule\" is invalid: the login module org.apache.kafka.common.security.plain.PlainLoginModule",
            ),
            (
                r#"{"sasl.mechanism": "PLAIN", "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required username=a;"}"#.to_owned(),
                "sasl.jaas.config option password=\"<redacted>\" is invalid: required",
            ),
            (
                r#"{"sasl.mechanism": "PLAIN", "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required username=a password=b"}"#.to_owned(),
                "no closing ;",
            ),
            (
                oauth_json(r#"oauth.refresh.token="r" oauth.token.endpoint.uri="http://sso/token""#),
                "sasl.jaas.config option oauth.refresh.token=\"<redacted>\" is invalid: not supported",
            ),
            (
                oauth_json(r#"oauth.token.endpoint.uri="https://sso/token" oauth.client.id=a oauth.client.secret=b"#),
                "sasl.jaas.config option oauth.ssl.truststore.location=\"<redacted>\" is invalid: required for an https token endpoint",
            ),
            (
                oauth_json(r#"oauth.token.endpoint.uri="http://sso/token" oauth.client.id=a"#),
                "sasl.jaas.config option oauth.client.secret=\"<redacted>\" is invalid: required",
            ),
            (
                serde_json::json!({
                    "sasl.mechanism": "OAUTHBEARER",
                    "sasl.jaas.config": format!("{OAUTHBEARER_LOGIN_MODULE} required unsecuredLoginStringClaim_sub=admin;"),
                })
                .to_string(),
                "sasl.login.callback.handler.class=\"\" is invalid: io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler",
            ),
        ];
        for (json, expected) in cases {
            let error = message(&json);
            assert!(error.contains(expected), "{json}: {error}");
            assert!(
                !error.contains("\"b\"") && !error.contains("=b "),
                "{error}"
            );
        }
    }

    #[test]
    fn comments_are_removed_outside_strings_only() {
        assert_eq!(
            without_comments("{\"a//b\": \"c/*d*/\"} // end\n/* x */"),
            "{\"a//b\": \"c/*d*/\"} \n "
        );
    }
}
