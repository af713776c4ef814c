//! `status`: a Kafka cluster's readiness, versions, conditions, nodes by pool, CA expiry,
//! pending restarts and rebalances.

use std::fmt::Write as _;

use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use serde::Serialize;
use serde_json::Value;
use strimzi_api::annotations;
use strimzi_api::common::Condition;
use strimzi_api::conditions;
use strimzi_api::kafka::Kafka;
use strimzi_api::labels;
use strimzi_api::naming;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::rebalance::KafkaRebalance;
use strimzi_cluster_operator::rebalance::State;

use crate::annotate::is_paused;
use crate::certs::{CertificateRow, ca_rows};
use crate::connection::{Cluster, cluster_selector};
use crate::error::PluginError;
use crate::options::Output;
use crate::text::{columns, json};

/// A status condition, as shown.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionView {
    /// Its type (`Ready`, `Warning`, ...).
    pub r#type: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Its reason, if any.
    pub reason: Option<String>,
    /// Its message, if any.
    pub message: Option<String>,
}

/// One Kafka node (pod).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeView {
    /// The pod's name.
    pub pod: String,
    /// The node id (the pod name's last part).
    pub node_id: Option<i32>,
    /// `controller` and/or `broker`, from the pod's role labels.
    pub roles: Vec<String>,
    /// Whether the pod is Ready.
    pub ready: bool,
    /// The pod's phase.
    pub phase: Option<String>,
    /// Restarts of its containers.
    pub restarts: i32,
    /// `current` when the pod runs what its StrimziPodSet describes, `restart pending` when
    /// the StrimziPodSet describes another revision, `not in a StrimziPodSet` otherwise.
    pub revision: String,
    /// Whether `strimzi.io/manual-rolling-update` asks the operator to restart it (on the
    /// pod or its StrimziPodSet).
    pub manual_rolling_update: bool,
}

/// One node pool and its nodes.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolView {
    /// The KafkaNodePool's name.
    pub name: String,
    /// Its roles (empty when the pool is only known from its pods' labels).
    pub roles: Vec<String>,
    /// Its `spec.replicas`.
    pub replicas: Option<i32>,
    /// Its nodes.
    pub nodes: Vec<NodeView>,
}

/// One KafkaRebalance of the cluster.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RebalanceView {
    /// Its name.
    pub name: String,
    /// Its state (the type of its condition with status `True`; `New` without one).
    pub state: String,
}

/// Everything `status` shows.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// The Kafka's name.
    pub kafka: String,
    /// Its namespace.
    pub namespace: String,
    /// `Ready`, `NotReady`, `ReconciliationPaused` (its condition with status `True`), or
    /// `Unknown` without status.
    pub state: String,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// `status.observedGeneration`.
    pub observed_generation: Option<i64>,
    /// `status.kafkaVersion`.
    pub kafka_version: Option<String>,
    /// `status.kafkaMetadataVersion`.
    pub metadata_version: Option<String>,
    /// `status.clusterId`.
    pub cluster_id: Option<String>,
    /// Whether `strimzi.io/pause-reconciliation: "true"` is set.
    pub paused: bool,
    /// Every condition of the status.
    pub conditions: Vec<ConditionView>,
    /// The node pools and their nodes.
    pub pools: Vec<PoolView>,
    /// The CA certificates.
    pub certificate_authorities: Vec<CertificateRow>,
    /// The KafkaRebalances of the cluster.
    pub rebalances: Vec<RebalanceView>,
}

/// The conditions of `kafka` as shown.
fn condition_views(kafka: &Kafka) -> Vec<ConditionView> {
    kafka
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|condition: &Condition| ConditionView {
            r#type: condition.r#type.clone().unwrap_or_default(),
            status: condition.status.clone().unwrap_or_default(),
            reason: condition.reason.clone(),
            message: condition.message.clone(),
        })
        .collect()
}

/// The type of the first of Ready, NotReady and ReconciliationPaused with status `True`.
fn state_of(conditions: &[ConditionView]) -> String {
    [
        conditions::READY,
        conditions::NOT_READY,
        conditions::RECONCILIATION_PAUSED,
    ]
    .into_iter()
    .find(|wanted| {
        conditions.iter().any(|condition| {
            condition.r#type == *wanted && condition.status == conditions::STATUS_TRUE
        })
    })
    .unwrap_or("Unknown")
    .to_owned()
}

/// The node id of pod `name` (`<cluster>-<pool>-<id>`).
fn node_id(name: &str) -> Option<i32> {
    name.rsplit_once('-')?.1.parse().ok()
}

