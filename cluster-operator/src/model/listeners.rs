//! The listeners: their Services, Ingresses, Routes and TLSRoutes, the addresses Kubernetes
//! assigns to them and the listener status. Owner: listeners and services.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::DynamicObject;

use super::KafkaCluster;

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
    /// The bootstrap addresses of each listener, by listener name.
    pub bootstrap: BTreeMap<String, Vec<AdvertisedAddress>>,
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
    /// Gateway API TLSRoutes of `tlsroute` listeners... see Strimzi for the exact type.
    pub tls_routes: Vec<DynamicObject>,
}

impl KafkaCluster {
    /// The Services, Ingresses, Routes and TLSRoutes of every listener.
    pub fn listener_objects(&self) -> ListenerObjects {
        todo!("listener_objects")
    }

    /// The addresses of every listener, from the objects as Kubernetes has them.
    pub fn listener_addresses(&self, _observed: &ObservedListeners) -> ListenerAddresses {
        todo!("listener_addresses")
    }
}
