//! KafkaMirrorMaker2 the way Strimzi 1.2 runs it: a Kafka Connect cluster whose workers use
//! the target cluster (its bootstrap, group, storage topics, TLS and authentication), running
//! one `MirrorSourceConnector` and one `MirrorCheckpointConnector` per mirror, each
//! configured with both clusters' connection options.
//!
//! Pure: the resource in, the Connect cluster's spec and the connectors' specs out. The
//! connectors are driven exactly like KafkaConnectors, under the names Strimzi gives them
//! (`<source>-><target>.MirrorSourceConnector`).

use std::collections::BTreeMap;

use serde_json::Value;
use strimzi_api::common::{MetricsConfig, Tracing};
use strimzi_api::connect::KafkaConnectSpec;
use strimzi_api::connector::KafkaConnectorSpec;
use strimzi_api::mirror_maker2::{
    KafkaMirrorMaker2ClusterSpec, KafkaMirrorMaker2ConnectorSpec, KafkaMirrorMaker2MirrorSpec,
    KafkaMirrorMaker2Spec,
};
use strimzi_api::schema::FreeFormMap;

use kube::Resource;
use strimzi_api::common::KafkaClientAuthentication;
use strimzi_api::connect::KafkaConnect;
use strimzi_api::mirror_maker2::KafkaMirrorMaker2;
use strimzi_api::selectors::owner_reference;

use crate::model::client_security::{ClientSecurity, ClientSecurityError, TrustedCertificates};
use crate::model::connect::{ClusterTrust, ConnectCluster, TrustLayout};
use crate::model::containers::env;
use crate::model::{ModelConfig, ModelError};

/// Value of the `strimzi.io/kind`-adjacent component type label (`app.kubernetes.io/name`).
pub const COMPONENT_TYPE: &str = "kafka-mirror-maker-2";
/// The workers' environment variable listing the cluster aliases.
pub const CLUSTERS_ENV: &str = "KAFKA_MIRRORMAKER_2_CLUSTERS";
/// The converter MirrorMaker 2's workers use unless told otherwise: records are copied byte
/// for byte.
pub const BYTE_ARRAY_CONVERTER: &str = "org.apache.kafka.connect.converters.ByteArrayConverter";
/// The Java package of MirrorMaker 2's connectors, which ship with Kafka.
const CONNECTOR_PACKAGE: &str = "org.apache.kafka.connect.mirror";
/// The properties file the Connect container writes at start; rack-aware connectors read
/// `consumer.client.rack` from it through the `strimzifile` config provider.
const CONNECT_CONFIG_FILE: &str = "/tmp/strimzi-connect.properties";
/// Interceptors that trace the connectors' consumers and producers with OpenTelemetry.
const TRACING_CONSUMER_INTERCEPTOR: &str =
    "io.opentelemetry.instrumentation.kafkaclients.v2_6.TracingConsumerInterceptor";
const TRACING_PRODUCER_INTERCEPTOR: &str =
    "io.opentelemetry.instrumentation.kafkaclients.v2_6.TracingProducerInterceptor";
/// The Strimzi Metrics Reporter's class for clients; the connectors' metrics join the
/// workers' registry, served by the workers' listener.
const CLIENT_METRICS_REPORTER: &str = "io.strimzi.kafka.metrics.prometheus.ClientMetricsReporter";

/// The two kinds of connectors a mirror runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorConnectorKind {
    /// Copies topics, their data and configuration.
    Source,
    /// Translates consumer group offsets into the target.
    Checkpoint,
}

impl MirrorConnectorKind {
    /// The connector's class name without its package.
    pub fn class_name(self) -> &'static str {
        match self {
            Self::Source => "MirrorSourceConnector",
            Self::Checkpoint => "MirrorCheckpointConnector",
        }
    }

    fn spec(self, mirror: &KafkaMirrorMaker2MirrorSpec) -> Option<&KafkaMirrorMaker2ConnectorSpec> {
        match self {
            Self::Source => mirror.source_connector.as_ref(),
            Self::Checkpoint => mirror.checkpoint_connector.as_ref(),
        }
    }

    /// The field of the mirror holding the connector's spec.
    fn field(self) -> &'static str {
        match self {
            Self::Source => "sourceConnector",
            Self::Checkpoint => "checkpointConnector",
        }
    }
}

