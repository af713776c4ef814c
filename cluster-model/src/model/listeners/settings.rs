//! Reading one listener's settings: names of its objects, its bootstrap and per-broker
//! overrides and the per-broker templates (`hostTemplate`, `perBrokerLabelsTemplate`, ...).

use std::collections::BTreeMap;

use strimzi_api::common::{IpFamily, IpFamilyPolicy};
use strimzi_api::kafka::{
    ExternalTrafficPolicy, GenericKafkaListener, GenericKafkaListenerConfiguration,
    GenericKafkaListenerConfigurationBootstrap, GenericKafkaListenerConfigurationBroker,
    KafkaListenerType, NodeAddressType,
};
use strimzi_api::naming;

use crate::model::KafkaNode;
use crate::model::meta::StringMap;

/// Port of the Route, Ingress and TLSRoute listeners as clients see it.
pub const TLS_PASSTHROUGH_PORT: i32 = 443;

/// The listener Strimzi's older releases named `external` on port 9094, whose objects keep
/// their old names.
fn is_legacy_external(listener: &GenericKafkaListener) -> bool {
    listener.name == "external" && listener.port == 9094
}

/// Replaces `{nodeId}` and `{nodePodName}` in a per-broker template.
pub fn render_node_template(template: &str, node: &KafkaNode) -> String {
    template
        .replace("{nodeId}", &node.node_id.to_string())
        .replace("{nodePodName}", &node.pod_name)
}

/// Evaluates an `advertisedPortTemplate` such as `30000 + {nodeId}`: integers, `{nodeId}`,
/// `+`, `-` and `*` (which binds tighter). `None` when it is not such an expression.
pub fn evaluate_port_template(template: &str, node_id: i32) -> Option<i32> {
    let expression = template.replace("{nodeId}", &node_id.to_string());
    let mut sum: i64 = 0;
    let mut sign: i64 = 1;
    let mut product: Option<i64> = None;
    let mut expect_operand = true;
    let mut chars = expression.chars().peekable();
    while let Some(&next) = chars.peek() {
        if next.is_whitespace() {
            chars.next();
        } else if next.is_ascii_digit() {
            if !expect_operand {
                return None;
            }
            let mut value: i64 = 0;
            while let Some(digit) = chars.peek().and_then(|c| c.to_digit(10)) {
                value = value.checked_mul(10)?.checked_add(i64::from(digit))?;
                chars.next();
            }
            product = Some(match product {
                Some(factor) => factor.checked_mul(value)?,
                None => value,
            });
            expect_operand = false;
        } else if expect_operand {
            return None;
        } else {
            chars.next();
            match next {
                '*' => {}
                '+' | '-' => {
                    sum = sum.checked_add(sign.checked_mul(product.take()?)?)?;
                    sign = if next == '+' { 1 } else { -1 };
                }
                _ => return None,
            }
            expect_operand = true;
        }
    }
    if expect_operand {
        return None;
    }
    let total = sum.checked_add(sign.checked_mul(product?)?)?;
    i32::try_from(total).ok()
}

/// Settings of one listener, with Strimzi's defaults.
pub trait ListenerSettings {
    /// The listener's configuration, or the empty default.
    fn settings(&self) -> GenericKafkaListenerConfiguration;
    /// Name of the listener's Service ports (`tcp-<name>`, or the names older releases used).
    fn port_name(&self) -> String;
    /// Bootstrap Service of the listener: the shared `<cluster>-kafka-bootstrap` for internal
    /// listeners, `<cluster>-kafka-<listener>-bootstrap` for the others.
    fn bootstrap_service_name(&self, cluster: &str) -> String;
    /// Name of the bootstrap Route, Ingress or TLSRoute.
    fn bootstrap_route_name(&self, cluster: &str) -> String;
    /// Name of a broker's Service, Route, Ingress or TLSRoute.
    fn per_node_name(&self, cluster: &str, node: &KafkaNode) -> String;
    /// The bootstrap overrides.
    fn bootstrap(&self) -> GenericKafkaListenerConfigurationBootstrap;
    /// The overrides of one broker, if any.
    fn broker(&self, node_id: i32) -> Option<GenericKafkaListenerConfigurationBroker>;
    /// Labels of a broker's objects: its overrides, else the rendered labels template.
    fn broker_labels(&self, node: &KafkaNode) -> StringMap;
    /// Annotations of a broker's objects: its overrides, else the rendered annotations
    /// template.
    fn broker_annotations(&self, node: &KafkaNode) -> StringMap;
    /// Host of a broker's Route, Ingress or TLSRoute: its override, else the host template.
    fn broker_host(&self, node: &KafkaNode) -> Option<String>;
    /// Host the broker advertises instead of the address Kubernetes gives it.
    fn broker_advertised_host(&self, node: &KafkaNode) -> Option<String>;
    /// Port the broker advertises instead of the one Kubernetes gives it.
    fn broker_advertised_port(&self, node: &KafkaNode) -> Option<i32>;
    /// Whether generated addresses end with the cluster DNS domain.
    fn use_service_dns_domain(&self) -> bool;
    /// Kubernetes Service type of the listener's Services.
    fn service_type(&self) -> &'static str;
    /// Whether a loadbalancer listener goes without a bootstrap Service.
    fn skips_bootstrap_service(&self) -> bool;
    /// `externalTrafficPolicy` of nodeport and loadbalancer Services (`Cluster` by default).
    fn external_traffic_policy(&self) -> Option<&'static str>;
    /// IP family policy of the listener's Services.
    fn ip_family_policy(&self) -> Option<IpFamilyPolicy>;
    /// IP families of the listener's Services.
    fn ip_families(&self) -> Option<Vec<IpFamily>>;
    /// The placeholder a nodeport broker advertises; the pod's init container writes the
    /// node's address of the preferred type to a file the broker reads it from.
    fn node_port_address_placeholder(&self) -> String;
}

