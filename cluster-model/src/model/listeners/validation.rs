//! Checks of the listener settings the CRD schema cannot express: unique names and ports,
//! TLS where a type needs it, settings used only with the types they apply to, and the host
//! names Ingress and TLSRoute listeners cannot do without.

use strimzi_api::kafka::{GenericKafkaListener, KafkaListenerAuthentication, KafkaListenerType};

use crate::model::listeners::settings::ListenerSettings;
use crate::model::{KafkaCluster, ModelError};

/// Ports the Kafka pods use for other purposes (metrics and JMX).
const FORBIDDEN_PORTS: [i32; 2] = [9404, 9999];
/// The lowest port a listener may use; those below are taken by the operator's own listeners.
const LOWEST_ALLOWED_PORT: i32 = 9092;

/// Whether `name` is a valid listener name: 1 to 11 lowercase letters or digits.
fn valid_listener_name(name: &str) -> bool {
    (1..=11).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit())
}

/// The problems of one listener's settings, each as a sentence naming the listener.
fn listener_problems(listener: &GenericKafkaListener, problems: &mut Vec<String>) {
    use KafkaListenerType::{Ingress, LoadBalancer, NodePort, Route, TlsRoute};
    let name = &listener.name;
    let listener_type = listener.r#type;
    let settings = listener.settings();
    let mut only_for = |used: bool,
                        setting: &str,
                        types: &[KafkaListenerType],
                        description: &str| {
        if used && !types.contains(&listener_type) {
            problems.push(format!(
                "listener {name} cannot configure {setting} because it is not {description} based listener"
            ));
        }
    };
    only_for(
        settings.use_service_dns_domain.is_some(),
        "useServiceDnsDomain",
        &[KafkaListenerType::Internal, KafkaListenerType::ClusterIp],
        "internal or cluster-ip",
    );
    only_for(
        settings.class.is_some(),
        "class",
        &[Ingress, LoadBalancer],
        "Ingress or LoadBalancer",
    );
    only_for(
        settings.external_traffic_policy.is_some(),
        "externalTrafficPolicy",
        &[LoadBalancer, NodePort],
        "LoadBalancer or NodePort",
    );
    only_for(
        settings
            .load_balancer_source_ranges
            .as_ref()
            .is_some_and(|ranges| !ranges.is_empty()),
        "loadBalancerSourceRanges",
        &[LoadBalancer],
        "LoadBalancer",
    );
    only_for(
        settings.preferred_node_port_address_type.is_some(),
        "preferredAddressType",
        &[NodePort],
        "NodePort",
    );
    only_for(
        settings.parent_refs.is_some(),
        "parentRefs",
        &[TlsRoute],
        "TLSRoute",
    );
    let bootstrap = listener.bootstrap();
    only_for(
        bootstrap.host.is_some(),
        "bootstrap.host",
        &[Route, Ingress, TlsRoute],
        "Route, Ingress or TLSRoute",
    );
    only_for(
        bootstrap.load_balancer_ip.is_some(),
        "bootstrap.loadBalancerIP",
        &[LoadBalancer],
        "LoadBalancer",
    );
    only_for(
        bootstrap.node_port.is_some(),
        "bootstrap.nodePort",
        &[NodePort],
        "NodePort",
    );
    for broker in settings.brokers.iter().flatten() {
        only_for(
            broker.host.is_some(),
            "brokers[].host",
            &[Route, Ingress, TlsRoute],
            "Route, Ingress or TLSRoute",
        );
        only_for(
            broker.load_balancer_ip.is_some(),
            "brokers[].loadBalancerIP",
            &[LoadBalancer],
            "LoadBalancer",
        );
        only_for(
            broker.node_port.is_some(),
            "brokers[].nodePort",
            &[NodePort],
            "NodePort",
        );
    }

    if matches!(listener_type, Route | Ingress | TlsRoute) && !listener.tls {
        let kind = if listener_type == TlsRoute {
            "TLSRoute"
        } else {
            "Route or Ingress"
        };
        problems.push(format!(
            "listener {name} is {kind} type listener and requires enabled TLS encryption"
        ));
    }
    if !listener.tls {
        if matches!(
            listener.authentication,
            Some(KafkaListenerAuthentication::Tls(_))
        ) {
            problems.push(format!(
                "listener {name} cannot use tls type authentication with disabled TLS encryption"
            ));
        }
        if settings.broker_cert_chain_and_key.is_some() {
            problems.push(format!(
                "listener {name} cannot configure custom TLS certificate with disabled TLS encryption"
            ));
        }
    }
    if let Some(source) = &settings.broker_cert_chain_and_key {
        for (field, value) in [
            ("secret name", &source.secret_name),
            ("key", &source.key),
            ("certificate", &source.certificate),
        ] {
            if value.is_empty() {
                problems.push(format!(
                    "listener '{name}' cannot have an empty {field} in the brokerCertChainAndKey"
                ));
            }
        }
    }
}

