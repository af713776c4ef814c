//! Templates that customise the Kubernetes resources an operator creates: metadata, pods,
//! containers, services, disruption budgets and deployments.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, CSIVolumeSource, ConfigMapKeySelector, ConfigMapVolumeSource, HostAlias,
    ImageVolumeSource, LocalObjectReference, PersistentVolumeClaimVolumeSource, PodDNSConfig,
    PodSecurityContext, SecretKeySelector, SecretVolumeSource, SecurityContext, Toleration,
    TopologySpreadConstraint, VolumeMount,
};
use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::union::deserialize_nested;
use serde_with::skip_serializing_none;

/// Extra labels and annotations added to a generated resource.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetadataTemplate {
    /// Labels added to the resource.
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations added to the resource.
    pub annotations: Option<BTreeMap<String, String>>,
}

/// Template for a generated resource whose only customisable part is its metadata.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// Labels and annotations for the resource.
    pub metadata: Option<MetadataTemplate>,
}

/// Customisation of the pods an operator creates.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplate {
    /// Labels and annotations for the pods.
    pub metadata: Option<MetadataTemplate>,
    /// Secrets used to pull container images from private registries.
    pub image_pull_secrets: Option<Vec<LocalObjectReference>>,
    /// Security attributes applied to the whole pod.
    pub security_context: Option<PodSecurityContext>,
    /// Seconds the pod is given to stop gracefully before it is killed. Defaults to 30.
    #[schemars(range(min = 0))]
    pub termination_grace_period_seconds: Option<i32>,
    /// Scheduling constraints relative to nodes and other pods.
    pub affinity: Option<Affinity>,
    /// Taints the pods tolerate.
    pub tolerations: Option<Vec<Toleration>>,
    /// How the pods are spread over topology domains such as zones.
    pub topology_spread_constraints: Option<Vec<TopologySpreadConstraint>>,
    /// Name of the PriorityClass given to the pods.
    pub priority_class_name: Option<String>,
    /// Scheduler that places the pods; the cluster default when unset.
    pub scheduler_name: Option<String>,
    /// Extra entries for the pods' `/etc/hosts`.
    pub host_aliases: Option<Vec<HostAlias>>,
    /// DNS policy of the pods. Defaults to `ClusterFirst`.
    pub dns_policy: Option<DnsPolicy>,
    /// DNS settings merged into those derived from the DNS policy.
    pub dns_config: Option<PodDNSConfig>,
    /// Whether Service details are injected as environment variables. Defaults to true.
    pub enable_service_links: Option<bool>,
    /// Size limit of the `/tmp` volume, such as `5Mi`. Defaults to `5Mi`.
    #[schemars(regex(pattern = r"^([0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"))]
    pub tmp_dir_size_limit: Option<String>,
    /// Additional volumes added to the pods.
    pub volumes: Option<Vec<AdditionalVolume>>,
    /// Whether the pods share the host's user namespace. Defaults to true.
    pub host_users: Option<bool>,
}

/// Customisation of pods managed by a StrimziPodSet (Kafka nodes, Connect and MirrorMaker 2
/// workers): everything a [`PodTemplate`] offers, plus volumes created per pod.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSetPodTemplate {
    /// The settings every pod template offers.
    #[serde(flatten)]
    pub pod: PodTemplate,
    /// Volumes whose names may contain placeholders filled in per pod.
    pub templated_volumes: Option<Vec<TemplatedVolume>>,
}

/// Reads the two parts separately rather than through `#[serde(flatten)]`, so that an error
/// names the failing field inside the pod template.
impl<'de> Deserialize<'de> for PodSetPodTemplate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The fields a pod set's pod template adds to [`PodTemplate`].
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Additions {
            templated_volumes: Option<Vec<TemplatedVolume>>,
        }

        let value = serde_json::Value::deserialize(deserializer)?;
        let additions: Additions = deserialize_nested(value.clone()).map_err(D::Error::custom)?;
        Ok(Self {
            pod: deserialize_nested(value).map_err(D::Error::custom)?,
            templated_volumes: additions.templated_volumes,
        })
    }
}

/// DNS policy of a pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum DnsPolicy {
    /// Cluster DNS first, falling back to upstream servers.
    ClusterFirst,
    /// Cluster DNS first, for pods on the host network.
    ClusterFirstWithHostNet,
    /// The DNS settings of the node.
    Default,
    /// No automatic DNS settings; `dnsConfig` provides them.
    None,
}

