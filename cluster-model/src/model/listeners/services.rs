//! The bootstrap and headless brokers Services and the per-listener Services.

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use strimzi_api::common::{InternalServiceTemplate, IpFamily, IpFamilyPolicy, ResourceTemplate};
use strimzi_api::kafka::{GenericKafkaListener, KafkaListenerType};
use strimzi_api::{labels, naming};

use crate::model::listeners::settings::ListenerSettings;
use crate::model::meta::{
    PerPodTemplate, StringMap, merged, template_annotations, template_labels,
    with_additional_labels,
};
use crate::model::{KafkaCluster, KafkaNode, NodePool};

/// Port of the KRaft controller listener (`tcp-ctrlplane`).
pub const CONTROL_PLANE_PORT: i32 = 9090;
/// Port of the replication listener brokers and Strimzi's tools use (`tcp-replication`).
pub const REPLICATION_PORT: i32 = 9091;
/// Port of the Kafka agent the operator asks for broker state (`tcp-kafkaagent`).
pub const KAFKA_AGENT_PORT: i32 = 8443;
/// Port of the Prometheus metrics endpoint.
pub const METRICS_PORT: i32 = 9404;
/// Port of remote JMX access.
pub const JMX_PORT: i32 = 9999;

/// A TCP Service port whose target is the container port of the same name.
fn service_port(name: &str, port: i32, node_port: Option<i32>) -> ServicePort {
    ServicePort {
        name: Some(name.to_owned()),
        protocol: Some("TCP".to_owned()),
        port,
        target_port: Some(IntOrString::String(name.to_owned())),
        node_port,
        ..ServicePort::default()
    }
}

fn ip_family_policy_name(policy: IpFamilyPolicy) -> String {
    match policy {
        IpFamilyPolicy::SingleStack => "SingleStack",
        IpFamilyPolicy::PreferDualStack => "PreferDualStack",
        IpFamilyPolicy::RequireDualStack => "RequireDualStack",
    }
    .to_owned()
}

fn ip_family_names(families: Vec<IpFamily>) -> Vec<String> {
    families
        .into_iter()
        .map(|family| {
            match family {
                IpFamily::Ipv4 => "IPv4",
                IpFamily::Ipv6 => "IPv6",
            }
            .to_owned()
        })
        .collect()
}

/// The `strimzi.io/discovery` annotation of the bootstrap Service: every listener's port, TLS
/// and authentication, as a pretty-printed JSON array in the layout Strimzi writes.
fn discovery_annotation(listeners: &[GenericKafkaListener]) -> String {
    let entries: Vec<String> = listeners
        .iter()
        .map(|listener| {
            let auth = listener
                .authentication
                .as_ref()
                .map_or("none", |authentication| authentication.type_name());
            format!(
                "{{\n  \"port\" : {},\n  \"tls\" : {},\n  \"protocol\" : \"kafka\",\n  \"auth\" : \"{auth}\"\n}}",
                listener.port, listener.tls
            )
        })
        .collect();
    if entries.is_empty() {
        "[ ]".to_owned()
    } else {
        format!("[ {} ]", entries.join(", "))
    }
}

