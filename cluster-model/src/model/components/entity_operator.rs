//! The entity operator (`spec.entityOperator`): one Deployment, `<cluster>-entity-operator`,
//! running our topic operator and user operator from our image as its two containers, with
//! Strimzi's environment variables, probes, volumes and names, so that what a Strimzi user
//! sees and configures is unchanged.
//!
//! Around it: its ServiceAccount, a Role with the rules both operators need in the Kafka's
//! namespace (and in each other namespace an operator watches), one RoleBinding per operator
//! in each namespace it works in, a NetworkPolicy opening the health ports, each operator's
//! logging ConfigMap and its client certificate Secret, signed by the cluster CA.
//!
//! Where Strimzi passes JVM settings, ours have no JVM: `jvmOptions` are accepted and not
//! used; the root logger's level (`logging.loggers."rootLogger.level"`) becomes
//! `STRIMZI_LOG_LEVEL`, which our operators read.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Container, EnvVar, Secret, ServiceAccount, Volume};
use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicySpec};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use strimzi_api::common::{ContainerTemplate, Logging, Probe as ProbeOptions};
use strimzi_api::kafka::{
    EntityOperatorSpec, EntityOperatorTemplate, EntityTopicOperatorSpec, EntityUserOperatorSpec,
    KafkaAuthorization,
};
use strimzi_api::naming;
use strimzi_api::selectors::ComponentLabels;
use strimzi_certificate_manager::leaf::{IssuedCertificate, LeafSpec};

use super::cruise_control::{self, ApiSecurity};
use super::{
    DeploymentParts, TOPIC_OPERATOR_TYPE, certificate_annotations, component_labels,
    config_map_volume, http_probe, log4j2_properties, secret_volume, tmp_volume,
};
use crate::model::containers::{
    add_shared_and_template_env, container_port, env, mount, template_mounts,
};
use crate::model::listeners::services::REPLICATION_PORT;
use crate::model::meta::RBAC_API_GROUP;
use crate::model::security::policies::ingress_rule;
use crate::model::{KafkaCluster, ModelError};

/// The component type of the entity operator's objects.
pub const COMPONENT_TYPE: &str = "entity-operator";
/// The component type of the user operator's own objects (the topic operator's is
/// [`TOPIC_OPERATOR_TYPE`]).
pub const USER_OPERATOR_TYPE: &str = "entity-user-operator";
/// Data key prefix of both operators' certificates (`entity-operator.crt`, `.key`).
const CERTIFICATE_KEY_PREFIX: &str = "entity-operator";
/// The topic operator's container and health port.
const TOPIC_OPERATOR_CONTAINER: &str = "topic-operator";
const TOPIC_OPERATOR_PORT: i32 = 8080;
/// The user operator's container and health port.
const USER_OPERATOR_CONTAINER: &str = "user-operator";
const USER_OPERATOR_PORT: i32 = 8081;
/// Name of both health ports.
const HEALTH_PORT_NAME: &str = "healthcheck";
/// Where both operators find the cluster CA certificate.
const CLUSTER_CA_CERTS_MOUNT: &str = "/etc/tls-sidecar/cluster-ca-certs/";
/// Volume and mount of the topic operator's Cruise Control API user, when Cruise Control runs.
const CRUISE_CONTROL_API_VOLUME: &str = "eto-cc-api";
const CRUISE_CONTROL_API_MOUNT: &str = "/etc/eto-cc-api/";
/// Log levels the operators accept.
const LOG_LEVELS: [&str; 8] = [
    "ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF",
];

/// The Secret name and certificate spec of the topic operator (`CN=<cluster>-entity-topic-operator`).
pub fn topic_operator_certificate(cluster: &str) -> (String, LeafSpec) {
    (
        naming::entity_topic_operator_secret(cluster),
        LeafSpec::component(
            CERTIFICATE_KEY_PREFIX,
            &format!("{cluster}-entity-topic-operator"),
        ),
    )
}

/// The Secret name and certificate spec of the user operator (`CN=<cluster>-entity-user-operator`).
pub fn user_operator_certificate(cluster: &str) -> (String, LeafSpec) {
    (
        naming::entity_user_operator_secret(cluster),
        LeafSpec::component(
            CERTIFICATE_KEY_PREFIX,
            &format!("{cluster}-entity-user-operator"),
        ),
    )
}

