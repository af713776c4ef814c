//! The trust bundle Secret `<cluster>-trustbundle`: the certificates of the cluster and
//! clients CAs that Kafka nodes trust, read by `server.config` through the
//! `${strimzisecrets:...}` config provider. Strimzi 1.2 writes it in its CA step, right after
//! the CA Secrets. Owner: whole model.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use strimzi_api::annotations;
use strimzi_operator_common::labels::ComponentLabels;

use super::KafkaCluster;
use super::object_meta::StringMap;
use super::pods::CaGenerations;

/// Key of the cluster CA certificates in the trust bundle.
pub const CLUSTER_CA_KEY: &str = "cluster-ca.crt";
/// Key of the clients CA certificates in the trust bundle.
pub const CLIENTS_CA_KEY: &str = "clients-ca.crt";
/// `strimzi.io/component-type` (and `app.kubernetes.io/name`) of the trust bundle.
const TRUST_BUNDLE_COMPONENT_TYPE: &str = "trust-bundle";
/// `strimzi.io/name` of objects that belong to the operator rather than one component.
const OPERATOR_COMPONENT_NAME: &str = "strimzi";

/// `<cluster>-trustbundle`.
pub fn trust_bundle_secret_name(cluster: &str) -> String {
    format!("{cluster}-trustbundle")
}

impl KafkaCluster {
    /// `<cluster>-trustbundle` with every certificate each CA still trusts (the current one
    /// and those kept during a CA key replacement, as PEM), annotated with both CAs'
    /// certificate generations. Like the CA Secrets it is labelled as an operator object
    /// (`strimzi.io/name: strimzi`) and owned by the Kafka without being its controller.
    pub fn trust_bundle_secret(
        &self,
        cluster_ca_pem: &str,
        clients_ca_pem: &str,
        generations: &CaGenerations,
    ) -> Secret {
        let labels = ComponentLabels {
            kind: "Kafka".to_owned(),
            cluster: self.name.clone(),
            component_name: OPERATOR_COMPONENT_NAME.to_owned(),
            component_type: TRUST_BUNDLE_COMPONENT_TYPE.to_owned(),
            managed_by: self.config.managed_by.clone(),
        }
        .labels(&self.resource_labels, &self.config.label_exclusion);
        let annotations = StringMap::from([
            (
                annotations::CLUSTER_CA_CERT_GENERATION.to_owned(),
                generations.cluster_ca_cert.to_string(),
            ),
            (
                annotations::CLIENTS_CA_CERT_GENERATION.to_owned(),
                generations.clients_ca_cert.to_string(),
            ),
        ]);
        let mut metadata =
            self.object_meta(&trust_bundle_secret_name(&self.name), labels, annotations);
        if let Some(owners) = metadata.owner_references.as_mut() {
            for owner in owners {
                owner.block_owner_deletion = Some(true);
            }
        }
        Secret {
            metadata,
            type_: Some("Opaque".to_owned()),
            data: Some(BTreeMap::from([
                (
                    CLUSTER_CA_KEY.to_owned(),
                    ByteString(cluster_ca_pem.as_bytes().to_vec()),
                ),
                (
                    CLIENTS_CA_KEY.to_owned(),
                    ByteString(clients_ca_pem.as_bytes().to_vec()),
                ),
            ])),
            ..Secret::default()
        }
    }
}
