//! The cluster operator's configuration: the settings every operator shares
//! ([`OperatorConfig`]) plus the ones that shape the Kafka clusters it builds, read from
//! Strimzi's environment variables.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::EnvVar;
use strimzi_operator_common::config::{ConfigError, OperatorConfig, flag, positive};
use strimzi_operator_common::kafka::HostResolution;
use strimzi_operator_common::runtime::OperatorNames;

use crate::model::connect::build::{BuildSettings, DEFAULT_BUILD_TIMEOUT, ImageBuilder};
use crate::model::nodes::images::KafkaImages;
use crate::model::{ModelConfig, PlatformFeatures, PodSecurityProfile};

/// Kafka images by version, one `<version>=<image>` per line or comma-separated.
pub const KAFKA_IMAGES: &str = "STRIMZI_KAFKA_IMAGES";
/// Kafka Connect images by version, in the format of [`KAFKA_IMAGES`]; the Kafka images when
/// unset (Strimzi's Connect images are its Kafka images).
pub const KAFKA_CONNECT_IMAGES: &str = "STRIMZI_KAFKA_CONNECT_IMAGES";
/// MirrorMaker 2 images by version, in the format of [`KAFKA_IMAGES`]; the Kafka images when
/// unset (Strimzi's MirrorMaker 2 images are its Kafka images).
pub const KAFKA_MIRROR_MAKER_2_IMAGES: &str = "STRIMZI_KAFKA_MIRROR_MAKER_2_IMAGES";
/// Whether NetworkPolicies are generated (`true` by default).
pub const NETWORK_POLICY_GENERATION: &str = "STRIMZI_NETWORK_POLICY_GENERATION";
/// Whether PodDisruptionBudgets are generated (`true` by default). When `false`, none is
/// created and existing ones are left as they are.
pub const POD_DISRUPTION_BUDGET_GENERATION: &str = "STRIMZI_POD_DISRUPTION_BUDGET_GENERATION";
/// Whether the entity operator's topic and user operators may watch another namespace than
/// the Kafka's (`false` by default, as since Strimzi 1.0.1).
pub const ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED: &str =
    "STRIMZI_ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED";
/// The variables of the operator's own environment that every operand container gets too,
/// when set: the proxies and the FIPS mode.
pub const SHARED_VARIABLES: [&str; 4] = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "FIPS_MODE"];
/// Namespace the operator runs in.
pub const OPERATOR_NAMESPACE: &str = "STRIMZI_OPERATOR_NAMESPACE";
/// Labels of the operator's namespace, `key=value` comma-separated.
pub const OPERATOR_NAMESPACE_LABELS: &str = "STRIMZI_OPERATOR_NAMESPACE_LABELS";
/// The cluster DNS domain (`cluster.local` by default).
pub const SERVICE_DNS_DOMAIN: &str = "KUBERNETES_SERVICE_DNS_DOMAIN";
/// `imagePullPolicy` of every container: `Always`, `IfNotPresent` or `Never`.
pub const IMAGE_PULL_POLICY: &str = "STRIMZI_IMAGE_PULL_POLICY";
/// Image pull Secrets of every pod, comma-separated names.
pub const IMAGE_PULL_SECRETS: &str = "STRIMZI_IMAGE_PULL_SECRETS";
/// Image of the Kafka pods' init container.
pub const KAFKA_INIT_IMAGE: &str = "STRIMZI_DEFAULT_KAFKA_INIT_IMAGE";
/// Image of the entity operator's topic operator.
pub const TOPIC_OPERATOR_IMAGE: &str = "STRIMZI_DEFAULT_TOPIC_OPERATOR_IMAGE";
/// Image of the entity operator's user operator.
pub const USER_OPERATOR_IMAGE: &str = "STRIMZI_DEFAULT_USER_OPERATOR_IMAGE";
/// Image of Kafka Exporter (the cluster's Kafka image when unset).
pub const KAFKA_EXPORTER_IMAGE: &str = "STRIMZI_DEFAULT_KAFKA_EXPORTER_IMAGE";
/// Cruise Control's image, by default the Kafka image of the cluster's version.
pub const CRUISE_CONTROL_IMAGE: &str = "STRIMZI_DEFAULT_CRUISE_CONTROL_IMAGE";
/// Image of the HTTP Bridge pods of KafkaBridges without their own `image`.
pub const KAFKA_BRIDGE_IMAGE: &str = "STRIMZI_DEFAULT_KAFKA_BRIDGE_IMAGE";
/// The Buildah image of KafkaConnect builds.
pub const BUILDAH_IMAGE: &str = "STRIMZI_DEFAULT_BUILDAH_IMAGE";
/// The Kaniko executor image of KafkaConnect builds (feature gate `UseConnectBuildWithBuildah`
/// off).
pub const KANIKO_EXECUTOR_IMAGE: &str = "STRIMZI_DEFAULT_KANIKO_EXECUTOR_IMAGE";
/// The Maven builder image, the first stage of a Connect build with Maven artifacts.
pub const MAVEN_BUILDER_IMAGE: &str = "STRIMZI_DEFAULT_MAVEN_BUILDER";
/// How long a Connect build may run before it is reported stalled, in milliseconds.
pub const CONNECT_BUILD_TIMEOUT_MS: &str = "STRIMZI_CONNECT_BUILD_TIMEOUT_MS";
/// Labels every Connect builder pod gets (`key=value`, comma-separated).
pub const CONNECT_BUILD_LABELS: &str = "STRIMZI_CUSTOM_KAFKA_CONNECT_BUILD_LABELS";
/// The pod security provider: `baseline` (default) or `restricted`, or Strimzi's class names.
pub const POD_SECURITY_PROVIDER_CLASS: &str = "STRIMZI_POD_SECURITY_PROVIDER_CLASS";
/// Whether running Kafka nodes load renewed certificates without a restart where Kafka allows
/// it (`true`, the default), or restart for every certificate change as Strimzi's operator
/// does (`false`).
pub const RELOAD_CERTIFICATES: &str = "STRIMZI_RELOAD_CERTIFICATES";
/// Whether CA and user Secrets carry PKCS#12 stores (`true` by default).
pub const PKCS12_KEYSTORE_GENERATION: &str =
    strimzi_certificate_manager::PKCS12_KEYSTORE_GENERATION_ENV;

