//! `StrimziPodSet`: a set of individually defined pods that the Cluster Operator creates and
//! keeps running, used in place of StatefulSets.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::Condition;
use crate::schema::FreeFormMap;

/// The pods a `StrimziPodSet` should run.
#[skip_serializing_none]
#[derive(
    CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[kube(
    group = "core.strimzi.io",
    version = "v1",
    kind = "StrimziPodSet",
    namespaced,
    status = "StrimziPodSetStatus",
    shortname = "sps",
    category = "strimzi",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct StrimziPodSetSpec {
    /// Selects the pods that belong to this set; it must match every pod's labels.
    pub selector: LabelSelector,
    /// Complete Pod definitions, one per pod, kept exactly as written.
    pub pods: Vec<FreeFormMap>,
}

/// The observed state of a `StrimziPodSet`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrimziPodSetStatus {
    /// The operator's latest observations, such as `Ready`.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// How many pods the set manages.
    pub pods: Option<i32>,
    /// How many of those pods are ready.
    pub ready_pods: Option<i32>,
    /// How many of those pods run the current revision of their definition.
    pub current_pods: Option<i32>,
}

/// Reads one entry of `spec.pods` as a Kubernetes Pod.
pub fn pod_from_entry(entry: &FreeFormMap) -> Result<Pod, serde_json::Error> {
    serde_json::from_value(serde_json::to_value(entry)?)
}

/// Turns a Kubernetes Pod into an entry of `spec.pods`.
pub fn pod_to_entry(pod: &Pod) -> Result<FreeFormMap, serde_json::Error> {
    serde_json::from_value(serde_json::to_value(pod)?)
}

impl StrimziPodSetSpec {
    /// Every entry of `spec.pods` read as a Kubernetes Pod.
    pub fn pod_list(&self) -> Result<Vec<Pod>, serde_json::Error> {
        self.pods.iter().map(pod_from_entry).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DocumentError, from_value};
    use serde_json::json;

    fn document() -> serde_json::Value {
        json!({
            "apiVersion": "core.strimzi.io/v1",
            "kind": "StrimziPodSet",
            "metadata": {"name": "my-cluster-broker"},
            "spec": {
                "selector": {"matchLabels": {"strimzi.io/pool-name": "broker"}},
                "pods": [{
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "my-cluster-broker-0"},
                    "spec": {"containers": [{"name": "kafka", "image": "kafka:latest"}]},
                    "somethingNew": {"kept": true}
                }]
            },
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "observedGeneration": 1,
                "pods": 1,
                "readyPods": 1,
                "currentPods": 1
            }
        })
    }

    #[test]
    fn round_trips_with_unknown_pod_fields() {
        let set: StrimziPodSet = from_value(document()).unwrap();
        assert_eq!(serde_json::to_value(&set).unwrap(), document());
        assert!(
            crate::document::unknown_fields::<StrimziPodSet>(&document())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn entries_convert_to_pods_and_back() {
        let set: StrimziPodSet = from_value(document()).unwrap();
        let pods = set.spec.pod_list().unwrap();
        assert_eq!(
            pods[0].metadata.name.as_deref(),
            Some("my-cluster-broker-0")
        );
        let entry = pod_to_entry(&pods[0]).unwrap();
        assert_eq!(entry["kind"], "Pod");
        assert_eq!(entry["spec"]["containers"][0]["name"], "kafka");
        assert!(!entry.contains_key("somethingNew"));
        assert_eq!(pod_from_entry(&entry).unwrap(), pods[0]);
    }

    #[test]
    fn missing_selector_names_the_field() {
        let error =
            from_value::<StrimziPodSetSpec>(json!({"pods": []})).expect_err("selector is required");
        assert!(matches!(error, DocumentError::InvalidField { .. }));
        assert!(error.to_string().contains("selector"), "{error}");
        let error = from_value::<StrimziPodSetSpec>(json!({"selector": {}, "pods": [1]}))
            .expect_err("pods are objects");
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "pods[0]");
    }

    #[test]
    fn pods_schema_is_a_list_of_free_form_objects() {
        let schema = serde_json::to_value(schemars::schema_for!(StrimziPodSetSpec)).unwrap();
        let pods = &schema["properties"]["pods"];
        assert_eq!(pods["type"], "array");
        assert_eq!(pods["items"]["x-kubernetes-preserve-unknown-fields"], true);
        assert_eq!(schema["required"], json!(["selector", "pods"]));
    }
}
