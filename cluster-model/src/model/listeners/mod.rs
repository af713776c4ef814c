//! The listeners: their Services, Ingresses, Routes and TLSRoutes, the addresses Kubernetes
//! assigns to them and the listener status.

pub mod routes;
pub mod services;
pub mod settings;
pub mod validation;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, Service};
use k8s_openapi::api::networking::v1::Ingress;
use kube::core::DynamicObject;
use strimzi_api::kafka::{
    GenericKafkaListener, KafkaListenerType, ListenerAddress, ListenerStatus, NodeAddressType,
};
use strimzi_api::naming;

use crate::model::{KafkaCluster, KafkaNode};
use settings::{ListenerSettings, TLS_PASSTHROUGH_PORT};

/// A host and port a client connects to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct AdvertisedAddress {
    /// Host name or IP address; for `nodeport` listeners it may be a placeholder that the
    /// node resolves at start-up.
    pub host: String,
    /// Port.
    pub port: i32,
}

/// The addresses of every listener, as clients see them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListenerAddresses {
    /// The address each broker advertises on each listener, by listener name and node ID.
    pub advertised: BTreeMap<(String, i32), AdvertisedAddress>,
    /// The bootstrap addresses of each listener, by listener name. Empty for `nodeport`
    /// listeners, whose bootstrap addresses are the addresses of the Kubernetes nodes the
    /// brokers run on (with the port in [`Self::bootstrap_node_ports`]).
    pub bootstrap: BTreeMap<String, Vec<AdvertisedAddress>>,
    /// The node port of each `nodeport` listener's bootstrap Service, by listener name.
    pub bootstrap_node_ports: BTreeMap<String, i32>,
    /// Names every broker's certificate carries for external access: `alternativeNames`,
    /// bootstrap hosts and addresses, and the bootstrap Service names of TLS `cluster-ip`
    /// listeners.
    pub bootstrap_dns_names: BTreeSet<String>,
    /// Names (or IP addresses) one broker's certificate carries for its own external access,
    /// by node ID.
    pub broker_dns_names: BTreeMap<i32, BTreeSet<String>>,
    /// Listeners whose addresses Kubernetes has not assigned yet (e.g. a load balancer still
    /// being provisioned); the caller waits and asks again.
    pub pending: Vec<String>,
}

/// The listener objects as they exist in Kubernetes, with the status Kubernetes wrote.
#[derive(Clone, Debug, Default)]
pub struct ObservedListeners {
    /// Services of the cluster.
    pub services: Vec<Service>,
    /// Ingresses of the cluster.
    pub ingresses: Vec<Ingress>,
    /// OpenShift Routes of the cluster.
    pub routes: Vec<DynamicObject>,
}

/// The objects that expose the listeners.
#[derive(Clone, Debug, Default)]
pub struct ListenerObjects {
    /// Bootstrap, headless brokers, and per-listener bootstrap and per-node Services.
    pub services: Vec<Service>,
    /// Ingresses of `ingress` listeners.
    pub ingresses: Vec<Ingress>,
    /// OpenShift Routes (`route.openshift.io/v1`) of `route` listeners.
    pub routes: Vec<DynamicObject>,
    /// Gateway API TLSRoutes (`gateway.networking.k8s.io/v1`) of `tlsroute` listeners.
    pub tls_routes: Vec<DynamicObject>,
}

/// The first address of a `LoadBalancer` Service: its host name, else its IP.
fn load_balancer_address(service: &Service) -> Option<String> {
    let ingress = service
        .status
        .as_ref()?
        .load_balancer
        .as_ref()?
        .ingress
        .as_ref()?
        .first()?;
    ingress.hostname.clone().or_else(|| ingress.ip.clone())
}

/// The node port of a Service's first port.
fn node_port(service: &Service) -> Option<i32> {
    service.spec.as_ref()?.ports.as_ref()?.first()?.node_port
}

/// The host OpenShift admitted a Route with.
fn route_host(route: &DynamicObject) -> Option<String> {
    route.data["status"]["ingress"][0]["host"]
        .as_str()
        .map(str::to_owned)
}

/// Whether an ingress controller has picked up an Ingress.
fn ingress_has_address(ingress: &Ingress) -> bool {
    ingress
        .status
        .as_ref()
        .and_then(|status| status.load_balancer.as_ref())
        .and_then(|load_balancer| load_balancer.ingress.as_ref())
        .is_some_and(|addresses| !addresses.is_empty())
}

