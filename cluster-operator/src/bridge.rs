//! The KafkaBridge controller: runs an HTTP Bridge for each KafkaBridge, from the objects of
//! [`crate::model::bridge`].
//!
//! A reconciliation reads what the spec refers to (the logging and metrics ConfigMaps, the
//! Secrets with certificates and passwords), applies the ServiceAccount, the Role and
//! RoleBinding that let the pods read Secrets through the Kubernetes Secret config provider,
//! the trusted certificates Secret (deleted when no longer wanted), the configuration
//! ConfigMap, the Deployment, the Service and the PodDisruptionBudget (and, with a
//! topology-label rack, the init ClusterRoleBinding, deleted when no longer wanted; deleting
//! the KafkaBridge deletes it through [`crate::bindings`]), and reports `Ready` once
//! the Deployment has all its pods ready in the current definition; until then the bridge is
//! `Reconciling` with reason `WaitingForPods` (`NotReady` when a pod is stuck: its image
//! cannot be pulled, it keeps crashing) and is looked at again when the Deployment changes
//! (its objects are watched) or after a few seconds. Something the spec names that does not
//! exist makes the bridge `NotReady` with a message naming it, and nothing is applied.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMapKeySelector, Pod, Secret};
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use sha2::{Digest, Sha256};
use strimzi_api::bridge::{KafkaBridge, KafkaBridgeStatus};
use strimzi_api::labels;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::apply::ApplyError;
use strimzi_operator_common::cache::CacheError;
use strimzi_operator_common::controller::{ControllerBuilder, Reconciled, Reconciler};
use strimzi_operator_common::referenced::{self, Missing};
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_operator_common::sync::{Listed, ObjectSync};

use crate::bindings::{InitBindingKind, delete_init_binding};
use crate::config::ClusterOperatorConfig;
use crate::model::bridge::{self as model, BridgeInputs, BridgeObjects};
use crate::model::client_security::SecretsData;
use crate::model::{ModelConfig, ModelError};
use crate::readiness::deployment_ready;

/// How soon a bridge whose pods are not ready yet is looked at again, unless its Deployment
/// changes first.
const RECHECK_WHILE_STARTING: Duration = Duration::from_secs(5);

/// Why a bridge is `NotReady`; the reason goes into its condition.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The spec is invalid in a way the CRD cannot catch.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A ConfigMap or key the spec names does not exist.
    #[error("{field}: ConfigMap {name} {problem} in namespace {namespace}")]
    ConfigMapMissing {
        /// The spec field that names it.
        field: &'static str,
        /// The ConfigMap.
        name: String,
        /// What is missing.
        problem: String,
        /// Its namespace.
        namespace: String,
    },
    /// A Secret or key the spec names does not exist.
    #[error("{field}: Secret {name} {problem} in namespace {namespace}")]
    SecretMissing {
        /// The spec field that names it.
        field: &'static str,
        /// The Secret.
        name: String,
        /// What is missing.
        problem: String,
        /// Its namespace.
        namespace: String,
    },
    /// An object could not be applied.
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// The API server could not be asked.
    #[error(transparent)]
    Api(#[from] ApiCallError),
}

impl ErrorReason for BridgeError {
    fn reason(&self) -> &'static str {
        match self {
            Self::Model(error) => error.reason(),
            Self::ConfigMapMissing { .. } | Self::SecretMissing { .. } => {
                "InvalidConfigurationException"
            }
            Self::Apply(error) => error.reason(),
            Self::Api(_) => "KubernetesApiError",
        }
    }

    fn is_permanent(&self) -> bool {
        matches!(self, Self::Model(_))
    }
}

/// Reconciles KafkaBridges.
pub struct BridgeReconciler {
    runtime: OperatorRuntime,
    config: ModelConfig,
}

