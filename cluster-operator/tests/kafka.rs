//! The Kafka reconciler against a real API server: kwok makes the pods Ready, the
//! controller manager garbage-collects, and the operator runs in-process.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_operator_common::config::OPERATION_TIMEOUT_MS;
use strimzi_tests::resources::eventually;
use support::rolls::pod_uids;
use support::{
    Health, HealthLog, Operator, apply, assert_never_degraded, assert_progress_shown, cluster,
    condition, force, health_of, merge_patch, names, namespace, not_ready_with, ready,
    ready_within, reconciling_with, wait_for, wait_for_within,
};

/// Starts a reconciliation of the Kafka `name` now, by changing an annotation of the Kafka
/// (as `kubectl annotate --overwrite` would). What these tests annotate to ask for work (a CA
/// Secret's `strimzi.io/force-renew`, a pod's `strimzi.io/manual-rolling-update`) is read by
/// the Kafka's next reconciliation, and nothing watched changes with it: as in Strimzi, that
/// is the periodic one (2 minutes here), unless one is under way anyway.
async fn reconcile_now(client: &Client, ns: &str, name: &str) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nudge = NEXT.fetch_add(1, Ordering::Relaxed).to_string();
    let nudge = json!({"metadata": {"annotations": {"example.com/nudge": nudge}}});
    merge_patch::<Kafka>(client, ns, name, nudge).await;
}

async fn apply_all(client: &Client, ns: &str, documents: &[Value]) {
    for document in documents {
        apply(client, ns, document).await;
    }
}

/// The node IDs of each pool as its status reports them.
async fn pool_node_ids(client: &Client, ns: &str) -> BTreeMap<String, Vec<i32>> {
    let pools: Api<KafkaNodePool> = Api::namespaced(client.clone(), ns);
    pools
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|pool| {
            let ids = pool
                .status
                .clone()
                .and_then(|s| s.node_ids)
                .unwrap_or_default();
            (pool.name_any(), ids)
        })
        .collect()
}

/// Checks the objects a Ready cluster must have: one StrimziPodSet per pool, a Ready pod,
/// a ConfigMap and a certificate Secret per node, the entity operator's and Kafka Exporter's
/// Deployments when asked for, the bootstrap and brokers Services, the
/// CA Secrets, and the pool statuses.
async fn assert_expected_objects(client: &Client, ns: &str, kafka: &Kafka) {
    let name = kafka.name_any();
    let selector = format!("strimzi.io/cluster={name}");
    let pools: Api<KafkaNodePool> = Api::namespaced(client.clone(), ns);
    let pools: Vec<KafkaNodePool> = pools
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items;
    let mut expected_pods = Vec::new();
    for pool in &pools {
        let status = pool.status.clone().expect("pool status");
        let ids = status.node_ids.clone().unwrap_or_default();
        assert_eq!(
            ids.len() as i32,
            pool.spec.replicas,
            "{}: {status:?}",
            pool.name_any()
        );
        assert_eq!(status.cluster_id, kafka.status.as_ref().unwrap().cluster_id);
        assert!(
            status
                .label_selector
                .unwrap()
                .contains("strimzi.io/pool-name=")
        );
        for id in ids {
            expected_pods.push(format!("{name}-{}-{id}", pool.name_any()));
        }
    }
    expected_pods.sort();
    let pod_sets = names::<StrimziPodSet>(client, ns, &selector).await;
    let mut expected_sets: Vec<String> = pools
        .iter()
        .map(|pool| format!("{name}-{}", pool.name_any()))
        .collect();
    expected_sets.sort();
    assert_eq!(pod_sets, expected_sets);
    let node_pods = format!("{selector},strimzi.io/name={name}-kafka");
    assert_eq!(names::<Pod>(client, ns, &node_pods).await, expected_pods);
    // The components the Kafka asks for run next to the nodes (Ready waited for them).
    let mut expected_deployments = Vec::new();
    if kafka
        .spec
        .entity_operator
        .as_ref()
        .is_some_and(|eo| eo.topic_operator.is_some() || eo.user_operator.is_some())
    {
        expected_deployments.push(format!("{name}-entity-operator"));
    }
    if kafka.spec.kafka_exporter.is_some() {
        expected_deployments.push(format!("{name}-kafka-exporter"));
    }
    if kafka.spec.cruise_control.is_some() {
        expected_deployments.push(format!("{name}-cruise-control"));
    }
    expected_deployments.sort();
    assert_eq!(
        names::<k8s_openapi::api::apps::v1::Deployment>(client, ns, &selector).await,
        expected_deployments
    );
    let config_maps = names::<ConfigMap>(client, ns, &selector).await;
    let secrets = names::<Secret>(client, ns, &selector).await;
    for pod in &expected_pods {
        assert!(
            config_maps.contains(pod),
            "ConfigMap {pod} in {config_maps:?}"
        );
        assert!(secrets.contains(pod), "Secret {pod} in {secrets:?}");
    }
    for secret in [
        "cluster-ca-cert",
        "cluster-ca",
        "clients-ca-cert",
        "clients-ca",
        "cluster-operator-certs",
    ] {
        let secret = format!("{name}-{secret}");
        assert!(secrets.contains(&secret), "{secret} in {secrets:?}");
    }
    let services = names::<Service>(client, ns, &selector).await;
    for service in [
        format!("{name}-kafka-bootstrap"),
        format!("{name}-kafka-brokers"),
    ] {
        assert!(services.contains(&service), "{service} in {services:?}");
    }
    let status = kafka.status.as_ref().unwrap();
    assert!(status.cluster_id.as_ref().is_some_and(|id| id.len() == 22));
    assert!(status.kafka_version.is_some());
    assert!(status.kafka_metadata_version.is_some());
    assert!(status.operator_last_successful_version.is_some());
    let listeners = status.listeners.clone().unwrap_or_default();
    assert_eq!(listeners.len(), kafka.spec.kafka.listeners.len());
}

/// Applies every document of `file` except the kinds the cluster operator does not manage.
async fn apply_example(client: &Client, ns: &str, file: &Path) -> Option<String> {
    let mut kafka = None;
    for document in support::documents(file) {
        let kind = document["kind"].as_str().unwrap_or_default().to_owned();
        if !["Kafka", "KafkaNodePool", "ConfigMap", "Secret"].contains(&kind.as_str()) {
            continue;
        }
        if kind == "Kafka" {
            kafka = document["metadata"]["name"].as_str().map(str::to_owned);
            for secret in custom_certificate_secrets(&document) {
                apply(client, ns, &secret).await;
            }
            // The namespaces the entity operator is to watch exist, as its user makes sure.
            for operator in ["topicOperator", "userOperator"] {
                if let Some(watched) =
                    document["spec"]["entityOperator"][operator]["watchedNamespace"].as_str()
                {
                    support::apply(
                        client,
                        ns,
                        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": watched}}),
                    )
                    .await;
                }
            }
        }
        apply(client, ns, &document).await;
    }
    kafka
}

/// The Secrets with custom listener certificates (`brokerCertChainAndKey`) a Kafka document
/// refers to, as its user would create them: a self-signed certificate under the
/// certificate key, a placeholder under the key's (the operator only passes it on).
fn custom_certificate_secrets(kafka: &Value) -> Vec<Value> {
    let listeners = kafka["spec"]["kafka"]["listeners"].as_array().cloned();
    listeners
        .unwrap_or_default()
        .iter()
        .filter_map(|listener| {
            let source = &listener["configuration"]["brokerCertChainAndKey"];
            let name = source["secretName"].as_str()?;
            let certificate = strimzi_tests::certs::TestCa::new(name).unwrap().cert_pem();
            Some(json!({
                "apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                "stringData": {
                    source["certificate"].as_str()?: certificate,
                    source["key"].as_str()?: "placeholder key",
                },
            }))
        })
        .collect()
}

/// Why an example cannot become Ready in this environment, if it cannot: it needs an ingress
/// controller, OpenShift Routes or Gateway API TLSRoutes, or nodes or StorageClasses the
/// environment does not have. (The environment gives LoadBalancer Services addresses.)
fn not_ready_here(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).unwrap();
    for kind in ["route", "tlsroute", "ingress"] {
        if text.contains(&format!("type: {kind}")) {
            return Some(format!("a `{kind}` listener"));
        }
    }
    // Zones a node affinity requires: the list items after `key: topology.kubernetes.io/zone`.
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    for (index, line) in lines.iter().enumerate() {
        if line.trim_start_matches("- ") != "key: topology.kubernetes.io/zone" {
            continue;
        }
        let required = lines[index + 1..]
            .iter()
            .take(4)
            .filter_map(|line| line.strip_prefix("- "))
            .find(|zone| !strimzi_tests::environment::ZONES.contains(zone));
        if let Some(zone) = required {
            return Some(format!("nodes in zone {zone}"));
        }
    }
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("class: "))
        .find(|class| !strimzi_tests::environment::STORAGE_CLASSES.contains(class))
        .map(|class| format!("StorageClass {class}"))
}

