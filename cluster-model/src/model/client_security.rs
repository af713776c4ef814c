//! The security options of a Kafka client the operator configures for a component (a Connect
//! worker, a MirrorMaker 2 connector, the Bridge): TLS trust, client authentication and the
//! security protocol, from a `tls` and an `authentication` section of a custom resource.
//!
//! Secrets never appear in the options themselves: they are references the Kafka image's
//! `strimzisecrets` config provider resolves in the pod at run time
//! (`${strimzisecrets:<namespace>/<secret>:<key>}`), as Strimzi does.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use strimzi_api::common::{
    CertSecretSource, ClientTls, KafkaClientAuthentication, KafkaClientAuthenticationPassword,
};

/// The JAAS login module of SASL PLAIN.
const PLAIN_LOGIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
/// The JAAS login module of SASL SCRAM.
const SCRAM_LOGIN_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";

/// Why a client's security section cannot be turned into options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientSecurityError {
    /// `tls` authentication without the certificate and key to present.
    #[error("{field}: TLS client authentication needs certificateAndKey")]
    MissingCertificateAndKey {
        /// Where in the resource the section is, for the message.
        field: String,
    },
    /// A Secret named by `trustedCertificates` does not exist.
    #[error(
        "Secret {secret} with trusted certificates ({field}.tls.trustedCertificates) does not exist in namespace {namespace}"
    )]
    MissingSecret {
        /// The Secret.
        secret: String,
        /// Its namespace.
        namespace: String,
        /// Where in the resource the `tls` section is, for the message.
        field: String,
    },
    /// A Secret named by `trustedCertificates` lacks the certificate (or any key matching the
    /// pattern).
    #[error("Secret {secret} has no certificate {key} ({field}.tls.trustedCertificates)")]
    MissingCertificate {
        /// The Secret.
        secret: String,
        /// The key or pattern.
        key: String,
        /// Where in the resource the `tls` section is, for the message.
        field: String,
    },
    /// A `trustedCertificates` pattern longer than [`MAX_PATTERN_LENGTH`].
    #[error(
        "the pattern for Secret {secret} is {length} characters long, longer than the {MAX_PATTERN_LENGTH} a Secret key may have ({field}.tls.trustedCertificates)"
    )]
    PatternTooLong {
        /// The Secret.
        secret: String,
        /// The pattern's length in bytes.
        length: usize,
        /// Where in the resource the `tls` section is, for the message.
        field: String,
    },
    /// A SASL mechanism without a user name or password.
    #[error("{field}: {mechanism} authentication needs a username and a passwordSecret")]
    MissingCredentials {
        /// Where in the resource the section is, for the message.
        field: String,
        /// The mechanism, as the resource names it.
        mechanism: &'static str,
    },
}

impl ClientSecurityError {
    /// Stable reason for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        "InvalidResourceException"
    }
}

/// A reference to a Secret key the `strimzisecrets` config provider resolves in the pod.
pub fn secret_reference(namespace: &str, secret: &str, key: &str) -> String {
    format!("${{strimzisecrets:{namespace}/{secret}:{key}}}")
}

/// Where the certificates a client trusts are gathered: one Secret the operator writes, and
/// the key (or glob of keys) in it that this client reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedCertificates<'a> {
    /// The operator's Secret with the trusted certificates.
    pub secret: &'a str,
    /// The key, or a glob such as `*.crt`, of the certificates in that Secret.
    pub key: &'a str,
}

/// What a client's security options are made from.
#[derive(Debug, Clone, Copy)]
pub struct ClientSecurity<'a> {
    /// The namespace of the component, where the Secrets are.
    pub namespace: &'a str,
    /// The resource's `tls` section: TLS is used when it is present.
    pub tls: Option<&'a ClientTls>,
    /// Where the operator gathered the certificates of `tls.trustedCertificates`; without
    /// it (or without trusted certificates) the JVM's default trust applies.
    pub trusted: Option<TrustedCertificates<'a>>,
    /// The resource's `authentication` section.
    pub authentication: Option<&'a KafkaClientAuthentication>,
    /// Where the sections are in the resource, for messages (e.g. `spec.target`).
    pub field: &'a str,
}

