//! Ingresses of `ingress` listeners, OpenShift Routes of `route` listeners and Gateway API
//! TLSRoutes of `tlsroute` listeners: one for bootstrap and one per broker, all passing TLS
//! through to the brokers.

use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, HTTPIngressRuleValue, Ingress, IngressBackend, IngressRule,
    IngressServiceBackend, IngressSpec, IngressTLS, ServiceBackendPort,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};
use strimzi_api::common::{MetadataTemplate, ResourceTemplate};
use strimzi_api::kafka::{GenericKafkaListener, KafkaListenerType};

use crate::model::listeners::settings::ListenerSettings;
use crate::model::meta::{
    PerPodTemplate, StringMap, merged, template_annotations, template_labels,
    with_additional_labels,
};
use crate::model::{KafkaCluster, KafkaNode, NodePool};

/// OpenShift Route: group, version and kind.
pub const ROUTE_GVK: (&str, &str, &str) = ("route.openshift.io", "v1", "Route");
/// Gateway API TLSRoute: group, version and kind.
pub const TLS_ROUTE_GVK: (&str, &str, &str) = ("gateway.networking.k8s.io", "v1", "TLSRoute");

/// Annotations that make common ingress controllers pass TLS through to the brokers.
fn passthrough_annotations() -> StringMap {
    StringMap::from([
        (
            "ingress.kubernetes.io/ssl-passthrough".to_owned(),
            "true".to_owned(),
        ),
        (
            "nginx.ingress.kubernetes.io/backend-protocol".to_owned(),
            "HTTPS".to_owned(),
        ),
        (
            "nginx.ingress.kubernetes.io/ssl-passthrough".to_owned(),
            "true".to_owned(),
        ),
    ])
}

fn dynamic_object(gvk: (&str, &str, &str), metadata: ObjectMeta, spec: Value) -> DynamicObject {
    let (group, version, kind) = gvk;
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
    let mut object = DynamicObject::new("", &resource).data(json!({ "spec": spec }));
    object.metadata = metadata;
    object
}

fn metadata_of(template: Option<&ResourceTemplate>) -> Option<&MetadataTemplate> {
    template.and_then(|template| template.metadata.as_ref())
}

/// Where one Ingress, Route or TLSRoute sends traffic and how it is labelled.
struct Exposure {
    metadata: ObjectMeta,
    service: String,
    host: Option<String>,
}

impl KafkaCluster {
    fn listeners_of_type(
        &self,
        listener_type: KafkaListenerType,
    ) -> impl Iterator<Item = &GenericKafkaListener> {
        self.spec
            .listeners
            .iter()
            .filter(move |listener| listener.r#type == listener_type)
    }

    /// The bootstrap exposure of a listener. Labels and annotations of the listener's
    /// `bootstrap` settings win over the template's.
    fn bootstrap_exposure(
        &self,
        listener: &GenericKafkaListener,
        template: Option<&ResourceTemplate>,
        extra_annotations: &StringMap,
    ) -> Exposure {
        let bootstrap = listener.bootstrap();
        let metadata = metadata_of(template);
        Exposure {
            metadata: self.object_meta(
                &listener.bootstrap_route_name(&self.name),
                merged([
                    &with_additional_labels(&self.labels(), &template_labels(metadata)),
                    &bootstrap.labels.unwrap_or_default(),
                ]),
                merged([
                    extra_annotations,
                    &template_annotations(metadata),
                    &bootstrap.annotations.unwrap_or_default(),
                ]),
            ),
            service: listener.bootstrap_service_name(&self.name),
            host: bootstrap.host,
        }
    }

    /// The exposure of one broker; its labels and annotations win over the template's.
    fn broker_exposure(
        &self,
        listener: &GenericKafkaListener,
        pool: &NodePool,
        node: &KafkaNode,
        template: Option<&ResourceTemplate>,
        extra_annotations: &StringMap,
    ) -> Exposure {
        let metadata = metadata_of(template);
        let name = listener.per_node_name(&self.name, node);
        Exposure {
            metadata: self.object_meta_owned_by(
                pool.owner.as_ref(),
                &name,
                with_additional_labels(
                    &self.pool_labels(pool),
                    &merged([&template_labels(metadata), &listener.broker_labels(node)]),
                ),
                merged([
                    extra_annotations,
                    &template_annotations(metadata),
                    &listener.broker_annotations(node),
                ]),
            ),
            service: name,
            host: listener.broker_host(node),
        }
    }

    /// Every exposure of the listeners of one type: bootstrap ones first, then per broker.
    fn exposures<'a>(
        &'a self,
        listener_type: KafkaListenerType,
        bootstrap_template: Option<&ResourceTemplate>,
        broker_template: PerPodTemplate,
        extra_annotations: &StringMap,
    ) -> Vec<(&'a GenericKafkaListener, Exposure)> {
        let mut exposures: Vec<_> = self
            .listeners_of_type(listener_type)
            .map(|listener| {
                (
                    listener,
                    self.bootstrap_exposure(listener, bootstrap_template, extra_annotations),
                )
            })
            .collect();
        for listener in self.listeners_of_type(listener_type) {
            for (pool, node) in self.brokers_by_pool() {
                exposures.push((
                    listener,
                    self.broker_exposure(
                        listener,
                        pool,
                        &node,
                        self.per_pod_template(pool, broker_template),
                        extra_annotations,
                    ),
                ));
            }
        }
        exposures
    }