#[tokio::test]
async fn every_kafka_example_reaches_ready_with_the_expected_objects() {
    use strimzi_tests::reference::{own_examples_dir, reference_examples_dir, yaml_files};
    let client = support::env().client().await;
    let only = std::env::var("EXAMPLE").unwrap_or_default();
    let files: Vec<_> = yaml_files(&reference_examples_dir().join("kafka"))
        .into_iter()
        .chain(yaml_files(&own_examples_dir().join("kafka")))
        .filter(|file| file.display().to_string().contains(&only))
        .collect();
    assert!(!files.is_empty(), "no examples found");
    let runs = files.iter().map(|file| {
        let client = client.clone();
        async move {
            let ns = support::env().namespace("example").await;
            // Some examples' entity operators watch namespaces of their own.
            let operator = Operator::on_with(
                &ns,
                &[(
                    strimzi_cluster_operator::config::ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED,
                    "true",
                )],
            );
            let name = apply_example(&client, &ns, file).await.expect("a Kafka");
            let outcome = match not_ready_here(file) {
                None => {
                    let kafka = ready_within(&client, &ns, &name, EXAMPLE_WAIT).await;
                    assert_expected_objects(&client, &ns, &kafka).await;
                    "Ready".to_owned()
                }
                Some(missing) if !missing.contains("listener") => {
                    // The pods wait for volumes or nodes the environment does not have: the
                    // operator has done its part once every pod exists.
                    let expected: i64 = support::documents(file)
                        .iter()
                        .filter(|document| document["kind"] == "KafkaNodePool")
                        .filter_map(|document| document["spec"]["replicas"].as_i64())
                        .sum();
                    let selector = format!("strimzi.io/cluster={name}");
                    eventually(&format!("the pods of {name}"), EXAMPLE_WAIT, || async {
                        names::<Pod>(&client, &ns, &selector).await.len() as i64 >= expected
                    })
                    .await;
                    format!("not Ready here (needs {missing}): its {expected} pods exist")
                }
                Some(missing) => {
                    // The operator goes as far as the environment allows and says why not:
                    // what it waits for (a load balancer address), or what failed (no Route
                    // API).
                    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
                    let waiting = wait_for_within(
                        &kafkas,
                        &name,
                        "Reconciling or NotReady",
                        EXAMPLE_WAIT,
                        |kafka| {
                            let kafka = kafka?;
                            let failed = condition(kafka, "NotReady")
                                .filter(|failed| failed.reason.as_deref() != Some("Creating"));
                            condition(kafka, "Reconciling").or(failed).cloned()
                        },
                    )
                    .await;
                    format!(
                        "not Ready here (needs {missing}): {}: {}",
                        waiting.reason.unwrap_or_default(),
                        waiting.message.unwrap_or_default()
                    )
                }
            };
            operator.stop().await;
            format!("{}: {outcome}", file.display())
        }
    });
    // A few at a time: each example waits up to `WAIT` for its own cluster. Twenty
    // clusters' CA keys at once (on the cores the real-node lane also uses) kept the last
    // ones waiting longer than that, and six at once, beside the real lane's Kafka nodes,
    // starved the API server until calls timed out (504) and one example's reconciliation
    // took six minutes. Four at once did the same in a CI run of 2026-11-30 (load average
    // 58 on two cores while the real lane rolled Kafka nodes): one reconciliation took over
    // ten minutes, its CA step 149 s of it waiting for a blocking thread.
    let mut outcomes: Vec<String> = futures::stream::iter(runs)
        .buffer_unordered(EXAMPLES_AT_ONCE)
        .collect()
        .await;
    outcomes.sort();
    for outcome in outcomes {
        println!("{outcome}");
    }
}

/// How many examples [`every_kafka_example_reaches_ready_with_the_expected_objects`] runs at
/// once.
const EXAMPLES_AT_ONCE: usize = 2;

/// How long each example may take. Longer than the other tests' [`support::WAIT`]: in a CI
/// run of 2026-11-30, two at a time, one example's first reconciliation took 620 s with 13 s
/// of its own work; the rest was waiting for the API server and for the key generation of
/// the other tests, on a host at 2.00 of 2 cores beside the real-node lane.
const EXAMPLE_WAIT: std::time::Duration = std::time::Duration::from_secs(900);

#[tokio::test]
async fn pools_scale_up_and_down_following_the_node_id_annotations() {
    let (client, ns) = namespace("scale").await;
    let operator = Operator::on(&ns);
    let creating = HealthLog::start::<Kafka>(&ns, "Kafka", "scaled").await;
    apply_all(&client, &ns, &cluster("scaled", 3, 3)).await;
    ready(&client, &ns, "scaled").await;
    let created = creating.stop().await;
    assert_never_degraded("create", &created);
    assert_progress_shown("create", &created);
    assert!(
        created
            .iter()
            .any(|(health, conditions)| *health == Health::Progressing
                && conditions.contains("NotReady/Creating")),
        "Strimzi's NotReady Creating while being deployed: {created:?}"
    );
    assert_eq!(
        pool_node_ids(&client, &ns).await,
        BTreeMap::from([
            ("broker".to_owned(), vec![0, 1, 2]),
            ("controller".to_owned(), vec![3, 4, 5]),
        ])
    );

    let pools: Api<KafkaNodePool> = Api::namespaced(client.clone(), &ns);
    // A Ready cluster stays Ready while it grows.
    let scaling_up = HealthLog::start::<Kafka>(&ns, "Kafka", "scaled").await;
    pools
        .patch(
            "broker",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"annotations": {"strimzi.io/next-node-ids": "[10-19]"}},
                "spec": {"replicas": 4},
            })),
        )
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    wait_for(&pods, "scaled-broker-10", "the new broker pod", |pod| {
        pod.filter(|pod| strimzi_cluster_operator::pod_set::is_ready(pod))
            .map(|_| ())
    })
    .await;
    ready(&client, &ns, "scaled").await;
    wait_for(&pools, "broker", "the pool status after scale up", |pool| {
        (pool?.status.as_ref()?.node_ids.as_ref()? == &vec![0, 1, 2, 10]).then_some(())
    })
    .await;
    let scaled_up = scaling_up.stop().await;
    assert_never_degraded("scale-up", &scaled_up);
    assert!(
        scaled_up
            .iter()
            .all(|(health, _)| *health == Health::Healthy),
        "Ready throughout: {scaled_up:?}"
    );

    pools
        .patch(
            "broker",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"annotations": {"strimzi.io/remove-node-ids": "[1]"}},
                "spec": {"replicas": 3},
            })),
        )
        .await
        .unwrap();
    // Whether broker 1 still holds partition replicas cannot be asked of kwok pods: the
    // removal is refused until the Kafka says to skip the check.
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let refused = wait_for(&kafkas, "scaled", "the scale-down to be refused", |kafka| {
        let condition = condition(kafka?, "NotReady")?;
        (condition.reason.as_deref() == Some("InvalidResourceException")).then(|| condition.clone())
    })
    .await;
    let message = refused.message.unwrap_or_default();
    assert!(
        message.starts_with("Cannot scale down brokers [1]: ")
            && message.contains("strimzi.io/skip-broker-scaledown-check"),
        "{message}"
    );
    assert!(pods.get_opt("scaled-broker-1").await.unwrap().is_some());
    // A refused scale-down is a failure the user must act on: Degraded.
    assert_eq!(
        health_of("Kafka", &kafkas.get("scaled").await.unwrap()),
        Health::Degraded
    );
    let scaling_down = HealthLog::start::<Kafka>(&ns, "Kafka", "scaled").await;
    kafkas
        .patch(
            "scaled",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {
                "strimzi.io/skip-broker-scaledown-check": "true",
            }}})),
        )
        .await
        .unwrap();
    wait_for(&pods, "scaled-broker-1", "broker 1 to be removed", |pod| {
        pod.is_none().then_some(())
    })
    .await;
    wait_for(
        &pools,
        "broker",
        "the pool status after scale down",
        |pool| (pool?.status.as_ref()?.node_ids.as_ref()? == &vec![0, 2, 10]).then_some(()),
    )
    .await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    wait_for(
        &config_maps,
        "scaled-broker-1",
        "the ConfigMap of broker 1 to go",
        |cm| cm.is_none().then_some(()),
    )
    .await;
    ready(&client, &ns, "scaled").await;
    let scaled_down = scaling_down.stop().await;
    assert_never_degraded("scale-down", &scaled_down);
    // The removal is reported as a Normal Event about the pod.
    eventually(
        "a Normal Event about the removed pod",
        support::WAIT,
        || async {
            events(&client, &ns, "Normal", "Pod", "scaled-broker-1")
                .await
                .iter()
                .any(|event| event.contains("PodRemoved"))
        },
    )
    .await;
    operator.stop().await;
}

/// The message of the Kafka's `NotReady` condition when its reason is
/// `InvalidResourceException`.
fn refusal(kafka: &Kafka) -> Option<String> {
    let condition = condition(kafka, "NotReady")?;
    (condition.reason.as_deref() == Some("InvalidResourceException"))
        .then(|| condition.message.clone().unwrap_or_default())
}