impl ListenerSettings for GenericKafkaListener {
    fn settings(&self) -> GenericKafkaListenerConfiguration {
        self.configuration.clone().unwrap_or_default()
    }

    fn port_name(&self) -> String {
        let internal = self.r#type == KafkaListenerType::Internal;
        match (self.name.as_str(), self.port) {
            ("plain", 9092) if internal => "tcp-clients".to_owned(),
            ("tls", 9093) if internal => "tcp-clientstls".to_owned(),
            ("external", 9094) => "tcp-external".to_owned(),
            (name, _) => format!("tcp-{name}"),
        }
    }

    fn bootstrap_service_name(&self, cluster: &str) -> String {
        if self.r#type == KafkaListenerType::Internal {
            naming::bootstrap_service(cluster)
        } else {
            naming::external_bootstrap_service(cluster, &self.name)
        }
    }

    fn bootstrap_route_name(&self, cluster: &str) -> String {
        if is_legacy_external(self) {
            naming::bootstrap_service(cluster)
        } else {
            naming::external_bootstrap_service(cluster, &self.name)
        }
    }

    fn per_node_name(&self, cluster: &str, node: &KafkaNode) -> String {
        if is_legacy_external(self) {
            naming::kafka_pod(cluster, &node.pool, node.node_id)
        } else {
            naming::per_node_service(cluster, &node.pool, &self.name, node.node_id)
        }
    }

    fn bootstrap(&self) -> GenericKafkaListenerConfigurationBootstrap {
        self.settings().bootstrap.unwrap_or_default()
    }

    fn broker(&self, node_id: i32) -> Option<GenericKafkaListenerConfigurationBroker> {
        self.settings()
            .brokers
            .unwrap_or_default()
            .into_iter()
            .find(|broker| broker.broker == node_id)
    }

    fn broker_labels(&self, node: &KafkaNode) -> StringMap {
        per_broker_map(
            self.broker(node.node_id).and_then(|broker| broker.labels),
            self.settings().per_broker_labels_template,
            node,
        )
    }

    fn broker_annotations(&self, node: &KafkaNode) -> StringMap {
        per_broker_map(
            self.broker(node.node_id)
                .and_then(|broker| broker.annotations),
            self.settings().per_broker_annotations_template,
            node,
        )
    }

    fn broker_host(&self, node: &KafkaNode) -> Option<String> {
        let own = self.broker(node.node_id).and_then(|broker| broker.host);
        own_or_rendered(own, self.settings().host_template, node)
    }

    fn broker_advertised_host(&self, node: &KafkaNode) -> Option<String> {
        let own = self
            .broker(node.node_id)
            .and_then(|broker| broker.advertised_host);
        own_or_rendered(own, self.settings().advertised_host_template, node)
    }

    fn broker_advertised_port(&self, node: &KafkaNode) -> Option<i32> {
        self.broker(node.node_id)
            .and_then(|broker| broker.advertised_port)
            .or_else(|| {
                self.settings()
                    .advertised_port_template
                    .and_then(|template| evaluate_port_template(&template, node.node_id))
            })
    }

    fn use_service_dns_domain(&self) -> bool {
        self.settings().use_service_dns_domain.unwrap_or(false)
    }

    fn service_type(&self) -> &'static str {
        match self.r#type {
            KafkaListenerType::NodePort => "NodePort",
            KafkaListenerType::LoadBalancer => "LoadBalancer",
            _ => "ClusterIP",
        }
    }

    fn skips_bootstrap_service(&self) -> bool {
        self.r#type == KafkaListenerType::LoadBalancer
            && self.settings().create_bootstrap_service == Some(false)
    }

    fn external_traffic_policy(&self) -> Option<&'static str> {
        matches!(
            self.r#type,
            KafkaListenerType::NodePort | KafkaListenerType::LoadBalancer
        )
        .then(|| match self.settings().external_traffic_policy {
            Some(ExternalTrafficPolicy::Local) => "Local",
            Some(ExternalTrafficPolicy::Cluster) | None => "Cluster",
        })
    }

    fn ip_family_policy(&self) -> Option<IpFamilyPolicy> {
        self.settings().ip_family_policy
    }

    fn ip_families(&self) -> Option<Vec<IpFamily>> {
        self.settings().ip_families
    }

    fn node_port_address_placeholder(&self) -> String {
        let kind = match self.settings().preferred_node_port_address_type {
            None => "default",
            Some(NodeAddressType::ExternalIp) => "externalip",
            Some(NodeAddressType::ExternalDns) => "externaldns",
            Some(NodeAddressType::InternalIp) => "internalip",
            Some(NodeAddressType::InternalDns) => "internaldns",
            Some(NodeAddressType::Hostname) => "hostname",
        };
        format!("${{strimzifile:/opt/kafka/init/external.address:nodeport.{kind}.address}}")
    }
}