/// Whether a label (or annotation) value is `"true"`.
fn is_true(value: Option<&String>) -> bool {
    value.is_some_and(|value| value == "true")
}

/// The roles of a pod, from its role labels.
fn pod_roles(pod: &Pod) -> Vec<String> {
    [
        (labels::CONTROLLER_ROLE, "controller"),
        (labels::BROKER_ROLE, "broker"),
    ]
    .into_iter()
    .filter(|(label, _)| is_true(pod.labels().get(*label)))
    .map(|(_, role)| role.to_owned())
    .collect()
}

/// The StrimziPodSet `pod` belongs to: its owner, else `<cluster>-<pool>`.
fn pod_set_of<'a>(
    pod: &Pod,
    kafka: &str,
    pod_sets: &'a [StrimziPodSet],
) -> Option<&'a StrimziPodSet> {
    let owner = pod
        .owner_references()
        .iter()
        .find(|owner| owner.kind == "StrimziPodSet")
        .map(|owner| owner.name.clone())
        .or_else(|| {
            let pool = pod.labels().get(labels::POOL_NAME)?;
            Some(naming::pool_pod_set(kafka, pool))
        })?;
    pod_sets.iter().find(|set| set.name_any() == owner)
}

/// The `strimzi.io/revision` of pod `name` in the StrimziPodSet's `spec.pods`; `None` when the
/// set has no such pod.
fn desired_revision(pod_set: &StrimziPodSet, name: &str) -> Option<Option<String>> {
    let described = pod_set.spec.pods.iter().find(|described| {
        described
            .0
            .get("metadata")
            .and_then(|meta| meta.get("name"))
            == Some(&Value::from(name))
    })?;
    Some(
        described
            .0
            .get("metadata")
            .and_then(|meta| meta.get("annotations"))
            .and_then(|annotations| annotations.get(annotations::REVISION))
            .and_then(Value::as_str)
            .map(str::to_owned),
    )
}

/// The node view of `pod`.
fn node_view(pod: &Pod, kafka: &str, pod_sets: &[StrimziPodSet]) -> NodeView {
    let name = pod.name_any();
    let status = pod.status.as_ref();
    let ready = status
        .and_then(|status| status.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|condition| condition.type_ == "Ready" && condition.status == "True");
    let restarts = status
        .and_then(|status| status.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .map(|container| container.restart_count)
        .sum();
    let pod_set = pod_set_of(pod, kafka, pod_sets);
    let running = pod.annotations().get(annotations::REVISION).cloned();
    let revision = match pod_set.and_then(|set| desired_revision(set, &name)) {
        None => "not in a StrimziPodSet",
        Some(desired) if desired.is_some() && desired == running => "current",
        Some(_) => "restart pending",
    };
    let manual = is_true(pod.annotations().get(annotations::MANUAL_ROLLING_UPDATE))
        || pod_set
            .is_some_and(|set| is_true(set.annotations().get(annotations::MANUAL_ROLLING_UPDATE)));
    NodeView {
        node_id: node_id(&name),
        pod: name,
        roles: pod_roles(pod),
        ready,
        phase: status.and_then(|status| status.phase.clone()),
        restarts,
        revision: revision.to_owned(),
        manual_rolling_update: manual,
    }
}

/// The pools of the cluster with their nodes: every KafkaNodePool, then the pools only the
/// pods name.
fn pool_views(
    kafka: &str,
    pools: &[KafkaNodePool],
    pods: &[Pod],
    pod_sets: &[StrimziPodSet],
) -> Vec<PoolView> {
    let mut views: Vec<PoolView> = pools
        .iter()
        .map(|pool| PoolView {
            name: pool.name_any(),
            roles: pool
                .spec
                .roles
                .iter()
                .filter_map(|role| serde_json::to_value(role).ok())
                .filter_map(|role| role.as_str().map(str::to_owned))
                .collect(),
            replicas: Some(pool.spec.replicas),
            nodes: Vec::new(),
        })
        .collect();
    for pod in pods {
        let pool = pod
            .labels()
            .get(labels::POOL_NAME)
            .cloned()
            .unwrap_or_else(|| "(no pool)".to_owned());
        let node = node_view(pod, kafka, pod_sets);
        match views.iter_mut().find(|view| view.name == pool) {
            Some(view) => view.nodes.push(node),
            None => views.push(PoolView {
                name: pool,
                roles: Vec::new(),
                replicas: None,
                nodes: vec![node],
            }),
        }
    }
    views
}

/// The KafkaRebalances of Kafka `kafka` and their states.
async fn rebalances(cluster: &Cluster, kafka: &str) -> Result<Vec<RebalanceView>, PluginError> {
    let rebalances: Vec<KafkaRebalance> = cluster.list(&cluster_selector(kafka)).await?;
    Ok(rebalances
        .iter()
        .map(|rebalance| RebalanceView {
            name: rebalance.name_any(),
            state: State::of(rebalance.status.as_ref()).0.as_str().to_owned(),
        })
        .collect())
}

/// Reads everything `status` shows of Kafka `kafka`.
pub async fn read(cluster: &Cluster, kafka: &str) -> Result<ClusterStatus, PluginError> {
    let resource: Kafka = cluster.get(kafka).await?;
    let pods = cluster.kafka_pods(kafka).await?;
    let pod_sets = cluster.kafka_pod_sets(kafka).await?;
    let pools: Vec<KafkaNodePool> = cluster.list(&cluster_selector(kafka)).await?;
    let certificate_authorities = ca_rows(cluster, kafka).await?;
    let rebalances = rebalances(cluster, kafka).await?;
    let conditions = condition_views(&resource);
    let status = resource.status.as_ref();
    Ok(ClusterStatus {
        kafka: kafka.to_owned(),
        namespace: cluster.namespace.clone(),
        state: state_of(&conditions),
        generation: resource.metadata.generation,
        observed_generation: status.and_then(|status| status.observed_generation),
        kafka_version: status.and_then(|status| status.kafka_version.clone()),
        metadata_version: status.and_then(|status| status.kafka_metadata_version.clone()),
        cluster_id: status.and_then(|status| status.cluster_id.clone()),
        paused: is_paused(&resource),
        conditions,
        pools: pool_views(kafka, &pools, &pods, &pod_sets),
        certificate_authorities,
        rebalances,
    })
}

/// `value`, or `-`.
fn or_dash<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| value.to_string())
}

