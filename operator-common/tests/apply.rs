//! The apply helpers against the real API server: server-side apply skipped when nothing
//! would change, fields no longer desired removed by the next apply (also inside associative
//! lists, with the API server's defaults causing no writes), other managers' fields kept,
//! every write counted, and owned objects no longer wanted deleted by label
//! ([`strimzi_operator_common::sync`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Secret, Service};
use kube::api::{ListParams, ObjectMeta, Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_operator_common::apply::{Applied, Applier};
use strimzi_operator_common::metrics::Metrics;
use strimzi_operator_common::sync::{Listed, ObjectSync, SyncedObject};

fn config_map(namespace: &str, name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                "strimzi.io/cluster".to_owned(),
                "c".to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("key".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn applies_only_changes_and_deletes_what_is_no_longer_wanted() {
    let (client, namespace) = support::namespace("apply").await;
    let metrics = Metrics::new().unwrap();
    let applier = Applier::new(client.clone(), "test-operator", metrics.clone());
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);

    let first = config_map(&namespace, "first", "1");
    assert_eq!(applier.apply(&first, None).await.unwrap(), Applied::Written);
    assert_eq!(
        applier.apply(&first, None).await.unwrap(),
        Applied::Unchanged
    );
    let current = maps.get("first").await.unwrap();
    assert_eq!(
        applier.apply(&first, Some(&current)).await.unwrap(),
        Applied::Unchanged
    );
    assert!(
        current
            .managed_fields()
            .iter()
            .any(|entry| entry.manager.as_deref() == Some("test-operator"))
    );
    let changed = config_map(&namespace, "first", "2");
    assert_eq!(
        applier.apply(&changed, Some(&current)).await.unwrap(),
        Applied::Written
    );
    assert_eq!(maps.get("first").await.unwrap().data.unwrap()["key"], "2");
    assert_eq!(metrics.writes("ConfigMap", "apply"), 2);

    // The sync: what the selector lists and is not desired goes; what another owner
    // labels, whatever its name, is never listed and so never deleted.
    for name in ["second", "third"] {
        applier
            .apply(&config_map(&namespace, name, "1"), None)
            .await
            .unwrap();
    }
    let mut foreign = config_map(&namespace, "fourth", "1");
    foreign.metadata.labels = Some(BTreeMap::from([(
        "strimzi.io/cluster".to_owned(),
        "other".to_owned(),
    )]));
    applier.apply(&foreign, None).await.unwrap();
    let listed: Listed<ConfigMap> =
        Listed::list(&client, [namespace.as_str()], "strimzi.io/cluster=c")
            .await
            .unwrap();
    let desired = [
        config_map(&namespace, "first", "2"),
        config_map(&namespace, "fifth", "1"),
    ];
    let mut sync = ObjectSync::new(&applier);
    sync.apply(&desired, &listed).await.unwrap();
    sync.prune(&listed, &desired).await.unwrap();
    let report = sync.finish();
    let names = |objects: &[SyncedObject]| -> Vec<String> {
        objects.iter().map(|object| object.name.clone()).collect()
    };
    assert_eq!(names(&report.written), ["fifth"], "first was unchanged");
    assert_eq!(names(&report.deleted), ["second", "third"]);
    assert_eq!(metrics.writes("ConfigMap", "delete"), 2);
    let left: Vec<String> = maps
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter(|map| map.metadata.deletion_timestamp.is_none())
        .map(ResourceExt::name_any)
        .collect();
    // The namespace's `kube-root-ca.crt`, which nothing of ours labels, stays too.
    assert_eq!(left, ["fifth", "first", "fourth", "kube-root-ca.crt"]);
}

/// Applies `desired` (a document of kind `K`) with `applier`, comparing with the live object
/// read first: `Written` or `Unchanged`.
async fn apply_json<K: strimzi_operator_common::apply::Applicable>(
    applier: &Applier,
    desired: serde_json::Value,
) -> Applied {
    let desired: K = serde_json::from_value(desired).unwrap();
    applier.apply(&desired, None).await.unwrap()
}

/// The live object `name` of kind `K` as JSON, with our apply entry's `fieldsV1` printed.
async fn live<K: strimzi_operator_common::apply::Applicable>(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> serde_json::Value {
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let object = api.get(name).await.unwrap();
    for entry in object.managed_fields() {
        eprintln!(
            "{} {name}: {:?} {:?} {:?}: {}",
            K::kind(&()),
            entry.manager,
            entry.operation,
            entry.subresource,
            entry
                .fields_v1
                .as_ref()
                .map(|fields| fields.0.clone())
                .unwrap_or_default()
        );
    }
    serde_json::to_value(object).unwrap()
}

#[tokio::test]
async fn removed_labels_annotations_and_keys_are_removed_and_others_fields_kept() {
    let (client, namespace) = support::namespace("apply-removals").await;
    let metrics = Metrics::new().unwrap();
    let applier = Applier::new(client.clone(), "test-operator", metrics.clone());
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let document = |keys: &[&str], labels: &[&str], annotations: &[&str]| {
        let pairs = |names: &[&str]| -> serde_json::Map<String, serde_json::Value> {
            names
                .iter()
                .map(|name| ((*name).to_owned(), json!(format!("{name}-value"))))
                .collect()
        };
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "map",
                "namespace": namespace,
                "labels": pairs(labels),
                "annotations": pairs(annotations),
            },
            "data": pairs(keys),
        })
    };
    let writes = || metrics.writes("ConfigMap", "apply");

    let all = document(&["a", "b"], &["l1", "l2"], &["n1", "n2"]);
    assert_eq!(
        apply_json::<ConfigMap>(&applier, all.clone()).await,
        Applied::Written
    );
    assert_eq!(
        apply_json::<ConfigMap>(&applier, all.clone()).await,
        Applied::Unchanged
    );
    assert_eq!(writes(), 1);

    // Another manager adds a label and a key: ours are unchanged, no write.
    maps.patch(
        "map",
        &PatchParams::apply("someone-else"),
        &Patch::Apply(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"labels": {"theirs": "x"}},
            "data": {"c": "theirs"},
        })),
    )
    .await
    .unwrap();
    assert_eq!(
        apply_json::<ConfigMap>(&applier, all.clone()).await,
        Applied::Unchanged
    );
    let current = maps.get("map").await.unwrap();
    let desired: ConfigMap = serde_json::from_value(all.clone()).unwrap();
    assert_eq!(
        applier.apply(&desired, Some(&current)).await.unwrap(),
        Applied::Unchanged
    );
    assert_eq!(writes(), 1);

    // Key b, label l2 and annotation n2 dropped: one write, and they are gone.
    let fewer = document(&["a"], &["l1"], &["n1"]);
    assert_eq!(
        apply_json::<ConfigMap>(&applier, fewer.clone()).await,
        Applied::Written
    );
    assert_eq!(writes(), 2);
    let map = live::<ConfigMap>(&client, &namespace, "map").await;
    assert_eq!(map["data"], json!({"a": "a-value", "c": "theirs"}));
    assert_eq!(
        map["metadata"]["labels"],
        json!({"l1": "l1-value", "theirs": "x"})
    );
    assert_eq!(map["metadata"]["annotations"], json!({"n1": "n1-value"}));
    assert_eq!(
        apply_json::<ConfigMap>(&applier, fewer.clone()).await,
        Applied::Unchanged
    );

    // The same decision from a cached copy that kept only our applied fields.
    let mut cached = maps.get("map").await.unwrap();
    strimzi_operator_common::apply::keep_applied_fields(&mut cached.metadata, "test-operator");
    assert_eq!(cached.managed_fields().len(), 1);
    let fewer_map: ConfigMap = serde_json::from_value(fewer).unwrap();
    assert_eq!(
        applier
            .apply_cached(&fewer_map, Some(&cached))
            .await
            .unwrap(),
        Applied::Unchanged
    );
    let only_a = document(&["a"], &[], &[]);
    let only_a: ConfigMap = serde_json::from_value(only_a).unwrap();
    assert_eq!(
        applier.apply_cached(&only_a, Some(&cached)).await.unwrap(),
        Applied::Written
    );
    assert_eq!(writes(), 3);
    let map = maps.get("map").await.unwrap();
    assert_eq!(
        map.labels(),
        &BTreeMap::from([("theirs".to_owned(), "x".to_owned())])
    );
    assert!(map.annotations().is_empty());

    // With no apply entry of ours (a copy without managedFields), only the values decide.
    let mut stripped = map.clone();
    stripped.metadata.managed_fields = None;
    let keys_only: ConfigMap = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "map", "namespace": namespace},
    }))
    .unwrap();
    assert_eq!(
        applier
            .apply_cached(&keys_only, Some(&stripped))
            .await
            .unwrap(),
        Applied::Unchanged
    );
    assert_eq!(writes(), 3);
}