impl ObservedListeners {
    fn service(&self, name: &str) -> Option<&Service> {
        self.services
            .iter()
            .find(|service| service.metadata.name.as_deref() == Some(name))
    }

    fn ingress(&self, name: &str) -> Option<&Ingress> {
        self.ingresses
            .iter()
            .find(|ingress| ingress.metadata.name.as_deref() == Some(name))
    }

    fn route_host(&self, name: &str) -> Option<String> {
        self.routes
            .iter()
            .find(|route| route.metadata.name.as_deref() == Some(name))
            .and_then(route_host)
    }
}

/// The address clients reach a Kubernetes node at: of the preferred type if it has one,
/// else the first of external DNS, external IP, internal DNS, internal IP and host name.
fn node_address(node: &Node, preferred: Option<NodeAddressType>) -> Option<String> {
    let addresses = node.status.as_ref()?.addresses.as_ref()?;
    let of_type = |address_type: &str| {
        addresses
            .iter()
            .find(|address| address.type_ == address_type)
            .map(|address| address.address.clone())
    };
    let preferred = preferred.map(|preferred| match preferred {
        NodeAddressType::ExternalDns => "ExternalDNS",
        NodeAddressType::ExternalIp => "ExternalIP",
        NodeAddressType::InternalDns => "InternalDNS",
        NodeAddressType::InternalIp => "InternalIP",
        NodeAddressType::Hostname => "Hostname",
    });
    preferred
        .into_iter()
        .chain([
            "ExternalDNS",
            "ExternalIP",
            "InternalDNS",
            "InternalIP",
            "Hostname",
        ])
        .find_map(of_type)
}

/// The order in which Strimzi lists the listener types in the Kafka status.
fn status_rank(listener_type: KafkaListenerType) -> u8 {
    match listener_type {
        KafkaListenerType::Internal => 0,
        KafkaListenerType::LoadBalancer => 1,
        KafkaListenerType::NodePort => 2,
        KafkaListenerType::Route => 3,
        KafkaListenerType::Ingress => 4,
        KafkaListenerType::TlsRoute => 5,
        KafkaListenerType::ClusterIp => 6,
    }
}

/// Collects the addresses of one listener.
struct AddressCollector<'a> {
    cluster: &'a KafkaCluster,
    listener: &'a GenericKafkaListener,
    addresses: &'a mut ListenerAddresses,
    pending: bool,
}

