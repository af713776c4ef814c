//! Watching rolling restarts of a real-node cluster from outside: which pods were replaced,
//! in which order, and how many were down at once.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;

use super::real_nodes::is_ready;
use strimzi_tests::health::{Health, health};

/// Up to six JVMs restarting one after the other on two cores.
pub const ROLL_WAIT: Duration = Duration::from_secs(1500);

/// How a roll went, as watched from outside.
pub struct Roll {
    pub seconds: f64,
    /// The most pods seen restarting at once: deleted, being deleted, or replaced and not
    /// ready yet (a pod whose readiness merely flickers, or a replaced pod that was back and
    /// then crashed, is not the roller's doing).
    pub most_restarting: usize,
    /// The `NotReady` conditions (reason: message) the Kafka showed while the roll went on,
    /// each once: what a tool reading Strimzi's conditions (Argo CD) takes for a failure.
    pub degraded: Vec<String>,
}

/// Watches until every pod in `before` has been replaced and all are ready again. On every
/// look, `midway` gets the pods replaced and back (ready) so far, to act in the middle of the
/// roll (e.g. restart the operator, crash a pod).
pub async fn watch_roll(
    client: &Client,
    ns: &str,
    cluster: &str,
    before: &BTreeMap<String, String>,
    mut midway: impl FnMut(&BTreeSet<String>),
) -> Roll {
    let started = Instant::now();
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    let selector = format!("strimzi.io/cluster={cluster}");
    let mut most_restarting = 0;
    let mut degraded: Vec<String> = Vec::new();
    // Replaced pods seen ready, by name and UID: their restart is over.
    let mut back: BTreeSet<(String, String)> = BTreeSet::new();
    loop {
        let live = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .unwrap()
            .items;
        let ready_now: BTreeSet<String> = live
            .iter()
            .filter(|pod| pod.metadata.deletion_timestamp.is_none() && is_ready(pod))
            .map(ResourceExt::name_any)
            .collect();
        let replaced = |pod: &&Pod| {
            before
                .get(&pod.name_any())
                .is_some_and(|uid| Some(uid) != pod.uid().as_ref())
        };
        back.extend(
            live.iter()
                .filter(replaced)
                .filter(|pod| ready_now.contains(&pod.name_any()))
                .map(|pod| (pod.name_any(), pod.uid().unwrap_or_default())),
        );
        let restarting = before
            .iter()
            .filter(|(name, uid)| {
                live.iter()
                    .find(|pod| pod.name_any() == **name)
                    .is_none_or(|pod| {
                        pod.metadata.deletion_timestamp.is_some()
                            || (pod.uid().as_ref() != Some(*uid)
                                && !is_ready(pod)
                                && !back.contains(&(pod.name_any(), pod.uid().unwrap_or_default())))
                    })
            })
            .count();
        most_restarting = most_restarting.max(restarting);
        if let Ok(kafka) = kafkas.get(cluster).await {
            let status = serde_json::to_value(&kafka.status).unwrap_or_default();
            if health("Kafka", &status) == Health::Degraded {
                let not_ready = status["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|condition| condition["type"] == "NotReady");
                let seen = not_ready.map_or_else(String::new, |condition| {
                    format!("{}: {}", condition["reason"], condition["message"])
                });
                if !degraded.contains(&seen) {
                    degraded.push(seen);
                }
            }
        }
        let renewed = live.iter().filter(replaced).count();
        let back_now: BTreeSet<String> = back.iter().map(|(name, _)| name.clone()).collect();
        midway(&back_now);
        if renewed == before.len() && ready_now.len() == before.len() {
            return Roll {
                seconds: started.elapsed().as_secs_f64(),
                most_restarting,
                degraded,
            };
        }
        assert!(
            started.elapsed() < ROLL_WAIT,
            "the roll did not finish in {ROLL_WAIT:?}: {renewed} pods renewed, ready: {ready_now:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Sets `key` in the Kafka's `spec.kafka.config`.
pub async fn set_option(client: &Client, ns: &str, cluster: &str, key: &str, value: Value) {
    let kafkas: Api<Kafka> = Api::namespaced(client.clone(), ns);
    kafkas
        .patch(
            cluster,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"kafka": {"config": {key: value}}}})),
        )
        .await
        .unwrap();
}

