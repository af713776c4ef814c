//! The worker configuration, `kafka-connect.properties`, in the sections and order Strimzi
//! writes it: bootstrap servers, TLS, authentication, config providers, the user's options
//! (forbidden ones dropped, Strimzi's defaults and the spec's group and topics added), the
//! REST listener, the plugin path, and the security protocol of the worker and of its
//! producers, consumers and admin clients.
//!
//! Secrets are never copied into the file: certificates and keys are read by the workers
//! through the Kubernetes Secret config provider, passwords from the mounted Secret through
//! the directory config provider.

use strimzi_api::common::KafkaClientAuthentication;

use super::{ConnectCluster, PASSWORD_MOUNT_PATH, REST_API_PORT, trusted_certificates_secret};
use crate::model::ModelWarning;
use crate::model::config::options::{FORBIDDEN_OPTION_REASON, Properties, config_value};

/// Prefixes of options the operator sets itself; a user option starting with one is dropped
/// with a warning.
const FORBIDDEN_PREFIXES: &[&str] = &[
    "ssl.",
    "sasl.",
    "security.",
    "listeners",
    "plugin.path",
    "rest.",
    "bootstrap.servers",
    "consumer.interceptor.classes",
    "producer.interceptor.classes",
];
/// Options allowed although a forbidden prefix covers them.
const FORBIDDEN_PREFIX_EXCEPTIONS: &[&str] = &[
    "ssl.endpoint.identification.algorithm",
    "ssl.cipher.suites",
    "ssl.protocol",
    "ssl.enabled.protocols",
];
/// Strimzi's defaults of the user options.
const DEFAULTS: &[(&str, &str)] = &[
    (
        "key.converter",
        "org.apache.kafka.connect.json.JsonConverter",
    ),
    (
        "value.converter",
        "org.apache.kafka.connect.json.JsonConverter",
    ),
];
/// The config providers the operator defines.
const STRIMZI_PROVIDERS: &str = "strimzienv,strimzifile,strimzidir,strimzisecrets";
/// The client prefixes each security option is repeated for.
const CLIENT_PREFIXES: [&str; 4] = ["", "producer.", "consumer.", "admin."];

/// Whether the operator sets `key` itself.
pub fn is_forbidden(key: &str) -> bool {
    FORBIDDEN_PREFIXES
        .iter()
        .any(|prefix| key.starts_with(prefix))
        && !FORBIDDEN_PREFIX_EXCEPTIONS.contains(&key)
}

/// The text of one section: its header and lines.
fn section(out: &mut String, name: &str, lines: &[String]) {
    out.push_str(&format!("##########\n# {name}\n##########\n"));
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}

/// Each of `options` repeated for the worker and its producers, consumers and admin
/// clients.
fn for_every_client(options: &[(&str, String)]) -> Vec<String> {
    CLIENT_PREFIXES
        .iter()
        .flat_map(|prefix| {
            options
                .iter()
                .map(move |(key, value)| format!("{prefix}{key}={value}"))
        })
        .collect()
}

impl ConnectCluster {
    /// `${strimzisecrets:<namespace>/<secret>:<key>}`.
    fn secret_reference(&self, secret: &str, key: &str) -> String {
        format!("${{strimzisecrets:{}/{secret}:{key}}}", self.namespace)
    }

    /// The user's options, without the forbidden ones, with Strimzi's defaults and the
    /// spec's group and storage topics; and a warning per dropped option.
    fn user_options(&self) -> (Properties, Vec<ModelWarning>) {
        let mut properties = Properties::from_pairs(DEFAULTS.iter().copied());
        let mut warnings = Vec::new();
        for (key, value) in self
            .spec
            .config
            .as_ref()
            .map(|config| &config.0)
            .into_iter()
            .flatten()
        {
            if is_forbidden(key) {
                warnings.push(ModelWarning::new(
                    FORBIDDEN_OPTION_REASON,
                    format!("Configuration option \"{key}\" is forbidden and will be ignored"),
                ));
                continue;
            }
            match config_value(value) {
                Some(text) => properties.set(key.clone(), text),
                None => warnings.push(ModelWarning::new(
                    FORBIDDEN_OPTION_REASON,
                    format!(
                        "Configuration option \"{key}\" has an unsupported value type (only \
                         strings, numbers and booleans are allowed) and will be ignored"
                    ),
                )),
            }
        }
        for (key, value) in [
            ("group.id", &self.spec.group_id),
            ("offset.storage.topic", &self.spec.offset_storage_topic),
            ("config.storage.topic", &self.spec.config_storage_topic),
            ("status.storage.topic", &self.spec.status_storage_topic),
        ] {
            if !value.is_empty() {
                properties.set(key.to_owned(), value.clone());
            }
        }
        (properties, warnings)
    }

