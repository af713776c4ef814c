//! The StrimziPodSet of each pool with its complete pod definitions, and the revision hash.
//!
//! The pods run Strimzi's own Kafka image unchanged, so their layout is what its start script
//! (`/opt/kafka/kafka_run.sh`) expects: the per-node ConfigMap (`server.config`,
//! `log4j2.properties`, `cluster.id`, `metadata.version`) at `/opt/kafka/custom-config/`, the
//! data volumes under `/var/lib/kafka`, a memory-backed `/tmp`, and the `/var/opt/kafka` ready
//! files. Certificates are not mounted: the brokers read them from their Secrets through the
//! Kubernetes config provider, with the pod's service account token.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, ConfigMapProjection, ConfigMapVolumeSource, Container, ContainerPort,
    DownwardAPIProjection, DownwardAPIVolumeFile, EnvVar, EnvVarSource, ExecAction, KeyToPath,
    LocalObjectReference, ObjectFieldSelector, PersistentVolumeClaimVolumeSource, Pod,
    PodSecurityContext, PodSpec, Probe, ProjectedVolumeSource, ResourceRequirements,
    SecretKeySelector, ServiceAccountTokenProjection, Volume, VolumeMount, VolumeProjection,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::ObjectMeta;
use strimzi_api::annotations;
use strimzi_api::common::{
    ContainerTemplate, JvmOptions, KafkaJmxAuthentication, KafkaJmxOptions, MetricsConfig,
    Probe as ProbeOptions, RackType, TemplatedVolume,
};
use strimzi_api::kafka::KafkaListenerType;
use strimzi_api::labels;
use strimzi_api::node_pool::ProcessRole;
use strimzi_api::pod_set::{StrimziPodSet, StrimziPodSetSpec, pod_to_entry};
use strimzi_api::storage::SingleVolumeStorage;

use crate::model::config::hash_stub;
use crate::model::containers::{
    add_shared_and_template_env, container_port, convert, empty_dir, env, mount, template_mounts,
    templated_pod_spec,
};
use crate::model::listeners::services::{
    CONTROL_PLANE_PORT, JMX_PORT, KAFKA_AGENT_PORT, METRICS_PORT, REPLICATION_PORT,
};
use crate::model::listeners::settings::ListenerSettings;
use crate::model::meta::{merged, template_annotations, template_labels, with_additional_labels};
use crate::model::nodes::storage::{data_volumes, storage_annotation};
use crate::model::nodes::templates::{PoolTemplate, metadata};
use crate::model::rack;
use crate::model::{KafkaCluster, NodePool};

/// Name of the Kafka container.
const KAFKA_CONTAINER: &str = "kafka";
/// Where the init volume ([`rack::INIT_VOLUME`]) is mounted: the rack and node address files.
const INIT_MOUNT_PATH: &str = "/opt/kafka/init";
/// Volume of the per-node ConfigMap (of the workers' ConfigMap in Connect pods).
pub(crate) const CONFIG_VOLUME: &str = "kafka-metrics-and-logging";
/// Where the start script of Strimzi's Kafka image reads the ConfigMap.
pub(crate) const CONFIG_MOUNT_PATH: &str = "/opt/kafka/custom-config/";
/// Memory-backed `/tmp`.
pub(crate) const TMP_VOLUME: &str = "strimzi-tmp";
/// Default size of [`TMP_VOLUME`].
const TMP_DEFAULT_SIZE: &str = "5Mi";
/// Files through which the container reports readiness.
const READY_FILES_VOLUME: &str = "ready-files";
/// Projected service account token, used by the brokers' Secret config provider and the
/// init container.
const SERVICE_ACCOUNT_VOLUME: &str = "kube-api-access";
/// Where Kubernetes clients look for the service account token.
const SERVICE_ACCOUNT_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// Share of the container memory the start script gives to the heap when no `-Xmx` is set.
const DYNAMIC_HEAP_PERCENTAGE: &str = "50";
/// Largest heap the start script picks on its own (5 GiB).
const DYNAMIC_HEAP_MAX: &str = "5368709120";

/// The CA generations the pods were built against; a change rolls the pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaGenerations {
    /// `strimzi.io/cluster-ca-cert-generation`.
    pub cluster_ca_cert: u32,
    /// `strimzi.io/cluster-ca-key-generation`.
    pub cluster_ca_key: u32,
    /// `strimzi.io/clients-ca-cert-generation`.
    pub clients_ca_cert: u32,
}