/// Waits until the Kafka `name` is refused with a message `accepted` takes, failing at once
/// should the pod or the claim of the broker being removed go in the meantime.
async fn refused_while_kept(
    client: &Client,
    ns: &str,
    name: &str,
    (pod, claim): (&str, &str),
    accepted: impl Fn(&str) -> bool,
) -> String {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), ns);
    let deadline = std::time::Instant::now() + support::WAIT;
    loop {
        let kept = |object: Option<ObjectMeta>| {
            object.is_some_and(|object| object.deletion_timestamp.is_none())
        };
        assert!(
            kept(pods.get_opt(pod).await.unwrap().map(|pod| pod.metadata)),
            "the pod {pod} went though the scale-down check could not run"
        );
        assert!(
            kept(
                claims
                    .get_opt(claim)
                    .await
                    .unwrap()
                    .map(|claim| claim.metadata)
            ),
            "the claim {claim} went though the scale-down check could not run"
        );
        let kafka = kafkas.get(name).await.unwrap();
        if let Some(message) = refusal(&kafka).filter(|message| accepted(message)) {
            return message;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no refusal of the scale-down"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// A running cluster's controllers do not change while its quorum cannot be read (the kwok
/// pods run no Kafka): a bigger controller pool is refused, and neither its StrimziPodSet nor
/// any node's configuration changes.
#[tokio::test]
async fn a_controller_change_is_refused_while_the_quorum_cannot_be_read() {
    let (client, ns) = namespace("voters").await;
    let operator = Operator::on(&ns);
    let documents = cluster("voters", 1, 1);
    apply_all(&client, &ns, &documents).await;
    ready(&client, &ns, "voters").await;
    let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    let controllers_before = sets.get("voters-controller").await.unwrap().spec.pods.len();
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let broker_config = || async {
        config_maps
            .get("voters-broker-0")
            .await
            .ok()
            .and_then(|map| map.data?.get("server.config").cloned())
    };
    let before = broker_config().await;
    assert!(before.is_some(), "the broker's ConfigMap");
    merge_patch::<KafkaNodePool>(&client, &ns, "controller", json!({"spec": {"replicas": 3}}))
        .await;
    let message = not_ready_with(&client, &ns, "voters", "ControllerScalingRefused").await;
    assert!(
        message.contains("running [1], desired [1, 2, 3]")
            && message.contains("the metadata quorum cannot be read"),
        "{message}"
    );
    assert_eq!(
        sets.get("voters-controller").await.unwrap().spec.pods.len(),
        controllers_before,
        "a controller was added to a quorum that could not be read"
    );
    assert_eq!(
        broker_config().await,
        before,
        "a node's configuration changed"
    );
    operator.stop().await;
}

#[tokio::test]
async fn a_scale_down_is_refused_while_the_operator_certificate_secret_is_missing() {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    let (client, ns) = namespace("certless").await;
    let operator = Operator::on(&ns);
    let mut documents = cluster("certless", 1, 2);
    documents[1]["spec"]["storage"] = json!({
        "type": "persistent-claim", "size": "1Gi", "class": "standard", "deleteClaim": true,
    });
    // Valid with one broker too, so that nothing but the check stands in the way.
    documents[2]["spec"]["kafka"]["config"] =
        json!({"default.replication.factor": 1, "min.insync.replicas": 1});
    apply_all(&client, &ns, &documents).await;
    ready(&client, &ns, "certless").await;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
    let claim = names::<PersistentVolumeClaim>(&client, &ns, "")
        .await
        .into_iter()
        .find(|claim| claim.ends_with("-broker-1"))
        .expect("the claim of broker 1");
    assert!(claims.get_opt(&claim).await.unwrap().is_some());

    // Paused, the operator neither sees the Secret go nor puts it back: the Secret is missing
    // when the scale-down is reconciled.
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let pause = |value: Value| {
        Patch::Merge(
            json!({"metadata": {"annotations": {"strimzi.io/pause-reconciliation": value}}}),
        )
    };
    kafkas
        .patch("certless", &PatchParams::default(), &pause(json!("true")))
        .await
        .unwrap();
    wait_for(&kafkas, "certless", "ReconciliationPaused", |kafka| {
        condition(kafka?, "ReconciliationPaused").map(|_| ())
    })
    .await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let saved = secrets
        .get("certless-cluster-operator-certs")
        .await
        .unwrap();
    secrets
        .delete("certless-cluster-operator-certs", &DeleteParams::default())
        .await
        .unwrap();
    wait_for(
        &secrets,
        "certless-cluster-operator-certs",
        "the Secret to go",
        |secret| secret.is_none().then_some(()),
    )
    .await;
    let pools: Api<KafkaNodePool> = Api::namespaced(client.clone(), &ns);
    pools
        .patch(
            "broker",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    kafkas
        .patch("certless", &PatchParams::default(), &pause(Value::Null))
        .await
        .unwrap();

    let removed = ("certless-broker-1", claim.as_str());
    let message = refused_while_kept(&client, &ns, "certless", removed, |message| {
        message.starts_with("Cannot scale down brokers [1]: ")
    })
    .await;
    assert!(
        message.contains("certless-cluster-operator-certs")
            && message.contains("is missing")
            && message.contains("strimzi.io/skip-broker-scaledown-check"),
        "{message}"
    );
    // The refusal stands: retried, it refuses again, and the broker stays.
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let again = refused_while_kept(&client, &ns, "certless", removed, |_| true).await;
    assert_eq!(again, message);
    assert!(
        secrets
            .get_opt("certless-cluster-operator-certs")
            .await
            .unwrap()
            .is_none(),
        "nothing was applied"
    );

    // Once the Secret is back, the check runs: it asks the brokers (which kwok pods cannot
    // answer) and still refuses, now for that reason.
    let mut restored = saved.clone();
    restored.metadata = ObjectMeta {
        name: saved.metadata.name.clone(),
        labels: saved.metadata.labels.clone(),
        annotations: saved.metadata.annotations.clone(),
        owner_references: saved.metadata.owner_references.clone(),
        ..ObjectMeta::default()
    };
    secrets
        .create(&Default::default(), &restored)
        .await
        .unwrap();
    let checked = refused_while_kept(&client, &ns, "certless", removed, |message| {
        !message.contains("is missing")
    })
    .await;
    assert!(
        checked.starts_with("Cannot scale down brokers [1]: whether they still hold partition replicas cannot be checked ("),
        "{checked}"
    );
    operator.stop().await;
}

#[tokio::test]
async fn pause_then_a_spec_change_updates_config_maps_and_the_revision_on_resume() {
    let (client, ns) = namespace("pause").await;
    let operator = Operator::on(&ns);
    apply_all(&client, &ns, &cluster("paused", 1, 1)).await;
    ready(&client, &ns, "paused").await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    let revision = |set: &StrimziPodSet| {
        set.spec.pods[0]
            .get("metadata")
            .and_then(|meta| meta.get("annotations"))
            .and_then(|annotations| annotations.get("strimzi.io/revision"))
            .cloned()
    };
    let config_before = config_maps.get("paused-broker-0").await.unwrap().data;
    let revision_before = revision(&sets.get("paused-broker").await.unwrap());

    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let pause = |value: Value| {
        Patch::Merge(
            json!({"metadata": {"annotations": {"strimzi.io/pause-reconciliation": value}}}),
        )
    };
    kafkas
        .patch("paused", &PatchParams::default(), &pause(json!("true")))
        .await
        .unwrap();
    wait_for(&kafkas, "paused", "ReconciliationPaused", |kafka| {
        condition(kafka?, "ReconciliationPaused").map(|_| ())
    })
    .await;
    kafkas
        .patch(
            "paused",
            &PatchParams::default(),
            // A Kafka option (which reaches the node's configuration, not its pod: the
            // configuration hash covers plugin options and addresses only, as Strimzi's does)
            // and a pod label (which changes the pod's revision).
            &Patch::Merge(json!({"spec": {"kafka": {
                "config": {"log.retention.hours": 12},
                "template": {"pod": {"metadata": {"labels": {"example.com/resumed": "true"}}}},
            }}})),
        )
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(
        config_maps.get("paused-broker-0").await.unwrap().data,
        config_before
    );

    let pods_before = pod_uids(&client, &ns, "paused").await;
    kafkas
        .patch("paused", &PatchParams::default(), &pause(Value::Null))
        .await
        .unwrap();
    // The new revision rolls the broker, which waits: kwok pods run no broker, so the safety
    // checks cannot run and no ready pod restarts (the restarts are tested on real nodes).
    let waiting = reconciling_with(&client, &ns, "paused", UNREACHABLE).await;
    assert!(waiting.contains("paused-broker-0"), "{waiting}");
    // Paused, it had no `Ready`; working on it again, it progresses.
    let kafka = kafkas.get("paused").await.unwrap();
    assert_eq!(health_of("Kafka", &kafka), Health::Progressing);
    assert_eq!(pod_uids(&client, &ns, "paused").await, pods_before);
    let config_after = config_maps
        .get("paused-broker-0")
        .await
        .unwrap()
        .data
        .unwrap();
    assert!(config_after["server.config"].contains("log.retention.hours=12"));
    assert_ne!(
        revision(&sets.get("paused-broker").await.unwrap()),
        revision_before
    );
    operator.stop().await;
}

/// An invalid spec through the whole controller: `NotReady` with a reason, not retried with
/// backoff, and its fix picked up. Which specs are refused, with which reason and message,
/// and that nothing but the CAs is written, is tested against a mock API in
/// `src/kafka/decisions.rs` (no node pools, brokers without controllers, a reserved config
/// provider alias).
#[tokio::test]
async fn invalid_specs_end_not_ready_with_a_reason() {
    let (client, ns) = namespace("invalid").await;
    let operator = Operator::on(&ns);
    // Brokers without any controller.
    let mut brokers_only = cluster("no-controllers", 1, 1);
    brokers_only.remove(0);
    apply_all(&client, &ns, &brokers_only).await;
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let not_ready = wait_for(&kafkas, "no-controllers", "NotReady", |kafka| {
        condition(kafka?, "NotReady").cloned()
    })
    .await;
    assert!(
        not_ready
            .reason
            .as_ref()
            .is_some_and(|reason| !reason.is_empty())
    );
    assert!(
        not_ready
            .message
            .as_ref()
            .is_some_and(|message| !message.is_empty())
    );
    println!(
        "no-controllers: {:?}: {:?}",
        not_ready.reason, not_ready.message
    );
    // An invalid spec is not retried with backoff: its failures, however many events (the
    // operator's own writes to pools and status, late on a loaded machine) wake it, are
    // scheduled again only for the periodic reconciliation (2 minutes here). The controller
    // counts every failure it schedules again after a backoff delay.
    let reconciliations = operator.runtime.metrics().reconciliations("Kafka", &ns, "");
    assert!(reconciliations.failed_count() >= 1);
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    assert_eq!(
        reconciliations.retried_count(),
        0,
        "retried an invalid spec"
    );
    // ...and the change that cures it is picked up.
    let fixed = cluster("no-controllers", 1, 1);
    apply(&client, &ns, &fixed[0]).await;
    ready(&client, &ns, "no-controllers").await;
    operator.stop().await;
}

/// Warning Events about the Kafka `name` in `ns`.
async fn kafka_warning_events(client: &Client, ns: &str, name: &str) -> Vec<String> {
    events(client, ns, "Warning", "Kafka", name).await
}

/// Events of `type` about the object of `kind` named `name` in `ns`, as `reason: note`, found
/// as Strimzi's documentation has users find the operator's Events: by their reporting
/// controller, `strimzi.io/cluster-operator`.
async fn events(client: &Client, ns: &str, r#type: &str, kind: &str, name: &str) -> Vec<String> {
    use k8s_openapi::api::events::v1::Event;
    let events: Api<Event> = Api::namespaced(client.clone(), ns);
    events
        .list(&ListParams::default().fields("reportingController=strimzi.io/cluster-operator"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|event| event.type_.as_deref() == Some(r#type))
        .filter(|event| {
            event.regarding.as_ref().is_some_and(|regarding| {
                regarding.kind.as_deref() == Some(kind) && regarding.name.as_deref() == Some(name)
            })
        })
        .map(|event| format!("{:?}: {:?}", event.reason, event.note))
        .collect()
}

#[tokio::test]
async fn pods_not_ready_are_progress_not_failure_and_a_fix_is_picked_up_at_once() {
    let (client, ns) = namespace("pending").await;
    let operator = Operator::on(&ns);
    let reconciliations = operator.runtime.metrics().reconciliations("Kafka", &ns, "");
    // The brokers require a node label no kwok node has: their pods stay Pending.
    let mut documents = cluster("waiting", 1, 1);
    let broker_pool = documents[1].clone();
    documents[1]["spec"]["template"] = json!({"pod": {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "example.com/no-such-node", "operator": "Exists"}]},
        ]},
    }}}});
    apply_all(&client, &ns, &documents).await;
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let not_ready = wait_for(
        &kafkas,
        "waiting",
        "NotReady, waiting for the pods",
        |kafka| {
            let kafka = kafka?;
            let not_ready = condition(kafka, "NotReady")?;
            let unschedulable = not_ready
                .message
                .as_deref()
                .is_some_and(|message| message.contains("Unschedulable"));
            (not_ready.reason.as_deref() == Some("WaitingForPods")
                && unschedulable
                && condition(kafka, "Ready").is_none()
                && kafka.status.as_ref()?.observed_generation == kafka.metadata.generation)
                .then(|| not_ready.clone())
        },
    )
    .await;
    let message = not_ready.message.unwrap_or_default();
    assert!(message.contains("waiting-broker"), "{message}");
    assert_eq!(not_ready.status.as_deref(), Some("True"));
    // A pod stuck on its current definition waits for the user: a failure to tools, as a bad
    // image is (the same stuck-pod rule, tested with a real image pull on real nodes).
    assert_eq!(
        health_of("Kafka", &kafkas.get("waiting").await.unwrap()),
        Health::Degraded
    );
    // It keeps looking (requeued after a few seconds), and that is no failure. (Counted from
    // here: a Kafka created with its pools may meet an empty pool cache once before.)
    let started_before = reconciliations.started_count();
    let failed_before = reconciliations.failed_count();
    let warnings_before = kafka_warning_events(&client, &ns, "waiting").await;
    eventually("two more reconciliations", support::WAIT, || async {
        reconciliations.started_count() >= started_before + 2
    })
    .await;
    assert_eq!(
        reconciliations.failed_count(),
        failed_before,
        "failed reconciliations while waiting for pods"
    );
    let warnings = kafka_warning_events(&client, &ns, "waiting").await;
    assert_eq!(warnings, warnings_before, "Warning Events while waiting");
    let kafka = kafkas.get("waiting").await.unwrap();
    assert_eq!(
        condition(&kafka, "NotReady").and_then(|c| c.reason.as_deref()),
        Some("WaitingForPods")
    );

    // The fix: the pool without the impossible affinity. The stuck pods of the old definition
    // are replaced at the next reconciliation, not after the operation timeout (5 minutes).
    let fixed = std::time::Instant::now();
    let fixing = HealthLog::start::<Kafka>(&ns, "Kafka", "waiting").await;
    apply(&client, &ns, &broker_pool).await;
    let kafka = ready(&client, &ns, "waiting").await;
    // Replacing the stuck pods is the operator's own work: progress, the Kafka still being
    // deployed.
    assert_never_degraded("the fix", &fixing.stop().await);
    let took = fixed.elapsed();
    println!("Ready {took:?} after the fix");
    assert!(
        took < std::time::Duration::from_secs(150),
        "Ready only {took:?} after the fix"
    );
    assert!(condition(&kafka, "NotReady").is_none());
    let pods = names::<Pod>(&client, &ns, "strimzi.io/cluster=waiting").await;
    assert_eq!(pods.len(), 2, "{pods:?}");
    assert_eq!(reconciliations.failed_count(), 0, "failed reconciliations");
    let warnings = kafka_warning_events(&client, &ns, "waiting").await;
    assert!(warnings.is_empty(), "Warning Events: {warnings:?}");
    operator.stop().await;
}