impl ClientSecurity<'_> {
    /// The client options, in the order Strimzi writes them: TLS trust, authentication, then
    /// `security.protocol`.
    pub fn options(&self) -> Result<Vec<(String, String)>, ClientSecurityError> {
        let tls = self.tls.is_some();
        let mut options = Vec::new();
        let has_trusted = self
            .tls
            .and_then(|tls| tls.trusted_certificates.as_ref())
            .is_some_and(|certificates| !certificates.is_empty());
        if let (true, Some(trusted)) = (has_trusted, self.trusted) {
            options.push((
                "ssl.truststore.certificates".to_owned(),
                secret_reference(self.namespace, trusted.secret, trusted.key),
            ));
            options.push(("ssl.truststore.type".to_owned(), "PEM".to_owned()));
        }
        let mut sasl = false;
        match self.authentication {
            None => {}
            Some(KafkaClientAuthentication::Tls(authentication)) => {
                let pair = authentication.certificate_and_key.as_ref().ok_or_else(|| {
                    ClientSecurityError::MissingCertificateAndKey {
                        field: format!("{}.authentication", self.field),
                    }
                })?;
                options.push((
                    "ssl.keystore.certificate.chain".to_owned(),
                    secret_reference(self.namespace, &pair.secret_name, &pair.certificate),
                ));
                options.push((
                    "ssl.keystore.key".to_owned(),
                    secret_reference(self.namespace, &pair.secret_name, &pair.key),
                ));
                options.push(("ssl.keystore.type".to_owned(), "PEM".to_owned()));
            }
            Some(
                KafkaClientAuthentication::Plain(password)
                | KafkaClientAuthentication::ScramSha256(password)
                | KafkaClientAuthentication::ScramSha512(password),
            ) => {
                sasl = true;
                options.extend(self.password_login(password)?);
            }
            Some(KafkaClientAuthentication::Custom(custom)) => {
                sasl = custom.sasl.unwrap_or(false);
                for (key, value) in custom.config.iter().flat_map(|config| &config.0) {
                    options.push((key.clone(), option_value(value)));
                }
            }
        }
        let protocol = match (sasl, tls) {
            (false, false) => "PLAINTEXT",
            (false, true) => "SSL",
            (true, false) => "SASL_PLAINTEXT",
            (true, true) => "SASL_SSL",
        };
        options.push(("security.protocol".to_owned(), protocol.to_owned()));
        Ok(options)
    }

    /// `sasl.mechanism` and `sasl.jaas.config` of the user name and password login of the
    /// authentication's SASL mechanism.
    fn password_login(
        &self,
        password: &KafkaClientAuthenticationPassword,
    ) -> Result<[(String, String); 2], ClientSecurityError> {
        let (mechanism, name, module) = match self.authentication {
            Some(KafkaClientAuthentication::ScramSha256(_)) => {
                ("SCRAM-SHA-256", "scram-sha-256", SCRAM_LOGIN_MODULE)
            }
            Some(KafkaClientAuthentication::ScramSha512(_)) => {
                ("SCRAM-SHA-512", "scram-sha-512", SCRAM_LOGIN_MODULE)
            }
            _ => ("PLAIN", "plain", PLAIN_LOGIN_MODULE),
        };
        let missing = || ClientSecurityError::MissingCredentials {
            field: format!("{}.authentication", self.field),
            mechanism: name,
        };
        let username = password.username.as_deref().ok_or_else(missing)?;
        let secret = password.password_secret.as_ref().ok_or_else(missing)?;
        let reference = secret_reference(self.namespace, &secret.secret_name, &secret.password);
        Ok([
            ("sasl.mechanism".to_owned(), mechanism.to_owned()),
            (
                "sasl.jaas.config".to_owned(),
                format!("{module} required username=\"{username}\" password=\"{reference}\";"),
            ),
        ])
    }
}

/// The data of Secrets, by Secret name.
pub type SecretsData = BTreeMap<String, BTreeMap<String, ByteString>>;

/// The longest `trustedCertificates` pattern accepted, in bytes: the longest key a Secret
/// may have. Longer patterns are refused before any matching.
pub const MAX_PATTERN_LENGTH: usize = 253;

