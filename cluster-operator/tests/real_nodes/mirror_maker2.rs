//! KafkaMirrorMaker2 on the real-node environment with Strimzi's Kafka image: two ephemeral
//! Kafka clusters of one dual-role node each, a KafkaMirrorMaker2 of one worker mirroring
//! `mirrored-*` topics and every group from `src` to `tgt` (short MirrorMaker intervals).
//! Records produced on the source are consumed on the target from `src.<topic>`
//! (DefaultReplicationPolicy); the offsets a group committed on the source are checkpointed
//! into `src.checkpoints.internal` on the target and synced to the group's own offsets there
//! (`sync.group.offsets.enabled`), as the group's coordinator there reports them; the source
//! connector's offsets are listed into its `listOffsets` ConfigMap through the
//! `strimzi.io/connector-offsets` and `strimzi.io/mirrormaker-connector` annotations. Prints
//! how long the resource takes to be Ready and a record to cross.

use std::time::Instant;

use super::env;
use crate::support::fast_start::{fast_start_jvm, http_readiness_probe};
use crate::support::real_nodes::{
    binaries, bootstrap, delete_when_done, eventually, records, small_ephemeral_cluster, sorted,
};
use crate::support::{apply, ready, wait_for};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use strimzi_api::mirror_maker2::KafkaMirrorMaker2;
use strimzi_tests::clients::ClusterClient;

const NAME: &str = "mm";
const TOPIC: &str = "mirrored-topic";
const GROUP: &str = "mirrored-group";
const OFFSETS_MAP: &str = "mm-offsets-listed";

/// MirrorMaker 2 from `src` to `tgt`, with intervals of seconds, the JVM flags of a fast start
/// and a quicker readiness probe.
fn mirror_maker2() -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaMirrorMaker2",
        "metadata": {"name": NAME},
        "spec": {
            "replicas": 1,
            "target": {
                "alias": "tgt",
                "bootstrapServers": "tgt-kafka-bootstrap:9092",
                "groupId": "mm-group",
                "configStorageTopic": "mm-configs",
                "offsetStorageTopic": "mm-offsets",
                "statusStorageTopic": "mm-status",
                "config": {
                    "config.storage.replication.factor": -1,
                    "offset.storage.replication.factor": -1,
                    "status.storage.replication.factor": -1,
                    "plugin.discovery": "service_load",
                    // Source offsets reach the offsets topic, and the listing, within seconds.
                    "offset.flush.interval.ms": 2000,
                },
            },
            "mirrors": [{
                "source": {"alias": "src", "bootstrapServers": "src-kafka-bootstrap:9092"},
                "sourceConnector": {"tasksMax": 1,
                    "listOffsets": {"toConfigMap": {"name": OFFSETS_MAP}},
                    "config": {
                    "replication.factor": -1,
                    "offset-syncs.topic.replication.factor": -1,
                    "sync.topic.acls.enabled": "false",
                    "refresh.topics.interval.seconds": 5,
                    "offset.lag.max": 0,
                }},
                "checkpointConnector": {"tasksMax": 1, "config": {
                    "checkpoints.topic.replication.factor": -1,
                    "sync.group.offsets.enabled": "true",
                    "sync.group.offsets.interval.seconds": 2,
                    "emit.checkpoints.interval.seconds": 2,
                    "refresh.groups.interval.seconds": 5,
                }},
                "topicsPattern": "mirrored-.*",
                "groupsPattern": ".*",
            }],
            "jvmOptions": fast_start_jvm("256m", "384m"),
            "readinessProbe": http_readiness_probe(),
        },
    })
}

