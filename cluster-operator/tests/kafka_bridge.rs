//! The KafkaBridge controller against a real API server: kwok makes the bridge pods Ready,
//! the controller manager runs the Deployments and garbage-collects, and the operator runs
//! in-process. (`bridge.rs` runs a bridge for real.) A rack adds the init ClusterRoleBinding,
//! removed with the rack and when the KafkaBridge is deleted.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;
use strimzi_api::bridge::KafkaBridge;
use strimzi_api::common::Condition;
use support::{
    Health, HealthLog, Operator, apply, assert_never_degraded, binding_goes_with_the_resource,
    condition_of, health_of, namespace, wait_binding, wait_client_binding, wait_for, wait_gone,
};

async fn patch(bridges: &Api<KafkaBridge>, value: serde_json::Value) {
    bridges
        .patch("web", &PatchParams::default(), &Patch::Merge(value))
        .await
        .unwrap();
}

fn bridge_condition<'a>(bridge: &'a KafkaBridge, kind: &str) -> Option<&'a Condition> {
    condition_of(bridge.status.as_ref()?.conditions.as_ref(), kind)
}

/// Waits until the bridge is Ready for its current generation.
async fn ready(bridges: &Api<KafkaBridge>, name: &str) -> KafkaBridge {
    wait_for(
        bridges,
        name,
        &format!("KafkaBridge {name} to be Ready"),
        |bridge| {
            let bridge = bridge?;
            (bridge_condition(bridge, "Ready").is_some()
                && bridge.status.as_ref()?.observed_generation == bridge.metadata.generation)
                .then(|| bridge.clone())
        },
    )
    .await
}

/// A KafkaBridge `name` of one replica, plain HTTP and a plain bootstrap address.
fn plain_bridge(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaBridge",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "bootstrapServers": "my-cluster-kafka-bootstrap:9092",
            "http": {"port": 8080},
        },
    })
}

