//! Options passed to the Java virtual machine of a component.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// Heap sizes, `-XX` flags, GC logging and system properties for a JVM.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JvmOptions {
    /// Advanced `-XX` flags, keyed by flag name without the `-XX:` prefix.
    #[serde(rename = "-XX")]
    pub xx: Option<BTreeMap<String, String>>,
    /// Largest heap size, such as `2g` or `512m` (`-Xmx`).
    #[serde(rename = "-Xmx")]
    #[schemars(regex(pattern = r"^[0-9]+[mMgG]?$"))]
    pub xmx: Option<String>,
    /// Starting heap size, such as `1g` or `256m` (`-Xms`).
    #[serde(rename = "-Xms")]
    #[schemars(regex(pattern = r"^[0-9]+[mMgG]?$"))]
    pub xms: Option<String>,
    /// Whether garbage-collection logging is turned on. Defaults to false.
    pub gc_logging_enabled: Option<bool>,
    /// Extra `-D` system properties for the JVM.
    pub java_system_properties: Option<Vec<SystemProperty>>,
}

/// One Java system property, passed as `-Dname=value`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SystemProperty {
    /// Property name.
    pub name: Option<String>,
    /// Property value.
    pub value: Option<String>,
}