#[tokio::test]
async fn an_operator_stopped_mid_reconcile_converges_after_restart_without_duplicates() {
    let (client, ns) = namespace("restart").await;
    let operator = Operator::on(&ns);
    apply_all(&client, &ns, &cluster("restarted", 3, 3)).await;
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    // Stopped as soon as the first objects exist, long before the cluster is Ready.
    let cluster_id = wait_for(&kafkas, "restarted", "the cluster ID", |kafka| {
        kafka?.status.as_ref()?.cluster_id.clone()
    })
    .await;
    operator.stop().await;

    let operator = Operator::on(&ns);
    let kafka = ready(&client, &ns, "restarted").await;
    assert_eq!(
        kafka.status.as_ref().unwrap().cluster_id.as_ref(),
        Some(&cluster_id)
    );
    assert_expected_objects(&client, &ns, &kafka).await;
    let pods = names::<Pod>(&client, &ns, "strimzi.io/cluster=restarted").await;
    assert_eq!(pods.len(), 6, "{pods:?}");

    // Nothing changed: another reconciliation, which must have run, writes nothing.
    let writes_before: u64 = write_count(&operator);
    let reconciliations = operator.runtime.metrics().reconciliations("Kafka", &ns, "");
    let succeeded_before = reconciliations.succeeded_count();
    kafkas
        .patch(
            "restarted",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"example.com/touched": "1"}}})),
        )
        .await
        .unwrap();
    eventually(
        "a reconciliation after the touch",
        support::WAIT,
        || async { reconciliations.succeeded_count() > succeeded_before },
    )
    .await;
    assert_eq!(
        write_count(&operator),
        writes_before,
        "writes of a no-op reconciliation"
    );
    operator.stop().await;
}

fn write_count(operator: &Operator) -> u64 {
    [
        "Kafka",
        "KafkaNodePool",
        "StrimziPodSet",
        "Pod",
        "Service",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "PersistentVolumeClaim",
    ]
    .iter()
    .flat_map(|kind| {
        ["apply", "status", "delete", "create"].map(|verb| operator.writes(kind, verb))
    })
    .sum()
}

