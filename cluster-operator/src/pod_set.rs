//! The StrimziPodSet controller: keeps exactly the pods a StrimziPodSet lists. Missing pods
//! are created with the set as their controller owner, pods the set owns but no longer lists
//! are deleted, and a running pod is never changed in place (rolling it is the job of the
//! Kafka reconciler, in a later issue). The status counts the pods, the ready ones and the
//! current ones (whose `strimzi.io/revision` is the one the set asks for).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, PostParams};
use kube::{Resource, ResourceExt};
use strimzi_api::annotations::REVISION;
use strimzi_api::labels::{CONTROLLER, CONTROLLER_NAME, CONTROLLER_STRIMZI_POD_SET};
use strimzi_api::pod_set::{StrimziPodSet, StrimziPodSetStatus};
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::controller::{ControllerBuilder, Reconciled, Reconciler};
use strimzi_operator_common::labels::owner_reference;
use strimzi_operator_common::runtime::OperatorRuntime;

use strimzi_operator_common::scoped_cache::ScopedCache;

/// The label selector of every pod a StrimziPodSet manages.
pub fn managed_pods_selector() -> String {
    format!("{CONTROLLER}={CONTROLLER_STRIMZI_POD_SET}")
}

/// Why a StrimziPodSet could not be reconciled.
#[derive(Debug, thiserror::Error)]
pub enum PodSetError {
    /// An entry of `spec.pods` is not a valid pod.
    #[error("spec.pods[{index}] is not a valid Pod: {message}")]
    InvalidPod {
        /// Position in `spec.pods`.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// The API server refused a request (`create` or `delete` a Pod).
    #[error(transparent)]
    Api(#[from] ApiCallError),
    /// The StrimziPodSet has no namespace or UID (not read from the API server).
    #[error("the StrimziPodSet has no namespace or UID")]
    Incomplete,
}

impl ErrorReason for PodSetError {
    fn reason(&self) -> &'static str {
        match self {
            Self::InvalidPod { .. } => "InvalidPod",
            Self::Api(_) => "KubernetesApiError",
            Self::Incomplete => "InvalidResource",
        }
    }
}

/// Reconciles StrimziPodSets from a cache of the pods they manage.
pub struct PodSetReconciler {
    runtime: OperatorRuntime,
    pods: ScopedCache<Pod>,
}

impl PodSetReconciler {
    /// The StrimziPodSet controller on `runtime`, with its pod watches, reconciling at most
    /// `concurrency` StrimziPodSets at once.
    pub fn controller(
        runtime: &OperatorRuntime,
        concurrency: u16,
    ) -> Result<futures::future::BoxFuture<'static, ()>, strimzi_operator_common::cache::CacheError>
    {
        let pods = ScopedCache::new(runtime.applier().field_manager());
        let reconciler = Self {
            runtime: runtime.clone(),
            pods: pods.clone(),
        };
        ControllerBuilder::new(runtime, reconciler)
            .concurrency(concurrency)
            .wire(move |controller, scope, runtime| {
                let api: Api<Pod> = runtime.api(scope.namespace.as_deref());
                let stream = pods.watch(api, scope.namespace.clone(), &managed_pods_selector());
                controller.owns_stream(stream)
            })
            .build()
    }

    async fn create(&self, namespace: &str, pod: &Pod) -> Result<(), PodSetError> {
        let api: Api<Pod> = Api::namespaced(self.runtime.client().clone(), namespace);
        let params = PostParams {
            field_manager: Some(self.runtime.applier().field_manager().to_owned()),
            ..PostParams::default()
        };
        match api.create(&params, pod).await {
            Ok(_) => {}
            // The cache has not seen it yet: nothing to do.
            Err(kube::Error::Api(status)) if status.code == 409 => return Ok(()),
            Err(source) => return Err(api_error("create", namespace, &pod.name_any(), source)),
        }
        self.runtime.metrics().count_write("Pod", "create");
        tracing::info!(pod = pod.name_any(), "created pod");
        Ok(())
    }

