//! Kafka Connect clusters: what a `KafkaConnect` asks for, as Strimzi 1.2 builds it.
//!
//! [`ConnectCluster`] describes one Connect cluster (its names, labels, owner, image and the
//! `KafkaConnect`-shaped spec), so that a KafkaMirrorMaker2, which runs a Connect cluster too,
//! can describe its own and reuse every builder here. [`ConnectCluster::objects`] turns it into
//! the objects Strimzi's operator applies:
//!
//! - the pods, as StrimziPodSet `<name>-connect` (pods `<name>-connect-<n>`), running the Kafka
//!   image's `/opt/kafka/kafka_connect_run.sh`, which reads the worker configuration from
//!   `/opt/kafka/custom-config/kafka-connect.properties` and the logging from
//!   `log4j2.properties` next to it;
//! - ConfigMap `<name>-connect-config` with those files (and `metrics-config.json` for the
//!   JMX Prometheus exporter);
//! - Secret `<name>-connect-tls-trusted-certs` with the certificates of `spec.tls` under
//!   `ca.crt`, which the workers read through the Kubernetes Secret config provider
//!   (`${strimzisecrets:...}`), as they read the client certificate of `tls` authentication;
//! - Role `<name>-connect` and RoleBinding `<name>-connect-role` letting the pods'
//!   ServiceAccount `<name>-connect` read those Secrets and the SASL password's;
//! - Secret `<name>-connect-jmx` with JMX password authentication (credentials kept once
//!   made);
//! - Services `<name>-connect-api` (REST API, 8083) and `<name>-connect` (headless, the pods'
//!   DNS names), PodDisruptionBudget and NetworkPolicy `<name>-connect`;
//! - with `spec.build`, the objects that build the workers' image ([`build`]), and the
//!   workers run that image once pushed ([`ConnectInputs::built`]).
//!
//! Pure code: the caller reads the user's Secrets and ConfigMaps and hands in their content
//! ([`ConnectInputs`]).

pub mod build;
pub mod config;

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, EnvVar, ImageVolumeSource, Pod, PodSpec, Secret, Service, ServiceAccount,
    ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicySpec};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::Resource;
use strimzi_api::annotations;
use strimzi_api::common::{
    CertSecretSource, KafkaClientAuthentication, KafkaJmxAuthentication, Logging, MetadataTemplate,
    MetricsConfig, Probe as ProbeOptions,
};
use strimzi_api::connect::{KafkaConnect, KafkaConnectSpec, MountedArtifact};
use strimzi_api::labels;
use strimzi_api::pod_set::{StrimziPodSet, StrimziPodSetSpec, pod_to_entry};
use strimzi_api::selectors::{ComponentLabels, owner_reference};

use crate::model::client_security::{certificate_bundle, secret_reader_rbac};
use crate::model::components::{
    cluster_ip_service_spec, config_map_volume, http_probe, service_port, tmp_volume,
};
use crate::model::config::hash_stub;
use crate::model::config::options::Properties;
use crate::model::containers::{
    add_shared_and_template_env, container_port, env, mount, template_mounts, template_volumes,
    templated_pod_spec,
};
use crate::model::meta::{
    StringMap, merged, non_empty, template_annotations, template_labels, with_additional_labels,
};
use crate::model::nodes::images::{DEFAULT_KAFKA_VERSION, KafkaImages, supported_version};
use crate::model::nodes::pods::{
    CONFIG_MOUNT_PATH, CONFIG_VOLUME, HeapSizing, TMP_VOLUME, jmx_env, jvm_env, with_revisions,
};
use crate::model::rack;
use crate::model::security::policies::{
    ingress_rule, jmx_credentials, operator_namespace_selector, peer,
};
use crate::model::{ModelConfig, ModelError, ModelWarning};

/// Port of the Connect REST API.
pub const REST_API_PORT: i32 = 8083;
/// Name of the REST API port.
pub const REST_API_PORT_NAME: &str = "rest-api";
/// Port of the Prometheus JMX exporter.
pub const METRICS_PORT: i32 = 9404;
/// Port of remote JMX access.
pub const JMX_PORT: i32 = 9999;
/// Name of the JMX port.
const JMX_PORT_NAME: &str = "jmx";
/// Name of the metrics port.
const METRICS_PORT_NAME: &str = "tcp-prometheus";
/// Key of the worker configuration in the ConfigMap.
pub const CONNECT_CONFIG_KEY: &str = "kafka-connect.properties";
/// Key of the Log4j2 configuration in the ConfigMap.
pub const LOGGING_KEY: &str = "log4j2.properties";
/// Key of the JMX exporter rules in the ConfigMap.
pub const METRICS_KEY: &str = "metrics-config.json";
// `strimzi.io/configuration-hash` on the pods: here the worker configuration's hash (logging
// is re-read by the workers, so it is not part of it).
/// Replicas when `spec.replicas` is unset (the CRD requires it in v1; kept for MM2).
const DEFAULT_REPLICAS: i32 = 3;
/// Share of the container memory the start script gives the heap without `-Xmx` (Connect).
const DYNAMIC_HEAP_PERCENTAGE: &str = "75";
/// Where the workers read the rack file the init container writes.
pub const INIT_MOUNT_PATH: &str = "/opt/kafka/init";
/// Component type of Connect's objects.
pub const COMPONENT_TYPE: &str = "kafka-connect";
/// `strimzi.io/kind` of Connect's objects.
pub const KIND: &str = "KafkaConnect";

