//! Kafka Exporter (`spec.kafkaExporter`): the `<cluster>-kafka-exporter` Deployment running
//! the exporter that Strimzi's Kafka image carries, started by the image's own script
//! (`/opt/kafka-exporter/kafka_exporter_run.sh`) with the environment variables that script
//! reads, serving Prometheus metrics on port 9404. It connects to the brokers' replication
//! listener with its own client certificate (`<cluster>-kafka-exporter-certs`) and the
//! cluster CA from the trust bundle, where the script expects them.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, EnvVar, Secret, ServiceAccount};
use strimzi_api::common::Probe as ProbeOptions;
use strimzi_api::kafka::KafkaExporterSpec;
use strimzi_api::naming;
use strimzi_certificate_manager::leaf::{IssuedCertificate, LeafSpec};

use super::{
    DeploymentParts, certificate_annotations, component_labels, http_probe, secret_volume,
    tmp_volume,
};
use crate::model::containers::{
    add_shared_and_template_env, container_port, env, mount, template_mounts,
};
use crate::model::listeners::services::REPLICATION_PORT;
use crate::model::security::policies::trust_bundle_secret;
use crate::model::{KafkaCluster, ModelError};

/// The component type of Kafka Exporter's objects.
pub const COMPONENT_TYPE: &str = "kafka-exporter";
/// Port and port name of the metrics endpoint.
pub const METRICS_PORT: i32 = 9404;
const METRICS_PORT_NAME: &str = "tcp-prometheus";
/// The exporter's verbosity names and the numbers its `--verbosity` flag takes.
const LOG_LEVELS: [(&str, &str); 3] = [("info", "0"), ("debug", "1"), ("trace", "2")];

/// The Secret name and certificate spec of Kafka Exporter (`CN=<cluster>-kafka-exporter`).
pub fn certificate(cluster: &str) -> (String, LeafSpec) {
    let name = naming::kafka_exporter(cluster);
    (
        format!("{name}-certs"),
        LeafSpec::component(COMPONENT_TYPE, &name),
    )
}

/// Every object of Kafka Exporter.
#[derive(Clone, Debug)]
pub struct KafkaExporterObjects {
    /// `<cluster>-kafka-exporter`.
    pub service_account: ServiceAccount,
    /// `<cluster>-kafka-exporter-certs`.
    pub secret: Secret,
    /// `<cluster>-kafka-exporter`.
    pub deployment: Deployment,
}

/// The exporter's `--verbosity` for `logging`: `info`, `debug` or `trace` (or a number).
fn verbosity(logging: &str) -> Option<String> {
    let logging = logging.trim().to_ascii_lowercase();
    LOG_LEVELS
        .iter()
        .find(|(name, _)| *name == logging)
        .map(|(_, level)| (*level).to_owned())
        .or_else(|| logging.parse::<u8>().ok().map(|level| level.to_string()))
}

/// Checks the logging level.
pub(crate) fn validate(cluster: &KafkaCluster) -> Result<(), ModelError> {
    let logging = cluster
        .kafka
        .spec
        .kafka_exporter
        .as_ref()
        .and_then(|exporter| exporter.logging.as_deref());
    match logging {
        Some(level) if verbosity(level).is_none() => {
            Err(ModelError::InvalidConfiguration(format!(
                "spec.kafkaExporter.logging {level:?} is not a log level; expected info, debug \
                 or trace"
            )))
        }
        _ => Ok(()),
    }
}

impl KafkaCluster {
    /// Kafka Exporter's objects, `None` without `spec.kafkaExporter` or before its
    /// certificate was issued.
    pub fn kafka_exporter(
        &self,
        certificate: Option<&IssuedCertificate>,
        cluster_ca_cert_generation: u32,
        cluster_ca_key_generation: u32,
    ) -> Option<KafkaExporterObjects> {
        let spec = self.kafka.spec.kafka_exporter.as_ref()?;
        let certificate = certificate?;
        let labels = component_labels(self, naming::kafka_exporter(&self.name), COMPONENT_TYPE);
        let template = spec.template.as_ref();
        let pod_template = template.and_then(|template| template.pod.as_ref());
        let (secret_name, _) = self::certificate(&self.name);
        Some(KafkaExporterObjects {
            service_account: self.component_service_account(
                &labels,
                template.and_then(|template| template.service_account.as_ref()),
            ),
            secret: self.component_certificate_secret(
                &labels,
                &secret_name,
                certificate.secret_data(),
                cluster_ca_cert_generation,
            ),
            deployment: self.component_deployment(DeploymentParts {
                labels: &labels,
                replicas: 1,
                deployment_template: template.and_then(|template| template.deployment.as_ref()),
                pod_template,
                strategy_from_template: true,
                pod_annotations: certificate_annotations(
                    cluster_ca_cert_generation,
                    cluster_ca_key_generation,
                    &[certificate.thumbprint()],
                ),
                containers: vec![self.exporter_container(spec, &labels.component_name)],
                volumes: vec![
                    tmp_volume("kafka-exporter-tmp", pod_template),
                    secret_volume("cluster-ca-certs", &trust_bundle_secret(&self.name)),
                    secret_volume("kafka-exporter-certs", &secret_name),
                ],
            }),
        })
    }