/// The summary lines.
fn render_summary(status: &ClusterStatus, printed: &mut String) {
    let _ = writeln!(
        printed,
        "Kafka {} in namespace {}",
        status.kafka, status.namespace
    );
    let _ = writeln!(printed, "  State:           {}", status.state);
    let generation = match (status.generation, status.observed_generation) {
        (Some(generation), Some(observed)) if generation == observed => {
            format!("{generation} (observed {observed}: up to date)")
        }
        (generation, Some(observed)) => format!(
            "{} (observed {observed}: the operator has not reconciled the latest spec yet)",
            or_dash(generation)
        ),
        (generation, None) => format!("{} (not observed yet)", or_dash(generation)),
    };
    let _ = writeln!(printed, "  Generation:      {generation}");
    let _ = writeln!(
        printed,
        "  Kafka version:   {} (metadata version {})",
        or_dash(status.kafka_version.as_deref()),
        or_dash(status.metadata_version.as_deref())
    );
    let _ = writeln!(
        printed,
        "  Cluster id:      {}",
        or_dash(status.cluster_id.as_deref())
    );
    let reconciliation = if status.paused {
        format!(
            "paused ({}=true): `kubectl strimzi resume {}` to resume",
            annotations::PAUSE_RECONCILIATION,
            status.kafka
        )
    } else {
        "active".to_owned()
    };
    let _ = writeln!(printed, "  Reconciliation:  {reconciliation}");
}

