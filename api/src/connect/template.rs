//! Customisation of the Kubernetes resources the operator creates for a Kafka Connect (or
//! MirrorMaker 2) cluster, including those of the image build.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{
    ContainerTemplate, InternalServiceTemplate, MetadataTemplate, PodDisruptionBudgetTemplate,
    PodSetPodTemplate, PodTemplate, ResourceTemplate,
};

/// Overrides for the resources generated for a Kafka Connect or MirrorMaker 2 cluster.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaConnectTemplate {
    /// The StrimziPodSet that manages the Connect pods.
    pub pod_set: Option<ResourceTemplate>,
    /// The Connect worker pods.
    pub pod: Option<PodSetPodTemplate>,
    /// The Service that exposes the Connect REST API.
    pub api_service: Option<InternalServiceTemplate>,
    /// The headless Service that gives each pod a stable DNS name.
    pub headless_service: Option<InternalServiceTemplate>,
    /// The Connect container.
    pub connect_container: Option<ContainerTemplate>,
    /// The init container that looks up the node's rack.
    pub init_container: Option<ContainerTemplate>,
    /// The PodDisruptionBudget of the Connect pods.
    pub pod_disruption_budget: Option<PodDisruptionBudgetTemplate>,
    /// The ServiceAccount of the Connect pods.
    pub service_account: Option<ResourceTemplate>,
    /// The ClusterRoleBinding that lets the init container read node labels.
    pub cluster_role_binding: Option<ResourceTemplate>,
    /// The pod that builds the Connect image (Kubernetes only).
    pub build_pod: Option<PodTemplate>,
    /// The container that builds the Connect image (Kubernetes only).
    pub build_container: Option<ContainerTemplate>,
    /// The BuildConfig that builds the Connect image (OpenShift only).
    pub build_config: Option<BuildConfigTemplate>,
    /// The ServiceAccount of the build pod.
    pub build_service_account: Option<ResourceTemplate>,
    /// The Secret holding the JMX credentials.
    pub jmx_secret: Option<ResourceTemplate>,
}

/// Overrides for the OpenShift BuildConfig that builds a Connect image.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildConfigTemplate {
    /// Labels and annotations added to the BuildConfig.
    pub metadata: Option<MetadataTemplate>,
    /// Secret with the credentials for pulling the base image.
    pub pull_secret: Option<String>,
}