/// How many resources each controller reconciles at once (10 by default, as in Strimzi).
pub const OPERATIONS_THREAD_POOL_SIZE: &str = "STRIMZI_OPERATIONS_THREAD_POOL_SIZE";
/// How many brokers that share no partition at risk may restart together in a rolling
/// update (1 by default: one at a time, as Strimzi). Not a Strimzi setting.
pub const MAX_PARALLEL_BROKER_RESTARTS: &str = "STRIMZI_MAX_PARALLEL_BROKER_RESTARTS";
/// How the operator looks up the brokers' host names: `system` (default: the system
/// resolver, as inside the cluster) or `ip-addresses-only` (never: for an operator running
/// outside the cluster's network, which must not ask its resolver about cluster names; the
/// brokers are then unreachable and a rolling update waits, since its safety checks cannot
/// run). Not a Strimzi setting.
pub const KAFKA_HOST_RESOLUTION: &str = "STRIMZI_KAFKA_HOST_RESOLUTION";
/// Whether the operator applies its own CRDs when it starts (`false` by default; see
/// [`crate::crds`]). Not a Strimzi setting.
pub const INSTALL_CRDS: &str = "STRIMZI_INSTALL_CRDS";
/// Strimzi's default of [`OPERATIONS_THREAD_POOL_SIZE`].
const DEFAULT_OPERATIONS_THREAD_POOL_SIZE: usize = 10;

/// A variable Strimzi 1.2's cluster operator reads that this operator does not act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IgnoredVariable {
    /// The variable.
    pub name: &'static str,
    /// Why it changes nothing here.
    pub why: &'static str,
}

/// Why the Connect build variables change nothing.
/// Why the JVM variables change nothing.
const NO_JVM: &str = "the operator does not run on a JVM";
/// Why the TLS sidecar images change nothing.
const NO_TLS_SIDECAR: &str = "there are no TLS sidecars (Strimzi 1.2 ignores it too)";

