//! The objects of a `KafkaBridge`: the HTTP Bridge that lets HTTP clients produce to and
//! consume from a Kafka cluster, run from Strimzi's bridge image with what its start script
//! (`/opt/strimzi/bin/docker/kafka_bridge_run.sh`) reads.
//!
//! - `<name>-bridge-config` (ConfigMap), mounted at `/opt/strimzi/custom-config/`: the
//!   bridge's `application.properties` (the `bridge.`, `kafka.` and `http.` options), its
//!   `log4j2.properties` and, with the JMX exporter, `metrics-config.json`;
//! - `<name>-bridge` (Deployment) of `spec.replicas` pods; the Kafka clients read the
//!   certificates and passwords through the Kubernetes Secret config provider
//!   (`${strimzisecrets:<namespace>/<secret>:<key>}`), so that no secret value is written
//!   into the ConfigMap, and only the HTTPS certificate is mounted;
//! - `<name>-bridge-tls-trusted-certs` (Secret) with every trusted certificate under
//!   `ca.crt`, Role `<name>-bridge` (`get` on the Secrets the provider reads) and RoleBinding
//!   `<name>-bridge-role` to the pods' ServiceAccount;
//! - `<name>-bridge-service` (Service) on the HTTP port, with Strimzi's discovery label and
//!   annotation;
//! - `<name>-bridge` (ServiceAccount and PodDisruptionBudget);
//! - with a `topology-label` rack, the init container writing the node's rack to
//!   `/opt/strimzi/init/rack.id` (read as the consumers' `client.rack`), a node affinity to
//!   nodes with the label, and ClusterRoleBinding `strimzi-<namespace>-<name>-bridge-init`
//!   to `strimzi-kafka-client` (cluster-scoped, so not owned).
//!
//! Every namespaced object is owned by the KafkaBridge, so deleting it removes them. Pure: the
//! caller reads the ConfigMaps and Secrets the spec names and hands in their contents.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapKeySelector, Container, EnvVar, Secret, Service, ServiceAccount,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;
use strimzi_api::annotations;
use strimzi_api::bridge::{KafkaBridge, KafkaBridgeSpec};
use strimzi_api::common::{
    KafkaClientAuthentication, Logging, MetricsConfig, Probe as ProbeOptions, Tracing,
};
use strimzi_api::labels as strimzi_labels;
use strimzi_api::naming;
use strimzi_api::selectors::{ComponentLabels, owner_reference};

use super::client_security::{
    ClientSecurity, SecretsData, TrustedCertificates, certificate_bundle, option_value,
    secret_reader_rbac,
};
use super::components::{
    DeploymentParts, cluster_ip_service_spec, config_map_volume, http_probe, log4j2_properties,
    secret_volume, service_port, tmp_volume,
};
use super::config::hash_stub;
use super::meta::{
    ObjectScope, StringMap, template_annotations, template_labels, with_additional_labels,
};
use super::nodes::pods::{HeapSizing, jvm_env};
use super::rack;
use super::{ModelConfig, ModelError, ModelWarning};
use crate::model::containers::{
    add_shared_and_template_env, container_port, env, mount, template_mounts,
};

/// The image of Strimzi 1.2's HTTP Bridge, the default of `STRIMZI_DEFAULT_KAFKA_BRIDGE_IMAGE`.
pub const DEFAULT_BRIDGE_IMAGE: &str = "quay.io/strimzi/kafka-bridge:1.1.0";
/// The component type of a bridge's objects (`strimzi.io/component-type`, `app.kubernetes.io/name`).
pub const COMPONENT_TYPE: &str = "kafka-bridge";
/// The kind of the owning resource (`strimzi.io/kind`).
pub const KIND: &str = "KafkaBridge";
/// The HTTP port when `spec.http.port` is unset.
pub const DEFAULT_HTTP_PORT: i32 = 8080;
/// Name of the HTTP API port on the container and the Service.
pub const REST_API_PORT_NAME: &str = "rest-api";
/// Port of the bridge's management endpoints (`/healthy`, `/ready`, `/metrics`).
pub const MANAGEMENT_PORT: i32 = 8081;
/// Name of the management port.
pub const MANAGEMENT_PORT_NAME: &str = "management";
/// Where the start script reads the configuration ConfigMap.
const CONFIG_MOUNT: &str = "/opt/strimzi/custom-config/";
const CONFIG_VOLUME: &str = "kafka-bridge-configurations";
/// Where the HTTP server's certificate Secret is mounted, in a folder named after it.
const CERTS_MOUNT: &str = "/opt/strimzi/bridge-certs";
/// The key of the trusted certificates in [`trusted_certificates_secret`].
const TRUSTED_CERTIFICATES_KEY: &str = "ca.crt";
/// Where the pods read the rack file the init container writes.
const INIT_MOUNT: &str = "/opt/strimzi/init";
/// Keys of the configuration ConfigMap.
const APPLICATION_PROPERTIES: &str = "application.properties";
const LOG4J2_PROPERTIES: &str = "log4j2.properties";
const METRICS_CONFIG: &str = "metrics-config.json";
/// The bridge's default loggers besides the root logger: the bridge at INFO and the health
/// endpoints, which Kubernetes calls every few seconds, at WARN.
const DEFAULT_LOGGERS: [(&str, &str, &str); 3] = [
    ("bridge", "io.strimzi.kafka.bridge", "INFO"),
    ("healthy", "http.openapi.operation.healthy", "WARN"),
    ("ready", "http.openapi.operation.ready", "WARN"),
];
/// Which user options of one `config` section are left out because the operator sets them
/// from the spec, as Strimzi's CRD describes each section.
struct OptionRules {
    /// The section, for warnings (`spec.producer.config`).
    section: &'static str,
    /// Options with these prefixes are left out ...
    forbidden_prefixes: &'static [&'static str],
    /// ... except these.
    allowed: &'static [&'static str],
    /// Only options with these prefixes are taken, when not empty.
    required_prefixes: &'static [&'static str],
}