/// One Connect cluster, as a KafkaConnect (or, later, a KafkaMirrorMaker2) describes it.
#[derive(Clone, Debug)]
pub struct ConnectCluster {
    /// Name of the custom resource.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// `strimzi.io/kind` of the objects (`KafkaConnect`).
    pub kind: String,
    /// `strimzi.io/component-type` and `app.kubernetes.io/name` (`kafka-connect`).
    pub component_type: String,
    /// The pods' name prefix, StrimziPodSet, headless Service, ServiceAccount, PDB and
    /// NetworkPolicy name (`<name>-connect`).
    pub component_name: String,
    /// The REST API Service (`<name>-connect-api`).
    pub api_service_name: String,
    /// Owner reference to the custom resource.
    pub owner: Option<OwnerReference>,
    /// The resource's labels, propagated to the objects.
    pub resource_labels: BTreeMap<String, String>,
    /// The Connect spec.
    pub spec: KafkaConnectSpec,
    /// The Kafka version the workers run.
    pub version: String,
    /// The image the workers run.
    pub image: String,
    /// Operator-wide settings.
    pub config: ModelConfig,
    /// How the trusted certificates Secret is laid out and which Secrets the pods read
    /// besides `spec`'s.
    pub trust: TrustLayout,
    /// Environment variables of the workers besides the Connect ones.
    pub extra_env: Vec<EnvVar>,
}

/// The trusted certificates of a Connect cluster: those of `spec.tls` for a KafkaConnect,
/// those of every cluster for a KafkaMirrorMaker2.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum TrustLayout {
    /// Secret `<component>-tls-trusted-certs` with every certificate of `spec.tls`
    /// concatenated under `ca.crt`, which the workers trust.
    #[default]
    Bundle,
    /// One Secret with one `<alias>.crt` entry per cluster (its certificates concatenated);
    /// the workers trust the entry of `worker_key`.
    PerCluster {
        /// The Secret's name.
        secret: String,
        /// The entry the workers' own clients trust.
        worker_key: String,
        /// Each cluster's entry and the certificates it gathers.
        clusters: Vec<ClusterTrust>,
        /// Further Secrets the pods read through the config provider (the clusters'
        /// client certificates and passwords).
        secrets: Vec<String>,
    },
}

/// The trusted certificates of one cluster of a [`TrustLayout::PerCluster`].
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterTrust {
    /// Its entry in the Secret (`<alias>.crt`).
    pub key: String,
    /// Where the cluster is in the resource (`spec.target`, `spec.mirrors[0].source`), for
    /// messages about its `tls` section.
    pub field: String,
    /// The certificates of its `tls.trustedCertificates`.
    pub sources: Vec<CertSecretSource>,
}

/// What the caller read for the model: the contents of the user's Secrets and ConfigMaps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConnectInputs {
    /// The data of each Secret `spec.tls.trustedCertificates` names, by Secret name.
    pub trusted_certificate_secrets: BTreeMap<String, BTreeMap<String, ByteString>>,
    /// The external logging configuration, when `logging` is external and found.
    pub external_logging: Option<String>,
    /// The JMX exporter rules, when `metricsConfig` names a ConfigMap that was found.
    pub external_metrics: Option<String>,
    /// The JMX Secret as it is, whose credentials are kept.
    pub jmx_secret: Option<Secret>,
    /// With `spec.build`, the image built for it that the workers run.
    pub built: Option<BuiltImage>,
}

/// A pushed build of `spec.build`: what the workers run, and what the StrimziPodSet records
/// (`strimzi.io/connect-build-revision`, `strimzi.io/connect-build-image`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltImage {
    /// The image by digest.
    pub image: String,
    /// The build's revision ([`build::build_revision`]).
    pub revision: String,
}

/// Every object of a Connect cluster, in the order they are applied.
#[derive(Clone, Debug)]
pub struct ConnectObjects {
    /// `<name>-connect`.
    pub service_account: ServiceAccount,
    /// `<name>-connect`: `get` on the Secrets the config provider reads.
    pub role: Role,
    /// `<name>-connect-role`.
    pub role_binding: RoleBinding,
    /// `<name>-connect-tls-trusted-certs`, with `spec.tls`.
    pub trusted_certificates: Option<Secret>,
    /// `<name>-connect-config`.
    pub config_map: ConfigMap,
    /// `<name>-connect-jmx`, with JMX password authentication.
    pub jmx_secret: Option<Secret>,
    /// `<name>-connect-api`.
    pub api_service: Service,
    /// `<name>-connect` (headless).
    pub headless_service: Service,
    /// `<name>-connect`, unless NetworkPolicies are not generated.
    pub network_policy: Option<NetworkPolicy>,
    /// `<name>-connect`, unless PodDisruptionBudgets are not generated.
    pub pod_disruption_budget: Option<PodDisruptionBudget>,
    /// `<name>-connect`.
    pub pod_set: StrimziPodSet,
    /// `strimzi-<namespace>-<name>-connect-init`, with a `topology-label` rack: lets the
    /// init container read the workers' nodes. Cluster-scoped, so without owner.
    pub init_cluster_role_binding: Option<ClusterRoleBinding>,
    /// What the user should know about the spec.
    pub warnings: Vec<ModelWarning>,
}

