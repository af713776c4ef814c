//! What the model tests and the model benchmark share: the operator settings of a default
//! installation in namespace `strimzi`, the node pools of a Kafka, and listener objects as
//! Kubernetes fills them in.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{
    Container, EnvVar, LoadBalancerIngress, LoadBalancerStatus, Service, ServiceStatus,
};
use k8s_openapi::api::networking::v1::{
    Ingress, IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus,
};
use kube::api::DynamicObject;
use serde_json::json;
use std::collections::BTreeMap;
use strimzi_api::common::ClientTls;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_certificate_manager::authority::{self, CaKind, CaSettings, CertificateAuthority};
use strimzi_certificate_manager::keys::KeyAlgorithm;
use strimzi_cluster_operator::model::ModelConfig;
use strimzi_cluster_operator::model::client_security::SecretsData;
use strimzi_cluster_operator::model::listeners::{ListenerObjects, ObservedListeners};
use strimzi_cluster_operator::model::nodes::images::{DEFAULT_KAFKA_INIT_IMAGE, KafkaImages};
use strimzi_operator_common::config::DEFAULT_LABELS_EXCLUSION_PATTERN;
use strimzi_operator_common::labels::LabelExclusion;
use time::OffsetDateTime;

/// A probe's initial delay, period and timeout (unset: Kubernetes' defaults).
pub fn probe_timings(
    probe: Option<&k8s_openapi::api::core::v1::Probe>,
) -> (Option<i32>, Option<i32>, Option<i32>) {
    let probe = probe.expect("a probe");
    (
        probe.initial_delay_seconds,
        probe.period_seconds,
        probe.timeout_seconds,
    )
}

/// Asserts the initial delay, period and timeout of `container`'s readiness and liveness
/// probes (see [`probe_timings`]).
pub fn assert_probe_timings(
    container: &k8s_openapi::api::core::v1::Container,
    readiness: (Option<i32>, Option<i32>, Option<i32>),
    liveness: (Option<i32>, Option<i32>, Option<i32>),
) {
    assert_eq!(
        probe_timings(container.readiness_probe.as_ref()),
        readiness,
        "readiness of {}",
        container.name
    );
    assert_eq!(
        probe_timings(container.liveness_probe.as_ref()),
        liveness,
        "liveness of {}",
        container.name
    );
}

/// The pools of `pools` labelled `strimzi.io/cluster` with the name of `kafka`.
pub fn pools_of(kafka: &Kafka, pools: &[KafkaNodePool]) -> Vec<KafkaNodePool> {
    pools
        .iter()
        .filter(|pool| {
            pool.metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(strimzi_api::labels::CLUSTER))
                == kafka.metadata.name.as_ref()
        })
        .cloned()
        .collect()
}

/// The model settings of an operator installed with Strimzi's defaults in namespace
/// `strimzi`.
pub fn default_model_config() -> ModelConfig {
    ModelConfig {
        images: KafkaImages::strimzi_defaults(),
        connect_images: KafkaImages::strimzi_defaults(),
        mirror_maker2_images: KafkaImages::strimzi_defaults(),
        cluster_domain: "cluster.local".into(),
        operator_namespace: "strimzi".into(),
        operator_namespace_labels: None,
        network_policy_generation: true,
        pod_disruption_budget_generation: true,
        entity_operator_watched_namespace_enabled: false,
        shared_env: Default::default(),
        image_pull_policy: None,
        image_pull_secrets: Vec::new(),
        label_exclusion: LabelExclusion::new(DEFAULT_LABELS_EXCLUSION_PATTERN)
            .unwrap_or_else(|error| panic!("the default label exclusion is valid: {error}")),
        managed_by: "strimzi-cluster-operator".into(),
        kafka_init_image: DEFAULT_KAFKA_INIT_IMAGE.into(),
        pod_security: Default::default(),
        topic_operator_image: strimzi_operator_common::OPERATOR_IMAGE.into(),
        user_operator_image: strimzi_operator_common::OPERATOR_IMAGE.into(),
        kafka_exporter_image: None,
        cruise_control_image: None,
        bridge_image: "quay.io/strimzi/kafka-bridge:1.1.0".to_owned(),
        connect_build: Default::default(),
        platform: Default::default(),
    }
}

