//! The worker configuration, `kafka-connect.properties`, in the sections and order Strimzi
//! writes it: bootstrap servers, TLS, authentication, config providers, the user's options
//! (forbidden ones dropped, Strimzi's defaults and the spec's group and topics added), the
//! REST listener, the plugin path, and the security protocol of the worker and of its
//! producers, consumers and admin clients.
//!
//! The security options come from the shared [`ClientSecurity`] (TLS trust, authentication,
//! protocol): Secrets are never copied into the file, the workers read certificates, keys and
//! passwords through the Kubernetes Secret config provider.

use super::{ConnectCluster, REST_API_PORT, TrustLayout};
use crate::model::ModelWarning;
use crate::model::client_security::{ClientSecurity, ClientSecurityError, TrustedCertificates};
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
fn for_every_client(options: &[(String, String)]) -> Vec<String> {
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

    /// `kafka-connect.properties` and the warnings about dropped user options; an
    /// authentication section without its credentials is an error.
    pub fn worker_configuration(&self) -> Result<(String, Vec<ModelWarning>), ClientSecurityError> {
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
        let trusted_secret = self.trusted_certificates_secret();
        let trusted_key = match &self.trust {
            TrustLayout::PerCertificate => "*.crt",
            TrustLayout::PerCluster { worker_key, .. } => worker_key.as_str(),
        };
        let security = ClientSecurity {
            namespace: &self.namespace,
            tls: self.spec.tls.as_ref(),
            trusted: Some(TrustedCertificates {
                secret: &trusted_secret,
                key: trusted_key,
            }),
            authentication: self.spec.authentication.as_ref(),
            field: "spec",
        }
        .options()?;
        let (trust, rest): (Vec<_>, Vec<_>) = security
            .into_iter()
            .partition(|(key, _)| key.starts_with("ssl.truststore."));
        let (protocol, authentication): (Vec<_>, Vec<_>) = rest
            .into_iter()
            .partition(|(key, _)| key == "security.protocol");
        if !trust.is_empty() {
            section(&mut out, "TLS / SSL", &for_every_client(&trust));
        }
        if !authentication.is_empty() {
            section(
                &mut out,
                "Authentication configuration",
                &for_every_client(&authentication),
            );
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
        section(
            &mut out,
            "Kafka Security protocol",
            &for_every_client(&protocol),
        );
        Ok((out, warnings))
    }
}
