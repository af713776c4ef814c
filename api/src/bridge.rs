//! The `KafkaBridge` custom resource: an HTTP bridge that lets clients produce to and consume
//! from Kafka over HTTP.

use k8s_openapi::api::core::v1::ResourceRequirements;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{
    CertAndKeySecretSource, ClientTls, Condition, ContainerTemplate, DeploymentTemplate,
    InternalServiceTemplate, JvmOptions, KafkaClientAuthentication, Logging, MetricsConfig,
    PodDisruptionBudgetTemplate, PodTemplate, Probe, Rack, ResourceTemplate, Tracing,
};
use crate::schema::FreeFormMap;

/// The desired state of an HTTP bridge.
#[skip_serializing_none]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kafka.strimzi.io",
    version = "v1",
    derive = "PartialEq",
    kind = "KafkaBridge",
    namespaced,
    status = "KafkaBridgeStatus",
    shortname = "kb",
    category = "strimzi"
)]
#[serde(rename_all = "camelCase")]
pub struct KafkaBridgeSpec {
    /// Number of bridge pods.
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// Container image of the bridge, overriding the operator's default.
    pub image: Option<String>,
    /// Bootstrap addresses (`host:port` list) of the Kafka cluster to connect to.
    pub bootstrap_servers: String,
    /// TLS settings for the connection to Kafka.
    pub tls: Option<ClientTls>,
    /// How the bridge authenticates to Kafka.
    pub authentication: Option<KafkaClientAuthentication>,
    /// The HTTP server of the bridge.
    pub http: Option<KafkaBridgeHttpConfig>,
    /// The Kafka admin client used by the bridge.
    pub admin_client: Option<KafkaBridgeAdminClientSpec>,
    /// The Kafka consumers created for HTTP clients.
    pub consumer: Option<KafkaBridgeConsumerSpec>,
    /// The Kafka producer used for HTTP clients.
    pub producer: Option<KafkaBridgeProducerSpec>,
    /// CPU and memory for each bridge container.
    pub resources: Option<ResourceRequirements>,
    /// JVM settings of the bridge.
    pub jvm_options: Option<JvmOptions>,
    /// Logging configuration of the bridge.
    pub logging: Option<Logging>,
    /// Image of the init container that determines the rack; the operator's default when unset.
    pub client_rack_init_image: Option<String>,
    /// Rack awareness: sets `client.rack` of the bridge's consumers.
    pub rack: Option<Rack>,
    /// How metrics are exposed.
    pub metrics_config: Option<MetricsConfig>,
    /// Liveness check of the bridge container.
    pub liveness_probe: Option<Probe>,
    /// Readiness check of the bridge container.
    pub readiness_probe: Option<Probe>,
    /// Overrides for the Kubernetes resources the operator creates.
    pub template: Option<KafkaBridgeTemplate>,
    /// Distributed tracing of the bridge.
    pub tracing: Option<Tracing>,
    /// Configuration of the bridge itself, as `bridge.*`-style options.
    pub config: Option<FreeFormMap>,
}

/// The bridge's HTTP server.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaBridgeHttpConfig {
    /// Port the HTTP server listens on. Defaults to 8080.
    #[schemars(range(min = 1023))]
    pub port: Option<i32>,
    /// Serves HTTPS instead of plain HTTP.
    pub tls: Option<KafkaBridgeHttpTls>,
    /// Cross-origin resource sharing rules.
    pub cors: Option<KafkaBridgeHttpCors>,
}

/// HTTPS settings of the bridge's HTTP server.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaBridgeHttpTls {
    /// Secret with the server certificate and private key.
    pub certificate_and_key: CertAndKeySecretSource,
    /// Further TLS options of the HTTP server.
    pub config: Option<FreeFormMap>,
}

/// Cross-origin resource sharing (CORS) rules of the HTTP server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaBridgeHttpCors {
    /// Origins allowed to call the bridge; regular expressions are accepted.
    pub allowed_origins: Vec<String>,
    /// HTTP methods allowed for cross-origin requests.
    pub allowed_methods: Vec<String>,
}

/// The bridge's Kafka admin client.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaBridgeAdminClientSpec {
    /// Kafka admin client configuration.
    pub config: Option<FreeFormMap>,
}

/// The bridge's Kafka consumers.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaBridgeConsumerSpec {
    /// Whether the HTTP consumer endpoints are available. Defaults to `true`.
    pub enabled: Option<bool>,
    /// Seconds after which an idle consumer is removed; `-1` (the default) never removes it.
    pub timeout_seconds: Option<i32>,
    /// Kafka consumer configuration.
    pub config: Option<FreeFormMap>,
}