#[tokio::test]
async fn deleting_the_kafka_lets_the_garbage_collector_remove_everything() {
    let (client, ns) = namespace("gc").await;
    let operator = Operator::on(&ns);
    apply_all(&client, &ns, &cluster("collected", 1, 1)).await;
    ready(&client, &ns, "collected").await;
    operator.stop().await;
    // The StrimziPodSets (and so the pods) belong to the node pools, as the model makes
    // them; the rest to the Kafka.
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    kafkas
        .delete("collected", &DeleteParams::foreground())
        .await
        .unwrap();
    let pools: Api<KafkaNodePool> = Api::namespaced(client.clone(), &ns);
    for pool in ["broker", "controller"] {
        pools
            .delete(pool, &DeleteParams::foreground())
            .await
            .unwrap();
    }
    let selector = "strimzi.io/cluster=collected";
    let started = std::time::Instant::now();
    loop {
        let left = [
            names::<StrimziPodSet>(&client, &ns, selector).await,
            names::<Pod>(&client, &ns, selector).await,
            names::<Service>(&client, &ns, selector).await,
            names::<ConfigMap>(&client, &ns, selector).await,
            names::<Secret>(&client, &ns, selector).await,
        ]
        .concat();
        if left.is_empty() {
            break;
        }
        if started.elapsed() > std::time::Duration::from_secs(90) {
            let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
            let owners: Vec<_> = sets
                .list(&ListParams::default())
                .await
                .unwrap()
                .items
                .into_iter()
                .map(|set| (set.name_any(), set.metadata.owner_references))
                .collect();
            let pools = names::<KafkaNodePool>(&client, &ns, selector).await;
            panic!("left behind: {left:?}; pools {pools:?}; pod set owners {owners:#?}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

#[tokio::test]
async fn a_volume_grows_in_place_a_smaller_size_is_only_a_warning_and_another_type_is_refused() {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    let (client, ns) = namespace("volumes").await;
    let operator = Operator::on(&ns);
    let mut documents = cluster("grown", 1, 1);
    documents[1]["spec"]["storage"] =
        json!({"type": "persistent-claim", "size": "1Gi", "class": "standard"});
    apply_all(&client, &ns, &documents).await;
    ready(&client, &ns, "grown").await;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
    let listed = claims.list(&Default::default()).await.unwrap();
    let names: Vec<String> = listed.iter().map(ResourceExt::name_any).collect();
    assert_eq!(names.len(), 1, "one claim, the broker's: {names:?}");
    let claim_name = names[0].as_str();
    let before = claims.get(claim_name).await.unwrap();
    let request = |claim: &PersistentVolumeClaim| {
        claim
            .spec
            .as_ref()
            .and_then(|spec| spec.resources.as_ref())
            .and_then(|resources| resources.requests.as_ref())
            .and_then(|requests| requests.get("storage"))
            .map(|quantity| quantity.0.clone())
            .unwrap_or_default()
    };
    assert_eq!(request(&before), "1Gi");

    // Grown: the claim's request changes, and nothing else of its spec.
    documents[1]["spec"]["storage"]["size"] = json!("2Gi");
    apply(&client, &ns, &documents[1]).await;
    eventually("the claim grown to 2Gi", support::WAIT, || async {
        request(&claims.get(claim_name).await.unwrap()) == "2Gi"
    })
    .await;
    let grown = claims.get(claim_name).await.unwrap();
    let mut expected = before.spec.clone().unwrap();
    expected
        .resources
        .get_or_insert_with(Default::default)
        .requests
        .get_or_insert_with(Default::default)
        .insert(
            "storage".to_owned(),
            k8s_openapi::apimachinery::pkg::api::resource::Quantity("2Gi".to_owned()),
        );
    assert_eq!(grown.spec.unwrap(), expected, "only the request changed");

    // Shrunk: a KafkaStorage warning, and the claim stays as it is.
    documents[1]["spec"]["storage"]["size"] = json!("1Gi");
    apply(&client, &ns, &documents[1]).await;
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    wait_for(&kafkas, "grown", "a KafkaStorage warning", |kafka| {
        storage_warning(kafka, "cannot shrink")
    })
    .await;
    assert_eq!(request(&claims.get(claim_name).await.unwrap()), "2Gi");

    // Another type: refused with a warning naming it. The pool keeps its storage: its
    // StrimziPodSet (annotation and pods) and the claim stay as they are, so that the broker
    // does not restart on an empty volume.
    let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    let set_before = sets.get("grown-broker").await.unwrap();
    documents[1]["spec"]["storage"] = json!({"type": "ephemeral"});
    apply(&client, &ns, &documents[1]).await;
    let refused = wait_for(
        &kafkas,
        "grown",
        "the storage type change refused",
        |kafka| storage_warning(kafka, "cannot change as desired"),
    )
    .await;
    assert!(
        refused.message.as_deref().unwrap_or_default().contains(
            "KafkaNodePool broker cannot change as desired: the storage type would change from \
             persistent-claim to ephemeral"
        ),
        "{refused:?}"
    );
    let set_after = sets.get("grown-broker").await.unwrap();
    assert_eq!(set_after.annotations(), set_before.annotations());
    assert_eq!(set_after.spec, set_before.spec, "the pods are as they were");
    assert_eq!(request(&claims.get(claim_name).await.unwrap()), "2Gi");
    operator.stop().await;
}

/// The Kafka's `KafkaStorage` warning condition whose message contains `text`.
fn storage_warning(kafka: Option<&Kafka>, text: &str) -> Option<strimzi_api::common::Condition> {
    kafka?
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|condition| {
            condition.reason.as_deref() == Some("KafkaStorage")
                && condition
                    .message
                    .as_deref()
                    .is_some_and(|message| message.contains(text))
        })
        .cloned()
}

/// The hosts of the listener `name` in the Kafka's `status.listeners`, sorted, and its
/// `bootstrapServers`.
fn listener_hosts(kafka: &Kafka, name: &str) -> Option<(Vec<String>, String)> {
    let listener = kafka
        .status
        .as_ref()?
        .listeners
        .as_ref()?
        .iter()
        .find(|listener| listener.name.as_deref() == Some(name))?;
    let mut hosts: Vec<String> = listener
        .addresses
        .iter()
        .flatten()
        .filter_map(|address| address.host.clone())
        .collect();
    hosts.sort();
    Some((
        hosts,
        listener.bootstrap_servers.clone().unwrap_or_default(),
    ))
}

#[tokio::test]
async fn a_per_broker_load_balancer_address_reaches_the_listener_status_within_seconds() {
    use std::time::{Duration, Instant};
    let (client, ns) = namespace("lb").await;
    let operator = Operator::on(&ns);
    // A loadbalancer listener without a bootstrap Service: its bootstrap addresses, in
    // `status.listeners`, are the addresses of the per-broker Services, which belong to the
    // broker pool, not to the Kafka.
    let mut documents = cluster("balanced", 1, 2);
    documents[2]["spec"]["kafka"]["listeners"]
        .as_array_mut()
        .unwrap()
        .push(json!({
            "name": "lb", "port": 9095, "type": "loadbalancer", "tls": false,
            "configuration": {"createBootstrapService": false},
        }));
    apply_all(&client, &ns, &documents).await;
    // The environment gives LoadBalancer Services addresses (198.51.100.x) as a cloud would,
    // so the cluster becomes Ready with those.
    let kafka = ready(&client, &ns, "balanced").await;
    let (initial, _) = listener_hosts(&kafka, "lb").unwrap();
    assert_eq!(initial.len(), 2, "{initial:?}");
    assert!(
        initial.iter().all(|host| host.starts_with("198.51.100.")),
        "{initial:?}"
    );
    let pools: Api<KafkaNodePool> = Api::namespaced(client.clone(), &ns);
    let broker_ids = pools
        .get("broker")
        .await
        .unwrap()
        .status
        .and_then(|status| status.node_ids)
        .unwrap();
    assert_eq!(broker_ids.len(), 2, "{broker_ids:?}");

    // Settled: no reconciliation starts for 2 s, so that the one the patches below cause is
    // not one that was coming anyway.
    let reconciliations = operator.runtime.metrics().reconciliations("Kafka", &ns, "");
    let mut started = reconciliations.started_count();
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let now = reconciliations.started_count();
        if now == started {
            break;
        }
        started = now;
    }

    // The load balancers get new addresses (re-provisioned, as a cloud may do). 203.0.113.x
    // is a documentation network that nothing here uses (machines of this kind have
    // 192.0.2.0/24 on an interface of their own); only the Services' status is written, no
    // packet goes there.
    let services: Api<Service> = Api::namespaced(client.clone(), &ns);
    let mut expected = Vec::new();
    for id in &broker_ids {
        let address = format!("203.0.113.{}", id + 1);
        let status = json!({"status": {"loadBalancer": {"ingress": [{"ip": address}]}}});
        services
            .patch_status(
                &strimzi_api::naming::per_node_service("balanced", "broker", "lb", *id),
                &PatchParams::default(),
                &Patch::Merge(&status),
            )
            .await
            .unwrap();
        expected.push(address);
    }
    let patched = Instant::now();
    expected.sort();

    // Nothing else brings the Kafka up for reconciliation soon: it is Ready, so its next
    // periodic reconciliation is 96 to 120 s away (the tests' interval, 120 s, less up to a
    // fifth), and the recheck of addresses not yet assigned (10 s) only follows a
    // reconciliation that found some missing. Seeing the new addresses within 60 s of the
    // last patch therefore shows that the per-broker Services' status changes woke the
    // Kafka through its watch (the Services are mapped by their cluster label, though owned
    // by the node pool). A check of that mechanism, not a performance figure: the bound
    // only has to stay below the timers it tells apart, and leaves a loaded machine room
    // (7 s ran out in a CI run with 16 API-server tests side by side).
    const BOUND: Duration = Duration::from_secs(60);
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let seen = loop {
        let kafka = kafkas.get("balanced").await.unwrap();
        let hosts = listener_hosts(&kafka, "lb");
        if hosts.as_ref().is_some_and(|(hosts, _)| hosts == &expected) {
            break hosts.unwrap();
        }
        assert!(
            patched.elapsed() < BOUND,
            "status.listeners still {hosts:?} {:?} after the addresses changed to {expected:?}",
            patched.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    println!(
        "new addresses in status.listeners {:?} after the last patch",
        patched.elapsed()
    );
    let (_, bootstrap_servers) = seen;
    for address in &expected {
        assert!(
            bootstrap_servers.contains(&format!("{address}:9095")),
            "{bootstrap_servers}"
        );
    }
    operator.stop().await;
}

/// The pods restarted for a manual rolling update, from the operator's Normal Events.
async fn manual_restarts(client: &Client, ns: &str, pods: &[&str]) -> Vec<usize> {
    let mut counts = Vec::new();
    for pod in pods {
        let events = events(client, ns, "Normal", "Pod", pod).await;
        counts.push(
            events
                .iter()
                .filter(|event| event.starts_with("Some(\"ManualRollingUpdate\")"))
                .count(),
        );
    }
    counts
}

/// The reason of the `Reconciling` condition while a roll waits because the brokers cannot be
/// reached for its safety checks: kwok pods run no broker. Progress until the operation
/// timeout (a restarting broker is unreachable for a while), as Strimzi's roller retries.
const UNREACHABLE: &str = "KafkaBrokersUnreachable";

/// A manual rolling update is taken from the pod, or passed from the StrimziPodSet to each of
/// its pods; the restarts then wait, since kwok pods run no broker whose safety could be
/// checked: nothing restarts, the Kafka says what waits and why, with a Warning Event. The
/// restart decision is unit-tested in `rolling` (with a healthy cluster's checks); the
/// restarts themselves (each pod once, the annotation gone from its new incarnation) need
/// real nodes, whose test of them is still to come (issue 36).
#[tokio::test]
async fn a_manual_rolling_update_waits_for_the_safety_checks_of_unreachable_brokers() {
    let (client, ns) = namespace("manual").await;
    // Waiting this long without a change counts as stalled (5 minutes by default).
    let operator = Operator::on_with(&ns, &[(OPERATION_TIMEOUT_MS, "20000")]);
    apply_all(&client, &ns, &cluster("manual", 1, 2)).await;
    ready(&client, &ns, "manual").await;
    let before = pod_uids(&client, &ns, "manual").await;
    assert_eq!(before.len(), 3, "{before:?}");
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let annotate = Patch::Merge(json!({"metadata": {"annotations": {
        "strimzi.io/manual-rolling-update": "true",
    }}}));
    let annotated = |pod: &Pod| {
        pod.annotations()
            .contains_key("strimzi.io/manual-rolling-update")
    };

    // On a pod: that pod waits, and keeps its annotation.
    pods.patch("manual-broker-1", &PatchParams::default(), &annotate)
        .await
        .unwrap();
    reconcile_now(&client, &ns, "manual").await;
    let waiting = reconciling_with(&client, &ns, "manual", UNREACHABLE).await;
    assert!(
        waiting.contains("manual-broker-1")
            && !waiting.contains("manual-broker-0")
            && waiting.contains("cannot be reached"),
        "{waiting}"
    );
    assert!(annotated(&pods.get("manual-broker-1").await.unwrap()));

    // On a StrimziPodSet: passed to each of its pods and cleared from the set.
    let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    sets.patch("manual-broker", &PatchParams::default(), &annotate)
        .await
        .unwrap();
    wait_for(
        &sets,
        "manual-broker",
        "the annotation passed to the pods",
        |set| {
            (!set?
                .annotations()
                .contains_key("strimzi.io/manual-rolling-update"))
            .then_some(())
        },
    )
    .await;
    assert!(annotated(&pods.get("manual-broker-0").await.unwrap()));
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    wait_for(&kafkas, "manual", "both brokers waiting", |kafka| {
        let message = condition(kafka?, "Reconciling")?.message.as_deref()?;
        (message.contains("manual-broker-0") && message.contains("manual-broker-1")).then_some(())
    })
    .await;

    // Nothing restarted, and the Kafka says why in a Warning Event.
    assert_eq!(pod_uids(&client, &ns, "manual").await, before);
    let controller = before
        .keys()
        .find(|name| name.starts_with("manual-controller-"))
        .unwrap();
    assert_eq!(
        manual_restarts(
            &client,
            &ns,
            &[controller, "manual-broker-0", "manual-broker-1"]
        )
        .await,
        [0, 0, 0]
    );
    let warnings = kafka_warning_events(&client, &ns, "manual").await;
    assert!(
        warnings.iter().any(|event| event.contains(UNREACHABLE)),
        "{warnings:?}"
    );

    // Waiting unchanged for the operation timeout, the roll counts as stalled, as Strimzi's
    // reconciliation fails on its timeout: NotReady with the reason, the generation written.
    let message = not_ready_with(&client, &ns, "manual", UNREACHABLE).await;
    assert!(message.contains("manual-broker-1"), "{message}");
    let kafka = kafkas.get("manual").await.unwrap();
    assert_eq!(health_of("Kafka", &kafka), Health::Degraded);
    assert!(condition(&kafka, "Ready").is_none());
    assert_eq!(
        kafka.status.as_ref().unwrap().observed_generation,
        kafka.metadata.generation
    );
    operator.stop().await;
}

/// The `(cert, key)` generations of the cluster CA's Secrets and whether either still has a
/// force annotation.
async fn cluster_ca_state(client: &Client, ns: &str, cluster: &str) -> (String, String, bool) {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    let cert = secrets
        .get(&format!("{cluster}-cluster-ca-cert"))
        .await
        .unwrap();
    let key = secrets.get(&format!("{cluster}-cluster-ca")).await.unwrap();
    let annotation = |secret: &Secret, name: &str| secret.annotations().get(name).cloned();
    let forced = annotation(&cert, "strimzi.io/force-renew").is_some()
        || annotation(&key, "strimzi.io/force-replace").is_some();
    (
        annotation(&cert, "strimzi.io/ca-cert-generation").unwrap_or_default(),
        annotation(&key, "strimzi.io/ca-key-generation").unwrap_or_default(),
        forced,
    )
}

#[tokio::test]
async fn a_forced_ca_renewal_or_key_replacement_happens_once_and_its_annotation_goes() {
    let (client, ns) = namespace("forced").await;
    // The rolls wait for brokers kwok pods do not run: longer than this test may take under
    // load before that wait counts as stalled (the operation timeout, tested on its own in
    // the manual rolling update's test).
    let operator = Operator::on_with(&ns, &[(OPERATION_TIMEOUT_MS, "3600000")]);
    apply_all(&client, &ns, &cluster("forced", 1, 1)).await;
    ready(&client, &ns, "forced").await;
    assert_eq!(
        cluster_ca_state(&client, &ns, "forced").await,
        ("0".to_owned(), "0".to_owned(), false)
    );
    for (secret, annotation, expected) in [
        (
            "forced-cluster-ca-cert",
            "strimzi.io/force-renew",
            ("1", "0"),
        ),
        ("forced-cluster-ca", "strimzi.io/force-replace", ("2", "1")),
    ] {
        let renewal = HealthLog::start::<Kafka>(&ns, "Kafka", "forced").await;
        force(&client, &ns, secret, annotation).await;
        reconcile_now(&client, &ns, "forced").await;
        eventually(
            &format!("{annotation} carried out"),
            support::WAIT,
            || async { !cluster_ca_state(&client, &ns, "forced").await.2 },
        )
        .await;
        // The pods are to roll for it, which waits (kwok pods run no broker whose safety
        // could be checked); nothing more happens to the CA. The cluster stays Ready.
        reconciling_with(&client, &ns, "forced", UNREACHABLE).await;
        let renewed = renewal.stop().await;
        assert!(
            renewed.iter().all(|(health, _)| *health == Health::Healthy),
            "{annotation}: {renewed:?}"
        );
        let (cert, key, forced) = cluster_ca_state(&client, &ns, "forced").await;
        assert_eq!(
            (cert.as_str(), key.as_str(), forced),
            (expected.0, expected.1, false),
            "after {annotation}"
        );
    }
    let notes = events(&client, &ns, "Normal", "Kafka", "forced").await;
    let count = |reason: &str| notes.iter().filter(|note| note.contains(reason)).count();
    assert_eq!(
        (count("CaCertificateRenewed"), count("CaKeyReplaced")),
        (1, 1),
        "{notes:?}"
    );

    // A spec change that rolls the pods: still Ready, `observedGeneration` the one before
    // until the roll is done, progress in `Reconciling`.
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let before = kafkas.get("forced").await.unwrap();
    let rolling = HealthLog::start::<Kafka>(&ns, "Kafka", "forced").await;
    kafkas
        .patch(
            "forced",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"kafka": {"template": {"pod": {
                "metadata": {"labels": {"example.com/rolled": "true"}},
            }}}}})),
        )
        .await
        .unwrap();
    let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    wait_for(&sets, "forced-broker", "the new pod definition", |set| {
        serde_json::to_string(&set?.spec.pods)
            .ok()?
            .contains("example.com/rolled")
            .then_some(())
    })
    .await;
    rolling.wait_for_progress("a roll").await;
    let waiting = reconciling_with(&client, &ns, "forced", UNREACHABLE).await;
    assert!(waiting.contains("forced-broker-"), "{waiting}");
    let rolled = rolling.stop().await;
    assert_never_degraded("a roll", &rolled);
    assert_progress_shown("a roll", &rolled);
    assert!(
        rolled.iter().all(|(health, _)| *health == Health::Healthy),
        "{rolled:?}"
    );
    let during = kafkas.get("forced").await.unwrap();
    assert!(during.metadata.generation > before.metadata.generation);
    assert_eq!(
        during.status.as_ref().unwrap().observed_generation,
        before.status.as_ref().unwrap().observed_generation,
        "observedGeneration moves when the change is done"
    );
    operator.stop().await;
}

