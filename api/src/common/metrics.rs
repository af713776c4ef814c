//! Prometheus metrics exposed by a component.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::logging::ExternalConfigurationReference;

/// Metrics through the Prometheus JMX Exporter agent, configured by rules in a ConfigMap.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JmxPrometheusExporterMetrics {
    /// The ConfigMap key holding the exporter's rules. Needed for this metrics type.
    pub value_from: Option<ExternalConfigurationReference>,
}

/// Metrics through Strimzi's Kafka metrics reporter, exported directly to Prometheus.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrimziMetricsReporter {
    /// Which metrics are exported.
    pub values: Option<StrimziMetricsReporterValues>,
}

/// Selection of the metrics the Strimzi metrics reporter exports.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrimziMetricsReporterValues {
    /// Regular expressions; only metrics whose names match one are exported.
    pub allow_list: Option<Vec<String>>,
}

crate::tagged_union! {
    /// How a component exposes Prometheus metrics.
    pub enum MetricsConfig {
        /// Prometheus JMX Exporter.
        JmxPrometheusExporter("jmxPrometheusExporter") => JmxPrometheusExporterMetrics,
        /// Strimzi metrics reporter.
        StrimziMetricsReporter("strimziMetricsReporter") => StrimziMetricsReporter,
    }
}