#[tokio::test]
async fn fields_dropped_from_list_elements_are_removed_and_defaults_cause_no_writes() {
    let (client, namespace) = support::namespace("apply-lists").await;
    let metrics = Metrics::new().unwrap();
    let applier = Applier::new(client.clone(), "test-operator", metrics.clone());

    // A Service: ports keyed by port and protocol (protocol left to its default), selector
    // owned whole.
    let service = |ports: serde_json::Value, selector: serde_json::Value| {
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "service", "namespace": namespace},
            "spec": {"ports": ports, "selector": selector},
        })
    };
    let two_ports = json!([
        {"name": "plain", "port": 9092, "targetPort": 9092},
        {"name": "tls", "port": 9093, "targetPort": 9093, "appProtocol": "kafka"},
    ]);
    let selector = json!({"app": "kafka", "tier": "broker"});
    let full = service(two_ports.clone(), selector.clone());
    assert_eq!(
        apply_json::<Service>(&applier, full.clone()).await,
        Applied::Written
    );
    assert_eq!(
        apply_json::<Service>(&applier, full.clone()).await,
        Applied::Unchanged
    );
    let without_app_protocol = service(
        json!([
            {"name": "plain", "port": 9092, "targetPort": 9092},
            {"name": "tls", "port": 9093, "targetPort": 9093},
        ]),
        selector.clone(),
    );
    assert_eq!(
        apply_json::<Service>(&applier, without_app_protocol.clone()).await,
        Applied::Written
    );
    let live_service = live::<Service>(&client, &namespace, "service").await;
    assert_eq!(live_service["spec"]["ports"][1].get("appProtocol"), None);
    assert_eq!(live_service["spec"]["ports"][1]["protocol"], "TCP");
    assert_eq!(
        apply_json::<Service>(&applier, without_app_protocol).await,
        Applied::Unchanged
    );
    let one_key = service(
        json!([
            {"name": "plain", "port": 9092, "targetPort": 9092},
            {"name": "tls", "port": 9093, "targetPort": 9093},
        ]),
        json!({"app": "kafka"}),
    );
    assert_eq!(
        apply_json::<Service>(&applier, one_key.clone()).await,
        Applied::Written
    );
    let live_service = live::<Service>(&client, &namespace, "service").await;
    assert_eq!(live_service["spec"]["selector"], json!({"app": "kafka"}));
    assert_eq!(
        apply_json::<Service>(&applier, one_key).await,
        Applied::Unchanged
    );
    let one_port = service(
        json!([{"name": "plain", "port": 9092, "targetPort": 9092}]),
        json!({"app": "kafka"}),
    );
    assert_eq!(
        apply_json::<Service>(&applier, one_port.clone()).await,
        Applied::Written
    );
    let live_service = live::<Service>(&client, &namespace, "service").await;
    assert_eq!(live_service["spec"]["ports"].as_array().unwrap().len(), 1);
    assert_eq!(
        apply_json::<Service>(&applier, one_port).await,
        Applied::Unchanged
    );
    assert_eq!(metrics.writes("Service", "apply"), 4);

    // A Deployment's pod template: containers keyed by name, their env by name, ports by
    // containerPort and protocol; the API server fills many defaults into fields we do not set.
    let deployment = |env: serde_json::Value, labels: serde_json::Value, limits: bool| {
        let mut resources = json!({"requests": {"memory": "64Mi", "cpu": "100m"}});
        if limits {
            resources["limits"] = json!({"memory": "128Mi"});
        }
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "deployment", "namespace": namespace},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "example.com/main:1",
                                "env": env,
                                "ports": [{"containerPort": 8080, "name": "http"}],
                                "resources": resources,
                            },
                            {"name": "sidecar", "image": "example.com/sidecar:1"},
                        ],
                        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "kafka"}],
                    },
                },
            },
        })
    };
    let env = json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]);
    let labels = json!({"app": "d", "extra": "yes"});
    let full = deployment(env.clone(), labels.clone(), true);
    assert_eq!(
        apply_json::<Deployment>(&applier, full.clone()).await,
        Applied::Written
    );
    assert_eq!(
        apply_json::<Deployment>(&applier, full).await,
        Applied::Unchanged
    );
    let fewer = deployment(
        json!([{"name": "A", "value": "1"}]),
        json!({"app": "d"}),
        false,
    );
    assert_eq!(
        apply_json::<Deployment>(&applier, fewer.clone()).await,
        Applied::Written
    );
    let live_deployment = live::<Deployment>(&client, &namespace, "deployment").await;
    let template = &live_deployment["spec"]["template"];
    assert_eq!(template["metadata"]["labels"], json!({"app": "d"}));
    let main = &template["spec"]["containers"][0];
    assert_eq!(main["env"], json!([{"name": "A", "value": "1"}]));
    assert_eq!(main["resources"].get("limits"), None);
    assert_eq!(
        apply_json::<Deployment>(&applier, fewer).await,
        Applied::Unchanged
    );
    assert_eq!(metrics.writes("Deployment", "apply"), 2);
}

