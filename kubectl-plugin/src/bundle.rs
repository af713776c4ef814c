//! `support-bundle`: a Kafka cluster's resources, status, Events and the cluster operator's
//! logs in a plain tar file of YAML files. Secrets are listed by name, labels, annotations,
//! type and data keys only: their data never enters the bundle.

use std::collections::BTreeSet;
use std::path::Path;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Event, PersistentVolumeClaim, Pod, Secret, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, ListParams, LogParams};
use kube::core::NamespaceResourceScope;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::rebalance::KafkaRebalance;
use strimzi_api::topic::KafkaTopic;
use strimzi_api::user::KafkaUser;

use crate::connection::{Cluster, cluster_selector, resource_name};
use crate::error::PluginError;
use crate::options::OperatorLocation;

/// The lines of the cluster operator's logs kept per pod.
const LOG_TAIL_LINES: i64 = 5000;
/// The annotation `kubectl apply` keeps the last applied object in (a Secret's data too).
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What the bundle's README says.
const README: &str = "\
Support bundle of a Kafka cluster run by the Strimzi cluster operator, written by
`kubectl strimzi support-bundle`.

  <kind>/<name>.yaml       the Kafka, its KafkaNodePools, StrimziPodSets, pods, Services,
                           ConfigMaps, PersistentVolumeClaims, PodDisruptionBudgets,
                           NetworkPolicies, Deployments, KafkaTopics, KafkaUsers and
                           KafkaRebalances labelled strimzi.io/cluster=<kafka>
                           (managedFields and last-applied-configuration removed)
  events.yaml              the namespace's Events about those objects
  secrets.yaml             the cluster's Secrets: name, type, labels, annotations and the
                           NAMES of their data keys. Secret data (certificates, keys,
                           passwords) is NOT included.
  cluster-operator/        the cluster operator's Deployment, its pods and their logs
                           (the last 5000 lines of each)
  notes/                   what could not be collected, and why (e.g. a missing permission)
";

/// The files of the bundle, in order.
#[derive(Default)]
struct Bundle {
    entries: Vec<(String, Vec<u8>)>,
    /// `(kind, name)` of the objects collected, whose Events the bundle includes.
    involved: BTreeSet<(String, String)>,
}

impl Bundle {
    /// Adds file `path` with `text`.
    fn add(&mut self, path: String, text: String) {
        self.entries.push((path, text.into_bytes()));
    }

    /// Adds `value` as YAML file `path`.
    fn add_yaml<T: Serialize>(&mut self, path: String, value: &T) {
        let text = serde_yaml_ng::to_string(value)
            .unwrap_or_else(|error| format!("# could not be written as YAML: {error}\n"));
        self.add(path, text);
    }

    /// Adds a note that `what` could not be collected because of `error`.
    fn note(&mut self, what: &str, error: &dyn std::fmt::Display) {
        let file = what.replace(['/', ' '], "-");
        self.add(
            format!("notes/{file}.txt"),
            format!("{what} could not be collected: {error}\n"),
        );
    }

    /// Adds `object` as `<folder>/<name>.yaml`, cleaned, and remembers it for its Events.
    fn add_object<K: Resource<DynamicType = ()> + Serialize>(&mut self, folder: &str, object: &K) {
        let name = object.meta().name.clone().unwrap_or_default();
        self.involved
            .insert((K::kind(&()).into_owned(), name.clone()));
        self.add_yaml(format!("{folder}/{name}.yaml"), &cleaned(object));
    }

    /// Writes the bundle as a tar file at `file`.
    fn write(&self, file: &Path) -> Result<(), PluginError> {
        let failed = |source| PluginError::File {
            what: format!("writing the support bundle {}", file.display()),
            source,
        };
        let output = std::fs::File::create(file).map_err(failed)?;
        let mut tar = tar::Builder::new(output);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs())
            .unwrap_or_default();
        for (path, bytes) in &self.entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(now);
            header.set_cksum();
            tar.append_data(&mut header, path, bytes.as_slice())
                .map_err(failed)?;
        }
        tar.into_inner().map_err(failed)?;
        Ok(())
    }
}