    /// The Ingresses of `ingress` listeners: `<cluster>-kafka-<listener>-bootstrap` and
    /// `<cluster>-<pool>-<listener>-<id>`, with TLS passthrough annotations.
    pub fn ingresses(&self) -> Vec<Ingress> {
        let template = self.kafka_template();
        self.exposures(
            KafkaListenerType::Ingress,
            template.and_then(|template| template.external_bootstrap_ingress.as_ref()),
            PerPodTemplate::Ingress,
            &passthrough_annotations(),
        )
        .into_iter()
        .map(|(listener, exposure)| self.ingress(listener, exposure))
        .collect()
    }

    fn ingress(&self, listener: &GenericKafkaListener, exposure: Exposure) -> Ingress {
        let path = HTTPIngressPath {
            path: Some("/".to_owned()),
            path_type: "Prefix".to_owned(),
            backend: IngressBackend {
                service: Some(IngressServiceBackend {
                    name: exposure.service,
                    port: Some(ServiceBackendPort {
                        number: Some(listener.port),
                        ..ServiceBackendPort::default()
                    }),
                }),
                ..IngressBackend::default()
            },
        };
        Ingress {
            metadata: exposure.metadata,
            spec: Some(IngressSpec {
                ingress_class_name: listener.settings().class,
                rules: Some(vec![IngressRule {
                    host: exposure.host.clone(),
                    http: Some(HTTPIngressRuleValue { paths: vec![path] }),
                }]),
                tls: Some(vec![IngressTLS {
                    hosts: exposure.host.map(|host| vec![host]),
                    ..IngressTLS::default()
                }]),
                ..IngressSpec::default()
            }),
            ..Ingress::default()
        }
    }

    /// The exposures of `route` or `tlsroute` listeners, which share the route templates.
    fn route_exposures(
        &self,
        listener_type: KafkaListenerType,
    ) -> Vec<(&GenericKafkaListener, Exposure)> {
        self.exposures(
            listener_type,
            self.kafka_template()
                .and_then(|template| template.external_bootstrap_route.as_ref()),
            PerPodTemplate::Route,
            &StringMap::new(),
        )
    }

    /// The OpenShift Routes (`route.openshift.io/v1`) of `route` listeners, with passthrough
    /// TLS termination.
    pub fn routes(&self) -> Vec<DynamicObject> {
        self.route_exposures(KafkaListenerType::Route)
            .into_iter()
            .map(|(listener, exposure)| {
                let mut spec = json!({
                    "to": { "kind": "Service", "name": exposure.service },
                    "port": { "targetPort": listener.port },
                    "tls": { "termination": "passthrough" },
                });
                if let Some(host) = exposure.host {
                    spec["host"] = Value::String(host);
                }
                dynamic_object(ROUTE_GVK, exposure.metadata, spec)
            })
            .collect()
    }

    /// The Gateway API TLSRoutes (`gateway.networking.k8s.io/v1`) of `tlsroute` listeners,
    /// attached to the listener's `parentRefs`. They use the route templates.
    pub fn tls_routes(&self) -> Vec<DynamicObject> {
        self.route_exposures(KafkaListenerType::TlsRoute)
            .into_iter()
        .map(|(listener, exposure)| {
            let parent_refs = listener.settings().parent_refs.unwrap_or_default();
            let mut spec = json!({
                "parentRefs": parent_refs,
                "rules": [ { "backendRefs": [ { "name": exposure.service, "port": listener.port } ] } ],
            });
            if let Some(host) = exposure.host {
                spec["hostnames"] = json!([host]);
            }
            dynamic_object(
                TLS_ROUTE_GVK,
                exposure.metadata,
                spec,
            )
        })
        .collect()
    }
}