/// The variables of Strimzi 1.2's cluster operator (its own, and its image's JVM launcher's)
/// that this operator knows and does not act on. Each one set is named in a warning at
/// start ([`set_ignored_variables`]).
pub const IGNORED_VARIABLES: [IgnoredVariable; 12] = [
    IgnoredVariable {
        name: "STRIMZI_CREATE_CLUSTER_ROLES",
        why: "the operator never creates ClusterRoles; the install bundle holds them",
    },
    IgnoredVariable {
        name: "STRIMZI_POD_SET_RECONCILIATION_ONLY",
        why: "the operator always runs every controller",
    },
    IgnoredVariable {
        name: "STRIMZI_POD_SET_CONTROLLER_WORK_QUEUE_SIZE",
        why: "the StrimziPodSet controller's queue has no fixed size",
    },
    IgnoredVariable {
        name: "STRIMZI_OPERATOR_NAME",
        why: "Events name the replica by its leader election identity",
    },
    IgnoredVariable {
        name: "STRIMZI_KUBERNETES_VERSION",
        why: "the operator does not depend on the Kubernetes version",
    },
    IgnoredVariable {
        name: "STRIMZI_DNS_CACHE_TTL",
        why: NO_JVM,
    },
    IgnoredVariable {
        name: "JAVA_OPTS",
        why: NO_JVM,
    },
    IgnoredVariable {
        name: "STRIMZI_JAVA_OPTS",
        why: NO_JVM,
    },
    IgnoredVariable {
        name: "STRIMZI_GC_LOG_ENABLED",
        why: NO_JVM,
    },
    IgnoredVariable {
        name: "STRIMZI_DEFAULT_TLS_SIDECAR_ENTITY_OPERATOR_IMAGE",
        why: NO_TLS_SIDECAR,
    },
    IgnoredVariable {
        name: "STRIMZI_DEFAULT_TLS_SIDECAR_KAFKA_IMAGE",
        why: NO_TLS_SIDECAR,
    },
    IgnoredVariable {
        name: "STRIMZI_DEFAULT_TLS_SIDECAR_CRUISE_CONTROL_IMAGE",
        why: NO_TLS_SIDECAR,
    },
];

/// The [`IGNORED_VARIABLES`] that are set (`is_set`), in their order: those the warnings at
/// start name. Apart from [`ClusterOperatorConfig::from_lookup`], which reads only what it
/// acts on.
pub fn set_ignored_variables(is_set: impl Fn(&str) -> bool) -> Vec<IgnoredVariable> {
    IGNORED_VARIABLES
        .into_iter()
        .filter(|variable| is_set(variable.name))
        .collect()
}

/// The operator's name: `app.kubernetes.io/managed-by`, the manager of the CRDs it installs
/// and the name in its exit message.
pub const NAME: &str = "strimzi-cluster-operator";
/// The operator's log4j2 file, from the logging ConfigMap `strimzi-cluster-operator` that its
/// Deployment mounts there, as Strimzi's does (`050-ConfigMap`): its levels apply without a
/// restart ([`strimzi_operator_common::logging`]).
pub const LOGGING_FILE: &str = "/opt/strimzi/custom-config/log4j2.properties";
/// The field manager of everything the operator applies: Strimzi's operator's own, so that
/// after a switch between the two operators each finds its fields owned by the same manager
/// instead of conflicting with the other's.
pub const FIELD_MANAGER: &str = "strimzi-kafka-operator";
/// The `reportingController` of the operator's Events: Strimzi's, which its documentation
/// has users filter on (`kubectl get events --field-selector
/// reportingController=strimzi.io/cluster-operator`).
pub const EVENTS_CONTROLLER: &str = "strimzi.io/cluster-operator";

/// The names the operator's runtime writes and reports Events with.
pub const OPERATOR_NAMES: OperatorNames<'static> = OperatorNames {
    name: FIELD_MANAGER,
    events_controller: EVENTS_CONTROLLER,
};

/// Everything the cluster operator reads from its environment.
#[derive(Clone, Debug)]
pub struct ClusterOperatorConfig {
    /// The settings every operator shares.
    pub operator: OperatorConfig,
    /// The settings that shape the generated objects.
    pub model: ModelConfig,
    /// Whether CA Secrets carry PKCS#12 stores.
    pub pkcs12: bool,
    /// Whether nodes reload renewed certificates instead of restarting
    /// ([`RELOAD_CERTIFICATES`]).
    pub reload_certificates: bool,
    /// How many Kafkas, and separately how many StrimziPodSets, are reconciled at once at
    /// most: the concurrency of each controller.
    pub concurrency: u16,
    /// How many brokers may restart together ([`MAX_PARALLEL_BROKER_RESTARTS`]).
    pub max_parallel_broker_restarts: usize,
    /// How broker host names are looked up ([`KAFKA_HOST_RESOLUTION`]).
    pub kafka_host_resolution: HostResolution,
    /// Whether the CRDs are applied at start ([`INSTALL_CRDS`]).
    pub install_crds: bool,
}

