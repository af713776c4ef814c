//! Cruise Control: cluster rebalancing, its capacity model and automatic rebalancing.

use k8s_openapi::api::core::v1::{LocalObjectReference, ResourceRequirements};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{
    ContainerTemplate, DeploymentTemplate, InternalServiceTemplate, JvmOptions, Logging,
    MetricsConfig, PasswordValueSource, PodDisruptionBudgetTemplate, PodTemplate, Probe,
    ResourceTemplate,
};
use crate::tagged_union;

/// Deployment of Cruise Control for the cluster. Cruise Control runs only when this is set.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CruiseControlSpec {
    /// Container image of Cruise Control; the operator's configured default when unset.
    pub image: Option<String>,
    /// CPU and memory requests and limits.
    pub resources: Option<ResourceRequirements>,
    /// Liveness probe of the container.
    pub liveness_probe: Option<Probe>,
    /// Readiness probe of the container.
    pub readiness_probe: Option<Probe>,
    /// JVM options.
    pub jvm_options: Option<JvmOptions>,
    /// Logging configuration.
    pub logging: Option<Logging>,
    /// Templates for Cruise Control's resources.
    pub template: Option<CruiseControlTemplate>,
    /// Capacity of the brokers, used by Cruise Control's resource goals.
    pub broker_capacity: Option<BrokerCapacity>,
    /// Cruise Control properties. Keys with some prefixes are managed by the operator and
    /// may not be set.
    pub config: Option<crate::schema::FreeFormMap>,
    /// Metrics exposed by Cruise Control; only `jmxPrometheusExporter` is supported.
    pub metrics_config: Option<MetricsConfig>,
    /// Extra users of the Cruise Control REST API.
    pub api_users: Option<ApiUsers>,
    /// Modes in which the operator rebalances automatically after scaling, each with an
    /// optional `KafkaRebalance` template. At least one entry when set.
    #[schemars(length(min = 1))]
    pub auto_rebalance: Option<Vec<KafkaAutoRebalanceConfiguration>>,
}

/// Templates for Cruise Control's resources.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CruiseControlTemplate {
    /// The Cruise Control deployment.
    pub deployment: Option<DeploymentTemplate>,
    /// The Cruise Control pod.
    pub pod: Option<PodTemplate>,
    /// The service of the Cruise Control REST API.
    pub api_service: Option<InternalServiceTemplate>,
    /// Cruise Control's pod disruption budget.
    pub pod_disruption_budget: Option<PodDisruptionBudgetTemplate>,
    /// The Cruise Control container.
    pub cruise_control_container: Option<ContainerTemplate>,
    /// Cruise Control's service account.
    pub service_account: Option<ResourceTemplate>,
}

/// Resource capacity of the brokers as Cruise Control sees it.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrokerCapacity {
    /// CPU of each broker in cores or millicores, e.g. `1`, `1.500` or `1500m`.
    #[schemars(regex(pattern = r"^[0-9]+([.][0-9]{0,3}|[m]?)$"))]
    pub cpu: Option<String>,
    /// Inbound network throughput of each broker, e.g. `10000KiB/s`.
    #[schemars(regex(pattern = r"^[0-9]+([KMG]i?)?B/s$"))]
    pub inbound_network: Option<String>,
    /// Outbound network throughput of each broker, e.g. `10000KiB/s`.
    #[schemars(regex(pattern = r"^[0-9]+([KMG]i?)?B/s$"))]
    pub outbound_network: Option<String>,
    /// Different capacities for particular brokers.
    pub overrides: Option<Vec<BrokerCapacityOverride>>,
}

/// Capacity of some brokers that differs from the cluster-wide one.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrokerCapacityOverride {
    /// Node IDs of the brokers this override applies to.
    pub brokers: Vec<i32>,
    /// CPU in cores or millicores, e.g. `1`, `1.500` or `1500m`.
    #[schemars(regex(pattern = r"^[0-9]+([.][0-9]{0,3}|[m]?)$"))]
    pub cpu: Option<String>,
    /// Inbound network throughput, e.g. `10000KiB/s`.
    #[schemars(regex(pattern = r"^[0-9]+([KMG]i?)?B/s$"))]
    pub inbound_network: Option<String>,
    /// Outbound network throughput, e.g. `10000KiB/s`.
    #[schemars(regex(pattern = r"^[0-9]+([KMG]i?)?B/s$"))]
    pub outbound_network: Option<String>,
}

/// REST API users in the format of Jetty's `HashLoginService`, read from a Secret.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HashLoginServiceApiUsers {
    /// Secret key holding the user entries.
    pub value_from: PasswordValueSource,
}

tagged_union! {
    /// Extra users of the Cruise Control REST API.
    pub enum ApiUsers {
        /// Users listed in `HashLoginService` format.
        HashLoginService("hashLoginService") => HashLoginServiceApiUsers,
    }
}

/// One automatic rebalancing mode and the template its `KafkaRebalance` is built from.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaAutoRebalanceConfiguration {
    /// Whether this entry covers added or removed brokers.
    pub mode: KafkaAutoRebalanceMode,
    /// `KafkaRebalance` resource used as the configuration template; Cruise Control's
    /// defaults when unset.
    pub template: Option<LocalObjectReference>,
}

/// When an automatic rebalance runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum KafkaAutoRebalanceMode {
    /// After brokers are added, to move partitions onto them.
    #[serde(rename = "add-brokers")]
    AddBrokers,
    /// Before brokers are removed, to move partitions off them.
    #[serde(rename = "remove-brokers")]
    RemoveBrokers,
}

impl KafkaAutoRebalanceMode {
    /// The value used in the resource, e.g. `"add-brokers"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AddBrokers => "add-brokers",
            Self::RemoveBrokers => "remove-brokers",
        }
    }
}