/// The producer and admin clients: security and bootstrap come from the spec.
const CLIENT_FORBIDDEN: [&str; 4] = ["ssl.", "bootstrap.servers", "sasl.", "security."];
/// Consumers also may not choose their group: the HTTP client does.
const CONSUMER_FORBIDDEN: [&str; 5] = [
    "ssl.",
    "bootstrap.servers",
    "group.id",
    "sasl.",
    "security.",
];
const CLIENT_ALLOWED: [&str; 4] = [
    "ssl.endpoint.identification.algorithm",
    "ssl.cipher.suites",
    "ssl.protocol",
    "ssl.enabled.protocols",
];
const PRODUCER_RULES: OptionRules = OptionRules {
    section: "spec.producer.config",
    forbidden_prefixes: &CLIENT_FORBIDDEN,
    allowed: &CLIENT_ALLOWED,
    required_prefixes: &[],
};
const ADMIN_RULES: OptionRules = OptionRules {
    section: "spec.adminClient.config",
    ..PRODUCER_RULES
};
const CONSUMER_RULES: OptionRules = OptionRules {
    section: "spec.consumer.config",
    forbidden_prefixes: &CONSUMER_FORBIDDEN,
    ..PRODUCER_RULES
};
/// `custom` authentication: only SASL and key store options.
const CUSTOM_AUTHENTICATION_RULES: OptionRules = OptionRules {
    section: "spec.authentication.config",
    forbidden_prefixes: &[],
    allowed: &[],
    required_prefixes: &["sasl.", "ssl.keystore."],
};
/// The HTTP server's TLS: the certificate comes from the spec.
const HTTP_TLS_RULES: OptionRules = OptionRules {
    section: "spec.http.tls.config",
    forbidden_prefixes: &["ssl."],
    allowed: &["ssl.enabled.cipher.suites", "ssl.enabled.protocols"],
    required_prefixes: &[],
};
/// The bridge's own options: not those the operator writes.
const BRIDGE_RULES: OptionRules = OptionRules {
    section: "spec.config",
    forbidden_prefixes: &[
        "kafka.",
        "http.",
        "bridge.metrics.",
        "bridge.id",
        "bridge.tracing",
        "bridge.metrics",
    ],
    allowed: &[],
    required_prefixes: &[],
};

impl OptionRules {
    /// Whether the user may set `key`.
    fn permits(&self, key: &str) -> bool {
        let required = self.required_prefixes.is_empty()
            || self
                .required_prefixes
                .iter()
                .any(|prefix| key.starts_with(prefix));
        let forbidden = self
            .forbidden_prefixes
            .iter()
            .any(|prefix| key.starts_with(prefix))
            && !self.allowed.contains(&key);
        required && !forbidden
    }

    /// The options of `options` the user may set, as properties named `<prefix><key>`; the
    /// others are reported in `warnings`.
    fn properties(
        &self,
        prefix: &str,
        options: Option<&strimzi_api::schema::FreeFormMap>,
        warnings: &mut Vec<ModelWarning>,
    ) -> String {
        let mut text = String::new();
        for (key, value) in options.iter().flat_map(|map| map.0.iter()) {
            if self.permits(key) {
                text.push_str(&property(&format!("{prefix}{key}"), &option_value(value)));
            } else {
                warnings.push(ModelWarning::new(
                    "ForbiddenConfigurationOption",
                    format!(
                        "{}: option {key} cannot be set there and was ignored",
                        self.section
                    ),
                ));
            }
        }
        text
    }
}

/// What a bridge's objects are built from besides its resource.
#[derive(Clone, Copy, Debug)]
pub struct BridgeInputs<'a> {
    /// The KafkaBridge.
    pub bridge: &'a KafkaBridge,
    /// Operator-wide settings.
    pub config: &'a ModelConfig,
    /// The log4j2 configuration of the logging ConfigMap, with `logging.type: external`.
    pub external_logging: Option<&'a str>,
    /// The JMX exporter rules (YAML) of the metrics ConfigMap, with `metricsConfig.type:
    /// jmxPrometheusExporter`.
    pub metrics_rules: Option<&'a str>,
    /// Digest of the values of the Secrets the configuration uses ([`secret_keys`]), empty
    /// when there are none.
    pub secrets_digest: &'a str,
    /// The data of the Secrets `spec.tls.trustedCertificates` names
    /// ([`trusted_certificate_secret_names`]), by name.
    pub trusted_certificate_secrets: &'a SecretsData,
}

