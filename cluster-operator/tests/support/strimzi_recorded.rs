//! Clusters as Strimzi 1.2.0's own operator made them: the objects it created for
//! `kafka-persistent.yaml` and `kafka-ephemeral.yaml`, read back from its API server
//! (`operator-output/` of the Strimzi reference data), created again the way that operator
//! and its pod set controller created them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

/// The field manager of Strimzi's operator.
pub const STRIMZI_MANAGER: &str = "strimzi-kafka-operator";

/// The recorded kinds Strimzi's operator creates for a Kafka besides the Kafka, its pools
/// and the pods (files in `operator-output/<example>/` without `.json`), in creation order.
pub const OBJECT_KINDS: [&str; 9] = [
    "secret",
    "configmap",
    "serviceaccount",
    "role",
    "rolebinding",
    "service",
    "networkpolicy",
    "pdb",
    "pvc",
];

/// One recorded run of Strimzi's operator: `kafka-persistent` or `kafka-ephemeral`.
#[derive(Clone, Copy, Debug)]
pub struct Recorded(pub &'static str);

impl Recorded {
    fn dir(self) -> PathBuf {
        strimzi_tests::reference::reference_dir()
            .join("operator-output")
            .join(self.0)
    }

    /// The objects of one recorded kind (`kind` is the file name without `.json`), without
    /// those Kubernetes makes in every namespace.
    pub fn objects(self, kind: &str) -> Vec<Value> {
        let path = self.dir().join(format!("{kind}.json"));
        // Only a run with persistent storage has claims.
        if kind == "pvc" && !path.exists() {
            return Vec::new();
        }
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
        let list: Value = serde_json::from_str(&text).unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|object| !matches!(name(object).as_str(), "default" | "kube-root-ca.crt"))
            .cloned()
            .collect()
    }

    /// The namespace of the run. The nodes' names in it are part of their configuration
    /// and certificates, so the cluster is recreated in a namespace of that name.
    pub fn namespace(self) -> String {
        self.objects("kafka")[0]["metadata"]["namespace"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The cluster ID Strimzi's operator put into the nodes' configuration.
    pub fn cluster_id(self) -> String {
        self.objects("configmap")
            .iter()
            .find_map(|map| map["data"]["cluster.id"].as_str().map(str::to_owned))
            .unwrap()
    }

    /// Creates the namespace of the run (unless it exists), then every recorded object and the pods of the
    /// StrimziPodSets, as Strimzi's operator and its pod set controller created them: as
    /// its field manager, with the owners' new UIDs, the Kafka's and the pools' status
    /// written back (with the cluster ID, which its status holds after a reconciliation
    /// that got as far as the recording).
    pub async fn recreate(self, client: &Client) {
        let namespace = self.namespace();
        let created = Api::<Namespace>::all(client.clone())
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": namespace}})).unwrap(),
            )
            .await;
        match created {
            // Strimzi's operator was installed into it first.
            Ok(_) => {}
            Err(kube::Error::Api(response)) if response.code == 409 => {}
            Err(error) => panic!("creating namespace {namespace}: {error}"),
        }
        let mut owners = BTreeMap::new();
        let kafka = self.objects("kafka").remove(0);
        let uid = create(client, &namespace, &as_sent(kafka.clone(), &owners)).await;
        owners.insert(("Kafka".to_owned(), name(&kafka)), uid);
        write_status(
            client,
            &namespace,
            &kafka,
            json!({"clusterId": self.cluster_id()}),
        )
        .await;
        for pool in self.objects("kafkanodepool") {
            let uid = create(client, &namespace, &as_sent(pool.clone(), &owners)).await;
            owners.insert(("KafkaNodePool".to_owned(), name(&pool)), uid);
            write_status(client, &namespace, &pool, json!({})).await;
        }
        for kind in OBJECT_KINDS {
            for object in self.objects(kind) {
                create(client, &namespace, &as_sent(object, &owners)).await;
            }
        }
        for set in self.objects("strimzipodset") {
            let set_name = name(&set);
            let uid = create(client, &namespace, &as_sent(set.clone(), &owners)).await;
            for mut pod in set["spec"]["pods"].as_array().unwrap().clone() {
                pod["apiVersion"] = json!("v1");
                pod["kind"] = json!("Pod");
                pod["metadata"]["ownerReferences"] = json!([{
                    "apiVersion": "core.strimzi.io/v1",
                    "kind": "StrimziPodSet",
                    "name": set_name,
                    "uid": uid,
                    "controller": true,
                    "blockOwnerDeletion": true,
                }]);
                create(client, &namespace, &pod).await;
            }
        }
    }
}

/// The name of a recorded object.
pub fn name(object: &Value) -> String {
    object["metadata"]["name"].as_str().unwrap().to_owned()
}

/// `object` as it was sent to the API server: without what the server added (identity,
/// versions, timestamps, status, assigned cluster IPs), with the owners' new UIDs.
fn as_sent(mut object: Value, owners: &BTreeMap<(String, String), String>) -> Value {
    let metadata = object["metadata"].as_object_mut().unwrap();
    for key in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "generation",
        "managedFields",
    ] {
        metadata.remove(key);
    }
    if let Some(references) = metadata
        .get_mut("ownerReferences")
        .and_then(Value::as_array_mut)
    {
        for reference in references {
            let owner = (
                reference["kind"].as_str().unwrap().to_owned(),
                reference["name"].as_str().unwrap().to_owned(),
            );
            reference["uid"] = json!(owners[&owner]);
        }
    }
    if object["kind"] == "PersistentVolumeClaim" {
        // Kubernetes binds the claim to a volume again.
        let metadata = object["metadata"].as_object_mut().unwrap();
        metadata.remove("finalizers");
        if let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            annotations.retain(|key, _| key.starts_with("strimzi.io/"));
        }
        object["spec"].as_object_mut().unwrap().remove("volumeName");
    }
    let object_map = object.as_object_mut().unwrap();
    object_map.remove("status");
    if let Some(spec) = object_map.get_mut("spec").and_then(Value::as_object_mut)
        && spec.get("clusterIP").and_then(Value::as_str) != Some("None")
    {
        spec.remove("clusterIP");
        spec.remove("clusterIPs");
    }
    object
}

