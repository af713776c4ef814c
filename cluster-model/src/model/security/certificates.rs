//! The server certificate each node needs, and the per-node certificate Secrets.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use strimzi_api::annotations;
use strimzi_api::selectors::ComponentLabels;
use strimzi_certificate_manager::certificate::ParsedCertificate;
use strimzi_certificate_manager::leaf::{IssuedCertificate, LeafSpec, LeafStorage, NodeLocation};

use crate::model::listeners::ListenerAddresses;
use crate::model::meta::StringMap;
use crate::model::nodes::pods::CaGenerations;
use crate::model::{KafkaCluster, KafkaNode, ModelError};

/// Common name and data key prefix of the operator's own client certificate.
const CLUSTER_OPERATOR: &str = "cluster-operator";

/// The data key of the trust bundle Secret ([`KafkaCluster::trust_bundle_secret`]) with the
/// clients CA certificates, which the listeners with `tls` authentication trust.
pub const CLIENTS_CA_TRUST_KEY: &str = "clients-ca.crt";

/// The request of the operator's own client certificate: `CN=cluster-operator`,
/// `O=io.strimzi`, stored under `cluster-operator.crt` and `.key` only, as Strimzi's.
pub fn cluster_operator_certificate_spec() -> LeafSpec {
    LeafSpec {
        storage: LeafStorage::Pem,
        ..LeafSpec::component(CLUSTER_OPERATOR, CLUSTER_OPERATOR)
    }
}

/// `secret`, a running node's certificate Secret, with the entries of `certificate` (its
/// renewal, see [`crate::model::desired::running_certificate_requests`]) in place of its own
/// and annotated, as [`KafkaCluster::node_certificate_secret`] annotates it, with the
/// generation of the cluster CA certificate that signed it; its other entries (custom listener
/// certificates), labels and owner as they are.
pub fn renewed_node_certificate_secret(
    secret: &Secret,
    certificate: &IssuedCertificate,
    cluster_ca_cert_generation: u32,
) -> Secret {
    let mut data = secret.data.clone().unwrap_or_default();
    data.extend(certificate.secret_data());
    let metadata = &secret.metadata;
    Secret {
        metadata: ObjectMeta {
            name: metadata.name.clone(),
            namespace: metadata.namespace.clone(),
            labels: metadata.labels.clone(),
            annotations: Some(StringMap::from([(
                annotations::CLUSTER_CA_CERT_GENERATION.to_owned(),
                cluster_ca_cert_generation.to_string(),
            )])),
            owner_references: metadata.owner_references.clone(),
            ..ObjectMeta::default()
        },
        type_: secret.type_.clone(),
        data: Some(data),
        ..Secret::default()
    }
}

/// The custom server certificates of TLS listeners (`brokerCertChainAndKey`), read from the
/// users' Secrets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CustomListenerCertificates {
    /// Entries every node's certificate Secret carries: `<listener>-<port>.crt` and
    /// `<listener>-<port>.key`, which the broker configuration refers to.
    pub secret_data: BTreeMap<String, ByteString>,
    /// The certificate (PEM) of each listener, by listener name, for the listener status.
    pub certificates: BTreeMap<String, String>,
    /// The short thumbprint of each listener's certificate, by listener name.
    pub thumbprints: BTreeMap<String, String>,
}

impl CustomListenerCertificates {
    /// The value of the brokers' `strimzi.io/custom-listener-cert-thumbprints` annotation,
    /// which rolls them when a custom certificate changes: the thumbprints by listener name in
    /// Java's map notation as Strimzi writes it (`{external=1a2b3c4d}`), listeners sorted by
    /// name; `None` without custom certificates.
    pub fn thumbprints_annotation(&self) -> Option<String> {
        (!self.thumbprints.is_empty()).then(|| {
            let entries: Vec<String> = self
                .thumbprints
                .iter()
                .map(|(listener, thumbprint)| format!("{listener}={thumbprint}"))
                .collect();
            format!("{{{}}}", entries.join(", "))
        })
    }
}