impl BridgeReconciler {
    /// The KafkaBridge controller on `runtime`: the bridges in the watched namespaces, each
    /// reconciled again when one of its objects changes.
    pub fn controller(
        runtime: &OperatorRuntime,
        config: &ClusterOperatorConfig,
    ) -> Result<BoxFuture<'static, ()>, CacheError> {
        let reconciler = Self {
            runtime: runtime.clone(),
            config: config.model.clone(),
        };
        let owned = format!("{}={}", labels::KIND, model::KIND);
        ControllerBuilder::new(runtime, reconciler)
            .concurrency(config.concurrency)
            .owns_metadata::<Deployment>(&owned)
            .build()
    }

    /// The value of `key` in ConfigMap `selector` names, for the spec field `field`.
    async fn config_map_value(
        &self,
        namespace: &str,
        selector: &ConfigMapKeySelector,
        field: &'static str,
    ) -> Result<String, BridgeError> {
        let value = referenced::config_map_value(
            self.runtime.client(),
            namespace,
            &selector.name,
            &selector.key,
        )
        .await?;
        value.map_err(|missing| BridgeError::ConfigMapMissing {
            field,
            name: selector.name.clone(),
            problem: match missing {
                Missing::Object => "does not exist".to_owned(),
                Missing::Key => format!("has no key {}", selector.key),
            },
            namespace: namespace.to_owned(),
        })
    }

    /// Checks that every Secret value the configuration reads exists, and returns a digest
    /// of them all (empty without any), which rolls the pods when one changes.
    async fn secrets_digest(
        &self,
        bridge: &KafkaBridge,
        namespace: &str,
    ) -> Result<String, BridgeError> {
        let keys = model::secret_keys(&bridge.spec);
        if keys.is_empty() {
            return Ok(String::new());
        }
        let api: Api<Secret> = self.runtime.api(Some(namespace));
        let mut digest = Sha256::new();
        for key in keys {
            let missing = |problem: String| BridgeError::SecretMissing {
                field: key.field,
                name: key.secret.clone(),
                problem,
                namespace: namespace.to_owned(),
            };
            let secret = api
                .get_opt(&key.secret)
                .await
                .map_err(|source| {
                    ApiCallError::of::<Secret>("get", namespace, &key.secret, source)
                })?
                .ok_or_else(|| missing("does not exist".to_owned()))?;
            let value = secret
                .data
                .as_ref()
                .and_then(|data| data.get(&key.key))
                .ok_or_else(|| missing(format!("has no key {}", key.key)))?;
            digest.update(key.secret.as_bytes());
            digest.update([0]);
            digest.update(key.key.as_bytes());
            digest.update([0]);
            digest.update(&value.0);
            digest.update([0]);
        }
        Ok(digest
            .finalize()
            .iter()
            .take(8)
            .map(|byte| format!("{byte:02x}"))
            .collect())
    }

    /// The bridge's objects, from the spec and what it refers to.
    async fn desired(&self, bridge: &KafkaBridge) -> Result<BridgeObjects, BridgeError> {
        let namespace = bridge.namespace().unwrap_or_default();
        model::validate(&bridge.spec)?;
        let external_logging = match model::logging_reference(&bridge.spec) {
            Some(selector) => Some(
                self.config_map_value(&namespace, selector, "spec.logging.valueFrom")
                    .await?,
            ),
            None => None,
        };
        let metrics_rules = match model::metrics_reference(&bridge.spec) {
            Some(selector) => Some(
                self.config_map_value(&namespace, selector, "spec.metricsConfig.valueFrom")
                    .await?,
            ),
            None => None,
        };
        // The trusted certificates' Secrets, whole, first: a missing one is named first.
        let api: Api<Secret> = self.runtime.api(Some(&namespace));
        let mut trusted = SecretsData::new();
        for name in model::trusted_certificate_secret_names(&bridge.spec) {
            let secret = api
                .get_opt(&name)
                .await
                .map_err(|source| ApiCallError::of::<Secret>("get", &namespace, &name, source))?
                .ok_or_else(|| BridgeError::SecretMissing {
                    field: "spec.tls.trustedCertificates",
                    name: name.clone(),
                    problem: "does not exist".to_owned(),
                    namespace: namespace.clone(),
                })?;
            trusted.insert(name, secret.data.unwrap_or_default());
        }
        let secrets_digest = self.secrets_digest(bridge, &namespace).await?;
        Ok(model::build(BridgeInputs {
            bridge,
            config: &self.config,
            external_logging: external_logging.as_deref(),
            metrics_rules: metrics_rules.as_deref(),
            secrets_digest: &secrets_digest,
            trusted_certificate_secrets: &trusted,
        })?)
    }
}

