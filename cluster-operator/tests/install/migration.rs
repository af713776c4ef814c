//! Moving a cluster that Strimzi's operator made to ours and back, as
//! `docs/user-guide/migration.md` says: every block of its two procedures run as written.
//!
//! The start is what a Strimzi user has. Strimzi 1.2's `install/cluster-operator` files are
//! installed as Strimzi's documentation says (the RoleBindings' namespace edited with `sed`,
//! then `kubectl create -f`), its operator scaled to zero since its image cannot run here.
//! The cluster is the one Strimzi's operator made for `kafka-ephemeral.yaml` (the recorded
//! objects, created again as that operator created them), with a KafkaTopic and a SCRAM
//! KafkaUser (and the user's Secret) as Strimzi's topic and user operators left them, and a
//! KafkaConnect with a KafkaConnector, a KafkaMirrorMaker2, a KafkaBridge and a KafkaRebalance
//! with the statuses Strimzi's operator writes, each edited since, while no operator ran.
//! No recording has the pods Strimzi's operator makes for Connect, MirrorMaker 2 or the
//! bridge, so there are none: ours creates them.
//!
//! After the switch: no Kafka node pod was replaced or restarted, no Secret or ConfigMap
//! changed (the user's password is Strimzi's), our operator runs from our image, the Kafka is
//! Ready with none of Strimzi's conditions left, our operators have taken every edit (the
//! components' pods carry theirs, the rebalance is refused for the same reason as before, for
//! its new generation), the records written before are read back, and MirrorMaker 2 has
//! mirrored them. After the way back: Strimzi's install objects (CRDs, ClusterRoles,
//! bindings, the ServiceAccount, the ConfigMap, the Deployment) are as `kubectl create` made
//! them, identity included, no component's pod was replaced, and the Kafka still serves
//! clients.
//! Then Strimzi's uninstall, so that the scenarios after this one start from a cluster with
//! no operator installed.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::bridge::KafkaBridge;
use strimzi_api::connect::KafkaConnect;
use strimzi_api::connector::KafkaConnector;
use strimzi_api::kafka::Kafka;
use strimzi_api::mirror_maker2::KafkaMirrorMaker2;
use strimzi_api::rebalance::KafkaRebalance;
use strimzi_api::topic::KafkaTopic;
use strimzi_api::user::KafkaUser;
use strimzi_tests::clients::ClusterClient;
use strimzi_tests::docs::shell_blocks;
use strimzi_tests::reference::{reference_dir, workspace_root};
use strimzi_tests::resources::{CustomResources, eventually_ok};

use super::UserShell;
use crate::support::fast_start::{fast_start_jvm, http_readiness_probe};
use crate::support::real_nodes::{
    all_pods_ready, binaries, eventually, records, round_trip, sorted,
};
use crate::support::strimzi_recorded::{
    Recorded, STRIMZI_MANAGER, changed_data, node_pods, pods, restart_events, stored_data,
};
use crate::support::{WAIT, condition, documents, dynamic};

/// The page whose blocks this test runs.
const PAGE: &str = "docs/user-guide/migration.md";
/// Its procedure from Strimzi's operator to ours.
const SWITCH: &str = "## Switching to our operator";
/// Its procedure back.
const BACK: &str = "## Going back to Strimzi's operator";
/// Where the page expects Strimzi's install files, in the folder its commands run in.
const STRIMZI_FILES: &str = "strimzi-1.2.0/install/cluster-operator";
/// Strimzi's recorded run whose cluster moves.
const RECORDED: Recorded = Recorded("kafka-ephemeral");
const CLUSTER: &str = "my-cluster";
/// The topic written before the switch, and its KafkaTopic.
const TOPIC: &str = "before";
/// Where the KafkaMirrorMaker2 mirrors [`TOPIC`] to.
const MIRRORED: &str = "source.before";
/// The SCRAM user Strimzi's user operator made, and its Secret.
const USER: &str = "strimzi-user";
/// The password Strimzi's user operator generated (32 letters and digits, as it generates).
const PASSWORD: &str = "StrimziGeneratedThis0123456789ab";
/// The KafkaConnect, managed by KafkaConnectors, and its one KafkaConnector.
const CONNECT: &str = "my-connect";
const CONNECTOR: &str = "heartbeats";
/// The KafkaMirrorMaker2, which mirrors [`TOPIC`] within the cluster (`source.before`).
const MIRROR_MAKER: &str = "my-mirror-maker-2";
/// The KafkaBridge.
const BRIDGE: &str = "my-bridge";
/// The KafkaRebalance, of a Kafka without Cruise Control.
const REBALANCE: &str = "my-rebalance";
/// The pod annotation that the edits made while no operator ran add to each component.
const EDITED: &str = "migration.strimzi.io/edited";
/// The kinds of the components whose pods the test follows (Kafka's are [`node_pods`]).
const COMPONENT_PODS: &str = "strimzi.io/kind in (KafkaConnect,KafkaMirrorMaker2,KafkaBridge)";