/// The REST API's address from inside the cluster: `http://<service>.<namespace>.svc:8083`.
pub fn rest_api_url(api_service: &str, namespace: &str) -> String {
    format!("http://{api_service}.{namespace}.svc:{REST_API_PORT}")
}

/// The entry of a KafkaConnect's trusted certificates Secret holding them all.
pub const TRUSTED_BUNDLE_KEY: &str = "ca.crt";

/// The trusted certificates Secret of a Connect cluster named `component_name`.
pub fn trusted_certificates_secret(component_name: &str) -> String {
    format!("{component_name}-tls-trusted-certs")
}

/// The RoleBinding of a Connect cluster named `component_name` (its Role takes the
/// component's own name).
pub fn role_binding_name(component_name: &str) -> String {
    format!("{component_name}-role")
}

/// The JMX Secret of a Connect cluster named `component_name`.
pub fn jmx_secret_name(component_name: &str) -> String {
    format!("{component_name}-jmx")
}

/// The ConfigMap of a Connect cluster named `component_name`.
pub fn config_map_name(component_name: &str) -> String {
    format!("{component_name}-config")
}

impl ConnectCluster {
    /// The Connect cluster of `connect`: validates the version and picks the image
    /// (`spec.image`, else the operator's Connect image of `spec.version`).
    pub fn from_kafka_connect(
        connect: &KafkaConnect,
        config: &ModelConfig,
    ) -> Result<Self, ModelError> {
        Self::with_images(
            connect,
            config,
            &KafkaConnect::kind(&()),
            &config.connect_images,
            "STRIMZI_KAFKA_CONNECT_IMAGES",
        )
    }