/// Creates `object` in `namespace` as Strimzi's operator does (a create as its field
/// manager) and returns its UID.
async fn create(client: &Client, namespace: &str, object: &Value) -> String {
    let (object, api) = super::dynamic(client, namespace, object);
    let params = PostParams {
        field_manager: Some(STRIMZI_MANAGER.to_owned()),
        ..PostParams::default()
    };
    let created = api.create(&params, &object).await.unwrap_or_else(|error| {
        panic!(
            "creating {} {}: {error}",
            super::kind_of(&object),
            object.name_any()
        )
    });
    created.uid().unwrap()
}

/// Writes the recorded status of `object` (a Kafka or a KafkaNodePool), with the fields of
/// `extra` added to it.
async fn write_status(client: &Client, namespace: &str, object: &Value, extra: Value) {
    let mut status = object["status"].clone();
    if let (Some(status), Value::Object(extra)) = (status.as_object_mut(), extra) {
        status.extend(extra);
    }
    let resource = ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
        "kafka.strimzi.io",
        "v1",
        object["kind"].as_str().unwrap(),
    ));
    Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &resource)
        .patch_status(
            &name(object),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": status})),
        )
        .await
        .unwrap();
}

/// Each Kafka node pod of `cluster` in `namespace` (not the entity operator's or other
/// components'), by name: its UID and its containers' restarts. A pod that was replaced or
/// restarted shows here as a different UID or a higher count.
pub async fn node_pods(
    client: &Client,
    namespace: &str,
    cluster: &str,
) -> BTreeMap<String, (String, i32)> {
    let selector = format!("strimzi.io/cluster={cluster},strimzi.io/name={cluster}-kafka");
    pods(client, namespace, &selector).await
}

/// The pods of `namespace` that `selector` (a label selector) selects, as [`node_pods`]
/// gives them.
pub async fn pods(
    client: &Client,
    namespace: &str,
    selector: &str,
) -> BTreeMap<String, (String, i32)> {
    Api::<Pod>::namespaced(client.clone(), namespace)
        .list(&ListParams::default().labels(selector))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .map(|pod| {
            let restarts = pod
                .status
                .as_ref()
                .and_then(|status| status.container_statuses.as_ref())
                .map(|statuses| statuses.iter().map(|status| status.restart_count).sum())
                .unwrap_or_default();
            (pod.name_any(), (pod.uid().unwrap(), restarts))
        })
        .collect()
}

/// The data of every Secret and ConfigMap of `namespace`, by kind and name.
pub async fn stored_data(client: &Client, namespace: &str) -> BTreeMap<String, Value> {
    let mut data = BTreeMap::new();
    for secret in Api::<Secret>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
    {
        data.insert(
            format!("Secret {}", secret.name_any()),
            serde_json::to_value(&secret.data).unwrap(),
        );
    }
    for map in Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
    {
        data.insert(
            format!("ConfigMap {}", map.name_any()),
            serde_json::to_value(&map.data).unwrap(),
        );
    }
    data
}

/// The Secrets and ConfigMaps of `before` ([`stored_data`]) whose data is different or gone
/// in `after`; those only `after` has are new, not changed.
pub fn changed_data(
    before: &BTreeMap<String, Value>,
    after: &BTreeMap<String, Value>,
) -> Vec<String> {
    before
        .iter()
        .filter(|(name, data)| after.get(*name) != Some(*data))
        .map(|(name, _)| name.clone())
        .collect()
}

/// The notes of the cluster operator's pod restart Events in `namespace`.
pub async fn restart_events(client: &Client, namespace: &str) -> Vec<String> {
    Api::<Event>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|event| event.action.as_deref() == Some("StrimziInitiatedPodRestart"))
        .map(|event| event.note.unwrap_or_default())
        .collect()
}