impl KafkaCluster {
    /// Checks the listeners; the error lists every problem found.
    pub fn validate_listeners(&self) -> Result<(), ModelError> {
        let listeners = &self.spec.listeners;
        let mut problems = Vec::new();
        let mut names: Vec<&str> = listeners
            .iter()
            .map(|listener| listener.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        if names.len() != listeners.len() {
            problems.push("every listener needs to have a unique name".to_owned());
        }
        let invalid: Vec<&str> = names
            .iter()
            .copied()
            .filter(|name| !valid_listener_name(name))
            .collect();
        if !invalid.is_empty() {
            problems.push(format!(
                "listener names [{}] are invalid and do not match the pattern ^[a-z0-9]{{1,11}}$",
                invalid.join(", ")
            ));
        }
        let mut ports: Vec<i32> = listeners.iter().map(|listener| listener.port).collect();
        ports.sort_unstable();
        ports.dedup();
        if ports.len() != listeners.len() {
            problems.push("every listener needs to have a unique port number".to_owned());
        }
        for listener in listeners {
            if FORBIDDEN_PORTS.contains(&listener.port) || listener.port < LOWEST_ALLOWED_PORT {
                problems.push(format!(
                    "port {} is forbidden and cannot be used",
                    listener.port
                ));
            }
            listener_problems(listener, &mut problems);
            if matches!(
                listener.r#type,
                KafkaListenerType::Ingress | KafkaListenerType::TlsRoute
            ) {
                self.host_problems(listener, &mut problems);
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ModelError::InvalidConfiguration(format!(
                "Listener configuration is not valid: [{}]",
                problems.join(", ")
            )))
        }
    }

    /// Ingress and TLSRoute listeners route by host name, so the bootstrap and every broker
    /// need one.
    fn host_problems(&self, listener: &GenericKafkaListener, problems: &mut Vec<String>) {
        let name = &listener.name;
        let kind = if listener.r#type == KafkaListenerType::Ingress {
            "Ingress"
        } else {
            "TLSRoute"
        };
        if listener.bootstrap().host.is_none() {
            problems.push(format!(
                "listener {name} is missing a bootstrap host name which is required for {kind} based listeners"
            ));
        }
        for node in self.brokers() {
            if listener.broker_host(&node).is_none() {
                problems.push(format!(
                    "listener {name} is missing a broker host name for broker with ID {} which is required for {kind} based listeners",
                    node.node_id
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listener_names_follow_the_crd_pattern() {
        assert!(valid_listener_name("plain"));
        assert!(valid_listener_name("ext1"));
        assert!(!valid_listener_name(""));
        assert!(!valid_listener_name("Plain"));
        assert!(!valid_listener_name("twelve-chars"));
        assert!(!valid_listener_name("abcdefghijkl"));
    }

    #[test]
    fn problems_name_the_listener_and_the_setting() {
        let listener: GenericKafkaListener = serde_json::from_value(serde_json::json!({
            "name": "ext", "port": 9094, "type": "route", "tls": false,
            "authentication": { "type": "tls" },
            "configuration": { "bootstrap": { "nodePort": 32000 }, "class": "nginx" },
        }))
        .unwrap_or_else(|error| panic!("{error}"));
        let mut problems = Vec::new();
        listener_problems(&listener, &mut problems);
        assert_eq!(
            problems,
            [
                "listener ext cannot configure class because it is not Ingress or LoadBalancer based listener",
                "listener ext cannot configure bootstrap.nodePort because it is not NodePort based listener",
                "listener ext is Route or Ingress type listener and requires enabled TLS encryption",
                "listener ext cannot use tls type authentication with disabled TLS encryption",
            ]
        );
    }
}