    /// `kafka-connect.properties` and the warnings about dropped user options.
    pub fn worker_configuration(&self) -> (String, Vec<ModelWarning>) {
        let mut out = String::from(
            "##############################\n##############################\n\
             # This file is automatically generated by the Strimzi Cluster Operator\n\
             # Any changes to this file will be ignored and overwritten!\n\
             ##############################\n##############################\n\n",
        );
        section(
            &mut out,
            "Bootstrap servers",
            &[format!("bootstrap.servers={}", self.spec.bootstrap_servers)],
        );
        let mut tls = false;
        if let Some(client_tls) = &self.spec.tls {
            tls = true;
            if client_tls
                .trusted_certificates
                .as_ref()
                .is_some_and(|sources| !sources.is_empty())
            {
                let certificates = self
                    .secret_reference(&trusted_certificates_secret(&self.component_name), "*.crt");
                section(
                    &mut out,
                    "TLS / SSL",
                    &for_every_client(&[
                        ("ssl.truststore.certificates", certificates),
                        ("ssl.truststore.type", "PEM".to_owned()),
                    ]),
                );
            }
        }
        let mut sasl = false;
        if let Some(authentication) = &self.spec.authentication {
            let lines = self.authentication_lines(authentication, &mut sasl);
            section(&mut out, "Authentication configuration", &lines);
        }
        let (mut user, warnings) = self.user_options();
        let providers = match user.remove("config.providers") {
            Some(own) => (
                "# Configuration providers configured by the user and by Strimzi",
                format!("{own},{STRIMZI_PROVIDERS}"),
            ),
            None => (
                "# Configuration providers configured by Strimzi",
                STRIMZI_PROVIDERS.to_owned(),
            ),
        };
        section(
            &mut out,
            "Config providers",
            &[
                providers.0.to_owned(),
                format!("config.providers={}", providers.1),
                "config.providers.strimzienv.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider".to_owned(),
                "config.providers.strimzienv.param.allowlist.pattern=.*".to_owned(),
                "config.providers.strimzifile.class=org.apache.kafka.common.config.provider.FileConfigProvider".to_owned(),
                "config.providers.strimzidir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider".to_owned(),
                "config.providers.strimzidir.param.allowed.paths=/opt/kafka".to_owned(),
                "config.providers.strimzisecrets.class=io.strimzi.kafka.KubernetesSecretConfigProvider".to_owned(),
            ],
        );
        if !user.is_empty() {
            let text = user.write();
            section(
                &mut out,
                "Provided configurations",
                &text.lines().map(str::to_owned).collect::<Vec<_>>(),
            );
        }
        section(
            &mut out,
            "REST Listeners",
            &[
                "rest.advertised.host.name=${strimzienv:ADVERTISED_HOSTNAME}".to_owned(),
                format!("rest.advertised.port={REST_API_PORT}"),
            ],
        );
        section(
            &mut out,
            "Plugins",
            &["plugin.path=/opt/kafka/plugins".to_owned()],
        );
        let protocol = match (tls, sasl) {
            (false, false) => "PLAINTEXT",
            (true, false) => "SSL",
            (false, true) => "SASL_PLAINTEXT",
            (true, true) => "SASL_SSL",
        };
        section(
            &mut out,
            "Kafka Security protocol",
            &for_every_client(&[("security.protocol", protocol.to_owned())]),
        );
        (out, warnings)
    }

    /// The lines of the authentication section; sets `sasl` when the mechanism is SASL.
    fn authentication_lines(
        &self,
        authentication: &KafkaClientAuthentication,
        sasl: &mut bool,
    ) -> Vec<String> {
        let password_login =
            |module: &str, auth: &strimzi_api::common::KafkaClientAuthenticationPassword| {
                let username = auth.username.clone().unwrap_or_default();
                let password = auth
                    .password_secret
                    .as_ref()
                    .map(|secret| {
                        format!(
                            "${{strimzidir:{PASSWORD_MOUNT_PATH}{}:{}}}",
                            secret.secret_name, secret.password
                        )
                    })
                    .unwrap_or_default();
                format!("{module} required username=\"{username}\" password=\"{password}\";")
            };
        let sasl_lines = |mechanism: &str, jaas: String| {
            for_every_client(&[
                ("sasl.mechanism", mechanism.to_owned()),
                ("sasl.jaas.config", jaas),
            ])
        };
        match authentication {
            KafkaClientAuthentication::Tls(tls) => match &tls.certificate_and_key {
                Some(pair) => for_every_client(&[
                    (
                        "ssl.keystore.certificate.chain",
                        self.secret_reference(&pair.secret_name, &pair.certificate),
                    ),
                    (
                        "ssl.keystore.key",
                        self.secret_reference(&pair.secret_name, &pair.key),
                    ),
                    ("ssl.keystore.type", "PEM".to_owned()),
                ]),
                None => Vec::new(),
            },
            KafkaClientAuthentication::ScramSha256(auth) => {
                *sasl = true;
                sasl_lines(
                    "SCRAM-SHA-256",
                    password_login(
                        "org.apache.kafka.common.security.scram.ScramLoginModule",
                        auth,
                    ),
                )
            }
            KafkaClientAuthentication::ScramSha512(auth) => {
                *sasl = true;
                sasl_lines(
                    "SCRAM-SHA-512",
                    password_login(
                        "org.apache.kafka.common.security.scram.ScramLoginModule",
                        auth,
                    ),
                )
            }
            KafkaClientAuthentication::Plain(auth) => {
                *sasl = true;
                sasl_lines(
                    "PLAIN",
                    password_login(
                        "org.apache.kafka.common.security.plain.PlainLoginModule",
                        auth,
                    ),
                )
            }
            KafkaClientAuthentication::Custom(custom) => {
                *sasl = custom.sasl.unwrap_or(false);
                let options: Vec<(String, String)> = custom
                    .config
                    .as_ref()
                    .map(|config| &config.0)
                    .into_iter()
                    .flatten()
                    .filter_map(|(key, value)| Some((key.clone(), config_value(value)?)))
                    .collect();
                CLIENT_PREFIXES
                    .iter()
                    .flat_map(|prefix| {
                        options
                            .iter()
                            .map(move |(key, value)| format!("{prefix}{key}={value}"))
                    })
                    .collect()
            }
        }
    }
}