/// `object` as JSON without `metadata.managedFields` and the last-applied annotation.
fn cleaned<K: Serialize>(object: &K) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or_default();
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
        if let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            annotations.remove(LAST_APPLIED);
        }
    }
    value
}

/// Adds every `K` of the command's namespace matching `selector` under `folder`, or a note.
async fn collect<K>(cluster: &Cluster, bundle: &mut Bundle, folder: &str, selector: &str)
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + DeserializeOwned
        + Serialize
        + Clone
        + std::fmt::Debug,
{
    match cluster.list::<K>(selector).await {
        Ok(objects) => {
            for object in &objects {
                bundle.add_object(folder, object);
            }
        }
        Err(error) => bundle.note(&resource_name::<K>(), &error),
    }
}

/// A Secret without its data: name, type, labels, annotations and the names of its keys.
fn secret_summary(secret: &Secret) -> Value {
    let mut annotations = secret.annotations().clone();
    annotations.remove(LAST_APPLIED);
    let mut keys: Vec<&String> = secret.data.iter().flat_map(|data| data.keys()).collect();
    keys.extend(secret.string_data.iter().flat_map(|data| data.keys()));
    json!({
        "name": secret.name_any(),
        "type": secret.type_,
        "labels": secret.labels(),
        "annotations": annotations,
        "keys": keys,
    })
}

/// Adds `secrets.yaml`: the cluster's Secrets without their data, or a note.
async fn collect_secrets(cluster: &Cluster, bundle: &mut Bundle, kafka: &str) {
    match cluster.list::<Secret>(&cluster_selector(kafka)).await {
        Ok(secrets) => {
            let summaries: Vec<Value> = secrets.iter().map(secret_summary).collect();
            bundle.add_yaml("secrets.yaml".to_owned(), &summaries);
        }
        Err(error) => bundle.note(&resource_name::<Secret>(), &error),
    }
}

/// Adds `events.yaml`: the namespace's Events about the collected objects, oldest first.
async fn collect_events(cluster: &Cluster, bundle: &mut Bundle) {
    match cluster.list::<Event>("").await {
        Ok(events) => {
            let mut about: Vec<&Event> = events
                .iter()
                .filter(|event| {
                    let object = &event.involved_object;
                    bundle.involved.contains(&(
                        object.kind.clone().unwrap_or_default(),
                        object.name.clone().unwrap_or_default(),
                    ))
                })
                .collect();
            about.sort_by_key(|event| {
                event
                    .last_timestamp
                    .as_ref()
                    .or(event.first_timestamp.as_ref())
                    .map(|time| time.0)
            });
            let cleaned: Vec<Value> = about.iter().map(cleaned).collect();
            bundle.add_yaml("events.yaml".to_owned(), &cleaned);
        }
        Err(error) => bundle.note(&resource_name::<Event>(), &error),
    }
}

/// Adds the cluster operator's Deployment, pods and logs, or notes saying what was missing.
async fn collect_operator(cluster: &Cluster, bundle: &mut Bundle, location: &OperatorLocation) {
    let deployment = match crate::operator::find(cluster, location).await {
        Ok(deployment) => deployment,
        Err(error) => {
            bundle.note("cluster-operator", &error);
            return;
        }
    };
    bundle.add_yaml(
        "cluster-operator/deployment.yaml".to_owned(),
        &cleaned(&deployment),
    );
    let namespace = deployment.namespace().unwrap_or_default();
    let selector = deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.selector.match_labels.as_ref())
        .map(|labels| {
            labels
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), &namespace);
    let listed = match pods.list(&ListParams::default().labels(&selector)).await {
        Ok(listed) => listed.items,
        Err(source) => {
            let error =
                PluginError::from_api("list", &resource_name::<Pod>(), Some(&namespace), source);
            bundle.note("cluster-operator pods", &error);
            return;
        }
    };
    for pod in &listed {
        let name = pod.name_any();
        bundle.add_yaml(format!("cluster-operator/pods/{name}.yaml"), &cleaned(pod));
        let params = LogParams {
            tail_lines: Some(LOG_TAIL_LINES),
            ..LogParams::default()
        };
        match pods.logs(&name, &params).await {
            Ok(logs) => bundle.add(format!("cluster-operator/logs/{name}.log"), logs),
            Err(source) => {
                let error = PluginError::from_api("get", "pods/log", Some(&namespace), source);
                bundle.note(&format!("cluster-operator logs of {name}"), &error);
            }
        }
    }
}

