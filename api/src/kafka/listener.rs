//! Listeners: how clients reach the Kafka brokers, and how they authenticate.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::NetworkPolicyPeer;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::common::{CertAndKeySecretSource, IpFamily, IpFamilyPolicy};
use crate::tagged_union;

/// One listener of the Kafka brokers: a named port, how it is exposed, and its security.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GenericKafkaListener {
    /// Unique listener name: 1 to 11 lowercase letters or digits. It also names the
    /// Kubernetes objects created for the listener.
    #[schemars(regex(pattern = r"^[a-z0-9]{1,11}$"))]
    pub name: String,
    /// Port the brokers listen on; unique within the cluster, 9092 or above, and neither
    /// 9404 nor 9999, which are taken.
    #[schemars(range(min = 9092))]
    pub port: i32,
    /// How the listener is exposed.
    pub r#type: KafkaListenerType,
    /// Whether the listener encrypts traffic with TLS. Route and ingress listeners need it.
    pub tls: bool,
    /// How clients of this listener authenticate. Unset means no authentication.
    pub authentication: Option<KafkaListenerAuthentication>,
    /// Further settings, most of which apply only to some listener types.
    pub configuration: Option<GenericKafkaListenerConfiguration>,
    /// Peers allowed to connect, combined with a logical OR. Unset or empty allows everyone.
    pub network_policy_peers: Option<Vec<NetworkPolicyPeer>>,
}

/// How a listener is exposed to its clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum KafkaListenerType {
    /// Reachable only from inside the Kubernetes cluster, through headless services.
    #[serde(rename = "internal")]
    Internal,
    /// Exposed through OpenShift Routes (needs TLS).
    #[serde(rename = "route")]
    Route,
    /// Exposed through Gateway API `TLSRoute` resources (needs TLS).
    #[serde(rename = "tlsroute")]
    TlsRoute,
    /// Exposed through `LoadBalancer` services, one for bootstrap and one per broker.
    #[serde(rename = "loadbalancer")]
    LoadBalancer,
    /// Exposed through `NodePort` services on the Kubernetes nodes.
    #[serde(rename = "nodeport")]
    NodePort,
    /// Exposed through Kubernetes Ingress resources with TLS passthrough (needs TLS).
    #[serde(rename = "ingress")]
    Ingress,
    /// Reachable inside the cluster through a `ClusterIP` service per broker.
    #[serde(rename = "cluster-ip")]
    ClusterIp,
}

impl KafkaListenerType {
    /// Every listener type, in the CRD's order.
    pub const ALL: [KafkaListenerType; 7] = [
        Self::Internal,
        Self::Route,
        Self::TlsRoute,
        Self::LoadBalancer,
        Self::NodePort,
        Self::Ingress,
        Self::ClusterIp,
    ];

    /// The value used in the resource's `type` field, e.g. `"cluster-ip"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Internal => "internal",
            Self::Route => "route",
            Self::TlsRoute => "tlsroute",
            Self::LoadBalancer => "loadbalancer",
            Self::NodePort => "nodeport",
            Self::Ingress => "ingress",
            Self::ClusterIp => "cluster-ip",
        }
    }

    /// Whether clients outside the Kubernetes cluster are the intended users
    /// (every type except `internal` and `cluster-ip`).
    pub fn is_external(self) -> bool {
        !matches!(self, Self::Internal | Self::ClusterIp)
    }
}

impl std::fmt::Display for KafkaListenerType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Mutual TLS: clients present a certificate signed by the clients CA. TLS listeners only.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KafkaListenerAuthenticationTls {}

/// SASL SCRAM-SHA-512 with user names and passwords managed through `KafkaUser` resources.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KafkaListenerAuthenticationScramSha512 {}

/// Authentication configured by hand through Kafka listener settings (for example OAuth).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaListenerAuthenticationCustom {
    /// Whether the listener uses SASL.
    pub sasl: Option<bool>,
    /// Kafka settings for this listener only; each key gets the
    /// `listener.name.<listener name>.` prefix.
    pub listener_config: Option<crate::schema::FreeFormMap>,
}