/// Whether a Secret key matches a `trustedCertificates` pattern: `*` stands for any run of
/// characters, everything else matches itself. Linear in the lengths of the pattern and the
/// key whatever the pattern: the text before the first `*` must start the key, the text after
/// the last must end it, and each run of text in between is taken at its first occurrence
/// after the previous one (taking it later never helps).
pub fn matches_pattern(pattern: &str, key: &str) -> bool {
    let Some((prefix, after_first)) = pattern.split_once('*') else {
        return pattern == key;
    };
    let (middle, suffix) = after_first.rsplit_once('*').unwrap_or(("", after_first));
    let Some(between) = key
        .strip_prefix(prefix)
        .and_then(|tail| tail.strip_suffix(suffix))
    else {
        return false;
    };
    let mut rest = between;
    for part in middle.split('*') {
        match rest.find(part) {
            Some(index) => rest = &rest[index + part.len()..],
            None => return false,
        }
    }
    true
}

/// The certificates `source` names in `secrets` (a key, or the keys matching a pattern), by
/// key; a missing Secret or key is an error naming it and `field`, where the `tls` section
/// is in the resource (`spec`, `spec.target`, ...).
fn trusted_certificates_of(
    source: &CertSecretSource,
    secrets: &SecretsData,
    namespace: &str,
    field: &str,
) -> Result<Vec<(String, ByteString)>, ClientSecurityError> {
    let secret =
        secrets
            .get(&source.secret_name)
            .ok_or_else(|| ClientSecurityError::MissingSecret {
                secret: source.secret_name.clone(),
                namespace: namespace.to_owned(),
                field: field.to_owned(),
            })?;
    let wanted: Vec<(String, ByteString)> = match (&source.certificate, &source.pattern) {
        (Some(key), _) => secret
            .get_key_value(key)
            .map(|(key, value)| (key.clone(), value.clone()))
            .into_iter()
            .collect(),
        (None, Some(pattern)) if pattern.len() > MAX_PATTERN_LENGTH => {
            return Err(ClientSecurityError::PatternTooLong {
                secret: source.secret_name.clone(),
                length: pattern.len(),
                field: field.to_owned(),
            });
        }
        (None, Some(pattern)) => secret
            .iter()
            .filter(|(key, _)| matches_pattern(pattern, key))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
        (None, None) => Vec::new(),
    };
    if wanted.is_empty() {
        return Err(ClientSecurityError::MissingCertificate {
            secret: source.secret_name.clone(),
            key: source
                .certificate
                .clone()
                .or_else(|| source.pattern.clone())
                .unwrap_or_default(),
            field: field.to_owned(),
        });
    }
    Ok(wanted)
}

/// Every certificate `sources` name, one after the other, each ending with a line end: the
/// PEM bundle an operator-written trusted certificates Secret holds under one key. A missing
/// Secret or certificate is an error naming it and `field`, where the `tls` section is in the
/// resource (`spec`, `spec.target`, ...).
pub fn certificate_bundle(
    sources: &[CertSecretSource],
    secrets: &SecretsData,
    namespace: &str,
    field: &str,
) -> Result<Vec<u8>, ClientSecurityError> {
    let mut bundle = Vec::new();
    for source in sources {
        for (_, value) in trusted_certificates_of(source, secrets, namespace, field)? {
            bundle.extend_from_slice(&value.0);
            if !bundle.ends_with(b"\n") {
                bundle.push(b'\n');
            }
        }
    }
    Ok(bundle)
}

/// The Role (named and labelled by `role`) letting the ServiceAccount `service_account` of
/// `namespace` `get` the Secrets `secrets`, which the pods read through the `strimzisecrets`
/// config provider (no rule without any), and the RoleBinding (`binding`) granting it.
pub fn secret_reader_rbac(
    role: ObjectMeta,
    binding: ObjectMeta,
    secrets: Vec<String>,
    service_account: &str,
    namespace: &str,
) -> (Role, RoleBinding) {
    let role_name = role.name.clone().unwrap_or_default();
    let rules = if secrets.is_empty() {
        Vec::new()
    } else {
        vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["secrets".to_owned()]),
            verbs: vec!["get".to_owned()],
            resource_names: Some(secrets),
            ..PolicyRule::default()
        }]
    };
    (
        Role {
            metadata: role,
            rules: Some(rules),
        },
        RoleBinding {
            metadata: binding,
            role_ref: RoleRef {
                api_group: crate::model::meta::RBAC_API_GROUP.to_owned(),
                kind: "Role".to_owned(),
                name: role_name,
            },
            subjects: Some(vec![Subject {
                kind: "ServiceAccount".to_owned(),
                name: service_account.to_owned(),
                namespace: Some(namespace.to_owned()),
                ..Subject::default()
            }]),
        },
    )
}