#[tokio::test]
async fn pod_set_templates_secrets_and_claims_follow_the_desired_state() {
    let (client, namespace) = support::namespace("apply-kinds").await;
    let metrics = Metrics::new().unwrap();
    let applier = Applier::new(client.clone(), "test-operator", metrics.clone());

    // A StrimziPodSet: its pods are a list without keys, owned whole; a template label and
    // an environment variable dropped from one pod are removed.
    let pod_set = |labels: serde_json::Value, env: serde_json::Value| {
        json!({
            "apiVersion": "core.strimzi.io/v1",
            "kind": "StrimziPodSet",
            "metadata": {"name": "set", "namespace": namespace, "labels": {"strimzi.io/cluster": "c"}},
            "spec": {
                "selector": {"matchLabels": {"strimzi.io/cluster": "c"}},
                "pods": [{
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "set-0", "labels": labels},
                    "spec": {"containers": [{"name": "kafka", "image": "kafka:1", "env": env}]},
                }],
            },
        })
    };
    let labels = json!({"strimzi.io/cluster": "c", "extra": "yes"});
    let env = json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]);
    let full = pod_set(labels, env);
    assert_eq!(
        apply_json::<StrimziPodSet>(&applier, full.clone()).await,
        Applied::Written
    );
    assert_eq!(
        apply_json::<StrimziPodSet>(&applier, full).await,
        Applied::Unchanged
    );
    let fewer = pod_set(
        json!({"strimzi.io/cluster": "c"}),
        json!([{"name": "A", "value": "1"}]),
    );
    assert_eq!(
        apply_json::<StrimziPodSet>(&applier, fewer.clone()).await,
        Applied::Written
    );
    let set = live::<StrimziPodSet>(&client, &namespace, "set").await;
    let pod = &set["spec"]["pods"][0];
    assert_eq!(
        pod["metadata"]["labels"],
        json!({"strimzi.io/cluster": "c"})
    );
    assert_eq!(
        pod["spec"]["containers"][0]["env"],
        json!([{"name": "A", "value": "1"}])
    );
    assert_eq!(
        apply_json::<StrimziPodSet>(&applier, fewer).await,
        Applied::Unchanged
    );
    assert_eq!(metrics.writes("StrimziPodSet", "apply"), 2);

    // A Secret: a dropped key is removed.
    let secret = |keys: &[&str]| {
        let data: serde_json::Map<String, serde_json::Value> = keys
            .iter()
            .map(|key| ((*key).to_owned(), json!("dmFsdWU=")))
            .collect();
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "secret", "namespace": namespace},
            "type": "Opaque",
            "data": data,
        })
    };
    assert_eq!(
        apply_json::<Secret>(&applier, secret(&["ca.crt", "ca.key"])).await,
        Applied::Written
    );
    assert_eq!(
        apply_json::<Secret>(&applier, secret(&["ca.crt", "ca.key"])).await,
        Applied::Unchanged
    );
    assert_eq!(
        apply_json::<Secret>(&applier, secret(&["ca.crt"])).await,
        Applied::Written
    );
    let live_secret = live::<Secret>(&client, &namespace, "secret").await;
    assert_eq!(live_secret["data"], json!({"ca.crt": "dmFsdWU="}));
    assert_eq!(
        apply_json::<Secret>(&applier, secret(&["ca.crt"])).await,
        Applied::Unchanged
    );

    // A claim, bound by the provisioner, which adds annotations, a volume name and a status
    // of its own: no write while ours is unchanged; a dropped label is removed.
    let claim = |labels: serde_json::Value| {
        json!({
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "claim", "namespace": namespace, "labels": labels},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "storageClassName": "standard",
            },
        })
    };
    let labels = json!({"strimzi.io/cluster": "c", "extra": "yes"});
    assert_eq!(
        apply_json::<PersistentVolumeClaim>(&applier, claim(labels.clone())).await,
        Applied::Written
    );
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &namespace);
    support::eventually(support::WAIT, "the claim bound", || async {
        claims
            .get("claim")
            .await
            .unwrap()
            .status
            .and_then(|status| status.phase)
            .as_deref()
            == Some("Bound")
    })
    .await;
    assert_eq!(
        apply_json::<PersistentVolumeClaim>(&applier, claim(labels)).await,
        Applied::Unchanged
    );
    let one_label = claim(json!({"strimzi.io/cluster": "c"}));
    assert_eq!(
        apply_json::<PersistentVolumeClaim>(&applier, one_label.clone()).await,
        Applied::Written
    );
    let live_claim = live::<PersistentVolumeClaim>(&client, &namespace, "claim").await;
    assert_eq!(
        live_claim["metadata"]["labels"],
        json!({"strimzi.io/cluster": "c"})
    );
    assert_eq!(
        apply_json::<PersistentVolumeClaim>(&applier, one_label).await,
        Applied::Unchanged
    );
    assert_eq!(metrics.writes("PersistentVolumeClaim", "apply"), 2);
}