tagged_union! {
    /// How clients of a listener prove who they are.
    pub enum KafkaListenerAuthentication {
        /// Mutual TLS client certificates.
        Tls("tls") => KafkaListenerAuthenticationTls,
        /// SASL SCRAM-SHA-512.
        ScramSha512("scram-sha-512") => KafkaListenerAuthenticationScramSha512,
        /// A user-supplied mechanism configured through listener settings.
        Custom("custom") => KafkaListenerAuthenticationCustom,
    }
}

/// Settings of a listener beyond its type, port and security.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GenericKafkaListenerConfiguration {
    /// A user-provided server certificate (optionally with its chain) and key used instead of
    /// one signed by the cluster CA. TLS listeners only.
    pub broker_cert_chain_and_key: Option<CertAndKeySecretSource>,
    /// Controller class: `ingressClassName` for ingress listeners, `loadBalancerClass` for
    /// loadbalancer listeners.
    pub class: Option<String>,
    /// Whether services send external traffic to node-local or cluster-wide endpoints.
    /// Loadbalancer and nodeport listeners only; Kubernetes defaults to `Cluster`.
    pub external_traffic_policy: Option<ExternalTrafficPolicy>,
    /// CIDR ranges allowed to connect through the load balancer. Loadbalancer listeners only.
    pub load_balancer_source_ranges: Option<Vec<String>>,
    /// Overrides for the bootstrap service, route or ingress.
    pub bootstrap: Option<GenericKafkaListenerConfigurationBootstrap>,
    /// Overrides for individual brokers.
    pub brokers: Option<Vec<GenericKafkaListenerConfigurationBroker>>,
    /// IP family policy of the listener's services; Kubernetes picks one when unset.
    pub ip_family_policy: Option<IpFamilyPolicy>,
    /// IP families of the listener's services; Kubernetes picks them when unset.
    pub ip_families: Option<Vec<IpFamily>>,
    /// Whether a bootstrap service is created. Defaults to `true`. Loadbalancer listeners only.
    pub create_bootstrap_service: Option<bool>,
    /// Finalizers set on the `LoadBalancer` services of this listener.
    pub finalizers: Option<Vec<String>>,
    /// Whether generated addresses end with the cluster's service DNS domain (such as
    /// `.cluster.local`). Internal and cluster-ip listeners only.
    pub use_service_dns_domain: Option<bool>,
    /// Most connections a broker accepts on this listener at once.
    pub max_connections: Option<i32>,
    /// Most new connections per second a broker accepts on this listener.
    pub max_connection_creation_rate: Option<i32>,
    /// Node address type tried first when advertising nodeport listeners.
    pub preferred_node_port_address_type: Option<NodeAddressType>,
    /// Whether service endpoints include pods that are not ready. Defaults to `false`.
    /// Not for internal listeners.
    pub publish_not_ready_addresses: Option<bool>,
    /// Annotations for each broker's resources; values may use `{nodeId}` and
    /// `{nodePodName}`.
    pub per_broker_annotations_template: Option<BTreeMap<String, String>>,
    /// Labels for each broker's resources; values may use `{nodeId}` and `{nodePodName}`.
    pub per_broker_labels_template: Option<BTreeMap<String, String>>,
    /// Template of each broker's host name; may use `{nodeId}` and `{nodePodName}`.
    pub host_template: Option<String>,
    /// Template of each broker's advertised host name; may use `{nodeId}` and
    /// `{nodePodName}`.
    pub advertised_host_template: Option<String>,
    /// Template of each broker's advertised port: a simple arithmetic expression over
    /// `{nodeId}`.
    pub advertised_port_template: Option<String>,
    /// Whether `LoadBalancer` services get node ports allocated. Loadbalancer listeners only.
    pub allocate_load_balancer_node_ports: Option<bool>,
    /// Gateway API resources (usually `Gateway`s) the generated `TLSRoute`s attach to.
    /// Tlsroute listeners only.
    pub parent_refs: Option<Vec<ParentReference>>,
}