#[tokio::test]
async fn a_bridge_gets_its_objects_status_scale_and_pause_and_loses_them_on_deletion() {
    let (client, ns) = namespace("bridge").await;
    let operator = Operator::on(&ns);
    let bridges: Api<KafkaBridge> = Api::namespaced(client.clone(), &ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let document = json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaBridge",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "bootstrapServers": "my-cluster-kafka-bootstrap:9093",
            "tls": {"trustedCertificates": [{"secretName": "my-cluster-cluster-ca-cert", "certificate": "ca.crt"}]},
            "authentication": {"type": "scram-sha-512", "username": "web",
                               "passwordSecret": {"secretName": "web-user", "password": "password"}},
            "http": {"port": 8080},
            "logging": {"type": "external",
                        "valueFrom": {"configMapKeyRef": {"name": "web-logging", "key": "log4j2.properties"}}},
        }
    });
    let logging = "rootLogger.level = DEBUG\n";
    apply(
        &client,
        &ns,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-logging"},
                "data": {"log4j2.properties": logging}}),
    )
    .await;
    apply(&client, &ns, &document).await;

    // The Secrets it names are missing: NotReady, naming the first, and nothing applied.
    let message = wait_for(&bridges, "web", "a NotReady bridge", |bridge| {
        let condition = bridge_condition(bridge?, "NotReady")?;
        (condition.reason.as_deref() == Some("InvalidConfigurationException"))
            .then(|| condition.message.clone().unwrap_or_default())
    })
    .await;
    assert!(
        message.contains("my-cluster-cluster-ca-cert") && message.contains("does not exist"),
        "{message}"
    );
    assert!(deployments.get_opt("web-bridge").await.unwrap().is_none());

    for (name, key) in [
        ("my-cluster-cluster-ca-cert", "ca.crt"),
        ("web-user", "password"),
    ] {
        apply(
            &client,
            &ns,
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                    "stringData": {key: "value"}}),
        )
        .await;
    }
    let bridge = ready(&bridges, "web").await;
    let status = bridge.status.clone().unwrap();
    assert_eq!(
        status.url.as_deref(),
        Some(format!("http://web-bridge-service.{ns}.svc:8080").as_str())
    );
    assert_eq!(status.replicas, Some(1));
    assert_eq!(
        status.label_selector.as_deref(),
        Some("strimzi.io/cluster=web,strimzi.io/kind=KafkaBridge,strimzi.io/name=web-bridge")
    );
    let service: Api<Service> = Api::namespaced(client.clone(), &ns);
    let service = service.get("web-bridge-service").await.unwrap();
    assert_eq!(
        service.metadata.labels.as_ref().unwrap()["strimzi.io/discovery"],
        "true"
    );
    let data = Api::<ConfigMap>::namespaced(client.clone(), &ns)
        .get("web-bridge-config")
        .await
        .unwrap()
        .data
        .unwrap();
    assert!(data["application.properties"].contains("kafka.security.protocol=SASL_SSL"));
    // The trusted certificates gathered under ca.crt, read with the password through the
    // Kubernetes Secret config provider, which a Role lets the pods do; nothing mounted.
    assert!(data["application.properties"].contains(&format!(
        "kafka.ssl.truststore.certificates=${{strimzisecrets:{ns}/web-bridge-tls-trusted-certs:ca.crt}}"
    )));
    let trusted = Api::<Secret>::namespaced(client.clone(), &ns)
        .get("web-bridge-tls-trusted-certs")
        .await
        .unwrap();
    assert_eq!(trusted.data.unwrap()["ca.crt"].0, b"value\n");
    let role = Api::<Role>::namespaced(client.clone(), &ns)
        .get("web-bridge")
        .await
        .unwrap();
    assert_eq!(
        role.rules.unwrap()[0].resource_names,
        Some(vec![
            "web-bridge-tls-trusted-certs".to_owned(),
            "web-user".to_owned()
        ])
    );
    let binding = Api::<RoleBinding>::namespaced(client.clone(), &ns)
        .get("web-bridge-role")
        .await
        .unwrap();
    assert_eq!(binding.role_ref.name, "web-bridge");
    // The external logging ConfigMap's text, as it is.
    assert_eq!(data["log4j2.properties"], logging);
    Api::<ServiceAccount>::namespaced(client.clone(), &ns)
        .get("web-bridge")
        .await
        .unwrap();
    Api::<PodDisruptionBudget>::namespaced(client.clone(), &ns)
        .get("web-bridge")
        .await
        .unwrap();
    let auth_hash = |deployment: &Deployment| {
        deployment
            .spec
            .as_ref()?
            .template
            .metadata
            .as_ref()?
            .annotations
            .as_ref()?
            .get("strimzi.io/auth-hash")
            .cloned()
    };
    let first_hash = auth_hash(&deployments.get("web-bridge").await.unwrap()).unwrap();

    // A new password rolls the pods (a new hash on the pod template).
    apply(
        &client,
        &ns,
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "web-user"},
                "stringData": {"password": "changed"}}),
    )
    .await;
    // The operator notices at its next reconciliation: the spec change below triggers one.

    // The scale subresource: spec.replicas, and Ready once both pods are.
    bridges
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .unwrap();
    let bridge = ready(&bridges, "web").await;
    assert_eq!(bridge.status.unwrap().replicas, Some(2));
    let deployment = deployments.get("web-bridge").await.unwrap();
    assert_eq!(deployment.spec.as_ref().unwrap().replicas, Some(2));
    assert_ne!(auth_hash(&deployment).unwrap(), first_hash);
    let scale = bridges.get_scale("web").await.unwrap();
    assert_eq!(scale.status.unwrap().replicas, 2);

    // Paused: a spec change waits.
    patch(
        &bridges,
        json!({"metadata": {"annotations": {"strimzi.io/pause-reconciliation": "true"}},
                 "spec": {"replicas": 3}}),
    )
    .await;
    wait_for(&bridges, "web", "a paused bridge", |bridge| {
        bridge_condition(bridge?, "ReconciliationPaused").map(|_| ())
    })
    .await;
    assert_eq!(
        deployments
            .get("web-bridge")
            .await
            .unwrap()
            .spec
            .unwrap()
            .replicas,
        Some(2)
    );
    patch(
        &bridges,
        json!({"metadata": {"annotations": {"strimzi.io/pause-reconciliation": null}}}),
    )
    .await;
    ready(&bridges, "web").await;
    assert_eq!(
        deployments
            .get("web-bridge")
            .await
            .unwrap()
            .spec
            .unwrap()
            .replicas,
        Some(3)
    );

    // Deleting the bridge removes everything the operator made for it.
    bridges
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&deployments, "web-bridge", "the Deployment to go").await;
    let services: Api<Service> = Api::namespaced(client.clone(), &ns);
    wait_gone(&services, "web-bridge-service", "the Service to go").await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    wait_gone(&config_maps, "web-bridge-config", "the ConfigMap to go").await;
    // The user's Secrets stay.
    assert!(
        Api::<Secret>::namespaced(client.clone(), &ns)
            .get_opt("web-user")
            .await
            .unwrap()
            .is_some()
    );
    operator.stop().await;
}