/// The operator's shared variables when its own environment sets `HTTP_PROXY`, `NO_PROXY`
/// (empty) and `FIPS_MODE`, as the configuration copies them (`ModelConfig::shared_env`).
pub fn shared_env() -> Vec<EnvVar> {
    [
        ("HTTP_PROXY", "http://proxy.example:3128"),
        ("NO_PROXY", ""),
        ("FIPS_MODE", "disabled"),
    ]
    .into_iter()
    .map(|(name, value)| EnvVar {
        name: name.to_owned(),
        value: Some(value.to_owned()),
        value_from: None,
    })
    .collect()
}

/// Asserts that `container` has each variable of [`shared_env`] once, with the operator's
/// value.
pub fn assert_shared_env(container: &Container) {
    let env = container.env.as_deref().unwrap_or_default();
    for shared in shared_env() {
        let found: Vec<&EnvVar> = env.iter().filter(|var| var.name == shared.name).collect();
        assert_eq!(found, [&shared], "{} in {}", shared.name, container.name);
    }
}

/// What Kubernetes (and OpenShift, and an ingress controller) would make of the objects:
/// node ports, load balancer addresses (host names, or IPs for `*-0` brokers), admitted
/// route hosts and ingress addresses.
pub fn observed_listeners(objects: &ListenerObjects, namespace: &str) -> ObservedListeners {
    let mut next_node_port = 31000;
    let services = objects
        .services
        .iter()
        .map(|service| {
            let mut service: Service = service.clone();
            let name = service.metadata.name.clone().unwrap();
            let spec = service.spec.as_mut().unwrap();
            match spec.type_.as_deref() {
                Some("NodePort") => {
                    for port in spec.ports.iter_mut().flatten() {
                        if port.node_port.is_none() {
                            port.node_port = Some(next_node_port);
                            next_node_port += 1;
                        }
                    }
                }
                Some("LoadBalancer") => {
                    let ingress = if name.ends_with("-0") {
                        LoadBalancerIngress {
                            ip: Some("192.0.2.10".to_owned()),
                            ..LoadBalancerIngress::default()
                        }
                    } else {
                        LoadBalancerIngress {
                            hostname: Some(format!("{name}.lb.example.com")),
                            ..LoadBalancerIngress::default()
                        }
                    };
                    service.status = Some(ServiceStatus {
                        load_balancer: Some(LoadBalancerStatus {
                            ingress: Some(vec![ingress]),
                        }),
                        ..ServiceStatus::default()
                    });
                }
                _ => {}
            }
            service
        })
        .collect();
    let ingresses = objects
        .ingresses
        .iter()
        .map(|ingress| Ingress {
            status: Some(IngressStatus {
                load_balancer: Some(IngressLoadBalancerStatus {
                    ingress: Some(vec![IngressLoadBalancerIngress {
                        ip: Some("192.0.2.99".to_owned()),
                        ..IngressLoadBalancerIngress::default()
                    }]),
                }),
            }),
            ..ingress.clone()
        })
        .collect();
    let routes = objects
        .routes
        .iter()
        .map(|route| {
            let mut route: DynamicObject = route.clone();
            let host = route.data["spec"]["host"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| {
                    format!(
                        "{}-{namespace}.apps.example.com",
                        route.metadata.name.as_deref().unwrap()
                    )
                });
            route.data["status"] = json!({ "ingress": [ { "host": host } ] });
            route
        })
        .collect();
    ObservedListeners {
        services,
        ingresses,
        routes,
    }
}

/// A generated CA of `kind` with an ECDSA key (fast to generate).
pub fn ecdsa_ca(kind: CaKind, cluster: &str) -> CertificateAuthority {
    let settings = CaSettings {
        key_algorithm: KeyAlgorithm::EcdsaP256,
        ..CaSettings::default()
    };
    authority::reconcile(
        kind,
        cluster,
        &settings,
        None,
        None,
        OffsetDateTime::now_utc(),
        true,
    )
    .unwrap()
    .authority
}

/// The Secrets `tls.trustedCertificates` names, each with its certificate (or `ca.crt` for a
/// pattern) holding `PEM <secret>`.
pub fn trusted_secrets(tls: Option<&ClientTls>) -> SecretsData {
    tls.iter()
        .flat_map(|tls| tls.trusted_certificates.iter().flatten())
        .map(|source| {
            let key = source
                .certificate
                .clone()
                .unwrap_or_else(|| "ca.crt".to_owned());
            let pem = format!("PEM {}", source.secret_name);
            (
                source.secret_name.clone(),
                BTreeMap::from([(key, ByteString(pem.into_bytes()))]),
            )
        })
        .collect()
}