impl AddressCollector<'_> {
    fn add_bootstrap(&mut self, host: String, port: i32) {
        self.addresses
            .bootstrap
            .entry(self.listener.name.clone())
            .or_default()
            .push(AdvertisedAddress { host, port });
    }

    fn add_broker_name(&mut self, node_id: i32, name: String) {
        self.addresses
            .broker_dns_names
            .entry(node_id)
            .or_default()
            .insert(name);
    }

    /// Records what a broker advertises: the user's advertised host and port if set, else
    /// `host` and `port`. The user's host goes into the certificate when `in_certificate`.
    fn advertise(&mut self, node: &KafkaNode, host: String, port: i32, in_certificate: bool) {
        let advertised_host = self.listener.broker_advertised_host(node);
        if in_certificate && let Some(advertised_host) = &advertised_host {
            self.add_broker_name(node.node_id, advertised_host.clone());
        }
        self.addresses.advertised.insert(
            (self.listener.name.clone(), node.node_id),
            AdvertisedAddress {
                host: advertised_host.unwrap_or(host),
                port: self.listener.broker_advertised_port(node).unwrap_or(port),
            },
        );
    }

    /// The DNS name of a Service in the cluster's namespace, with the cluster domain when
    /// the listener asks for it.
    fn service_host(&self, service: &str) -> String {
        let namespace = &self.cluster.namespace;
        if self.listener.use_service_dns_domain() {
            format!(
                "{service}.{namespace}.svc.{}",
                self.cluster.config.cluster_domain
            )
        } else {
            format!("{service}.{namespace}.svc")
        }
    }

    fn internal(&mut self) {
        let bootstrap =
            self.service_host(&self.listener.bootstrap_service_name(&self.cluster.name));
        self.add_bootstrap(bootstrap, self.listener.port);
        let brokers_service = naming::brokers_service(&self.cluster.name);
        for node in self.cluster.brokers() {
            let host = self.service_host(&format!("{}.{brokers_service}", node.pod_name));
            self.advertise(&node, host, self.listener.port, self.listener.tls);
        }
    }

    fn cluster_ip(&mut self) {
        let bootstrap_service = self.listener.bootstrap_service_name(&self.cluster.name);
        if self.listener.tls {
            let namespace = &self.cluster.namespace;
            self.addresses.bootstrap_dns_names.extend([
                bootstrap_service.clone(),
                format!("{bootstrap_service}.{namespace}"),
                format!("{bootstrap_service}.{namespace}.svc"),
                format!(
                    "{bootstrap_service}.{namespace}.svc.{}",
                    self.cluster.config.cluster_domain
                ),
            ]);
        }
        let bootstrap = self.service_host(&bootstrap_service);
        self.add_bootstrap(bootstrap, self.listener.port);
        for node in self.cluster.brokers() {
            let host = self.service_host(&self.listener.per_node_name(&self.cluster.name, &node));
            if self.listener.tls {
                self.add_broker_name(node.node_id, host.clone());
            }
            self.advertise(&node, host, self.listener.port, self.listener.tls);
        }
    }

    fn load_balancer(&mut self, observed: &ObservedListeners) {
        let skip_bootstrap = self.listener.skips_bootstrap_service();
        if !skip_bootstrap {
            let name = self.listener.bootstrap_service_name(&self.cluster.name);
            match observed.service(&name).and_then(load_balancer_address) {
                Some(address) => {
                    self.addresses.bootstrap_dns_names.insert(address.clone());
                    self.add_bootstrap(address, self.listener.port);
                }
                None => self.pending = true,
            }
        }
        for node in self.cluster.brokers() {
            let name = self.listener.per_node_name(&self.cluster.name, &node);
            let Some(address) = observed.service(&name).and_then(load_balancer_address) else {
                self.pending = true;
                continue;
            };
            if skip_bootstrap {
                self.add_bootstrap(address.clone(), self.listener.port);
            }
            self.add_broker_name(node.node_id, address.clone());
            self.advertise(&node, address, self.listener.port, true);
        }
    }

    fn node_port(&mut self, observed: &ObservedListeners) {
        let name = self.listener.bootstrap_service_name(&self.cluster.name);
        match observed.service(&name).and_then(node_port) {
            Some(port) => {
                self.addresses
                    .bootstrap_node_ports
                    .insert(self.listener.name.clone(), port);
            }
            None => self.pending = true,
        }
        for node in self.cluster.brokers() {
            let name = self.listener.per_node_name(&self.cluster.name, &node);
            let Some(port) = observed.service(&name).and_then(node_port) else {
                self.pending = true;
                continue;
            };
            let placeholder = self.listener.node_port_address_placeholder();
            self.advertise(&node, placeholder, port, true);
        }
    }

    fn route(&mut self, observed: &ObservedListeners) {
        let bootstrap_name = self.listener.bootstrap_route_name(&self.cluster.name);
        match observed.route_host(&bootstrap_name) {
            Some(host) => {
                self.addresses.bootstrap_dns_names.insert(host.clone());
                self.add_bootstrap(host, TLS_PASSTHROUGH_PORT);
            }
            None => self.pending = true,
        }
        for node in self.cluster.brokers() {
            let name = self.listener.per_node_name(&self.cluster.name, &node);
            let Some(host) = observed.route_host(&name) else {
                self.pending = true;
                continue;
            };
            self.add_broker_name(node.node_id, host.clone());
            self.advertise(&node, host, TLS_PASSTHROUGH_PORT, true);
        }
    }

    /// Ingress and TLSRoute listeners use the configured hosts; Ingresses are pending until
    /// an ingress controller has picked them up (`ready` says whether one has).
    fn configured_hosts(&mut self, ready: impl Fn(&str) -> bool) {
        let bootstrap_name = self.listener.bootstrap_route_name(&self.cluster.name);
        if !ready(&bootstrap_name) {
            self.pending = true;
        }
        if let Some(host) = self.listener.bootstrap().host {
            self.addresses.bootstrap_dns_names.insert(host.clone());
            self.add_bootstrap(host, TLS_PASSTHROUGH_PORT);
        }
        for node in self.cluster.brokers() {
            if !ready(&self.listener.per_node_name(&self.cluster.name, &node)) {
                self.pending = true;
            }
            let Some(host) = self.listener.broker_host(&node) else {
                continue;
            };
            self.add_broker_name(node.node_id, host.clone());
            self.advertise(&node, host, TLS_PASSTHROUGH_PORT, true);
        }
    }
}