/// The node certificate Secrets of `pods`: the generation of the cluster CA certificate
/// that signed each, and its `<pod>.crt`.
async fn node_certificates(
    client: &Client,
    ns: &str,
    pods: impl IntoIterator<Item = &String>,
) -> BTreeMap<String, (String, Vec<u8>)> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    let mut certificates = BTreeMap::new();
    for pod in pods {
        let secret = secrets.get(pod).await.unwrap();
        let generation = secret
            .annotations()
            .get("strimzi.io/cluster-ca-cert-generation")
            .cloned()
            .unwrap_or_default();
        let crt = secret.data.unwrap()[&format!("{pod}.crt")].0.clone();
        certificates.insert(pod.clone(), (generation, crt));
    }
    certificates
}

/// The `metadata.generation` of each StrimziPodSet and the data of each ConfigMap of the
/// cluster: what the operator applies from the spec.
async fn applied_from_the_spec(client: &Client, ns: &str, cluster: &str) -> Vec<String> {
    let selector = format!("strimzi.io/cluster={cluster}");
    let sets = Api::<StrimziPodSet>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap();
    let config_maps = Api::<ConfigMap>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap();
    sets.iter()
        .map(|set| format!("{}: {:?}", set.name_any(), set.metadata.generation))
        .chain(
            config_maps
                .iter()
                .map(|map| format!("{}: {:?}", map.name_any(), map.data)),
        )
        .collect()
}

/// Issue 36, item 4: an invalid spec does not stop certificate renewal. The CA step and the
/// renewal of the running nodes' certificates go on at every periodic reconciliation while
/// the spec is invalid (Secrets are not watched: only a periodic reconciliation sees the
/// annotation), and nothing else is applied.
#[tokio::test]
async fn while_the_spec_is_invalid_the_cluster_ca_and_the_running_nodes_certificates_are_renewed() {
    let (client, ns) = namespace("invalid-renewal").await;
    let operator = Operator::on_with(&ns, &[("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "5000")]);
    let documents = cluster("renewing", 1, 1);
    apply_all(&client, &ns, &documents).await;
    ready(&client, &ns, "renewing").await;
    let pods = pod_uids(&client, &ns, "renewing").await;
    assert_eq!(pods.len(), 2, "{pods:?}");
    let certificates = node_certificates(&client, &ns, pods.keys()).await;
    assert!(
        certificates
            .values()
            .all(|(generation, _)| generation == "0")
    );

    // A config provider alias the operator reserves for itself: an invalid spec.
    let mut invalid = documents[2].clone();
    invalid["spec"]["kafka"]["config"]["config.providers"] = json!("strimzienv");
    apply(&client, &ns, &invalid).await;
    let spec_error = "InvalidConfigurationException";
    let message = not_ready_with(&client, &ns, "renewing", spec_error).await;
    let applied = applied_from_the_spec(&client, &ns, "renewing").await;

    force(
        &client,
        &ns,
        "renewing-cluster-ca-cert",
        "strimzi.io/force-renew",
    )
    .await;
    eventually(
        "the cluster CA renewed and the running nodes' certificates with it",
        support::WAIT,
        || async {
            cluster_ca_state(&client, &ns, "renewing").await
                == ("1".to_owned(), "0".to_owned(), false)
                && node_certificates(&client, &ns, pods.keys())
                    .await
                    .values()
                    .all(|(generation, _)| generation == "1")
        },
    )
    .await;
    let renewed = node_certificates(&client, &ns, pods.keys()).await;
    for (pod, (_, crt)) in &renewed {
        assert_ne!(*crt, certificates[pod].1, "{pod}: a new certificate");
    }

    // The condition still names the spec error; nothing else was applied, nothing restarted.
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let kafka = kafkas.get("renewing").await.unwrap();
    let not_ready = condition(&kafka, "NotReady").unwrap();
    assert_eq!(
        (not_ready.reason.as_deref(), not_ready.message.as_ref()),
        (Some(spec_error), Some(&message))
    );
    assert_eq!(
        applied_from_the_spec(&client, &ns, "renewing").await,
        applied
    );
    assert_eq!(pod_uids(&client, &ns, "renewing").await, pods);
    let notes = events(&client, &ns, "Normal", "Kafka", "renewing").await;
    for reason in ["CaCertificateRenewed", "NodeCertificatesRenewed"] {
        assert!(
            notes.iter().any(|note| note.contains(reason)),
            "{reason}: {notes:?}"
        );
    }
    // Later periodic reconciliations renew nothing more.
    tokio::time::sleep(std::time::Duration::from_secs(12)).await;
    assert_eq!(node_certificates(&client, &ns, pods.keys()).await, renewed);
    assert_eq!(
        cluster_ca_state(&client, &ns, "renewing").await,
        ("1".to_owned(), "0".to_owned(), false)
    );

    // The fix is applied, and the pods are to roll for the renewed CA, which waits (kwok
    // pods run no broker whose safety could be checked).
    apply(&client, &ns, &documents[2]).await;
    reconciling_with(&client, &ns, "renewing", UNREACHABLE).await;
    assert_eq!(pod_uids(&client, &ns, "renewing").await, pods);
    operator.stop().await;
}

/// What the test's admission policy says when it refuses a write.
const REFUSED: &str = "refused by the test's admission policy";

/// A refusal of writes that change the data of Secret `secret` in `ns` (its creation
/// included), as a quota or an admission webhook may refuse a write: a
/// ValidatingAdmissionPolicy and its binding to `ns`, in effect once this returns. Removed by
/// [`WriteRefusal::lift`] (the binding) and [`WriteRefusal::remove`] (the policy too).
struct WriteRefusal {
    client: Client,
    name: String,
    secret: String,
}

impl WriteRefusal {
    async fn new(client: &Client, ns: &str, secret: &str) -> Self {
        let name = format!("{ns}-{secret}");
        let policy = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": [{
                    "apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["secrets"],
                }]},
                "validations": [{
                    "expression": format!(
                        "object.metadata.name != '{secret}' || (oldObject != null && object.data == oldObject.data)"
                    ),
                    "message": REFUSED,
                }],
            },
        });
        let binding = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
                "matchResources": {"namespaceSelector": {"matchLabels": {
                    "kubernetes.io/metadata.name": ns,
                }}},
            },
        });
        apply(client, ns, &policy).await;
        apply(client, ns, &binding).await;
        // In effect once a dry-run creation of the Secret is refused.
        let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
        let probe = Secret {
            metadata: ObjectMeta {
                name: Some(secret.to_owned()),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        };
        let dry_run = kube::api::PostParams {
            dry_run: true,
            ..kube::api::PostParams::default()
        };
        eventually("the admission policy in effect", support::WAIT, || async {
            matches!(
                secrets.create(&dry_run, &probe).await,
                Err(kube::Error::Api(status)) if status.message.contains(REFUSED)
            )
        })
        .await;
        Self {
            client: client.clone(),
            name,
            secret: secret.to_owned(),
        }
    }

    /// Waits until the Kafka `kafka` in `ns` is `NotReady` because the write of this
    /// refusal's Secret was refused.
    async fn refused(&self, ns: &str, kafka: &str) {
        let kafkas: Api<Kafka> = Api::namespaced(self.client.clone(), ns);
        let write = format!("apply Secret {ns}/{}:", self.secret);
        wait_for(
            &kafkas,
            kafka,
            &format!("the write of {write} refused"),
            |kafka| {
                let condition = condition(kafka?, "NotReady")?;
                let message = condition.message.as_deref()?;
                (condition.reason.as_deref() == Some("KubernetesApiError")
                    && message.contains(&write)
                    && message.contains(REFUSED))
                .then_some(())
            },
        )
        .await;
    }

    /// Deletes the `kind` object of the refusal.
    async fn delete(&self, kind: &str) {
        let document = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": self.name},
        });
        let (_, api) = support::dynamic(&self.client, "", &document);
        api.delete(&self.name, &DeleteParams::default())
            .await
            .unwrap();
    }

    /// Removes the binding: writes pass again.
    async fn lift(&self) {
        self.delete("ValidatingAdmissionPolicyBinding").await;
    }

    /// Removes the policy as well.
    async fn remove(self) {
        self.delete("ValidatingAdmissionPolicy").await;
    }
}

