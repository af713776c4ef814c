//! The objects step against a real API server: what the desired state stops having is
//! deleted by the cleanup pass, the init ClusterRoleBinding follows the listeners that need
//! it and the Kafka it was made for, and custom listener certificates reach the pods and the
//! status; a cluster Strimzi's own operator made keeps every object as it was when ours takes
//! it over.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Secret, Service};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{Api, DeleteParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_tests::resources::eventually_ok;
use support::strimzi_recorded::{OBJECT_KINDS, Recorded, STRIMZI_MANAGER};
use support::{Operator, WAIT, apply, binding_exists, cluster, names, namespace, ready};

/// The documents of `cluster(name, 1, 1)` with the Kafka's listeners extended by `extra` and
/// its spec merged with `kafka_spec`.
fn with_kafka(name: &str, extra_listeners: &[Value], kafka_spec: &Value) -> Vec<Value> {
    let mut documents = cluster(name, 1, 1);
    let kafka = documents.last_mut().unwrap();
    let spec = kafka["spec"]["kafka"].as_object_mut().unwrap();
    spec["listeners"]
        .as_array_mut()
        .unwrap()
        .extend(extra_listeners.iter().cloned());
    for (key, value) in kafka_spec.as_object().unwrap() {
        spec.insert(key.clone(), value.clone());
    }
    documents
}

async fn apply_documents(client: &Client, ns: &str, documents: &[Value]) {
    for document in documents {
        apply(client, ns, document).await;
    }
}

/// Waits until `check` holds for the names of the Services of `cluster` and the existence
/// of its init binding and JMX Secret.
async fn wait_until(
    client: &Client,
    ns: &str,
    cluster: &str,
    what: &str,
    check: impl Fn(&[String], bool, bool) -> bool,
) {
    let binding = strimzi_api::naming::kafka_init_cluster_role_binding(ns, cluster);
    let jmx = strimzi_api::naming::kafka_jmx_secret(cluster);
    let selector = format!("strimzi.io/cluster={cluster}");
    eventually_ok(what, WAIT, || async {
        let services = names::<Service>(client, ns, &selector).await;
        let secrets = names::<Secret>(client, ns, &selector).await;
        let state = (
            services,
            binding_exists(client, &binding).await,
            secrets.contains(&jmx),
        );
        if check(&state.0, state.1, state.2) {
            Ok(())
        } else {
            Err(state)
        }
    })
    .await;
}

