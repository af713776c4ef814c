//! Log levels of a component, given inline or in a ConfigMap.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMapKeySelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// Logger levels written directly in the resource.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InlineLogging {
    /// Level per logger name, for example `rootLogger.level: INFO`.
    pub loggers: Option<BTreeMap<String, String>>,
}

/// A complete logging configuration kept in a ConfigMap.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalLogging {
    /// The ConfigMap key holding the configuration.
    pub value_from: Option<ExternalConfigurationReference>,
}

/// Points at one key of a ConfigMap whose content configures a component.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalConfigurationReference {
    /// ConfigMap name and key.
    pub config_map_key_ref: Option<ConfigMapKeySelector>,
}

crate::tagged_union! {
    /// Where a component's logging configuration comes from.
    pub enum Logging {
        /// Logger levels listed in the resource.
        Inline("inline") => InlineLogging,
        /// A configuration file stored in a ConfigMap.
        External("external") => ExternalLogging,
    }
}