/// The data of Secret `name` in `ns`, if it exists.
async fn secret_data(client: &Client, ns: &str, name: &str) -> Option<BTreeMap<String, Vec<u8>>> {
    let secret = Api::<Secret>::namespaced(client.clone(), ns)
        .get_opt(name)
        .await
        .unwrap()?;
    Some(
        secret
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(key, value)| (key, value.0))
            .collect(),
    )
}

/// Issue 36, item 5: the CA Secrets are written one after the other, the key first. A new
/// cluster whose CA key Secret cannot be written stores no certificate for a key that is not
/// stored, and once the write passes the Kafka is Ready with no manual step.
#[tokio::test]
async fn a_new_cluster_whose_ca_key_write_is_refused_becomes_ready_once_it_passes() {
    let (client, ns) = namespace("ca-refused").await;
    let refusal = WriteRefusal::new(&client, &ns, "refused-cluster-ca").await;
    let operator = Operator::on(&ns);
    apply_all(&client, &ns, &cluster("refused", 1, 1)).await;
    refusal.refused(&ns, "refused").await;
    assert_eq!(
        secret_data(&client, &ns, "refused-cluster-ca-cert").await,
        None,
        "a certificate stored for a key that is not"
    );
    refusal.lift().await;
    ready(&client, &ns, "refused").await;
    assert_eq!(
        cluster_ca_state(&client, &ns, "refused").await,
        ("0".to_owned(), "0".to_owned(), false)
    );
    operator.stop().await;
    refusal.remove().await;
}

/// The cluster CA's current certificate and key (PEM) as their Secrets hold them.
async fn cluster_ca_pair(client: &Client, ns: &str, cluster: &str) -> (Vec<u8>, Vec<u8>) {
    let cert = secret_data(client, ns, &format!("{cluster}-cluster-ca-cert"))
        .await
        .unwrap();
    let key = secret_data(client, ns, &format!("{cluster}-cluster-ca"))
        .await
        .unwrap();
    (cert["ca.crt"].clone(), key["ca.key"].clone())
}

/// Whether the PEM certificate `crt` belongs to the PEM key `key`.
fn belong_together(crt: &[u8], key: &[u8]) -> bool {
    use strimzi_certificate_manager::certificate::ParsedCertificate;
    let certificate = ParsedCertificate::from_pem(crt).unwrap();
    certificate.matches_key(&strimzi_certificate_manager::keys::from_pem(key).unwrap())
}

/// Issue 36, item 5: a key replacement whose write is refused. A refused key write leaves
/// the CA as it was (same certificate and key); a refused certificate write after the key
/// was stored leaves a state of ours, which the next reconciliation completes with the
/// stored key, also when the operator dies in between. Either way, once the write passes, the
/// replacement is done once, the old certificate still trusted, with no manual step.
#[tokio::test]
async fn a_ca_key_replacement_with_a_refused_write_completes_once_the_write_passes() {
    let (client, ns) = namespace("ca-replace-refused").await;
    let operator = Operator::on(&ns);
    apply_all(&client, &ns, &cluster("replacing", 1, 1)).await;
    ready(&client, &ns, "replacing").await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let force_replace = || {
        force(
            &client,
            &ns,
            "replacing-cluster-ca",
            "strimzi.io/force-replace",
        )
    };
    let old_certificates = |data: BTreeMap<String, Vec<u8>>| -> Vec<Vec<u8>> {
        data.into_iter()
            .filter(|(key, _)| key.starts_with("ca-") && key.ends_with(".crt"))
            .map(|(_, value)| value)
            .collect()
    };

    // The key write refused: nothing changes.
    let before = cluster_ca_pair(&client, &ns, "replacing").await;
    let refusal = WriteRefusal::new(&client, &ns, "replacing-cluster-ca").await;
    force_replace().await;
    reconcile_now(&client, &ns, "replacing").await;
    refusal.refused(&ns, "replacing").await;
    assert_eq!(cluster_ca_pair(&client, &ns, "replacing").await, before);
    refusal.lift().await;
    eventually("the key replaced", support::WAIT, || async {
        cluster_ca_state(&client, &ns, "replacing").await == ("1".to_owned(), "1".to_owned(), false)
    })
    .await;
    let first = cluster_ca_pair(&client, &ns, "replacing").await;
    assert!(belong_together(&first.0, &first.1));
    assert_ne!(first.1, before.1);
    let cert_data = secret_data(&client, &ns, "replacing-cluster-ca-cert")
        .await
        .unwrap();
    assert_eq!(old_certificates(cert_data), std::slice::from_ref(&before.0));
    refusal.remove().await;
    // The CA step is through; the pods are to roll for the new key (kwok pods run no broker
    // whose safety could be checked).
    reconciling_with(&client, &ns, "replacing", UNREACHABLE).await;

    // The certificate write refused: the new key is stored, marked as replacing the current
    // certificate, and then completed with that very key. The operator is the binary here,
    // a process of its own, killed between the two writes.
    operator.stop().await;
    let process = support::spawn_cluster_operator(
        support::env(),
        &support::build_operator_binaries(),
        &ns,
        strimzi_tests::layout::free_port().unwrap(),
        &[],
    );
    let refusal = WriteRefusal::new(&client, &ns, "replacing-cluster-ca-cert").await;
    force_replace().await;
    reconcile_now(&client, &ns, "replacing").await;
    refusal.refused(&ns, "replacing").await;
    let key = secrets.get("replacing-cluster-ca").await.unwrap();
    assert!(
        key.annotations()
            .contains_key("strimzi-rs/replaces-ca-certificate"),
        "{:?}",
        key.annotations()
    );
    let stored_key = key.data.unwrap()["ca.key"].0.clone();
    assert_ne!(stored_key, first.1);
    assert_eq!(
        secret_data(&client, &ns, "replacing-cluster-ca-cert")
            .await
            .unwrap()["ca.crt"],
        first.0
    );
    // SIGKILL between the two writes: the next operator knows nothing of the replacement but
    // what the Secrets say.
    process.kill();
    let operator = Operator::on(&ns);
    refusal.lift().await;
    // The mark goes with the last of the writes (the key Secret written again after the
    // certificate Secret and the force annotations' removal), so it is waited for too: the
    // generations alone are already there one write earlier.
    eventually(
        "the interrupted replacement completed and its mark removed",
        support::WAIT,
        || async {
            let key = secrets.get("replacing-cluster-ca").await.unwrap();
            cluster_ca_state(&client, &ns, "replacing").await
                == ("2".to_owned(), "2".to_owned(), false)
                && !key
                    .annotations()
                    .contains_key("strimzi-rs/replaces-ca-certificate")
        },
    )
    .await;
    let second = cluster_ca_pair(&client, &ns, "replacing").await;
    assert_eq!(second.1, stored_key, "the stored key, not a new one");
    assert!(belong_together(&second.0, &second.1));
    let trusted = old_certificates(
        secret_data(&client, &ns, "replacing-cluster-ca-cert")
            .await
            .unwrap(),
    );
    assert!(
        trusted.contains(&first.0) && trusted.contains(&before.0),
        "both old ones trusted"
    );
    reconciling_with(&client, &ns, "replacing", UNREACHABLE).await;
    let notes = events(&client, &ns, "Normal", "Kafka", "replacing").await;
    assert_eq!(
        notes
            .iter()
            .filter(|note| note.contains("CaKeyReplaced"))
            .count(),
        2,
        "{notes:?}"
    );
    operator.stop().await;
    refusal.remove().await;
}

/// The images the pods of each StrimziPodSet of `cluster` run, and the sets' generations.
async fn pod_set_images(
    client: &Client,
    ns: &str,
    cluster: &str,
) -> BTreeMap<String, (Vec<String>, i64)> {
    let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), ns);
    sets.list(&ListParams::default().labels(&format!("strimzi.io/cluster={cluster}")))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|set| {
            let images = set
                .spec
                .pods
                .iter()
                .filter_map(|pod| pod["spec"]["containers"][0]["image"].as_str())
                .map(str::to_owned)
                .collect();
            (set.name_any(), (images, set.metadata.generation.unwrap()))
        })
        .collect()
}

/// The holder and contender of the claim Lease of Kafka `cluster`.
async fn claim_of(client: &Client, ns: &str, cluster: &str) -> (Option<String>, Option<String>) {
    use k8s_openapi::api::coordination::v1::Lease;
    let lease = Api::<Lease>::namespaced(client.clone(), ns)
        .get(&format!("{cluster}-cluster-operator-claim"))
        .await
        .unwrap();
    (
        lease.spec.and_then(|spec| spec.holder_identity),
        lease
            .metadata
            .annotations
            .unwrap_or_default()
            .remove("strimzi-rs/contender"),
    )
}