pub async fn a_cluster_strimzis_operator_made_moves_to_ours_and_back_as_the_page_says(
    shell: &UserShell,
) {
    let env = super::env();
    let client = env.client().await;
    let network = env.network().expect("a real-node environment");
    let namespace = RECORDED.namespace();
    let shell = shell.with("NAMESPACE", &namespace);
    let page = std::fs::read_to_string(workspace_root().join(PAGE)).unwrap();
    let switch = shell_blocks(&page, SWITCH).unwrap();
    let back = shell_blocks(&page, BACK).unwrap();

    // A cluster with Strimzi's install only: the CRDs the environment installed (ours) go.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in strimzi_crds(&crds).await {
        crds.delete(&crd, &DeleteParams::default()).await.unwrap();
    }
    eventually_ok("our CRDs deleted", WAIT, || async {
        match strimzi_crds(&crds).await.as_slice() {
            [] => Ok(()),
            left => Err(format!("{left:?}")),
        }
    })
    .await;

    // Strimzi's install, as its documentation says, into the namespace of its recorded run.
    let started = Instant::now();
    let files = shell.folder.join(STRIMZI_FILES);
    copy_files(&reference_dir().join("install/cluster-operator"), &files);
    shell.run(
        "Strimzi's documented install",
        &format!(
            "sed -i 's/namespace: .*/namespace: {namespace}/' {STRIMZI_FILES}/*RoleBinding*.yaml\n\
             kubectl create namespace {namespace}\n\
             kubectl create -f {STRIMZI_FILES} -n {namespace}\n"
        ),
    );
    let strimzi_install = install_objects(&client, &namespace, &files).await;
    shell.run(
        "Strimzi's operator scaled to zero, as its image cannot run here",
        &format!("kubectl -n {namespace} scale deployment strimzi-cluster-operator --replicas=0\n"),
    );

    // The cluster Strimzi's operator made, a topic and a user.
    RECORDED.recreate(&client).await;
    all_pods_ready(&client, &namespace, CLUSTER, 6).await;
    let plain = ClusterClient::new(
        &binaries().join("strimzi-kafka-client"),
        network,
        &format!("{CLUSTER}-kafka-bootstrap.{namespace}.svc:9092"),
    );
    eventually("producing to Strimzi's cluster", || {
        plain.produce(TOPIC, 10, "strimzi")
    })
    .await;
    strimzis_resources_edited_since(&client, &namespace).await;
    let pods_before = node_pods(&client, &namespace, CLUSTER).await;
    let mut data_before = stored_data(&client, &namespace).await;
    // The operator's own logging ConfigMap is an install object, which the switch replaces.
    data_before
        .remove("ConfigMap strimzi-cluster-operator")
        .expect("Strimzi's install has its operator's ConfigMap");
    println!(
        "figure: Strimzi's install and the cluster it made, with a topic, a user, Connect, a connector, MirrorMaker 2, a bridge and a rebalance, in {:.1}s",
        started.elapsed().as_secs_f64()
    );

    // The switch, as the page says.
    run_blocks(&shell, SWITCH, &switch);
    let switched = Instant::now();
    let operator = Api::<Deployment>::namespaced(client.clone(), &namespace)
        .get("strimzi-cluster-operator")
        .await
        .unwrap();
    let image = operator_image(&operator);
    assert!(image.contains("strimzi-rs"), "not our operator: {image}");
    // What the page tells users to look for in our operator's log (written just after the
    // status that `kubectl wait` saw).
    let named = format!("name=\"{CLUSTER}\"");
    eventually_ok(
        "a `reconciled` line for the Kafka in our operator's log",
        WAIT,
        || {
            let (client, namespace, named) = (&client, &namespace, &named);
            async move {
                let log = super::pod_logs(client, namespace, "name=strimzi-cluster-operator").await;
                log.lines()
                    .any(|line| {
                        line.contains("reconciled")
                            && line.contains("kind=Kafka ")
                            && line.contains(named)
                    })
                    .then_some(())
                    .ok_or(log)
            }
        },
    )
    .await;
    assert_eq!(
        node_pods(&client, &namespace, CLUSTER).await,
        pods_before,
        "the switch replaced or restarted a Kafka node pod"
    );
    assert_eq!(
        restart_events(&client, &namespace).await,
        Vec::<String>::new(),
        "the operator restarted pods"
    );
    let changed = changed_data(&data_before, &stored_data(&client, &namespace).await);
    assert!(changed.is_empty(), "changed by the switch: {changed:?}");
    let kafka = Api::<Kafka>::namespaced(client.clone(), &namespace)
        .get(CLUSTER)
        .await
        .unwrap();
    assert!(condition(&kafka, "Ready").is_some(), "{:#?}", kafka.status);
    assert!(
        condition(&kafka, "NotReady").is_none(),
        "{:#?}",
        kafka.status
    );
    // Ready for their current generation, 2: the edit made while no operator ran.
    let resources = [
        (
            CustomResources::of::<KafkaTopic>(&client, &namespace),
            TOPIC,
        ),
        (CustomResources::of::<KafkaUser>(&client, &namespace), USER),
        (
            CustomResources::of::<KafkaConnect>(&client, &namespace),
            CONNECT,
        ),
        (
            CustomResources::of::<KafkaConnector>(&client, &namespace),
            CONNECTOR,
        ),
        (
            CustomResources::of::<KafkaMirrorMaker2>(&client, &namespace),
            MIRROR_MAKER,
        ),
        (
            CustomResources::of::<KafkaBridge>(&client, &namespace),
            BRIDGE,
        ),
    ];
    for (resources, name) in &resources {
        eventually_ok(
            &format!("our operators taking the edit of {name}"),
            WAIT,
            || async {
                if resources.is_ready(name).await {
                    Ok(())
                } else {
                    Err(resources.status(name).await)
                }
            },
        )
        .await;
    }
    println!(
        "figure: every topic, user, Connect, connector, MirrorMaker 2 and bridge Ready for its edit {:.1}s after the switch's blocks",
        switched.elapsed().as_secs_f64()
    );
    let components = pods(&client, &namespace, COMPONENT_PODS).await;
    assert_eq!(
        components.len(),
        3,
        "one pod each of Connect, MirrorMaker 2 and the bridge: {components:?}"
    );
    let unedited: Vec<String> = Api::<Pod>::namespaced(client.clone(), &namespace)
        .list(&ListParams::default().labels(COMPONENT_PODS))
        .await
        .unwrap()
        .items
        .iter()
        .filter(|pod| !pod.annotations().contains_key(EDITED))
        .map(ResourceExt::name_any)
        .collect();
    assert!(unedited.is_empty(), "pods without the edit: {unedited:?}");
    // The same cause as under Strimzi's operator, with the same reason, for the edited spec.
    let rebalances = CustomResources::of::<KafkaRebalance>(&client, &namespace);
    rebalances
        .wait_condition(
            REBALANCE,
            "NotReady",
            "InvalidResourceException",
            "does not declare spec.cruiseControl",
        )
        .await;
    assert_eq!(
        rebalances.status(REBALANCE).await["observedGeneration"],
        json!(2),
        "{}",
        rebalances.status(REBALANCE).await
    );
    for topic in [TOPIC, MIRRORED] {
        let read = eventually(
            &format!("consuming the records of before from {topic}"),
            || plain.consume(topic, 10),
        )
        .await;
        assert_eq!(sorted(read), records("strimzi", 10), "{topic}");
    }

    // The way back, as the page says.
    run_blocks(&shell, BACK, &back);
    let now = install_objects(&client, &namespace, &files).await;
    let differ: Vec<&String> = strimzi_install
        .iter()
        .filter(|(name, object)| now.get(*name) != Some(*object))
        .map(|(name, _)| name)
        .collect();
    assert!(
        differ.is_empty(),
        "not as Strimzi's install made them: {differ:?}\nbefore: {:#?}\nafter: {:#?}",
        differ
            .iter()
            .map(|name| &strimzi_install[*name])
            .collect::<Vec<_>>(),
        differ.iter().map(|name| now.get(*name)).collect::<Vec<_>>(),
    );
    assert_eq!(
        node_pods(&client, &namespace, CLUSTER).await,
        pods_before,
        "the way back replaced or restarted a Kafka node pod"
    );
    assert_eq!(
        pods(&client, &namespace, COMPONENT_PODS).await,
        components,
        "the way back replaced or restarted a component's pod"
    );
    round_trip(
        &plain,
        "after",
        10,
        "back",
        "the plain listener after the way back",
    )
    .await;

    // Strimzi's uninstall: the topic first, while the entity operator (ours until Strimzi's
    // operator runs again) removes its finalizer, then the install files and the namespace.
    shell.run(
        "Strimzi's uninstall",
        &format!(
            "kubectl -n {namespace} delete kafkatopic --all --timeout=5m\n\
             kubectl delete -f {STRIMZI_FILES} -n {namespace} --timeout=5m\n\
             kubectl delete namespace {namespace} --timeout=5m\n"
        ),
    );
    println!(
        "figure: the migration, Strimzi's install to its uninstall, in {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

/// Runs the page's blocks of `section` in order.
fn run_blocks(shell: &UserShell, section: &str, blocks: &[String]) {
    let started = Instant::now();
    for (number, block) in blocks.iter().enumerate() {
        let run = shell.run(&format!("{PAGE}, {section:?}, block {}", number + 1), block);
        println!(
            "figure: {section:?} block {} ran in {:.1}s",
            number + 1,
            run.took.as_secs_f64()
        );
    }
    println!(
        "figure: {section:?} in {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

/// The names of the `*.strimzi.io` CRDs.
pub async fn strimzi_crds(crds: &Api<CustomResourceDefinition>) -> Vec<String> {
    crds.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(ResourceExt::name_any)
        .filter(|name| name.ends_with(".strimzi.io"))
        .collect()
}

/// Copies the files of the folder `from` into a new folder `to`.
fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Every object of the install files in `dir` as the API server has it now, by kind and
/// name, without what changes on every write (resource version, generation, field
/// managers, a Deployment's revision) and without status.
async fn install_objects(client: &Client, namespace: &str, dir: &Path) -> BTreeMap<String, Value> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    let mut objects = BTreeMap::new();
    for path in paths {
        for document in documents(&path) {
            let (object, api) = dynamic(client, namespace, &document);
            let name = object.name_any();
            let mut now = serde_json::to_value(api.get(&name).await.unwrap()).unwrap();
            now.as_object_mut().unwrap().remove("status");
            let metadata = now["metadata"].as_object_mut().unwrap();
            for key in ["resourceVersion", "generation", "managedFields"] {
                metadata.remove(key);
            }
            if let Some(annotations) = metadata
                .get_mut("annotations")
                .and_then(Value::as_object_mut)
            {
                annotations.remove("deployment.kubernetes.io/revision");
                if annotations.is_empty() {
                    metadata.remove("annotations");
                }
            }
            objects.insert(
                format!("{} {name}", document["kind"].as_str().unwrap()),
                now,
            );
        }
    }
    objects
}

/// The image of an operator Deployment's container.
fn operator_image(deployment: &Deployment) -> String {
    deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.template.spec.as_ref())
        .and_then(|spec| spec.containers[0].image.clone())
        .unwrap_or_default()
}

/// The API of one of Strimzi's kinds in `namespace`.
fn custom(client: &Client, namespace: &str, kind: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "kafka.strimzi.io",
            "v1",
            kind,
        )),
    )
}