/// Values computed by earlier steps that the pod definitions carry as annotations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodInputs {
    /// The CA generations.
    pub ca_generations: CaGenerations,
    /// `strimzi.io/server-cert-hash` by pod name.
    pub server_cert_hashes: BTreeMap<String, String>,
    /// Hash of each node's configuration by pod name (`strimzi.io/configuration-hash`).
    pub configuration_hashes: BTreeMap<String, String>,
    /// Thumbprints of the user-provided listener certificates, set on broker pods so that a
    /// new certificate rolls them (`strimzi.io/custom-listener-cert-thumbprints`).
    pub custom_listener_cert_thumbprints: Option<String>,
}

/// Adds the two hashes that tell whether a pod runs its current definition, computed as
/// Strimzi computes them so that a pod either operator made from the same spec is current
/// for both: `strimzi.io/resource-revision` over the containers' resources (init containers
/// first) and `strimzi.io/revision` over everything else. Fields added later by admission
/// webhooks are not part of the definition, so they never change either.
pub fn with_revisions(mut pod: Pod) -> Pod {
    let resource_revision = resource_revision(&pod);
    let revision = pod_revision(&pod);
    let annotations = pod.metadata.annotations.get_or_insert_default();
    annotations.insert(annotations::RESOURCE_REVISION.to_owned(), resource_revision);
    annotations.insert(annotations::REVISION.to_owned(), revision);
    pod
}

/// `strimzi.io/revision`: the hash stub of the pod's compact JSON with its keys sorted (the
/// order in which Jackson writes Strimzi's pod objects), without the two revision
/// annotations and without the containers' resources.
pub fn pod_revision(pod: &Pod) -> String {
    // Read through `pointer_mut`: indexing a JSON object mutably would add missing keys.
    let mut json = serde_json::to_value(pod).unwrap_or_default();
    if let Some(annotations) = json
        .pointer_mut("/metadata/annotations")
        .and_then(serde_json::Value::as_object_mut)
    {
        annotations.remove(annotations::REVISION);
        annotations.remove(annotations::RESOURCE_REVISION);
    }
    for list in ["/spec/initContainers", "/spec/containers"] {
        let containers = json
            .pointer_mut(list)
            .and_then(serde_json::Value::as_array_mut);
        for container in containers
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_object_mut)
        {
            container.remove("resources");
        }
    }
    hash_stub(&json.to_string())
}

/// `strimzi.io/resource-revision`: the hash stub of the JSON list of the containers'
/// resources, init containers first, leaving out containers without any.
pub fn resource_revision(pod: &Pod) -> String {
    let spec = pod.spec.as_ref();
    let resources: Vec<&ResourceRequirements> = spec
        .and_then(|spec| spec.init_containers.as_ref())
        .into_iter()
        .flatten()
        .chain(spec.map(|spec| &spec.containers).into_iter().flatten())
        .filter_map(|container| container.resources.as_ref())
        .collect();
    hash_stub(&serde_json::to_string(&resources).unwrap_or_default())
}

/// The revisions of a pod (running, or as its StrimziPodSet describes it) from its
/// annotations: it runs its current definition when both equal the described pod's.
pub fn definition_revisions(
    annotations: Option<&BTreeMap<String, String>>,
) -> (Option<&String>, Option<&String>) {
    let get = |key| annotations.and_then(|annotations| annotations.get(key));
    (
        get(annotations::REVISION),
        get(annotations::RESOURCE_REVISION),
    )
}

/// The projected service account token volume, as Kubernetes itself would mount it.
fn service_account_volume() -> Volume {
    Volume {
        name: SERVICE_ACCOUNT_VOLUME.to_owned(),
        projected: Some(ProjectedVolumeSource {
            default_mode: Some(0o644),
            sources: Some(vec![
                VolumeProjection {
                    service_account_token: Some(ServiceAccountTokenProjection {
                        path: "token".to_owned(),
                        ..ServiceAccountTokenProjection::default()
                    }),
                    ..VolumeProjection::default()
                },
                VolumeProjection {
                    config_map: Some(ConfigMapProjection {
                        name: "kube-root-ca.crt".to_owned(),
                        items: Some(vec![KeyToPath {
                            key: "ca.crt".to_owned(),
                            path: "ca.crt".to_owned(),
                            mode: None,
                        }]),
                        optional: None,
                    }),
                    ..VolumeProjection::default()
                },
                VolumeProjection {
                    downward_api: Some(DownwardAPIProjection {
                        items: Some(vec![DownwardAPIVolumeFile {
                            path: "namespace".to_owned(),
                            field_ref: Some(ObjectFieldSelector {
                                api_version: Some("v1".to_owned()),
                                field_path: "metadata.namespace".to_owned(),
                            }),
                            ..DownwardAPIVolumeFile::default()
                        }]),
                    }),
                    ..VolumeProjection::default()
                },
            ]),
        }),
        ..Volume::default()
    }
}

