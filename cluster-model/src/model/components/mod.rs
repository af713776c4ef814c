//! The components a Kafka resource asks for next to its nodes, each run by a Deployment: the
//! entity operator (our topic and user operators, [`entity_operator`]), Kafka Exporter
//! ([`kafka_exporter`]) and Cruise Control ([`cruise_control`]). This module holds what they share: their labels, the client
//! certificate each one connects to the brokers with, and how a Deployment is built from a
//! component's containers and its `template`.
//!
//! Like the rest of the model it is pure: the caller issues the certificates (with
//! [`certificate_requests`] and the cluster CA) and hands them in.

pub mod cruise_control;
pub mod entity_operator;
pub mod kafka_exporter;

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, Container, HTTPGetAction, PodSpec, PodTemplateSpec, Probe, Secret,
    SecretVolumeSource, ServiceAccount, ServicePort, ServiceSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use strimzi_api::annotations;
use strimzi_api::common::{
    DeploymentStrategy as StrategyOption, DeploymentTemplate, InternalServiceTemplate, Logging,
    PodTemplate, Probe as ProbeOptions, ResourceTemplate,
};
use strimzi_api::selectors::ComponentLabels;
use strimzi_certificate_manager::leaf::ExistingLeaf;

use super::desired::CertificateRequest;
use super::meta::{
    ObjectScope, StringMap, merged, template_annotations, template_labels, with_additional_labels,
};
use super::nodes::templates::metadata;
use super::{KafkaCluster, ModelError};
use crate::model::containers::{convert, empty_dir, template_volumes, templated_pod_spec};

/// The component type of the topic operator's own objects (its Cruise Control API user's
/// Secret among them).
pub const TOPIC_OPERATOR_TYPE: &str = "entity-topic-operator";

/// Default size of a component's memory-backed `/tmp`.
const TMP_DEFAULT_SIZE: &str = "5Mi";

/// One component's client certificate: the Secret it lives in and its request.
#[derive(Clone, Debug)]
pub struct ComponentCertificateRequest {
    /// Name of the Secret (`<cluster>-entity-topic-operator-certs`, ...).
    pub secret_name: String,
    /// What the certificate must say and what the Secret holds now.
    pub request: CertificateRequest,
}

/// The client certificates the Kafka's components need, with what their Secrets (among
/// `existing`, by name) hold now: one for each operator of the entity operator (unless it
/// is refused, see [`KafkaCluster::check_entity_operator_namespaces`]), one for Kafka
/// Exporter and one for Cruise Control, as enabled.
pub fn certificate_requests(
    cluster: &KafkaCluster,
    existing: &BTreeMap<String, Secret>,
) -> Vec<ComponentCertificateRequest> {
    let mut wanted = Vec::new();
    if let Some(entity) = &cluster.kafka.spec.entity_operator
        && cluster.check_entity_operator_namespaces().is_ok()
    {
        if entity.topic_operator.is_some() {
            wanted.push(entity_operator::topic_operator_certificate(&cluster.name));
        }
        if entity.user_operator.is_some() {
            wanted.push(entity_operator::user_operator_certificate(&cluster.name));
        }
    }
    if cluster.kafka.spec.kafka_exporter.is_some() {
        wanted.push(kafka_exporter::certificate(&cluster.name));
    }
    if cluster.kafka.spec.cruise_control.is_some() {
        wanted.push(cruise_control::certificate(cluster));
    }
    wanted
        .into_iter()
        .map(|(secret_name, spec)| ComponentCertificateRequest {
            request: CertificateRequest {
                existing: existing
                    .get(&secret_name)
                    .map(|secret| ExistingLeaf::from_secret(secret, &spec.name)),
                spec,
            },
            secret_name,
        })
        .collect()
}

/// Checks the component sections of the Kafka that the CRD cannot: watched namespaces and
/// logging levels. Run before anything is applied, so that bad input leaves the cluster as
/// it is.
pub fn validate(cluster: &KafkaCluster) -> Result<(), ModelError> {
    entity_operator::validate(cluster)?;
    kafka_exporter::validate(cluster)?;
    cruise_control::validate(cluster)
}