/// The other resources of a Strimzi user, with the status (and for the user, the finalizer
/// and Secret) that Strimzi's operators gave them, then each edited (generation 2) while no
/// operator ran:
/// - a KafkaTopic for the topic written before and a SCRAM-SHA-512 KafkaUser;
/// - a KafkaConnect with a KafkaConnector, a KafkaMirrorMaker2 and a KafkaBridge, each with one
///   worker, edited with a pod annotation ([`EDITED`]). Their pods are not there: no recording
///   of what Strimzi's operator makes for them exists, so ours creates them;
/// - a KafkaRebalance, which Strimzi's operator refused since the Kafka has no Cruise Control.
async fn strimzis_resources_edited_since(client: &Client, namespace: &str) {
    let cluster = json!({"strimzi.io/cluster": CLUSTER});
    let ready = json!([{
        "type": "Ready",
        "status": "True",
        "lastTransitionTime": "2026-11-01T10:00:00.000000000Z",
    }]);
    let ready_status = |extra: Value| {
        let mut status = json!({"conditions": ready, "observedGeneration": 1});
        for (key, value) in extra.as_object().into_iter().flatten() {
            status[key] = value.clone();
        }
        status
    };
    let selector = |name: &str, kind: &str, component: &str| {
        format!(
            "strimzi.io/cluster={name},strimzi.io/name={name}-{component},strimzi.io/kind={kind}"
        )
    };
    let edited_pods = json!({"spec": {"template": {"pod": {"metadata": {"annotations": {
        EDITED: "while no operator ran",
    }}}}}});
    let connect_storage = json!({
        "config.storage.replication.factor": -1,
        "offset.storage.replication.factor": -1,
        "status.storage.replication.factor": -1,
        "plugin.discovery": "service_load",
    });
    let bootstrap = format!("{CLUSTER}-kafka-bootstrap:9092");
    let objects = [
        (
            "KafkaTopic",
            TOPIC,
            json!({"metadata": {"labels": cluster, "finalizers": ["strimzi.io/topic-operator"]},
                "spec": {}}),
            ready_status(json!({"topicName": TOPIC})),
            json!({"spec": {"config": {"retention.ms": 86_400_000}}}),
        ),
        (
            "KafkaUser",
            USER,
            json!({"metadata": {"labels": cluster},
                "spec": {"authentication": {"type": "scram-sha-512"}}}),
            ready_status(json!({"username": USER, "secret": USER})),
            json!({"spec": {"quotas": {"producerByteRate": 1_048_576}}}),
        ),
        (
            "KafkaConnect",
            CONNECT,
            json!({
                "metadata": {"annotations": {"strimzi.io/use-connector-resources": "true"}},
                "spec": {
                    "replicas": 1,
                    "bootstrapServers": bootstrap,
                    "groupId": "my-connect-cluster",
                    "configStorageTopic": "my-connect-configs",
                    "statusStorageTopic": "my-connect-status",
                    "offsetStorageTopic": "my-connect-offsets",
                    "jvmOptions": fast_start_jvm("256m", "384m"),
                    "readinessProbe": http_readiness_probe(),
                    "config": connect_storage,
                },
            }),
            ready_status(json!({
                "url": format!("http://{CONNECT}-connect-api.{namespace}.svc:8083"),
                "replicas": 1,
                "labelSelector": selector(CONNECT, "KafkaConnect", "connect"),
            })),
            edited_pods.clone(),
        ),
        (
            "KafkaConnector",
            CONNECTOR,
            json!({
                "metadata": {"labels": {"strimzi.io/cluster": CONNECT}},
                "spec": {
                    "class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
                    "tasksMax": 1,
                    "config": {
                        "source.cluster.alias": "source",
                        "target.cluster.alias": "target",
                        "target.cluster.bootstrap.servers": bootstrap,
                        "emit.heartbeats.interval.seconds": 1,
                    },
                },
            }),
            ready_status(json!({"tasksMax": 1, "topics": ["heartbeats"]})),
            json!({"spec": {"config": {"emit.heartbeats.interval.seconds": 2}}}),
        ),
        (
            "KafkaMirrorMaker2",
            MIRROR_MAKER,
            json!({"spec": {
                "replicas": 1,
                "target": {
                    "alias": "target",
                    "bootstrapServers": bootstrap,
                    "groupId": "my-mirror-maker-2",
                    "configStorageTopic": "my-mirror-maker-2-configs",
                    "statusStorageTopic": "my-mirror-maker-2-status",
                    "offsetStorageTopic": "my-mirror-maker-2-offsets",
                    "config": connect_storage,
                },
                "mirrors": [{
                    "source": {"alias": "source", "bootstrapServers": bootstrap},
                    "sourceConnector": {"tasksMax": 1, "config": {
                        "sync.topic.acls.enabled": "false",
                    }},
                    "topicsPattern": TOPIC,
                    "groupsPattern": "none",
                }],
                "jvmOptions": fast_start_jvm("256m", "384m"),
                "readinessProbe": http_readiness_probe(),
            }}),
            ready_status(json!({
                "url": format!("http://{MIRROR_MAKER}-mirrormaker2-api.{namespace}.svc:8083"),
                "replicas": 1,
                "labelSelector": selector(MIRROR_MAKER, "KafkaMirrorMaker2", "mirrormaker2"),
            })),
            edited_pods.clone(),
        ),
        (
            "KafkaBridge",
            BRIDGE,
            json!({"spec": {
                "replicas": 1,
                "bootstrapServers": bootstrap,
                "http": {"port": 8080},
                "readinessProbe": http_readiness_probe(),
            }}),
            ready_status(json!({
                "url": format!("http://{BRIDGE}-bridge-service.{namespace}.svc:8080"),
                "replicas": 1,
                "labelSelector": selector(BRIDGE, "KafkaBridge", "bridge"),
            })),
            edited_pods,
        ),
        (
            "KafkaRebalance",
            REBALANCE,
            json!({"metadata": {"labels": cluster}, "spec": {}}),
            json!({"observedGeneration": 1, "conditions": [{
                "type": "NotReady",
                "status": "True",
                "reason": "InvalidResourceException",
                "message": "Kafka resource lacks 'cruiseControl' declaration : No deployed Cruise Control for doing a rebalance.",
                "lastTransitionTime": "2026-11-01T10:00:00.000000000Z",
            }]}),
            json!({"spec": {"skipHardGoalCheck": true}}),
        ),
    ];
    let params = PatchParams::apply(STRIMZI_MANAGER);
    for (kind, name, mut document, status, edit) in objects {
        document["apiVersion"] = json!("kafka.strimzi.io/v1");
        document["kind"] = json!(kind);
        document["metadata"]["name"] = json!(name);
        let api = custom(client, namespace, kind);
        let created = api
            .patch(name, &params, &Patch::Apply(&document))
            .await
            .unwrap();
        api.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": status})),
        )
        .await
        .unwrap();
        if kind == "KafkaUser" {
            let jaas = format!(
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"{USER}\" password=\"{PASSWORD}\";"
            );
            let secret = Secret {
                metadata: kube::api::ObjectMeta {
                    name: Some(USER.to_owned()),
                    labels: Some(
                        [
                            ("app.kubernetes.io/instance", USER),
                            ("app.kubernetes.io/managed-by", "strimzi-user-operator"),
                            ("app.kubernetes.io/name", "strimzi-user-operator"),
                            ("app.kubernetes.io/part-of", "strimzi-strimzi-user"),
                            ("strimzi.io/cluster", CLUSTER),
                            ("strimzi.io/kind", "KafkaUser"),
                        ]
                        .into_iter()
                        .map(|(key, value)| (key.to_owned(), value.to_owned()))
                        .collect(),
                    ),
                    owner_references: Some(vec![
                        k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                            api_version: "kafka.strimzi.io/v1".to_owned(),
                            kind: kind.to_owned(),
                            name: name.to_owned(),
                            uid: created.uid().unwrap(),
                            controller: Some(true),
                            block_owner_deletion: Some(false),
                        },
                    ]),
                    ..Default::default()
                },
                data: Some(
                    [
                        ("password", PASSWORD.to_owned()),
                        ("sasl.jaas.config", jaas),
                    ]
                    .into_iter()
                    .map(|(key, value)| (key.to_owned(), ByteString(value.into_bytes())))
                    .collect(),
                ),
                ..Default::default()
            };
            Api::<Secret>::namespaced(client.clone(), namespace)
                .create(
                    &kube::api::PostParams {
                        field_manager: Some(STRIMZI_MANAGER.to_owned()),
                        ..Default::default()
                    },
                    &secret,
                )
                .await
                .unwrap();
        }
        api.patch(name, &PatchParams::default(), &Patch::Merge(&edit))
            .await
            .unwrap();
    }
}
