//! Types shared by several custom resources: status conditions, probes, JVM options, logging,
//! metrics, templates, secret references, client authentication and TLS, tracing, rack.

pub mod client_auth;
pub mod jmx;
pub mod jvm;
pub mod logging;
pub mod metrics;
pub mod probe;
pub mod rack;
pub mod secrets;
pub mod status;
pub mod template;
pub mod tls;
pub mod tracing;

pub use client_auth::{
    KafkaClientAuthentication, KafkaClientAuthenticationCustom, KafkaClientAuthenticationPassword,
    KafkaClientAuthenticationTls,
};
pub use jmx::{KafkaJmxAuthentication, KafkaJmxAuthenticationPassword, KafkaJmxOptions};
pub use jvm::{JvmOptions, SystemProperty};
pub use logging::{ExternalConfigurationReference, ExternalLogging, InlineLogging, Logging};
pub use metrics::{
    JmxPrometheusExporterMetrics, MetricsConfig, StrimziMetricsReporter,
    StrimziMetricsReporterValues,
};
pub use probe::Probe;
pub use rack::{Rack, RackType};
pub use secrets::{
    CertAndKeySecretSource, CertSecretSource, PasswordSecretSource, PasswordSource,
    PasswordValueSource,
};
pub use status::Condition;
pub use template::{
    AdditionalVolume, ContainerEnvVar, ContainerEnvVarSource, ContainerTemplate,
    DeploymentStrategy, DeploymentTemplate, DnsPolicy, EmptyDirMedium, EmptyDirVolume,
    InternalServiceTemplate, IpFamily, IpFamilyPolicy, MetadataTemplate,
    PodDisruptionBudgetTemplate, PodSetPodTemplate, PodTemplate, ResourceTemplate, TemplatedVolume,
};
pub use tls::ClientTls;
pub use tracing::{OpenTelemetryTracing, Tracing};

#[cfg(test)]
mod tests;
