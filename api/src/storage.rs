//! Disk storage of Kafka nodes: a single ephemeral or persistent volume, or several volumes
//! combined as JBOD.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// Marks the volume that also holds the KRaft metadata log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum KRaftMetadataStorage {
    /// The metadata log shares this volume with the partition data.
    #[serde(rename = "shared")]
    Shared,
}

/// A volume that lives only as long as its pod, backed by an `emptyDir`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralStorage {
    /// Number identifying the volume; needed only for volumes inside JBOD storage.
    #[schemars(range(min = 0))]
    pub id: Option<i32>,
    /// Upper limit on the space the `emptyDir` may use, as a Kubernetes quantity such as `1Gi`.
    #[schemars(regex(pattern = r"^([0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"))]
    pub size_limit: Option<String>,
    /// Set to keep the KRaft metadata log on this volume; at most one volume may have it.
    pub kraft_metadata: Option<KRaftMetadataStorage>,
}

/// A volume backed by a PersistentVolumeClaim, which outlives pod restarts.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersistentClaimStorage {
    /// Number identifying the volume; needed only for volumes inside JBOD storage.
    #[schemars(range(min = 0))]
    pub id: Option<i32>,
    /// Requested capacity of the claim, such as `100Gi`. Must be given for this storage type.
    pub size: Option<String>,
    /// Name of the StorageClass that provisions the volume.
    pub class: Option<String>,
    /// Labels a pre-existing PersistentVolume must carry to be bound to the claim.
    pub selector: Option<BTreeMap<String, String>>,
    /// Whether the claim is removed together with its Kafka node. Defaults to `false`.
    pub delete_claim: Option<bool>,
    /// Name of a VolumeAttributesClass that tunes the volume's attributes.
    pub volume_attributes_class: Option<String>,
    /// Set to keep the KRaft metadata log on this volume; at most one volume may have it.
    pub kraft_metadata: Option<KRaftMetadataStorage>,
}

/// Several volumes used side by side ("just a bunch of disks").
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JbodStorage {
    /// The volumes, each with its own `id`.
    pub volumes: Option<Vec<SingleVolumeStorage>>,
}

crate::tagged_union! {
    /// The storage of a Kafka node; it cannot be changed once the node exists.
    pub enum Storage {
        /// One volume that is lost when the pod goes away.
        Ephemeral("ephemeral") => EphemeralStorage,
        /// One volume kept in a PersistentVolumeClaim.
        PersistentClaim("persistent-claim") => PersistentClaimStorage,
        /// A list of volumes.
        Jbod("jbod") => JbodStorage,
    }
}

crate::tagged_union! {
    /// One volume inside JBOD storage.
    pub enum SingleVolumeStorage {
        /// A volume that is lost when the pod goes away.
        Ephemeral("ephemeral") => EphemeralStorage,
        /// A volume kept in a PersistentVolumeClaim.
        PersistentClaim("persistent-claim") => PersistentClaimStorage,
    }
}

impl SingleVolumeStorage {
    /// The volume's `id`, if set.
    pub fn id(&self) -> Option<i32> {
        match self {
            Self::Ephemeral(volume) => volume.id,
            Self::PersistentClaim(volume) => volume.id,
        }
    }

    /// Whether and how this volume holds the KRaft metadata log.
    pub fn kraft_metadata(&self) -> Option<KRaftMetadataStorage> {
        match self {
            Self::Ephemeral(volume) => volume.kraft_metadata,
            Self::PersistentClaim(volume) => volume.kraft_metadata,
        }
    }
}

impl From<SingleVolumeStorage> for Storage {
    fn from(volume: SingleVolumeStorage) -> Self {
        match volume {
            SingleVolumeStorage::Ephemeral(volume) => Self::Ephemeral(volume),
            SingleVolumeStorage::PersistentClaim(volume) => Self::PersistentClaim(volume),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DocumentError, from_value};
    use serde_json::json;

    #[test]
    fn jbod_round_trips() {
        let document = json!({
            "type": "jbod",
            "volumes": [
                {"id": 0, "type": "persistent-claim", "size": "100Gi", "class": "fast",
                 "selector": {"zone": "a"}, "deleteClaim": false,
                 "volumeAttributesClass": "gold", "kraftMetadata": "shared"},
                {"id": 1, "type": "ephemeral", "sizeLimit": "1Gi"}
            ]
        });
        let storage: Storage = from_value(document.clone()).unwrap();
        let Storage::Jbod(jbod) = &storage else {
            panic!("expected jbod, got {storage:?}");
        };
        let volumes = jbod.volumes.as_deref().unwrap_or_default();
        assert_eq!(volumes[0].id(), Some(0));
        assert_eq!(
            volumes[0].kraft_metadata(),
            Some(KRaftMetadataStorage::Shared)
        );
        assert_eq!(volumes[1].type_name(), "ephemeral");
        assert_eq!(serde_json::to_value(&storage).unwrap(), document);
    }

    #[test]
    fn single_volumes_round_trip() {
        for document in [
            json!({"type": "ephemeral", "sizeLimit": "500Mi"}),
            json!({"type": "persistent-claim", "size": "10Gi"}),
        ] {
            let storage: Storage = from_value(document.clone()).unwrap();
            assert_eq!(serde_json::to_value(&storage).unwrap(), document);
        }
    }

    #[test]
    fn jbod_is_not_a_single_volume() {
        let error = from_value::<JbodStorage>(json!({"volumes": [{"type": "jbod"}]}))
            .expect_err("jbod cannot nest");
        let DocumentError::InvalidField { path, .. } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "volumes[0]");
    }

    #[test]
    fn wrong_kraft_metadata_names_the_field() {
        let error = from_value::<Storage>(json!({"type": "ephemeral", "kraftMetadata": "own"}))
            .expect_err("only `shared` is allowed");
        assert!(error.to_string().contains("kraftMetadata"), "{error}");
    }

    #[test]
    fn schema_has_bounds_and_type_enum() {
        let schema = serde_json::to_value(schemars::schema_for!(Storage)).unwrap();
        let properties = &schema["properties"];
        assert_eq!(properties["id"]["minimum"], 0);
        assert_eq!(
            properties["type"]["enum"],
            json!(["ephemeral", "persistent-claim", "jbod"])
        );
        assert!(properties["sizeLimit"]["pattern"].is_string());
        assert!(properties["volumes"].is_object());
    }
}