/// The conditions' lines.
fn render_conditions(status: &ClusterStatus, printed: &mut String) {
    printed.push_str("\nConditions:\n");
    if status.conditions.is_empty() {
        printed.push_str("  none yet: the operator has not reported a status\n");
        return;
    }
    let type_width = status
        .conditions
        .iter()
        .map(|condition| condition.r#type.len())
        .max()
        .unwrap_or_default();
    for condition in &status.conditions {
        let line = format!(
            "  {:type_width$}  {:7}  {}",
            condition.r#type,
            condition.status,
            condition.reason.as_deref().unwrap_or_default()
        );
        let _ = writeln!(printed, "{}", line.trim_end());
        if let Some(message) = &condition.message {
            let _ = writeln!(printed, "      {message}");
        }
    }
}

/// The node table.
fn render_nodes(status: &ClusterStatus, printed: &mut String) {
    printed.push_str("\nNodes:\n");
    let mut lines = vec![
        [
            "POOL",
            "POD",
            "NODE",
            "ROLES",
            "READY",
            "PHASE",
            "RESTARTS",
            "REVISION",
            "MANUAL ROLL",
        ]
        .map(str::to_owned),
    ];
    for pool in &status.pools {
        if pool.nodes.is_empty() {
            lines.push([
                pool.name.clone(),
                "(no pods)".to_owned(),
                "-".to_owned(),
                pool.roles.join(","),
                "-".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
            ]);
        }
        for node in &pool.nodes {
            lines.push([
                pool.name.clone(),
                node.pod.clone(),
                or_dash(node.node_id),
                node.roles.join(","),
                node.ready.to_string(),
                or_dash(node.phase.as_deref()),
                node.restarts.to_string(),
                node.revision.clone(),
                if node.manual_rolling_update {
                    "pending".to_owned()
                } else {
                    "-".to_owned()
                },
            ]);
        }
    }
    if lines.len() == 1 {
        printed.push_str("  none: no node pools and no pods yet\n");
    } else {
        printed.push_str(&columns(&lines));
    }
}

/// The CA and rebalance lines.
fn render_authorities_and_rebalances(status: &ClusterStatus, printed: &mut String) {
    printed.push_str("\nCertificate authorities:\n");
    if status.certificate_authorities.is_empty() {
        printed.push_str("  none yet: the operator has not created the CA Secrets\n");
    } else {
        let mut lines = vec![["CA", "SECRET", "KEY", "NOT AFTER", "DAYS LEFT"].map(str::to_owned)];
        for row in &status.certificate_authorities {
            lines.push([
                row.role.clone(),
                row.secret.clone(),
                row.key.clone(),
                row.not_after.clone(),
                row.days_left.to_string(),
            ]);
        }
        printed.push_str(&columns(&lines));
    }
    printed.push_str("\nRebalances:\n");
    if status.rebalances.is_empty() {
        printed.push_str("  none\n");
    }
    for rebalance in &status.rebalances {
        let _ = writeln!(printed, "  {} {}", rebalance.name, rebalance.state);
    }
}

/// `status` as text.
pub fn render_text(status: &ClusterStatus) -> String {
    let mut printed = String::new();
    render_summary(status, &mut printed);
    render_conditions(status, &mut printed);
    render_nodes(status, &mut printed);
    render_authorities_and_rebalances(status, &mut printed);
    printed
}

/// The status of Kafka `kafka`, printed as `output` says.
pub async fn status(cluster: &Cluster, kafka: &str, output: Output) -> Result<String, PluginError> {
    let status = read(cluster, kafka).await?;
    Ok(match output {
        Output::Text => render_text(&status),
        Output::Json => json(&status),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_are_the_pod_names_last_part() {
        assert_eq!(node_id("my-cluster-broker-12"), Some(12));
        assert_eq!(node_id("my-cluster-broker"), None);
    }

    #[test]
    fn a_pod_runs_the_revision_its_pod_set_describes_or_waits_for_a_restart() {
        let pod_set: StrimziPodSet = serde_json::from_value(serde_json::json!({
            "apiVersion": "core.strimzi.io/v1",
            "kind": "StrimziPodSet",
            "metadata": {"name": "c-b"},
            "spec": {
                "selector": {"matchLabels": {"strimzi.io/cluster": "c"}},
                "pods": [{"metadata": {"name": "c-b-0", "annotations": {"strimzi.io/revision": "r2"}}}],
            },
        }))
        .unwrap();
        let pod = |revision: &str| -> Pod {
            serde_json::from_value(serde_json::json!({
                "metadata": {
                    "name": "c-b-0",
                    "labels": {"strimzi.io/pool-name": "b", "strimzi.io/broker-role": "true"},
                    "annotations": {"strimzi.io/revision": revision},
                },
            }))
            .unwrap()
        };
        let sets = [pod_set];
        assert_eq!(node_view(&pod("r2"), "c", &sets).revision, "current");
        assert_eq!(
            node_view(&pod("r1"), "c", &sets).revision,
            "restart pending"
        );
        assert_eq!(
            node_view(&pod("r2"), "other", &[]).revision,
            "not in a StrimziPodSet"
        );
        assert_eq!(node_view(&pod("r2"), "c", &sets).roles, ["broker"]);
    }

    #[test]
    fn the_state_is_the_first_true_of_ready_not_ready_and_paused() {
        let condition = |r#type: &str, status: &str| ConditionView {
            r#type: r#type.to_owned(),
            status: status.to_owned(),
            reason: None,
            message: None,
        };
        assert_eq!(state_of(&[]), "Unknown");
        assert_eq!(
            state_of(&[condition("Warning", "True"), condition("NotReady", "True")]),
            "NotReady"
        );
        assert_eq!(
            state_of(&[condition("ReconciliationPaused", "True")]),
            "ReconciliationPaused"
        );
    }
}
