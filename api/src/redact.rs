//! Secrets kept out of what the operators print. The configuration every operator logs when it
//! starts shows each setting, except that a value that can hold a secret (a password, a
//! private key, a token, a SASL or JAAS setting, the credentials in a URL) prints as
//! [`REDACTED`]; error messages use the same marker for the values they hide.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

/// What a secret prints as.
pub const REDACTED: &str = "<redacted>";

/// Prints as [`REDACTED`]: stands in for a secret field in a `Debug` implementation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(REDACTED)
    }
}

/// The parts of a Kafka client property name that mark its value as secret (compared in lower
/// case): Kafka's password-typed settings (`ssl.key.password`, `ssl.keystore.password`,
/// `sasl.jaas.config`, `sasl.oauthbearer.client.credentials.client.secret`, ...) and anything
/// holding a token or private key material. It errs on the side of hiding.
const SECRET_PROPERTY_PARTS: [&str; 7] = [
    "password",
    "passphrase",
    "secret",
    "jaas",
    "token",
    "credential",
    "private",
];

/// Whether the value of the Kafka client property `key` can hold a secret: its name contains
/// `password`, `passphrase`, `secret`, `jaas`, `token`, `credential` or `private` (any case),
/// or ends in `.key` (PEM key material, `ssl.keystore.key`).
pub fn is_secret_property(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.ends_with(".key") || SECRET_PROPERTY_PARTS.iter().any(|part| key.contains(part))
}

/// Kafka client properties as a map in `Debug`, the values of secret ones
/// ([`is_secret_property`]) as [`REDACTED`].
pub struct RedactedProperties<'a>(pub &'a BTreeMap<String, String>);

impl fmt::Debug for RedactedProperties<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_map()
            .entries(self.0.iter().map(|(key, value)| {
                let value: &dyn fmt::Debug = if is_secret_property(key) {
                    &Redacted
                } else {
                    value
                };
                (key, value)
            }))
            .finish()
    }
}

/// `value` with the user information of a URL (`user:password` in
/// `http://user:password@proxy:3128`, or without the scheme) replaced by [`REDACTED`];
/// unchanged when there is none.
pub fn url_credentials(value: &str) -> Cow<'_, str> {
    let authority_start = value.find("://").map_or(0, |scheme_end| scheme_end + 3);
    let rest = &value[authority_start..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    match authority.rfind('@') {
        Some(at) => Cow::Owned(format!(
            "{}{REDACTED}{}",
            &value[..authority_start],
            &rest[at..]
        )),
        None => Cow::Borrowed(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_properties_are_told_by_their_names() {
        for secret in [
            "sasl.jaas.config",
            "ssl.key.password",
            "ssl.keystore.password",
            "SSL.TRUSTSTORE.PASSWORD",
            "ssl.keystore.key",
            "sasl.oauthbearer.client.credentials.client.secret",
            "sasl.oauthbearer.assertion.private.key.passphrase",
            "oauth.access.token",
        ] {
            assert!(is_secret_property(secret), "{secret}");
        }
        for plain in [
            "security.protocol",
            "sasl.mechanism",
            "ssl.keystore.location",
            "ssl.keystore.type",
            "ssl.endpoint.identification.algorithm",
            "request.timeout.ms",
        ] {
            assert!(!is_secret_property(plain), "{plain}");
        }
    }

    #[test]
    fn properties_print_with_their_secret_values_redacted() {
        let properties = BTreeMap::from([
            ("security.protocol".to_owned(), "SASL_SSL".to_owned()),
            (
                "sasl.jaas.config".to_owned(),
                "ScramLoginModule required username=\"u\" password=\"p4ss\";".to_owned(),
            ),
        ]);
        assert_eq!(
            format!("{:?}", RedactedProperties(&properties)),
            "{\"sasl.jaas.config\": <redacted>, \"security.protocol\": \"SASL_SSL\"}"
        );
    }

    #[test]
    fn url_credentials_are_redacted_and_the_rest_kept() {
        let cases = [
            (
                "http://user:p4ss@proxy.example:3128",
                "http://<redacted>@proxy.example:3128",
            ),
            (
                "https://user:p@ss@proxy:443/path?q=a@b",
                "https://<redacted>@proxy:443/path?q=a@b",
            ),
            ("user:p4ss@proxy:3128", "<redacted>@proxy:3128"),
            ("http://proxy:3128/a@b", "http://proxy:3128/a@b"),
            ("localhost,.svc,10.0.0.0/8", "localhost,.svc,10.0.0.0/8"),
            ("", ""),
        ];
        for (value, shown) in cases {
            assert_eq!(url_credentials(value), shown, "{value}");
        }
    }

    #[test]
    fn redacted_prints_the_marker() {
        assert_eq!(format!("{:?}", Some(Redacted)), "Some(<redacted>)");
    }
}