    /// The Connect cluster of `connect`, made for a resource of `kind`: validates the version
    /// and picks the image (`spec.image`, else the image of `spec.version` in `images`, which
    /// the operator reads from the environment variable `variable`, named in messages).
    pub fn with_images(
        connect: &KafkaConnect,
        config: &ModelConfig,
        kind: &str,
        images: &KafkaImages,
        variable: &str,
    ) -> Result<Self, ModelError> {
        let name = connect.metadata.name.clone().unwrap_or_default();
        let spec = connect.spec.clone();
        let version = spec
            .version
            .clone()
            .unwrap_or_else(|| DEFAULT_KAFKA_VERSION.to_owned());
        if supported_version(&version).is_none() {
            return Err(ModelError::UnsupportedKafkaVersion(format!(
                "Unsupported {kind}.spec.version: {version}. Supported versions are: [{}]",
                crate::model::nodes::images::SUPPORTED_VERSIONS
                    .iter()
                    .map(|supported| supported.version)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let image = match (&spec.image, images.image(&version)) {
            (Some(image), _) => image.clone(),
            (None, Some(image)) => image.to_owned(),
            (None, None) => {
                return Err(ModelError::UnsupportedKafkaVersion(format!(
                    "No {kind} image is configured for Kafka version {version}; set {variable} \
                     or spec.image"
                )));
            }
        };
        Ok(Self {
            component_name: strimzi_api::naming::connect_component(&name),
            api_service_name: strimzi_api::naming::connect_api_service(&name),
            namespace: connect.metadata.namespace.clone().unwrap_or_default(),
            kind: kind.to_owned(),
            component_type: COMPONENT_TYPE.to_owned(),
            owner: owner_reference(connect),
            resource_labels: connect.metadata.labels.clone().unwrap_or_default(),
            name,
            spec,
            version,
            image,
            config: config.clone(),
            trust: TrustLayout::Bundle,
            extra_env: Vec::new(),
        })
    }

    /// The Secret the trusted certificates are gathered in.
    pub fn trusted_certificates_secret(&self) -> String {
        match &self.trust {
            TrustLayout::Bundle => trusted_certificates_secret(&self.component_name),
            TrustLayout::PerCluster { secret, .. } => secret.clone(),
        }
    }

    /// Every trusted certificate source whose Secret the caller reads for the model.
    pub fn trusted_certificate_sources(&self) -> Vec<&CertSecretSource> {
        match &self.trust {
            TrustLayout::Bundle => self
                .spec
                .tls
                .as_ref()
                .and_then(|tls| tls.trusted_certificates.as_ref())
                .into_iter()
                .flatten()
                .collect(),
            TrustLayout::PerCluster { clusters, .. } => clusters
                .iter()
                .flat_map(|cluster| cluster.sources.iter())
                .collect(),
        }
    }

    /// Who the objects belong to, for their labels.
    pub fn component_labels(&self) -> ComponentLabels {
        ComponentLabels {
            kind: self.kind.clone(),
            cluster: self.name.clone(),
            component_name: self.component_name.clone(),
            component_type: self.component_type.clone(),
            managed_by: self.config.managed_by.clone(),
        }
    }

    /// Labels of every object: the resource's propagated labels and Strimzi's.
    pub fn labels(&self) -> StringMap {
        self.component_labels()
            .labels(&self.resource_labels, &self.config.label_exclusion)
    }

    /// Labels that select the pods.
    pub fn selector(&self) -> StringMap {
        self.component_labels().selector()
    }

    /// The REST API's URL reported in the status: none at zero replicas, when no worker
    /// serves it (as Strimzi reports it).
    pub fn reported_url(&self) -> Option<String> {
        (self.replicas() > 0).then(|| rest_api_url(&self.api_service_name, &self.namespace))
    }

    /// The number of workers.
    pub fn replicas(&self) -> i32 {
        if self.spec.replicas >= 0 {
            self.spec.replicas
        } else {
            DEFAULT_REPLICAS
        }
    }

    /// Name of worker `index`.
    pub fn pod_name(&self, index: i32) -> String {
        format!("{}-{index}", self.component_name)
    }

    /// Metadata of an object named `name` with a metadata template.
    fn meta(&self, name: &str, template: Option<&MetadataTemplate>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(self.namespace.clone()),
            labels: non_empty(with_additional_labels(
                &self.labels(),
                &template_labels(template),
            )),
            annotations: non_empty(template_annotations(template)),
            owner_references: self.owner.clone().map(|owner| vec![owner]),
            ..ObjectMeta::default()
        }
    }

    /// Checks what the CRD cannot: the logging and metrics ConfigMaps were found and are
    /// usable, and the trusted certificates exist.
    pub fn validate(&self, inputs: &ConnectInputs) -> Result<(), ModelError> {
        self.logging_file(inputs)?;
        crate::model::config::metrics_json(
            self.spec.metrics_config.as_ref(),
            inputs.external_metrics.as_deref(),
        )?;
        self.trusted_certificate_data(inputs)?;
        self.worker_configuration().map_err(security_error)?;
        Ok(())
    }

    /// Every object of the cluster.
    pub fn objects(&self, inputs: &ConnectInputs) -> Result<ConnectObjects, ModelError> {
        let template = self.spec.template.as_ref();
        let (worker_config, warnings) = self.worker_configuration().map_err(security_error)?;
        let logging = self.logging_file(inputs)?;
        let metrics = crate::model::config::metrics_json(
            self.spec.metrics_config.as_ref(),
            inputs.external_metrics.as_deref(),
        )?;
        let trusted = self.trusted_certificate_data(inputs)?;
        let auth_hash = trusted.as_ref().map(|data| {
            let text: String = data
                .iter()
                .map(|(key, value)| format!("{key}={}", String::from_utf8_lossy(&value.0)))
                .collect();
            hash_stub(&text)
        });
        let mut config_data = BTreeMap::from([
            (CONNECT_CONFIG_KEY.to_owned(), worker_config.clone()),
            (LOGGING_KEY.to_owned(), logging),
        ]);
        if let Some(metrics) = metrics {
            config_data.insert(METRICS_KEY.to_owned(), metrics);
        }
        let mut pod_annotations = StringMap::from([(
            annotations::CONFIGURATION_HASH.to_owned(),
            hash_stub(&worker_config),
        )]);
        if let Some(hash) = auth_hash {
            pod_annotations.insert(annotations::AUTH_HASH.to_owned(), hash);
        }
        // With a build, the workers run its image, and the set records it.
        let built = self.spec.build.as_ref().and(inputs.built.as_ref());
        if let Some(built) = built {
            pod_annotations.insert(
                annotations::CONNECT_BUILD_REVISION.to_owned(),
                built.revision.clone(),
            );
        }
        let workers = built.map(|built| ConnectCluster {
            image: built.image.clone(),
            ..self.clone()
        });
        let mut pod_set = workers.as_ref().unwrap_or(self).pod_set(&pod_annotations);
        if let Some(built) = built {
            pod_set
                .metadata
                .annotations
                .get_or_insert_default()
                .extend([
                    (
                        annotations::CONNECT_BUILD_REVISION.to_owned(),
                        built.revision.clone(),
                    ),
                    (
                        build::progress::CONNECT_BUILD_IMAGE.to_owned(),
                        built.image.clone(),
                    ),
                ]);
        }
        let (role, role_binding) = self.rbac();
        Ok(ConnectObjects {
            service_account: ServiceAccount {
                metadata: self.meta(
                    &self.component_name,
                    template
                        .and_then(|template| template.service_account.as_ref())
                        .and_then(|template| template.metadata.as_ref()),
                ),
                ..ServiceAccount::default()
            },
            role,
            role_binding,
            trusted_certificates: trusted.map(|data| Secret {
                metadata: self.meta(&self.trusted_certificates_secret(), None),
                type_: Some("Opaque".to_owned()),
                data: Some(data),
                ..Secret::default()
            }),
            config_map: ConfigMap {
                metadata: self.meta(&config_map_name(&self.component_name), None),
                data: Some(config_data),
                ..ConfigMap::default()
            },
            jmx_secret: self.jmx_password_auth().then(|| Secret {
                metadata: self.meta(
                    &jmx_secret_name(&self.component_name),
                    template
                        .and_then(|template| template.jmx_secret.as_ref())
                        .and_then(|template| template.metadata.as_ref()),
                ),
                type_: Some("Opaque".to_owned()),
                data: Some(jmx_credentials(inputs.jmx_secret.as_ref())),
                ..Secret::default()
            }),
            api_service: self.api_service(),
            headless_service: self.headless_service(),
            network_policy: self.network_policy(),
            pod_disruption_budget: self.pod_disruption_budget(),
            pod_set,
            init_cluster_role_binding: self.init_cluster_role_binding(),
            warnings,
        })
    }

    /// The node label naming the workers' rack, with a `topology-label` rack.
    fn topology_key(&self) -> Option<&str> {
        rack::topology_key(self.spec.rack.as_ref())
    }

    /// The init container's ClusterRoleBinding ([`ConnectObjects::init_cluster_role_binding`])
    /// to `strimzi-kafka-client`, labelled like the other objects.
    fn init_cluster_role_binding(&self) -> Option<ClusterRoleBinding> {
        self.topology_key()?;
        let template = self
            .spec
            .template
            .as_ref()
            .and_then(|template| template.cluster_role_binding.as_ref())
            .and_then(|template| template.metadata.as_ref());
        Some(rack::init_cluster_role_binding(
            self.meta(
                &strimzi_api::naming::init_cluster_role_binding(
                    &self.namespace,
                    &self.component_name,
                ),
                template,
            ),
            rack::CLIENT_CLUSTER_ROLE,
            &self.component_name,
            &self.namespace,
        ))
    }

    /// The init container writing the rack file, with a `topology-label` rack.
    fn init_container(&self) -> Option<Container> {
        let key = self.topology_key()?;
        let template = self
            .spec
            .template
            .as_ref()
            .and_then(|template| template.init_container.as_ref());
        let (image, image_pull_policy) =
            rack::client_init_image(self.spec.client_rack_init_image.as_ref(), &self.config);
        Some(
            rack::InitContainer {
                image,
                image_pull_policy,
                env: rack::rack_init_variables(key, None),
                shared_env: &self.config.shared_env,
                mounts: vec![rack::init_mount(INIT_MOUNT_PATH)],
                resources: self.spec.resources.clone(),
                security_context: self.config.container_security_context(template),
                template,
            }
            .container(),
        )
    }

    /// The worker's `log4j2.properties`.
    fn logging_file(&self, inputs: &ConnectInputs) -> Result<String, ModelError> {
        crate::model::config::logging::logging_file(
            self.spec.logging.as_ref(),
            default_logging_properties(),
            inputs.external_logging.as_deref(),
        )
    }

    /// The content of the trusted certificates Secret: every certificate `spec.tls` names
    /// (a key, or the keys matching a pattern) concatenated under `ca.crt`; `None` without
    /// trusted certificates. A missing Secret or key is an error naming it.
    fn trusted_certificate_data(
        &self,
        inputs: &ConnectInputs,
    ) -> Result<Option<BTreeMap<String, ByteString>>, ModelError> {
        if let TrustLayout::PerCluster { clusters, .. } = &self.trust {
            let mut data = BTreeMap::new();
            for cluster in clusters {
                let bundle = certificate_bundle(
                    &cluster.sources,
                    &inputs.trusted_certificate_secrets,
                    &self.namespace,
                    &cluster.field,
                )
                .map_err(security_error)?;
                if !bundle.is_empty() {
                    data.insert(cluster.key.clone(), ByteString(bundle));
                }
            }
            return Ok((!data.is_empty()).then_some(data));
        }
        let Some(sources) = self
            .spec
            .tls
            .as_ref()
            .and_then(|tls| tls.trusted_certificates.as_ref())
            .filter(|sources| !sources.is_empty())
        else {
            return Ok(None);
        };
        let bundle = certificate_bundle(
            sources,
            &inputs.trusted_certificate_secrets,
            &self.namespace,
            "spec",
        )
        .map_err(security_error)?;
        Ok(Some(BTreeMap::from([(
            TRUSTED_BUNDLE_KEY.to_owned(),
            ByteString(bundle),
        )])))
    }

    /// The Secrets the workers read through the config provider: the trusted certificates,
    /// the client certificate of `tls` authentication, the SASL password.
    fn provider_secrets(&self) -> Vec<String> {
        let mut names = Vec::new();
        if !self.trusted_certificate_sources().is_empty() {
            names.push(self.trusted_certificates_secret());
        }
        if let TrustLayout::PerCluster { secrets, .. } = &self.trust {
            for secret in secrets {
                if !names.contains(secret) {
                    names.push(secret.clone());
                }
            }
        }
        if let Some(KafkaClientAuthentication::Tls(tls)) = &self.spec.authentication
            && let Some(pair) = &tls.certificate_and_key
            && !names.contains(&pair.secret_name)
        {
            names.push(pair.secret_name.clone());
        }
        if let Some(secret) = self.password_secret()
            && !names.contains(&secret)
        {
            names.push(secret);
        }
        names
    }

    /// Role `<name>-connect` (`get` on the Secrets the config provider reads) and RoleBinding
    /// `<name>-connect-role` granting it to the workers' ServiceAccount.
    fn rbac(&self) -> (Role, RoleBinding) {
        secret_reader_rbac(
            self.meta(&self.component_name, None),
            self.meta(&role_binding_name(&self.component_name), None),
            self.provider_secrets(),
            &self.component_name,
            &self.namespace,
        )
    }

    /// Whether JMX uses password authentication (and so a Secret).
    fn jmx_password_auth(&self) -> bool {
        matches!(
            self.spec
                .jmx_options
                .as_ref()
                .and_then(|jmx| jmx.authentication.as_ref()),
            Some(KafkaJmxAuthentication::Password(_))
        )
    }

    fn metrics_enabled(&self) -> bool {
        matches!(
            self.spec.metrics_config,
            Some(MetricsConfig::JmxPrometheusExporter(_))
        )
    }

    fn service_ports(&self) -> Vec<ServicePort> {
        let mut ports = vec![service_port(REST_API_PORT_NAME, REST_API_PORT)];
        if self.metrics_enabled() {
            ports.push(service_port(METRICS_PORT_NAME, METRICS_PORT));
        }
        ports
    }

    fn api_service(&self) -> Service {
        let template = self
            .spec
            .template
            .as_ref()
            .and_then(|template| template.api_service.as_ref());
        Service {
            metadata: self.meta(
                &self.api_service_name,
                template.and_then(|template| template.metadata.as_ref()),
            ),
            spec: Some(cluster_ip_service_spec(
                self.selector(),
                self.service_ports(),
                template,
            )),
            status: None,
        }
    }

    fn headless_service(&self) -> Service {
        let template = self
            .spec
            .template
            .as_ref()
            .and_then(|template| template.headless_service.as_ref());
        let mut ports = self.service_ports();
        if self.spec.jmx_options.is_some() {
            ports.push(service_port(JMX_PORT_NAME, JMX_PORT));
        }
        Service {
            metadata: self.meta(
                &self.component_name,
                template.and_then(|template| template.metadata.as_ref()),
            ),
            spec: Some(ServiceSpec {
                cluster_ip: Some("None".to_owned()),
                publish_not_ready_addresses: Some(true),
                ..cluster_ip_service_spec(self.selector(), ports, template)
            }),
            status: None,
        }
    }

    /// The REST API open to the other workers and the cluster operator, the metrics port to
    /// everyone when enabled.
    fn network_policy(&self) -> Option<NetworkPolicy> {
        if !self.config.network_policy_generation {
            return None;
        }
        let operator_namespaces = operator_namespace_selector(&self.config, &self.namespace);
        let mut rules = vec![ingress_rule(
            REST_API_PORT,
            vec![
                peer(self.selector(), None),
                peer(
                    StringMap::from([(labels::KIND.to_owned(), "cluster-operator".to_owned())]),
                    operator_namespaces,
                ),
            ],
        )];
        if self.metrics_enabled() {
            rules.push(ingress_rule(METRICS_PORT, Vec::new()));
        }
        if self.spec.jmx_options.is_some() {
            rules.push(ingress_rule(JMX_PORT, Vec::new()));
        }
        Some(NetworkPolicy {
            metadata: self.meta(&self.component_name, None),
            spec: Some(NetworkPolicySpec {
                pod_selector: Some(LabelSelector {
                    match_labels: Some(self.selector()),
                    ..LabelSelector::default()
                }),
                ingress: Some(rules),
                policy_types: Some(vec!["Ingress".to_owned()]),
                ..NetworkPolicySpec::default()
            }),
        })
    }

    fn pod_disruption_budget(&self) -> Option<PodDisruptionBudget> {
        if !self.config.pod_disruption_budget_generation {
            return None;
        }
        let template = self
            .spec
            .template
            .as_ref()
            .and_then(|template| template.pod_disruption_budget.as_ref());
        let max_unavailable = template
            .and_then(|template| template.max_unavailable)
            .unwrap_or(1);
        Some(PodDisruptionBudget {
            metadata: self.meta(
                &self.component_name,
                template.and_then(|template| template.metadata.as_ref()),
            ),
            spec: Some(PodDisruptionBudgetSpec {
                min_available: Some(IntOrString::Int((self.replicas() - max_unavailable).max(0))),
                selector: Some(LabelSelector {
                    match_labels: Some(self.selector()),
                    ..LabelSelector::default()
                }),
                ..PodDisruptionBudgetSpec::default()
            }),
            status: None,
        })
    }

    fn pod_set(&self, pod_annotations: &StringMap) -> StrimziPodSet {
        let template = self
            .spec
            .template
            .as_ref()
            .and_then(|template| template.pod_set.as_ref())
            .and_then(|template| template.metadata.as_ref());
        let mut metadata = self.meta(&self.component_name, template);
        metadata.annotations = Some(merged([
            &StringMap::from([(annotations::KAFKA_VERSION.to_owned(), self.version.clone())]),
            &template_annotations(template),
        ]));
        StrimziPodSet {
            metadata,
            spec: StrimziPodSetSpec {
                selector: LabelSelector {
                    match_labels: Some(self.selector()),
                    ..LabelSelector::default()
                },
                pods: (0..self.replicas())
                    .filter_map(|index| pod_to_entry(&self.pod(index, pod_annotations)).ok())
                    .collect(),
            },
            status: None,
        }
    }

    /// Worker `index`: its name is its host name under the headless Service, which the start
    /// script advertises to the other workers.
    pub fn pod(&self, index: i32, pod_annotations: &StringMap) -> Pod {
        let template = self.spec.template.as_ref();
        let pod_template = template
            .and_then(|template| template.pod.as_ref())
            .map(|pod| &pod.pod);
        let pod_metadata = pod_template.and_then(|pod| pod.metadata.as_ref());
        let name = self.pod_name(index);
        let mut pod_labels = self.labels();
        pod_labels.extend([
            (labels::POD_NAME.to_owned(), name.clone()),
            (
                labels::CONTROLLER.to_owned(),
                labels::CONTROLLER_STRIMZI_POD_SET.to_owned(),
            ),
            (
                labels::CONTROLLER_NAME.to_owned(),
                self.component_name.clone(),
            ),
        ]);
        let annotations = merged([
            &StringMap::from([(annotations::KAFKA_VERSION.to_owned(), self.version.clone())]),
            pod_annotations,
            &template_annotations(pod_metadata),
        ]);
        let mut volumes = vec![
            tmp_volume(TMP_VOLUME, pod_template),
            config_map_volume(CONFIG_VOLUME, &config_map_name(&self.component_name)),
        ];
        if self.topology_key().is_some() {
            volumes.push(rack::init_volume());
        }
        volumes.extend(self.plugin_images().into_iter().map(|plugin| Volume {
            name: plugin.volume,
            image: Some(ImageVolumeSource {
                reference: Some(plugin.reference),
                pull_policy: plugin.pull_policy,
            }),
            ..Volume::default()
        }));
        volumes.extend(template_volumes(pod_template));
        let spec = templated_pod_spec(pod_template);
        let affinity = match self.topology_key() {
            Some(key) => Some(rack::with_rack_affinity(spec.affinity.clone(), key)),
            None => spec.affinity.clone(),
        };
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(self.namespace.clone()),
                labels: Some(with_additional_labels(
                    &pod_labels,
                    &template_labels(pod_metadata),
                )),
                annotations: Some(annotations),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                hostname: Some(name),
                subdomain: Some(self.component_name.clone()),
                service_account_name: Some(self.component_name.clone()),
                restart_policy: Some("Always".to_owned()),
                init_containers: self.init_container().map(|container| vec![container]),
                containers: vec![self.container()],
                volumes: Some(volumes),
                image_pull_secrets: self.config.image_pull_secrets(pod_template),
                affinity,
                ..spec
            }),
            status: None,
        };
        with_revisions(pod)
    }