    async fn delete(&self, namespace: &str, name: &str) -> Result<(), PodSetError> {
        let api: Api<Pod> = Api::namespaced(self.runtime.client().clone(), namespace);
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            Err(source) => return Err(api_error("delete", namespace, name, source)),
        }
        self.runtime.metrics().count_write("Pod", "delete");
        tracing::info!(pod = name, "deleted pod the set no longer lists");
        let pod = k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some("Pod".to_owned()),
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..Default::default()
        };
        self.runtime
            .events()
            .publish_logged(
                &pod,
                strimzi_operator_common::events::Severity::Normal,
                "PodRemoved",
                "ScaleDown",
                "Deleted the pod: its StrimziPodSet no longer lists it (scale-down or node removed)",
            )
            .await;
        Ok(())
    }
}

fn api_error(verb: &'static str, namespace: &str, name: &str, source: kube::Error) -> PodSetError {
    ApiCallError::of::<Pod>(verb, namespace, name, source).into()
}

/// The pods `set` lists, with its namespace, the controller labels and the owner reference.
pub fn desired_pods(set: &StrimziPodSet) -> Result<Vec<Pod>, PodSetError> {
    let namespace = set.namespace().ok_or(PodSetError::Incomplete)?;
    let mut owner = owner_reference(set).ok_or(PodSetError::Incomplete)?;
    owner.controller = Some(true);
    set.spec
        .pods
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let value = serde_json::to_value(entry).map_err(|error| PodSetError::InvalidPod {
                index,
                message: error.to_string(),
            })?;
            let mut pod: Pod =
                serde_json::from_value(value).map_err(|error| PodSetError::InvalidPod {
                    index,
                    message: error.to_string(),
                })?;
            if pod.metadata.name.is_none() {
                return Err(PodSetError::InvalidPod {
                    index,
                    message: "metadata.name is missing".to_owned(),
                });
            }
            pod.metadata.namespace = Some(namespace.clone());
            let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
            labels.insert(CONTROLLER.to_owned(), CONTROLLER_STRIMZI_POD_SET.to_owned());
            labels.insert(CONTROLLER_NAME.to_owned(), set.name_any());
            pod.metadata.owner_references = Some(vec![owner.clone()]);
            Ok(pod)
        })
        .collect()
}

/// Whether `pod` reports the `Ready` condition.
pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|condition| condition.type_ == "Ready" && condition.status == "True")
        })
}

/// The annotations of the pods `sets` describe, by pod name.
pub fn described_annotations(sets: &[StrimziPodSet]) -> BTreeMap<String, BTreeMap<String, String>> {
    sets.iter()
        .flat_map(|set| &set.spec.pods)
        .filter_map(|pod| {
            let metadata = pod.0.get("metadata")?;
            let name = metadata.get("name")?.as_str()?.to_owned();
            let annotations = metadata
                .get("annotations")
                .and_then(|value| serde_json::from_value(value.clone()).ok())
                .unwrap_or_default();
            Some((name, annotations))
        })
        .collect()
}

fn revision(pod: &Pod) -> Option<&String> {
    pod.metadata.annotations.as_ref()?.get(REVISION)
}

impl Reconciler for PodSetReconciler {
    type Resource = StrimziPodSet;
    type Status = StrimziPodSetStatus;
    type Error = PodSetError;

    async fn reconcile(
        &self,
        set: Arc<StrimziPodSet>,
    ) -> Result<Reconciled<StrimziPodSetStatus>, PodSetError> {
        let namespace = set.namespace().ok_or(PodSetError::Incomplete)?;
        let uid = set.meta().uid.clone().ok_or(PodSetError::Incomplete)?;
        let desired = desired_pods(&set)?;
        let owned: BTreeMap<String, Arc<Pod>> = self
            .pods
            .list(&namespace)
            .await
            .into_iter()
            .filter(|pod| {
                pod.owner_references()
                    .iter()
                    .any(|owner| owner.uid == uid && owner.controller == Some(true))
            })
            .map(|pod| (pod.name_any(), pod))
            .collect();
        let (mut ready, mut current) = (0, 0);
        for pod in &desired {
            let name = pod.name_any();
            match owned.get(&name) {
                None => self.create(&namespace, pod).await?,
                // Recreated once the deletion is through.
                Some(existing) if existing.metadata.deletion_timestamp.is_some() => {}
                Some(existing) => {
                    ready += i32::from(is_ready(existing));
                    current += i32::from(revision(existing) == revision(pod));
                }
            }
        }
        for (name, pod) in &owned {
            let listed = desired.iter().any(|wanted| wanted.name_any() == *name);
            if !listed && pod.metadata.deletion_timestamp.is_none() {
                self.delete(&namespace, name).await?;
            }
        }
        let count = i32::try_from(desired.len()).unwrap_or(i32::MAX);
        Ok(Reconciled::new(StrimziPodSetStatus {
            pods: Some(count),
            ready_pods: Some(ready),
            current_pods: Some(current),
            ..StrimziPodSetStatus::default()
        }))
    }
}