/// Every object of a bridge, and the warnings about its spec.
#[derive(Clone, Debug)]
pub struct BridgeObjects {
    /// `<name>-bridge`.
    pub service_account: ServiceAccount,
    /// `<name>-bridge`: `get` on the Secrets the Kafka clients read through the Kubernetes
    /// Secret config provider.
    pub role: Role,
    /// `<name>-bridge-role`: the Role to the pods' ServiceAccount.
    pub role_binding: RoleBinding,
    /// `<name>-bridge-tls-trusted-certs`, with trusted certificates: all of them under
    /// `ca.crt`.
    pub trusted_certificates: Option<Secret>,
    /// `<name>-bridge-config`.
    pub config_map: ConfigMap,
    /// `<name>-bridge`.
    pub deployment: Deployment,
    /// `<name>-bridge-service`.
    pub service: Service,
    /// `<name>-bridge`, unless PodDisruptionBudgets are not generated.
    pub pod_disruption_budget: Option<PodDisruptionBudget>,
    /// `strimzi-<namespace>-<name>-bridge-init`, with a `topology-label` rack: lets the init
    /// container read the pods' nodes. Cluster-scoped, so without owner.
    pub init_cluster_role_binding: Option<ClusterRoleBinding>,
    /// What was ignored in the spec, for `Warning` conditions.
    pub warnings: Vec<ModelWarning>,
}

/// One value the configuration reads from a Secret.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SecretKey {
    /// The Secret.
    pub secret: String,
    /// The key in it.
    pub key: String,
    /// The spec field that names it, for messages.
    pub field: &'static str,
}

/// The name of the configuration ConfigMap, `<name>-bridge-config`.
pub fn config_map_name(bridge: &str) -> String {
    format!("{}-config", naming::bridge_deployment(bridge))
}

/// The URL HTTP clients in the cluster reach the bridge at, for `status.url`.
pub fn url(bridge: &KafkaBridge) -> String {
    format!(
        "http://{}.{}.svc:{}",
        naming::bridge_service(&bridge.metadata.name.clone().unwrap_or_default()),
        bridge.metadata.namespace.clone().unwrap_or_default(),
        http_port(&bridge.spec)
    )
}

/// The labels of a bridge's objects.
pub fn component_labels(bridge: &KafkaBridge, config: &ModelConfig) -> ComponentLabels {
    let name = bridge.metadata.name.clone().unwrap_or_default();
    ComponentLabels {
        kind: KIND.to_owned(),
        component_name: naming::bridge_deployment(&name),
        cluster: name,
        component_type: COMPONENT_TYPE.to_owned(),
        managed_by: config.managed_by.clone(),
    }
}

/// The HTTP port: `spec.http.port`, else 8080.
pub fn http_port(spec: &KafkaBridgeSpec) -> i32 {
    spec.http
        .as_ref()
        .and_then(|http| http.port)
        .unwrap_or(DEFAULT_HTTP_PORT)
}

/// The ConfigMap key with the log4j2 configuration, with `logging.type: external`.
pub fn logging_reference(spec: &KafkaBridgeSpec) -> Option<&ConfigMapKeySelector> {
    match spec.logging.as_ref()? {
        Logging::External(external) => external.value_from.as_ref()?.config_map_key_ref.as_ref(),
        _ => None,
    }
}

/// The ConfigMap key with the JMX exporter rules, with `metricsConfig.type:
/// jmxPrometheusExporter`.
pub fn metrics_reference(spec: &KafkaBridgeSpec) -> Option<&ConfigMapKeySelector> {
    match spec.metrics_config.as_ref()? {
        MetricsConfig::JmxPrometheusExporter(jmx) => {
            jmx.value_from.as_ref()?.config_map_key_ref.as_ref()
        }
        _ => None,
    }
}

/// Every Secret value the pods read besides the trusted certificates (whose Secrets the
/// caller reads whole, [`trusted_certificate_secret_names`]): the client certificate and key
/// or the SASL password, and the HTTP server's certificate and key.
pub fn secret_keys(spec: &KafkaBridgeSpec) -> Vec<SecretKey> {
    let key = |secret: &str, key: &str, field: &'static str| SecretKey {
        secret: secret.to_owned(),
        key: key.to_owned(),
        field,
    };
    let mut keys = Vec::new();
    match &spec.authentication {
        Some(KafkaClientAuthentication::Tls(tls)) => {
            if let Some(pair) = &tls.certificate_and_key {
                let field = "spec.authentication.certificateAndKey";
                keys.push(key(&pair.secret_name, &pair.certificate, field));
                keys.push(key(&pair.secret_name, &pair.key, field));
            }
        }
        Some(
            KafkaClientAuthentication::ScramSha256(password)
            | KafkaClientAuthentication::ScramSha512(password)
            | KafkaClientAuthentication::Plain(password),
        ) => {
            if let Some(secret) = &password.password_secret {
                keys.push(key(
                    &secret.secret_name,
                    &secret.password,
                    "spec.authentication.passwordSecret",
                ));
            }
        }
        _ => {}
    }
    if let Some(tls) = spec.http.as_ref().and_then(|http| http.tls.as_ref()) {
        let pair = &tls.certificate_and_key;
        let field = "spec.http.tls.certificateAndKey";
        keys.push(key(&pair.secret_name, &pair.certificate, field));
        keys.push(key(&pair.secret_name, &pair.key, field));
    }
    keys
}

