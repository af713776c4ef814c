//! The objects step against a real API server: what the desired state stops having is
//! deleted by the cleanup pass, the init ClusterRoleBinding follows the listeners that need
//! it and the Kafka it was made for, and custom listener certificates reach the pods and the
//! status.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use k8s_openapi::api::core::v1::{Secret, Service};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_tests::resources::{WAIT, eventually_ok};
use support::{Operator, apply, binding_exists, cluster, names, namespace, ready};

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

    // Without the node port listener and JMX authentication, their objects go.
    apply_documents(&client, &ns, &with_kafka("tidy", &[], &json!({}))).await;
    ready(&client, &ns, "tidy").await;
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
