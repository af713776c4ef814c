//! The storage steps: a change of a pool's storage that its volumes cannot follow (of type,
//! StorageClass or selector) is undone before the model is built, as Strimzi keeps the old
//! storage; claims are created, grown when their StorageClass allows it, never shrunk (a
//! `KafkaStorage` warning says each), and the claims of removed nodes whose storage had
//! `deleteClaim: true` are deleted.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use strimzi_api::annotations::{self, DELETE_CLAIM};
use strimzi_api::conditions::reasons::KAFKA_STORAGE;
use strimzi_api::labels;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::storage::Storage;
use strimzi_operator_common::sync::Listed;

use super::{ReconcileError, Reconciliation};
use crate::model::ModelError;
use crate::model::desired::DesiredObjects;
use crate::model::nodes::storage::refused_storage_change;
use crate::model::quantity;

impl Reconciliation<'_> {
    /// Undoes each change of a pool's storage that its nodes cannot take
    /// ([`refused_storage_change`]) before the model is built: the pool keeps the storage its
    /// StrimziPodSet records, with a `KafkaStorage` warning naming the change, so that nothing
    /// rolls onto empty or unreachable volumes.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn keep_unchangeable_storage(&mut self) -> Result<(), ReconcileError> {
        let sets = self
            .list::<StrimziPodSet>(&format!("{}={}", labels::CLUSTER, self.name))
            .await?;
        let (pools, refusals) = keep_current_storage(&self.pools, &sets, &self.name)
            .map_err(|message| ReconcileError::Model(ModelError::InvalidConfiguration(message)))?;
        self.pools = pools;
        for refusal in refusals {
            self.warn(KAFKA_STORAGE, &refusal);
        }
        Ok(())
    }

    /// Creates missing claims and grows or keeps existing ones; their labels and annotations
    /// (`strimzi.io/delete-claim`) follow the model.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn apply_claims(
        &mut self,
        desired_claims: &[PersistentVolumeClaim],
        listed: &Listed<PersistentVolumeClaim>,
    ) -> Result<(), ReconcileError> {
        for desired in desired_claims {
            let name = desired.name_any();
            let Some(current) = listed.copy_of(desired) else {
                self.operator.runtime.applier().apply(desired, None).await?;
                continue;
            };
            let wanted = requested(desired);
            let existing = requested(current);
            let size = match (
                wanted.as_ref().and_then(|size| quantity::value(&size.0)),
                existing.as_ref().and_then(|size| quantity::value(&size.0)),
            ) {
                (Some(want), Some(have)) if want > have => {
                    if self.expansion_allowed(current).await? {
                        wanted
                    } else {
                        self.warn(
                            KAFKA_STORAGE,
                            &format!(
                                "Volume {name} cannot grow from {} to {}: its StorageClass does not allow volume expansion",
                                quantity_text(existing.as_ref()),
                                quantity_text(wanted.as_ref())
                            ),
                        );
                        existing
                    }
                }
                (Some(want), Some(have)) if want < have => {
                    self.warn(
                        KAFKA_STORAGE,
                        &format!(
                            "Volume {name} cannot shrink from {} to {}: Kubernetes does not support reducing the size of persistent volumes; it keeps its size",
                            quantity_text(existing.as_ref()),
                            quantity_text(wanted.as_ref())
                        ),
                    );
                    existing
                }
                _ => existing,
            };
            // The whole claim, as applied when it was created: a field left out would be
            // removed by the apply, and the spec is immutable but for the requested size.
            // The immutable fields keep the values the claim has.
            let mut update = desired.clone();
            if let (Some(spec), Some(live)) = (update.spec.as_mut(), current.spec.as_ref()) {
                keep_live(&mut spec.access_modes, &live.access_modes);
                keep_live(&mut spec.storage_class_name, &live.storage_class_name);
                keep_live(&mut spec.selector, &live.selector);
                keep_live(&mut spec.volume_mode, &live.volume_mode);
                keep_live(&mut spec.data_source, &live.data_source);
                keep_live(&mut spec.data_source_ref, &live.data_source_ref);
                keep_live(&mut spec.volume_name, &live.volume_name);
                if let Some(size) = size {
                    spec.resources
                        .get_or_insert_with(Default::default)
                        .requests
                        .get_or_insert_with(Default::default)
                        .insert("storage".to_owned(), size);
                }
            }
            self.operator
                .runtime
                .applier()
                .apply(&update, Some(current))
                .await?;
        }
        Ok(())
    }

    /// Whether the StorageClass of `claim` (or the default class) allows volume expansion.
    async fn expansion_allowed(
        &self,
        claim: &PersistentVolumeClaim,
    ) -> Result<bool, ReconcileError> {
        let classes: Api<StorageClass> = Api::all(self.client());
        let classes = classes
            .list(&ListParams::default())
            .await
            .map_err(|source| ReconcileError::api("list", "StorageClass", source))?;
        let wanted = claim
            .spec
            .as_ref()
            .and_then(|spec| spec.storage_class_name.clone());
        let class = classes.items.iter().find(|class| match &wanted {
            Some(name) => class.name_any() == *name,
            None => class
                .annotations()
                .get("storageclass.kubernetes.io/is-default-class")
                .is_some_and(|value| value == "true"),
        });
        Ok(class.and_then(|class| class.allow_volume_expansion) == Some(true))
    }

    /// Deletes the claims of the cluster that no current node uses and that are annotated
    /// `strimzi.io/delete-claim: "true"` (storage with `deleteClaim: true`).
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn delete_removed_claims(
        &self,
        desired: &DesiredObjects,
        listed: &Listed<PersistentVolumeClaim>,
    ) -> Result<(), ReconcileError> {
        let wanted: Vec<String> = desired.claims.iter().map(ResourceExt::name_any).collect();
        let api: Api<PersistentVolumeClaim> = self.api();
        for claim in listed.iter() {
            let name = &claim.name_any();
            let delete = claim
                .annotations()
                .get(DELETE_CLAIM)
                .is_some_and(|v| v == "true");
            if wanted.contains(name) || !delete || claim.metadata.deletion_timestamp.is_some() {
                continue;
            }
            if !self.operator.runtime.applier().delete(&api, name).await? {
                continue;
            }
            tracing::info!(claim = name, "deleted the claim of a removed node");
            self.tell(
                "ClaimDeleted",
                "DeleteClaim",
                &format!(
                    "Deleted PersistentVolumeClaim {name} of a removed node (deleteClaim: true)"
                ),
            )
            .await;
        }
        Ok(())
    }
}