    fn exporter_env(&self, spec: &KafkaExporterSpec) -> Vec<EnvVar> {
        let mut vars = vec![
            env(
                "KAFKA_EXPORTER_LOGGING",
                spec.logging
                    .as_deref()
                    .and_then(verbosity)
                    .unwrap_or_else(|| "0".to_owned()),
            ),
            env("KAFKA_EXPORTER_KAFKA_VERSION", self.version.version.clone()),
            env(
                "KAFKA_EXPORTER_GROUP_REGEX",
                spec.group_regex.clone().unwrap_or_else(|| ".*".to_owned()),
            ),
            env(
                "KAFKA_EXPORTER_TOPIC_REGEX",
                spec.topic_regex.clone().unwrap_or_else(|| ".*".to_owned()),
            ),
        ];
        if let Some(exclude) = &spec.group_exclude_regex {
            vars.push(env("KAFKA_EXPORTER_GROUP_EXCLUDE_REGEX", exclude.clone()));
        }
        if let Some(exclude) = &spec.topic_exclude_regex {
            vars.push(env("KAFKA_EXPORTER_TOPIC_EXCLUDE_REGEX", exclude.clone()));
        }
        vars.extend([
            env(
                "KAFKA_EXPORTER_KAFKA_SERVER",
                format!(
                    "{}:{REPLICATION_PORT}",
                    naming::bootstrap_service(&self.name)
                ),
            ),
            env(
                "KAFKA_EXPORTER_ENABLE_SARAMA",
                spec.enable_sarama_logging.unwrap_or(false).to_string(),
            ),
            env(
                "KAFKA_EXPORTER_OFFSET_SHOW_ALL",
                spec.show_all_offsets.unwrap_or(true).to_string(),
            ),
        ]);
        vars
    }

    fn exporter_container(&self, spec: &KafkaExporterSpec, name: &str) -> Container {
        let template = spec
            .template
            .as_ref()
            .and_then(|template| template.container.as_ref());
        let mut vars = self.exporter_env(spec);
        add_shared_and_template_env(&mut vars, &self.config.shared_env, template);
        let mut mounts = vec![
            mount("kafka-exporter-tmp", "/tmp"),
            mount("cluster-ca-certs", "/etc/kafka-exporter/cluster-ca-certs/"),
            mount(
                "kafka-exporter-certs",
                "/etc/kafka-exporter/kafka-exporter-certs/",
            ),
        ];
        mounts.extend(template_mounts(template));
        let image = spec
            .image
            .clone()
            .or_else(|| self.config.kafka_exporter_image.clone())
            .unwrap_or_else(|| self.version.image.clone());
        let defaults = || ProbeOptions {
            initial_delay_seconds: Some(15),
            timeout_seconds: Some(15),
            ..ProbeOptions::default()
        };
        Container {
            name: name.to_owned(),
            image_pull_policy: Some(self.image_pull_policy(&image)),
            image: Some(image),
            args: Some(vec!["/opt/kafka-exporter/kafka_exporter_run.sh".to_owned()]),
            env: Some(vars),
            ports: Some(vec![container_port(METRICS_PORT_NAME, METRICS_PORT)]),
            liveness_probe: Some(http_probe(
                "/healthz",
                METRICS_PORT_NAME,
                spec.liveness_probe.as_ref(),
                defaults(),
            )),
            readiness_probe: Some(http_probe(
                "/healthz",
                METRICS_PORT_NAME,
                spec.readiness_probe.as_ref(),
                defaults(),
            )),
            resources: spec.resources.clone(),
            volume_mounts: Some(mounts),
            security_context: self.container_security_context(template),
            ..Container::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_levels_become_verbosity_numbers() {
        assert_eq!(verbosity("info").as_deref(), Some("0"));
        assert_eq!(verbosity("DEBUG").as_deref(), Some("1"));
        assert_eq!(verbosity("trace").as_deref(), Some("2"));
        assert_eq!(verbosity("3").as_deref(), Some("3"));
        assert_eq!(verbosity("loud"), None);
    }
}