#[tokio::test]
async fn what_is_no_longer_desired_is_deleted_and_the_init_binding_follows_its_kafka() {
    let (client, ns) = namespace("cleanup").await;
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    // A binding left by a Kafka deleted while no operator ran, and one that only looks
    // similar (its name is not the one made from its labels): the first is deleted once the
    // operator has listed the Kafkas, the second is not the operator's to delete.
    let leftover = |name: &str, cluster: &str| -> ClusterRoleBinding {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {
                "strimzi.io/cluster": cluster, "strimzi.io/kind": "Kafka",
                "strimzi.io/name": format!("{cluster}-kafka"),
            }},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "strimzi-kafka-broker"},
            "subjects": [{"kind": "ServiceAccount", "name": format!("{cluster}-kafka"), "namespace": ns}],
        }))
        .unwrap()
    };
    let orphan = strimzi_api::naming::kafka_init_cluster_role_binding(&ns, "gone");
    let lookalike = format!("{ns}-not-an-init-binding");
    for binding in [leftover(&orphan, "gone"), leftover(&lookalike, "gone")] {
        bindings
            .create(&PostParams::default(), &binding)
            .await
            .unwrap();
    }

    let _operator = Operator::on(&ns);
    let node_port = json!({"name": "np", "port": 9095, "type": "nodeport", "tls": false});
    let jmx = json!({"jmxOptions": {"authentication": {"type": "password"}}});
    apply_documents(&client, &ns, &with_kafka("tidy", &[node_port], &jmx)).await;
    ready(&client, &ns, "tidy").await;
    wait_until(
        &client,
        &ns,
        "tidy",
        "the node port Services, init binding and JMX Secret of tidy",
        |services, binding, jmx| {
            binding
                && jmx
                && services.contains(&"tidy-kafka-np-bootstrap".to_owned())
                && services
                    .iter()
                    .any(|name| name.starts_with("tidy-broker-np-"))
        },
    )
    .await;
    eventually_ok("the leftover init binding to be deleted", WAIT, || async {
        if binding_exists(&client, &orphan).await {
            Err("still there")
        } else {
            Ok(())
        }
    })
    .await;
    assert!(
        binding_exists(&client, &lookalike).await,
        "a binding not named for its labels was deleted"
    );

    // Without the node port listener and JMX authentication, their objects go. The brokers'
    // new definition waits to roll: kwok pods run no broker whose safety could be checked.
    apply_documents(&client, &ns, &with_kafka("tidy", &[], &json!({}))).await;
    support::reconciling_with(&client, &ns, "tidy", "KafkaBrokersUnreachable").await;
    wait_until(
        &client,
        &ns,
        "tidy",
        "the node port Services, init binding and JMX Secret of tidy to be deleted",
        |services, binding, jmx| {
            !binding && !jmx && !services.iter().any(|name| name.contains("-np-"))
        },
    )
    .await;
    let sets = names::<StrimziPodSet>(&client, &ns, "strimzi.io/cluster=tidy").await;
    assert_eq!(sets, ["tidy-broker", "tidy-controller"]);

    // The binding is back with the listener, and goes with the Kafka.
    let node_port = json!({"name": "np", "port": 9095, "type": "nodeport", "tls": false});
    apply_documents(&client, &ns, &with_kafka("tidy", &[node_port], &json!({}))).await;
    wait_until(
        &client,
        &ns,
        "tidy",
        "the init binding again",
        |_, binding, _| binding,
    )
    .await;
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    kafkas
        .delete("tidy", &DeleteParams::default())
        .await
        .unwrap();
    let binding = strimzi_api::naming::kafka_init_cluster_role_binding(&ns, "tidy");
    eventually_ok(
        "the init binding of the deleted Kafka to go",
        WAIT,
        || async {
            if binding_exists(&client, &binding).await {
                Err("still there")
            } else {
                Ok(())
            }
        },
    )
    .await;
    bindings
        .delete(&lookalike, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn custom_listener_certificates_roll_the_brokers_and_show_in_the_status() {
    let (client, ns) = namespace("custom-cert").await;
    let _operator = Operator::on(&ns);
    // A self-signed certificate, as a user would bring one.
    let pem = |name: &str| strimzi_tests::certs::TestCa::new(name).unwrap().cert_pem();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let write_certificate = |pem: String| {
        let secrets = secrets.clone();
        async move {
            let secret: Secret = serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "my-listener-cert"},
                "stringData": {"tls.crt": pem, "tls.key": "not checked by the operator"},
            }))
            .unwrap();
            secrets
                .patch(
                    "my-listener-cert",
                    &kube::api::PatchParams::apply("test").force(),
                    &kube::api::Patch::Apply(&secret),
                )
                .await
                .unwrap();
        }
    };
    let first = pem("first");
    write_certificate(first.clone()).await;
    let listener = json!({"name": "custom", "port": 9095, "type": "internal", "tls": true,
        "configuration": {"brokerCertChainAndKey": {
            "secretName": "my-listener-cert", "certificate": "tls.crt", "key": "tls.key"}}});
    let documents = with_kafka("custom", &[listener], &json!({}));
    apply_documents(&client, &ns, &documents).await;
    let kafka = ready(&client, &ns, "custom").await;
    let status = kafka.status.unwrap().listeners.unwrap();
    let custom = status
        .iter()
        .find(|listener| listener.name.as_deref() == Some("custom"))
        .unwrap();
    assert_eq!(custom.certificates.as_deref(), Some(&[first.clone()][..]));

    let thumbprints = || async {
        let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
        let set = sets.get("custom-broker").await.unwrap();
        set.spec.pods[0].0["metadata"]["annotations"]["strimzi.io/custom-listener-cert-thumbprints"]
            .as_str()
            .map(str::to_owned)
    };
    let before = thumbprints()
        .await
        .expect("broker pods carry the thumbprints");
    assert!(before.starts_with("{custom=") && before.len() == "{custom=}".len() + 8);

    // A new certificate in the user's Secret changes the brokers' definition; the Kafka is
    // reconciled again when its spec changes (the operator does not watch user Secrets).
    write_certificate(pem("second")).await;
    apply_documents(
        &client,
        &ns,
        &with_kafka(
            "custom",
            &[json!({"name": "custom", "port": 9095, "type": "internal", "tls": true,
                "configuration": {"brokerCertChainAndKey": {
                    "secretName": "my-listener-cert", "certificate": "tls.crt", "key": "tls.key"}}})],
            &json!({"config": {"default.replication.factor": 1, "min.insync.replicas": 1,
                "auto.create.topics.enable": false}}),
        ),
    )
    .await;
    eventually_ok("the thumbprints to change", WAIT, || async {
        let after = thumbprints().await;
        if after.as_deref().is_some_and(|after| after != before) {
            Ok(())
        } else {
            Err(after)
        }
    })
    .await;
}