/// One connector of a mirror, as a KafkaConnector would describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct MirrorConnector {
    /// `<source alias>-><target alias>.<class name>`, the connector's name in Connect.
    pub name: String,
    /// Which connector it is.
    pub kind: MirrorConnectorKind,
    /// Where its spec is in the resource, e.g. `spec.mirrors[0].sourceConnector`.
    pub field: String,
    /// Class, tasks, state, automatic restarts, offsets and the full configuration.
    pub spec: KafkaConnectorSpec,
}

/// Why a KafkaMirrorMaker2 cannot be turned into a Connect cluster with connectors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MirrorMaker2Error {
    /// Two clusters share an alias, so connector names and replicated topics would clash.
    #[error("{field}: the alias {alias:?} is already used by {first}")]
    DuplicateAlias {
        /// The alias.
        alias: String,
        /// Where it is used first.
        first: String,
        /// Where it is used again.
        field: String,
    },
    /// A topics or groups pattern that Java cannot compile, so the connectors would fail.
    #[error("{field}: {pattern:?} is not a valid regular expression: {problem}")]
    InvalidPattern {
        /// The pattern's field, e.g. `spec.mirrors[0].topicsPattern`.
        field: String,
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A cluster's TLS or authentication section is incomplete.
    #[error(transparent)]
    ClientSecurity(#[from] ClientSecurityError),
}

impl MirrorMaker2Error {
    /// Stable reason for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::DuplicateAlias { .. } | Self::InvalidPattern { .. } => "InvalidResourceException",
            Self::ClientSecurity(error) => error.reason(),
        }
    }
}

/// The name of the Connect cluster's pods, StrimziPodSet and ServiceAccount.
pub fn component_name(name: &str) -> String {
    format!("{name}-mirrormaker2")
}

/// The name of the REST API's Service.
pub fn service_name(name: &str) -> String {
    format!("{name}-mirrormaker2-api")
}

/// The name of the workers' configuration ConfigMap.
pub fn config_map_name(name: &str) -> String {
    format!("{name}-mirrormaker2-config")
}

/// The Secret in which the operator gathers the trusted certificates of every cluster, one
/// key per alias ([`trusted_certificates_key`]). Strimzi names it as a Connect cluster's.
pub fn trusted_certificates_secret(name: &str) -> String {
    format!("{name}-connect-tls-trusted-certs")
}

/// The key of `alias`'s trusted certificates in [`trusted_certificates_secret`].
pub fn trusted_certificates_key(alias: &str) -> String {
    format!("{alias}.crt")
}

/// The key of connector `connector`'s offsets in the ConfigMaps of its `listOffsets` and
/// `alterOffsets`: its name with `->` written `--` (not allowed in a key), then `.json`.
pub fn offsets_key(connector: &str) -> String {
    format!("{}.json", connector.replace("->", "--"))
}

/// `KAFKA_MIRRORMAKER_2_CLUSTERS`: the aliases of the target and then the sources, joined
/// with `;`.
pub fn cluster_aliases(spec: &KafkaMirrorMaker2Spec) -> String {
    clusters(spec)
        .map(|(_, cluster)| cluster.alias.as_str())
        .collect::<Vec<_>>()
        .join(";")
}

/// The target and the sources, with where each is in the resource.
fn clusters(spec: &KafkaMirrorMaker2Spec) -> impl Iterator<Item = (String, ClusterRef<'_>)> {
    std::iter::once(("spec.target".to_owned(), ClusterRef::target(spec))).chain(
        spec.mirrors.iter().enumerate().map(|(index, mirror)| {
            (
                format!("spec.mirrors[{index}].source"),
                ClusterRef::from(&mirror.source),
            )
        }),
    )
}

/// The connection settings shared by the target and the source clusters.
struct ClusterRef<'a> {
    alias: &'a String,
    bootstrap_servers: &'a str,
    tls: Option<&'a strimzi_api::common::ClientTls>,
    authentication: Option<&'a strimzi_api::common::KafkaClientAuthentication>,
    config: Option<&'a FreeFormMap>,
}