/// What the entity operator's objects are built from besides the cluster.
#[derive(Clone, Copy, Debug)]
pub struct EntityOperatorInputs<'a> {
    /// The cluster CA's certificate generation.
    pub cluster_ca_cert_generation: u32,
    /// The cluster CA's key generation.
    pub cluster_ca_key_generation: u32,
    /// The topic operator's certificate, when it runs.
    pub topic_operator_certificate: Option<&'a IssuedCertificate>,
    /// The user operator's certificate, when it runs.
    pub user_operator_certificate: Option<&'a IssuedCertificate>,
}

/// Every object of the entity operator.
#[derive(Clone, Debug)]
pub struct EntityOperatorObjects {
    /// `<cluster>-entity-operator`.
    pub service_account: ServiceAccount,
    /// `<cluster>-entity-operator` in the Kafka's namespace and in each other watched one.
    pub roles: Vec<Role>,
    /// `<cluster>-entity-topic-operator-role` and `<cluster>-entity-user-operator-role`, in
    /// the Kafka's namespace and in the namespace each operator watches.
    pub role_bindings: Vec<RoleBinding>,
    /// `<cluster>-entity-operator`, unless NetworkPolicies are not generated.
    pub network_policy: Option<NetworkPolicy>,
    /// `<cluster>-entity-topic-operator-config` and `<cluster>-entity-user-operator-config`.
    pub config_maps: Vec<ConfigMap>,
    /// `<cluster>-entity-topic-operator-certs` and `<cluster>-entity-user-operator-certs`.
    pub secrets: Vec<Secret>,
    /// `<cluster>-entity-operator`.
    pub deployment: Deployment,
}