/// The Secrets `spec.tls.trustedCertificates` names, whose certificates the operator gathers
/// in [`trusted_certificates_secret`].
pub fn trusted_certificate_secret_names(spec: &KafkaBridgeSpec) -> Vec<String> {
    let mut names: Vec<String> = trusted_certificates(spec)
        .iter()
        .map(|source| source.secret_name.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// `<name>-bridge-tls-trusted-certs`: the operator's Secret with every trusted certificate
/// under `ca.crt`.
pub fn trusted_certificates_secret(bridge: &str) -> String {
    format!("{}-tls-trusted-certs", naming::bridge_deployment(bridge))
}

/// `<name>-bridge-role`: the RoleBinding granting the pods' ServiceAccount the Role
/// `<name>-bridge`.
pub fn role_binding_name(bridge: &str) -> String {
    format!("{}-role", naming::bridge_deployment(bridge))
}

fn trusted_certificates(spec: &KafkaBridgeSpec) -> &[strimzi_api::common::CertSecretSource] {
    spec.tls
        .as_ref()
        .and_then(|tls| tls.trusted_certificates.as_deref())
        .unwrap_or_default()
}

/// Checks what the CRD cannot: trusted certificates named by file, a complete password
/// authentication, a client certificate with TLS, and a known metrics type.
pub fn validate(spec: &KafkaBridgeSpec) -> Result<(), ModelError> {
    let invalid = |message: String| Err(ModelError::InvalidConfiguration(message));
    match &spec.authentication {
        Some(KafkaClientAuthentication::Tls(tls)) if tls.certificate_and_key.is_none() => {
            invalid("spec.authentication of type tls needs certificateAndKey".to_owned())
        }
        Some(KafkaClientAuthentication::Tls(_)) if spec.tls.is_none() => invalid(
            "spec.authentication of type tls needs spec.tls: a client certificate is only sent \
             over TLS"
                .to_owned(),
        ),
        Some(
            KafkaClientAuthentication::ScramSha256(password)
            | KafkaClientAuthentication::ScramSha512(password)
            | KafkaClientAuthentication::Plain(password),
        ) if password.username.as_deref().is_none_or(str::is_empty)
            || password.password_secret.is_none() =>
        {
            invalid("spec.authentication needs a username and a passwordSecret".to_owned())
        }
        _ => Ok(()),
    }
}

/// Every object of the bridge.
pub fn build(inputs: BridgeInputs<'_>) -> Result<BridgeObjects, ModelError> {
    let bridge = inputs.bridge;
    let spec = &bridge.spec;
    validate(spec)?;
    let name = bridge.metadata.name.clone().unwrap_or_default();
    let namespace = bridge.metadata.namespace.clone().unwrap_or_default();
    let owner = owner_reference(bridge);
    let resource_labels = bridge.metadata.labels.clone().unwrap_or_default();
    let scope = ObjectScope {
        namespace: &namespace,
        owner: owner.as_ref(),
        resource_labels: &resource_labels,
        config: inputs.config,
    };
    let labels = component_labels(bridge, inputs.config);
    let template = spec.template.as_ref();
    let mut warnings = Vec::new();
    let properties = application_properties(&name, &namespace, spec, &mut warnings)?;
    let mut data = BTreeMap::from([
        (APPLICATION_PROPERTIES.to_owned(), properties),
        (
            LOG4J2_PROPERTIES.to_owned(),
            logging_properties(spec.logging.as_ref(), inputs.external_logging),
        ),
    ]);
    if let Some(rules) = inputs.metrics_rules {
        let rules: Value =
            serde_yaml_ng::from_str(rules).map_err(ModelError::MetricsConfiguration)?;
        data.insert(METRICS_CONFIG.to_owned(), rules.to_string());
    }
    let configuration_hash = hash_stub(&data.values().cloned().collect::<String>());
    let config_map = ConfigMap {
        metadata: scope.component_meta(&labels, &config_map_name(&name), None),
        data: Some(data),
        ..ConfigMap::default()
    };
    let pod_template = template.and_then(|template| template.pod.as_ref());
    let mut pod_annotations = StringMap::from([(
        annotations::CONFIGURATION_HASH.to_owned(),
        configuration_hash,
    )]);
    let bundle = certificate_bundle(
        trusted_certificates(spec),
        inputs.trusted_certificate_secrets,
        &namespace,
        "spec",
    )
    .map_err(|error| ModelError::InvalidConfiguration(error.to_string()))?;
    // The digest of the Secret values, with the trusted certificates when there are any.
    let auth_hash = if bundle.is_empty() {
        inputs.secrets_digest.to_owned()
    } else {
        hash_stub(&format!(
            "{}{}",
            inputs.secrets_digest,
            String::from_utf8_lossy(&bundle)
        ))
    };
    if !auth_hash.is_empty() {
        pod_annotations.insert(annotations::AUTH_HASH.to_owned(), auth_hash);
    }
    let trusted_certificates = (!bundle.is_empty()).then(|| Secret {
        metadata: scope.component_meta(&labels, &trusted_certificates_secret(&name), None),
        type_: Some("Opaque".to_owned()),
        data: Some(BTreeMap::from([(
            TRUSTED_CERTIFICATES_KEY.to_owned(),
            ByteString(bundle),
        )])),
        ..Secret::default()
    });
    let mut provider_secrets: Vec<String> = trusted_certificates
        .iter()
        .map(|_| trusted_certificates_secret(&name))
        .chain(
            secret_keys(spec)
                .into_iter()
                .filter(|key| key.field.starts_with("spec.authentication"))
                .map(|key| key.secret),
        )
        .collect();
    provider_secrets.dedup();
    let component = naming::bridge_deployment(&name);
    let (role, role_binding) = secret_reader_rbac(
        scope.component_meta(&labels, &component, None),
        scope.component_meta(&labels, &role_binding_name(&name), None),
        provider_secrets,
        &component,
        &namespace,
    );
    let mut volumes = vec![
        tmp_volume("strimzi-tmp", pod_template),
        config_map_volume(CONFIG_VOLUME, &config_map_name(&name)),
    ];
    volumes.extend(
        mounted_secret(spec).map(|secret| secret_volume(&secret_volume_name(secret), secret)),
    );
    let topology_key = rack::topology_key(spec.rack.as_ref());
    if topology_key.is_some() {
        volumes.push(rack::init_volume());
    }
    let mut deployment = scope.deployment(DeploymentParts {
        labels: &labels,
        replicas: spec.replicas,
        deployment_template: template.and_then(|template| template.deployment.as_ref()),
        pod_template,
        strategy_from_template: true,
        pod_annotations,
        containers: vec![container(&name, spec, inputs.config)],
        volumes,
    });
    if let (Some(key), Some(pod)) = (
        topology_key,
        deployment
            .spec
            .as_mut()
            .and_then(|deployment| deployment.template.spec.as_mut()),
    ) {
        pod.init_containers = Some(vec![init_container(key, spec, inputs.config)]);
        pod.affinity = Some(rack::with_rack_affinity(pod.affinity.take(), key));
    }
    let init_cluster_role_binding = topology_key.map(|_| {
        rack::init_cluster_role_binding(
            scope.component_meta(
                &labels,
                &naming::init_cluster_role_binding(&namespace, &naming::bridge_deployment(&name)),
                template
                    .and_then(|template| template.cluster_role_binding.as_ref())
                    .and_then(|template| template.metadata.as_ref()),
            ),
            rack::CLIENT_CLUSTER_ROLE,
            &naming::bridge_deployment(&name),
            &namespace,
        )
    });
    Ok(BridgeObjects {
        service_account: scope.service_account(
            &labels,
            template.and_then(|template| template.service_account.as_ref()),
        ),
        role,
        role_binding,
        trusted_certificates,
        config_map,
        deployment,
        service: service(&scope, &labels, spec),
        pod_disruption_budget: pod_disruption_budget(&scope, &labels, spec),
        init_cluster_role_binding,
        warnings,
    })
}

/// The init container writing the rack file to [`INIT_MOUNT`], for the node label `key`.
fn init_container(key: &str, spec: &KafkaBridgeSpec, config: &ModelConfig) -> Container {
    let template = spec
        .template
        .as_ref()
        .and_then(|template| template.init_container.as_ref());
    let (image, image_pull_policy) =
        rack::client_init_image(spec.client_rack_init_image.as_ref(), config);
    rack::InitContainer {
        image,
        image_pull_policy,
        env: rack::rack_init_variables(key, Some(INIT_MOUNT)),
        shared_env: &config.shared_env,
        mounts: vec![rack::init_mount(INIT_MOUNT)],
        resources: spec.resources.clone(),
        security_context: config.container_security_context(template),
        template,
    }
    .container()
}

/// The folder the HTTP server's certificate Secret `secret` is mounted at.
fn secret_mount_path(secret: &str) -> String {
    format!("{CERTS_MOUNT}/{secret}")
}

/// The volume name of the mounted HTTP server's certificate Secret.
fn secret_volume_name(secret: &str) -> String {
    let name = format!("certs-{secret}");
    // Volume names are DNS labels: at most 63 characters.
    if name.len() > 63 {
        format!("certs-{}", hash_stub(secret))
    } else {
        name
    }
}

/// The only Secret mounted: the HTTP server's certificate and key (`spec.http.tls`); the
/// Kafka clients read theirs through the Kubernetes Secret config provider.
fn mounted_secret(spec: &KafkaBridgeSpec) -> Option<&str> {
    spec.http
        .as_ref()
        .and_then(|http| http.tls.as_ref())
        .map(|tls| tls.certificate_and_key.secret_name.as_str())
}

/// The bridge's container.
fn container(name: &str, spec: &KafkaBridgeSpec, config: &ModelConfig) -> Container {
    let template = spec
        .template
        .as_ref()
        .and_then(|template| template.bridge_container.as_ref());
    let image = spec
        .image
        .clone()
        .unwrap_or_else(|| config.bridge_image.clone());
    let mut mounts = vec![
        mount("strimzi-tmp", "/tmp"),
        mount(CONFIG_VOLUME, CONFIG_MOUNT),
    ];
    if rack::topology_key(spec.rack.as_ref()).is_some() {
        mounts.push(rack::init_mount(INIT_MOUNT));
    }
    mounts.extend(
        mounted_secret(spec)
            .map(|secret| mount(&secret_volume_name(secret), &secret_mount_path(secret))),
    );
    mounts.extend(template_mounts(template));
    let mut vars = container_env(name, spec);
    add_shared_and_template_env(&mut vars, &config.shared_env, template);
    let defaults = || ProbeOptions {
        initial_delay_seconds: Some(15),
        timeout_seconds: Some(5),
        ..ProbeOptions::default()
    };
    Container {
        name: naming::bridge_deployment(name),
        image_pull_policy: Some(config.image_pull_policy(&image)),
        image: Some(image),
        args: Some(vec![
            "/opt/strimzi/bin/docker/kafka_bridge_run.sh".to_owned(),
        ]),
        env: Some(vars),
        ports: Some(vec![
            container_port(REST_API_PORT_NAME, http_port(spec)),
            container_port(MANAGEMENT_PORT_NAME, MANAGEMENT_PORT),
        ]),
        liveness_probe: Some(http_probe(
            "/healthy",
            MANAGEMENT_PORT_NAME,
            spec.liveness_probe.as_ref(),
            defaults(),
        )),
        readiness_probe: Some(http_probe(
            "/ready",
            MANAGEMENT_PORT_NAME,
            spec.readiness_probe.as_ref(),
            defaults(),
        )),
        resources: spec.resources.clone(),
        volume_mounts: Some(mounts),
        security_context: config.container_security_context(template),
        ..Container::default()
    }
}

/// The start script's environment: the heap (half the container's memory when it has a
/// memory request or limit), other `-XX` options in `STRIMZI_JAVA_OPTS`, system properties,
/// GC logging, and the service name of OpenTelemetry tracing.
fn container_env(name: &str, spec: &KafkaBridgeSpec) -> Vec<EnvVar> {
    let jvm = spec.jvm_options.as_ref();
    let mut vars: Vec<EnvVar> = jvm_env(
        jvm,
        spec.resources.as_ref(),
        HeapSizing {
            percentage: "50",
            max: None,
        },
    )
    .into_iter()
    .map(|mut var| {
        // The bridge's script takes the JVM's other options from STRIMZI_JAVA_OPTS.
        if var.name == "KAFKA_JVM_PERFORMANCE_OPTS" {
            var.name = "STRIMZI_JAVA_OPTS".to_owned();
        }
        var
    })
    .collect();
    vars.push(env(
        "STRIMZI_GC_LOG_ENABLED",
        jvm.and_then(|jvm| jvm.gc_logging_enabled)
            .unwrap_or(false)
            .to_string(),
    ));
    if matches!(spec.tracing, Some(Tracing::OpenTelemetry(_))) {
        vars.push(env("OTEL_SERVICE_NAME", naming::bridge_deployment(name)));
    }
    vars
}

/// `<name>-bridge-service`: the HTTP port for clients in the cluster, labelled and annotated
/// for Strimzi's service discovery.
fn service(scope: &ObjectScope<'_>, labels: &ComponentLabels, spec: &KafkaBridgeSpec) -> Service {
    let template = spec
        .template
        .as_ref()
        .and_then(|template| template.api_service.as_ref());
    let metadata = template.and_then(|template| template.metadata.as_ref());
    let mut service_labels =
        with_additional_labels(&scope.labels(labels), &template_labels(metadata));
    service_labels.insert(strimzi_labels::DISCOVERY.to_owned(), "true".to_owned());
    let port = http_port(spec);
    let tls = spec.http.as_ref().is_some_and(|http| http.tls.is_some());
    let discovery = serde_json::json!([{
        "port": port,
        "tls": tls,
        "auth": "none",
        "protocol": "http",
    }]);
    let mut annotations = template_annotations(metadata);
    annotations.insert(strimzi_labels::DISCOVERY.to_owned(), discovery.to_string());
    Service {
        metadata: scope.object_meta(
            &naming::bridge_service(&labels.cluster),
            service_labels,
            annotations,
        ),
        spec: Some(cluster_ip_service_spec(
            labels.selector(),
            vec![service_port(REST_API_PORT_NAME, port)],
            template,
        )),
        status: None,
    }
}

/// `<name>-bridge`: at most `maxUnavailable` (default 1) bridge pods down at once in a
/// voluntary disruption. `None` when PodDisruptionBudgets are not generated.
fn pod_disruption_budget(
    scope: &ObjectScope<'_>,
    labels: &ComponentLabels,
    spec: &KafkaBridgeSpec,
) -> Option<PodDisruptionBudget> {
    if !scope.config.pod_disruption_budget_generation {
        return None;
    }
    let template = spec
        .template
        .as_ref()
        .and_then(|template| template.pod_disruption_budget.as_ref());
    Some(PodDisruptionBudget {
        metadata: scope.component_meta(
            labels,
            &labels.component_name,
            template.and_then(|template| template.metadata.as_ref()),
        ),
        spec: Some(PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::Int(
                template
                    .and_then(|template| template.max_unavailable)
                    .unwrap_or(1),
            )),
            selector: Some(LabelSelector {
                match_labels: Some(labels.selector()),
                ..LabelSelector::default()
            }),
            ..PodDisruptionBudgetSpec::default()
        }),
        status: None,
    })
}