impl<'a> ClusterRef<'a> {
    /// The target cluster's connection settings.
    fn target(spec: &'a KafkaMirrorMaker2Spec) -> Self {
        Self {
            alias: &spec.target.alias,
            bootstrap_servers: &spec.target.bootstrap_servers,
            tls: spec.target.tls.as_ref(),
            authentication: spec.target.authentication.as_ref(),
            config: spec.target.config.as_ref(),
        }
    }
}

impl<'a> From<&'a KafkaMirrorMaker2ClusterSpec> for ClusterRef<'a> {
    fn from(cluster: &'a KafkaMirrorMaker2ClusterSpec) -> Self {
        Self {
            alias: &cluster.alias,
            bootstrap_servers: &cluster.bootstrap_servers,
            tls: cluster.tls.as_ref(),
            authentication: cluster.authentication.as_ref(),
            config: cluster.config.as_ref(),
        }
    }
}

/// The Connect cluster MirrorMaker 2 runs on: the target cluster's connection and worker
/// settings with the resource's pod settings.
pub fn connect_spec(spec: &KafkaMirrorMaker2Spec) -> KafkaConnectSpec {
    let target = &spec.target;
    KafkaConnectSpec {
        version: spec.version.clone(),
        replicas: spec.replicas,
        image: spec.image.clone(),
        bootstrap_servers: target.bootstrap_servers.clone(),
        group_id: target.group_id.clone(),
        config_storage_topic: target.config_storage_topic.clone(),
        status_storage_topic: target.status_storage_topic.clone(),
        offset_storage_topic: target.offset_storage_topic.clone(),
        tls: target.tls.clone(),
        authentication: target.authentication.clone(),
        config: target.config.clone(),
        resources: spec.resources.clone(),
        liveness_probe: spec.liveness_probe.clone(),
        readiness_probe: spec.readiness_probe.clone(),
        jvm_options: spec.jvm_options.clone(),
        jmx_options: spec.jmx_options.clone(),
        logging: spec.logging.clone(),
        client_rack_init_image: spec.client_rack_init_image.clone(),
        rack: spec.rack.clone(),
        metrics_config: spec.metrics_config.clone(),
        tracing: spec.tracing.clone(),
        template: spec.template.clone(),
        build: None,
        plugins: None,
    }
}

/// The connectors of every mirror, in the order of the mirrors (source before checkpoint),
/// for the KafkaMirrorMaker2 `name` in `namespace`.
pub fn connectors(
    namespace: &str,
    name: &str,
    spec: &KafkaMirrorMaker2Spec,
) -> Result<Vec<MirrorConnector>, MirrorMaker2Error> {
    check_aliases(spec)?;
    check_patterns(spec)?;
    let trusted_secret = trusted_certificates_secret(name);
    let target = ClusterRef::target(spec);
    let mut connectors = Vec::new();
    for (index, mirror) in spec.mirrors.iter().enumerate() {
        let source = ClusterRef::from(&mirror.source);
        let mut clusters_config = Vec::new();
        for (prefix, field, cluster) in [
            ("target.cluster.", "spec.target".to_owned(), &target),
            (
                "source.cluster.",
                format!("spec.mirrors[{index}].source"),
                &source,
            ),
        ] {
            clusters_config.extend(
                cluster_options(namespace, &trusted_secret, &field, cluster)?
                    .into_iter()
                    .map(|(key, value)| (format!("{prefix}{key}"), value)),
            );
        }
        for kind in [MirrorConnectorKind::Source, MirrorConnectorKind::Checkpoint] {
            let Some(connector) = kind.spec(mirror) else {
                continue;
            };
            let mut config: BTreeMap<String, Value> = clusters_config
                .iter()
                .map(|(key, value)| (key.clone(), Value::String(value.clone())))
                .collect();
            config.extend(connector.config.iter().flat_map(|c| c.0.clone()));
            config.extend(mirror_options(spec, mirror));
            connectors.push(MirrorConnector {
                name: format!(
                    "{}->{}.{}",
                    mirror.source.alias,
                    spec.target.alias,
                    kind.class_name()
                ),
                kind,
                field: format!("spec.mirrors[{index}].{}", kind.field()),
                spec: KafkaConnectorSpec {
                    class: Some(format!("{CONNECTOR_PACKAGE}.{}", kind.class_name())),
                    tasks_max: connector.tasks_max,
                    auto_restart: connector.auto_restart.clone(),
                    version: connector.version.clone(),
                    config: Some(FreeFormMap(config)),
                    state: connector.state,
                    list_offsets: connector.list_offsets.clone(),
                    alter_offsets: connector.alter_offsets.clone(),
                },
            });
        }
    }
    Ok(connectors)
}