/// Checks the watched namespaces (Kubernetes namespace names) and the logging levels of both
/// operators.
pub(crate) fn validate(cluster: &KafkaCluster) -> Result<(), ModelError> {
    let Some(spec) = &cluster.kafka.spec.entity_operator else {
        return Ok(());
    };
    let operators = [
        (
            "topicOperator",
            spec.topic_operator
                .as_ref()
                .map(|to| (to.watched_namespace.as_deref(), to.logging.as_ref())),
        ),
        (
            "userOperator",
            spec.user_operator
                .as_ref()
                .map(|uo| (uo.watched_namespace.as_deref(), uo.logging.as_ref())),
        ),
    ];
    for (section, settings) in operators {
        let Some((watched, logging)) = settings else {
            continue;
        };
        if let Some(namespace) = watched
            && !is_namespace_name(namespace)
        {
            return Err(ModelError::InvalidConfiguration(format!(
                "spec.entityOperator.{section}.watchedNamespace {namespace:?} is not a valid \
                 namespace name (lowercase letters, digits and '-', at most 63 characters)"
            )));
        }
        if let Some(Logging::Inline(inline)) = logging {
            for (logger, level) in inline.loggers.iter().flatten() {
                if !LOG_LEVELS.contains(&level.trim().to_ascii_uppercase().as_str()) {
                    return Err(ModelError::InvalidConfiguration(format!(
                        "spec.entityOperator.{section}.logging: logger {logger} has level \
                         {level:?}; expected one of {}",
                        LOG_LEVELS.join(", ")
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Whether `name` is a valid namespace name (an RFC 1123 label).
fn is_namespace_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || *byte == b'-')
        && bytes.first() != Some(&b'-')
        && bytes.last() != Some(&b'-')
}

/// The root logger's level of an inline logging section, upper-cased.
fn root_log_level(logging: Option<&Logging>) -> Option<String> {
    match logging {
        Some(Logging::Inline(inline)) => inline
            .loggers
            .as_ref()?
            .get("rootLogger.level")
            .map(|level| level.trim().to_ascii_uppercase()),
        _ => None,
    }
}

/// The rules of the entity operator's Role, which both operators need: their custom resources
/// and statuses, Secrets (the user operator's users and the CAs), Events, and reading the
/// namespace. The install bundle's `strimzi-entity-operator` ClusterRole holds the same, so
/// that the cluster operator may grant them.
pub fn role_rules() -> Vec<PolicyRule> {
    let rule = |group: &str, resources: &[&str], verbs: &[&str]| PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..PolicyRule::default()
    };
    vec![
        rule(
            "kafka.strimzi.io",
            &["kafkatopics", "kafkausers"],
            &["get", "list", "watch", "patch"],
        ),
        rule(
            "kafka.strimzi.io",
            &["kafkatopics/status", "kafkausers/status"],
            &["patch"],
        ),
        rule(
            "",
            &["secrets"],
            &["get", "list", "watch", "create", "patch", "delete"],
        ),
        rule("events.k8s.io", &["events"], &["create", "patch"]),
        rule("", &["namespaces"], &["get"]),
    ]
}

/// The two operators' shared view of the entity operator section.
struct EntityOperator<'a> {
    cluster: &'a KafkaCluster,
    spec: &'a EntityOperatorSpec,
    /// The Deployment's, ServiceAccount's, Roles' and NetworkPolicy's labels.
    labels: ComponentLabels,
    /// The labels of the topic operator's own objects (certificate, logging, binding), as
    /// Strimzi labels them: `<cluster>-entity-topic-operator`, `entity-topic-operator`.
    topic_labels: ComponentLabels,
    /// The same for the user operator.
    user_labels: ComponentLabels,
}

impl KafkaCluster {
    /// Refuses an entity operator whose topic or user operator watches another namespace
    /// than the Kafka's while the cluster operator does not allow it
    /// (`STRIMZI_ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED` false, the default): a security
    /// gate, since the entity operator gets Roles in the namespaces it watches. As Strimzi,
    /// the caller then removes the entity operator and reports the Kafka `NotReady` with this
    /// error.
    pub fn check_entity_operator_namespaces(&self) -> Result<(), ModelError> {
        let Some(spec) = &self.kafka.spec.entity_operator else {
            return Ok(());
        };
        if self.config.entity_operator_watched_namespace_enabled {
            return Ok(());
        }
        let watched = [
            (
                "topicOperator",
                spec.topic_operator
                    .as_ref()
                    .and_then(|to| to.watched_namespace.as_deref()),
            ),
            (
                "userOperator",
                spec.user_operator
                    .as_ref()
                    .and_then(|uo| uo.watched_namespace.as_deref()),
            ),
        ];
        let foreign: Vec<String> = watched
            .into_iter()
            .filter_map(|(section, namespace)| {
                namespace
                    .filter(|namespace| *namespace != self.namespace)
                    .map(|namespace| {
                        format!("spec.entityOperator.{section}.watchedNamespace is {namespace}")
                    })
            })
            .collect();
        if foreign.is_empty() {
            return Ok(());
        }
        Err(ModelError::InvalidConfiguration(format!(
            "{}, not the Kafka's namespace {}, and this cluster operator does not let the \
             entity operator watch other namespaces: the entity operator is removed. Set \
             STRIMZI_ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED=true on the cluster operator to \
             allow it",
            foreign.join(" and "),
            self.namespace
        )))
    }

    /// The entity operator's objects, `None` when `spec.entityOperator` runs no operator; the
    /// error of [`Self::check_entity_operator_namespaces`] when it may not run as asked.
    pub fn entity_operator(
        &self,
        inputs: &EntityOperatorInputs<'_>,
    ) -> Result<Option<EntityOperatorObjects>, ModelError> {
        self.check_entity_operator_namespaces()?;
        let Some(spec) = self.kafka.spec.entity_operator.as_ref() else {
            return Ok(None);
        };
        if spec.topic_operator.is_none() && spec.user_operator.is_none() {
            return Ok(None);
        }
        let model = EntityOperator {
            cluster: self,
            spec,
            labels: component_labels(
                self,
                naming::entity_operator_deployment(&self.name),
                COMPONENT_TYPE,
            ),
            topic_labels: component_labels(
                self,
                format!("{}-{TOPIC_OPERATOR_TYPE}", self.name),
                TOPIC_OPERATOR_TYPE,
            ),
            user_labels: component_labels(
                self,
                format!("{}-{USER_OPERATOR_TYPE}", self.name),
                USER_OPERATOR_TYPE,
            ),
        };
        Ok(Some(model.objects(inputs)))
    }
}

impl EntityOperator<'_> {
    fn template(&self) -> Option<&EntityOperatorTemplate> {
        self.spec.template.as_ref()
    }

    fn objects(&self, inputs: &EntityOperatorInputs<'_>) -> EntityOperatorObjects {
        let cluster = self.cluster;
        let mut secrets = Vec::new();
        let mut thumbprints = Vec::new();
        let issued = [
            (
                self.spec.topic_operator.is_some(),
                inputs.topic_operator_certificate,
                naming::entity_topic_operator_secret(&cluster.name),
                &self.topic_labels,
            ),
            (
                self.spec.user_operator.is_some(),
                inputs.user_operator_certificate,
                naming::entity_user_operator_secret(&cluster.name),
                &self.user_labels,
            ),
        ];
        for (_, certificate, name, labels) in issued.iter().filter(|(enabled, ..)| *enabled) {
            if let Some(certificate) = certificate {
                thumbprints.push(certificate.thumbprint());
                secrets.push(cluster.component_certificate_secret(
                    labels,
                    name,
                    certificate.secret_data(),
                    inputs.cluster_ca_cert_generation,
                ));
            }
        }
        let mut config_maps = Vec::new();
        if let Some(to) = &self.spec.topic_operator {
            config_maps.push(self.logging_config_map(&self.topic_labels, to.logging.as_ref()));
        }
        if let Some(uo) = &self.spec.user_operator {
            config_maps.push(self.logging_config_map(&self.user_labels, uo.logging.as_ref()));
        }
        let template = self.template();
        EntityOperatorObjects {
            service_account: cluster.component_service_account(
                &self.labels,
                template.and_then(|template| template.service_account.as_ref()),
            ),
            roles: self.roles(),
            role_bindings: self.role_bindings(),
            network_policy: self.network_policy(),
            config_maps,
            secrets,
            deployment: self.deployment(inputs, &thumbprints),
        }
    }

    /// Every namespace the operators work in: the Kafka's first, then the watched ones.
    fn namespaces(&self) -> Vec<String> {
        let mut namespaces = vec![self.cluster.namespace.clone()];
        for watched in [
            self.topic_watched_namespace(),
            self.user_watched_namespace(),
        ]
        .into_iter()
        .flatten()
        {
            if !namespaces.contains(&watched) {
                namespaces.push(watched);
            }
        }
        namespaces
    }

    fn topic_watched_namespace(&self) -> Option<String> {
        let to = self.spec.topic_operator.as_ref()?;
        Some(
            to.watched_namespace
                .clone()
                .unwrap_or_else(|| self.cluster.namespace.clone()),
        )
    }

    fn user_watched_namespace(&self) -> Option<String> {
        let uo = self.spec.user_operator.as_ref()?;
        Some(
            uo.watched_namespace
                .clone()
                .unwrap_or_else(|| self.cluster.namespace.clone()),
        )
    }

    /// Metadata of an object in `namespace`: owned by the Kafka only in its own namespace
    /// (owner references cannot cross namespaces).
    fn meta_in(
        &self,
        labels: &ComponentLabels,
        name: &str,
        namespace: &str,
        template: Option<&strimzi_api::common::ResourceTemplate>,
    ) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        let mut metadata = self.cluster.component_meta(
            labels,
            name,
            template.and_then(|template| template.metadata.as_ref()),
        );
        if namespace != self.cluster.namespace {
            metadata.namespace = Some(namespace.to_owned());
            metadata.owner_references = None;
        }
        metadata
    }

    fn roles(&self) -> Vec<Role> {
        let template = self
            .template()
            .and_then(|template| template.entity_operator_role.as_ref());
        self.namespaces()
            .iter()
            .map(|namespace| Role {
                metadata: self.meta_in(
                    &self.labels,
                    &self.labels.component_name,
                    namespace,
                    template,
                ),
                rules: Some(role_rules()),
            })
            .collect()
    }

    fn role_bindings(&self) -> Vec<RoleBinding> {
        let template = self.template();
        let mut bindings = Vec::new();
        let operators = [
            (
                &self.topic_labels,
                self.topic_watched_namespace(),
                template.and_then(|template| template.topic_operator_role_binding.as_ref()),
            ),
            (
                &self.user_labels,
                self.user_watched_namespace(),
                template.and_then(|template| template.user_operator_role_binding.as_ref()),
            ),
        ];
        for (labels, watched, template) in operators {
            let Some(watched) = watched else {
                continue;
            };
            let name = format!("{}-role", labels.component_name);
            let mut namespaces = vec![self.cluster.namespace.clone()];
            if watched != self.cluster.namespace {
                namespaces.push(watched);
            }
            for namespace in namespaces {
                bindings.push(RoleBinding {
                    metadata: self.meta_in(labels, &name, &namespace, template),
                    role_ref: RoleRef {
                        api_group: RBAC_API_GROUP.to_owned(),
                        kind: "Role".to_owned(),
                        name: self.labels.component_name.clone(),
                    },
                    subjects: Some(vec![Subject {
                        kind: "ServiceAccount".to_owned(),
                        name: self.labels.component_name.clone(),
                        namespace: Some(self.cluster.namespace.clone()),
                        api_group: None,
                    }]),
                });
            }
        }
        bindings
    }

    fn network_policy(&self) -> Option<NetworkPolicy> {
        if !self.cluster.config.network_policy_generation {
            return None;
        }
        let mut rules = Vec::new();
        if self.spec.topic_operator.is_some() {
            rules.push(ingress_rule(TOPIC_OPERATOR_PORT, Vec::new()));
        }
        if self.spec.user_operator.is_some() {
            rules.push(ingress_rule(USER_OPERATOR_PORT, Vec::new()));
        }
        Some(NetworkPolicy {
            metadata: self
                .cluster
                .component_meta(&self.labels, &self.labels.component_name, None),
            spec: Some(NetworkPolicySpec {
                pod_selector: Some(LabelSelector {
                    match_labels: Some(self.labels.selector()),
                    ..LabelSelector::default()
                }),
                ingress: Some(rules),
                policy_types: Some(vec!["Ingress".to_owned()]),
                ..NetworkPolicySpec::default()
            }),
        })
    }

    /// `<component name>-config`: the logging ConfigMap of one operator.
    fn logging_config_map(&self, labels: &ComponentLabels, logging: Option<&Logging>) -> ConfigMap {
        let name = format!("{}-config", labels.component_name);
        ConfigMap {
            metadata: self.cluster.component_meta(labels, &name, None),
            data: Some(
                [(
                    "log4j2.properties".to_owned(),
                    log4j2_properties("EOConfig", logging),
                )]
                .into_iter()
                .collect(),
            ),
            ..ConfigMap::default()
        }
    }

    fn deployment(&self, inputs: &EntityOperatorInputs<'_>, thumbprints: &[String]) -> Deployment {
        let cluster = self.cluster;
        let template = self.template();
        let pod_template = template.and_then(|template| template.pod.as_ref());
        let mut containers = Vec::new();
        let mut volumes = Vec::new();
        if let Some(to) = &self.spec.topic_operator {
            containers.push(self.topic_operator_container(
                to,
                template.and_then(|template| template.topic_operator_container.as_ref()),
            ));
            volumes.extend(operator_volumes(&self.topic_labels, "to", pod_template));
            if cluster.kafka.spec.cruise_control.is_some() {
                volumes.push(secret_volume(
                    CRUISE_CONTROL_API_VOLUME,
                    &naming::entity_topic_operator_cc_api_secret(&cluster.name),
                ));
            }
        }
        if let Some(uo) = &self.spec.user_operator {
            containers.push(self.user_operator_container(
                uo,
                template.and_then(|template| template.user_operator_container.as_ref()),
            ));
            volumes.extend(operator_volumes(&self.user_labels, "uo", pod_template));
        }
        volumes.push(secret_volume(
            "cluster-ca-certs",
            &naming::cluster_ca_cert_secret(&cluster.name),
        ));
        cluster.component_deployment(DeploymentParts {
            labels: &self.labels,
            replicas: 1,
            deployment_template: template.and_then(|template| template.deployment.as_ref()),
            pod_template,
            strategy_from_template: false,
            pod_annotations: certificate_annotations(
                inputs.cluster_ca_cert_generation,
                inputs.cluster_ca_key_generation,
                thumbprints,
            ),
            containers,
            volumes,
        })
    }

    /// The environment both operators share: how to reach the brokers, what to watch.
    fn common_env(
        &self,
        watched: Option<String>,
        interval_ms: Option<i64>,
    ) -> Vec<k8s_openapi::api::core::v1::EnvVar> {
        let mut vars = vec![
            env(
                "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
                format!(
                    "{}:{REPLICATION_PORT}",
                    naming::bootstrap_service(&self.cluster.name)
                ),
            ),
            env(
                "STRIMZI_NAMESPACE",
                watched.unwrap_or_else(|| self.cluster.namespace.clone()),
            ),
        ];
        if let Some(interval) = interval_ms {
            vars.push(env(
                "STRIMZI_FULL_RECONCILIATION_INTERVAL_MS",
                interval.to_string(),
            ));
        }
        vars
    }

    fn topic_operator_container(
        &self,
        spec: &EntityTopicOperatorSpec,
        template: Option<&ContainerTemplate>,
    ) -> Container {
        let cluster = self.cluster;
        let mut vars = vec![env(
            "STRIMZI_RESOURCE_LABELS",
            format!("strimzi.io/cluster={}", cluster.name),
        )];
        vars.extend(self.common_env(
            self.topic_watched_namespace(),
            spec.reconciliation_interval_ms,
        ));
        vars.extend([
            env("STRIMZI_SECURITY_PROTOCOL", "SSL"),
            env("STRIMZI_TLS_ENABLED", "true"),
        ]);
        let mut mounts = operator_mounts(&self.topic_labels, "to", TOPIC_OPERATOR_CONTAINER);
        if let Some(cruise_control) = &cluster.kafka.spec.cruise_control {
            let security = ApiSecurity::of(cruise_control);
            vars.extend([
                env("STRIMZI_CRUISE_CONTROL_ENABLED", "true"),
                env(
                    "STRIMZI_CRUISE_CONTROL_RACK_ENABLED",
                    cluster.spec.rack.is_some().to_string(),
                ),
                env(
                    "STRIMZI_CRUISE_CONTROL_HOSTNAME",
                    format!(
                        "{}.{}.svc",
                        naming::cruise_control(&cluster.name),
                        cluster.namespace
                    ),
                ),
                env(
                    "STRIMZI_CRUISE_CONTROL_PORT",
                    cruise_control::REST_API_PORT.to_string(),
                ),
                env(
                    "STRIMZI_CRUISE_CONTROL_SSL_ENABLED",
                    security.tls.to_string(),
                ),
                env(
                    "STRIMZI_CRUISE_CONTROL_AUTH_ENABLED",
                    security.authentication.to_string(),
                ),
            ]);
            mounts.push(mount(CRUISE_CONTROL_API_VOLUME, CRUISE_CONTROL_API_MOUNT));
        }
        let mut container = self.operator_container(OperatorContainer {
            name: TOPIC_OPERATOR_CONTAINER,
            image: spec
                .image
                .clone()
                .unwrap_or_else(|| cluster.config.topic_operator_image.clone()),
            script: "/opt/strimzi/bin/topic_operator_run.sh",
            vars,
            port: TOPIC_OPERATOR_PORT,
            mounts,
            settings: OperatorSettings {
                liveness: spec.liveness_probe.as_ref(),
                readiness: spec.readiness_probe.as_ref(),
                resources: spec.resources.as_ref(),
                logging: spec.logging.as_ref(),
                jvm: spec.jvm_options.as_ref(),
            },
            template,
        });
        container.startup_probe = Some(http_probe(
            "/healthy",
            HEALTH_PORT_NAME,
            spec.startup_probe.as_ref(),
            ProbeOptions {
                period_seconds: Some(10),
                failure_threshold: Some(12),
                ..ProbeOptions::default()
            },
        ));
        container
    }

    fn user_operator_container(
        &self,
        spec: &EntityUserOperatorSpec,
        template: Option<&ContainerTemplate>,
    ) -> Container {
        let cluster = self.cluster;
        let kafka = &cluster.kafka.spec;
        let mut vars = self.common_env(
            self.user_watched_namespace(),
            spec.reconciliation_interval_ms,
        );
        let clients_ca = kafka.clients_ca.clone().unwrap_or_default();
        let acls_admin_api = match &cluster.spec.authorization {
            Some(KafkaAuthorization::Simple(_)) => true,
            Some(KafkaAuthorization::Custom(custom)) => custom.supports_admin_api.unwrap_or(false),
            _ => false,
        };
        vars.extend([
            env(
                "STRIMZI_LABELS",
                format!("strimzi.io/cluster={}", cluster.name),
            ),
            env(
                "STRIMZI_CA_CERT_NAME",
                naming::clients_ca_cert_secret(&cluster.name),
            ),
            env(
                "STRIMZI_CA_KEY_NAME",
                naming::clients_ca_key_secret(&cluster.name),
            ),
            env(
                "STRIMZI_CLUSTER_CA_CERT_SECRET_NAME",
                naming::cluster_ca_cert_secret(&cluster.name),
            ),
            env(
                "STRIMZI_EO_KEY_SECRET_NAME",
                naming::entity_user_operator_secret(&cluster.name),
            ),
            env("STRIMZI_CA_NAMESPACE", cluster.namespace.clone()),
        ]);
        if let Some(prefix) = &spec.secret_prefix {
            vars.push(env("STRIMZI_SECRET_PREFIX", prefix.clone()));
        }
        vars.push(env(
            "STRIMZI_ACLS_ADMIN_API_SUPPORTED",
            acls_admin_api.to_string(),
        ));
        if let Some(windows) = kafka
            .maintenance_time_windows
            .as_ref()
            .filter(|windows| !windows.is_empty())
        {
            vars.push(env("STRIMZI_MAINTENANCE_TIME_WINDOWS", windows.join(";")));
        }
        vars.extend([
            env(
                "STRIMZI_CA_VALIDITY",
                clients_ca.validity_days_or_default().to_string(),
            ),
            env(
                "STRIMZI_CA_RENEWAL",
                clients_ca.renewal_days_or_default().to_string(),
            ),
        ]);
        self.operator_container(OperatorContainer {
            name: USER_OPERATOR_CONTAINER,
            image: spec
                .image
                .clone()
                .unwrap_or_else(|| cluster.config.user_operator_image.clone()),
            script: "/opt/strimzi/bin/user_operator_run.sh",
            vars,
            port: USER_OPERATOR_PORT,
            mounts: operator_mounts(&self.user_labels, "uo", USER_OPERATOR_CONTAINER),
            settings: OperatorSettings {
                liveness: spec.liveness_probe.as_ref(),
                readiness: spec.readiness_probe.as_ref(),
                resources: spec.resources.as_ref(),
                logging: spec.logging.as_ref(),
                jvm: spec.jvm_options.as_ref(),
            },
            template,
        })
    }

    /// One operator's container: `parts` plus what both share (the GC and log level
    /// variables, the template's variables, mounts and security context, the health and
    /// readiness probes, the image pull policy).
    fn operator_container(&self, parts: OperatorContainer<'_>) -> Container {
        let settings = parts.settings;
        let mut vars = parts.vars;
        vars.push(env("STRIMZI_GC_LOG_ENABLED", gc_logging(settings.jvm)));
        if let Some(level) = root_log_level(settings.logging) {
            vars.push(env("STRIMZI_LOG_LEVEL", level));
        }
        add_shared_and_template_env(&mut vars, &self.cluster.config.shared_env, parts.template);
        let mut mounts = parts.mounts;
        mounts.extend(template_mounts(parts.template));
        let probe = |path: &str, options: Option<&ProbeOptions>| {
            Some(http_probe(
                path,
                HEALTH_PORT_NAME,
                options,
                health_defaults(),
            ))
        };
        Container {
            name: parts.name.to_owned(),
            image_pull_policy: Some(self.cluster.image_pull_policy(&parts.image)),
            image: Some(parts.image),
            args: Some(vec![parts.script.to_owned()]),
            env: Some(vars),
            ports: Some(vec![container_port(HEALTH_PORT_NAME, parts.port)]),
            liveness_probe: probe("/healthy", settings.liveness),
            readiness_probe: probe("/ready", settings.readiness),
            resources: settings.resources.cloned(),
            volume_mounts: Some(mounts),
            security_context: self.cluster.container_security_context(parts.template),
            ..Container::default()
        }
    }
}

/// What one of the two operators' containers is made of.
struct OperatorContainer<'a> {
    name: &'static str,
    image: String,
    /// The start script (the image's program behind Strimzi's script path).
    script: &'static str,
    /// The operator's own variables.
    vars: Vec<EnvVar>,
    /// The health port.
    port: i32,
    /// The operator's own mounts.
    mounts: Vec<k8s_openapi::api::core::v1::VolumeMount>,
    settings: OperatorSettings<'a>,
    template: Option<&'a ContainerTemplate>,
}

/// The settings both operators' sections have.
struct OperatorSettings<'a> {
    liveness: Option<&'a ProbeOptions>,
    readiness: Option<&'a ProbeOptions>,
    resources: Option<&'a k8s_openapi::api::core::v1::ResourceRequirements>,
    logging: Option<&'a Logging>,
    jvm: Option<&'a strimzi_api::common::JvmOptions>,
}

