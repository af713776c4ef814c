//! The bridge's configuration, from the properties our operator generates
//! (`application.properties`, CONTRACT.md section 8) after placeholders were resolved: the
//! bridge's own keys (`bridge.*`), the HTTP server (`http.*`) and the Kafka clients'
//! options (`kafka.*`, `kafka.producer.*`, `kafka.consumer.*`), translated from the Java
//! client's names to librdkafka's. Pure.

use std::collections::BTreeMap;

/// A configuration the stand-in cannot run with; one line naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ConfigError {
    /// The key (or `--config-file`).
    pub key: String,
    /// What is wrong.
    pub message: String,
}

fn error(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.to_owned(),
        message: message.into(),
    }
}

/// `http.cors.*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cors {
    /// `http.cors.allowedOrigins`: origins (`*` for any).
    pub allowed_origins: Vec<String>,
    /// `http.cors.allowedMethods`.
    pub allowed_methods: Vec<String>,
}

/// `http.ssl.*`: the PEM files the API port serves HTTPS with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpTls {
    /// `http.ssl.certificate.location`.
    pub certificate: String,
    /// `http.ssl.key.location`.
    pub key: String,
    /// `http.ssl.enabled.protocols` (`TLSv1.2`, `TLSv1.3`); empty = both.
    pub protocols: Vec<String>,
    /// `http.ssl.enabled.cipher.suites` (IANA names); empty = the defaults.
    pub cipher_suites: Vec<String>,
}

/// `http.*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpConfig {
    /// `http.host`, default `0.0.0.0`.
    pub host: String,
    /// `http.port`, default 8080: the API.
    pub port: u16,
    /// `http.management.port`, default 8081: `/healthy`, `/ready`, `/metrics`.
    pub management_port: u16,
    /// CORS, when `http.cors.enabled=true`.
    pub cors: Option<Cors>,
    /// HTTPS, when `http.ssl.enable=true`.
    pub tls: Option<HttpTls>,
    /// `http.consumer.enabled`, default true.
    pub consumer_enabled: bool,
    /// `http.producer.enabled`, default true.
    pub producer_enabled: bool,
    /// `http.timeoutSeconds`: consumers idle longer are deleted; `None` (-1) = never.
    pub consumer_timeout_seconds: Option<u64>,
}

/// Everything the bridge runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeConfig {
    /// `bridge.id`.
    pub id: String,
    /// `bridge.metrics`: metrics on the management port when set.
    pub metrics: Option<String>,
    /// `bridge.tracing`: accepted; the stand-in does not trace.
    pub tracing: Option<String>,
    /// The HTTP server.
    pub http: HttpConfig,
    /// librdkafka settings of the producer.
    pub producer: Vec<(String, String)>,
    /// librdkafka settings every consumer starts from (the request adds its own).
    pub consumer: Vec<(String, String)>,
    /// librdkafka settings of the metadata client (`GET /topics`).
    pub admin: Vec<(String, String)>,
    /// `kafka.consumer.max.poll.records` (Java only): records per poll, default 500.
    pub max_poll_records: usize,
}

fn boolean(
    properties: &BTreeMap<String, String>,
    key: &str,
    default: bool,
) -> Result<bool, ConfigError> {
    match properties.get(key).map(|value| value.trim()) {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => Err(error(key, format!("{other:?} is not true or false"))),
    }
}

fn port(
    properties: &BTreeMap<String, String>,
    key: &str,
    default: u16,
) -> Result<u16, ConfigError> {
    properties.get(key).map_or(Ok(default), |value| {
        value
            .trim()
            .parse()
            .map_err(|_| error(key, format!("{value:?} is not a port number")))
    })
}

fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Java client options that librdkafka has no use for: dropped.
const JAVA_ONLY: [&str; 12] = [
    "ssl.truststore.type",
    "ssl.keystore.type",
    "ssl.enabled.protocols",
    "ssl.protocol",
    "key.serializer",
    "value.serializer",
    "key.deserializer",
    "value.deserializer",
    "metric.reporters",
    "prometheus.metrics.reporter.allowlist",
    "max.poll.records",
    "default.api.timeout.ms",
];