/// Each of `pods` that is stuck (see [`stuck`]) and not being deleted, as `name (why)`.
pub fn stuck_pods<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Vec<String> {
    pods.into_iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .filter_map(|pod| {
            let why = stuck(pod)?;
            Some(format!("{} ({why})", pod.name_any()))
        })
        .collect()
}

/// Why `pod` seems stuck, if it does, as Strimzi's roller judges it: unschedulable, or a
/// container waiting for a reason a restart with another definition may cure.
pub fn stuck(pod: &Pod) -> Option<String> {
    const STUCK_WAITING: [&str; 6] = [
        "CrashLoopBackOff",
        "ImagePullBackOff",
        "ErrImagePull",
        "InvalidImageName",
        "CreateContainerConfigError",
        "CreateContainerError",
    ];
    let status = pod.status.as_ref()?;
    let unschedulable = status.conditions.iter().flatten().find(|condition| {
        condition.type_ == "PodScheduled"
            && condition.status == "False"
            && condition.reason.as_deref() == Some("Unschedulable")
    });
    if let Some(condition) = unschedulable {
        return Some(format!(
            "Unschedulable: {}",
            condition.message.as_deref().unwrap_or_default()
        ));
    }
    status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten())
        .filter_map(|container| {
            container
                .state
                .as_ref()?
                .waiting
                .as_ref()?
                .reason
                .as_deref()
        })
        .find(|reason| STUCK_WAITING.contains(reason))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn pod(status: serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "my-cluster-broker-0"},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn unschedulable_and_failing_pods_are_stuck_starting_ones_are_not() {
        let unschedulable = pod(serde_json::json!({"phase": "Pending", "conditions": [{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available",
        }]}));
        assert_eq!(
            stuck(&unschedulable).as_deref(),
            Some("Unschedulable: 0/3 nodes are available")
        );
        let pulling = pod(
            serde_json::json!({"phase": "Pending", "containerStatuses": [{
                "name": "kafka", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
                "state": {"waiting": {"reason": "ImagePullBackOff"}},
            }]}),
        );
        assert_eq!(stuck(&pulling).as_deref(), Some("ImagePullBackOff"));
        let crashing = pod(
            serde_json::json!({"phase": "Running", "initContainerStatuses": [{
                "name": "init", "image": "x", "imageID": "", "ready": false, "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            }]}),
        );
        assert_eq!(stuck(&crashing).as_deref(), Some("CrashLoopBackOff"));
        let scheduling = pod(serde_json::json!({"phase": "Pending"}));
        assert_eq!(stuck(&scheduling), None);
        let starting = pod(
            serde_json::json!({"phase": "Pending", "containerStatuses": [{
                "name": "kafka", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}},
            }]}),
        );
        assert_eq!(stuck(&starting), None);
    }

    fn set(pods: serde_json::Value) -> StrimziPodSet {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "core.strimzi.io/v1",
            "kind": "StrimziPodSet",
            "metadata": {"name": "set", "namespace": "ns", "uid": "u-1"},
            "spec": {"selector": {}, "pods": pods},
        }))
        .unwrap()
    }

    #[test]
    fn listed_pods_get_namespace_controller_labels_and_owner() {
        let pods = desired_pods(&set(serde_json::json!([
            {"metadata": {"name": "p-0", "labels": {"a": "b"}}, "spec": {"containers": []}}
        ])))
        .unwrap();
        let pod = &pods[0];
        assert_eq!(pod.metadata.namespace.as_deref(), Some("ns"));
        let labels = pod.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["a"], "b");
        assert_eq!(labels[CONTROLLER], CONTROLLER_STRIMZI_POD_SET);
        assert_eq!(labels[CONTROLLER_NAME], "set");
        let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.uid.as_str(), owner.controller), ("u-1", Some(true)));
    }

    #[test]
    fn a_pod_without_a_name_is_refused() {
        let error = desired_pods(&set(serde_json::json!([{"metadata": {}}]))).unwrap_err();
        assert_eq!(error.reason(), "InvalidPod");
        assert!(error.to_string().contains("spec.pods[0]"), "{error}");
    }
}