/// Overrides for a listener's bootstrap service, route or ingress.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GenericKafkaListenerConfigurationBootstrap {
    /// Extra subject alternative names for the brokers' TLS certificates.
    pub alternative_names: Option<Vec<String>>,
    /// Host name of the bootstrap route or ingress (required for ingress listeners).
    pub host: Option<String>,
    /// Node port of the bootstrap service. Nodeport listeners only.
    pub node_port: Option<i32>,
    /// IP address requested for the bootstrap load balancer, if the platform supports it.
    #[serde(rename = "loadBalancerIP")]
    pub load_balancer_ip: Option<String>,
    /// Annotations added to the bootstrap service, route or ingress.
    pub annotations: Option<BTreeMap<String, String>>,
    /// Labels added to the bootstrap service, route or ingress.
    pub labels: Option<BTreeMap<String, String>>,
    /// External IPs of the bootstrap service. Nodeport listeners only.
    #[serde(rename = "externalIPs")]
    pub external_ips: Option<Vec<String>>,
}

/// Overrides for one broker's service, route or ingress and its advertised address.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GenericKafkaListenerConfigurationBroker {
    /// Node ID of the broker these overrides are for.
    pub broker: i32,
    /// Host name the broker advertises in `advertised.listeners`.
    pub advertised_host: Option<String>,
    /// Port the broker advertises in `advertised.listeners`.
    pub advertised_port: Option<i32>,
    /// Host name of the broker's route or ingress (required for ingress listeners).
    pub host: Option<String>,
    /// Node port of the broker's service. Nodeport listeners only.
    pub node_port: Option<i32>,
    /// IP address requested for the broker's load balancer, if the platform supports it.
    #[serde(rename = "loadBalancerIP")]
    pub load_balancer_ip: Option<String>,
    /// Annotations added to the broker's service, route or ingress.
    pub annotations: Option<BTreeMap<String, String>>,
    /// Labels added to the broker's service, route or ingress.
    pub labels: Option<BTreeMap<String, String>>,
    /// External IPs of the broker's service. Nodeport listeners only.
    #[serde(rename = "externalIPs")]
    pub external_ips: Option<Vec<String>>,
}

/// Where a service sends traffic arriving from outside the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ExternalTrafficPolicy {
    /// Only to endpoints on the receiving node; keeps the client's source IP.
    Local,
    /// To any endpoint in the cluster; may add a hop and hides the client's source IP.
    Cluster,
}

/// Kind of node address advertised by nodeport listeners.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum NodeAddressType {
    /// The node's external IP address.
    #[serde(rename = "ExternalIP")]
    ExternalIp,
    /// The node's external DNS name.
    #[serde(rename = "ExternalDNS")]
    ExternalDns,
    /// The node's internal IP address.
    #[serde(rename = "InternalIP")]
    InternalIp,
    /// The node's internal DNS name.
    #[serde(rename = "InternalDNS")]
    InternalDns,
    /// The node's host name.
    Hostname,
}

/// A Gateway API parent (usually a `Gateway`, optionally one of its listeners) that a
/// `TLSRoute` attaches to.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ParentReference {
    /// Kind of the parent, such as `Gateway`.
    pub kind: Option<String>,
    /// API group of the parent, such as `gateway.networking.k8s.io`.
    pub group: Option<String>,
    /// Name of the parent.
    pub name: Option<String>,
    /// Namespace of the parent; the Kafka resource's namespace when unset.
    pub namespace: Option<String>,
    /// Port of the parent to attach to.
    pub port: Option<i32>,
    /// Name of a section (such as a listener) of the parent to attach to.
    pub section_name: Option<String>,
}