#[tokio::test]
async fn mirror_maker_2_mirrors_records_and_checkpoints_groups() {
    let _room = super::room_for(super::Weight::Light).await;
    let env = env();
    let network = env.network().expect("a real-node environment");
    let client = env.client().await;
    let ns = env.namespace("mm2").await;
    let _deleted = delete_when_done(env, &[&ns]);
    let _operator = super::operator_on(&ns);
    for document in small_ephemeral_cluster("src", "512m")
        .into_iter()
        .chain(small_ephemeral_cluster("tgt", "512m"))
    {
        apply(&client, &ns, &document).await;
    }
    let source_kafka = ready(&client, &ns, "src").await;
    let target_kafka = ready(&client, &ns, "tgt").await;
    let kafka_client = binaries().join("strimzi-kafka-client");
    let source = ClusterClient::new(&kafka_client, network, &bootstrap(&source_kafka, "plain"));
    let target = ClusterClient::new(&kafka_client, network, &bootstrap(&target_kafka, "plain"));

    // Records on the source and a group that read them, before MirrorMaker 2 starts.
    eventually("producing on the source", || {
        source.produce(TOPIC, 5, "early")
    })
    .await;
    let read = eventually("the group reading on the source", || {
        source.consume_in_group(TOPIC, 5, GROUP)
    })
    .await;
    assert_eq!(sorted(read), records("early", 5));

    let applied = Instant::now();
    apply(&client, &ns, &mirror_maker2()).await;
    let api: Api<KafkaMirrorMaker2> = Api::namespaced(client.clone(), &ns);
    let status = wait_for(&api, NAME, "the KafkaMirrorMaker2 to be Ready", |mm2| {
        let mm2 = mm2?;
        let status = mm2.status.as_ref()?;
        let ready = status.conditions.as_ref()?.iter().any(|condition| {
            condition.r#type.as_deref() == Some("Ready")
                && condition.status.as_deref() == Some("True")
        });
        (ready && status.observed_generation == mm2.metadata.generation).then(|| status.clone())
    })
    .await;
    // A figure for the README, not an assertion.
    println!(
        "figure: KafkaMirrorMaker2 (1 worker, 2 connectors) applied to Ready on a real node in \
         {:.1}s",
        applied.elapsed().as_secs_f64()
    );
    let connectors: Vec<(String, String)> = status
        .connectors
        .unwrap_or_default()
        .iter()
        .map(|connector| {
            (
                connector.0["name"].as_str().unwrap_or_default().to_owned(),
                connector.0["connector"]["state"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        connectors,
        vec![
            (
                "src->tgt.MirrorSourceConnector".to_owned(),
                "RUNNING".to_owned()
            ),
            (
                "src->tgt.MirrorCheckpointConnector".to_owned(),
                "RUNNING".to_owned()
            ),
        ]
    );
    assert_eq!(
        status.url.as_deref(),
        Some(format!("http://{NAME}-mirrormaker2-api.{ns}.svc:8083").as_str())
    );

    // The records already there cross to the target under the source's alias.
    let mirrored = format!("src.{TOPIC}");
    let copied = eventually("the mirrored records on the target", || {
        target.clone().timeout(20).consume(&mirrored, 5)
    })
    .await;
    assert_eq!(sorted(copied), records("early", 5));

    // A new record, produced to consumed.
    let produced = Instant::now();
    source.produce(TOPIC, 1, "late").unwrap();
    let copied = eventually("the new record on the target", || {
        target.clone().timeout(20).consume(&mirrored, 6)
    })
    .await;
    println!(
        "figure: a record produced on the source consumed on the target after {:.1}s",
        produced.elapsed().as_secs_f64()
    );
    assert!(copied.contains(&"late-0".to_owned()), "{copied:?}");

    // The offsets the group committed on the source are checkpointed on the target.
    let checkpoints = eventually("a checkpoint of the group on the target", || {
        target
            .clone()
            .timeout(20)
            .consume("src.checkpoints.internal", 1)
    })
    .await;
    assert_eq!(checkpoints.len(), 1);

    // The group's offsets are synced: on the target it has committed, for the mirrored topic,
    // an offset past the start and not past the five records it read on the source.
    let synced = eventually("the group's offsets synced on the target", || {
        let offsets = target.clone().timeout(20).group_offsets(GROUP)?;
        offsets
            .iter()
            .find(|committed| committed.topic == mirrored && committed.partition == 0)
            .map(|committed| committed.offset)
            .ok_or_else(|| format!("no offset of {mirrored} yet: {offsets:?}"))
    })
    .await;
    assert!((1..=5).contains(&synced), "synced offset {synced}");

    // The source connector's offsets listed through the annotations, into its ConfigMap.
    let source_connector = "src->tgt.MirrorSourceConnector";
    api.patch(
        NAME,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {
            "strimzi.io/connector-offsets": "list",
            "strimzi.io/mirrormaker-connector": source_connector,
        }}})),
    )
    .await
    .unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let listed = wait_for(&config_maps, OFFSETS_MAP, "the listed offsets", |map| {
        map?.data
            .as_ref()?
            .get("src--tgt.MirrorSourceConnector.json")
            .cloned()
    })
    .await;
    assert!(listed.contains(TOPIC), "{listed}");
    wait_for(&api, NAME, "the offsets annotations removed", |mm2| {
        let annotations = mm2?.metadata.annotations.clone().unwrap_or_default();
        (!annotations.contains_key("strimzi.io/connector-offsets")
            && !annotations.contains_key("strimzi.io/mirrormaker-connector"))
        .then_some(())
    })
    .await;
}