impl ClusterOperatorConfig {
    /// This operator's identity in the claims of the Kafkas it acts on
    /// ([`strimzi_operator_common::claim`]): the same for every replica of one deployment, so
    /// that a new leader or a restarted pod carries on at once, and different for another
    /// deployment watching the same namespace. With leader election, its Lease
    /// (`<lease namespace>/<lease name>`); without, `<operator namespace>/strimzi-cluster-operator`.
    pub fn claim_identity(&self) -> String {
        match &self.operator.leader_election {
            Some(election) => format!("{}/{}", election.lease_namespace, election.lease_name),
            None => format!("{}/{NAME}", self.model.operator_namespace),
        }
    }

    /// How long one call to a component's REST API (Cruise Control, Kafka Connect) may take:
    /// the operation timeout, at most 30 s, so that a hung call cannot hold a reconciliation.
    pub fn rest_call_timeout(&self) -> std::time::Duration {
        self.operator
            .operation_timeout
            .min(std::time::Duration::from_secs(30))
    }

    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the configuration from `lookup`, which returns a variable's value if set.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let operator = OperatorConfig::from_lookup(&lookup)?;
        let get = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        let images_of = |variable: &'static str| {
            get(variable)
                .map(|value| {
                    KafkaImages::parse(&value).map_err(|expected| ConfigError::Invalid {
                        variable,
                        value,
                        expected,
                    })
                })
                .transpose()
        };
        let images = images_of(KAFKA_IMAGES)?.unwrap_or_else(KafkaImages::strimzi_defaults);
        let connect_images = images_of(KAFKA_CONNECT_IMAGES)?.unwrap_or_else(|| images.clone());
        let mirror_maker2_images =
            images_of(KAFKA_MIRROR_MAKER_2_IMAGES)?.unwrap_or_else(|| images.clone());
        let model = ModelConfig {
            images,
            connect_images,
            mirror_maker2_images,
            cluster_domain: get(SERVICE_DNS_DOMAIN).unwrap_or_else(|| "cluster.local".to_owned()),
            operator_namespace: get(OPERATOR_NAMESPACE).unwrap_or_default(),
            operator_namespace_labels: get(OPERATOR_NAMESPACE_LABELS)
                .map(|value| parse_labels(OPERATOR_NAMESPACE_LABELS, &value))
                .transpose()?,
            network_policy_generation: parse_bool(
                NETWORK_POLICY_GENERATION,
                get(NETWORK_POLICY_GENERATION),
            )?,
            pod_disruption_budget_generation: parse_bool(
                POD_DISRUPTION_BUDGET_GENERATION,
                get(POD_DISRUPTION_BUDGET_GENERATION),
            )?,
            entity_operator_watched_namespace_enabled: flag(
                ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED,
                get(ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED),
                false,
            )?,
            // Copied as set, an empty value too, as Strimzi copies them.
            shared_env: SHARED_VARIABLES
                .iter()
                .filter_map(|name| {
                    lookup(name).map(|value| EnvVar {
                        name: (*name).to_owned(),
                        value: Some(value),
                        value_from: None,
                    })
                })
                .collect(),
            image_pull_policy: get(IMAGE_PULL_POLICY)
                .map(|value| parse_pull_policy(&value))
                .transpose()?,
            image_pull_secrets: get(IMAGE_PULL_SECRETS)
                .map(|value| parse_names(IMAGE_PULL_SECRETS, &value))
                .transpose()?
                .unwrap_or_default(),
            kafka_init_image: get(KAFKA_INIT_IMAGE).unwrap_or_else(|| {
                crate::model::nodes::images::DEFAULT_KAFKA_INIT_IMAGE.to_owned()
            }),
            pod_security: match get(POD_SECURITY_PROVIDER_CLASS) {
                None => PodSecurityProfile::default(),
                Some(value) => PodSecurityProfile::parse(&value).ok_or_else(|| {
                    invalid(
                        POD_SECURITY_PROVIDER_CLASS,
                        &value,
                        "baseline or restricted (or Strimzi's provider class names)",
                    )
                })?,
            },
            topic_operator_image: get(TOPIC_OPERATOR_IMAGE)
                .unwrap_or_else(|| strimzi_operator_common::OPERATOR_IMAGE.to_owned()),
            user_operator_image: get(USER_OPERATOR_IMAGE)
                .unwrap_or_else(|| strimzi_operator_common::OPERATOR_IMAGE.to_owned()),
            kafka_exporter_image: get(KAFKA_EXPORTER_IMAGE),
            cruise_control_image: get(CRUISE_CONTROL_IMAGE),
            bridge_image: get(KAFKA_BRIDGE_IMAGE)
                .unwrap_or_else(|| crate::model::bridge::DEFAULT_BRIDGE_IMAGE.to_owned()),
            connect_build: connect_build_settings(&get, &operator)?,
            label_exclusion: operator.labels_exclusion.clone(),
            managed_by: NAME.to_owned(),
            platform: PlatformFeatures::default(),
        };
        Ok(Self {
            pkcs12: parse_bool(PKCS12_KEYSTORE_GENERATION, get(PKCS12_KEYSTORE_GENERATION))?,
            reload_certificates: flag(RELOAD_CERTIFICATES, get(RELOAD_CERTIFICATES), true)?,
            concurrency: parse_concurrency(get(OPERATIONS_THREAD_POOL_SIZE))?,
            max_parallel_broker_restarts: positive(
                MAX_PARALLEL_BROKER_RESTARTS,
                get(MAX_PARALLEL_BROKER_RESTARTS),
                1,
            )?,
            kafka_host_resolution: match get(KAFKA_HOST_RESOLUTION).as_deref().map(str::trim) {
                None | Some("system") => HostResolution::System,
                Some("ip-addresses-only") => HostResolution::IpAddressesOnly,
                Some(other) => {
                    return Err(invalid(
                        KAFKA_HOST_RESOLUTION,
                        other,
                        "system or ip-addresses-only",
                    ));
                }
            },
            install_crds: flag(INSTALL_CRDS, get(INSTALL_CRDS), false)?,
            operator,
            model,
        })
    }
}

