//! Running a KafkaConnect's `spec.build` ([`crate::model::connect::build`]): each
//! reconciliation reads the StrimziPodSet's record of the last build and the builder pod,
//! lets [`next_step`] decide, and does that one step: start the builder (Dockerfile
//! ConfigMap, ServiceAccount, pod), follow it (the reconciliation ends pending; the pod's
//! changes wake the controller), hand its pushed image to the workers, replace it, or
//! report its failure. Without `spec.build`, what a build left is deleted. A builder pod of
//! that name that the KafkaConnect does not own is never run over or deleted.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference, Pod, ServiceAccount};
use kube::api::ApiResource;
use kube::{Resource, ResourceExt};
use strimzi_api::annotations;
use strimzi_api::connect::{KafkaConnect, KafkaConnectStatus};
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::controller::{Reconciled, remove_annotation_if_unchanged};
use strimzi_operator_common::events::Severity;
use strimzi_operator_common::sync::{Listed, ObjectSync};

use super::{ConnectError, ConnectReconciler};
use crate::model::connect::build::progress::{BuildStep, Builder, RecordedBuild, next_step};
use crate::model::connect::build::{COMPONENT_TYPE, ConnectBuild, builder_name};
use crate::model::connect::{BuiltImage, ConnectCluster};

/// How soon a running build is looked at again when its pod does not change (its changes
/// wake the controller sooner).
const BUILD_RECHECK: Duration = Duration::from_secs(30);

/// What the workers may do while a build goes on.
pub(crate) enum BuildProgress {
    /// They run `image`; `finished` names a builder pod to delete once the StrimziPodSet
    /// records the image.
    Ready {
        /// The image and its revision.
        built: BuiltImage,
        /// Whether the builder pod that pushed it is to be deleted.
        finished: bool,
    },
    /// The build is not through: the reconciliation reports this and leaves the workers.
    Waiting(Waiting),
}

/// Why a reconciliation waits for a build.
pub(crate) enum Waiting {
    /// Building, replacing or removing a builder pod.
    Building(String),
    /// Building for longer than the timeout.
    Overdue(String),
    /// The build failed; looked at again in the given time.
    Failed(String, Duration),
}

impl Waiting {
    /// The reconciliation's outcome with `status`.
    pub(crate) fn reconciled(self, status: KafkaConnectStatus) -> Reconciled<KafkaConnectStatus> {
        match self {
            Self::Building(message) => {
                Reconciled::pending(status, "ConnectBuildRunning", &message, BUILD_RECHECK)
            }
            Self::Overdue(message) => {
                Reconciled::stalled(status, "TimeoutException", &message, BUILD_RECHECK)
            }
            Self::Failed(message, retry_in) => {
                Reconciled::stalled(status, "ConnectBuildFailed", &message, retry_in)
            }
        }
    }
}

/// The label selector of a cluster's build objects.
pub(crate) fn build_selector(cluster: &ConnectCluster) -> String {
    let mut labels = cluster.component_labels();
    labels.component_name = builder_name(&cluster.component_name);
    labels.selector_string()
}

/// The selector of every builder pod, for the controller's watch.
pub(crate) fn builder_pods_selector() -> String {
    format!(
        "{}=KafkaConnect,{}={COMPONENT_TYPE}",
        strimzi_api::labels::KIND,
        strimzi_api::labels::COMPONENT_TYPE
    )
}