/// No alias may name two clusters.
fn check_aliases(spec: &KafkaMirrorMaker2Spec) -> Result<(), MirrorMaker2Error> {
    let mut seen: BTreeMap<&str, String> = BTreeMap::new();
    for (field, cluster) in clusters(spec) {
        if let Some(first) = seen.get(cluster.alias.as_str()) {
            return Err(MirrorMaker2Error::DuplicateAlias {
                alias: cluster.alias.clone(),
                first: first.clone(),
                field,
            });
        }
        seen.insert(cluster.alias.as_str(), field);
    }
    Ok(())
}

/// The connectors' `topics`, `topics.exclude`, `groups` and `groups.exclude` options of
/// `mirror`, with the fields they come from.
fn patterns(
    mirror: &KafkaMirrorMaker2MirrorSpec,
) -> [(&'static str, &'static str, Option<&String>); 4] {
    [
        ("topics", "topicsPattern", mirror.topics_pattern.as_ref()),
        (
            "topics.exclude",
            "topicsExcludePattern",
            mirror.topics_exclude_pattern.as_ref(),
        ),
        ("groups", "groupsPattern", mirror.groups_pattern.as_ref()),
        (
            "groups.exclude",
            "groupsExcludePattern",
            mirror.groups_exclude_pattern.as_ref(),
        ),
    ]
}

/// Every pattern must compile as the connectors compile it: Kafka reads the option as a
/// comma-separated list and joins its items with `|` into one Java regular expression.
fn check_patterns(spec: &KafkaMirrorMaker2Spec) -> Result<(), MirrorMaker2Error> {
    for (index, mirror) in spec.mirrors.iter().enumerate() {
        for (_, name, pattern) in patterns(mirror) {
            let Some(pattern) = pattern else { continue };
            let joined = pattern
                .split(',')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("|");
            if let Some(problem) = java_regex_problem(&joined) {
                return Err(MirrorMaker2Error::InvalidPattern {
                    field: format!("spec.mirrors[{index}].{name}"),
                    pattern: pattern.clone(),
                    problem,
                });
            }
        }
    }
    Ok(())
}

/// A mistake that makes Java's `Pattern.compile` refuse `pattern` for certain: an unclosed
/// character class or group, a `)` closing nothing, a trailing `\`, or `*`/`+` with nothing
/// to repeat. Only these are looked for, so no pattern Java accepts is refused; patterns in
/// comments mode (`(?x)`), where `#` starts a comment, are not looked at.
fn java_regex_problem(pattern: &str) -> Option<&'static str> {
    let comments_mode = pattern.match_indices("(?").any(|(at, _)| {
        pattern[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic() || *c == '-')
            .any(|c| c == 'x')
    });
    if comments_mode {
        return None;
    }
    let mut chars = pattern.chars().peekable();
    let mut groups = 0usize;
    let mut classes = 0usize;
    // Inside `\Q...\E`, everything is literal.
    let mut quoted = false;
    // At the start of a class (after `[` or `[^`), a `]` is literal.
    let mut class_start = false;
    // At the start of the pattern, of a group or of an alternative: nothing to repeat yet.
    let mut term_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '\\' && chars.peek() == Some(&'E') {
                chars.next();
                quoted = false;
            }
            continue;
        }
        let first_in_class = std::mem::take(&mut class_start);
        let at_term_start = std::mem::take(&mut term_start);
        match c {
            '\\' => match chars.next() {
                None => return Some("it ends with an unfinished escape `\\`"),
                Some('Q') => quoted = true,
                Some(_) => {}
            },
            '[' => {
                classes += 1;
                if chars.peek() == Some(&'^') {
                    chars.next();
                }
                class_start = true;
            }
            ']' if classes > 0 && !first_in_class => classes -= 1,
            _ if classes > 0 => {}
            '(' => {
                groups += 1;
                term_start = chars.peek() != Some(&'?');
            }
            ')' if groups == 0 => return Some("a `)` closes no group"),
            ')' => groups -= 1,
            '|' => term_start = true,
            '*' | '+' if at_term_start => return Some("a `*` or `+` has nothing to repeat"),
            _ => {}
        }
    }
    if classes > 0 {
        Some("a `[` character class is not closed")
    } else if groups > 0 {
        Some("a `(` group is not closed")
    } else {
        None
    }
}