/// How KafkaConnect images are built: the feature gate picks Buildah or Kaniko, the images,
/// the builder pods' labels and the build timeout come from Strimzi's variables.
fn connect_build_settings(
    get: &impl Fn(&str) -> Option<String>,
    operator: &OperatorConfig,
) -> Result<BuildSettings, ConfigError> {
    let defaults = BuildSettings::default();
    Ok(BuildSettings {
        builder: if operator
            .feature_gates
            .is_enabled(strimzi_operator_common::config::USE_CONNECT_BUILD_WITH_BUILDAH)
        {
            ImageBuilder::Buildah
        } else {
            ImageBuilder::Kaniko
        },
        buildah_image: get(BUILDAH_IMAGE).unwrap_or(defaults.buildah_image),
        kaniko_image: get(KANIKO_EXECUTOR_IMAGE).unwrap_or(defaults.kaniko_image),
        maven_builder_image: get(MAVEN_BUILDER_IMAGE).unwrap_or(defaults.maven_builder_image),
        pod_labels: get(CONNECT_BUILD_LABELS)
            .map(|value| parse_labels(CONNECT_BUILD_LABELS, &value))
            .transpose()?
            .unwrap_or_default(),
        timeout: strimzi_operator_common::config::millis(
            CONNECT_BUILD_TIMEOUT_MS,
            get(CONNECT_BUILD_TIMEOUT_MS),
            u64::try_from(DEFAULT_BUILD_TIMEOUT.as_millis()).unwrap_or(u64::MAX),
        )?,
    })
}

fn invalid(variable: &'static str, value: &str, expected: &str) -> ConfigError {
    ConfigError::Invalid {
        variable,
        value: value.to_owned(),
        expected: expected.to_owned(),
    }
}

/// A boolean that is `true` when unset.
fn parse_bool(variable: &'static str, value: Option<String>) -> Result<bool, ConfigError> {
    match value.as_deref().map(str::trim) {
        None => Ok(true),
        Some(text) if text.eq_ignore_ascii_case("true") => Ok(true),
        Some(text) if text.eq_ignore_ascii_case("false") => Ok(false),
        Some(text) => Err(invalid(variable, text, "true or false")),
    }
}

