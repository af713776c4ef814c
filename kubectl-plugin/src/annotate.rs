//! The commands that set Strimzi's annotations: `pause`, `resume`, `roll`, `rebalance`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use strimzi_api::annotations;
use strimzi_api::kafka::Kafka;
use strimzi_api::labels;
use strimzi_api::naming;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::rebalance::KafkaRebalance;
use strimzi_cluster_operator::rebalance::State;

use crate::connection::{Cluster, qualified};
use crate::error::PluginError;
use crate::options::{RebalanceAction, RollTarget};

/// The annotations that set `key` to `value`.
fn setting(key: &str, value: &str) -> BTreeMap<String, Option<String>> {
    BTreeMap::from([(key.to_owned(), Some(value.to_owned()))])
}

/// Sets (`paused`) or removes `strimzi.io/pause-reconciliation` on Kafka `kafka`.
pub async fn pause(cluster: &Cluster, kafka: &str, paused: bool) -> Result<String, PluginError> {
    let object = qualified::<Kafka>(kafka);
    if !paused {
        let current: Kafka = cluster.get(kafka).await?;
        if !is_paused(&current) {
            return Ok(format!(
                "{object} is not paused: the operator reconciles it already\n"
            ));
        }
    }
    let change = BTreeMap::from([(
        annotations::PAUSE_RECONCILIATION.to_owned(),
        paused.then(|| "true".to_owned()),
    )]);
    cluster.annotate::<Kafka>(kafka, &change).await?;
    Ok(if paused {
        format!(
            "{object} paused: the operator leaves it alone (status ReconciliationPaused) until `kubectl strimzi resume {kafka}`\n"
        )
    } else {
        format!("{object} resumed: the operator reconciles it again\n")
    })
}

/// Whether the Kafka's reconciliation is paused (`strimzi.io/pause-reconciliation: "true"`).
pub fn is_paused(kafka: &Kafka) -> bool {
    kafka
        .annotations()
        .get(annotations::PAUSE_RECONCILIATION)
        .is_some_and(|value| value == "true")
}

/// What `roll` annotated, and the Kafka it belongs to.
struct Rolled {
    kafka: String,
    annotated: Vec<String>,
}

/// Sets `strimzi.io/manual-rolling-update=true` on what `target` and `name` say.
pub async fn roll(
    cluster: &Cluster,
    target: RollTarget,
    name: &str,
) -> Result<String, PluginError> {
    let rolled = match target {
        RollTarget::Pod => roll_pod(cluster, name).await?,
        RollTarget::Pool => roll_pool(cluster, name).await?,
        RollTarget::Cluster => roll_cluster(cluster, name).await?,
    };
    let mut printed: String = rolled
        .annotated
        .iter()
        .map(|object| {
            format!(
                "{object} annotated {}=true\n",
                annotations::MANUAL_ROLLING_UPDATE
            )
        })
        .collect();
    printed.push_str(
        "The cluster operator restarts these pods at its next reconciliation, one at a time, \
         each only when its partitions stay available, and then removes the annotation.\n",
    );
    let kafka: Option<Kafka> = cluster.get_opt(&rolled.kafka).await?;
    if kafka.as_ref().is_some_and(is_paused) {
        printed.push_str(&format!(
            "Kafka {} is paused: nothing restarts until `kubectl strimzi resume {}`.\n",
            rolled.kafka, rolled.kafka
        ));
    }
    Ok(printed)
}

/// Annotates pod `name`, a Kafka node of a StrimziPodSet.
async fn roll_pod(cluster: &Cluster, name: &str) -> Result<Rolled, PluginError> {
    let pod: Pod = cluster.get(name).await?;
    let Some(kafka) = pod.labels().get(labels::CLUSTER).cloned() else {
        return Err(PluginError::Input(format!(
            "pod {name} has no {} label: it is not a pod of a Kafka cluster",
            labels::CLUSTER
        )));
    };
    let is_kafka_node = pod.labels().get(labels::KIND).map(String::as_str) == Some("Kafka");
    let owned_by_pod_set = pod
        .owner_references()
        .iter()
        .any(|owner| owner.kind == "StrimziPodSet");
    if !(is_kafka_node && owned_by_pod_set) {
        return Err(PluginError::Input(format!(
            "pod {name} belongs to {kafka} but is not a Kafka node of a StrimziPodSet \
             (label {}=Kafka): roll restarts Kafka nodes only",
            labels::KIND
        )));
    }
    cluster
        .annotate::<Pod>(name, &setting(annotations::MANUAL_ROLLING_UPDATE, "true"))
        .await?;
    Ok(Rolled {
        kafka,
        annotated: vec![qualified::<Pod>(name)],
    })
}

/// Annotates the StrimziPodSet of KafkaNodePool `pool`.
async fn roll_pool(cluster: &Cluster, pool: &str) -> Result<Rolled, PluginError> {
    let node_pool: KafkaNodePool = cluster.get(pool).await?;
    let Some(kafka) = node_pool.labels().get(labels::CLUSTER).cloned() else {
        return Err(PluginError::Input(format!(
            "KafkaNodePool {pool} has no {} label: it belongs to no Kafka",
            labels::CLUSTER
        )));
    };
    let pod_set = naming::pool_pod_set(&kafka, pool);
    if cluster.get_opt::<StrimziPodSet>(&pod_set).await?.is_none() {
        return Err(PluginError::Input(format!(
            "KafkaNodePool {pool} has no StrimziPodSet {pod_set} yet: the operator has not \
             created its pods, there is nothing to restart"
        )));
    }
    let annotated = vec![annotate_pod_set(cluster, &pod_set).await?];
    Ok(Rolled { kafka, annotated })
}