#[tokio::test]
async fn two_operators_claiming_one_kafka_both_stand_back_until_one_of_them_stops() {
    use strimzi_cluster_operator::model::nodes::images::KafkaImages;
    let (client, ns) = namespace("claim").await;
    let (lease_a, lease_b) = (
        support::env().namespace("claim-lease-a").await,
        support::env().namespace("claim-lease-b").await,
    );
    let (a, b) = (
        format!("{lease_a}/strimzi-cluster-operator"),
        format!("{lease_b}/strimzi-cluster-operator"),
    );
    // Another image for every Kafka version: the second operator would change every pod.
    let other_images = KafkaImages::strimzi_defaults()
        .by_version
        .keys()
        .map(|version| format!("{version}={OTHER_IMAGE}{version}"))
        .collect::<Vec<_>>()
        .join(",");
    let settings = |lease_namespace: &str, images: Option<&str>| -> Vec<(String, String)> {
        let mut settings = vec![
            // Claims last two intervals: 16 s here.
            ("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "8000"),
            ("STRIMZI_LEADER_ELECTION_ENABLED", "true"),
            (
                "STRIMZI_LEADER_ELECTION_LEASE_NAME",
                "strimzi-cluster-operator",
            ),
            ("STRIMZI_LEADER_ELECTION_LEASE_NAMESPACE", lease_namespace),
            ("STRIMZI_LEADER_ELECTION_IDENTITY", "the-only-replica"),
        ];
        settings.extend(images.map(|images| ("STRIMZI_KAFKA_IMAGES", images)));
        settings
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect()
    };
    let start = |settings: &[(String, String)]| {
        let settings: Vec<(&str, &str)> = settings
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
            .collect();
        Operator::on_with(&ns, &settings)
    };
    const OTHER_IMAGE: &str = "example.org/other/kafka:";
    let (settings_a, settings_b) = (
        settings(&lease_a, None),
        settings(&lease_b, Some(&other_images)),
    );

    let operator_a = start(&settings_a);
    apply_all(&client, &ns, &cluster("contested", 1, 1)).await;
    ready(&client, &ns, "contested").await;
    let sets_of_a = pod_set_images(&client, &ns, "contested").await;
    assert!(
        sets_of_a
            .values()
            .flat_map(|(images, _)| images)
            .all(|image| image.starts_with("quay.io/strimzi/kafka:")),
        "{sets_of_a:?}"
    );
    assert_eq!(
        claim_of(&client, &ns, "contested").await,
        (Some(a.clone()), None)
    );

    // A second operator, with other images, finds the Kafka claimed: it changes nothing, and
    // both say so.
    let operator_b = start(&settings_b);
    let message = not_ready_with(&client, &ns, "contested", "ConflictingOperator").await;
    assert!(message.contains(&a) && message.contains(&b), "{message}");
    eventually(
        "a Warning Event from each operator",
        support::WAIT,
        || async {
            let warnings = kafka_warning_events(&client, &ns, "contested").await;
            [&a, &b].iter().all(|operator| {
                warnings.iter().any(|warning| {
                    warning.contains("ConflictingOperator")
                        && warning.contains(&format!("{operator} stops acting"))
                })
            })
        },
    )
    .await;
    assert_eq!(
        claim_of(&client, &ns, "contested").await,
        (Some(a.clone()), Some(b.clone()))
    );
    // Several renewal periods of the claim, in which neither acts.
    tokio::time::sleep(std::time::Duration::from_secs(10)).await;
    assert_eq!(pod_set_images(&client, &ns, "contested").await, sets_of_a);
    not_ready_with(&client, &ns, "contested", "ConflictingOperator").await;

    // Once the second stops, the first acts again: Ready, nothing changed.
    operator_b.stop().await;
    ready(&client, &ns, "contested").await;
    assert_eq!(
        claim_of(&client, &ns, "contested").await,
        (Some(a.clone()), None)
    );
    assert_eq!(pod_set_images(&client, &ns, "contested").await, sets_of_a);

    // With the second back and the first stopped, the second takes the claim over and
    // applies its images, each StrimziPodSet rewritten once.
    let operator_b = start(&settings_b);
    not_ready_with(&client, &ns, "contested", "ConflictingOperator").await;
    assert_eq!(pod_set_images(&client, &ns, "contested").await, sets_of_a);
    operator_a.stop().await;
    eventually(
        "the second operator's images in every StrimziPodSet",
        support::WAIT,
        || async {
            let sets = pod_set_images(&client, &ns, "contested").await;
            sets.values()
                .flat_map(|(images, _)| images)
                .all(|image| image.starts_with(OTHER_IMAGE))
        },
    )
    .await;
    let sets_of_b = pod_set_images(&client, &ns, "contested").await;
    for (name, (_, generation)) in &sets_of_b {
        assert_eq!(*generation, sets_of_a[name].1 + 1, "{name}: {sets_of_b:?}");
    }
    assert_eq!(claim_of(&client, &ns, "contested").await, (Some(b), None));
    operator_b.stop().await;
}

/// `STRIMZI_POD_DISRUPTION_BUDGET_GENERATION=false`: the operator makes no
/// PodDisruptionBudget for a Kafka, and leaves the ones labelled for its Kafka component (an
/// earlier operator's, or the user's) as they are, over several periodic reconciliations, as
/// Strimzi does: neither rewritten nor deleted. (Their status changes with the pods: the
/// generation and the spec are compared.)
#[tokio::test]
async fn without_pod_disruption_budget_generation_budgets_are_neither_made_nor_touched() {
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    let (client, ns) = namespace("no-pdb").await;
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), &ns);
    let listed = || async {
        budgets
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|budget| {
                let spec = serde_json::to_value(&budget.spec).unwrap();
                (budget.name_any(), (budget.metadata.generation, spec))
            })
            .collect::<BTreeMap<_, _>>()
    };
    let labels = json!({"strimzi.io/cluster": "kept", "strimzi.io/kind": "Kafka",
                        "strimzi.io/name": "kept-kafka"});
    for name in ["kept-kafka", "kept-kafka-extra"] {
        let budget = json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "labels": labels},
            "spec": {"maxUnavailable": 3, "selector": {"matchLabels": labels}},
        });
        apply(&client, &ns, &budget).await;
    }
    let before = listed().await;
    assert_eq!(before.len(), 2);

    let operator = Operator::on_with(
        &ns,
        &[
            (
                strimzi_cluster_operator::config::POD_DISRUPTION_BUDGET_GENERATION,
                "false",
            ),
            ("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "2000"),
        ],
    );
    apply_all(&client, &ns, &cluster("kept", 1, 1)).await;
    ready(&client, &ns, "kept").await;
    // A few periodic reconciliations of the Ready cluster.
    tokio::time::sleep(std::time::Duration::from_secs(8)).await;
    assert_eq!(
        listed().await,
        before,
        "the budgets as they were, and no other"
    );
    operator.stop().await;
}

/// `STRIMZI_ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED`: a topic operator watching a namespace
/// of its own runs while the cluster operator allows it. A cluster operator that does not (the
/// default) removes the entity operator, with its Role and RoleBinding in that namespace, and
/// reports the Kafka `NotReady`, the nodes untouched.
#[tokio::test]
async fn an_entity_operator_watching_another_namespace_is_removed_unless_allowed() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    use strimzi_cluster_operator::config::ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED;
    let (client, ns) = namespace("eo-gate").await;
    let topics = support::env().namespace("eo-gate-topics").await;
    let mut documents = cluster("gated", 1, 1);
    documents[2]["spec"]["entityOperator"] = json!({"topicOperator": {"watchedNamespace": topics}});
    let allowing = Operator::on_with(&ns, &[(ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED, "true")]);
    apply_all(&client, &ns, &documents).await;
    ready(&client, &ns, "gated").await;
    let roles: Api<Role> = Api::namespaced(client.clone(), &topics);
    assert!(
        roles
            .get_opt("gated-entity-operator")
            .await
            .unwrap()
            .is_some()
    );
    // The pods of the nodes, without the entity operator's.
    let node_pods = || async {
        let mut pods = pod_uids(&client, &ns, "gated").await;
        pods.retain(|name, _| !name.starts_with("gated-entity-operator-"));
        pods
    };
    let nodes = node_pods().await;
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    allowing.stop().await;

    let operator = Operator::on(&ns);
    let message = not_ready_with(&client, &ns, "gated", "InvalidConfigurationException").await;
    for part in [
        "spec.entityOperator.topicOperator.watchedNamespace",
        "STRIMZI_ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED=true",
    ] {
        assert!(message.contains(part), "{message}");
    }
    support::wait_gone(
        &Api::<Deployment>::namespaced(client.clone(), &ns),
        "gated-entity-operator",
        "the entity operator's Deployment to be removed",
    )
    .await;
    support::wait_gone(
        &roles,
        "gated-entity-operator",
        "the Role in the watched namespace to be removed",
    )
    .await;
    support::wait_gone(
        &Api::<RoleBinding>::namespaced(client.clone(), &topics),
        "gated-entity-topic-operator-role",
        "the RoleBinding in the watched namespace to be removed",
    )
    .await;
    assert_eq!(node_pods().await, nodes);
    operator.stop().await;
}

#[tokio::test]
async fn strimzis_certificate_alert_and_operator_dashboard_work_on_the_operators_metrics() {
    use strimzi_tests::prometheus::{
        CLUSTER_OPERATOR_KINDS, input_series, operator_dashboard_queries, parse_exposition,
        returns_series, run_rule_test, strimzi_alert, strimzi_rule_file,
    };
    const CERTIFICATE: &str = "strimzi_certificate_expiration_timestamp_ms";
    let (client, ns) = namespace("alerts").await;
    let operator = Operator::on(&ns);
    let mut documents = cluster("expiring", 1, 1);
    // A cluster CA of 20 days expires within the 30 days the alert looks ahead (and is not
    // yet within its 5 renewal days); the clients CA keeps its default 365 days.
    documents[2]["spec"]["clusterCa"] = json!({"validityDays": 20, "renewalDays": 5});
    apply_all(&client, &ns, &documents).await;
    ready(&client, &ns, "expiring").await;

    // What `/metrics` serves (the HTTP handler sends this text).
    let scraped_at_ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    let samples = parse_exposition(&operator.runtime.metrics().encode().unwrap());
    let certificates: Vec<_> = samples
        .iter()
        .filter(|sample| sample.name == CERTIFICATE)
        .collect();
    let mut types: Vec<_> = certificates
        .iter()
        .map(|sample| {
            assert_eq!(sample.label("kind"), Some("Kafka"), "{sample:?}");
            assert_eq!(sample.label("cluster"), Some("expiring"), "{sample:?}");
            assert_eq!(sample.label("namespace"), Some(ns.as_str()), "{sample:?}");
            assert_eq!(sample.label("resource_namespace"), Some(ns.as_str()));
            sample.label("type").unwrap()
        })
        .collect();
    types.sort_unstable();
    assert_eq!(types, ["client-ca", "cluster-ca"]);

    // promtool's clock starts at the epoch: each expiry becomes the time from the scrape,
    // so that minute 0 of the test is the moment of the scrape.
    let series = input_series(&samples, |sample| {
        if sample.name == CERTIFICATE {
            sample.value - scraped_at_ms as f64
        } else {
            sample.value
        }
    });
    // Strimzi's alert, its description filled in from our labels, for the cluster CA only.
    let alert = json!({
        "eval_time": "10m",
        "alertname": "CertificateExpiration",
        "exp_alerts": [strimzi_alert(
            "prometheus-kafka-certificate-rules.yaml",
            "CertificateExpiration",
            &[
                ("kind", "Kafka"),
                ("namespace", &ns),
                ("cluster", "expiring"),
                ("type", "cluster-ca"),
                ("resource_namespace", &ns),
            ],
        )],
    });
    // Every query of Strimzi's operator dashboard but the JVM panels and those of the entity
    // operator's kinds (its operators' tests check them) returns series.
    let dashboard: Vec<_> = operator_dashboard_queries(&CLUSTER_OPERATOR_KINDS, true)
        .iter()
        .map(returns_series)
        .collect();
    run_rule_test(
        &[(
            "certificates.yaml",
            strimzi_rule_file("prometheus-kafka-certificate-rules.yaml"),
        )],
        series,
        json!({"alert_rule_test": [alert], "promql_expr_test": dashboard}),
    )
    .unwrap();

    // A deleted Kafka's certificate series go.
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    kafkas
        .delete("expiring", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the deleted Kafka's certificate series removed",
        std::time::Duration::from_secs(60),
        || async {
            !operator
                .runtime
                .metrics()
                .encode()
                .unwrap()
                .contains("cluster=\"expiring\"")
        },
    )
    .await;
}