/// The read-only mount of [`service_account_volume`].
fn service_account_mount() -> VolumeMount {
    VolumeMount {
        read_only: Some(true),
        ..mount(SERVICE_ACCOUNT_VOLUME, SERVICE_ACCOUNT_MOUNT_PATH)
    }
}

/// An exec probe of `script` with Strimzi's delay and timeout (15 s, 5 s) where `options`
/// leaves them unset; the period and thresholds only when set (Kubernetes' defaults, 10 s,
/// 1 and 3, otherwise), as Strimzi writes them.
fn probe(script: &str, options: Option<&ProbeOptions>) -> Probe {
    let options = options.cloned().unwrap_or_default();
    Probe {
        exec: Some(ExecAction {
            command: Some(vec![script.to_owned()]),
        }),
        initial_delay_seconds: Some(options.initial_delay_seconds.unwrap_or(15)),
        timeout_seconds: Some(options.timeout_seconds.unwrap_or(5)),
        period_seconds: options.period_seconds,
        success_threshold: options.success_threshold,
        failure_threshold: options.failure_threshold,
        ..Probe::default()
    }
}

/// A templated volume of node `node_id`: `{nodeId}` and `{nodePodName}` in the Secret or
/// ConfigMap name, their item keys and paths, and the claim name are replaced.
fn templated_volume(volume: &TemplatedVolume, node_id: i32, pod_name: &str) -> Option<Volume> {
    let fill = |text: &mut String| {
        *text = text
            .replace("{nodeId}", &node_id.to_string())
            .replace("{nodePodName}", pod_name);
    };
    let fill_items = |items: &mut Option<Vec<KeyToPath>>| {
        for item in items.iter_mut().flatten() {
            fill(&mut item.key);
            fill(&mut item.path);
        }
    };
    let mut volume = volume.clone();
    if let Some(secret) = volume.secret.as_mut() {
        if let Some(name) = secret.secret_name.as_mut() {
            fill(name);
        }
        fill_items(&mut secret.items);
    }
    if let Some(config_map) = volume.config_map.as_mut() {
        fill(&mut config_map.name);
        fill_items(&mut config_map.items);
    }
    if let Some(claim) = volume.persistent_volume_claim.as_mut() {
        fill(&mut claim.claim_name);
    }
    convert(&volume)
}

impl KafkaCluster {
    /// One StrimziPodSet per pool, holding every pod of the pool.
    pub fn pod_sets(&self, inputs: &PodInputs) -> Vec<StrimziPodSet> {
        self.pod_sets_of(&self.pods(inputs))
    }

    /// The pod of every node of every pool, by name.
    pub fn pods(&self, inputs: &PodInputs) -> BTreeMap<String, Pod> {
        self.pools
            .iter()
            .flat_map(|pool| {
                let template = self.pool_template(pool);
                pool.node_ids.iter().map(move |&node_id| {
                    let name = strimzi_api::naming::kafka_pod(&self.name, &pool.name, node_id);
                    (name, self.pod(pool, &template, node_id, inputs))
                })
            })
            .collect()
    }

    /// One StrimziPodSet per pool, holding the pool's pods of `pods` (made by
    /// [`Self::pods`]).
    pub fn pod_sets_of(&self, pods: &BTreeMap<String, Pod>) -> Vec<StrimziPodSet> {
        self.pools
            .iter()
            .map(|pool| self.pod_set(pool, pods))
            .collect()
    }