    /// The OCI images of `spec.plugins`, each mounted read-only as an image volume under
    /// `/opt/kafka/plugins/<plugin>/<hash of the reference>`, where the workers look for
    /// plugins.
    fn plugin_images(&self) -> Vec<PluginImage> {
        self.spec
            .plugins
            .iter()
            .flatten()
            .flat_map(|plugin| {
                plugin.artifacts.iter().map(move |artifact| {
                    let MountedArtifact::Image(image) = artifact;
                    let hash = hash_stub(&image.reference);
                    PluginImage {
                        volume: format!("plugin-{}", hash_stub(&format!("{}/{hash}", plugin.name))),
                        mount_path: format!("/opt/kafka/plugins/{}/{hash}", plugin.name),
                        reference: image.reference.clone(),
                        pull_policy: image.pull_policy.clone(),
                    }
                })
            })
            .collect()
    }

    /// The Secret holding the SASL password.
    fn password_secret(&self) -> Option<String> {
        match &self.spec.authentication {
            Some(
                KafkaClientAuthentication::ScramSha256(auth)
                | KafkaClientAuthentication::ScramSha512(auth)
                | KafkaClientAuthentication::Plain(auth),
            ) => auth
                .password_secret
                .as_ref()
                .map(|secret| secret.secret_name.clone()),
            _ => None,
        }
    }