#[tokio::test]
async fn a_rack_binds_the_bridge_pods_to_their_nodes_and_unbinds_them_when_removed() {
    let (client, ns) = namespace("bridge-rack").await;
    let operator = Operator::on(&ns);
    let mut bridge = plain_bridge("zoned");
    bridge["spec"]["rack"] = json!({"topologyKey": "topology.kubernetes.io/zone"});
    apply(&client, &ns, &bridge).await;
    let binding = format!("strimzi-{ns}-zoned-bridge-init");
    wait_client_binding(&client, &binding, "zoned-bridge").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let init_containers = |deployment: Option<&Deployment>| {
        deployment?
            .spec
            .as_ref()?
            .template
            .spec
            .as_ref()
            .map(|pod| pod.init_containers.clone().unwrap_or_default())
    };
    wait_for(
        &deployments,
        "zoned-bridge",
        "the init container",
        |deployment| {
            init_containers(deployment)?
                .iter()
                .any(|init| init.name == "kafka-init")
                .then_some(())
        },
    )
    .await;

    // The rack removed: the binding goes and so does the init container.
    bridge["spec"].as_object_mut().unwrap().remove("rack");
    apply(&client, &ns, &bridge).await;
    wait_binding(&client, &binding, false).await;
    wait_for(
        &deployments,
        "zoned-bridge",
        "no init container",
        |deployment| init_containers(deployment)?.is_empty().then_some(()),
    )
    .await;

    // The rack again, then the KafkaBridge deleted: the cleanup removes the binding.
    binding_goes_with_the_resource::<KafkaBridge>(&client, &ns, &mut bridge, "zoned", &binding)
        .await;
    operator.stop().await;
}

/// Read as tools that know Strimzi read it: a new bridge progresses, then is healthy, stays
/// healthy while its pods are replaced for a spec change (`observedGeneration` the one before
/// until they are), and is degraded once a pod of its current definition is stuck (here
/// unschedulable; an image that cannot be pulled is the same rule, on real nodes).
#[tokio::test]
async fn a_bridge_progresses_stays_healthy_while_it_rolls_and_is_degraded_while_stuck() {
    let (client, ns) = namespace("bridge-health").await;
    let operator = Operator::on(&ns);
    let bridges: Api<KafkaBridge> = Api::namespaced(client.clone(), &ns);
    let creating = HealthLog::start::<KafkaBridge>(&ns, "KafkaBridge", "web").await;
    apply(&client, &ns, &plain_bridge("web")).await;
    let created = ready(&bridges, "web").await;
    // Progressing first unless kwok made the pod ready before the first look: not asserted.
    assert_never_degraded("create", &creating.stop().await);

    let rolling = HealthLog::start::<KafkaBridge>(&ns, "KafkaBridge", "web").await;
    patch(
        &bridges,
        json!({"spec": {"template": {"pod": {"metadata": {"labels": {"example.com/rolled": "true"}}}}}}),
    )
    .await;
    let rolled = ready(&bridges, "web").await;
    assert!(rolled.metadata.generation > created.metadata.generation);
    let seen = rolling.stop().await;
    assert_never_degraded("a roll", &seen);
    assert!(
        seen.iter().all(|(health, _)| *health == Health::Healthy),
        "{seen:?}"
    );

    patch(
        &bridges,
        json!({"spec": {"template": {"pod": {"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "example.com/no-such-node", "operator": "Exists"}]},
            ]},
        }}}}}}),
    )
    .await;
    let stuck = wait_for(
        &bridges,
        "web",
        "the bridge degraded by a stuck pod",
        |bridge| {
            let bridge = bridge?;
            (health_of("KafkaBridge", bridge) == Health::Degraded).then(|| bridge.clone())
        },
    )
    .await;
    let not_ready = bridge_condition(&stuck, "NotReady").unwrap();
    assert_eq!(not_ready.reason.as_deref(), Some("WaitingForPods"));
    let message = not_ready.message.as_deref().unwrap_or_default();
    assert!(message.contains("stuck: web-bridge-"), "{message}");
    assert!(message.contains("Unschedulable"), "{message}");
    assert_eq!(
        stuck.status.as_ref().unwrap().observed_generation,
        stuck.metadata.generation,
        "a stalled reconciliation ends, as a failed one"
    );
    operator.stop().await;
}