    /// The StrimziPodSet of `pool`, with its pods of `pods`.
    fn pod_set(&self, pool: &NodePool, pods: &BTreeMap<String, Pod>) -> StrimziPodSet {
        let template = self.pool_template(pool);
        let pod_set_metadata = metadata(template.pod_set.as_ref());
        let annotations = BTreeMap::from([
            (
                annotations::KAFKA_VERSION.to_owned(),
                self.version.version.clone(),
            ),
            (
                annotations::STORAGE.to_owned(),
                storage_annotation(&pool.storage),
            ),
        ]);
        let pods = pool
            .node_ids
            .iter()
            .filter_map(|&node_id| {
                let name = strimzi_api::naming::kafka_pod(&self.name, &pool.name, node_id);
                pod_to_entry(pods.get(&name)?).ok()
            })
            .collect();
        StrimziPodSet {
            metadata: ObjectMeta {
                name: Some(strimzi_api::naming::pool_pod_set(&self.name, &pool.name)),
                namespace: Some(self.namespace.clone()),
                labels: Some(with_additional_labels(
                    &self.pool_labels(pool),
                    &template_labels(pod_set_metadata),
                )),
                annotations: Some(merged([
                    &annotations,
                    &template_annotations(pod_set_metadata),
                ])),
                owner_references: pool.owner.clone().map(|owner| vec![owner]),
                ..ObjectMeta::default()
            },
            spec: StrimziPodSetSpec {
                selector: LabelSelector {
                    match_labels: Some(self.pool_selector(pool)),
                    ..LabelSelector::default()
                },
                pods,
            },
            status: None,
        }
    }

    /// Whether a node of `pool` needs the init container: brokers with topology-label rack
    /// awareness or a `nodeport` listener.
    fn needs_init_container(&self, pool: &NodePool) -> bool {
        let node_port = self
            .spec
            .listeners
            .iter()
            .any(|listener| listener.r#type == KafkaListenerType::NodePort);
        pool.roles.contains(&ProcessRole::Broker) && (self.uses_topology_label_rack() || node_port)
    }

    /// Whether brokers read their rack from a node label (the default rack type).
    fn uses_topology_label_rack(&self) -> bool {
        self.spec.rack.as_ref().is_some_and(|rack| {
            rack.r#type.unwrap_or(RackType::TopologyLabel) == RackType::TopologyLabel
        })
    }

    /// The node label that names the rack, for topology-label rack awareness.
    fn topology_label_key(&self) -> Option<String> {
        rack::topology_key(self.spec.rack.as_ref()).map(str::to_owned)
    }

    /// A container's security context ([`ModelConfig::container_security_context`]).
    pub(crate) fn container_security_context(
        &self,
        template: Option<&ContainerTemplate>,
    ) -> Option<k8s_openapi::api::core::v1::SecurityContext> {
        self.config.container_security_context(template)
    }

    /// The image pull Secrets of a pod ([`ModelConfig::image_pull_secrets`]).
    pub(crate) fn image_pull_secrets(
        &self,
        pod_template: Option<&strimzi_api::common::PodTemplate>,
    ) -> Option<Vec<LocalObjectReference>> {
        self.config.image_pull_secrets(pod_template)
    }

    /// The image pull policy of `image` ([`ModelConfig::image_pull_policy`]).
    pub(crate) fn image_pull_policy(&self, image: &str) -> String {
        self.config.image_pull_policy(image)
    }

    /// The pod of node `node_id` of `pool`.
    fn pod(
        &self,
        pool: &NodePool,
        template: &PoolTemplate,
        node_id: i32,
        inputs: &PodInputs,
    ) -> Pod {
        let pod_name = strimzi_api::naming::kafka_pod(&self.name, &pool.name, node_id);
        let pod_template = template.pod.as_ref().map(|pod| &pod.pod);
        let is_broker = pool.roles.contains(&ProcessRole::Broker);
        let is_controller = pool.roles.contains(&ProcessRole::Controller);

        let mut pod_labels = self.pool_labels(pool);
        pod_labels.extend([
            (labels::BROKER_ROLE.to_owned(), is_broker.to_string()),
            (
                labels::CONTROLLER_ROLE.to_owned(),
                is_controller.to_string(),
            ),
            (labels::POD_NAME.to_owned(), pod_name.clone()),
            (
                labels::CONTROLLER.to_owned(),
                labels::CONTROLLER_STRIMZI_POD_SET.to_owned(),
            ),
            (
                labels::CONTROLLER_NAME.to_owned(),
                strimzi_api::naming::pool_pod_set(&self.name, &pool.name),
            ),
        ]);
        let pod_metadata = pod_template.and_then(|pod| pod.metadata.as_ref());

        let mut pod_annotations = BTreeMap::from([
            (
                annotations::CLUSTER_CA_CERT_GENERATION.to_owned(),
                inputs.ca_generations.cluster_ca_cert.to_string(),
            ),
            (
                annotations::CLUSTER_CA_KEY_GENERATION.to_owned(),
                inputs.ca_generations.cluster_ca_key.to_string(),
            ),
            (
                annotations::CLIENTS_CA_CERT_GENERATION.to_owned(),
                inputs.ca_generations.clients_ca_cert.to_string(),
            ),
            (
                annotations::KAFKA_VERSION.to_owned(),
                self.version.version.clone(),
            ),
        ]);
        if let Some(hash) = inputs.server_cert_hashes.get(&pod_name) {
            pod_annotations.insert(annotations::SERVER_CERT_HASH.to_owned(), hash.clone());
        }
        if let Some(hash) = inputs.configuration_hashes.get(&pod_name) {
            pod_annotations.insert(annotations::CONFIGURATION_HASH.to_owned(), hash.clone());
        }
        if let Some(thumbprints) = inputs
            .custom_listener_cert_thumbprints
            .as_ref()
            .filter(|_| is_broker)
        {
            pod_annotations.insert(
                annotations::CUSTOM_LISTENER_CERT_THUMBPRINTS.to_owned(),
                thumbprints.clone(),
            );
        }

        let init_containers = self
            .needs_init_container(pool)
            .then(|| vec![self.init_container(pool, template)]);
        let image_pull_secrets = self.image_pull_secrets(pod_template);

        let pod = Pod {
            metadata: ObjectMeta {
                name: Some(pod_name.clone()),
                namespace: Some(self.namespace.clone()),
                labels: Some(with_additional_labels(
                    &pod_labels,
                    &template_labels(pod_metadata),
                )),
                annotations: Some(merged([
                    &pod_annotations,
                    &template_annotations(pod_metadata),
                ])),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                restart_policy: Some("Always".to_owned()),
                hostname: Some(pod_name.clone()),
                subdomain: Some(strimzi_api::naming::brokers_service(&self.name)),
                service_account_name: Some(strimzi_api::naming::kafka_component(&self.name)),
                // The token comes through the projected volume of the pod's own.
                automount_service_account_token: Some(false),
                affinity: self.affinity(pool, template),
                init_containers,
                containers: vec![self.kafka_container(pool, template)],
                volumes: Some(self.volumes(pool, template, node_id, &pod_name)),
                image_pull_secrets,
                security_context: self.pod_security_context(pool, template),
                ..templated_pod_spec(pod_template)
            }),
            status: None,
        };
        with_revisions(pod)
    }