/// A cluster's options, to be prefixed with `source.cluster.` or `target.cluster.`: alias,
/// bootstrap, security, then the cluster's own `config`.
fn cluster_options(
    namespace: &str,
    trusted_secret: &str,
    field: &str,
    cluster: &ClusterRef<'_>,
) -> Result<Vec<(String, String)>, ClientSecurityError> {
    let trusted_key = trusted_certificates_key(cluster.alias);
    let mut options = vec![
        ("alias".to_owned(), cluster.alias.clone()),
        (
            "bootstrap.servers".to_owned(),
            cluster.bootstrap_servers.to_owned(),
        ),
    ];
    options.extend(
        ClientSecurity {
            namespace,
            tls: cluster.tls,
            trusted: Some(TrustedCertificates {
                secret: trusted_secret,
                key: &trusted_key,
            }),
            authentication: cluster.authentication,
            field,
        }
        .options()?,
    );
    options.extend(
        cluster
            .config
            .iter()
            .flat_map(|config| &config.0)
            .map(|(key, value)| {
                (
                    key.clone(),
                    crate::model::client_security::option_value(value),
                )
            }),
    );
    Ok(options)
}

/// The options every connector of `mirror` gets after its own: the topic and group
/// patterns, tracing interceptors, the rack of the consumers, the metrics reporter.
fn mirror_options(
    spec: &KafkaMirrorMaker2Spec,
    mirror: &KafkaMirrorMaker2MirrorSpec,
) -> Vec<(String, Value)> {
    let mut options = Vec::new();
    for (key, _, pattern) in patterns(mirror) {
        if let Some(pattern) = pattern {
            options.push((key.to_owned(), Value::String(pattern.clone())));
        }
    }
    if let Some(Tracing::OpenTelemetry(_)) = &spec.tracing {
        options.push((
            "consumer.interceptor.classes".to_owned(),
            Value::String(TRACING_CONSUMER_INTERCEPTOR.to_owned()),
        ));
        options.push((
            "producer.interceptor.classes".to_owned(),
            Value::String(TRACING_PRODUCER_INTERCEPTOR.to_owned()),
        ));
    }
    if spec.rack.is_some() {
        let key = "consumer.client.rack";
        options.push((
            key.to_owned(),
            Value::String(format!("${{strimzifile:{CONNECT_CONFIG_FILE}:{key}}}")),
        ));
    }
    if let Some(MetricsConfig::StrimziMetricsReporter(_)) = &spec.metrics_config {
        let user_reporters = mirror_connector_reporters(mirror);
        let reporters = match user_reporters {
            Some(existing) if !existing.contains(CLIENT_METRICS_REPORTER) => {
                format!("{existing},{CLIENT_METRICS_REPORTER}")
            }
            _ => CLIENT_METRICS_REPORTER.to_owned(),
        };
        options.push(("metric.reporters".to_owned(), Value::String(reporters)));
        options.push((
            "prometheus.metrics.reporter.listener.enable".to_owned(),
            Value::String("false".to_owned()),
        ));
    }
    options
}

/// `metric.reporters` as the user set it for the mirror's source connector, if at all.
fn mirror_connector_reporters(mirror: &KafkaMirrorMaker2MirrorSpec) -> Option<String> {
    mirror
        .source_connector
        .as_ref()
        .or(mirror.checkpoint_connector.as_ref())
        .and_then(|connector| connector.config.as_ref())
        .and_then(|config| config.0.get("metric.reporters"))
        .map(crate::model::client_security::option_value)
}

