//! Distributed tracing of a component.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Tracing with OpenTelemetry, configured through the usual `OTEL_*` environment variables.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OpenTelemetryTracing {}

crate::tagged_union! {
    /// Which tracing system a component reports to.
    pub enum Tracing {
        /// OpenTelemetry.
        OpenTelemetry("opentelemetry") => OpenTelemetryTracing,
    }
}