    /// The pod security context: the template's, else `fsGroup: 0` when the pool has
    /// persistent volumes so that the Kafka user can write to them, except on OpenShift,
    /// which gives pods a security context of its own (as Strimzi leaves it to OpenShift).
    fn pod_security_context(
        &self,
        pool: &NodePool,
        template: &PoolTemplate,
    ) -> Option<PodSecurityContext> {
        let from_template = template
            .pod
            .as_ref()
            .and_then(|pod| pod.pod.security_context.clone());
        from_template.or_else(|| {
            let persistent = data_volumes(&pool.storage)
                .iter()
                .any(|volume| matches!(volume.storage, SingleVolumeStorage::PersistentClaim(_)));
            (persistent && !self.config.platform.openshift).then(|| PodSecurityContext {
                fs_group: Some(0),
                ..PodSecurityContext::default()
            })
        })
    }

    /// The template's affinity; brokers with topology-label rack awareness must also run on
    /// nodes that carry the topology label.
    fn affinity(&self, pool: &NodePool, template: &PoolTemplate) -> Option<Affinity> {
        let affinity = template
            .pod
            .as_ref()
            .and_then(|pod| pod.pod.affinity.clone());
        match self.topology_label_key() {
            Some(key) if pool.roles.contains(&ProcessRole::Broker) => {
                Some(rack::with_rack_affinity(affinity, &key))
            }
            _ => affinity,
        }
    }