/// The Connect cluster a KafkaMirrorMaker2 runs on: [`connect_spec`] under the MirrorMaker 2
/// names and labels, owned by the resource, with every cluster's trusted certificates in
/// [`trusted_certificates_secret`] (`<alias>.crt`, the workers trusting the target's), every
/// cluster's client certificate and password Secrets readable by the pods, and
/// `KAFKA_MIRRORMAKER_2_CLUSTERS`. The workers run the operator's MirrorMaker 2 image of the
/// version.
pub fn connect_cluster(
    mirror_maker2: &KafkaMirrorMaker2,
    config: &ModelConfig,
) -> Result<ConnectCluster, ModelError> {
    let name = mirror_maker2.metadata.name.clone().unwrap_or_default();
    let spec = &mirror_maker2.spec;
    let connect = KafkaConnect {
        metadata: mirror_maker2.metadata.clone(),
        spec: connect_spec(spec),
        status: None,
    };
    let mut cluster = ConnectCluster::with_images(
        &connect,
        config,
        &KafkaMirrorMaker2::kind(&()),
        &config.mirror_maker2_images,
        "STRIMZI_KAFKA_MIRROR_MAKER_2_IMAGES",
    )?;
    cluster.component_type = COMPONENT_TYPE.to_owned();
    cluster.component_name = component_name(&name);
    cluster.api_service_name = service_name(&name);
    cluster.owner = owner_reference(mirror_maker2);
    // Records are copied as they are: the converters default to bytes in and bytes out.
    let worker_config = &mut cluster
        .spec
        .config
        .get_or_insert_with(|| FreeFormMap(BTreeMap::new()))
        .0;
    for key in ["header.converter", "key.converter", "value.converter"] {
        worker_config
            .entry(key.to_owned())
            .or_insert_with(|| Value::String(BYTE_ARRAY_CONVERTER.to_owned()));
    }
    let mut secrets = Vec::new();
    for (_, other) in clusters(spec) {
        match other.authentication {
            Some(KafkaClientAuthentication::Tls(tls)) => {
                secrets.extend(
                    tls.certificate_and_key
                        .iter()
                        .map(|pair| pair.secret_name.clone()),
                );
            }
            Some(
                KafkaClientAuthentication::ScramSha256(auth)
                | KafkaClientAuthentication::ScramSha512(auth)
                | KafkaClientAuthentication::Plain(auth),
            ) => {
                secrets.extend(
                    auth.password_secret
                        .iter()
                        .map(|secret| secret.secret_name.clone()),
                );
            }
            _ => {}
        }
    }
    cluster.trust = TrustLayout::PerCluster {
        secret: trusted_certificates_secret(&name),
        worker_key: trusted_certificates_key(&spec.target.alias),
        clusters: clusters(spec)
            .map(|(field, other)| ClusterTrust {
                key: trusted_certificates_key(other.alias),
                field,
                sources: other
                    .tls
                    .and_then(|tls| tls.trusted_certificates.clone())
                    .unwrap_or_default(),
            })
            .collect(),
        secrets,
    };
    cluster.extra_env = vec![env(CLUSTERS_ENV, cluster_aliases(spec))];
    Ok(cluster)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(value: Value) -> KafkaMirrorMaker2Spec {
        serde_json::from_value(value).unwrap()
    }

    /// Strimzi's `kafka-mirror-maker-2.yaml` example's spec.
    fn example() -> KafkaMirrorMaker2Spec {
        let path = strimzi_tests::reference::reference_examples_dir()
            .join("mirror-maker/kafka-mirror-maker-2.yaml");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let document: Value = serde_yaml_ng::from_str(&text).unwrap();
        spec(document["spec"].clone())
    }

    fn text<'a>(connector: &'a MirrorConnector, key: &str) -> Option<&'a str> {
        connector.spec.config.as_ref()?.0.get(key)?.as_str()
    }

    #[test]
    fn the_example_runs_a_source_and_a_checkpoint_connector_on_the_target() {
        let spec = example();
        let connect = connect_spec(&spec);
        assert_eq!(connect.bootstrap_servers, "cluster-b-kafka-bootstrap:9092");
        assert_eq!(connect.group_id, "my-mirror-maker-2-group");
        assert_eq!(connect.config_storage_topic, "__my-mirror-maker-2-config");
        assert_eq!(connect.replicas, 1);
        assert_eq!(cluster_aliases(&spec), "cluster-b;cluster-a");
        let connectors = connectors("ns", "my-mirror-maker-2", &spec).unwrap();
        let names: Vec<_> = connectors.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cluster-a->cluster-b.MirrorSourceConnector",
                "cluster-a->cluster-b.MirrorCheckpointConnector"
            ]
        );
        let source = &connectors[0];
        assert_eq!(
            source.spec.class.as_deref(),
            Some("org.apache.kafka.connect.mirror.MirrorSourceConnector")
        );
        assert_eq!(source.spec.tasks_max, Some(1));
        assert_eq!(text(source, "source.cluster.alias"), Some("cluster-a"));
        assert_eq!(
            text(source, "source.cluster.bootstrap.servers"),
            Some("cluster-a-kafka-bootstrap:9092")
        );
        assert_eq!(
            text(source, "source.cluster.security.protocol"),
            Some("PLAINTEXT")
        );
        assert_eq!(text(source, "target.cluster.alias"), Some("cluster-b"));
        // The target's worker options are passed on with the prefix, as Strimzi does.
        assert_eq!(
            text(source, "target.cluster.plugin.discovery"),
            Some("service_load")
        );
        assert_eq!(text(source, "topics"), Some(".*"));
        assert_eq!(text(source, "groups"), Some(".*"));
        assert_eq!(
            source.spec.config.as_ref().unwrap().0["replication.factor"],
            json!(-1)
        );
        assert_eq!(
            text(&connectors[1], "offset-syncs.topic.location"),
            Some("target")
        );
        assert_eq!(connectors[1].field, "spec.mirrors[0].checkpointConnector");
        assert_eq!(
            offsets_key(&connectors[0].name),
            "cluster-a--cluster-b.MirrorSourceConnector.json"
        );
    }

    #[test]
    fn tls_and_authentication_of_each_cluster_come_from_secrets() {
        let spec = spec(json!({
            "replicas": 1,
            "target": {
                "alias": "b", "bootstrapServers": "b:9093", "groupId": "g",
                "configStorageTopic": "c", "offsetStorageTopic": "o", "statusStorageTopic": "s",
                "tls": {"trustedCertificates": [{"secretName": "b-ca", "certificate": "ca.crt"}]},
                "authentication": {"type": "tls", "certificateAndKey": {"secretName": "mm", "certificate": "user.crt", "key": "user.key"}}
            },
            "mirrors": [{
                "source": {
                    "alias": "a", "bootstrapServers": "a:9093",
                    "tls": {"trustedCertificates": [{"secretName": "a-ca", "pattern": "*.crt"}]},
                    "authentication": {"type": "scram-sha-512", "username": "mm", "passwordSecret": {"secretName": "mm-a", "password": "password"}}
                },
                "sourceConnector": {"state": "paused", "autoRestart": {"enabled": true}},
                "topicsExcludePattern": "internal.*"
            }]
        }));
        let connectors = connectors("ns", "mm", &spec).unwrap();
        assert_eq!(connectors.len(), 1, "no checkpoint connector was asked for");
        let source = &connectors[0];
        assert_eq!(
            text(source, "source.cluster.ssl.truststore.certificates"),
            Some("${strimzisecrets:ns/mm-connect-tls-trusted-certs:a.crt}")
        );
        assert_eq!(
            text(source, "target.cluster.ssl.truststore.certificates"),
            Some("${strimzisecrets:ns/mm-connect-tls-trusted-certs:b.crt}")
        );
        assert_eq!(
            text(source, "target.cluster.ssl.keystore.key"),
            Some("${strimzisecrets:ns/mm:user.key}")
        );
        assert_eq!(
            text(source, "target.cluster.security.protocol"),
            Some("SSL")
        );
        assert_eq!(
            text(source, "source.cluster.security.protocol"),
            Some("SASL_SSL")
        );
        assert!(
            text(source, "source.cluster.sasl.jaas.config")
                .unwrap()
                .contains("${strimzisecrets:ns/mm-a:password}")
        );
        assert_eq!(text(source, "topics.exclude"), Some("internal.*"));
        assert_eq!(text(source, "topics"), None);
        assert_eq!(
            source.spec.state,
            Some(strimzi_api::connector::ConnectorState::Paused)
        );
        assert!(source.spec.auto_restart.is_some());
    }

    #[test]
    fn rack_tracing_and_the_metrics_reporter_reach_the_connectors() {
        let mut spec = example();
        spec.rack = Some(serde_json::from_value(json!({"topologyKey": "zone"})).unwrap());
        spec.tracing = Some(serde_json::from_value(json!({"type": "opentelemetry"})).unwrap());
        spec.metrics_config =
            Some(serde_json::from_value(json!({"type": "strimziMetricsReporter"})).unwrap());
        let connectors = connectors("ns", "mm", &spec).unwrap();
        let source = &connectors[0];
        assert_eq!(
            text(source, "consumer.client.rack"),
            Some("${strimzifile:/tmp/strimzi-connect.properties:consumer.client.rack}")
        );
        assert_eq!(
            text(source, "consumer.interceptor.classes"),
            Some(TRACING_CONSUMER_INTERCEPTOR)
        );
        assert_eq!(
            text(source, "metric.reporters"),
            Some(CLIENT_METRICS_REPORTER)
        );
        assert_eq!(
            text(source, "prometheus.metrics.reporter.listener.enable"),
            Some("false")
        );
    }

    #[test]
    fn an_alias_used_twice_is_refused_with_where() {
        let mut spec = example();
        spec.mirrors[0].source.alias = "cluster-b".to_owned();
        let error = connectors("ns", "mm", &spec).unwrap_err();
        assert_eq!(error.reason(), "InvalidResourceException");
        assert_eq!(
            error.to_string(),
            "spec.mirrors[0].source: the alias \"cluster-b\" is already used by spec.target"
        );
        let mut spec = example();
        spec.mirrors[0].source.authentication =
            Some(serde_json::from_value(json!({"type": "plain"})).unwrap());
        let error = connectors("ns", "mm", &spec).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("spec.mirrors[0].source.authentication"),
            "{error}"
        );
    }

    #[test]
    fn a_pattern_java_cannot_compile_is_refused_naming_its_field() {
        let mut spec = example();
        spec.mirrors[0].groups_exclude_pattern = Some("mirrored-[".to_owned());
        let error = connectors("ns", "mm", &spec).unwrap_err();
        assert_eq!(error.reason(), "InvalidResourceException");
        assert_eq!(
            error.to_string(),
            "spec.mirrors[0].groupsExcludePattern: \"mirrored-[\" is not a valid regular \
             expression: a `[` character class is not closed"
        );
        for broken in ["a)", "(a", "a\\", "*a", "a|+b", "[]"] {
            assert!(java_regex_problem(broken).is_some(), "{broken}");
        }
        // The items of a comma-separated list are joined with `|`, as Kafka does.
        spec.mirrors[0].groups_exclude_pattern = Some("[a,b], c".to_owned());
        spec.mirrors[0].topics_pattern = Some("a, *b".to_owned());
        let error = connectors("ns", "mm", &spec).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("spec.mirrors[0].topicsPattern: \"a, *b\""),
            "{error}"
        );
        // Java accepts these: a literal `]` first in a class, nested classes, quoting,
        // possessive and lazy repetition, flags, look-around, comments mode.
        for accepted in [
            ".*",
            "[]a]",
            "[^]a]",
            "[a-z&&[^b]]",
            "\\Q(\\E",
            "\\Q[",
            "a*+|b+?",
            "(?i)topic",
            "(?=a)a|(?<!b)c",
            "(?x) a # [",
            "[(]",
            "\\(",
        ] {
            assert_eq!(java_regex_problem(accepted), None, "{accepted}");
        }
    }
}