impl KafkaCluster {
    /// The Services, Ingresses, Routes and TLSRoutes of every listener.
    pub fn listener_objects(&self) -> ListenerObjects {
        let mut services = vec![self.bootstrap_service(), self.brokers_service()];
        services.extend(self.external_bootstrap_services());
        services.extend(self.per_node_services());
        ListenerObjects {
            services,
            ingresses: self.ingresses(),
            routes: self.routes(),
            tls_routes: self.tls_routes(),
        }
    }

    /// The addresses of every listener, from the objects as Kubernetes has them.
    pub fn listener_addresses(&self, observed: &ObservedListeners) -> ListenerAddresses {
        let mut addresses = ListenerAddresses::default();
        for listener in &self.spec.listeners {
            if let Some(names) = listener.bootstrap().alternative_names {
                addresses.bootstrap_dns_names.extend(names);
            }
        }
        for listener in &self.spec.listeners {
            let mut collector = AddressCollector {
                cluster: self,
                listener,
                addresses: &mut addresses,
                pending: false,
            };
            match listener.r#type {
                KafkaListenerType::Internal => collector.internal(),
                KafkaListenerType::ClusterIp => collector.cluster_ip(),
                KafkaListenerType::LoadBalancer => collector.load_balancer(observed),
                KafkaListenerType::NodePort => collector.node_port(observed),
                KafkaListenerType::Route => collector.route(observed),
                KafkaListenerType::Ingress => collector.configured_hosts(|name| {
                    observed.ingress(name).is_some_and(ingress_has_address)
                }),
                KafkaListenerType::TlsRoute => collector.configured_hosts(|_| true),
            }
            if collector.pending {
                addresses.pending.push(listener.name.clone());
            }
        }
        addresses
    }

    /// Adds the bootstrap addresses of `nodeport` listeners once the brokers run: the
    /// address of each Kubernetes node (`broker_nodes`, the Nodes the broker pods are
    /// scheduled on) with the bootstrap Service's node port.
    pub fn add_node_port_bootstrap_addresses(
        &self,
        addresses: &mut ListenerAddresses,
        broker_nodes: &[Node],
    ) {
        for listener in &self.spec.listeners {
            let Some(&port) = addresses.bootstrap_node_ports.get(&listener.name) else {
                continue;
            };
            let preferred = listener.settings().preferred_node_port_address_type;
            let mut bootstrap: Vec<AdvertisedAddress> = Vec::new();
            for host in broker_nodes
                .iter()
                .filter_map(|node| node_address(node, preferred))
            {
                let address = AdvertisedAddress { host, port };
                if !bootstrap.contains(&address) {
                    bootstrap.push(address);
                }
            }
            addresses.bootstrap.insert(listener.name.clone(), bootstrap);
        }
    }

    /// The `listeners` of the Kafka status: each listener's bootstrap addresses and, for TLS
    /// listeners, the certificate that signs the brokers' (the cluster CA's, or the custom
    /// listener certificate given in `custom_certificates` by listener name).
    pub fn listener_status(
        &self,
        addresses: &ListenerAddresses,
        cluster_ca_cert_pem: &str,
        custom_certificates: &BTreeMap<String, String>,
    ) -> Vec<ListenerStatus> {
        let mut listeners: Vec<&GenericKafkaListener> = self.spec.listeners.iter().collect();
        listeners.sort_by_key(|listener| status_rank(listener.r#type));
        listeners
            .into_iter()
            .map(|listener| {
                let bootstrap = addresses
                    .bootstrap
                    .get(&listener.name)
                    .cloned()
                    .unwrap_or_default();
                let bootstrap_servers = bootstrap
                    .iter()
                    .map(|address| format!("{}:{}", address.host, address.port))
                    .collect::<Vec<_>>()
                    .join(",");
                let certificate = listener.tls.then(|| {
                    custom_certificates
                        .get(&listener.name)
                        .cloned()
                        .unwrap_or_else(|| cluster_ca_cert_pem.to_owned())
                });
                ListenerStatus {
                    name: Some(listener.name.clone()),
                    addresses: (!bootstrap.is_empty()).then(|| {
                        bootstrap
                            .into_iter()
                            .map(|address| ListenerAddress {
                                host: Some(address.host),
                                port: Some(address.port),
                            })
                            .collect()
                    }),
                    bootstrap_servers: (!bootstrap_servers.is_empty()).then_some(bootstrap_servers),
                    certificates: certificate.map(|certificate| vec![certificate]),
                }
            })
            .collect()
    }
}