/// The labels of one component of the Kafka (e.g. `entity-operator`, named
/// `<cluster>-entity-operator`).
pub(crate) fn component_labels(
    cluster: &KafkaCluster,
    component_name: String,
    component_type: &str,
) -> ComponentLabels {
    ComponentLabels {
        component_name,
        component_type: component_type.to_owned(),
        ..cluster.component_labels()
    }
}

/// Everything that makes a component's Deployment besides the cluster's settings.
pub(crate) struct DeploymentParts<'a> {
    /// The component's labels.
    pub labels: &'a ComponentLabels,
    /// Number of pods.
    pub replicas: i32,
    /// `template.deployment`.
    pub deployment_template: Option<&'a DeploymentTemplate>,
    /// `template.pod`.
    pub pod_template: Option<&'a PodTemplate>,
    /// Whether `template.deployment.deploymentStrategy` is honoured (the entity operator
    /// always recreates its pod, as Strimzi's does).
    pub strategy_from_template: bool,
    /// Annotations of the pod that restart it when they change (CA generations,
    /// certificate thumbprints).
    pub pod_annotations: StringMap,
    /// The containers.
    pub containers: Vec<Container>,
    /// The volumes besides the template's additional ones.
    pub volumes: Vec<Volume>,
}

impl ObjectScope<'_> {
    /// Metadata of a component's object: its labels plus the template's, and the template's
    /// annotations.
    pub(crate) fn component_meta(
        &self,
        labels: &ComponentLabels,
        name: &str,
        template: Option<&strimzi_api::common::MetadataTemplate>,
    ) -> ObjectMeta {
        self.object_meta(
            name,
            with_additional_labels(&self.labels(labels), &template_labels(template)),
            template_annotations(template),
        )
    }

    /// The ServiceAccount of a component, named as the component.
    pub(crate) fn service_account(
        &self,
        labels: &ComponentLabels,
        template: Option<&ResourceTemplate>,
    ) -> ServiceAccount {
        ServiceAccount {
            metadata: self.component_meta(labels, &labels.component_name, metadata(template)),
            ..ServiceAccount::default()
        }
    }

    /// A component's Deployment: `parts.replicas` pods with the component's ServiceAccount,
    /// the pod template's scheduling and security settings, and the given volumes plus the
    /// template's additional ones.
    pub(crate) fn deployment(&self, parts: DeploymentParts<'_>) -> Deployment {
        let labels = self.labels(parts.labels);
        let deployment_metadata = parts
            .deployment_template
            .and_then(|template| template.metadata.as_ref());
        let pod = parts.pod_template;
        let pod_metadata = pod.and_then(|pod| pod.metadata.as_ref());
        let strategy = parts
            .deployment_template
            .filter(|_| parts.strategy_from_template)
            .and_then(|template| template.deployment_strategy);
        let strategy = match (parts.strategy_from_template, strategy) {
            (false, _) | (true, Some(StrategyOption::Recreate)) => DeploymentStrategy {
                type_: Some("Recreate".to_owned()),
                rolling_update: None,
            },
            (true, _) => DeploymentStrategy {
                type_: Some("RollingUpdate".to_owned()),
                rolling_update: Some(RollingUpdateDeployment {
                    max_surge: Some(IntOrString::Int(1)),
                    max_unavailable: Some(IntOrString::Int(0)),
                }),
            },
        };
        let mut volumes = parts.volumes;
        volumes.extend(template_volumes(pod));
        Deployment {
            metadata: self.object_meta(
                &parts.labels.component_name,
                with_additional_labels(&labels, &template_labels(deployment_metadata)),
                template_annotations(deployment_metadata),
            ),
            spec: Some(DeploymentSpec {
                replicas: Some(parts.replicas),
                selector: LabelSelector {
                    match_labels: Some(parts.labels.selector()),
                    ..LabelSelector::default()
                },
                strategy: Some(strategy),
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        name: Some(parts.labels.component_name.clone()),
                        labels: Some(with_additional_labels(
                            &labels,
                            &template_labels(pod_metadata),
                        )),
                        annotations: Some(merged([
                            &parts.pod_annotations,
                            &template_annotations(pod_metadata),
                        ])),
                        ..ObjectMeta::default()
                    }),
                    spec: Some(PodSpec {
                        service_account_name: Some(parts.labels.component_name.clone()),
                        containers: parts.containers,
                        volumes: Some(volumes),
                        restart_policy: Some("Always".to_owned()),
                        image_pull_secrets: self.config.image_pull_secrets(pod),
                        ..templated_pod_spec(pod)
                    }),
                },
                ..DeploymentSpec::default()
            }),
            status: None,
        }
    }
}