    /// The volumes of a pod: data volumes, then the service account token, `/tmp`, the
    /// per-node ConfigMap, the ready files, the init volume and the template's volumes.
    fn volumes(
        &self,
        pool: &NodePool,
        template: &PoolTemplate,
        node_id: i32,
        pod_name: &str,
    ) -> Vec<Volume> {
        let pod_template = template.pod.as_ref().map(|pod| &pod.pod);
        let mut volumes: Vec<Volume> = data_volumes(&pool.storage)
            .into_iter()
            .map(|volume| match &volume.storage {
                SingleVolumeStorage::Ephemeral(ephemeral) => {
                    empty_dir(&volume.name, ephemeral.size_limit.clone(), None)
                }
                SingleVolumeStorage::PersistentClaim(_) => Volume {
                    persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                        claim_name: format!("{}-{pod_name}", volume.name),
                        read_only: None,
                    }),
                    name: volume.name,
                    ..Volume::default()
                },
            })
            .collect();
        volumes.push(service_account_volume());
        volumes.push(empty_dir(
            TMP_VOLUME,
            Some(
                pod_template
                    .and_then(|pod| pod.tmp_dir_size_limit.clone())
                    .unwrap_or_else(|| TMP_DEFAULT_SIZE.to_owned()),
            ),
            Some("Memory"),
        ));
        volumes.push(Volume {
            name: CONFIG_VOLUME.to_owned(),
            config_map: Some(ConfigMapVolumeSource {
                name: pod_name.to_owned(),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        });
        volumes.push(empty_dir(
            READY_FILES_VOLUME,
            Some("1Ki".to_owned()),
            Some("Memory"),
        ));
        if self.needs_init_container(pool) {
            volumes.push(rack::init_volume());
        }
        let additional = pod_template.and_then(|pod| pod.volumes.as_ref());
        volumes.extend(additional.into_iter().flatten().filter_map(convert));
        let templated = template
            .pod
            .as_ref()
            .and_then(|pod| pod.templated_volumes.as_ref());
        volumes.extend(
            templated
                .into_iter()
                .flatten()
                .filter_map(|volume| templated_volume(volume, node_id, pod_name)),
        );
        volumes
    }

    /// The Kafka container.
    fn kafka_container(&self, pool: &NodePool, template: &PoolTemplate) -> Container {
        let container_template = template.kafka_container.as_ref();
        let mut mounts: Vec<VolumeMount> = data_volumes(&pool.storage)
            .iter()
            .map(|volume| mount(&volume.name, &volume.mount_path()))
            .collect();
        mounts.extend([
            service_account_mount(),
            mount(TMP_VOLUME, "/tmp"),
            mount(CONFIG_VOLUME, CONFIG_MOUNT_PATH),
            mount(READY_FILES_VOLUME, "/var/opt/kafka"),
        ]);
        if self.needs_init_container(pool) {
            mounts.push(rack::init_mount(INIT_MOUNT_PATH));
        }
        mounts.extend(template_mounts(container_template));
        let image = self.version.image.clone();
        Container {
            name: KAFKA_CONTAINER.to_owned(),
            image_pull_policy: Some(self.image_pull_policy(&image)),
            image: Some(image),
            args: Some(vec!["/opt/kafka/kafka_run.sh".to_owned()]),
            env: Some(self.kafka_env(pool, container_template)),
            ports: Some(self.container_ports(pool)),
            volume_mounts: Some(mounts),
            liveness_probe: Some(probe(
                "/opt/kafka/kafka_liveness.sh",
                self.spec.liveness_probe.as_ref(),
            )),
            readiness_probe: Some(probe(
                "/opt/kafka/kafka_readiness.sh",
                self.spec.readiness_probe.as_ref(),
            )),
            resources: pool.resources.clone(),
            security_context: self.container_security_context(container_template),
            ..Container::default()
        }
    }

    /// The ports of the Kafka container: the agent on every node, the control plane on
    /// controllers, replication and the listeners on brokers, then metrics and JMX.
    fn container_ports(&self, pool: &NodePool) -> Vec<ContainerPort> {
        let mut ports = vec![container_port("tcp-kafkaagent", KAFKA_AGENT_PORT)];
        if pool.roles.contains(&ProcessRole::Controller) {
            ports.push(container_port("tcp-ctrlplane", CONTROL_PLANE_PORT));
        }
        if pool.roles.contains(&ProcessRole::Broker) {
            ports.push(container_port("tcp-replication", REPLICATION_PORT));
            ports.extend(
                self.spec
                    .listeners
                    .iter()
                    .map(|listener| container_port(&listener.port_name(), listener.port)),
            );
        }
        if self.spec.metrics_config.is_some() {
            ports.push(container_port("tcp-prometheus", METRICS_PORT));
        }
        if self.spec.jmx_options.is_some() {
            ports.push(container_port("jmx", JMX_PORT));
        }
        ports
    }

    /// The environment of the Kafka container.
    fn kafka_env(&self, pool: &NodePool, template: Option<&ContainerTemplate>) -> Vec<EnvVar> {
        let jvm = pool.jvm_options.as_ref();
        let jmx_exporter = matches!(
            self.spec.metrics_config,
            Some(MetricsConfig::JmxPrometheusExporter(_))
        );
        let mut vars = vec![
            env("KAFKA_JMX_EXPORTER_ENABLED", jmx_exporter.to_string()),
            env(
                "STRIMZI_KAFKA_GC_LOG_ENABLED",
                jvm.and_then(|jvm| jvm.gc_logging_enabled)
                    .unwrap_or(false)
                    .to_string(),
            ),
            env("KAFKA_CLUSTER_NAME", self.name.clone()),
        ];
        vars.extend(jvm_env(
            jvm,
            pool.resources.as_ref(),
            HeapSizing {
                percentage: DYNAMIC_HEAP_PERCENTAGE,
                max: Some(DYNAMIC_HEAP_MAX),
            },
        ));
        vars.extend(jmx_env(
            self.spec.jmx_options.as_ref(),
            &strimzi_api::naming::kafka_jmx_secret(&self.name),
        ));
        add_shared_and_template_env(&mut vars, &self.config.shared_env, template);
        vars
    }

    /// The init container that writes the rack and the node's external address.
    fn init_container(&self, pool: &NodePool, template: &PoolTemplate) -> Container {
        let container_template = template.init_container.as_ref();
        let mut vars = Vec::new();
        if let Some(key) = self.topology_label_key() {
            vars.push(env("RACK_TOPOLOGY_KEY", key));
        }
        if self
            .spec
            .listeners
            .iter()
            .any(|listener| listener.r#type == KafkaListenerType::NodePort)
        {
            vars.push(env("EXTERNAL_ADDRESS", "TRUE"));
        }
        let image = self
            .spec
            .broker_rack_init_image
            .clone()
            .unwrap_or_else(|| self.config.kafka_init_image.clone());
        rack::InitContainer {
            image_pull_policy: self.image_pull_policy(&image),
            image,
            env: vars,
            shared_env: &self.config.shared_env,
            mounts: vec![service_account_mount(), rack::init_mount(INIT_MOUNT_PATH)],
            resources: pool.resources.clone(),
            security_context: self.container_security_context(container_template),
            template: container_template,
        }
        .container()
    }
}

/// The JMX variables of Strimzi's start scripts for `jmx` (none without it):
/// `STRIMZI_JMX_ENABLED`, and with password authentication the user name and password from
/// `secret`'s `jmx-username` and `jmx-password`.
pub(crate) fn jmx_env(jmx: Option<&KafkaJmxOptions>, secret: &str) -> Vec<EnvVar> {
    let Some(jmx) = jmx else {
        return Vec::new();
    };
    let mut vars = vec![env("STRIMZI_JMX_ENABLED", "true")];
    if matches!(
        jmx.authentication,
        Some(KafkaJmxAuthentication::Password(_))
    ) {
        for (name, key) in [
            ("STRIMZI_JMX_USERNAME", "jmx-username"),
            ("STRIMZI_JMX_PASSWORD", "jmx-password"),
        ] {
            vars.push(EnvVar {
                name: name.to_owned(),
                value: None,
                value_from: Some(EnvVarSource {
                    secret_key_ref: Some(SecretKeySelector {
                        name: secret.to_owned(),
                        key: key.to_owned(),
                        optional: None,
                    }),
                    ..EnvVarSource::default()
                }),
            });
        }
    }
    vars
}

/// `-XX` options that size the heap; they go to `KAFKA_HEAP_OPTS`, not the performance options.
const HEAP_XX_OPTIONS: [&str; 2] = ["MaxRAMPercentage", "InitialRAMPercentage"];
/// `-XX` options that must come before the others.
const PRIORITY_XX_OPTIONS: [&str; 2] = ["UnlockDiagnosticVMOptions", "UnlockExperimentalVMOptions"];

/// How the start script sizes a heap the user left unsized: the share of the container's
/// memory (`STRIMZI_DYNAMIC_HEAP_PERCENTAGE`) and the largest heap it picks
/// (`STRIMZI_DYNAMIC_HEAP_MAX`, none for no bound).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeapSizing {
    /// Percentage of the container memory.
    pub percentage: &'static str,
    /// Largest heap in bytes, if bounded.
    pub max: Option<&'static str>,
}