/// The pool size of Strimzi's variable as a controller's concurrency: a positive integer that
/// fits a `u16`.
fn parse_concurrency(value: Option<String>) -> Result<u16, ConfigError> {
    let size = positive(
        OPERATIONS_THREAD_POOL_SIZE,
        value.clone(),
        DEFAULT_OPERATIONS_THREAD_POOL_SIZE,
    )?;
    u16::try_from(size).map_err(|_| {
        invalid(
            OPERATIONS_THREAD_POOL_SIZE,
            value.as_deref().unwrap_or_default(),
            "a positive integer up to 65535",
        )
    })
}

fn parse_pull_policy(value: &str) -> Result<String, ConfigError> {
    const POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];
    let value = value.trim();
    POLICIES
        .iter()
        .find(|policy| policy.eq_ignore_ascii_case(value))
        .map(|policy| (*policy).to_owned())
        .ok_or_else(|| invalid(IMAGE_PULL_POLICY, value, "Always, IfNotPresent or Never"))
}

/// Comma-separated Kubernetes object names.
fn parse_names(variable: &'static str, value: &str) -> Result<Vec<String>, ConfigError> {
    let names: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect();
    let valid = |name: &String| {
        name.len() <= 253
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
            && name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name.ends_with(|c: char| c.is_ascii_alphanumeric())
    };
    if names.iter().all(valid) {
        Ok(names)
    } else {
        Err(invalid(
            variable,
            value,
            "comma-separated Secret names (lower-case letters, digits, '-' and '.')",
        ))
    }
}