impl KafkaCluster {
    /// The ServiceAccount of a component, named as the component.
    pub(crate) fn component_service_account(
        &self,
        labels: &ComponentLabels,
        template: Option<&ResourceTemplate>,
    ) -> ServiceAccount {
        self.scope().service_account(labels, template)
    }

    /// Metadata of a component's object ([`ObjectScope::component_meta`]).
    pub(crate) fn component_meta(
        &self,
        labels: &ComponentLabels,
        name: &str,
        template: Option<&strimzi_api::common::MetadataTemplate>,
    ) -> ObjectMeta {
        self.scope().component_meta(labels, name, template)
    }

    /// A component's Secret with its client certificate (`data`), annotated with the cluster
    /// CA certificate generation that signed it.
    pub(crate) fn component_certificate_secret(
        &self,
        labels: &ComponentLabels,
        name: &str,
        data: BTreeMap<String, k8s_openapi::ByteString>,
        cluster_ca_cert_generation: u32,
    ) -> Secret {
        let mut metadata = self.component_meta(labels, name, None);
        metadata.annotations = Some(StringMap::from([(
            annotations::CLUSTER_CA_CERT_GENERATION.to_owned(),
            cluster_ca_cert_generation.to_string(),
        )]));
        Secret {
            metadata,
            type_: Some("Opaque".to_owned()),
            data: Some(data),
            ..Secret::default()
        }
    }

    /// A component's Deployment of one replica ([`ObjectScope::deployment`]).
    pub(crate) fn component_deployment(&self, parts: DeploymentParts<'_>) -> Deployment {
        self.scope().deployment(parts)
    }
}

/// A component's memory-backed `/tmp` volume, sized by the pod template.
pub(crate) fn tmp_volume(name: &str, pod_template: Option<&PodTemplate>) -> Volume {
    let size = pod_template
        .and_then(|pod| pod.tmp_dir_size_limit.clone())
        .unwrap_or_else(|| TMP_DEFAULT_SIZE.to_owned());
    empty_dir(name, Some(size), Some("Memory"))
}

/// A volume of the Secret `secret`, readable by everyone in the pod (mode 0444), as Strimzi
/// mounts certificates.
pub(crate) fn secret_volume(name: &str, secret: &str) -> Volume {
    Volume {
        name: name.to_owned(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(secret.to_owned()),
            default_mode: Some(0o444),
            ..SecretVolumeSource::default()
        }),
        ..Volume::default()
    }
}

/// An HTTP GET probe of `path` on the container port named `port`, with `defaults` (initial
/// delay, timeout) where `options` leaves them unset, and Kubernetes' period and thresholds
/// otherwise.
pub(crate) fn http_probe(
    path: &str,
    port: &str,
    options: Option<&ProbeOptions>,
    defaults: ProbeOptions,
) -> Probe {
    let options = options.cloned().unwrap_or_default();
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::String(port.to_owned()),
            ..HTTPGetAction::default()
        }),
        initial_delay_seconds: options
            .initial_delay_seconds
            .or(defaults.initial_delay_seconds),
        timeout_seconds: options.timeout_seconds.or(defaults.timeout_seconds),
        period_seconds: options.period_seconds.or(defaults.period_seconds),
        success_threshold: options.success_threshold.or(defaults.success_threshold),
        failure_threshold: options.failure_threshold.or(defaults.failure_threshold),
        ..Probe::default()
    }
}

