//! Kafka Exporter: extra Prometheus metrics such as consumer group lag.

use k8s_openapi::api::core::v1::ResourceRequirements;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{
    ContainerTemplate, DeploymentTemplate, PodDisruptionBudgetTemplate, PodTemplate, Probe,
    ResourceTemplate,
};

/// Deployment of Kafka Exporter for the cluster.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaExporterSpec {
    /// Container image of Kafka Exporter.
    pub image: Option<String>,
    /// Regular expression selecting the consumer groups to report. Defaults to `.*`.
    pub group_regex: Option<String>,
    /// Regular expression selecting the topics to report. Defaults to `.*`.
    pub topic_regex: Option<String>,
    /// Regular expression of consumer groups left out.
    pub group_exclude_regex: Option<String>,
    /// Regular expression of topics left out.
    pub topic_exclude_regex: Option<String>,
    /// CPU and memory requests and limits.
    pub resources: Option<ResourceRequirements>,
    /// Lowest severity logged: `info`, `debug` or `trace`. Defaults to `info`.
    pub logging: Option<String>,
    /// Liveness probe of the container.
    pub liveness_probe: Option<Probe>,
    /// Readiness probe of the container.
    pub readiness_probe: Option<Probe>,
    /// Whether to log from Sarama, the Go Kafka client Kafka Exporter uses.
    pub enable_sarama_logging: Option<bool>,
    /// Whether to report offsets and lag of all consumer groups, not just connected ones.
    pub show_all_offsets: Option<bool>,
    /// Templates for Kafka Exporter's resources.
    pub template: Option<KafkaExporterTemplate>,
}

/// Templates for Kafka Exporter's resources.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaExporterTemplate {
    /// The Kafka Exporter deployment.
    pub deployment: Option<DeploymentTemplate>,
    /// The Kafka Exporter pod.
    pub pod: Option<PodTemplate>,
    /// The Kafka Exporter container.
    pub container: Option<ContainerTemplate>,
    /// Kafka Exporter's service account.
    pub service_account: Option<ResourceTemplate>,
    /// Kafka Exporter's pod disruption budget.
    pub pod_disruption_budget: Option<PodDisruptionBudgetTemplate>,
}