/// The UIDs of the pods of `cluster` that are not being deleted, by name.
pub async fn pod_uids(client: &Client, ns: &str, cluster: &str) -> BTreeMap<String, String> {
    Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&format!("strimzi.io/cluster={cluster}")))
        .await
        .unwrap()
        .items
        .iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .map(|pod| (pod.name_any(), pod.uid().unwrap_or_default()))
        .collect()
}

/// The pods the operator restarted for `reason`, in the order of its Events.
pub async fn restarted_in_order(client: &Client, ns: &str, reason: &str) -> Vec<String> {
    restarted_in_order_noting(client, ns, reason, "").await
}

/// The pods the operator restarted for `reason` with a note that contains `note`, in the
/// order of its Events: for a reason Strimzi gives several causes (`CaCertHasOldGeneration`
/// is the cluster's or the clients CA's).
pub async fn restarted_in_order_noting(
    client: &Client,
    ns: &str,
    reason: &str,
    note: &str,
) -> Vec<String> {
    let mut events = events_noting(client, ns, "StrimziInitiatedPodRestart", reason, note).await;
    events.sort_by_key(|event| event.event_time.as_ref().map(|time| time.0));
    events
        .iter()
        .filter_map(|event| event.regarding.as_ref()?.name.clone())
        .collect()
}

/// The pods whose certificates the operator reloaded with a note that contains `note`.
pub async fn reloaded_noting(client: &Client, ns: &str, note: &str) -> BTreeSet<String> {
    events_noting(
        client,
        ns,
        "StrimziInitiatedCertificateReload",
        "CertificatesReloaded",
        note,
    )
    .await
    .into_iter()
    .filter_map(|event| event.regarding?.name)
    .collect()
}

/// The Events in `ns` with `action` and `reason` whose note contains `note`.
async fn events_noting(
    client: &Client,
    ns: &str,
    action: &str,
    reason: &str,
    note: &str,
) -> Vec<Event> {
    Api::<Event>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|event| {
            event.action.as_deref() == Some(action)
                && event.reason.as_deref() == Some(reason)
                && event.note.as_deref().unwrap_or_default().contains(note)
        })
        .collect()
}

/// The notes of the Events with `reason` in `ns`.
pub async fn event_notes(client: &Client, ns: &str, reason: &str) -> Vec<String> {
    Api::<Event>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|event| event.reason.as_deref() == Some(reason))
        .filter_map(|event| event.note)
        .collect()
}

/// How many times the operator has reloaded each pod's certificates without a restart (its
/// `CertificatesReloaded` Events, repeats counted in their series), by pod.
pub async fn reloads(client: &Client, ns: &str) -> BTreeMap<String, i32> {
    let mut counts = BTreeMap::new();
    for event in Api::<Event>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
    {
        if event.action.as_deref() != Some("StrimziInitiatedCertificateReload") {
            continue;
        }
        let Some(pod) = event.regarding.and_then(|regarding| regarding.name) else {
            continue;
        };
        let times = event.series.map_or(1, |series| series.count);
        *counts.entry(pod).or_default() += times;
    }
    counts
}

/// Waits until the operator has reloaded the certificates of every pod of `pods` once more
/// than `before` counted ([`reloads`]); the time that took.
pub async fn wait_for_reloads(
    client: &Client,
    ns: &str,
    pods: &BTreeMap<String, String>,
    before: &BTreeMap<String, i32>,
) -> Duration {
    let started = Instant::now();
    loop {
        let now = reloads(client, ns).await;
        let pending: Vec<&String> = pods
            .keys()
            .filter(|pod| now.get(*pod).unwrap_or(&0) <= before.get(*pod).unwrap_or(&0))
            .collect();
        if pending.is_empty() {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < ROLL_WAIT,
            "no certificate reload of {pending:?} in {ROLL_WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
