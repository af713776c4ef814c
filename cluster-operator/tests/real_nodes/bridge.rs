//! A KafkaBridge on real nodes: the cluster operator binary runs a small ephemeral Kafka and
//! an HTTP Bridge from the bridge image built locally, connected to the Kafka's TLS listener
//! with the cluster CA certificate as its trusted certificate (a Secret read through Kafka's
//! configuration providers), and an HTTP client inside the nodes' network (curl) produces
//! records through the bridge's Service and consumes them back through a bridge consumer
//! (create, subscribe, poll, delete).

use std::time::Instant;

use super::env;
use crate::support::fast_start::{fast_start_jvm, http_readiness_probe};
use crate::support::real_nodes::{
    POD_WAIT, delete_when_done, eventually, records, small_ephemeral_cluster, sorted,
};
use crate::support::{apply, ready, wait_for};
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{Api, ListParams};
use serde_json::{Value, json};
use strimzi_api::bridge::KafkaBridge;
use strimzi_tests::network::NodeNetwork;
use strimzi_tests::nodes::image_version;

const CLUSTER: &str = "br";
const BRIDGE: &str = "web";
/// Content types of the bridge's API (v2, JSON-embedded records).
const JSON_RECORDS: &str = "application/vnd.kafka.json.v2+json";
const API: &str = "application/vnd.kafka.v2+json";

/// One HTTP request with curl from inside the nodes' network: the status code and the body.
fn request(
    network: &NodeNetwork,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Result<(u16, String), String> {
    let prefix = network.exec_prefix();
    let mut command = std::process::Command::new(&prefix[0]);
    command.args(&prefix[1..]).args([
        "curl",
        "--silent",
        "--show-error",
        "--max-time",
        "20",
        "--request",
        method,
        "--write-out",
        "\n%{http_code}",
        url,
    ]);
    for (name, value) in headers {
        command.args(["--header", &format!("{name}: {value}")]);
    }
    if let Some(body) = body {
        command.args(["--data-binary", &body.to_string()]);
    }
    let output = command.output().map_err(|error| format!("curl: {error}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    let code = code
        .trim()
        .parse()
        .map_err(|_| format!("no status code in {text}"))?;
    Ok((code, body.to_owned()))
}

/// A request that must answer `expected`.
fn expect(
    network: &NodeNetwork,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
    expected: u16,
) -> Result<String, String> {
    let (code, text) = request(network, method, url, headers, body)?;
    if code == expected {
        Ok(text)
    } else {
        Err(format!("{method} {url}: {code} {text}"))
    }
}

#[tokio::test]
async fn a_bridge_on_real_nodes_produces_and_consumes_over_http() {
    let _room = super::room_for(super::Weight::Light).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("bridge").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let network = env.network().expect("a real-node environment");
    let _operator = super::operator_on(&ns);
    for document in small_ephemeral_cluster(CLUSTER, "256m") {
        apply(&client, &ns, &document).await;
    }
    // The bridge starts next to the Kafka (it connects to the brokers only for requests),
    // once the cluster CA certificate it trusts exists.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let ca_secret = format!("{CLUSTER}-cluster-ca-cert");
    wait_for(
        &secrets,
        &ca_secret,
        "the cluster CA certificate",
        |secret| secret.map(|_| ()),
    )
    .await;
    let applied = Instant::now();
    apply(
        &client,
        &ns,
        &json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaBridge",
            "metadata": {"name": BRIDGE},
            "spec": {
                "replicas": 1,
                "bootstrapServers": format!("{CLUSTER}-kafka-bootstrap:9093"),
                "tls": {"trustedCertificates": [{"secretName": ca_secret, "certificate": "ca.crt"}]},
                "http": {"port": 8080},
                "jvmOptions": fast_start_jvm("128m", "256m"),
                "readinessProbe": http_readiness_probe(),
                "consumer": {"config": {"auto.offset.reset": "earliest"}},
            }
        }),
    )
    .await;
    let bridges: Api<KafkaBridge> = Api::namespaced(client.clone(), &ns);
    let bridge = wait_for(&bridges, BRIDGE, "the KafkaBridge to be Ready", |bridge| {
        let bridge = bridge?;
        let status = bridge.status.as_ref()?;
        let ready = status.conditions.iter().flatten().any(|condition| {
            condition.r#type.as_deref() == Some("Ready")
                && condition.status.as_deref() == Some("True")
        });
        (ready && status.observed_generation == bridge.metadata.generation).then(|| bridge.clone())
    })
    .await;
    // A figure for the README, not an assertion.
    println!(
        "figure: KafkaBridge applied to Ready on a real node in {:.1}s",
        applied.elapsed().as_secs_f64()
    );
    ready(&client, &ns, CLUSTER).await;
    let url = bridge.status.unwrap().url.unwrap();
    assert_eq!(url, format!("http://{BRIDGE}-bridge-service.{ns}.svc:8080"));
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let pod = pods
        .list(&ListParams::default().labels(&format!("strimzi.io/name={BRIDGE}-bridge")))
        .await
        .unwrap()
        .items
        .remove(0);
    assert_eq!(
        pod.spec.as_ref().unwrap().containers[0].image.as_deref(),
        Some(image_version("BRIDGE_IMAGE"))
    );

    // Produce through the Service (the topic is created on first use).
    let topic = "bridge-records";
    let values = records("http", 5);
    let produce =
        json!({"records": values.iter().map(|value| json!({"value": value})).collect::<Vec<_>>()});
    let answer = eventually("producing through the bridge", || {
        let text = expect(
            network,
            "POST",
            &format!("{url}/topics/{topic}"),
            &[("Content-Type", JSON_RECORDS)],
            Some(&produce),
            200,
        )?;
        // Each record gets an offset, or an error code while the topic is being created.
        let answer: Value = serde_json::from_str(&text).map_err(|error| error.to_string())?;
        let offsets = answer["offsets"].as_array().cloned().unwrap_or_default();
        if offsets.len() == 5 && offsets.iter().all(|offset| offset.get("offset").is_some()) {
            Ok(answer)
        } else {
            Err(text)
        }
    })
    .await;
    assert_eq!(answer["offsets"].as_array().unwrap().len(), 5);

    // Consume back: a consumer in a group, subscribed, polled until all have come.
    let group = format!("{url}/consumers/bridge-group");
    let instance = format!("{group}/instances/reader");
    let created = expect(
        network,
        "POST",
        &group,
        &[("Content-Type", API)],
        Some(&json!({"name": "reader", "format": "json", "auto.offset.reset": "earliest"})),
        200,
    )
    .unwrap();
    assert!(created.contains("reader"), "{created}");
    expect(
        network,
        "POST",
        &format!("{instance}/subscription"),
        &[("Content-Type", API)],
        Some(&json!({"topics": [topic]})),
        204,
    )
    .unwrap();
    let started = Instant::now();
    let mut read: Vec<String> = Vec::new();
    while read.len() < values.len() {
        assert!(
            started.elapsed() < POD_WAIT,
            "consumed only {read:?} through the bridge"
        );
        let text = expect(
            network,
            "GET",
            &format!("{instance}/records?timeout=2000"),
            &[("Accept", JSON_RECORDS)],
            None,
            200,
        )
        .unwrap();
        let polled: Vec<Value> = serde_json::from_str(&text).unwrap();
        read.extend(
            polled
                .iter()
                .filter_map(|record| record["value"].as_str().map(str::to_owned)),
        );
    }
    assert_eq!(sorted(read), values);
    expect(
        network,
        "DELETE",
        &instance,
        &[("Content-Type", API)],
        None,
        204,
    )
    .unwrap();
}