/// The JVM environment of a Java container from `jvmOptions` as Strimzi's start scripts read
/// it: the heap ([`heap_env`]), the other `-XX` options in `KAFKA_JVM_PERFORMANCE_OPTS`
/// (unlocking options first) and `javaSystemProperties` in `STRIMZI_JAVA_SYSTEM_PROPERTIES`.
pub(crate) fn jvm_env(
    jvm: Option<&JvmOptions>,
    resources: Option<&ResourceRequirements>,
    sizing: HeapSizing,
) -> Vec<EnvVar> {
    let mut vars = heap_env(jvm, resources, sizing);
    let xx = jvm.and_then(|jvm| jvm.xx.as_ref());
    let mut performance: Vec<(&String, &String)> = xx
        .into_iter()
        .flatten()
        .filter(|(key, _)| !HEAP_XX_OPTIONS.contains(&key.as_str()))
        .collect();
    performance
        .sort_by_key(|(key, _)| (!PRIORITY_XX_OPTIONS.contains(&key.as_str()), (*key).clone()));
    if !performance.is_empty() {
        let flags: Vec<String> = performance
            .into_iter()
            .map(|(key, value)| match value.to_lowercase().as_str() {
                "true" => format!("-XX:+{key}"),
                "false" => format!("-XX:-{key}"),
                _ => format!("-XX:{key}={value}"),
            })
            .collect();
        vars.push(env("KAFKA_JVM_PERFORMANCE_OPTS", flags.join(" ")));
    }
    let properties: Vec<String> = jvm
        .and_then(|jvm| jvm.java_system_properties.as_ref())
        .into_iter()
        .flatten()
        .map(|property| {
            format!(
                "-D{}={}",
                property.name.as_deref().unwrap_or_default(),
                property.value.as_deref().unwrap_or_default()
            )
        })
        .collect();
    if !properties.is_empty() {
        vars.push(env("STRIMZI_JAVA_SYSTEM_PROPERTIES", properties.join(" ")));
    }
    vars
}