/// The bridge's Kafka producer.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaBridgeProducerSpec {
    /// Whether the HTTP producer endpoints are available. Defaults to `true`.
    pub enabled: Option<bool>,
    /// Kafka producer configuration.
    pub config: Option<FreeFormMap>,
}

/// Overrides for the resources generated for an HTTP bridge.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaBridgeTemplate {
    /// The Deployment that runs the bridge.
    pub deployment: Option<DeploymentTemplate>,
    /// The bridge pods.
    pub pod: Option<PodTemplate>,
    /// The Service that exposes the HTTP API.
    pub api_service: Option<InternalServiceTemplate>,
    /// The PodDisruptionBudget of the bridge pods.
    pub pod_disruption_budget: Option<PodDisruptionBudgetTemplate>,
    /// The bridge container.
    pub bridge_container: Option<ContainerTemplate>,
    /// The ClusterRoleBinding that lets the init container read node labels.
    pub cluster_role_binding: Option<ResourceTemplate>,
    /// The ServiceAccount of the bridge pods.
    pub service_account: Option<ResourceTemplate>,
    /// The init container that looks up the node's rack.
    pub init_container: Option<ContainerTemplate>,
}

/// The observed state of an HTTP bridge.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaBridgeStatus {
    /// Observations about the bridge, such as whether it is ready.
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// URL at which HTTP clients reach the bridge.
    pub url: Option<String>,
    /// Number of pods currently running the bridge.
    pub replicas: Option<i32>,
    /// Label selector of the pods, for the scale subresource.
    pub label_selector: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DocumentError, from_value, unknown_fields};
    use serde_json::json;

    fn full_document() -> serde_json::Value {
        json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaBridge",
            "metadata": {"name": "bridge"},
            "spec": {
                "replicas": 1,
                "image": "example/bridge:1",
                "bootstrapServers": "kafka:9093",
                "tls": {"trustedCertificates": [{"secretName": "ca", "certificate": "ca.crt"}]},
                "authentication": {"type": "plain", "username": "u",
                                   "passwordSecret": {"secretName": "p", "password": "pw"}},
                "http": {
                    "port": 8443,
                    "tls": {"certificateAndKey": {"secretName": "s", "certificate": "c.crt", "key": "k.key"},
                            "config": {"ssl.protocol": "TLSv1.3"}},
                    "cors": {"allowedOrigins": ["https://a.example"], "allowedMethods": ["GET", "POST"]}
                },
                "adminClient": {"config": {"request.timeout.ms": 1000}},
                "consumer": {"enabled": true, "timeoutSeconds": -1, "config": {"auto.offset.reset": "earliest"}},
                "producer": {"enabled": false, "config": {"acks": 1}},
                "resources": {"limits": {"memory": "512Mi"}},
                "clientRackInitImage": "example/init:1",
                "tracing": {"type": "opentelemetry"},
                "config": {"bridge.id": "b"},
                "template": {"deployment": {"deploymentStrategy": "Recreate"}}
            },
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "observedGeneration": 4,
                "url": "http://bridge-bridge-service:8080",
                "replicas": 1,
                "labelSelector": "strimzi.io/cluster=bridge"
            }
        })
    }

    #[test]
    fn bridge_round_trips() {
        let document = full_document();
        assert!(unknown_fields::<KafkaBridge>(&document).unwrap().is_empty());
        let bridge: KafkaBridge = from_value(document.clone()).unwrap();
        assert_eq!(bridge.spec.http.as_ref().and_then(|h| h.port), Some(8443));
        assert_eq!(serde_json::to_value(&bridge).unwrap(), document);
    }

    #[test]
    fn missing_cors_methods_names_its_path() {
        let mut document = full_document();
        document["spec"]["http"]["cors"] = json!({"allowedOrigins": ["*"]});
        let error = from_value::<KafkaBridge>(document).unwrap_err();
        let DocumentError::InvalidField { path, message } = error else {
            panic!("unexpected error {error}");
        };
        assert_eq!(path, "spec.http.cors.allowedMethods");
        assert!(message.contains("allowedMethods"), "{message}");
    }

    #[test]
    fn port_and_replicas_have_bounds() {
        let schema = serde_json::to_value(schemars::schema_for!(KafkaBridgeSpec)).unwrap();
        assert_eq!(schema["properties"]["replicas"]["minimum"], json!(0));
        let http = &schema["$defs"]["KafkaBridgeHttpConfig"];
        assert_eq!(http["properties"]["port"]["minimum"], json!(1023));
    }
}