impl KafkaCluster {
    /// The listeners of type `internal`, which the shared bootstrap and brokers Services serve.
    fn internal_listeners(&self) -> impl Iterator<Item = &GenericKafkaListener> {
        self.spec
            .listeners
            .iter()
            .filter(|listener| listener.r#type == KafkaListenerType::Internal)
    }

    /// Listeners with Services of their own: every type except `internal`.
    pub(crate) fn listeners_with_own_services(
        &self,
    ) -> impl Iterator<Item = &GenericKafkaListener> {
        self.spec
            .listeners
            .iter()
            .filter(|listener| listener.r#type != KafkaListenerType::Internal)
    }

    /// Whether JMX access is configured.
    pub(crate) fn jmx_enabled(&self) -> bool {
        self.spec.jmx_options.is_some()
    }

    /// Labels selecting the broker pods.
    pub(crate) fn brokers_selector(&self) -> StringMap {
        let mut selector = self.selector();
        selector.insert(labels::BROKER_ROLE.to_owned(), "true".to_owned());
        selector
    }

    /// A Service of the cluster with Strimzi's metadata, template labels and annotations.
    fn internal_service(
        &self,
        name: &str,
        labels: &StringMap,
        template: Option<&InternalServiceTemplate>,
        annotations: StringMap,
        spec: ServiceSpec,
    ) -> Service {
        let metadata = template.and_then(|template| template.metadata.as_ref());
        Service {
            metadata: self.object_meta(
                name,
                with_additional_labels(labels, &template_labels(metadata)),
                merged([&annotations, &template_annotations(metadata)]),
            ),
            spec: Some(ServiceSpec {
                ip_family_policy: template
                    .and_then(|template| template.ip_family_policy)
                    .map(ip_family_policy_name),
                ip_families: template
                    .and_then(|template| template.ip_families.clone())
                    .map(ip_family_names),
                ..spec
            }),
            ..Service::default()
        }
    }

    /// `<cluster>-kafka-bootstrap`: the ClusterIP Service of the internal listeners (and the
    /// replication port), routing to brokers, discoverable through `strimzi.io/discovery`.
    pub fn bootstrap_service(&self) -> Service {
        let mut ports = vec![service_port("tcp-replication", REPLICATION_PORT, None)];
        ports.extend(
            self.internal_listeners()
                .map(|listener| service_port(&listener.port_name(), listener.port, None)),
        );
        let mut service_labels = self.labels();
        service_labels.insert(labels::DISCOVERY.to_owned(), "true".to_owned());
        self.internal_service(
            &naming::bootstrap_service(&self.name),
            &service_labels,
            self.kafka_template()
                .and_then(|template| template.bootstrap_service.as_ref()),
            StringMap::from([(
                labels::DISCOVERY.to_owned(),
                discovery_annotation(&self.spec.listeners),
            )]),
            ServiceSpec {
                type_: Some("ClusterIP".to_owned()),
                selector: Some(self.brokers_selector()),
                ports: Some(ports),
                ..ServiceSpec::default()
            },
        )
    }

    /// `<cluster>-kafka-brokers`: the headless Service giving every Kafka pod its DNS name,
    /// with the control plane, replication, agent, internal listener and JMX ports; it
    /// publishes pods that are not ready so nodes find each other while starting.
    pub fn brokers_service(&self) -> Service {
        let mut ports = vec![
            service_port("tcp-ctrlplane", CONTROL_PLANE_PORT, None),
            service_port("tcp-replication", REPLICATION_PORT, None),
            service_port("tcp-kafkaagent", KAFKA_AGENT_PORT, None),
        ];
        ports.extend(
            self.internal_listeners()
                .map(|listener| service_port(&listener.port_name(), listener.port, None)),
        );
        if self.jmx_enabled() {
            ports.push(service_port("jmx", JMX_PORT, None));
        }
        self.internal_service(
            &naming::brokers_service(&self.name),
            &self.labels(),
            self.kafka_template()
                .and_then(|template| template.brokers_service.as_ref()),
            StringMap::new(),
            ServiceSpec {
                type_: Some("ClusterIP".to_owned()),
                cluster_ip: Some("None".to_owned()),
                selector: Some(self.selector()),
                ports: Some(ports),
                publish_not_ready_addresses: Some(true),
                ..ServiceSpec::default()
            },
        )
    }

    /// A Service of a listener with its own Services: type, port, the listener's labels and
    /// annotations (which the template's override) and the type-specific settings.
    fn listener_service(
        &self,
        listener: &GenericKafkaListener,
        target: ServiceTarget<'_>,
    ) -> Service {
        let settings = listener.settings();
        let metadata = target
            .template
            .and_then(|template| template.metadata.as_ref());
        let mut object_meta = self.object_meta_owned_by(
            target.owner,
            &target.name,
            with_additional_labels(
                &target.base_labels,
                &merged([&target.labels, &template_labels(metadata)]),
            ),
            merged([&target.annotations, &template_annotations(metadata)]),
        );
        let mut spec = ServiceSpec {
            type_: Some(listener.service_type().to_owned()),
            selector: Some(target.selector),
            ports: Some(vec![service_port(
                &listener.port_name(),
                listener.port,
                target.node_port,
            )]),
            ip_family_policy: listener.ip_family_policy().map(ip_family_policy_name),
            ip_families: listener.ip_families().map(ip_family_names),
            publish_not_ready_addresses: settings.publish_not_ready_addresses,
            external_traffic_policy: listener.external_traffic_policy().map(str::to_owned),
            ..ServiceSpec::default()
        };
        match listener.r#type {
            KafkaListenerType::LoadBalancer => {
                spec.load_balancer_ip = target.load_balancer_ip;
                spec.load_balancer_source_ranges = settings
                    .load_balancer_source_ranges
                    .filter(|ranges| !ranges.is_empty());
                spec.load_balancer_class = settings.class;
                spec.allocate_load_balancer_node_ports = settings.allocate_load_balancer_node_ports;
                object_meta.finalizers = settings
                    .finalizers
                    .filter(|finalizers| !finalizers.is_empty());
            }
            KafkaListenerType::NodePort => {
                spec.external_ips = target.external_ips.filter(|ips| !ips.is_empty());
            }
            _ => {}
        }
        Service {
            metadata: object_meta,
            spec: Some(spec),
            ..Service::default()
        }
    }

    /// `<cluster>-kafka-<listener>-bootstrap` for every listener except internal ones (and
    /// loadbalancer listeners with `createBootstrapService: false`).
    pub fn external_bootstrap_services(&self) -> Vec<Service> {
        let template = self
            .kafka_template()
            .and_then(|template| template.external_bootstrap_service.as_ref());
        self.listeners_with_own_services()
            .filter(|listener| !listener.skips_bootstrap_service())
            .map(|listener| {
                let bootstrap = listener.bootstrap();
                self.listener_service(
                    listener,
                    ServiceTarget {
                        name: listener.bootstrap_service_name(&self.name),
                        owner: self.owner.as_ref(),
                        base_labels: self.labels(),
                        template,
                        selector: self.brokers_selector(),
                        labels: bootstrap.labels.unwrap_or_default(),
                        annotations: bootstrap.annotations.unwrap_or_default(),
                        node_port: bootstrap.node_port,
                        load_balancer_ip: bootstrap.load_balancer_ip,
                        external_ips: bootstrap.external_ips,
                    },
                )
            })
            .collect()
    }

    /// The brokers of every pool with the pool they belong to.
    pub(crate) fn brokers_by_pool(&self) -> impl Iterator<Item = (&NodePool, KafkaNode)> {
        self.pools.iter().flat_map(move |pool| {
            self.brokers()
                .filter(move |node| node.pool == pool.name)
                .map(move |node| (pool, node))
        })
    }

    /// `<cluster>-<pool>-<listener>-<id>`: one Service per broker and listener with its own
    /// Services, selecting that broker's pod.
    pub fn per_node_services(&self) -> Vec<Service> {
        let mut services = Vec::new();
        for listener in self.listeners_with_own_services() {
            for (pool, node) in self.brokers_by_pool() {
                let mut selector = self.selector();
                selector.insert(labels::POD_NAME.to_owned(), node.pod_name.clone());
                let broker = listener.broker(node.node_id).unwrap_or_default();
                services.push(self.listener_service(
                    listener,
                    ServiceTarget {
                        name: listener.per_node_name(&self.name, &node),
                        owner: pool.owner.as_ref(),
                        base_labels: self.pool_labels(pool),
                        template: self.per_pod_template(pool, PerPodTemplate::Service),
                        selector,
                        labels: listener.broker_labels(&node),
                        annotations: listener.broker_annotations(&node),
                        node_port: broker.node_port,
                        load_balancer_ip: broker.load_balancer_ip,
                        external_ips: broker.external_ips,
                    },
                ));
            }
        }
        services
    }
}

/// One Service of a listener: its name, owner (the Kafka, or the KafkaNodePool of a per-node
/// Service), labels, template, selector and the bootstrap or broker overrides.
struct ServiceTarget<'a> {
    name: String,
    owner: Option<&'a k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>,
    base_labels: StringMap,
    template: Option<&'a ResourceTemplate>,
    selector: StringMap,
    labels: StringMap,
    annotations: StringMap,
    node_port: Option<i32>,
    load_balancer_ip: Option<String>,
    external_ips: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_annotation_has_strimzis_layout() {
        let listeners: Vec<GenericKafkaListener> = serde_yaml_ng::from_str(
            "- {name: plain, port: 9092, type: internal, tls: false}\n\
             - {name: tls, port: 9093, type: internal, tls: true, authentication: {type: tls}}\n",
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            discovery_annotation(&listeners),
            "[ {\n  \"port\" : 9092,\n  \"tls\" : false,\n  \"protocol\" : \"kafka\",\n  \"auth\" : \"none\"\n}, \
             {\n  \"port\" : 9093,\n  \"tls\" : true,\n  \"protocol\" : \"kafka\",\n  \"auth\" : \"tls\"\n} ]"
        );
    }
}
