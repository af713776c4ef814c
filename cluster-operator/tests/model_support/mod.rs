//! What the model tests and the model benchmark share: the operator settings of a default
//! installation in namespace `strimzi`, and listener objects as Kubernetes fills them in.

use k8s_openapi::api::core::v1::{LoadBalancerIngress, LoadBalancerStatus, Service, ServiceStatus};
use k8s_openapi::api::networking::v1::{
    IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus,
};
use kube::api::DynamicObject;
use strimzi_cluster_operator::model::images::{DEFAULT_KAFKA_INIT_IMAGE, KafkaImages};
use strimzi_cluster_operator::model::listeners::ObservedListeners;
use strimzi_cluster_operator::model::{KafkaCluster, ModelConfig};
use strimzi_operator_common::config::DEFAULT_LABELS_EXCLUSION_PATTERN;
use strimzi_operator_common::labels::LabelExclusion;

/// The model settings of an operator installed with Strimzi's defaults in namespace
/// `strimzi`.
pub fn default_model_config() -> ModelConfig {
    ModelConfig {
        images: KafkaImages::strimzi_defaults(),
        cluster_domain: "cluster.local".into(),
        operator_namespace: "strimzi".into(),
        operator_namespace_labels: None,
        network_policy_generation: true,
        image_pull_policy: None,
        image_pull_secrets: Vec::new(),
        label_exclusion: LabelExclusion::new(DEFAULT_LABELS_EXCLUSION_PATTERN)
            .unwrap_or_else(|error| panic!("the default label exclusion is valid: {error}")),
        managed_by: "strimzi-cluster-operator".into(),
        kafka_init_image: DEFAULT_KAFKA_INIT_IMAGE.into(),
    }
}

/// The listener objects with the addresses Kubernetes would assign: a host name for each
/// load balancer, node ports, route hosts and an ingress address.
pub fn observed_listeners(cluster: &KafkaCluster) -> ObservedListeners {
    let objects = cluster.listener_objects();
    let namespace = &cluster.namespace;
    let mut next_node_port = 31000;
    let services = objects
        .services
        .into_iter()
        .map(|mut service: Service| {
            let name = service.metadata.name.clone().unwrap();
            let spec = service.spec.as_mut().unwrap();
            match spec.type_.as_deref() {
                Some("LoadBalancer") => {
                    service.status = Some(ServiceStatus {
                        load_balancer: Some(LoadBalancerStatus {
                            ingress: Some(vec![LoadBalancerIngress {
                                hostname: Some(format!("{name}.lb.example.com")),
                                ..LoadBalancerIngress::default()
                            }]),
                        }),
                        ..ServiceStatus::default()
                    });
                }
                Some("NodePort") => {
                    for port in spec.ports.iter_mut().flatten() {
                        if port.node_port.is_none() {
                            port.node_port = Some(next_node_port);
                            next_node_port += 1;
                        }
                    }
                }
                _ => {}
            }
            service
        })
        .collect();
    let ingresses = objects
        .ingresses
        .into_iter()
        .map(|mut ingress| {
            ingress.status = Some(IngressStatus {
                load_balancer: Some(IngressLoadBalancerStatus {
                    ingress: Some(vec![IngressLoadBalancerIngress {
                        ip: Some("192.0.2.10".into()),
                        ..IngressLoadBalancerIngress::default()
                    }]),
                }),
            });
            ingress
        })
        .collect();
    let routes = objects
        .routes
        .into_iter()
        .map(|mut route: DynamicObject| {
            let host = route.data["spec"]["host"].as_str().map_or_else(
                || {
                    format!(
                        "{}-{namespace}.apps.example.com",
                        route.metadata.name.as_deref().unwrap()
                    )
                },
                str::to_owned,
            );
            route.data["status"] = serde_json::json!({"ingress": [{"host": host}]});
            route
        })
        .collect();
    ObservedListeners {
        services,
        ingresses,
        routes,
    }
}
