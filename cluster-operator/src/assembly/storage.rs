//! The storage steps: claims are created, grown when their StorageClass allows it, never
//! shrunk (a `KafkaStorage` warning says so), and the claims of removed nodes whose storage
//! had `deleteClaim: true` are deleted.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use strimzi_api::annotations::DELETE_CLAIM;
use strimzi_api::conditions::reasons::KAFKA_STORAGE;

use super::objects::Listed;
use super::{ReconcileError, Reconciliation};
use crate::model::desired::DesiredObjects;

impl Reconciliation<'_> {
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
            let Some(current) = listed.get(&name) else {
                self.operator.runtime.applier().apply(desired, None).await?;
                continue;
            };
            let wanted = requested(desired);
            let existing = requested(current);
            let size = match (
                wanted.as_ref().and_then(bytes),
                existing.as_ref().and_then(bytes),
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
        for (name, claim) in listed.iter() {
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

/// The number of bytes of a Kubernetes quantity such as `100Gi`, `1.5T` or `500M`.
pub fn bytes(quantity: &Quantity) -> Option<f64> {
    let text = quantity.0.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return None,
    };
    Some(number * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_compare_across_suffixes() {
        let size = |text: &str| bytes(&Quantity(text.to_owned()));
        assert_eq!(size("1Gi"), Some(1024.0 * 1024.0 * 1024.0));
        assert_eq!(size("100"), Some(100.0));
        assert!(size("1Gi") > size("1G"));
        assert!(size("1.5Ti") > size("1Ti"));
        assert_eq!(size("500m"), Some(0.5));
        assert_eq!(size("ten"), None);
        assert_eq!(size("1Xi"), None);
    }
}