impl ConnectReconciler {
    /// One step of `build` for `connect`; `retry_after` is when a failed build is tried again.
    pub(crate) async fn build_step(
        &self,
        connect: &KafkaConnect,
        cluster: &ConnectCluster,
        build: &ConnectBuild<'_>,
        retry_after: Duration,
    ) -> Result<BuildProgress, ConnectError> {
        let namespace = &cluster.namespace;
        let pod_name = builder_name(&cluster.component_name);
        let recorded = self
            .api::<StrimziPodSet>(namespace)
            .get_opt(&cluster.component_name)
            .await
            .map_err(|error| {
                ApiCallError::of::<StrimziPodSet>("get", namespace, &cluster.component_name, error)
            })?
            .map(|set| RecordedBuild::from_annotations(set.annotations()))
            .unwrap_or_default();
        let pods = self.api::<Pod>(namespace);
        let pod = pods
            .get_opt(&pod_name)
            .await
            .map_err(|error| ApiCallError::of::<Pod>("get", namespace, &pod_name, error))?;
        if let Some(pod) = &pod
            && !owned_by(pod, connect)
        {
            return Err(ConnectError::BuilderPodNotOurs { pod: pod_name });
        }
        let builder = pod
            .as_ref()
            .map(|pod| Builder::from_pod(pod, &pod_name, jiff::Timestamp::now()));
        let settings = &cluster.config.connect_build;
        let step = next_step(
            build.revision(),
            &recorded,
            builder.as_ref(),
            settings.timeout,
            retry_after,
        );
        let owner = connect.object_ref(&());
        let built = |image: String| BuiltImage {
            image,
            revision: build.revision().to_owned(),
        };
        let building = |what: &str| {
            Ok(BuildProgress::Waiting(Waiting::Building(format!(
                "{what} the Connect image {} (builder pod {pod_name}, build revision {})",
                build.output_image(),
                build.revision()
            ))))
        };
        match step {
            BuildStep::Current {
                image,
                remove_builder,
            } => {
                if remove_builder {
                    self.delete_builder(namespace, &pod_name).await?;
                }
                Ok(BuildProgress::Ready {
                    built: built(image),
                    finished: false,
                })
            }
            BuildStep::Start { forced } => {
                let mut sync = ObjectSync::new(self.runtime.applier());
                sync.apply_read([&build.dockerfile_config_map()]).await?;
                sync.apply_read([&build.service_account()]).await?;
                sync.apply_read([&build.builder_pod()]).await?;
                self.note(
                    &owner,
                    "ConnectBuildStarted",
                    &format!(
                        "Started building the Connect image {} in pod {pod_name}{}",
                        build.output_image(),
                        if forced { " (rebuild forced)" } else { "" }
                    ),
                )
                .await;
                if forced {
                    self.remove_force_rebuild(cluster).await?;
                }
                building("building")
            }
            BuildStep::Replace => {
                self.delete_builder(namespace, &pod_name).await?;
                building("replacing the builder of a previous build before building")
            }
            BuildStep::WaitForRemoval => {
                building("waiting for the previous builder pod to go before building")
            }
            BuildStep::Running { overdue: false } => building("building"),
            BuildStep::Running { overdue: true } => {
                Ok(BuildProgress::Waiting(Waiting::Overdue(format!(
                    "Exceeded timeout of {}ms while waiting for Pods resource {pod_name} in namespace \
                 {namespace} to be complete: the build of {} still runs",
                    settings.timeout.as_millis(),
                    build.output_image()
                ))))
            }
            BuildStep::Succeeded { image } => {
                if recorded.image.as_deref() != Some(image.as_str()) {
                    self.note(
                        &owner,
                        "ConnectBuildSucceeded",
                        &format!("Built and pushed {image}; the workers move to it"),
                    )
                    .await;
                }
                Ok(BuildProgress::Ready {
                    built: built(image),
                    finished: true,
                })
            }
            BuildStep::Failed { message, retry_in } => Ok(BuildProgress::Waiting(Waiting::Failed(
                format!(
                    "The Kafka Connect build failed: {message} (see the log of pod {pod_name}; \
                     tried again in {}s, at once when spec.build changes, with annotation \
                     {}=true on StrimziPodSet {}, or when the pod is deleted)",
                    retry_in.as_secs(),
                    annotations::FORCE_REBUILD,
                    cluster.component_name
                ),
                retry_in,
            ))),
        }
    }

    /// Deletes the builder pod once its image is recorded.
    pub(crate) async fn finish_build(&self, cluster: &ConnectCluster) -> Result<(), ConnectError> {
        self.delete_builder(&cluster.namespace, &builder_name(&cluster.component_name))
            .await
    }

    /// Deletes what a build left (builder pod, ServiceAccount, Dockerfile ConfigMap) once
    /// the spec has no build: only objects labelled as this cluster's build objects, found
    /// through the Dockerfile ConfigMap (written first, deleted last), and of pods only those
    /// `connect` owns.
    pub(crate) async fn remove_build(
        &self,
        connect: &KafkaConnect,
        cluster: &ConnectCluster,
    ) -> Result<(), ConnectError> {
        let client = self.runtime.client();
        let namespace = [cluster.namespace.as_str()];
        let selector = build_selector(cluster);
        let config_maps: Listed<ConfigMap> = Listed::list(client, namespace, &selector).await?;
        if config_maps.iter().next().is_none() {
            return Ok(());
        }
        let pods: Listed<Pod> = Listed::list(client, namespace, &selector).await?;
        let accounts: Listed<ServiceAccount> = Listed::list(client, namespace, &selector).await?;
        let mut sync = ObjectSync::new(self.runtime.applier());
        let not_ours = pods.iter().filter(|pod| !owned_by(pod, connect));
        sync.prune(&pods, not_ours).await?;
        sync.prune(&accounts, []).await?;
        sync.prune(&config_maps, []).await?;
        Ok(())
    }

    async fn delete_builder(&self, namespace: &str, name: &str) -> Result<(), ConnectError> {
        self.runtime
            .applier()
            .delete(&self.api::<Pod>(namespace), name)
            .await?;
        Ok(())
    }

    /// Removes `strimzi.io/force-rebuild` from the StrimziPodSet once the forced build runs.
    async fn remove_force_rebuild(&self, cluster: &ConnectCluster) -> Result<(), ConnectError> {
        let kind = ApiResource::erase::<StrimziPodSet>(&());
        remove_annotation_if_unchanged(
            self.runtime.client(),
            &kind,
            &cluster.namespace,
            &cluster.component_name,
            annotations::FORCE_REBUILD,
            "true",
        )
        .await
        .map_err(|error| {
            ApiCallError::of::<StrimziPodSet>(
                "patch",
                &cluster.namespace,
                &cluster.component_name,
                error,
            )
        })?;
        Ok(())
    }

    /// A Normal Event about the build on the KafkaConnect.
    async fn note(&self, owner: &ObjectReference, reason: &str, message: &str) {
        self.runtime
            .events()
            .publish_logged(owner, Severity::Normal, reason, "ConnectBuild", message)
            .await;
    }
}

/// Whether `pod` is owned by `connect` (an owner reference with its UID).
fn owned_by(pod: &Pod, connect: &KafkaConnect) -> bool {
    let uid = connect.meta().uid.as_deref();
    uid.is_some()
        && pod
            .owner_references()
            .iter()
            .any(|owner| Some(owner.uid.as_str()) == uid)
}