/// The log4j2 configuration: the external ConfigMap's as it is, else a console configuration
/// with the inline levels over the bridge's defaults.
fn logging_properties(logging: Option<&Logging>, external: Option<&str>) -> String {
    if let (Some(Logging::External(_)), Some(text)) = (logging, external) {
        return text.to_owned();
    }
    let inline = match logging {
        Some(Logging::Inline(inline)) => inline.loggers.clone().unwrap_or_default(),
        _ => BTreeMap::new(),
    };
    let mut text = log4j2_properties("KafkaBridgeConfig", logging);
    for (logger, class, level) in DEFAULT_LOGGERS {
        let level_key = format!("logger.{logger}.level");
        text.push_str(&format!("logger.{logger}.name = {class}\n"));
        if !inline.contains_key(&level_key) {
            text.push_str(&format!("{level_key} = {level}\n"));
        }
    }
    text
}

/// `key=value` in Java properties syntax: separators in the key and line breaks and
/// backslashes in the value escaped.
fn property(key: &str, value: &str) -> String {
    let key: String = key
        .chars()
        .flat_map(|c| match c {
            '=' | ':' | ' ' | '#' | '!' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    let value = value
        .replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r");
    format!("{key}={value}\n")
}

/// The bridge's `application.properties`.
fn application_properties(
    name: &str,
    namespace: &str,
    spec: &KafkaBridgeSpec,
    warnings: &mut Vec<ModelWarning>,
) -> Result<String, ModelError> {
    let mut text = String::from("# Generated by the cluster operator from the KafkaBridge.\n");
    text.push_str(&property("bridge.id", name));
    if matches!(spec.tracing, Some(Tracing::OpenTelemetry(_))) {
        text.push_str(&property("bridge.tracing", "opentelemetry"));
    }
    match &spec.metrics_config {
        Some(MetricsConfig::JmxPrometheusExporter(_)) => {
            text.push_str(&property("bridge.metrics", "jmxPrometheusExporter"));
            text.push_str(&property(
                "bridge.metrics.exporter.config.path",
                &format!("{CONFIG_MOUNT}{METRICS_CONFIG}"),
            ));
        }
        Some(MetricsConfig::StrimziMetricsReporter(reporter)) => {
            text.push_str(&property("bridge.metrics", "strimziMetricsReporter"));
            if let Some(allow_list) = reporter
                .values
                .as_ref()
                .and_then(|values| values.allow_list.as_ref())
            {
                text.push_str(&property(
                    "kafka.prometheus.metrics.reporter.allowlist",
                    &allow_list.join(","),
                ));
            }
        }
        None => {}
    }
    text.push_str(&BRIDGE_RULES.properties("", spec.config.as_ref(), warnings));
    text.push_str(&kafka_properties(name, namespace, spec, warnings)?);
    text.push_str(&http_properties(spec, warnings));
    Ok(text)
}

/// The `kafka.` options: bootstrap servers, security, and the clients' own options.
fn kafka_properties(
    name: &str,
    namespace: &str,
    spec: &KafkaBridgeSpec,
    warnings: &mut Vec<ModelWarning>,
) -> Result<String, ModelError> {
    let mut text = property("kafka.bootstrap.servers", &spec.bootstrap_servers);
    // The trust, the certificate or password login (read through the Kubernetes Secret
    // config provider) and the security protocol; custom authentication's own options are
    // added below, filtered.
    let custom_keys: Vec<&String> = match &spec.authentication {
        Some(KafkaClientAuthentication::Custom(custom)) => custom
            .config
            .iter()
            .flat_map(|config| config.0.keys())
            .collect(),
        _ => Vec::new(),
    };
    let security = ClientSecurity {
        namespace,
        tls: spec.tls.as_ref(),
        trusted: Some(TrustedCertificates {
            secret: &trusted_certificates_secret(name),
            key: TRUSTED_CERTIFICATES_KEY,
        }),
        authentication: spec.authentication.as_ref(),
        field: "spec",
    }
    .options()
    .map_err(|error| ModelError::InvalidConfiguration(error.to_string()))?;
    for (key, value) in security
        .iter()
        .filter(|(key, _)| !custom_keys.contains(&key))
    {
        text.push_str(&property(&format!("kafka.{key}"), value));
    }
    // Kafka's configuration providers, through which the clients read Secrets, files and
    // environment variables.
    for (key, value) in [
        (
            "kafka.config.providers",
            "strimzienv,strimzifile,strimzidir,strimzisecrets",
        ),
        (
            "kafka.config.providers.strimzienv.class",
            "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
        ),
        (
            "kafka.config.providers.strimzienv.param.allowlist.pattern",
            ".*",
        ),
        (
            "kafka.config.providers.strimzifile.class",
            "org.apache.kafka.common.config.provider.FileConfigProvider",
        ),
        (
            "kafka.config.providers.strimzifile.param.allowed.paths",
            "/opt/strimzi",
        ),
        (
            "kafka.config.providers.strimzidir.class",
            "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
        ),
        (
            "kafka.config.providers.strimzidir.param.allowed.paths",
            "/opt/strimzi",
        ),
        (
            "kafka.config.providers.strimzisecrets.class",
            "io.strimzi.kafka.KubernetesSecretConfigProvider",
        ),
    ] {
        text.push_str(&property(key, value));
    }
    if let Some(KafkaClientAuthentication::Custom(custom)) = &spec.authentication {
        text.push_str(&CUSTOM_AUTHENTICATION_RULES.properties(
            "kafka.",
            custom.config.as_ref(),
            warnings,
        ));
    }
    text.push_str(
        &ADMIN_RULES.properties(
            "kafka.admin.",
            spec.admin_client
                .as_ref()
                .and_then(|admin| admin.config.as_ref()),
            warnings,
        ),
    );
    text.push_str(
        &PRODUCER_RULES.properties(
            "kafka.producer.",
            spec.producer
                .as_ref()
                .and_then(|producer| producer.config.as_ref()),
            warnings,
        ),
    );
    text.push_str(
        &CONSUMER_RULES.properties(
            "kafka.consumer.",
            spec.consumer
                .as_ref()
                .and_then(|consumer| consumer.config.as_ref()),
            warnings,
        ),
    );
    if let Some(rack) = spec
        .rack
        .as_ref()
        .and_then(|rack| rack::client_rack(rack, INIT_MOUNT))
    {
        text.push_str(&property("kafka.consumer.client.rack", &rack));
    }
    Ok(text)
}

/// The `http.` options: the listening address and ports, CORS, HTTPS, and which endpoints
/// are on.
fn http_properties(spec: &KafkaBridgeSpec, warnings: &mut Vec<ModelWarning>) -> String {
    let http = spec.http.as_ref();
    let mut text = property("http.host", "0.0.0.0");
    text.push_str(&property("http.port", &http_port(spec).to_string()));
    text.push_str(&property(
        "http.management.port",
        &MANAGEMENT_PORT.to_string(),
    ));
    match http.and_then(|http| http.cors.as_ref()) {
        Some(cors) => {
            text.push_str(&property("http.cors.enabled", "true"));
            text.push_str(&property(
                "http.cors.allowedOrigins",
                &cors.allowed_origins.join(","),
            ));
            text.push_str(&property(
                "http.cors.allowedMethods",
                &cors.allowed_methods.join(","),
            ));
        }
        None => text.push_str(&property("http.cors.enabled", "false")),
    }
    if let Some(tls) = http.and_then(|http| http.tls.as_ref()) {
        let pair = &tls.certificate_and_key;
        let folder = secret_mount_path(&pair.secret_name);
        text.push_str(&property("http.ssl.enable", "true"));
        text.push_str(&property(
            "http.ssl.certificate.location",
            &format!("{folder}/{}", pair.certificate),
        ));
        text.push_str(&property(
            "http.ssl.key.location",
            &format!("{folder}/{}", pair.key),
        ));
        text.push_str(&HTTP_TLS_RULES.properties("http.", tls.config.as_ref(), warnings));
    }
    let consumer = spec.consumer.as_ref();
    text.push_str(&property(
        "http.consumer.enabled",
        &consumer
            .and_then(|consumer| consumer.enabled)
            .unwrap_or(true)
            .to_string(),
    ));
    text.push_str(&property(
        "http.timeoutSeconds",
        &consumer
            .and_then(|consumer| consumer.timeout_seconds)
            .unwrap_or(-1)
            .to_string(),
    ));
    text.push_str(&property(
        "http.producer.enabled",
        &spec
            .producer
            .as_ref()
            .and_then(|producer| producer.enabled)
            .unwrap_or(true)
            .to_string(),
    ));
    text
}