/// An extra volume for a pod: a name and at most one source. A volume without a source is an
/// empty directory, as Kubernetes makes it.
// Like Strimzi's CRDs, the schema does not insist on a source; Kubernetes refuses a pod whose
// volume has two.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdditionalVolume {
    /// Name of the volume, referred to by volume mounts.
    pub name: Option<String>,
    /// A Secret as the volume's content.
    pub secret: Option<SecretVolumeSource>,
    /// A ConfigMap as the volume's content.
    pub config_map: Option<ConfigMapVolumeSource>,
    /// An empty directory living as long as the pod.
    pub empty_dir: Option<EmptyDirVolume>,
    /// An existing PersistentVolumeClaim.
    pub persistent_volume_claim: Option<PersistentVolumeClaimVolumeSource>,
    /// A volume provided by a CSI driver.
    pub csi: Option<CSIVolumeSource>,
    /// The content of an OCI image or artifact.
    pub image: Option<ImageVolumeSource>,
}

/// A volume whose names may hold per-pod placeholders, with at most one source.
// Like Strimzi's CRDs, the schema does not insist on a source (see `AdditionalVolume`).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplatedVolume {
    /// Name of the volume, referred to by volume mounts.
    pub name: Option<String>,
    /// A Secret as the volume's content.
    pub secret: Option<SecretVolumeSource>,
    /// A ConfigMap as the volume's content.
    pub config_map: Option<ConfigMapVolumeSource>,
    /// An existing PersistentVolumeClaim.
    pub persistent_volume_claim: Option<PersistentVolumeClaimVolumeSource>,
}

/// A scratch directory that starts empty and is removed with the pod.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmptyDirVolume {
    /// Storage medium; the node's disk when unset.
    pub medium: Option<EmptyDirMedium>,
    /// Largest size the directory may grow to, such as `1Gi`.
    #[schemars(regex(pattern = r"^([0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"))]
    pub size_limit: Option<String>,
}

/// Storage medium of an [`EmptyDirVolume`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum EmptyDirMedium {
    /// RAM-backed (tmpfs).
    Memory,
}

/// Customisation of one container of a generated pod.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerTemplate {
    /// Extra environment variables for the container.
    pub env: Option<Vec<ContainerEnvVar>>,
    /// Security attributes of the container.
    pub security_context: Option<SecurityContext>,
    /// Extra volume mounts, usually of the pod template's additional volumes.
    pub volume_mounts: Option<Vec<VolumeMount>>,
}

/// An environment variable with a literal value or a value read from a Secret or ConfigMap.
///
/// Exactly one of `value` and `valueFrom` must be set.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("oneOf" = [{"required": ["value"]}, {"required": ["valueFrom"]}]))]
pub struct ContainerEnvVar {
    /// Name of the variable.
    pub name: Option<String>,
    /// Literal value of the variable.
    pub value: Option<String>,
    /// Where the value is read from.
    pub value_from: Option<ContainerEnvVarSource>,
}

/// The Secret or ConfigMap key an environment variable takes its value from; set exactly one.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("oneOf" = [{"required": ["secretKeyRef"]}, {"required": ["configMapKeyRef"]}]))]
pub struct ContainerEnvVarSource {
    /// A key of a Secret.
    pub secret_key_ref: Option<SecretKeySelector>,
    /// A key of a ConfigMap.
    pub config_map_key_ref: Option<ConfigMapKeySelector>,
}

/// Customisation of a cluster-internal Service.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InternalServiceTemplate {
    /// Labels and annotations for the Service.
    pub metadata: Option<MetadataTemplate>,
    /// Whether the Service uses one or both IP families; the cluster default when unset.
    pub ip_family_policy: Option<IpFamilyPolicy>,
    /// IP families of the Service, in order of preference.
    pub ip_families: Option<Vec<IpFamily>>,
}

/// How many IP families a Service uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum IpFamilyPolicy {
    /// One IP family.
    SingleStack,
    /// Both families where the cluster supports it, otherwise one.
    PreferDualStack,
    /// Both families; fails on clusters without dual-stack support.
    RequireDualStack,
}

/// An IP address family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum IpFamily {
    /// IPv4.
    #[serde(rename = "IPv4")]
    Ipv4,
    /// IPv6.
    #[serde(rename = "IPv6")]
    Ipv6,
}

/// Customisation of a generated PodDisruptionBudget.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetTemplate {
    /// Labels and annotations for the PodDisruptionBudget.
    pub metadata: Option<MetadataTemplate>,
    /// Pods that may be unavailable at once during voluntary disruptions. Defaults to 1.
    #[schemars(range(min = 0))]
    pub max_unavailable: Option<i32>,
}

/// Customisation of a generated Deployment.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentTemplate {
    /// Labels and annotations for the Deployment.
    pub metadata: Option<MetadataTemplate>,
    /// How pods are replaced on updates. Defaults to `RollingUpdate`.
    pub deployment_strategy: Option<DeploymentStrategy>,
}

/// How a Deployment replaces its pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum DeploymentStrategy {
    /// New pods start before old ones stop.
    RollingUpdate,
    /// All old pods stop before new ones start.
    Recreate,
}