/// A login of `sasl.jaas.config` (`<module> required username="…" password="…";`).
fn jaas_login(jaas: &str, key: &str) -> Result<(String, String), ConfigError> {
    let module = jaas.split_whitespace().next().unwrap_or("");
    if !(module.ends_with(".ScramLoginModule") || module.ends_with(".PlainLoginModule")) {
        return Err(error(
            key,
            format!(
                "login module {module:?} is not supported by the bridge stand-in (SCRAM and \
                 PLAIN only)"
            ),
        ));
    }
    let option = |name: &str| -> Option<String> {
        let start = jaas.find(&format!("{name}=\""))? + name.len() + 2;
        let mut value = String::new();
        let mut chars = jaas[start..].chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => value.push(chars.next()?),
                '"' => return Some(value),
                c => value.push(c),
            }
        }
        None
    };
    let username = option("username").ok_or_else(|| error(key, "no username=\"…\""))?;
    let password = option("password").ok_or_else(|| error(key, "no password=\"…\""))?;
    Ok((username, password))
}

/// librdkafka settings for Java client options `options` (keys without the `kafka.`,
/// `kafka.producer.` … prefix; `prefix` is used in errors).
pub fn librdkafka_settings(
    options: &BTreeMap<String, String>,
    prefix: &str,
) -> Result<Vec<(String, String)>, ConfigError> {
    let mut settings = Vec::new();
    for (key, value) in options {
        let full = format!("{prefix}{key}");
        let pem_only = |type_key: &str| -> Result<(), ConfigError> {
            match options.get(type_key).map(String::as_str) {
                Some("PEM") => Ok(()),
                other => Err(error(
                    &format!("{prefix}{type_key}"),
                    format!("{other:?}: the bridge stand-in reads PEM stores only"),
                )),
            }
        };
        match key.as_str() {
            key if JAVA_ONLY.contains(&key) => {}
            "ssl.truststore.certificates" => {
                pem_only("ssl.truststore.type")?;
                settings.push(("ssl.ca.pem".to_owned(), value.clone()));
            }
            "ssl.truststore.location" => {
                pem_only("ssl.truststore.type")?;
                settings.push(("ssl.ca.location".to_owned(), value.clone()));
            }
            "ssl.keystore.certificate.chain" => {
                pem_only("ssl.keystore.type")?;
                settings.push(("ssl.certificate.pem".to_owned(), value.clone()));
            }
            "ssl.keystore.key" => {
                pem_only("ssl.keystore.type")?;
                settings.push(("ssl.key.pem".to_owned(), value.clone()));
            }
            "ssl.keystore.location" | "ssl.keystore.password" | "ssl.truststore.password" => {
                return Err(error(
                    &full,
                    "Java key stores are not supported by the bridge stand-in",
                ));
            }
            "ssl.endpoint.identification.algorithm" => {
                let value = if value.trim().is_empty() {
                    "none"
                } else {
                    value.as_str()
                };
                settings.push((key.clone(), value.to_owned()));
            }
            "sasl.jaas.config" => {
                let (username, password) = jaas_login(value, &full)?;
                settings.push(("sasl.username".to_owned(), username));
                settings.push(("sasl.password".to_owned(), password));
            }
            "partition.assignment.strategy" => {
                let mut names = Vec::new();
                for class in list(value) {
                    names.push(match class.rsplit('.').next().unwrap_or("") {
                        "RangeAssignor" => "range",
                        "RoundRobinAssignor" => "roundrobin",
                        "CooperativeStickyAssignor" => "cooperative-sticky",
                        _ => {
                            return Err(error(
                                &full,
                                format!("{class} has no librdkafka equivalent"),
                            ));
                        }
                    });
                }
                settings.push((key.clone(), names.join(",")));
            }
            _ => settings.push((key.clone(), value.clone())),
        }
    }
    Ok(settings)
}