/// The heap settings: the user's `-Xms`/`-Xmx`/RAM percentages in `KAFKA_HEAP_OPTS`; without
/// a maximum, the start script sizes the heap from the memory request or limit
/// (`STRIMZI_DYNAMIC_HEAP_*`), or it starts at `-Xms128M` when there is none.
fn heap_env(
    jvm: Option<&JvmOptions>,
    resources: Option<&ResourceRequirements>,
    sizing: HeapSizing,
) -> Vec<EnvVar> {
    let xx = jvm.and_then(|jvm| jvm.xx.as_ref());
    let xx_value = |key: &str| xx.and_then(|xx| xx.get(key));
    let mut opts: Vec<String> = Vec::new();
    if let Some(xms) = jvm.and_then(|jvm| jvm.xms.as_ref()) {
        opts.push(format!("-Xms{xms}"));
    }
    if let Some(xmx) = jvm.and_then(|jvm| jvm.xmx.as_ref()) {
        opts.push(format!("-Xmx{xmx}"));
    }
    for key in ["InitialRAMPercentage", "MaxRAMPercentage"] {
        if let Some(value) = xx_value(key) {
            opts.push(format!("-XX:{key}={value}"));
        }
    }
    let mut vars = Vec::new();
    let user_max =
        jvm.is_some_and(|jvm| jvm.xmx.is_some()) || xx_value("MaxRAMPercentage").is_some();
    let user_initial =
        jvm.is_some_and(|jvm| jvm.xms.is_some()) || xx_value("InitialRAMPercentage").is_some();
    if !user_max {
        let has_memory = resources.is_some_and(|resources| {
            [&resources.requests, &resources.limits]
                .into_iter()
                .any(|map| map.as_ref().is_some_and(|map| map.contains_key("memory")))
        });
        if has_memory {
            vars.push(env("STRIMZI_DYNAMIC_HEAP_PERCENTAGE", sizing.percentage));
            if let Some(max) = sizing.max {
                vars.push(env("STRIMZI_DYNAMIC_HEAP_MAX", max));
            }
        } else if !user_initial {
            opts.push("-Xms128M".to_owned());
        }
    }
    if !opts.is_empty() {
        vars.push(env("KAFKA_HEAP_OPTS", opts.join(" ")));
    }
    vars
}