/// Strimzi's health probe defaults of both operators: 10 s initial delay, 5 s timeout.
fn health_defaults() -> ProbeOptions {
    ProbeOptions {
        initial_delay_seconds: Some(10),
        timeout_seconds: Some(5),
        ..ProbeOptions::default()
    }
}

/// `STRIMZI_GC_LOG_ENABLED`, as Strimzi sets it (no effect on our operators).
fn gc_logging(jvm: Option<&strimzi_api::common::JvmOptions>) -> String {
    jvm.and_then(|jvm| jvm.gc_logging_enabled)
        .unwrap_or(false)
        .to_string()
}

/// The volumes of one operator, named as Strimzi names them (`short` is `to` or `uo`): its
/// logging ConfigMap (`<component>-config`), its memory-backed `/tmp` and its certificate
/// Secret (`<component>-certs`).
fn operator_volumes(
    labels: &ComponentLabels,
    short: &str,
    pod_template: Option<&strimzi_api::common::PodTemplate>,
) -> [Volume; 3] {
    [
        config_map_volume(
            &format!("{}-metrics-and-logging", labels.component_type),
            &format!("{}-config", labels.component_name),
        ),
        tmp_volume(&format!("strimzi-{short}-tmp"), pod_template),
        secret_volume(
            &format!("e{short}-certs"),
            &format!("{}-certs", labels.component_name),
        ),
    ]
}

