//! The Entity Operator: the Topic and User Operators deployed alongside the cluster.

use k8s_openapi::api::core::v1::ResourceRequirements;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{
    ContainerTemplate, DeploymentTemplate, JvmOptions, Logging, PodDisruptionBudgetTemplate,
    PodTemplate, Probe, ResourceTemplate,
};

/// Which of the Topic and User Operators to deploy, and how.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityOperatorSpec {
    /// The Topic Operator; not deployed when unset.
    pub topic_operator: Option<EntityTopicOperatorSpec>,
    /// The User Operator; not deployed when unset.
    pub user_operator: Option<EntityUserOperatorSpec>,
    /// Templates for the Entity Operator's resources.
    pub template: Option<EntityOperatorTemplate>,
}

/// The Topic Operator, which manages Kafka topics through `KafkaTopic` resources.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityTopicOperatorSpec {
    /// Namespace watched for `KafkaTopic` resources; the Kafka resource's namespace when unset.
    pub watched_namespace: Option<String>,
    /// Container image of the Topic Operator.
    pub image: Option<String>,
    /// Milliseconds between periodic reconciliations.
    #[schemars(range(min = 0))]
    pub reconciliation_interval_ms: Option<i64>,
    /// Startup probe of the container.
    pub startup_probe: Option<Probe>,
    /// Liveness probe of the container.
    pub liveness_probe: Option<Probe>,
    /// Readiness probe of the container.
    pub readiness_probe: Option<Probe>,
    /// CPU and memory requests and limits.
    pub resources: Option<ResourceRequirements>,
    /// Logging configuration.
    pub logging: Option<Logging>,
    /// JVM options.
    pub jvm_options: Option<JvmOptions>,
}

/// The User Operator, which manages Kafka users, ACLs and quotas through `KafkaUser`
/// resources.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityUserOperatorSpec {
    /// Namespace watched for `KafkaUser` resources; the Kafka resource's namespace when unset.
    pub watched_namespace: Option<String>,
    /// Container image of the User Operator.
    pub image: Option<String>,
    /// Milliseconds between periodic reconciliations.
    #[schemars(range(min = 0))]
    pub reconciliation_interval_ms: Option<i64>,
    /// Prefix added to the names of the user Secrets.
    pub secret_prefix: Option<String>,
    /// Liveness probe of the container.
    pub liveness_probe: Option<Probe>,
    /// Readiness probe of the container.
    pub readiness_probe: Option<Probe>,
    /// CPU and memory requests and limits.
    pub resources: Option<ResourceRequirements>,
    /// Logging configuration.
    pub logging: Option<Logging>,
    /// JVM options.
    pub jvm_options: Option<JvmOptions>,
}

/// Templates for the Entity Operator's resources.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityOperatorTemplate {
    /// The Entity Operator deployment.
    pub deployment: Option<DeploymentTemplate>,
    /// The Entity Operator pod.
    pub pod: Option<PodTemplate>,
    /// The Topic Operator container.
    pub topic_operator_container: Option<ContainerTemplate>,
    /// The User Operator container.
    pub user_operator_container: Option<ContainerTemplate>,
    /// The Entity Operator's service account.
    pub service_account: Option<ResourceTemplate>,
    /// The Entity Operator's pod disruption budget.
    pub pod_disruption_budget: Option<PodDisruptionBudgetTemplate>,
    /// The Entity Operator's role.
    pub entity_operator_role: Option<ResourceTemplate>,
    /// The Topic Operator's role binding.
    pub topic_operator_role_binding: Option<ResourceTemplate>,
    /// The User Operator's role binding.
    pub user_operator_role_binding: Option<ResourceTemplate>,
}