impl KafkaCluster {
    /// The certificate request of every node: its pod name, Service names and, for brokers,
    /// the external addresses of the listeners.
    pub fn node_certificate_specs(&self, addresses: &ListenerAddresses) -> Vec<LeafSpec> {
        let location = NodeLocation {
            namespace: &self.namespace,
            cluster: &self.name,
            cluster_domain: &self.config.cluster_domain,
        };
        self.nodes()
            .map(|node| {
                let external: Vec<String> = addresses
                    .bootstrap_dns_names
                    .iter()
                    .chain(
                        addresses
                            .broker_dns_names
                            .get(&node.node_id)
                            .into_iter()
                            .flatten(),
                    )
                    .cloned()
                    .collect();
                LeafSpec::kafka_node(&location, &node.pod_name, node.is_broker(), &external)
            })
            .collect()
    }

    /// The names of the Secrets holding custom listener certificates, for the caller to read.
    pub fn custom_certificate_secret_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .spec
            .listeners
            .iter()
            .filter(|listener| listener.tls)
            .filter_map(|listener| {
                listener
                    .configuration
                    .as_ref()?
                    .broker_cert_chain_and_key
                    .as_ref()
            })
            .map(|source| source.secret_name.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Takes the custom listener certificates out of the users' Secrets (`secrets`, those
    /// named by [`Self::custom_certificate_secret_names`] that exist). A missing Secret or key
    /// is an error naming every problem.
    pub fn custom_listener_certificates(
        &self,
        secrets: &[Secret],
    ) -> Result<CustomListenerCertificates, ModelError> {
        let mut result = CustomListenerCertificates::default();
        let mut problems = Vec::new();
        for listener in self.spec.listeners.iter().filter(|listener| listener.tls) {
            let Some(source) = listener
                .configuration
                .as_ref()
                .and_then(|configuration| configuration.broker_cert_chain_and_key.as_ref())
            else {
                continue;
            };
            let secret = secrets
                .iter()
                .find(|secret| secret.metadata.name.as_deref() == Some(&source.secret_name));
            let Some(data) = secret.map(|secret| secret.data.clone().unwrap_or_default()) else {
                problems.push(format!(
                    "Secret {} with custom TLS certificate does not exist.",
                    source.secret_name
                ));
                continue;
            };
            let (Some(certificate), Some(key)) =
                (data.get(&source.certificate), data.get(&source.key))
            else {
                problems.push(if data.contains_key(&source.certificate) {
                    format!(
                        "Secret {} does not contain custom certificate private key under the key {}.",
                        source.secret_name, source.key
                    )
                } else {
                    format!(
                        "Secret {} does not contain certificate under the key {}.",
                        source.secret_name, source.certificate
                    )
                });
                continue;
            };
            let Ok(parsed) = ParsedCertificate::from_pem(&certificate.0) else {
                problems.push(format!(
                    "Secret {} does not contain a valid PEM certificate under the key {}.",
                    source.secret_name, source.certificate
                ));
                continue;
            };
            result
                .thumbprints
                .insert(listener.name.clone(), parsed.short_thumbprint());
            let prefix = format!("{}-{}", listener.name, listener.port);
            result
                .secret_data
                .insert(format!("{prefix}.crt"), certificate.clone());
            result
                .secret_data
                .insert(format!("{prefix}.key"), key.clone());
            result.certificates.insert(
                listener.name.clone(),
                String::from_utf8_lossy(&certificate.0).into_owned(),
            );
        }
        if problems.is_empty() {
            Ok(result)
        } else {
            Err(ModelError::InvalidConfiguration(format!(
                "Failed to process Secrets with custom certificates: [{}]",
                problems.join(", ")
            )))
        }
    }

    /// `<cluster>-trustbundle`: the CA certificates the Kafka nodes trust, read by their
    /// configuration through the Kubernetes API: `cluster-ca.crt` and `clients-ca.crt` (PEM;
    /// several certificates each while a CA is being replaced; without a final line break,
    /// byte for byte as Strimzi writes them).
    /// Labelled as Strimzi labels it (component type `trust-bundle`) and annotated with both
    /// CA certificate generations, so a change of either CA shows on the Secret.
    pub fn trust_bundle_secret(
        &self,
        cluster_ca_pem: &str,
        clients_ca_pem: &str,
        generations: &CaGenerations,
    ) -> Secret {
        self.operator_secret(
            &crate::model::security::policies::trust_bundle_secret(&self.name),
            "trust-bundle",
            StringMap::from([
                (
                    annotations::CLUSTER_CA_CERT_GENERATION.to_owned(),
                    generations.cluster_ca_cert.to_string(),
                ),
                (
                    annotations::CLIENTS_CA_CERT_GENERATION.to_owned(),
                    generations.clients_ca_cert.to_string(),
                ),
            ]),
            BTreeMap::from([
                (
                    "cluster-ca.crt".to_owned(),
                    ByteString(cluster_ca_pem.trim_end().as_bytes().to_vec()),
                ),
                (
                    CLIENTS_CA_TRUST_KEY.to_owned(),
                    ByteString(clients_ca_pem.trim_end().as_bytes().to_vec()),
                ),
            ]),
        )
    }

    /// `<cluster>-cluster-operator-certs`: the client certificate (`CN=cluster-operator,
    /// O=io.strimzi`, data keys `cluster-operator.crt` and `.key`) with which the operator
    /// talks to the cluster's nodes, signed by the cluster CA and annotated with its
    /// certificate generation; labelled as Strimzi labels it (component type `strimzi`).
    pub fn cluster_operator_secret(
        &self,
        data: BTreeMap<String, ByteString>,
        cluster_ca_cert_generation: u32,
    ) -> Secret {
        self.operator_secret(
            &strimzi_api::naming::cluster_operator_certs_secret(&self.name),
            "strimzi",
            StringMap::from([(
                annotations::CLUSTER_CA_CERT_GENERATION.to_owned(),
                cluster_ca_cert_generation.to_string(),
            )]),
            data,
        )
    }

    /// A Secret the operator keeps for the whole cluster rather than for the Kafka
    /// component: `strimzi.io/name: strimzi`, `component_type` as its type, owned by the Kafka.
    fn operator_secret(
        &self,
        name: &str,
        component_type: &str,
        annotations: StringMap,
        data: BTreeMap<String, ByteString>,
    ) -> Secret {
        let component = ComponentLabels {
            component_name: "strimzi".to_owned(),
            component_type: component_type.to_owned(),
            ..self.component_labels()
        };
        let labels = component.labels(&self.resource_labels, &self.config.label_exclusion);
        Secret {
            metadata: self.object_meta_owned_by(self.owner.as_ref(), name, labels, annotations),
            type_: Some("Opaque".to_owned()),
            data: Some(data),
            ..Secret::default()
        }
    }

    /// The Secret named after the node's pod that holds its certificate, key and key store
    /// (`data`, e.g. from `IssuedCertificate::secret_data`), annotated with the generation of
    /// the cluster CA certificate that signed it. `data` also carries the entries of
    /// [`CustomListenerCertificates::secret_data`] when listeners have custom certificates.
    pub fn node_certificate_secret(
        &self,
        node: &KafkaNode,
        data: BTreeMap<String, ByteString>,
        cluster_ca_cert_generation: u32,
    ) -> Secret {
        Secret {
            metadata: self.object_meta(
                &node.pod_name,
                self.labels(),
                StringMap::from([(
                    annotations::CLUSTER_CA_CERT_GENERATION.to_owned(),
                    cluster_ca_cert_generation.to_string(),
                )]),
            ),
            type_: Some("Opaque".to_owned()),
            data: Some(data),
            ..Secret::default()
        }
    }
}