    fn container(&self) -> Container {
        let template = self
            .spec
            .template
            .as_ref()
            .and_then(|template| template.connect_container.as_ref());
        let mut vars = vec![
            env(
                "KAFKA_CONNECT_JMX_EXPORTER_ENABLED",
                self.metrics_enabled().to_string(),
            ),
            env(
                "STRIMZI_KAFKA_GC_LOG_ENABLED",
                self.spec
                    .jvm_options
                    .as_ref()
                    .and_then(|jvm| jvm.gc_logging_enabled)
                    .unwrap_or(false)
                    .to_string(),
            ),
        ];
        vars.extend(jvm_env(
            self.spec.jvm_options.as_ref(),
            self.spec.resources.as_ref(),
            HeapSizing {
                percentage: DYNAMIC_HEAP_PERCENTAGE,
                max: None,
            },
        ));
        if self.spec.tracing.is_some() {
            vars.push(env("STRIMZI_TRACING", "opentelemetry"));
        }
        vars.extend(jmx_env(
            self.spec.jmx_options.as_ref(),
            &jmx_secret_name(&self.component_name),
        ));
        vars.extend(self.extra_env.iter().cloned());
        add_shared_and_template_env(&mut vars, &self.config.shared_env, template);
        let mut mounts: Vec<VolumeMount> = vec![
            mount(TMP_VOLUME, "/tmp"),
            mount(CONFIG_VOLUME, CONFIG_MOUNT_PATH),
        ];
        if self.topology_key().is_some() {
            mounts.push(rack::init_mount(INIT_MOUNT_PATH));
        }
        mounts.extend(self.plugin_images().into_iter().map(|plugin| VolumeMount {
            read_only: Some(true),
            ..mount(&plugin.volume, &plugin.mount_path)
        }));
        mounts.extend(template_mounts(template));
        let mut ports = vec![container_port(REST_API_PORT_NAME, REST_API_PORT)];
        if self.metrics_enabled() {
            ports.push(container_port(METRICS_PORT_NAME, METRICS_PORT));
        }
        if self.spec.jmx_options.is_some() {
            ports.push(container_port(JMX_PORT_NAME, JMX_PORT));
        }
        let defaults = || ProbeOptions {
            initial_delay_seconds: Some(60),
            timeout_seconds: Some(5),
            ..ProbeOptions::default()
        };
        Container {
            name: self.component_name.clone(),
            image_pull_policy: Some(self.config.image_pull_policy(&self.image)),
            image: Some(self.image.clone()),
            args: Some(vec!["/opt/kafka/kafka_connect_run.sh".to_owned()]),
            env: Some(vars),
            ports: Some(ports),
            liveness_probe: Some(http_probe(
                "/",
                REST_API_PORT_NAME,
                self.spec.liveness_probe.as_ref(),
                defaults(),
            )),
            readiness_probe: Some(http_probe(
                "/",
                REST_API_PORT_NAME,
                self.spec.readiness_probe.as_ref(),
                defaults(),
            )),
            resources: self.spec.resources.clone(),
            volume_mounts: Some(mounts),
            security_context: self.config.container_security_context(template),
            ..Container::default()
        }
    }
}