/// A broker's own value if it has one, else the template rendered for it.
fn own_or_rendered(
    own: Option<String>,
    template: Option<String>,
    node: &KafkaNode,
) -> Option<String> {
    own.or_else(|| template.map(|template| render_node_template(&template, node)))
}

/// A broker's own map if it has one, else the template rendered for it.
fn per_broker_map(
    own: Option<StringMap>,
    template: Option<BTreeMap<String, String>>,
    node: &KafkaNode,
) -> StringMap {
    own.or_else(|| {
        template.map(|template| {
            template
                .into_iter()
                .map(|(key, value)| (key, render_node_template(&value, node)))
                .collect()
        })
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listener(name: &str, port: i32, listener_type: &str) -> GenericKafkaListener {
        serde_json::from_value(serde_json::json!({
            "name": name, "port": port, "type": listener_type, "tls": true,
        }))
        .unwrap_or_else(|error| panic!("{error}"))
    }

    fn node(node_id: i32) -> KafkaNode {
        KafkaNode {
            pool: "pool".to_owned(),
            node_id,
            pod_name: format!("c-pool-{node_id}"),
            roles: std::collections::BTreeSet::new(),
        }
    }

    #[test]
    fn names_of_older_releases_are_kept() {
        assert_eq!(
            listener("plain", 9092, "internal").port_name(),
            "tcp-clients"
        );
        assert_eq!(
            listener("tls", 9093, "internal").port_name(),
            "tcp-clientstls"
        );
        assert_eq!(listener("plain", 9092, "nodeport").port_name(), "tcp-plain");
        let external = listener("external", 9094, "route");
        assert_eq!(external.port_name(), "tcp-external");
        assert_eq!(external.bootstrap_route_name("c"), "c-kafka-bootstrap");
        assert_eq!(
            external.bootstrap_service_name("c"),
            "c-kafka-external-bootstrap"
        );
        assert_eq!(external.per_node_name("c", &node(2)), "c-pool-2");
        let other = listener("external", 9095, "route");
        assert_eq!(
            other.bootstrap_route_name("c"),
            "c-kafka-external-bootstrap"
        );
        assert_eq!(other.per_node_name("c", &node(2)), "c-pool-external-2");
    }

    #[test]
    fn broker_overrides_win_over_templates() {
        let mut listener = listener("ext", 9094, "ingress");
        listener.configuration = Some(
            serde_json::from_value(serde_json::json!({
                "hostTemplate": "b{nodeId}.example.com",
                "advertisedHostTemplate": "{nodePodName}.adv",
                "advertisedPortTemplate": "30000 + {nodeId}",
                "perBrokerLabelsTemplate": { "node": "n{nodeId}" },
                "brokers": [ { "broker": 1, "host": "one.example.com", "labels": { "own": "yes" } } ],
            }))
            .unwrap_or_else(|error| panic!("{error}")),
        );
        assert_eq!(
            listener.broker_host(&node(0)).as_deref(),
            Some("b0.example.com")
        );
        assert_eq!(
            listener.broker_host(&node(1)).as_deref(),
            Some("one.example.com")
        );
        assert_eq!(
            listener.broker_advertised_host(&node(2)).as_deref(),
            Some("c-pool-2.adv")
        );
        assert_eq!(listener.broker_advertised_port(&node(2)), Some(30002));
        assert_eq!(listener.broker_labels(&node(0))["node"], "n0");
        assert_eq!(
            listener.broker_labels(&node(1)),
            StringMap::from([("own".to_owned(), "yes".to_owned())])
        );
    }

    #[test]
    fn port_templates_are_evaluated() {
        assert_eq!(evaluate_port_template("30000 + {nodeId}", 3), Some(30003));
        assert_eq!(evaluate_port_template("{nodeId}*10+9000", 2), Some(9020));
        assert_eq!(evaluate_port_template("9000 - {nodeId} * 2", 5), Some(8990));
        assert_eq!(evaluate_port_template("9092", 5), Some(9092));
        assert_eq!(evaluate_port_template("{nodeId} +", 1), None);
        assert_eq!(evaluate_port_template("port{nodeId}", 1), None);
        assert_eq!(evaluate_port_template("", 1), None);
    }
}