/// Annotates every StrimziPodSet of Kafka `kafka`.
async fn roll_cluster(cluster: &Cluster, kafka: &str) -> Result<Rolled, PluginError> {
    cluster.get::<Kafka>(kafka).await?;
    let pod_sets = cluster.kafka_pod_sets(kafka).await?;
    if pod_sets.is_empty() {
        return Err(PluginError::Input(format!(
            "Kafka {kafka} has no StrimziPodSets yet: the operator has not created its pods, \
             there is nothing to restart"
        )));
    }
    let mut annotated = Vec::new();
    for pod_set in &pod_sets {
        annotated.push(annotate_pod_set(cluster, &pod_set.name_any()).await?);
    }
    Ok(Rolled {
        kafka: kafka.to_owned(),
        annotated,
    })
}

/// Sets the manual rolling update annotation on StrimziPodSet `name`; its kubectl name.
async fn annotate_pod_set(cluster: &Cluster, name: &str) -> Result<String, PluginError> {
    cluster
        .annotate::<StrimziPodSet>(name, &setting(annotations::MANUAL_ROLLING_UPDATE, "true"))
        .await?;
    Ok(qualified::<StrimziPodSet>(name))
}

/// The annotation value of `action`.
fn request(action: RebalanceAction) -> &'static str {
    match action {
        RebalanceAction::Approve => "approve",
        RebalanceAction::Refresh => "refresh",
        RebalanceAction::Stop => "stop",
    }
}

/// The states in which the operator takes `action`, as Strimzi documents them (and the
/// operator's state machine, `strimzi_cluster_operator::rebalance::state`, implements).
fn accepted_in(action: RebalanceAction) -> &'static [State] {
    match action {
        RebalanceAction::Approve => &[State::ProposalReady],
        RebalanceAction::Stop => &[
            State::PendingProposal,
            State::ProposalReady,
            State::Rebalancing,
        ],
        RebalanceAction::Refresh => &[
            State::PendingProposal,
            State::ProposalReady,
            State::Rebalancing,
            State::Stopped,
            State::Ready,
            State::NotReady,
        ],
    }
}

/// What `action` needs, for the refusal.
fn needs(action: RebalanceAction) -> &'static str {
    match action {
        RebalanceAction::Approve => {
            "approve needs a proposal to approve (state ProposalReady): wait for Cruise Control's proposal, or `kubectl strimzi rebalance refresh` after a Stopped, Ready or NotReady rebalance"
        }
        RebalanceAction::Stop => {
            "stop needs a proposal being computed or a rebalance being carried out (PendingProposal, ProposalReady or Rebalancing)"
        }
        RebalanceAction::Refresh => {
            "refresh needs a rebalance the operator has started on (any state but New and ReconciliationPaused): wait for the operator, or resume the rebalance"
        }
    }
}

/// Sets `strimzi.io/rebalance` on KafkaRebalance `name`.
pub async fn rebalance(
    cluster: &Cluster,
    action: RebalanceAction,
    name: &str,
) -> Result<String, PluginError> {
    let current: KafkaRebalance = cluster.get(name).await?;
    let (state, _) = State::of(current.status.as_ref());
    let value = request(action);
    if !accepted_in(action).contains(&state) {
        return Err(PluginError::Input(format!(
            "KafkaRebalance {name} is {}: {}",
            state.as_str(),
            needs(action)
        )));
    }
    cluster
        .annotate::<KafkaRebalance>(name, &setting(annotations::REBALANCE, value))
        .await?;
    Ok(format!(
        "{} annotated {}={value} (state {}): the operator acts on it at its next reconciliation of the rebalance\n",
        qualified::<KafkaRebalance>(name),
        annotations::REBALANCE,
        state.as_str()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_taken_where_strimzi_takes_them() {
        let takes = |action| {
            State::ALL
                .into_iter()
                .filter(|state| accepted_in(action).contains(state))
                .map(State::as_str)
                .collect::<Vec<_>>()
        };
        assert_eq!(takes(RebalanceAction::Approve), ["ProposalReady"]);
        assert_eq!(
            takes(RebalanceAction::Stop),
            ["PendingProposal", "ProposalReady", "Rebalancing"]
        );
        assert_eq!(
            takes(RebalanceAction::Refresh),
            [
                "PendingProposal",
                "ProposalReady",
                "Rebalancing",
                "Stopped",
                "Ready",
                "NotReady"
            ]
        );
    }

    #[test]
    fn paused_only_with_true() {
        let with = |value: Option<&str>| {
            let kafka: Kafka = serde_json::from_value(serde_json::json!({
                "apiVersion": "kafka.strimzi.io/v1",
                "kind": "Kafka",
                "metadata": {
                    "name": "k",
                    "annotations": value
                        .map(|value| serde_json::json!({annotations::PAUSE_RECONCILIATION: value})),
                },
                "spec": {"kafka": {"listeners": []}},
            }))
            .unwrap();
            is_paused(&kafka)
        };
        assert!(with(Some("true")));
        assert!(!with(Some("false")));
        assert!(!with(None));
    }
}
