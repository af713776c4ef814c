//! Automatic rebalancing on scaling (`spec.cruiseControl.autoRebalance`): the Kafka
//! reconciler's part. It records added brokers in `status.autoRebalance`, keeps brokers to be
//! removed while they still hold replicas (their pool's scale-down is undone until a
//! `remove-brokers` rebalance has moved them off), and, with the cluster ready, carries out
//! the next step of [`crate::rebalance::auto::plan`] on the `<cluster>-auto-rebalancing-<mode>`
//! KafkaRebalances, which the KafkaRebalance controller then drives through Cruise Control.
//! A change of those rebalances wakes the Kafka.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use kube::api::{Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde_json::json;
use strimzi_api::kafka::{KafkaAutoRebalanceMode, KafkaAutoRebalanceStatus, KafkaStatus};
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::rebalance::KafkaRebalance;
use strimzi_api::{annotations, finalizers};
use strimzi_api::{labels, naming};
use strimzi_operator_common::status;

use super::{ReconcileError, Reconciliation};
use crate::model::KafkaCluster;
use crate::rebalance::auto::{self, Action, Plan, Running, ScalingBrokers};
use crate::rebalance::auto_rebalance;

/// Reason of the warning about a missing auto-rebalance template.
const TEMPLATE_MISSING: &str = "AutoRebalanceTemplateNotFound";

/// The node pools with the scale-down that would remove the brokers `blocked` undone: each
/// pool running one of them keeps the nodes its status lists.
pub(super) fn undo_scale_down(
    pools: &[KafkaNodePool],
    blocked: &BTreeSet<i32>,
) -> Vec<KafkaNodePool> {
    pools
        .iter()
        .map(|pool| {
            let running: Vec<i32> = pool
                .status
                .as_ref()
                .and_then(|status| status.node_ids.clone())
                .unwrap_or_default();
            let mut pool = pool.clone();
            if running.iter().any(|id| blocked.contains(id)) {
                pool.spec.replicas = i32::try_from(running.len()).unwrap_or(i32::MAX);
            }
            pool
        })
        .collect()
}

/// `status.autoRebalance` as the running reconciliation of each Kafka (by `namespace/name`)
/// has it so far, for the status of a reconciliation that fails. That status is otherwise the
/// Kafka's previous one, and added brokers recorded before the failure would be lost with it
/// for good: once their StrimziPodSet is applied, no later reconciliation sees them added.
#[derive(Clone, Debug, Default)]
pub(super) struct RecordedAutoRebalance(Arc<Mutex<HashMap<String, KafkaAutoRebalanceStatus>>>);

impl RecordedAutoRebalance {
    /// Keeps `status` for Kafka `key`; `None` forgets it.
    pub(super) fn set(&self, key: &str, status: Option<KafkaAutoRebalanceStatus>) {
        let mut recorded = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match status {
            Some(status) => recorded.insert(key.to_owned(), status),
            None => recorded.remove(key),
        };
    }

    /// `previous`, the status of a failed reconciliation of Kafka `key`, with the
    /// `status.autoRebalance` that reconciliation recorded, if it got that far.
    pub(super) fn failure_status(&self, key: &str, previous: KafkaStatus) -> KafkaStatus {
        let recorded = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
        match recorded {
            Some(auto_rebalance) => KafkaStatus {
                auto_rebalance: Some(auto_rebalance),
                ..previous
            },
            None => previous,
        }
    }
}