/// Replaces a field the desired claim sets with the live claim's value.
fn keep_live<T: Clone>(desired: &mut Option<T>, live: &Option<T>) {
    if desired.is_some() && live.is_some() {
        desired.clone_from(live);
    }
}

fn requested(claim: &PersistentVolumeClaim) -> Option<Quantity> {
    claim
        .spec
        .as_ref()?
        .resources
        .as_ref()?
        .requests
        .as_ref()?
        .get("storage")
        .cloned()
}

fn quantity_text(quantity: Option<&Quantity>) -> &str {
    quantity.map_or("an unknown size", |quantity| quantity.0.as_str())
}

/// `pools` with the storage each one's StrimziPodSet (`<cluster>-<pool>`) records in
/// `strimzi.io/storage` wherever the desired storage is a change that is refused, and a
/// message per refusal. A pool without a set, or a set without the annotation, has no storage
/// yet and takes the desired one; an annotation that does not parse is an error, since what
/// the volumes are cannot then be known.
pub(super) fn keep_current_storage(
    pools: &[KafkaNodePool],
    sets: &[StrimziPodSet],
    cluster: &str,
) -> Result<(Vec<KafkaNodePool>, Vec<String>), String> {
    let mut kept = Vec::with_capacity(pools.len());
    let mut refusals = Vec::new();
    for pool in pools {
        let pool_name = pool.name_any();
        let set_name = strimzi_api::naming::pool_pod_set(cluster, &pool_name);
        let recorded = sets
            .iter()
            .find(|set| set.name_any() == set_name)
            .and_then(|set| set.annotations().get(annotations::STORAGE));
        let mut pool = pool.clone();
        if let Some(recorded) = recorded {
            let current: Storage = serde_json::from_str(recorded).map_err(|error| {
                format!(
                    "StrimziPodSet {set_name}: annotation {} is not a storage \
                     configuration ({error}), so a change of the storage of KafkaNodePool \
                     {pool_name} cannot be checked; correct the annotation (it records the \
                     storage the pool's volumes have)",
                    annotations::STORAGE
                )
            })?;
            if let Some(why) = refused_storage_change(&current, &pool.spec.storage) {
                refusals.push(format!(
                    "The storage of KafkaNodePool {pool_name} cannot change as desired: {why}, \
                     which its nodes' volumes cannot follow without losing or stranding their \
                     data. The pool keeps its current storage ({recorded}) until its spec \
                     asks for it again."
                ));
                pool.spec.storage = current;
            }
        }
        kept.push(pool);
    }
    Ok((kept, refusals))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(name: &str, storage: serde_json::Value) -> KafkaNodePool {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaNodePool",
            "metadata": {"name": name, "labels": {"strimzi.io/cluster": "c"}},
            "spec": {"replicas": 3, "roles": ["broker"], "storage": storage},
        }))
        .unwrap()
    }

    fn set(name: &str, storage: Option<&str>) -> StrimziPodSet {
        let mut set: StrimziPodSet = serde_json::from_value(serde_json::json!({
            "apiVersion": "core.strimzi.io/v1", "kind": "StrimziPodSet",
            "metadata": {"name": name},
            "spec": {"selector": {}, "pods": []},
        }))
        .unwrap();
        if let Some(storage) = storage {
            set.annotations_mut()
                .insert(annotations::STORAGE.to_owned(), storage.to_owned());
        }
        set
    }

    /// The data of a persistent pool is safe from a change to ephemeral storage: the pool
    /// keeps its claims, with a warning; an allowed change, a new pool and a pool without
    /// the annotation pass unchanged; an unreadable annotation refuses.
    #[test]
    fn a_refused_storage_change_keeps_the_recorded_storage_with_a_warning() {
        let persistent = r#"{"type":"persistent-claim","size":"1Gi"}"#;
        let pools = [
            pool("brokers", serde_json::json!({"type": "ephemeral"})),
            pool(
                "grown",
                serde_json::json!({"type": "persistent-claim", "size": "2Gi"}),
            ),
            pool("new", serde_json::json!({"type": "ephemeral"})),
            pool("unrecorded", serde_json::json!({"type": "ephemeral"})),
        ];
        let sets = [
            set("c-brokers", Some(persistent)),
            set("c-grown", Some(persistent)),
            set("c-unrecorded", None),
        ];
        let (kept, refusals) = keep_current_storage(&pools, &sets, "c").unwrap();
        assert_eq!(
            serde_json::to_value(&kept[0].spec.storage).unwrap(),
            serde_json::json!({"type": "persistent-claim", "size": "1Gi"})
        );
        for (kept, wanted) in kept.iter().zip(&pools).skip(1) {
            assert_eq!(kept.spec.storage, wanted.spec.storage);
        }
        assert_eq!(refusals.len(), 1, "{refusals:?}");
        assert!(
            refusals[0].starts_with(
                "The storage of KafkaNodePool brokers cannot change as desired: the storage \
                 type would change from persistent-claim to ephemeral"
            ),
            "{}",
            refusals[0]
        );
        let broken = keep_current_storage(&pools[..1], &[set("c-brokers", Some("{"))], "c");
        assert!(broken.unwrap_err().contains("cannot be checked"));
    }
}
