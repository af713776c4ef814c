//! PersistentVolumeClaims of the nodes' persistent and JBOD volumes, and the storage rules a
//! pool must follow.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimSpec, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::ObjectMeta;
use strimzi_api::annotations::DELETE_CLAIM;
use strimzi_api::storage::{PersistentClaimStorage, SingleVolumeStorage, Storage};

use crate::model::meta::{merged, template_annotations, template_labels, with_additional_labels};
use crate::model::nodes::templates::metadata;
use crate::model::{KafkaCluster, ModelError, NodePool};

/// Where the data volumes are mounted in the Kafka container.
pub const DATA_MOUNT_ROOT: &str = "/var/lib/kafka";

/// One data volume of a node: its name in the pod (`data` or `data-<id>`) and its storage.
#[derive(Clone, Debug, PartialEq)]
pub struct DataVolume {
    /// Volume name, also the prefix of the claim name.
    pub name: String,
    /// The volume's storage.
    pub storage: SingleVolumeStorage,
}

impl DataVolume {
    /// Mount path in the Kafka container, `/var/lib/kafka/<name>`.
    pub fn mount_path(&self) -> String {
        format!("{DATA_MOUNT_ROOT}/{}", self.name)
    }

    /// Name of the volume's claim for `pod`, when the volume is persistent.
    pub fn claim_name(&self, pod: &str) -> Option<String> {
        matches!(self.storage, SingleVolumeStorage::PersistentClaim(_))
            .then(|| format!("{}-{pod}", self.name))
    }
}

/// The data volumes of `storage`: one `data` volume, or `data-<id>` per JBOD volume.
pub fn data_volumes(storage: &Storage) -> Vec<DataVolume> {
    match storage {
        Storage::Ephemeral(volume) => vec![DataVolume {
            name: "data".to_owned(),
            storage: SingleVolumeStorage::Ephemeral(volume.clone()),
        }],
        Storage::PersistentClaim(volume) => vec![DataVolume {
            name: "data".to_owned(),
            storage: SingleVolumeStorage::PersistentClaim(volume.clone()),
        }],
        Storage::Jbod(jbod) => jbod
            .volumes
            .iter()
            .flatten()
            .map(|volume| DataVolume {
                name: format!("data-{}", volume.id().unwrap_or_default()),
                storage: volume.clone(),
            })
            .collect(),
    }
}

/// The volume that holds the KRaft metadata log: the one marked `kraftMetadata: shared`, else
/// the JBOD volume with the lowest ID (or the only volume). Kafka's log directory on a volume
/// is `<mount path>/kafka-log<node id>`.
pub fn kraft_metadata_volume(storage: &Storage) -> Option<DataVolume> {
    let volumes = data_volumes(storage);
    volumes
        .iter()
        .find(|volume| volume.storage.kraft_metadata().is_some())
        .or_else(|| {
            volumes
                .iter()
                .min_by_key(|volume| volume.storage.id().unwrap_or_default())
        })
        .cloned()
}

/// The order in which Strimzi's operator (Jackson) writes a storage's fields: the identity
/// and type first, the KRaft metadata role last.
const STORAGE_FIELD_ORDER: [&str; 9] = [
    "id",
    "type",
    "size",
    "sizeLimit",
    "class",
    "selector",
    "deleteClaim",
    "volumeAttributesClass",
    "kraftMetadata",
];