impl Reconciliation<'_> {
    /// Sets `status.autoRebalance` as this reconciliation leaves it, also for its status
    /// should it fail later.
    fn set_auto_rebalance(&mut self, status: KafkaAutoRebalanceStatus) {
        self.operator
            .recorded_auto_rebalance
            .set(&super::kafka_key(self.kafka), Some(status.clone()));
        self.auto_rebalance = Some(status);
    }

    /// The auto-rebalance configuration of `mode`, when the Kafka has Cruise Control with one.
    pub(super) fn auto_rebalance_configured(
        &self,
        mode: KafkaAutoRebalanceMode,
    ) -> Option<&strimzi_api::kafka::KafkaAutoRebalanceConfiguration> {
        self.kafka
            .spec
            .cruise_control
            .as_ref()?
            .auto_rebalance
            .as_ref()?
            .iter()
            .find(|entry| entry.mode == mode)
    }

    /// Records in the status the brokers `cluster` adds to those the live StrimziPodSets run,
    /// when added brokers are to be rebalanced automatically.
    pub(super) fn record_added_brokers(&mut self, cluster: &KafkaCluster, running: &BTreeSet<i32>) {
        let previous = self
            .kafka
            .status
            .as_ref()
            .and_then(|status| status.auto_rebalance.as_ref());
        let desired: BTreeSet<i32> = cluster.brokers().map(|node| node.node_id).collect();
        let added = if self
            .auto_rebalance_configured(KafkaAutoRebalanceMode::AddBrokers)
            .is_some()
        {
            desired.difference(running).copied().collect()
        } else {
            BTreeSet::new()
        };
        let recorded = auto::record_added(previous, &desired, &added, &status::timestamp_now());
        let (before, after) = (
            auto::recorded_added(previous),
            auto::recorded_added(Some(&recorded)),
        );
        if before != after {
            tracing::info!(
                ?before,
                ?after,
                "added brokers waiting for an automatic rebalance"
            );
        }
        self.set_auto_rebalance(recorded);
    }

    /// With the cluster ready: the next step of automatic rebalancing for the brokers
    /// `blocked` from removal and those recorded as added.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn reconcile_auto_rebalance(
        &mut self,
        blocked: &BTreeSet<i32>,
    ) -> Result<(), ReconcileError> {
        let configured = self.kafka.spec.cruise_control.as_ref().is_some_and(|cc| {
            cc.auto_rebalance
                .as_ref()
                .is_some_and(|modes| !modes.is_empty())
        });
        let previous = self.auto_rebalance.clone();
        if !configured {
            // Strimzi's state without automatic rebalancing (or once it is turned off).
            let now = status::timestamp_now();
            self.set_auto_rebalance(Plan::idle(Vec::new()).status(previous.as_ref(), &now));
            return Ok(());
        }
        let scaling = ScalingBrokers {
            blocked: blocked.clone(),
            added: auto::recorded_added(previous.as_ref()),
        };
        let state = auto::recorded_state(previous.as_ref());
        let running = match running_mode(state) {
            Some(mode) => self
                .auto_rebalance_of(mode)
                .await?
                .map(|rebalance| Running::of(&rebalance)),
            None => None,
        };
        let now = status::timestamp_now();
        let idle_for = auto::idle_for(previous.as_ref(), &now);
        let plan = auto::plan(state, &scaling, running.as_ref(), idle_for);
        for action in &plan.actions {
            if !self.carry_out(action).await? {
                // No template: Strimzi's behaviour, back to Idle with nothing queued.
                self.set_auto_rebalance(Plan::idle(Vec::new()).status(previous.as_ref(), &now));
                return Ok(());
            }
        }
        self.set_auto_rebalance(plan.status(previous.as_ref(), &now));
        Ok(())
    }

    /// `status.autoRebalance` as known so far: the state this reconciliation recorded or
    /// found, else `Idle` since now. Strimzi reports it on every Kafka, with or without
    /// Cruise Control.
    pub(super) fn auto_rebalance_status(&self) -> KafkaAutoRebalanceStatus {
        match &self.auto_rebalance {
            Some(recorded) => recorded.clone(),
            None => Plan::idle(Vec::new()).status(None, &status::timestamp_now()),
        }
    }

    /// The automatic rebalance of `mode`, if it exists.
    async fn auto_rebalance_of(
        &self,
        mode: KafkaAutoRebalanceMode,
    ) -> Result<Option<KafkaRebalance>, ReconcileError> {
        let name = naming::auto_rebalancing_kafka_rebalance(&self.name, mode.as_str());
        self.api::<KafkaRebalance>()
            .get_opt(&name)
            .await
            .map_err(|source| ReconcileError::api("read the KafkaRebalance", &name, source))
    }

    /// Carries out `action`; `false` when a rebalance to create has no template.
    async fn carry_out(&mut self, action: &Action) -> Result<bool, ReconcileError> {
        let api = self.api::<KafkaRebalance>();
        match action {
            Action::Create(mode, brokers) => {
                let template = match self
                    .auto_rebalance_configured(*mode)
                    .and_then(|entry| entry.template.as_ref())
                    .map(|template| template.name.clone())
                {
                    Some(name) => match api.get_opt(&name).await.map_err(|source| {
                        ReconcileError::api("read the KafkaRebalance template", &name, source)
                    })? {
                        Some(template) => Some(template),
                        None => {
                            self.warn(
                                TEMPLATE_MISSING,
                                &format!(
                                    "The KafkaRebalance template {name} for auto-rebalancing in mode {} does not exist; no automatic rebalance was started",
                                    mode.as_str()
                                ),
                            );
                            return Ok(false);
                        }
                    },
                    None => None,
                };
                let rebalance = auto_rebalance(
                    &self.namespace,
                    &self.name,
                    *mode,
                    brokers.iter().copied().collect(),
                    template.as_ref().map(|template| &template.spec),
                );
                self.operator
                    .runtime
                    .applier()
                    .apply(&rebalance, None)
                    .await?;
                self.tell(
                    "AutoRebalanceStarted",
                    "Create",
                    &format!(
                        "Created KafkaRebalance {} ({}) for brokers {:?}",
                        rebalance.name_any(),
                        mode.as_str(),
                        brokers.iter().collect::<Vec<_>>()
                    ),
                )
                .await;
            }
            Action::Refresh(mode, brokers) => {
                let brokers: Vec<i32> = brokers.iter().copied().collect();
                self.patch_rebalance(
                    *mode,
                    json!({
                        "metadata": {"annotations": {annotations::REBALANCE: "refresh"}},
                        "spec": {"brokers": brokers},
                    }),
                )
                .await?;
            }
            Action::Stop(mode) => {
                self.patch_rebalance(
                    *mode,
                    json!({"metadata": {"annotations": {annotations::REBALANCE: "stop"}}}),
                )
                .await?;
            }
            Action::Delete(mode) => {
                let name = naming::auto_rebalancing_kafka_rebalance(&self.name, mode.as_str());
                if let Some(rebalance) = self.auto_rebalance_of(*mode).await? {
                    let finalizers: Vec<String> = rebalance
                        .finalizers()
                        .iter()
                        .filter(|finalizer| *finalizer != finalizers::AUTO_REBALANCING)
                        .cloned()
                        .collect();
                    if finalizers.len() != rebalance.finalizers().len() {
                        self.patch_rebalance(
                            *mode,
                            json!({"metadata": {
                                "finalizers": finalizers,
                                "resourceVersion": rebalance.resource_version(),
                            }}),
                        )
                        .await?;
                    }
                    self.operator.runtime.applier().delete(&api, &name).await?;
                }
            }
        }
        Ok(true)
    }

    /// Merge-patches the automatic rebalance of `mode` with `patch`.
    async fn patch_rebalance(
        &self,
        mode: KafkaAutoRebalanceMode,
        patch: serde_json::Value,
    ) -> Result<(), ReconcileError> {
        let name = naming::auto_rebalancing_kafka_rebalance(&self.name, mode.as_str());
        self.api::<KafkaRebalance>()
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| ReconcileError::api("update the KafkaRebalance", &name, source))?;
        self.operator
            .runtime
            .metrics()
            .count_write(KafkaRebalance::kind(&()).as_ref(), "patch");
        Ok(())
    }
}

