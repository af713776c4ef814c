//! Tiered storage: moving older log segments of the brokers to remote storage.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::tagged_union;

/// Tiered storage backed by a user-supplied `RemoteStorageManager` implementation.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TieredStorageCustom {
    /// The remote storage manager plugin.
    pub remote_storage_manager: Option<RemoteStorageManager>,
}

/// A `RemoteStorageManager` plugin and its settings.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteStorageManager {
    /// Fully qualified name of the implementation class.
    pub class_name: Option<String>,
    /// Class path where the implementation is found.
    pub class_path: Option<String>,
    /// Settings of the plugin; each key is added to the broker configuration with the
    /// `rsm.config.` prefix.
    pub config: Option<BTreeMap<String, String>>,
}

tagged_union! {
    /// How the brokers offload log segments to remote storage.
    pub enum TieredStorage {
        /// A user-supplied remote storage manager (the only kind so far).
        Custom("custom") => TieredStorageCustom,
    }
}