/// `strimzi.io/storage`: `storage` as JSON written as Strimzi's operator writes it (fields in
/// its order, `deleteClaim` only when true), so that the annotation is the same string
/// whichever operator wrote it.
pub fn storage_annotation(storage: &Storage) -> String {
    fn write(value: &serde_json::Value, out: &mut String) {
        match value {
            serde_json::Value::Object(fields) => {
                let rank = |key: &String| {
                    STORAGE_FIELD_ORDER
                        .iter()
                        .position(|known| known == key)
                        .unwrap_or(STORAGE_FIELD_ORDER.len())
                };
                let mut keys: Vec<&String> = fields
                    .iter()
                    .filter(|(key, value)| {
                        !(key.as_str() == "deleteClaim" && value.as_bool() == Some(false))
                    })
                    .map(|(key, _)| key)
                    .collect();
                keys.sort_by_key(|key| (rank(key), key.as_str()));
                out.push('{');
                for (index, key) in keys.into_iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::from(key.as_str()).to_string());
                    out.push(':');
                    write(&fields[key], out);
                }
                out.push('}');
            }
            serde_json::Value::Array(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(&serde_json::to_value(storage).unwrap_or_default(), &mut out);
    out
}

/// Checks the storage of pool `pool`: persistent volumes need a size; JBOD needs volumes with
/// unique IDs; at most one volume holds the KRaft metadata.
pub fn validate_storage(pool: &str, storage: &Storage) -> Result<(), ModelError> {
    let invalid = |message: String| {
        Err(ModelError::InvalidConfiguration(format!(
            "KafkaNodePool {pool}: {message}"
        )))
    };
    let check_size = |volume: &PersistentClaimStorage| volume.size.is_some();
    match storage {
        Storage::Ephemeral(_) => {}
        Storage::PersistentClaim(volume) => {
            if !check_size(volume) {
                return invalid(
                    "the size is mandatory for a persistent-claim storage (.spec.storage.size)"
                        .to_owned(),
                );
            }
        }
        Storage::Jbod(jbod) => {
            let volumes = jbod.volumes.as_deref().unwrap_or_default();
            if volumes.is_empty() {
                return invalid("JBOD storage needs at least one volume".to_owned());
            }
            let mut ids = BTreeSet::new();
            for volume in volumes {
                let Some(id) = volume.id() else {
                    return invalid(
                        "the 'id' property is required for volumes in JBOD storage".to_owned(),
                    );
                };
                if !ids.insert(id) {
                    return invalid(format!("the volume ID {id} is used more than once"));
                }
                if let SingleVolumeStorage::PersistentClaim(claim) = volume
                    && !check_size(claim)
                {
                    return invalid(format!(
                        "the size is mandatory for the persistent-claim volume {id}"
                    ));
                }
            }
            let metadata = volumes
                .iter()
                .filter(|volume| volume.kraft_metadata().is_some())
                .count();
            if metadata > 1 {
                return invalid(
                    "only one volume can be marked with kraftMetadata: shared".to_owned(),
                );
            }
        }
    }
    Ok(())
}

impl KafkaCluster {
    /// The claims every current node needs.
    pub fn persistent_volume_claims(&self) -> Vec<PersistentVolumeClaim> {
        self.pools
            .iter()
            .flat_map(|pool| self.pool_claims(pool, &pool.node_ids))
            .collect()
    }

    /// The claims of removed nodes whose volumes have `deleteClaim: true`: the caller deletes
    /// them once the nodes are gone.
    pub fn claims_to_delete(&self) -> Vec<String> {
        self.pools
            .iter()
            .flat_map(|pool| {
                self.pool_claims(pool, &pool.removed_node_ids)
                    .into_iter()
                    .filter(|claim| {
                        claim
                            .metadata
                            .annotations
                            .as_ref()
                            .and_then(|annotations| annotations.get(DELETE_CLAIM))
                            .is_some_and(|value| value == "true")
                    })
                    .filter_map(|claim| claim.metadata.name)
            })
            .collect()
    }

    /// The claims of the nodes `node_ids` of `pool`.
    fn pool_claims(&self, pool: &NodePool, node_ids: &BTreeSet<i32>) -> Vec<PersistentVolumeClaim> {
        let template = self.pool_template(pool).persistent_volume_claim;
        let template = metadata(template.as_ref());
        let labels = with_additional_labels(&self.pool_labels(pool), &template_labels(template));
        let volumes = data_volumes(&pool.storage);
        volumes
            .iter()
            .filter_map(|volume| match &volume.storage {
                SingleVolumeStorage::PersistentClaim(claim) => Some((volume, claim)),
                SingleVolumeStorage::Ephemeral(_) => None,
            })
            .flat_map(|(volume, claim)| {
                node_ids.iter().map(move |&node_id| {
                    let pod = strimzi_api::naming::kafka_pod(&self.name, &pool.name, node_id);
                    (format!("{}-{pod}", volume.name), claim)
                })
            })
            .map(|(name, claim)| {
                let delete_claim = claim.delete_claim.unwrap_or(false);
                let own = BTreeMap::from([(DELETE_CLAIM.to_owned(), delete_claim.to_string())]);
                let annotations = merged([&own, &template_annotations(template)]);
                PersistentVolumeClaim {
                    metadata: ObjectMeta {
                        name: Some(name),
                        namespace: Some(self.namespace.clone()),
                        labels: Some(labels.clone()),
                        annotations: Some(annotations),
                        owner_references: delete_claim
                            .then(|| pool.owner.clone().into_iter().collect()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(PersistentVolumeClaimSpec {
                        access_modes: Some(vec!["ReadWriteOnce".to_owned()]),
                        resources: Some(VolumeResourceRequirements {
                            requests: Some(BTreeMap::from([(
                                "storage".to_owned(),
                                Quantity(claim.size.clone().unwrap_or_default()),
                            )])),
                            ..VolumeResourceRequirements::default()
                        }),
                        storage_class_name: claim.class.clone(),
                        volume_attributes_class_name: claim.volume_attributes_class.clone(),
                        selector: claim
                            .selector
                            .clone()
                            .filter(|selector| !selector.is_empty())
                            .map(|match_labels| LabelSelector {
                                match_labels: Some(match_labels),
                                ..LabelSelector::default()
                            }),
                        volume_mode: Some("Filesystem".to_owned()),
                        ..PersistentVolumeClaimSpec::default()
                    }),
                    status: None,
                }
            })
            .collect()
    }
}

/// Why a pool's storage cannot change from `current` (what its StrimziPodSet's
/// `strimzi.io/storage` records) to `desired`, if it cannot: a change of type (ephemeral,
/// persistent claim, JBOD; the claims of one are not the other's, so the nodes would start on
/// empty volumes), of a JBOD volume's type, or of a claim's StorageClass or selector, which a
/// bound claim cannot take. Sizes are the claims step's (grown when allowed, never shrunk),
/// and JBOD volumes may be added or removed, as in Strimzi.
pub fn refused_storage_change(current: &Storage, desired: &Storage) -> Option<String> {
    match (current, desired) {
        (Storage::Ephemeral(_), Storage::Ephemeral(_)) => None,
        (Storage::PersistentClaim(current), Storage::PersistentClaim(desired)) => {
            refused_claim_change("the volume", current, desired)
        }
        (Storage::Jbod(current), Storage::Jbod(desired)) => {
            let volumes = |jbod: &strimzi_api::storage::JbodStorage| {
                jbod.volumes
                    .iter()
                    .flatten()
                    .filter_map(|volume| Some((volume.id()?, volume.clone())))
                    .collect::<BTreeMap<i32, SingleVolumeStorage>>()
            };
            let desired = volumes(desired);
            volumes(current).into_iter().find_map(|(id, current)| {
                let volume = format!("JBOD volume {id}");
                match (&current, desired.get(&id)?) {
                    (
                        SingleVolumeStorage::PersistentClaim(current),
                        SingleVolumeStorage::PersistentClaim(desired),
                    ) => refused_claim_change(&volume, current, desired),
                    (SingleVolumeStorage::Ephemeral(_), SingleVolumeStorage::Ephemeral(_)) => None,
                    (current, desired) => Some(format!(
                        "{volume} would change from {} to {}",
                        current.type_name(),
                        desired.type_name()
                    )),
                }
            })
        }
        (current, desired) => Some(format!(
            "the storage type would change from {} to {}",
            current.type_name(),
            desired.type_name()
        )),
    }
}

fn refused_claim_change(
    volume: &str,
    current: &PersistentClaimStorage,
    desired: &PersistentClaimStorage,
) -> Option<String> {
    if current.class != desired.class {
        return Some(format!(
            "the StorageClass of {volume} would change from {} to {}",
            current.class.as_deref().unwrap_or("the default"),
            desired.class.as_deref().unwrap_or("the default")
        ));
    }
    (current.selector != desired.selector)
        .then(|| format!("the selector of {volume}'s claims would change"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_storage_change_that_would_lose_or_strand_the_data_is_refused() {
        let claim = storage(json!({"type": "persistent-claim", "size": "1Gi", "class": "fast"}));
        let jbod = storage(json!({"type": "jbod", "volumes": [
            {"id": 0, "type": "persistent-claim", "size": "1Gi", "kraftMetadata": "shared"},
            {"id": 1, "type": "ephemeral"}]}));
        let ephemeral = storage(json!({"type": "ephemeral"}));
        // Allowed: growing, deleteClaim, an ephemeral size limit, JBOD volumes added or removed.
        for (current, desired) in [
            (
                &claim,
                storage(
                    json!({"type": "persistent-claim", "size": "5Gi", "class": "fast", "deleteClaim": true}),
                ),
            ),
            (
                &ephemeral,
                storage(json!({"type": "ephemeral", "sizeLimit": "1Gi"})),
            ),
            (
                &jbod,
                storage(json!({"type": "jbod", "volumes": [
                {"id": 0, "type": "persistent-claim", "size": "2Gi", "kraftMetadata": "shared"},
                {"id": 2, "type": "persistent-claim", "size": "1Gi"}]})),
            ),
        ] {
            assert_eq!(
                refused_storage_change(current, &desired),
                None,
                "{desired:?}"
            );
        }
        // Refused: the type, a JBOD volume's type, the StorageClass, the selector.
        for (current, desired, why) in [
            (
                &claim,
                ephemeral.clone(),
                "the storage type would change from persistent-claim to ephemeral",
            ),
            (
                &ephemeral,
                claim.clone(),
                "the storage type would change from ephemeral to persistent-claim",
            ),
            (
                &claim,
                storage(
                    json!({"type": "jbod", "volumes": [{"id": 0, "type": "persistent-claim", "size": "1Gi", "class": "fast"}]}),
                ),
                "the storage type would change from persistent-claim to jbod",
            ),
            (
                &jbod,
                storage(json!({"type": "jbod", "volumes": [
                {"id": 0, "type": "ephemeral", "kraftMetadata": "shared"}]})),
                "JBOD volume 0 would change from persistent-claim to ephemeral",
            ),
            (
                &claim,
                storage(json!({"type": "persistent-claim", "size": "1Gi"})),
                "the StorageClass of the volume would change from fast to the default",
            ),
            (
                &claim,
                storage(
                    json!({"type": "persistent-claim", "size": "1Gi", "class": "fast", "selector": {"zone": "a"}}),
                ),
                "the selector of the volume's claims would change",
            ),
        ] {
            assert_eq!(
                refused_storage_change(current, &desired).as_deref(),
                Some(why)
            );
        }
    }

    fn storage(value: serde_json::Value) -> Storage {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_storage_annotation_reads_as_strimzi_writes_it() {
        // As Strimzi 1.2.0's operator wrote it for its kafka-persistent.yaml.
        let persistent = storage(json!({"type": "jbod", "volumes": [
            {"id": 0, "type": "persistent-claim", "size": "100Gi", "deleteClaim": false,
             "kraftMetadata": "shared"}]}));
        assert_eq!(
            storage_annotation(&persistent),
            r#"{"type":"jbod","volumes":[{"id":0,"type":"persistent-claim","size":"100Gi","kraftMetadata":"shared"}]}"#
        );
        let kept = storage(
            json!({"type": "persistent-claim", "size": "1Gi", "class": "fast",
            "deleteClaim": true}),
        );
        assert_eq!(
            storage_annotation(&kept),
            r#"{"type":"persistent-claim","size":"1Gi","class":"fast","deleteClaim":true}"#
        );
    }

    #[test]
    fn volumes_and_mount_paths() {
        let jbod = storage(json!({"type": "jbod", "volumes": [
            {"id": 0, "type": "persistent-claim", "size": "1Gi"},
            {"id": 3, "type": "ephemeral", "kraftMetadata": "shared"}]}));
        let volumes = data_volumes(&jbod);
        assert_eq!(volumes[0].mount_path(), "/var/lib/kafka/data-0");
        assert_eq!(
            volumes[0].claim_name("c-p-1").as_deref(),
            Some("data-0-c-p-1")
        );
        assert_eq!(volumes[1].claim_name("c-p-1"), None);
        assert_eq!(kraft_metadata_volume(&jbod).unwrap().name, "data-3");
        let single = storage(json!({"type": "persistent-claim", "size": "1Gi"}));
        assert_eq!(
            data_volumes(&single)[0].claim_name("p").as_deref(),
            Some("data-p")
        );
        assert_eq!(
            kraft_metadata_volume(&single).unwrap().mount_path(),
            "/var/lib/kafka/data"
        );
    }

    #[test]
    fn storage_rules() {
        let ok = storage(json!({"type": "jbod", "volumes": [
            {"id": 0, "type": "persistent-claim", "size": "1Gi", "kraftMetadata": "shared"},
            {"id": 1, "type": "ephemeral"}]}));
        assert!(validate_storage("p", &ok).is_ok());
        for bad in [
            json!({"type": "persistent-claim"}),
            json!({"type": "jbod", "volumes": []}),
            json!({"type": "jbod", "volumes": [{"type": "ephemeral"}]}),
            json!({"type": "jbod", "volumes": [{"id": 1, "type": "ephemeral"}, {"id": 1, "type": "ephemeral"}]}),
            json!({"type": "jbod", "volumes": [{"id": 1, "type": "persistent-claim"}]}),
            json!({"type": "jbod", "volumes": [
                {"id": 0, "type": "ephemeral", "kraftMetadata": "shared"},
                {"id": 1, "type": "ephemeral", "kraftMetadata": "shared"}]}),
        ] {
            let error = validate_storage("p", &storage(bad.clone())).unwrap_err();
            assert_eq!(error.reason(), "InvalidConfigurationException", "{bad}");
        }
    }
}