/// Whether `rebalance` is an automatic rebalance (`<cluster>-auto-rebalancing-<mode>` of the
/// cluster its `strimzi.io/cluster` label names), whose changes concern its Kafka.
pub(super) fn is_auto_rebalance<K: Resource>(rebalance: &K) -> bool {
    let meta = rebalance.meta();
    let (Some(cluster), Some(name)) = (
        meta.labels
            .as_ref()
            .and_then(|labels| labels.get(labels::CLUSTER)),
        meta.name.as_deref(),
    ) else {
        return false;
    };
    [
        KafkaAutoRebalanceMode::AddBrokers,
        KafkaAutoRebalanceMode::RemoveBrokers,
    ]
    .into_iter()
    .any(|mode| naming::auto_rebalancing_kafka_rebalance(cluster, mode.as_str()) == name)
}

/// The mode whose rebalance runs in `state`.
fn running_mode(
    state: strimzi_api::kafka::KafkaAutoRebalanceState,
) -> Option<KafkaAutoRebalanceMode> {
    use strimzi_api::kafka::KafkaAutoRebalanceState::{
        Idle, RebalanceOnScaleDown, RebalanceOnScaleUp,
    };
    match state {
        Idle => None,
        RebalanceOnScaleDown => Some(KafkaAutoRebalanceMode::RemoveBrokers),
        RebalanceOnScaleUp => Some(KafkaAutoRebalanceMode::AddBrokers),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use strimzi_api::node_pool::KafkaNodePoolStatus;

    fn pool(name: &str, replicas: i32, running: &[i32]) -> KafkaNodePool {
        let spec = serde_json::from_value(serde_json::json!({
            "replicas": replicas, "roles": ["broker"], "storage": {"type": "ephemeral"},
        }))
        .unwrap();
        let mut pool = KafkaNodePool::new(name, spec);
        pool.status = Some(KafkaNodePoolStatus {
            node_ids: Some(running.to_vec()),
            ..KafkaNodePoolStatus::default()
        });
        pool
    }

    #[test]
    fn only_pools_running_blocked_brokers_keep_their_nodes() {
        let pools = [pool("brokers", 2, &[3, 4, 5]), pool("other", 1, &[6, 7])];
        let undone = undo_scale_down(&pools, &BTreeSet::from([5]));
        assert_eq!(undone[0].spec.replicas, 3);
        assert_eq!(undone[1].spec.replicas, 1);
    }

    #[test]
    fn a_failed_reconciliation_reports_the_added_brokers_it_recorded() {
        let previous = KafkaStatus {
            cluster_id: Some("id".to_owned()),
            auto_rebalance: Some(auto::record_added(
                None,
                &BTreeSet::from([0]),
                &BTreeSet::from([0]),
                "t0",
            )),
            ..KafkaStatus::default()
        };
        let recorded = RecordedAutoRebalance::default();
        // Failed before it recorded anything: the previous status.
        assert_eq!(recorded.failure_status("ns/c", previous.clone()), previous);
        // The scale-up recorded broker 1, then the reconciliation failed.
        let added = auto::record_added(
            previous.auto_rebalance.as_ref(),
            &BTreeSet::from([0, 1]),
            &BTreeSet::from([1]),
            "t1",
        );
        recorded.set("ns/c", Some(added.clone()));
        let failed = recorded.failure_status("ns/c", previous.clone());
        assert_eq!(failed.auto_rebalance, Some(added));
        assert_eq!(failed.cluster_id.as_deref(), Some("id"));
        assert_eq!(
            auto::recorded_added(failed.auto_rebalance.as_ref()),
            BTreeSet::from([1])
        );
        // Used once; other Kafkas and forgotten records keep the previous status.
        assert_eq!(recorded.failure_status("ns/c", previous.clone()), previous);
        recorded.set("ns/d", Some(KafkaAutoRebalanceStatus::default()));
        recorded.set("ns/d", None);
        assert_eq!(recorded.failure_status("ns/d", previous.clone()), previous);
    }

    #[test]
    fn each_state_runs_the_rebalance_of_its_mode() {
        use strimzi_api::kafka::KafkaAutoRebalanceState as S;
        assert_eq!(running_mode(S::Idle), None);
        assert_eq!(
            running_mode(S::RebalanceOnScaleDown),
            Some(KafkaAutoRebalanceMode::RemoveBrokers)
        );
        assert_eq!(
            running_mode(S::RebalanceOnScaleUp),
            Some(KafkaAutoRebalanceMode::AddBrokers)
        );
    }
}