/// A free-form option value as a client configuration file takes it: strings as they are,
/// anything else in its JSON form.
pub fn option_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patterns_match_whole_keys() {
        let cases = [
            ("*.crt", "ca.crt", true),
            ("ca.crt", "ca.crt", true),
            ("*", "", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "abc", true),
            ("a*a", "a", false),
            ("ab*ba", "aba", false),
            ("*ab*ab*", "xabyab", true),
            ("*ab*ab*", "xabyba", false),
            ("a**b", "ab", true),
            ("*.crt", "ca.crt.bak", false),
            ("ca.*", "ca.crt", true),
            ("c*", "ca.crt", true),
            ("*é*", "caé.crt", true),
        ];
        for (pattern, key, expected) in cases {
            assert_eq!(
                matches_pattern(pattern, key),
                expected,
                "{pattern} on {key}"
            );
        }
    }

    /// Patterns that take exponential time to a backtracking matcher, on keys they do not
    /// match: each is matched in a thread, so that a matcher that stalls fails the test
    /// instead of hanging it.
    #[test]
    fn pathological_patterns_are_matched_in_milliseconds() {
        let patterns = [
            format!("{}b", "*a".repeat(40)),
            format!("{}*b", "a*".repeat(60)),
            "*".repeat(MAX_PATTERN_LENGTH - 1) + "b",
        ];
        let key = "a".repeat(MAX_PATTERN_LENGTH);
        let (sender, matched) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let results: Vec<bool> = patterns
                .iter()
                .map(|pattern| matches_pattern(pattern, &key))
                .collect();
            let _ = sender.send((results, started.elapsed()));
        });
        let (results, elapsed) = matched
            .recv_timeout(std::time::Duration::from_secs(2))
            .expect("the patterns are matched within 2 s");
        assert_eq!(results, [false, false, false]);
        assert!(
            elapsed < std::time::Duration::from_millis(100),
            "{elapsed:?}"
        );
    }

    #[test]
    fn a_pattern_longer_than_a_secret_key_is_refused() {
        let secrets = SecretsData::from([(
            "certs".to_owned(),
            BTreeMap::from([("a.crt".to_owned(), ByteString(b"pem".to_vec()))]),
        )]);
        let source = |pattern: String| CertSecretSource {
            secret_name: "certs".to_owned(),
            certificate: None,
            pattern: Some(pattern),
        };
        let longest = format!("{}.crt", "*".repeat(MAX_PATTERN_LENGTH - 4));
        let bundle = certificate_bundle(&[source(longest)], &secrets, "ns", "spec");
        assert_eq!(bundle.unwrap(), b"pem\n");
        let too_long = format!("{}.crt", "*".repeat(MAX_PATTERN_LENGTH - 3));
        let error = certificate_bundle(&[source(too_long)], &secrets, "ns", "spec").unwrap_err();
        assert!(
            matches!(
                error,
                ClientSecurityError::PatternTooLong { length: 254, .. }
            ),
            "{error}"
        );
        assert_eq!(error.reason(), "InvalidResourceException");
    }

    fn options(
        tls: Option<serde_json::Value>,
        authentication: Option<serde_json::Value>,
    ) -> Result<Vec<(String, String)>, ClientSecurityError> {
        let tls: Option<ClientTls> = tls.map(|tls| serde_json::from_value(tls).unwrap());
        let authentication: Option<KafkaClientAuthentication> =
            authentication.map(|auth| serde_json::from_value(auth).unwrap());
        ClientSecurity {
            namespace: "ns",
            tls: tls.as_ref(),
            trusted: Some(TrustedCertificates {
                secret: "mm-connect-tls-trusted-certs",
                key: "a.crt",
            }),
            authentication: authentication.as_ref(),
            field: "spec.target",
        }
        .options()
    }

    fn get<'a>(options: &'a [(String, String)], key: &str) -> Option<&'a str> {
        options
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    #[test]
    fn plain_connections_only_name_the_protocol() {
        let options = options(None, None).unwrap();
        assert_eq!(
            options,
            [("security.protocol".to_owned(), "PLAINTEXT".to_owned())]
        );
    }

    #[test]
    fn trusted_certificates_are_read_from_the_operators_secret() {
        let tls = json!({"trustedCertificates": [{"secretName": "ca", "certificate": "ca.crt"}]});
        let options = options(Some(tls), None).unwrap();
        assert_eq!(
            get(&options, "ssl.truststore.certificates"),
            Some("${strimzisecrets:ns/mm-connect-tls-trusted-certs:a.crt}")
        );
        assert_eq!(get(&options, "ssl.truststore.type"), Some("PEM"));
        assert_eq!(get(&options, "security.protocol"), Some("SSL"));
        // TLS without trusted certificates keeps the JVM's trust.
        let options = super::tests::options(Some(json!({})), None).unwrap();
        assert_eq!(get(&options, "ssl.truststore.certificates"), None);
        assert_eq!(get(&options, "security.protocol"), Some("SSL"));
    }

    #[test]
    fn tls_authentication_presents_the_users_certificate_from_its_secret() {
        let auth = json!({"type": "tls", "certificateAndKey": {"secretName": "user", "certificate": "user.crt", "key": "user.key"}});
        let options = options(Some(json!({})), Some(auth)).unwrap();
        assert_eq!(
            get(&options, "ssl.keystore.certificate.chain"),
            Some("${strimzisecrets:ns/user:user.crt}")
        );
        assert_eq!(
            get(&options, "ssl.keystore.key"),
            Some("${strimzisecrets:ns/user:user.key}")
        );
        assert_eq!(get(&options, "ssl.keystore.type"), Some("PEM"));
        assert_eq!(get(&options, "security.protocol"), Some("SSL"));
        let error = super::tests::options(None, Some(json!({"type": "tls"}))).unwrap_err();
        assert!(
            error.to_string().contains("spec.target.authentication"),
            "{error}"
        );
    }

    #[test]
    fn sasl_logins_read_the_password_at_run_time() {
        let auth = json!({"type": "scram-sha-512", "username": "mm", "passwordSecret": {"secretName": "mm", "password": "password"}});
        let options = options(Some(json!({})), Some(auth)).unwrap();
        assert_eq!(get(&options, "sasl.mechanism"), Some("SCRAM-SHA-512"));
        assert_eq!(
            get(&options, "sasl.jaas.config"),
            Some(
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"mm\" password=\"${strimzisecrets:ns/mm:password}\";"
            )
        );
        assert_eq!(get(&options, "security.protocol"), Some("SASL_SSL"));
        let plain = json!({"type": "plain", "username": "u", "passwordSecret": {"secretName": "s", "password": "p"}});
        let options = super::tests::options(None, Some(plain)).unwrap();
        assert_eq!(get(&options, "sasl.mechanism"), Some("PLAIN"));
        assert_eq!(get(&options, "security.protocol"), Some("SASL_PLAINTEXT"));
        let error = super::tests::options(
            None,
            Some(json!({"type": "scram-sha-256", "username": "u"})),
        )
        .unwrap_err();
        assert_eq!(error.reason(), "InvalidResourceException");
        assert!(error.to_string().contains("scram-sha-256"), "{error}");
    }

    #[test]
    fn custom_authentication_passes_its_options_and_may_be_sasl() {
        let auth = json!({"type": "custom", "sasl": true, "config": {"sasl.mechanism": "OAUTHBEARER", "retries": 3}});
        let options = options(Some(json!({})), Some(auth)).unwrap();
        assert_eq!(get(&options, "sasl.mechanism"), Some("OAUTHBEARER"));
        assert_eq!(get(&options, "retries"), Some("3"));
        assert_eq!(get(&options, "security.protocol"), Some("SASL_SSL"));
    }
}
