//! The `kubectl-strimzi` binary run as a user runs it, with a kubeconfig, against a Kafka the
//! operator made Ready on kwok nodes: `status`, `certs`, `support-bundle`, `rebalance`,
//! `pause`/`resume`, `roll` and `certs --renew`; its errors for missing permissions (a
//! kubeconfig impersonating a ServiceAccount that may only read Kafkas) and for a missing
//! kubeconfig; and `plan` (see [`plan_predicts_what_the_operator_does`]).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::Client;
use kube::ResourceExt;
use kube::api::Api;
use kube::api::ListParams;
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_cluster_model::model::nodes::pods::definition_revisions;
use support::plugin::{
    kubectl_strimzi, objects, operator_deployment, plan, plan_documents, restarts, run_as,
};
use support::{Operator, apply, cluster, condition, namespace, ready, wait_for};

const KAFKA: &str = "my-cluster";

/// Runs the plugin as the environment's admin; asserts it succeeds and returns its output.
fn run(ns: &str, args: &[&str]) -> String {
    let run = kubectl_strimzi(support::env(), ns, args);
    assert_eq!(run.code, 0, "kubectl strimzi {args:?}: {run:?}");
    run.stdout
}

/// Runs the plugin as the admin; asserts it fails with `code` and returns its standard error.
fn fails(ns: &str, args: &[&str], code: i32) -> String {
    let run = kubectl_strimzi(support::env(), ns, args);
    assert_eq!(run.code, code, "kubectl strimzi {args:?}: {run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    run.stderr
}

/// The value of annotation `key` on `object`.
fn annotation<K: kube::Resource>(object: &K, key: &str) -> Option<String> {
    object.meta().annotations.as_ref()?.get(key).cloned()
}

/// The text of `status` with what changes from run to run (namespace, cluster id, CA dates
/// and days left) replaced, from the JSON facts of the same cluster.
fn stable_status_text(text: &str, facts: &Value, ns: &str) -> String {
    let mut stable = text.replace(ns, "[namespace]");
    if let Some(id) = facts["clusterId"].as_str() {
        stable = stable.replace(id, "[cluster-id]");
    }
    for authority in facts["certificateAuthorities"].as_array().unwrap() {
        let dated = format!(
            "{}  {}",
            authority["notAfter"].as_str().unwrap(),
            authority["daysLeft"]
        );
        stable = stable.replace(&dated, "[not-after]  [days]");
    }
    stable
}

/// Every entry of the tar file `path`: its path and content.
fn tar_entries(path: &Path) -> BTreeMap<String, String> {
    let mut archive = tar::Archive::new(std::fs::File::open(path).unwrap());
    archive
        .entries()
        .unwrap()
        .map(|entry| {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().to_string_lossy().into_owned();
            let mut content = String::new();
            entry.read_to_string(&mut content).unwrap();
            (name, content)
        })
        .collect()
}

#[tokio::test]
async fn a_ready_cluster_read_and_annotated_through_the_plugin() {
    let (client, ns) = namespace("kubectl-plugin").await;
    let operator = Operator::on(&ns);
    for document in cluster(KAFKA, 1, 2) {
        apply(&client, &ns, &document).await;
    }
    // Built while the cluster gets ready.
    let binary = tokio::task::spawn_blocking(support::plugin::binary);
    ready(&client, &ns, KAFKA).await;
    binary.await.unwrap();

    // status, as JSON: the facts; as text: stable, once the run's own values are replaced.
    let facts: Value = serde_json::from_str(&run(&ns, &["status", KAFKA, "-o", "json"])).unwrap();
    assert_eq!(facts["state"], "Ready", "{facts:#}");
    assert_eq!(facts["paused"], false);
    assert_eq!(facts["generation"], facts["observedGeneration"]);
    let pools = facts["pools"].as_array().unwrap();
    let pool_nodes: Vec<(String, usize)> = pools
        .iter()
        .map(|pool| {
            (
                pool["name"].as_str().unwrap().to_owned(),
                pool["nodes"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(
        pool_nodes,
        [("broker".to_owned(), 2), ("controller".to_owned(), 1)]
    );
    let pods_of = |pool: &str| -> Vec<String> {
        pools
            .iter()
            .filter(|view| view["name"] == pool)
            .flat_map(|view| view["nodes"].as_array().unwrap())
            .map(|node| node["pod"].as_str().unwrap().to_owned())
            .collect()
    };
    let (brokers, controllers) = (pods_of("broker"), pods_of("controller"));
    let controller = controllers[0].clone();
    for node in pools
        .iter()
        .flat_map(|pool| pool["nodes"].as_array().unwrap())
    {
        assert_eq!(node["ready"], true, "{node}");
        assert_eq!(node["revision"], "current", "{node}");
        assert_eq!(node["manualRollingUpdate"], false, "{node}");
    }
    let authorities: Vec<&str> = facts["certificateAuthorities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["role"].as_str().unwrap())
        .collect();
    assert_eq!(authorities, ["cluster CA", "clients CA"]);
    let stable_facts: Value =
        serde_json::from_str(&facts.to_string().replace(&ns, "[namespace]")).unwrap();
    insta::assert_yaml_snapshot!("status_json", stable_facts, {
        ".clusterId" => "[cluster-id]",
        ".certificateAuthorities[].notAfter" => "[not-after]",
        ".certificateAuthorities[].daysLeft" => "[days]",
    });
    let text = run(&ns, &["status", KAFKA]);
    insta::assert_snapshot!("status_text", stable_status_text(&text, &facts, &ns));

    // certs: both CAs, every node, the cluster operator; each signed by the current CA.
    let table = run(&ns, &["certs", KAFKA]);
    for expected in [
        "cluster CA",
        "clients CA",
        "my-cluster-cluster-operator-certs",
    ]
    .into_iter()
    .chain(brokers.iter().chain(&controllers).map(String::as_str))
    {
        assert!(table.contains(expected), "{expected} missing in:\n{table}");
    }
    let certificates: Value =
        serde_json::from_str(&run(&ns, &["certs", KAFKA, "--output", "json"])).unwrap();
    let nodes: Vec<&Value> = certificates["certificates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["role"] == "node")
        .collect();
    assert_eq!(nodes.len(), 3, "{certificates:#}");
    for node in nodes {
        assert_eq!(node["signedBy"], "cluster CA ca.crt", "{node}");
        assert_eq!(node["subject"], "my-cluster-kafka", "{node}");
        assert!(node["daysLeft"].as_i64().unwrap() > 300, "{node}");
    }

    // support-bundle: the resources, and the Secrets' keys without their values.
    // The operator runs in the test: its Deployment is a stand-in without pods.
    operator_deployment(&client, &ns, &[]).await;
    let file = std::env::temp_dir().join(format!("kubectl-strimzi-{}.tar", std::process::id()));
    let printed = run(
        &ns,
        &[
            "support-bundle",
            KAFKA,
            "--output-file",
            file.to_str().unwrap(),
            "--operator-namespace",
            &ns,
        ],
    );
    assert!(printed.contains("entries"), "{printed}");
    let entries = tar_entries(&file);
    std::fs::remove_file(&file).unwrap();
    for expected in [
        "README.txt".to_owned(),
        "kafkas/my-cluster.yaml".to_owned(),
        "kafkanodepools/broker.yaml".to_owned(),
        "strimzipodsets/my-cluster-broker.yaml".to_owned(),
        format!("pods/{}.yaml", brokers[0]),
        format!("pods/{controller}.yaml"),
        format!("configmaps/{}.yaml", brokers[0]),
        "services/my-cluster-kafka-bootstrap.yaml".to_owned(),
        "events.yaml".to_owned(),
        "secrets.yaml".to_owned(),
    ] {
        assert!(
            entries.contains_key(&expected),
            "{expected} missing: {:?}",
            entries.keys()
        );
    }
    assert!(
        entries.contains_key("cluster-operator/deployment.yaml"),
        "{:?}",
        entries.keys()
    );
    let secrets = &entries["secrets.yaml"];
    for key in ["ca.crt", "ca.key", &format!("{}.crt", brokers[0])] {
        assert!(secrets.contains(key), "{key} missing in:\n{secrets}");
    }
    // No Secret value: neither the node certificate nor the CA key, as stored (PEM) or as the
    // API gives it (base64). The only certificate in the bundle is the CA certificate the
    // Kafka's status publishes for its TLS listener (`status.listeners[].certificates`).
    let secrets_api = Api::<Secret>::namespaced(client.clone(), &ns);
    let node_secret = secrets_api.get(&brokers[0]).await.unwrap();
    let ca_key_secret = secrets_api.get("my-cluster-cluster-ca").await.unwrap();
    let values = [
        node_secret.data.unwrap()[&format!("{}.crt", brokers[0])].clone(),
        ca_key_secret.data.unwrap()["ca.key"].clone(),
    ];
    let mut forbidden = vec!["PRIVATE KEY".to_owned()];
    for value in values {
        let encoded = serde_json::to_value(&value).unwrap();
        forbidden.push(encoded.as_str().unwrap()[..40].to_owned());
        let pem = String::from_utf8(value.0).unwrap();
        forbidden.push(pem.lines().nth(1).unwrap().to_owned());
    }
    for (path, content) in &entries {
        for secret in &forbidden {
            assert!(!content.contains(secret.as_str()), "{path} holds {secret}");
        }
        if path != "kafkas/my-cluster.yaml" {
            assert!(
                !content.contains("BEGIN CERTIFICATE"),
                "{path} holds a certificate"
            );
        }
    }

    // rebalance: approve is refused before there is a proposal.
    apply(
        &client,
        &ns,
        &json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaRebalance",
            "metadata": {"name": "my-rebalance", "labels": {"strimzi.io/cluster": KAFKA}},
            "spec": {},
        }),
    )
    .await;
    let refused = fails(&ns, &["rebalance", "approve", "my-rebalance"], 2);
    assert!(
        refused.contains("KafkaRebalance my-rebalance is ")
            && refused.contains("approve needs a proposal to approve (state ProposalReady)"),
        "{refused}"
    );

    // pause: the annotation, then the operator reports the reconciliation paused.
    let paused = run(&ns, &["pause", KAFKA]);
    assert!(
        paused.starts_with("kafka.kafka.strimzi.io/my-cluster paused"),
        "{paused}"
    );
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), &ns);
    let kafka = kafkas.get(KAFKA).await.unwrap();
    assert_eq!(
        annotation(&kafka, "strimzi.io/pause-reconciliation").as_deref(),
        Some("true")
    );
    wait_for(
        &kafkas,
        KAFKA,
        "the Kafka to be ReconciliationPaused",
        |kafka| {
            let paused = condition(kafka?, "ReconciliationPaused")?;
            (paused.status.as_deref() == Some("True")).then_some(())
        },
    )
    .await;

    // roll, while paused (the operator leaves the annotations alone meanwhile).
    let rolled = run(&ns, &["roll", "pool", "broker"]);
    assert!(
        rolled.contains("strimzipodset.core.strimzi.io/my-cluster-broker annotated")
            && rolled.contains("Kafka my-cluster is paused: nothing restarts until"),
        "{rolled}"
    );
    let pod_sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    let broker_set = pod_sets.get("my-cluster-broker").await.unwrap();
    assert_eq!(
        annotation(&broker_set, "strimzi.io/manual-rolling-update").as_deref(),
        Some("true")
    );
    let rolled = run(&ns, &["roll", "pod", &controller]);
    assert!(
        rolled.contains(&format!("pod/{controller} annotated")),
        "{rolled}"
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let controller_pod = pods.get(&controller).await.unwrap();
    assert_eq!(
        annotation(&controller_pod, "strimzi.io/manual-rolling-update").as_deref(),
        Some("true")
    );
    let missing = fails(&ns, &["roll", "pod", "no-such-pod"], 2);
    assert!(missing.contains("Pod no-such-pod not found"), "{missing}");
    apply(
        &client,
        &ns,
        &json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "not-kafka"},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        }),
    )
    .await;
    let refused = fails(&ns, &["roll", "pod", "not-kafka"], 2);
    assert!(
        refused.contains("pod not-kafka has no strimzi.io/cluster label"),
        "{refused}"
    );
    let rolled = run(&ns, &["roll", "cluster", KAFKA]);
    for pod_set in ["my-cluster-broker", "my-cluster-controller"] {
        assert!(
            rolled.contains(&format!(
                "strimzipodset.core.strimzi.io/{pod_set} annotated"
            )),
            "{rolled}"
        );
    }
    let missing = fails(&ns, &["status", "no-such-kafka"], 2);
    assert!(
        missing.contains(&format!("Kafka no-such-kafka not found in namespace {ns}")),
        "{missing}"
    );
    let facts: Value = serde_json::from_str(&run(&ns, &["status", KAFKA, "-o", "json"])).unwrap();
    assert_eq!(facts["paused"], true);
    let pending: Vec<String> = facts["pools"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|pool| pool["nodes"].as_array().unwrap())
        .filter(|node| node["manualRollingUpdate"] == true)
        .map(|node| node["pod"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(pending, [brokers.clone(), controllers.clone()].concat());

    // certs --renew: force-renew on the CA's certificate Secret.
    let renewed = run(&ns, &["certs", KAFKA, "--renew", "cluster-ca"]);
    assert!(
        renewed.contains("secret/my-cluster-cluster-ca-cert annotated strimzi.io/force-renew=true"),
        "{renewed}"
    );
    let ca = Api::<Secret>::namespaced(client.clone(), &ns)
        .get("my-cluster-cluster-ca-cert")
        .await
        .unwrap();
    assert_eq!(
        annotation(&ca, "strimzi.io/force-renew").as_deref(),
        Some("true")
    );

    // resume: the annotation is gone; resuming again says there was nothing to resume.
    let resumed = run(&ns, &["resume", KAFKA]);
    assert!(
        resumed.starts_with("kafka.kafka.strimzi.io/my-cluster resumed"),
        "{resumed}"
    );
    let kafka = kafkas.get(KAFKA).await.unwrap();
    assert_eq!(annotation(&kafka, "strimzi.io/pause-reconciliation"), None);
    let again = run(&ns, &["resume", KAFKA]);
    assert!(again.contains("is not paused"), "{again}");

    // Once resumed, the operator renews the cluster CA; replaced (a new key), the CA keeps its
    // old certificate for trust, and certs lists both, each node signed by one of them.
    let secrets_api = Api::<Secret>::namespaced(client.clone(), &ns);
    wait_for(
        &secrets_api,
        "my-cluster-cluster-ca-cert",
        "the cluster CA renewed",
        |secret| {
            let secret = secret?;
            (annotation(secret, "strimzi.io/force-renew").is_none()).then_some(())
        },
    )
    .await;
    support::force(
        &client,
        &ns,
        "my-cluster-cluster-ca",
        "strimzi.io/force-replace",
    )
    .await;
    wait_for(
        &secrets_api,
        "my-cluster-cluster-ca-cert",
        "the old cluster CA certificate kept",
        |secret| {
            let secret = secret?;
            secret
                .data
                .as_ref()?
                .keys()
                .any(|key| key.starts_with("ca-"))
                .then_some(())
        },
    )
    .await;
    let certificates: Value =
        serde_json::from_str(&run(&ns, &["certs", KAFKA, "--output", "json"])).unwrap();
    let rows = certificates["certificates"].as_array().unwrap();
    let cluster_ca: Vec<(&str, &Value, &str)> = rows
        .iter()
        .filter(|row| row["role"] == "cluster CA")
        .map(|row| {
            (
                row["key"].as_str().unwrap(),
                &row["current"],
                row["subject"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(cluster_ca.len(), 2, "{certificates:#}");
    assert_eq!(cluster_ca[0], ("ca.crt", &json!(true), "cluster-ca v1"));
    assert!(cluster_ca[1].0.starts_with("ca-20") && cluster_ca[1].0.ends_with("Z.crt"));
    assert_eq!(
        (cluster_ca[1].1, cluster_ca[1].2),
        (&json!(false), "cluster-ca v0")
    );
    for row in rows.iter().filter(|row| row["role"] == "node") {
        assert!(
            row["signedBy"]
                .as_str()
                .unwrap()
                .starts_with("cluster CA ca"),
            "{row}"
        );
    }

    operator.stop().await;
}

/// A copy of the admin kubeconfig whose user impersonates ServiceAccount `account` of `ns`.
fn impersonating(ns: &str, account: &str) -> PathBuf {
    let admin = std::fs::read_to_string(support::env().control_plane().kubeconfig()).unwrap();
    let mut document: serde_yaml_ng::Value = serde_yaml_ng::from_str(&admin).unwrap();
    for user in document["users"].as_sequence_mut().unwrap() {
        user["user"]["as"] = format!("system:serviceaccount:{ns}:{account}").into();
    }
    let path = support::env()
        .log_dir()
        .join(format!("kubeconfig-{ns}-{account}"));
    std::fs::write(&path, serde_yaml_ng::to_string(&document).unwrap()).unwrap();
    path
}

#[tokio::test]
async fn missing_permissions_are_named() {
    let (client, ns) = namespace("kubectl-plugin-rbac").await;
    apply(&client, &ns, &support::kafka(KAFKA, 1)).await;
    for document in [
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reader"}}),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "kafka-reader"},
            "rules": [{
                "apiGroups": ["kafka.strimzi.io"],
                "resources": ["kafkas"],
                "verbs": ["get", "list"],
            }],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "kafka-reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kafka-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}],
        }),
    ] {
        apply(&client, &ns, &document).await;
    }
    let kubeconfig = impersonating(&ns, "reader");
    let status = run_as(&kubeconfig, &ns, &["status", KAFKA]);
    let pause = run_as(&kubeconfig, &ns, &["pause", KAFKA]);
    assert_eq!(status.code, 3, "{status:?}");
    assert_eq!(
        status.stderr.trim_end(),
        format!(
            "kubectl strimzi: not allowed to list pods in namespace {ns}: ask for RBAC permission to list pods"
        )
    );
    assert_eq!(pause.code, 3, "{pause:?}");
    assert!(
        pause.stderr.contains(&format!(
            "not allowed to patch kafkas.kafka.strimzi.io in namespace {ns}"
        )),
        "{pause:?}"
    );
    // support-bundle goes on without what it may not read, and says so in the bundle.
    let file = support::env().log_dir().join(format!("bundle-{ns}.tar"));
    let bundled = run_as(
        &kubeconfig,
        &ns,
        &[
            "support-bundle",
            KAFKA,
            "--output-file",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(bundled.code, 0, "{bundled:?}");
    assert!(
        bundled.stdout.contains("could not be collected"),
        "{bundled:?}"
    );
    let entries = tar_entries(&file);
    assert!(
        entries.contains_key("kafkas/my-cluster.yaml"),
        "{:?}",
        entries.keys()
    );
    assert!(
        entries["notes/pods.txt"].contains(&format!("not allowed to list pods in namespace {ns}")),
        "{:?}",
        entries.get("notes/pods.txt")
    );
    assert!(
        entries["notes/secrets.txt"].contains("not allowed to list secrets"),
        "{:?}",
        entries.get("notes/secrets.txt")
    );

    // As the admin, a Kafka no operator has looked at yet: no status, no nodes, no error.
    let admin = support::env().control_plane().kubeconfig();
    let unreconciled = run_as(admin, &ns, &["status", KAFKA]);
    assert_eq!(unreconciled.code, 0, "{unreconciled:?}");
    for expected in [
        "State:           Unknown",
        "(not observed yet)",
        "none yet: the operator has not reported a status",
        "none: no node pools and no pods yet",
        "none yet: the operator has not created the CA Secrets",
    ] {
        assert!(
            unreconciled.stdout.contains(expected),
            "{expected}: {unreconciled:?}"
        );
    }

    // The Kafka is unchanged.
    let kafka = Api::<Kafka>::namespaced(client.clone(), &ns)
        .get(KAFKA)
        .await
        .unwrap();
    assert!(
        !kafka
            .annotations()
            .contains_key("strimzi.io/pause-reconciliation")
    );
}

/// The pods whose running `strimzi.io/revision` is not the one their StrimziPodSet now
/// describes.
async fn outdated_pods(client: &Client, namespace: &str, cluster: &str) -> Vec<String> {
    let sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let described = strimzi_cluster_operator::pod_set::described_annotations(
        &sets.list(&ListParams::default()).await.unwrap().items,
    );
    let selector = format!("strimzi.io/kind=Kafka,strimzi.io/cluster={cluster}");
    let mut outdated: Vec<String> = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items
        .iter()
        .filter(|pod| {
            described.get(&pod.name_any()).is_some_and(|wanted| {
                definition_revisions(Some(wanted))
                    != definition_revisions(pod.metadata.annotations.as_ref())
            })
        })
        .map(ResourceExt::name_any)
        .collect();
    outdated.sort();
    outdated
}

/// The Kafka pods in the order the roller restarts them: controllers, then brokers, each by
/// node ID.
async fn rolling_order(client: &Client, namespace: &str, cluster: &str) -> Vec<String> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let selector = format!("strimzi.io/kind=Kafka,strimzi.io/cluster={cluster}");
    let mut ranked: Vec<(bool, i32, String)> = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items
        .iter()
        .map(|pod| {
            let name = pod.name_any();
            let controller = pod
                .labels()
                .get("strimzi.io/controller-role")
                .map(String::as_str)
                == Some("true");
            let id = name.rsplit('-').next().unwrap().parse().unwrap();
            (!controller, id, name)
        })
        .collect();
    ranked.sort();
    ranked.into_iter().map(|(_, _, name)| name).collect()
}

/// `kubectl strimzi plan` on a cluster the operator made Ready: an unchanged Kafka plans
/// nothing (the plan builds exactly the objects the operator applied); a dynamic option, a
/// static option, a pool scaled, a template label, a listener added and resources changed are
/// planned as the operator's model and roller decide, and for the last three the pods the plan
/// restarts are the ones whose pods the operator then describes anew; an invalid change, and a
/// static quorum's controllers scaled, are refused with the operator's reason, and a dynamic
/// quorum's voter changes restart nothing.
#[tokio::test(flavor = "multi_thread")]
async fn plan_predicts_what_the_operator_does() {
    let (client, ns) = support::namespace("plan").await;
    let _operator = support::Operator::on(&ns);
    operator_deployment(
        &client,
        &ns,
        &[("STRIMZI_KAFKA_HOST_RESOLUTION", "ip-addresses-only")],
    )
    .await;
    // "c" for most changes; "l" and "r" (pools of their own names) for a listener added and
    // resources changed, each compared with what the operator then does.
    for document in support::cluster("c", 1, 2)
        .into_iter()
        .chain(small_cluster("l"))
        .chain(small_cluster("r"))
    {
        support::apply(&client, &ns, &document).await;
    }
    for name in ["c", "l", "r"] {
        support::ready(&client, &ns, name).await;
    }
    // In the roller's order: the controller, then the brokers by node ID.
    let pods = rolling_order(&client, &ns, "c").await;
    let with_reason = |reason: &str| -> Vec<(String, Vec<String>)> {
        pods.iter()
            .map(|pod| (pod.clone(), vec![reason.to_owned()]))
            .collect()
    };

    // Nothing changed: nothing planned.
    let started = std::time::Instant::now();
    let unchanged = plan(support::env(), &ns, &["c"]);
    // A figure for the README, not an assertion.
    println!(
        "figure: kubectl strimzi plan of an unchanged 1 + 2 node cluster (debug build, kwok): {:.2}s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(unchanged["refused"], Value::Null, "{unchanged:#}");
    assert_eq!(objects(&unchanged), Vec::<String>::new(), "{unchanged:#}");
    assert_eq!(restarts(&unchanged), Vec::new());
    assert_eq!(unchanged["liveChanges"], json!([]));
    assert_eq!(unchanged["reloads"], json!([]));

    // A dynamic option: set on the running brokers, nothing restarts.
    let dynamic = plan(
        support::env(),
        &ns,
        &["c", "--set", "spec.kafka.config.log.retention.ms=3600000"],
    );
    assert_eq!(restarts(&dynamic), Vec::new(), "{dynamic:#}");
    assert_eq!(
        dynamic["liveChanges"],
        json!([{"option": "log.retention.ms", "from": null, "to": "3600000"}])
    );

    // A static option (of every node's configuration): each node restarts, one after the
    // other, controllers first.
    let static_option = plan(
        support::env(),
        &ns,
        &[
            "c",
            "--set",
            "spec.kafka.config.auto.create.topics.enable=false",
        ],
    );
    assert_eq!(
        restarts(&static_option),
        with_reason("ConfigChangeRequiresRestart"),
        "{static_option:#}"
    );
    assert_eq!(static_option["liveChanges"], json!([]));
    // The same plan as people read it.
    let text = run(
        &ns,
        &[
            "plan",
            "c",
            "--set",
            "spec.kafka.config.auto.create.topics.enable=false",
        ],
    );
    insta::assert_snapshot!("plan_static_option_text", text.replace(&ns, "[namespace]"));

    // A pool scaled: a node, its objects, no restart.
    let scaled = plan_documents(
        support::env(),
        &ns,
        &[support::node_pool("c", "broker", 3, &["broker"])],
    );
    let added = scaled["nodesAdded"].as_array().unwrap().clone();
    assert_eq!(added.len(), 1, "{scaled:#}");
    assert_eq!(restarts(&scaled), Vec::new(), "{scaled:#}");
    let config_map = format!("create ConfigMap {}", added[0].as_str().unwrap());
    assert!(objects(&scaled).contains(&config_map), "{scaled:#}");

    // The controller pool scaled: a static quorum's controllers never change, refused as the
    // operator refuses it.
    let file = tempfile::NamedTempFile::new().unwrap();
    let three_controllers = support::node_pool("c", "controller", 3, &["controller"]);
    std::fs::write(
        file.path(),
        serde_yaml_ng::to_string(&three_controllers).unwrap(),
    )
    .unwrap();
    let path = file.path().to_str().unwrap();
    let static_quorum = kubectl_strimzi(
        support::env(),
        &ns,
        &["plan", "--output", "json", "-f", path],
    );
    assert_eq!(static_quorum.code, 4, "{static_quorum:?}");
    let refused: Value = serde_json::from_str(&static_quorum.stdout).unwrap();
    assert_eq!(
        refused["refused"]["reason"], "ControllerScalingRefused",
        "{refused:#}"
    );
    // Asked to move to a dynamic quorum: the controllers are added as voters one by one and
    // the voter lists that change restart nothing.
    let mut dynamic_kafka = support::kafka("c", 2);
    dynamic_kafka["metadata"]["annotations"] = json!({"strimzi.io/kraft-quorum": "dynamic"});
    let dynamic_quorum = plan_documents(support::env(), &ns, &[dynamic_kafka, three_controllers]);
    assert_eq!(dynamic_quorum["refused"], Value::Null, "{dynamic_quorum:#}");
    assert_eq!(
        dynamic_quorum["nodesAdded"].as_array().unwrap().len(),
        2,
        "{dynamic_quorum:#}"
    );
    assert_eq!(restarts(&dynamic_quorum), Vec::new(), "{dynamic_quorum:#}");
    assert!(
        dynamic_quorum["unknown"]
            .to_string()
            .contains("dynamic KRaft quorum"),
        "{dynamic_quorum:#}"
    );

    // An invalid change: refused with the operator's reason, exit code 4.
    let refused = kubectl_strimzi(
        support::env(),
        &ns,
        &["plan", "c", "--set", "spec.kafka.version=3.0.0"],
    );
    assert_eq!(refused.code, 4, "{refused:?}");
    assert!(refused.stdout.contains("Refused"), "{refused:?}");

    // A template label: every pod restarts, controllers first; once applied, the pods the
    // operator describes anew are exactly those.
    let labelled = plan(
        support::env(),
        &ns,
        &[
            "c",
            "--set",
            "spec.kafka.template.pod.metadata.labels.team=blue",
        ],
    );
    let planned = restarts(&labelled);
    assert_eq!(planned, with_reason("PodHasOldRevision"), "{labelled:#}");
    let text = run(
        &ns,
        &[
            "plan",
            "c",
            "--set",
            "spec.kafka.template.pod.metadata.labels.team=blue",
        ],
    );
    let first = format!("Restarts (in this order):\n  1. {} (node ", pods[0]);
    assert!(text.contains(&first), "{text}");
    support::merge_patch::<strimzi_api::kafka::Kafka>(
        &client,
        &ns,
        "c",
        json!({"spec": {"kafka": {"template": {"pod": {"metadata": {"labels": {"team": "blue"}}}}}}}),
    )
    .await;
    let mut planned_pods: Vec<String> = planned.into_iter().map(|(pod, _)| pod).collect();
    planned_pods.sort();
    let deadline = std::time::Instant::now() + support::WAIT;
    loop {
        let outdated = outdated_pods(&client, &ns, "c").await;
        if outdated == planned_pods {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the operator's outdated pods {outdated:?}, planned {planned_pods:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }

    // A listener added: the brokers restart (their certificates and configuration change),
    // the controller does not; the brokers are then what the operator describes anew.
    let listeners = json!({"spec": {"kafka": {"listeners": [
        {"name": "plain", "port": 9092, "type": "internal", "tls": false},
        {"name": "tls", "port": 9093, "type": "internal", "tls": true},
        {"name": "extra", "port": 9094, "type": "internal", "tls": true},
    ]}}});
    let added = planned_restarts_are_done::<Kafka>(&client, &ns, "l", "l", &listeners).await;
    assert!(
        added.iter().all(|pod| pod.starts_with("l-l-brokers-")) && added.len() == 2,
        "{added:?}"
    );
    // A pool's resources changed: its pods restart.
    let resources = json!({"spec": {"resources": {
        "requests": {"memory": "1536Mi", "cpu": "500m"},
    }}});
    let resized = planned_restarts_are_done::<strimzi_api::node_pool::KafkaNodePool>(
        &client,
        &ns,
        "r",
        "r-brokers",
        &resources,
    )
    .await;
    assert_eq!(resized, ["r-r-brokers-0", "r-r-brokers-1"], "{resized:?}");
}

/// Kafka `name` of one controller and two brokers, in pools named after it (so that clusters
/// share a namespace).
fn small_cluster(name: &str) -> Vec<Value> {
    vec![
        support::node_pool(name, &format!("{name}-controllers"), 1, &["controller"]),
        support::node_pool(name, &format!("{name}-brokers"), 2, &["broker"]),
        support::kafka(name, 2),
    ]
}

/// Plans `change` (a merge patch of the `K` `name` of Kafka `cluster`) from a file as a user
/// writes it, applies
/// it, and waits until the pods whose definition the operator changed are exactly the pods
/// the plan restarts; those pods, sorted.
async fn planned_restarts_are_done<K>(
    client: &Client,
    ns: &str,
    cluster: &str,
    name: &str,
    change: &Value,
) -> Vec<String>
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + serde::Serialize
        + serde::de::DeserializeOwned
        + Clone
        + std::fmt::Debug,
{
    let mut changed = serde_json::to_value(
        Api::<K>::namespaced(client.clone(), ns)
            .get(name)
            .await
            .unwrap(),
    )
    .unwrap();
    json_patch::merge(&mut changed, change);
    let planned = plan_documents(support::env(), ns, &[changed]);
    let mut pods: Vec<String> = restarts(&planned).into_iter().map(|(pod, _)| pod).collect();
    pods.sort();
    support::merge_patch::<K>(client, ns, name, change.clone()).await;
    let deadline = std::time::Instant::now() + support::WAIT;
    loop {
        let outdated = outdated_pods(client, ns, cluster).await;
        if outdated == pods {
            return pods;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{cluster}: the operator's outdated pods {outdated:?}, planned {pods:?}: {planned:#}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}