/// A security section without what it needs, as the model reports it.
fn security_error(error: crate::model::client_security::ClientSecurityError) -> ModelError {
    ModelError::InvalidConfiguration(error.to_string())
}

/// One plugin image of `spec.plugins` as the pods mount it.
struct PluginImage {
    /// The volume's name.
    volume: String,
    /// Where it is mounted.
    mount_path: String,
    /// The image.
    reference: String,
    /// Its pull policy, if set.
    pull_policy: Option<String>,
}

/// Strimzi's default Connect logging: everything to the console at `INFO`, the reflections
/// library at `ERROR`.
fn default_logging_properties() -> Properties {
    Properties::from_pairs([
        ("name", "ConnectConfig"),
        ("appender.console.type", "Console"),
        ("appender.console.name", "STDOUT"),
        ("appender.console.layout.type", "PatternLayout"),
        (
            "appender.console.layout.pattern",
            "%d{yyyy-MM-dd HH:mm:ss} %-5p %X{connector.context}[%t] %c{1}:%L - %m%n",
        ),
        ("rootLogger.level", "INFO"),
        ("rootLogger.appenderRefs", "console"),
        ("rootLogger.appenderRef.console.ref", "STDOUT"),
        ("rootLogger.additivity", "false"),
        ("logger.reflections.name", "org.reflections"),
        ("logger.reflections.level", "ERROR"),
        ("logger.reflections.additivity", "false"),
    ])
}

/// Whether `logging` is external (read from a user ConfigMap).
pub fn external_logging_reference(logging: Option<&Logging>) -> Option<(String, String)> {
    match logging {
        Some(Logging::External(external)) => external
            .value_from
            .as_ref()
            .and_then(|value_from| value_from.config_map_key_ref.as_ref())
            .map(|reference| (reference.name.clone(), reference.key.clone())),
        _ => None,
    }
}