/// The mounts of one operator's volumes ([`operator_volumes`]) where Strimzi mounts them:
/// `/tmp`, the logging ConfigMap under `/opt/<container>/custom-config/`, its certificate under
/// `/etc/e<short>-certs/`, and the cluster CA certificate.
fn operator_mounts(
    labels: &ComponentLabels,
    short: &str,
    container: &str,
) -> Vec<k8s_openapi::api::core::v1::VolumeMount> {
    vec![
        mount(&format!("strimzi-{short}-tmp"), "/tmp"),
        mount(
            &format!("{}-metrics-and-logging", labels.component_type),
            &format!("/opt/{container}/custom-config/"),
        ),
        mount(&format!("e{short}-certs"), &format!("/etc/e{short}-certs/")),
        mount("cluster-ca-certs", CLUSTER_CA_CERTS_MOUNT),
    ]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn namespace_names_are_rfc_1123_labels() {
        assert!(is_namespace_name("team-a"));
        assert!(is_namespace_name("a1"));
        assert!(!is_namespace_name("Team"));
        assert!(!is_namespace_name("-a"));
        assert!(!is_namespace_name("a_b"));
        assert!(!is_namespace_name(""));
        assert!(!is_namespace_name(&"a".repeat(64)));
    }

    #[test]
    fn root_level_comes_from_inline_logging() {
        let inline: Logging = serde_json::from_value(serde_json::json!({
            "type": "inline", "loggers": {"rootLogger.level": "debug"}
        }))
        .unwrap();
        assert_eq!(root_log_level(Some(&inline)).as_deref(), Some("DEBUG"));
        assert_eq!(root_log_level(None), None);
        let properties = log4j2_properties("EOConfig", Some(&inline));
        assert!(
            properties.contains("rootLogger.level = DEBUG\n"),
            "{properties}"
        );
        assert!(log4j2_properties("EOConfig", None).contains("rootLogger.level = INFO\n"));
    }
}