/// Every object of a cluster Strimzi 1.2.0's own operator made, recreated from its recorded
/// runs of `kafka-persistent.yaml` and `kafka-ephemeral.yaml` as it made them, is left as it
/// was once our operator has taken the cluster over and made it Ready: the same object (UID)
/// with the same labels, annotations, owners, spec and data, pods included. An object ours
/// writes gets every field Strimzi's set (none is left owned by Strimzi's create alone); one
/// it does not write already holds everything ours wants. Prints how many objects differ,
/// which must be none.
#[tokio::test]
async fn a_cluster_strimzis_operator_made_keeps_every_object_as_it_was() {
    let client = support::env().client().await;
    let mut differing = Vec::new();
    for recorded in [Recorded("kafka-persistent"), Recorded("kafka-ephemeral")] {
        recorded.recreate(&client).await;
        let ns = recorded.namespace();
        support::real_nodes::all_pods_ready(
            &client,
            &ns,
            "my-cluster",
            recorded.objects("pod").len(),
        )
        .await;
        let before = live_objects(&client, recorded).await;
        let operator = Operator::on(&ns);
        ready(&client, &ns, "my-cluster").await;
        let after = live_objects(&client, recorded).await;
        operator.stop().await;
        let mut count = 0;
        for (key, object) in &before {
            let mut paths = Vec::new();
            differences(
                "",
                &comparable(object),
                &comparable(&after[key]),
                &mut paths,
            );
            // Pods are made by the pod set controller from their StrimziPodSet, never applied.
            if !key.starts_with("pod ") {
                paths.extend(
                    fields_only_strimzi_set(&after[key])
                        .into_iter()
                        .map(|path| format!("{path} (not set by ours)")),
                );
            }
            if !paths.is_empty() {
                count += 1;
                differing.push(format!("{}: {key}: {}", recorded.0, paths.join(", ")));
            }
        }
        println!(
            "{}: {count} of the {} objects Strimzi's operator made differ after the takeover",
            recorded.0,
            before.len()
        );
    }
    assert!(differing.is_empty(), "{differing:#?}");
}

/// Each object of Strimzi's recorded run as the API server has it now, by kind and name.
async fn live_objects(client: &Client, recorded: Recorded) -> BTreeMap<String, Value> {
    let namespace = recorded.namespace();
    let mut live = BTreeMap::new();
    for kind in OBJECT_KINDS.iter().chain(&["strimzipodset", "pod"]) {
        for object in recorded.objects(kind) {
            let (object, api) = support::dynamic(client, &namespace, &object);
            let name = object.name_any();
            let value = serde_json::to_value(api.get(&name).await.unwrap()).unwrap();
            live.insert(format!("{kind} {name}"), value);
        }
    }
    live
}

/// `object` without what changes on every write (resource version, generation, field
/// managers) and without its status.
fn comparable(object: &Value) -> Value {
    let mut object = object.clone();
    let metadata = object["metadata"].as_object_mut().unwrap();
    for key in ["resourceVersion", "generation", "managedFields"] {
        metadata.remove(key);
    }
    object.as_object_mut().unwrap().remove("status");
    object
}

/// The fields of `object` that Strimzi's operator set when it created it and that our
/// operator, applying as the same field manager, does not set. Empty when ours did not write
/// the object: it writes only when the object lacks something it desires.
fn fields_only_strimzi_set(object: &Value) -> Vec<String> {
    let entries = object["metadata"]["managedFields"].as_array().unwrap();
    let fields_of = |operation: &str| -> Option<BTreeSet<String>> {
        let entry = entries.iter().find(|entry| {
            entry["manager"] == STRIMZI_MANAGER
                && entry["operation"] == operation
                && entry["subresource"].as_str().is_none_or(str::is_empty)
        })?;
        let mut paths = BTreeSet::new();
        leaf_fields("", &entry["fieldsV1"], &mut paths);
        Some(paths)
    };
    let created = fields_of("Update").unwrap_or_default();
    fields_of("Apply").map_or_else(Vec::new, |applied| {
        created.difference(&applied).cloned().collect()
    })
}