/// Writes the support bundle of Kafka `kafka` to `file`; what to print.
pub async fn support_bundle(
    cluster: &Cluster,
    kafka: &str,
    file: &Path,
    operator: &OperatorLocation,
) -> Result<String, PluginError> {
    let resource: Kafka = cluster.get(kafka).await?;
    let mut bundle = Bundle::default();
    bundle.add("README.txt".to_owned(), README.to_owned());
    bundle.add_object("kafkas", &resource);
    let selector = cluster_selector(kafka);
    collect::<KafkaNodePool>(cluster, &mut bundle, "kafkanodepools", &selector).await;
    collect::<StrimziPodSet>(cluster, &mut bundle, "strimzipodsets", &selector).await;
    collect::<Pod>(cluster, &mut bundle, "pods", &selector).await;
    collect::<Service>(cluster, &mut bundle, "services", &selector).await;
    collect::<ConfigMap>(cluster, &mut bundle, "configmaps", &selector).await;
    collect::<PersistentVolumeClaim>(cluster, &mut bundle, "persistentvolumeclaims", &selector)
        .await;
    collect::<PodDisruptionBudget>(cluster, &mut bundle, "poddisruptionbudgets", &selector).await;
    collect::<NetworkPolicy>(cluster, &mut bundle, "networkpolicies", &selector).await;
    collect::<Deployment>(cluster, &mut bundle, "deployments", &selector).await;
    collect::<KafkaTopic>(cluster, &mut bundle, "kafkatopics", &selector).await;
    collect::<KafkaUser>(cluster, &mut bundle, "kafkausers", &selector).await;
    collect::<KafkaRebalance>(cluster, &mut bundle, "kafkarebalances", &selector).await;
    collect_secrets(cluster, &mut bundle, kafka).await;
    collect_events(cluster, &mut bundle).await;
    collect_operator(cluster, &mut bundle, operator).await;
    bundle.write(file)?;
    let notes = bundle
        .entries
        .iter()
        .filter(|(path, _)| path.starts_with("notes/"))
        .count();
    let mut printed = format!(
        "wrote {} with {} entries (Secret data not included)\n",
        file.display(),
        bundle.entries.len()
    );
    if notes > 0 {
        printed.push_str(&format!(
            "{notes} part(s) could not be collected: see notes/ in the bundle\n"
        ));
    }
    Ok(printed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_keep_their_key_names_only() {
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {
                "name": "c-cluster-ca",
                "labels": {"strimzi.io/cluster": "c"},
                "annotations": {LAST_APPLIED: "{\"data\":{\"ca.key\":\"c2VjcmV0\"}}", "a": "b"},
            },
            "type": "Opaque",
            "data": {"ca.key": "c2VjcmV0"},
        }))
        .unwrap();
        let summary = secret_summary(&secret);
        assert_eq!(
            summary,
            json!({
                "name": "c-cluster-ca",
                "type": "Opaque",
                "labels": {"strimzi.io/cluster": "c"},
                "annotations": {"a": "b"},
                "keys": ["ca.key"],
            })
        );
    }

    #[test]
    fn objects_lose_managed_fields_and_the_last_applied_configuration() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {
                "name": "p",
                "annotations": {LAST_APPLIED: "{}", "kept": "yes"},
                "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
            },
        }))
        .unwrap();
        assert_eq!(
            cleaned(&pod),
            json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "annotations": {"kept": "yes"}},
            })
        );
    }
}