/// The annotations that restart a component's pod when its certificate or the cluster CA
/// changes: the CA's certificate and key generations and a thumbprint of the component's
/// certificates.
pub(crate) fn certificate_annotations(
    cluster_ca_cert_generation: u32,
    cluster_ca_key_generation: u32,
    thumbprints: &[String],
) -> StringMap {
    StringMap::from([
        (
            annotations::CLUSTER_CA_CERT_GENERATION.to_owned(),
            cluster_ca_cert_generation.to_string(),
        ),
        (
            annotations::CLUSTER_CA_KEY_GENERATION.to_owned(),
            cluster_ca_key_generation.to_string(),
        ),
        (
            annotations::SERVER_CERT_HASH.to_owned(),
            thumbprints.join("-"),
        ),
    ])
}

/// A component's logging ConfigMap content: a log4j2 properties file named `config_name`
/// with a console appender and the inline levels (INFO for the root logger unless set).
pub(crate) fn log4j2_properties(config_name: &str, logging: Option<&Logging>) -> String {
    let mut loggers: Vec<(String, String)> = match logging {
        Some(Logging::Inline(inline)) => inline
            .loggers
            .iter()
            .flatten()
            .map(|(name, level)| (name.clone(), level.trim().to_ascii_uppercase()))
            .collect(),
        _ => Vec::new(),
    };
    if !loggers.iter().any(|(name, _)| name == "rootLogger.level") {
        loggers.push(("rootLogger.level".to_owned(), "INFO".to_owned()));
    }
    let mut text = format!(
        "# Generated from the resource's logging section.\n\
         name = {config_name}\n\
         appender.console.type = Console\n\
         appender.console.name = STDOUT\n\
         appender.console.layout.type = PatternLayout\n\
         appender.console.layout.pattern = %d{{yyyy-MM-dd HH:mm:ss}} %-5p [%t] %c{{1}}:%L - %m%n\n\
         rootLogger.appenderRef.console.ref = STDOUT\n"
    );
    for (name, level) in loggers {
        text.push_str(&format!("{name} = {level}\n"));
    }
    text
}

/// A volume of the ConfigMap `config_map` (mode 0644).
pub(crate) fn config_map_volume(name: &str, config_map: &str) -> Volume {
    Volume {
        name: name.to_owned(),
        config_map: Some(ConfigMapVolumeSource {
            name: config_map.to_owned(),
            default_mode: Some(0o644),
            ..ConfigMapVolumeSource::default()
        }),
        ..Volume::default()
    }
}

/// A TCP port of a Service, sent to the container port of the same number.
pub(crate) fn service_port(name: &str, port: i32) -> ServicePort {
    ServicePort {
        name: Some(name.to_owned()),
        protocol: Some("TCP".to_owned()),
        port,
        target_port: Some(IntOrString::Int(port)),
        ..ServicePort::default()
    }
}

/// The spec of a `ClusterIP` Service of `ports` in front of the pods `selector` picks, with
/// the IP family policy and families `template` asks for.
pub(crate) fn cluster_ip_service_spec(
    selector: StringMap,
    ports: Vec<ServicePort>,
    template: Option<&InternalServiceTemplate>,
) -> ServiceSpec {
    ServiceSpec {
        type_: Some("ClusterIP".to_owned()),
        selector: Some(selector),
        ports: Some(ports),
        ip_family_policy: template
            .and_then(|template| template.ip_family_policy)
            .and_then(|policy| convert(&policy)),
        ip_families: template
            .and_then(|template| template.ip_families.as_ref())
            .and_then(convert),
        ..ServiceSpec::default()
    }
}