/// Adds to `paths` the path of every field a managed-fields set (`fieldsV1`) below `at`
/// names.
fn leaf_fields(at: &str, fields: &Value, paths: &mut BTreeSet<String>) {
    let Some(fields) = fields.as_object() else {
        return;
    };
    if fields.keys().all(|key| key == ".") {
        paths.insert(at.to_owned());
        return;
    }
    for (key, nested) in fields {
        if key != "." {
            leaf_fields(&format!("{at}/{key}"), nested, paths);
        }
    }
}
/// Appends to `paths` the path (below `at`) of every value that differs between `before`
/// and `after`.
fn differences(at: &str, before: &Value, after: &Value, paths: &mut Vec<String>) {
    match (before, after) {
        (Value::Object(before), Value::Object(after)) => {
            let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
            for key in keys {
                differences(
                    &format!("{at}.{key}"),
                    before.get(key).unwrap_or(&Value::Null),
                    after.get(key).unwrap_or(&Value::Null),
                    paths,
                );
            }
        }
        (Value::Array(before), Value::Array(after)) if before.len() == after.len() => {
            for (index, (before, after)) in before.iter().zip(after).enumerate() {
                differences(&format!("{at}[{index}]"), before, after, paths);
            }
        }
        _ if before != after => paths.push(at.to_owned()),
        _ => {}
    }
}

/// On a cluster that serves OpenShift's Route API (here its CRD, `routes.route.openshift.io`,
/// on the test API server), the operator's discovery at start says OpenShift, and the Kafka
/// pods of persistent storage get no `fsGroup`: OpenShift gives them a security context of
/// its own, as Strimzi leaves it to OpenShift.
#[tokio::test]
async fn on_openshift_the_kafka_pods_have_no_fs_group() {
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use strimzi_cluster_operator::platform::discover;
    let (client, ns) = namespace("openshift").await;
    // No other test of this program registers the Route API.
    assert!(!discover(&client).await.unwrap().openshift);
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let routes: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "routes.route.openshift.io"},
        "spec": {
            "group": "route.openshift.io",
            "names": {"kind": "Route", "listKind": "RouteList", "plural": "routes", "singular": "route"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    }))
    .unwrap();
    crds.create(&PostParams::default(), &routes).await.unwrap();
    let platform = eventually_ok("the Route API to be served", WAIT, || async {
        let platform = discover(&client).await.map_err(|error| error.to_string())?;
        if platform.openshift {
            Ok(platform)
        } else {
            Err("route.openshift.io/v1 not in /apis".to_owned())
        }
    })
    .await;

    let mut config = support::config_for(&ns, &[]);
    config.model.platform = platform;
    let _operator = Operator::with_config(config);
    let mut documents = cluster("shift", 1, 1);
    for pool in &mut documents[..2] {
        pool["spec"]["storage"] = json!({"type": "persistent-claim", "size": "1Gi"});
    }
    apply_documents(&client, &ns, &documents).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let pods = eventually_ok("the pods of shift", WAIT, || async {
        let pods = pods
            .list(&kube::api::ListParams::default().labels("strimzi.io/cluster=shift"))
            .await
            .map_err(|error| error.to_string())?
            .items;
        if pods.len() == 2 {
            Ok(pods)
        } else {
            Err(format!("{} pods", pods.len()))
        }
    })
    .await;
    for pod in pods {
        let context = pod.spec.unwrap().security_context;
        assert_eq!(
            context.and_then(|context| context.fs_group),
            None,
            "pod {} has an fsGroup",
            pod.metadata.name.unwrap()
        );
    }
    crds.delete("routes.route.openshift.io", &DeleteParams::default())
        .await
        .unwrap();
}

/// Without OpenShift's Route API at start, a `route` listener is refused with a reason of its
/// own, as Strimzi refuses it, whatever the API server serves later.
#[tokio::test]
async fn without_the_route_api_a_route_listener_is_refused() {
    let (client, ns) = namespace("no-routes").await;
    let _operator = Operator::on(&ns);
    let route = json!({"name": "external", "port": 9094, "type": "route", "tls": true});
    apply_documents(&client, &ns, &with_kafka("routed", &[route], &json!({}))).await;
    support::not_ready_with(&client, &ns, "routed", "RouteApiUnavailable").await;
}