/// The options under `prefix`, without it.
fn under(properties: &BTreeMap<String, String>, prefix: &str) -> BTreeMap<String, String> {
    properties
        .iter()
        .filter_map(|(key, value)| Some((key.strip_prefix(prefix)?.to_owned(), value.clone())))
        .collect()
}

/// Reads the bridge configuration from resolved properties.
pub fn from_properties(properties: &BTreeMap<String, String>) -> Result<BridgeConfig, ConfigError> {
    let id = properties
        .get("bridge.id")
        .cloned()
        .ok_or_else(|| error("bridge.id", "missing"))?;
    let host = properties
        .get("http.host")
        .cloned()
        .unwrap_or_else(|| "0.0.0.0".to_owned());
    let cors = if boolean(properties, "http.cors.enabled", false)? {
        let origins = properties
            .get("http.cors.allowedOrigins")
            .map(|value| list(value))
            .filter(|origins| !origins.is_empty())
            .ok_or_else(|| {
                error(
                    "http.cors.allowedOrigins",
                    "missing (http.cors.enabled=true)",
                )
            })?;
        let methods = properties
            .get("http.cors.allowedMethods")
            .map(|value| list(value))
            .filter(|methods| !methods.is_empty())
            .ok_or_else(|| {
                error(
                    "http.cors.allowedMethods",
                    "missing (http.cors.enabled=true)",
                )
            })?;
        Some(Cors {
            allowed_origins: origins,
            allowed_methods: methods,
        })
    } else {
        None
    };
    let tls = if boolean(properties, "http.ssl.enable", false)? {
        let file = |key: &str| {
            properties
                .get(key)
                .cloned()
                .ok_or_else(|| error(key, "missing (http.ssl.enable=true)"))
        };
        Some(HttpTls {
            certificate: file("http.ssl.certificate.location")?,
            key: file("http.ssl.key.location")?,
            protocols: properties
                .get("http.ssl.enabled.protocols")
                .map(|value| list(value))
                .unwrap_or_default(),
            cipher_suites: properties
                .get("http.ssl.enabled.cipher.suites")
                .map(|value| list(value))
                .unwrap_or_default(),
        })
    } else {
        None
    };
    let timeout = match properties.get("http.timeoutSeconds") {
        None => None,
        Some(value) => match value.trim().parse::<i64>() {
            Ok(seconds) if seconds < 0 => None,
            Ok(seconds) => Some(seconds.unsigned_abs()),
            Err(_) => {
                return Err(error(
                    "http.timeoutSeconds",
                    format!("{value:?} is not a number"),
                ));
            }
        },
    };
    let http = HttpConfig {
        host,
        port: port(properties, "http.port", 8080)?,
        management_port: port(properties, "http.management.port", 8081)?,
        cors,
        tls,
        consumer_enabled: boolean(properties, "http.consumer.enabled", true)?,
        producer_enabled: boolean(properties, "http.producer.enabled", true)?,
        consumer_timeout_seconds: timeout,
    };

    let common: BTreeMap<String, String> = properties
        .iter()
        .filter_map(|(key, value)| {
            let key = key.strip_prefix("kafka.")?;
            let own = ["admin.", "producer.", "consumer.", "config.providers"]
                .iter()
                .any(|prefix| key.starts_with(prefix));
            (!own).then(|| (key.to_owned(), value.clone()))
        })
        .collect();
    if !common.contains_key("bootstrap.servers") {
        return Err(error("kafka.bootstrap.servers", "missing"));
    }
    let with = |prefix: &str| -> Result<Vec<(String, String)>, ConfigError> {
        let mut options = common.clone();
        options.extend(under(properties, prefix));
        librdkafka_settings(&options, "kafka.")
    };
    let consumer_options = under(properties, "kafka.consumer.");
    let max_poll_records = match consumer_options.get("max.poll.records") {
        None => 500,
        Some(value) => value
            .trim()
            .parse()
            .ok()
            .filter(|records| *records > 0)
            .ok_or_else(|| {
                error(
                    "kafka.consumer.max.poll.records",
                    format!("{value:?} is not a positive number"),
                )
            })?,
    };
    let metrics = properties.get("bridge.metrics").cloned();
    if let Some(kind) = &metrics
        && kind != "jmxPrometheusExporter"
        && kind != "strimziMetricsReporter"
    {
        return Err(error(
            "bridge.metrics",
            format!("{kind:?} is not jmxPrometheusExporter or strimziMetricsReporter"),
        ));
    }
    Ok(BridgeConfig {
        id,
        metrics,
        tracing: properties.get("bridge.tracing").cloned(),
        http,
        producer: with("kafka.producer.")?,
        consumer: with("kafka.consumer.")?,
        admin: with("kafka.admin.")?,
        max_poll_records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn properties(lines: &[(&str, &str)]) -> BTreeMap<String, String> {
        lines
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn get<'a>(settings: &'a [(String, String)], key: &str) -> Option<&'a str> {
        settings
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    /// A resolved configuration as our operator writes it for TLS and SCRAM (CONTRACT.md 8).
    fn operator_config() -> BTreeMap<String, String> {
        properties(&[
            ("bridge.id", "web"),
            ("bridge.metrics", "jmxPrometheusExporter"),
            (
                "bridge.metrics.exporter.config.path",
                "/opt/strimzi/custom-config/metrics-config.json",
            ),
            ("kafka.bootstrap.servers", "br-kafka-bootstrap:9093"),
            ("kafka.ssl.truststore.certificates", "CA PEM"),
            ("kafka.ssl.truststore.type", "PEM"),
            ("kafka.sasl.mechanism", "SCRAM-SHA-512"),
            (
                "kafka.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required \
                 username=\"web-user\" password=\"p\\\"4ss\";",
            ),
            ("kafka.security.protocol", "SASL_SSL"),
            ("kafka.config.providers", "strimzienv"),
            ("kafka.producer.acks", "1"),
            ("kafka.consumer.client.rack", "rack-1"),
            ("kafka.consumer.max.poll.records", "100"),
            ("http.host", "0.0.0.0"),
            ("http.port", "8080"),
            ("http.management.port", "8081"),
            ("http.cors.enabled", "false"),
            ("http.consumer.enabled", "true"),
            ("http.timeoutSeconds", "-1"),
            ("http.producer.enabled", "true"),
        ])
    }

    #[test]
    fn the_operators_configuration_is_translated_for_librdkafka() {
        let config = from_properties(&operator_config()).unwrap();
        assert_eq!(config.id, "web");
        assert_eq!(config.metrics.as_deref(), Some("jmxPrometheusExporter"));
        assert_eq!(config.http.port, 8080);
        assert_eq!(config.http.management_port, 8081);
        assert_eq!(config.http.consumer_timeout_seconds, None);
        assert!(config.http.consumer_enabled && config.http.producer_enabled);
        assert_eq!(config.max_poll_records, 100);
        let producer = &config.producer;
        assert_eq!(
            get(producer, "bootstrap.servers"),
            Some("br-kafka-bootstrap:9093")
        );
        assert_eq!(get(producer, "ssl.ca.pem"), Some("CA PEM"));
        assert_eq!(get(producer, "security.protocol"), Some("SASL_SSL"));
        assert_eq!(get(producer, "sasl.mechanism"), Some("SCRAM-SHA-512"));
        assert_eq!(get(producer, "sasl.username"), Some("web-user"));
        assert_eq!(get(producer, "sasl.password"), Some("p\"4ss"));
        assert_eq!(get(producer, "acks"), Some("1"));
        assert_eq!(get(producer, "client.rack"), None);
        assert_eq!(get(producer, "ssl.truststore.type"), None);
        assert_eq!(get(producer, "config.providers"), None);
        assert_eq!(get(&config.consumer, "client.rack"), Some("rack-1"));
        assert_eq!(get(&config.consumer, "acks"), None);
        assert_eq!(get(&config.consumer, "max.poll.records"), None);
    }

    #[test]
    fn mutual_tls_pem_options_become_librdkafka_pem_options() {
        let options = properties(&[
            ("ssl.keystore.certificate.chain", "CERT"),
            ("ssl.keystore.key", "KEY"),
            ("ssl.keystore.type", "PEM"),
            ("ssl.endpoint.identification.algorithm", ""),
            (
                "partition.assignment.strategy",
                "org.apache.kafka.clients.consumer.RoundRobinAssignor",
            ),
        ]);
        let settings = librdkafka_settings(&options, "kafka.").unwrap();
        assert_eq!(get(&settings, "ssl.certificate.pem"), Some("CERT"));
        assert_eq!(get(&settings, "ssl.key.pem"), Some("KEY"));
        assert_eq!(
            get(&settings, "ssl.endpoint.identification.algorithm"),
            Some("none")
        );
        assert_eq!(
            get(&settings, "partition.assignment.strategy"),
            Some("roundrobin")
        );
    }

    #[test]
    fn https_cors_and_idle_timeouts_are_read() {
        let mut properties = operator_config();
        for (key, value) in [
            ("http.ssl.enable", "true"),
            (
                "http.ssl.certificate.location",
                "/opt/strimzi/bridge-certs/s/tls.crt",
            ),
            (
                "http.ssl.key.location",
                "/opt/strimzi/bridge-certs/s/tls.key",
            ),
            ("http.ssl.enabled.protocols", "TLSv1.3"),
            ("http.cors.enabled", "true"),
            (
                "http.cors.allowedOrigins",
                "https://a.example,https://b.example",
            ),
            ("http.cors.allowedMethods", "GET,POST"),
            ("http.timeoutSeconds", "30"),
        ] {
            properties.insert(key.into(), value.into());
        }
        let config = from_properties(&properties).unwrap();
        assert_eq!(
            config.http.tls,
            Some(HttpTls {
                certificate: "/opt/strimzi/bridge-certs/s/tls.crt".into(),
                key: "/opt/strimzi/bridge-certs/s/tls.key".into(),
                protocols: vec!["TLSv1.3".into()],
                cipher_suites: Vec::new(),
            })
        );
        assert_eq!(config.http.cors.unwrap().allowed_origins.len(), 2);
        assert_eq!(config.http.consumer_timeout_seconds, Some(30));
    }

    #[test]
    fn what_is_missing_or_malformed_names_the_key() {
        let cases: [(&str, Option<&str>, &str); 9] = [
            ("bridge.id", None, "bridge.id: missing"),
            (
                "kafka.bootstrap.servers",
                None,
                "kafka.bootstrap.servers: missing",
            ),
            (
                "http.port",
                Some("eighty"),
                "http.port: \"eighty\" is not a port number",
            ),
            (
                "http.consumer.enabled",
                Some("yes"),
                "http.consumer.enabled: \"yes\" is not true or false",
            ),
            (
                "http.timeoutSeconds",
                Some("soon"),
                "http.timeoutSeconds: \"soon\" is not a number",
            ),
            (
                "http.ssl.enable",
                Some("true"),
                "http.ssl.certificate.location: missing (http.ssl.enable=true)",
            ),
            (
                "kafka.ssl.truststore.type",
                Some("JKS"),
                "kafka.ssl.truststore.type: Some(\"JKS\"): the bridge stand-in reads PEM stores only",
            ),
            (
                "kafka.sasl.jaas.config",
                Some(
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
                ),
                "kafka.sasl.jaas.config: login module \"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule\" is not supported",
            ),
            (
                "bridge.metrics",
                Some("statsd"),
                "bridge.metrics: \"statsd\" is not",
            ),
        ];
        for (key, value, expected) in cases {
            let mut properties = operator_config();
            match value {
                Some(value) => properties.insert(key.into(), value.into()),
                None => properties.remove(key),
            };
            let error = from_properties(&properties).unwrap_err().to_string();
            assert!(
                error.starts_with(expected),
                "{key}: {error:?} vs {expected:?}"
            );
        }
    }
}