impl Reconciler for BridgeReconciler {
    type Resource = KafkaBridge;
    type Status = KafkaBridgeStatus;
    type Error = BridgeError;

    async fn reconcile(
        &self,
        bridge: Arc<KafkaBridge>,
    ) -> Result<Reconciled<KafkaBridgeStatus>, BridgeError> {
        let BridgeObjects {
            service_account,
            role,
            role_binding,
            trusted_certificates,
            config_map,
            deployment,
            service,
            pod_disruption_budget,
            init_cluster_role_binding,
            warnings,
        } = self.desired(&bridge).await?;
        let namespace = bridge.namespace().unwrap_or_default();
        let labels = model::component_labels(&bridge, &self.config);
        let listed_secrets: Listed<Secret> = Listed::list(
            self.runtime.client(),
            [namespace.as_str()],
            &labels.selector_string(),
        )
        .await?;
        let mut sync = ObjectSync::new(self.runtime.applier());
        sync.apply_read([&service_account]).await?;
        match &init_cluster_role_binding {
            Some(binding) => {
                self.runtime.applier().apply_cluster_scoped(binding).await?;
            }
            None => {
                if delete_init_binding(
                    &self.runtime,
                    InitBindingKind::BRIDGE,
                    &namespace,
                    &bridge.name_any(),
                )
                .await?
                {
                    tracing::info!("deleted the init ClusterRoleBinding no longer needed");
                }
            }
        }
        sync.apply_read([&role]).await?;
        sync.apply_read([&role_binding]).await?;
        sync.apply(&trusted_certificates, &listed_secrets).await?;
        sync.prune(&listed_secrets, &trusted_certificates).await?;
        sync.apply_read([&config_map]).await?;
        sync.apply_read([&deployment]).await?;
        sync.apply_read([&service]).await?;
        sync.apply_read(&pod_disruption_budget).await?;

        let name = deployment.name_any();
        let api: Api<Deployment> = self.runtime.api(Some(&namespace));
        let deployment = api
            .get_opt(&name)
            .await
            .map_err(|source| ApiCallError::of::<Deployment>("get", &namespace, &name, source))?;
        let status = KafkaBridgeStatus {
            url: Some(model::url(&bridge)),
            replicas: Some(bridge.spec.replicas),
            label_selector: Some(labels.selector_string()),
            ..KafkaBridgeStatus::default()
        };
        let ready = deployment
            .as_ref()
            .is_some_and(|deployment| deployment_ready(deployment, bridge.spec.replicas));
        let mut reconciled = if ready {
            Reconciled::new(status)
        } else {
            let ready_replicas = deployment
                .as_ref()
                .and_then(|deployment| deployment.status.as_ref())
                .and_then(|status| status.ready_replicas)
                .unwrap_or_default();
            let mut message = format!(
                "Deployment {name} has {ready_replicas} of {} pods ready",
                bridge.spec.replicas
            );
            // A stuck pod (its image cannot be pulled, it keeps crashing) waits for the user.
            let pods: Api<Pod> = self.runtime.api(Some(&namespace));
            let listed = pods
                .list(&ListParams::default().labels(&labels.selector_string()))
                .await
                .map_err(|source| {
                    ApiCallError::new(
                        "list",
                        format!("Pods of Deployment {namespace}/{name}"),
                        source,
                    )
                })?;
            let stuck = crate::pod_set::stuck_pods(&listed.items);
            let waiting = if stuck.is_empty() {
                Reconciled::pending
            } else {
                message.push_str(&format!("; stuck: {}", stuck.join(", ")));
                Reconciled::stalled
            };
            waiting(status, "WaitingForPods", &message, RECHECK_WHILE_STARTING)
        };
        for warning in &warnings {
            reconciled = reconciled.warn(&warning.reason, &warning.message);
        }
        Ok(reconciled)
    }
}