/// Comma-separated `key=value` labels.
fn parse_labels(
    variable: &'static str,
    value: &str,
) -> Result<BTreeMap<String, String>, ConfigError> {
    use strimzi_operator_common::labels::{is_label_key, is_label_value};
    value
        .split(',')
        .map(str::trim)
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((key, label)) if is_label_key(key.trim()) && is_label_value(label.trim()) => {
                Ok((key.trim().to_owned(), label.trim().to_owned()))
            }
            _ => Err(invalid(
                variable,
                value,
                "comma-separated key=value pairs of valid label keys and values",
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn read(variables: &[(&str, &str)]) -> Result<ClusterOperatorConfig, ConfigError> {
        let variables: BTreeMap<String, String> = variables
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        ClusterOperatorConfig::from_lookup(|name| variables.get(name).cloned())
    }

    #[test]
    fn defaults_follow_strimzi() {
        let config = read(&[("STRIMZI_NAMESPACE", "kafka")]).unwrap();
        assert_eq!(config.model.cluster_domain, "cluster.local");
        assert!(config.model.network_policy_generation);
        assert!(config.model.image_pull_policy.is_none());
        assert!(config.model.image_pull_secrets.is_empty());
        assert!(config.model.operator_namespace_labels.is_none());
        assert_eq!(config.model.managed_by, NAME);
        assert!(config.pkcs12);
        assert!(config.reload_certificates, "reload unless told otherwise");
        assert_eq!(config.concurrency, 10);
        assert!(!config.model.images.by_version.is_empty());
        assert!(!config.install_crds);
    }

    #[test]
    fn connect_and_mirror_maker_2_images_are_read_apart_or_are_the_kafka_images() {
        let kafka = "4.2.0=example.com/kafka:0 4.2.1=example.com/kafka:0 4.3.0=example.com/kafka:0 4.3.1=example.com/kafka:1";
        let config = read(&[("STRIMZI_NAMESPACE", "kafka"), (KAFKA_IMAGES, kafka)]).unwrap();
        for images in [
            &config.model.connect_images,
            &config.model.mirror_maker2_images,
        ] {
            assert_eq!(images.image("4.3.1"), Some("example.com/kafka:1"));
        }
        let config = read(&[
            ("STRIMZI_NAMESPACE", "kafka"),
            (KAFKA_IMAGES, kafka),
            (KAFKA_CONNECT_IMAGES, &kafka.replace("kafka:", "connect:")),
            (
                KAFKA_MIRROR_MAKER_2_IMAGES,
                &kafka.replace("kafka:", "mm2:"),
            ),
        ])
        .unwrap();
        assert_eq!(
            config.model.connect_images.image("4.3.1"),
            Some("example.com/connect:1")
        );
        assert_eq!(
            config.model.mirror_maker2_images.image("4.3.1"),
            Some("example.com/mm2:1")
        );
        let error = read(&[
            ("STRIMZI_NAMESPACE", "kafka"),
            (KAFKA_MIRROR_MAKER_2_IMAGES, "not an image list"),
        ])
        .unwrap_err();
        assert!(
            error.to_string().contains(KAFKA_MIRROR_MAKER_2_IMAGES),
            "{error}"
        );
    }

    #[test]
    fn the_pod_security_provider_is_baseline_or_restricted() {
        let default = read(&[("STRIMZI_NAMESPACE", "kafka")]).unwrap();
        assert_eq!(default.model.pod_security, PodSecurityProfile::Baseline);
        assert!(
            PodSecurityProfile::Baseline
                .container_security_context()
                .is_none()
        );
        for value in [
            "restricted",
            "io.strimzi.plugin.security.profiles.impl.RestrictedPodSecurityProvider",
        ] {
            let config = read(&[
                ("STRIMZI_NAMESPACE", "kafka"),
                (POD_SECURITY_PROVIDER_CLASS, value),
            ])
            .unwrap();
            assert_eq!(config.model.pod_security, PodSecurityProfile::Restricted);
        }
        let restricted = PodSecurityProfile::Restricted
            .container_security_context()
            .unwrap();
        assert_eq!(restricted.allow_privilege_escalation, Some(false));
        assert_eq!(restricted.run_as_non_root, Some(true));
        let wrong = read(&[
            ("STRIMZI_NAMESPACE", "kafka"),
            (POD_SECURITY_PROVIDER_CLASS, "privileged"),
        ])
        .unwrap_err();
        assert!(
            wrong
                .to_string()
                .contains("STRIMZI_POD_SECURITY_PROVIDER_CLASS")
        );
    }

    #[test]
    fn every_variable_is_read() {
        let config = read(&[
            ("STRIMZI_NAMESPACE", "kafka"),
            (
                KAFKA_IMAGES,
                "4.2.0=example.com/kafka:4.2.0,4.2.1=example.com/kafka:4.2.1,4.3.0=example.com/kafka:4.3.0\n4.3.1=example.com/kafka:4.3.1",
            ),
            (NETWORK_POLICY_GENERATION, "false"),
            (OPERATOR_NAMESPACE, "operators"),
            (OPERATOR_NAMESPACE_LABELS, "team=kafka, env=prod"),
            (SERVICE_DNS_DOMAIN, "example.local"),
            (IMAGE_PULL_POLICY, "ifnotpresent"),
            (IMAGE_PULL_SECRETS, "registry-a,registry-b"),
            (OPERATIONS_THREAD_POOL_SIZE, " 4 "),
            (INSTALL_CRDS, "true"),
            (RELOAD_CERTIFICATES, "false"),
        ])
        .unwrap();
        assert!(!config.reload_certificates);
        assert_eq!(config.concurrency, 4);
        assert!(config.install_crds);
        assert_eq!(
            config
                .model
                .images
                .by_version
                .get("4.3.1")
                .map(String::as_str),
            Some("example.com/kafka:4.3.1")
        );
        assert!(!config.model.network_policy_generation);
        assert_eq!(config.model.operator_namespace, "operators");
        assert_eq!(
            config.model.operator_namespace_labels,
            Some(BTreeMap::from([
                ("env".to_owned(), "prod".to_owned()),
                ("team".to_owned(), "kafka".to_owned())
            ]))
        );
        assert_eq!(config.model.cluster_domain, "example.local");
        assert_eq!(
            config.model.image_pull_policy.as_deref(),
            Some("IfNotPresent")
        );
        assert_eq!(
            config.model.image_pull_secrets,
            vec!["registry-a".to_owned(), "registry-b".to_owned()]
        );
    }

    #[test]
    fn budgets_watched_namespaces_and_shared_variables_follow_strimzi() {
        let default = read(&[("STRIMZI_NAMESPACE", "kafka")]).unwrap();
        assert!(default.model.pod_disruption_budget_generation);
        assert!(!default.model.entity_operator_watched_namespace_enabled);
        assert!(default.model.shared_env.is_empty());
        let config = read(&[
            ("STRIMZI_NAMESPACE", "kafka"),
            (POD_DISRUPTION_BUDGET_GENERATION, "FALSE"),
            (ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED, "true"),
            ("FIPS_MODE", "disabled"),
            ("NO_PROXY", ""),
            ("HTTP_PROXY", "http://proxy.example:3128"),
        ])
        .unwrap();
        assert!(!config.model.pod_disruption_budget_generation);
        assert!(config.model.entity_operator_watched_namespace_enabled);
        // Set ones only, an empty one too, in Strimzi's order.
        let shared: Vec<(&str, Option<&str>)> = config
            .model
            .shared_env
            .iter()
            .map(|var| (var.name.as_str(), var.value.as_deref()))
            .collect();
        assert_eq!(
            shared,
            [
                ("HTTP_PROXY", Some("http://proxy.example:3128")),
                ("NO_PROXY", Some("")),
                ("FIPS_MODE", Some("disabled")),
            ]
        );
    }

    #[test]
    fn the_start_line_shows_the_settings_but_not_the_proxy_credentials() {
        let config = read(&[
            ("STRIMZI_NAMESPACE", "kafka"),
            (OPERATIONS_THREAD_POOL_SIZE, "7"),
            (
                "HTTPS_PROXY",
                "http://proxy-user:pr0xy-s3cret@proxy.example:3128",
            ),
            ("NO_PROXY", ".svc,10.0.0.0/8"),
        ])
        .unwrap();
        let line = strimzi_operator_common::logging::start_line(NAME, &config);
        assert!(
            line.starts_with(&format!(
                "strimzi-cluster-operator {}, configuration: ClusterOperatorConfig {{",
                strimzi_operator_common::VERSION
            )),
            "{line}"
        );
        assert!(!line.contains("s3cret"), "{line}");
        assert!(!line.contains('\n'), "{line}");
        for shown in [
            "concurrency: 7",
            "shared_env: [\"HTTPS_PROXY=http://<redacted>@proxy.example:3128\", \"NO_PROXY=.svc,10.0.0.0/8\"]",
            "1.2.0-kafka-4.3.1",
        ] {
            assert!(line.contains(shown), "{shown}: {line}");
        }
    }

    #[test]
    fn the_ignored_variables_that_are_set_are_named() {
        let set = [
            "JAVA_OPTS",
            "STRIMZI_CREATE_CLUSTER_ROLES",
            NETWORK_POLICY_GENERATION,
        ];
        let named: Vec<&str> = set_ignored_variables(|name| set.contains(&name))
            .iter()
            .map(|ignored| ignored.name)
            .collect();
        assert_eq!(named, ["STRIMZI_CREATE_CLUSTER_ROLES", "JAVA_OPTS"]);
        assert!(set_ignored_variables(|_| false).is_empty());
        let mut names: Vec<&str> = IGNORED_VARIABLES
            .iter()
            .map(|ignored| ignored.name)
            .collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), IGNORED_VARIABLES.len(), "each named once");
    }

    #[test]
    fn bad_values_name_the_variable() {
        for (variable, value) in [
            (NETWORK_POLICY_GENERATION, "maybe"),
            (POD_DISRUPTION_BUDGET_GENERATION, "no"),
            (ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED, "yes"),
            (IMAGE_PULL_POLICY, "Sometimes"),
            (IMAGE_PULL_SECRETS, "Not_A_Name"),
            (OPERATOR_NAMESPACE_LABELS, "novalue"),
            (KAFKA_IMAGES, "no-equals-sign"),
            (OPERATIONS_THREAD_POOL_SIZE, "0"),
            (OPERATIONS_THREAD_POOL_SIZE, "-1"),
            (OPERATIONS_THREAD_POOL_SIZE, "ten"),
            (OPERATIONS_THREAD_POOL_SIZE, "65536"),
            (RELOAD_CERTIFICATES, "sometimes"),
        ] {
            let error = read(&[("STRIMZI_NAMESPACE", "kafka"), (variable, value)]).unwrap_err();
            let error = error.to_string();
            assert!(error.contains(variable), "{error}");
            assert!(!error.contains('\n'), "one line: {error}");
        }
        let missing = read(&[]).unwrap_err();
        assert!(
            missing.to_string().contains("STRIMZI_NAMESPACE"),
            "{missing}"
        );
    }
}
