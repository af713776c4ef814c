//! `kubectl strimzi plan`: what the cluster operator would do with a changed Kafka (or its
//! node pools), computed offline from what the cluster has now, with the operator's own code
//! and settings:
//!
//! 1. the proposed resources: the live Kafka with the file's spec (or `--set` changes), the
//!    live node pools with the file's;
//! 2. the operator's settings, from its Deployment's environment;
//! 3. the CA step in memory (`certificate-manager`, as the operator runs it), the model
//!    (`cluster-model`'s `resolve` and `desired::build`, node certificates issued or reused in
//!    memory): what would be refused, the warnings;
//! 4. the desired objects compared with the live ones ([`predict::object_changes`]), the pods'
//!    restarts and reloads ([`predict::restarts`]: the rolling step's own decisions) and the
//!    options set on running brokers ([`predict::live_changes`]).
//!
//! Nothing is written; Secrets are read (the CA and node certificates decide restarts) and
//! their data never printed.

pub mod predict;
pub mod render;
pub mod request;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod, Secret, Service};
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::core::NamespaceResourceScope;
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::Value;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_api::{labels, naming};
use strimzi_certificate_manager::authority::{self, CaAction, CaKind, CaSettings, ReconciledCa};
use strimzi_certificate_manager::leaf::IssueContext;
use strimzi_certificate_manager::maintenance::MaintenanceWindows;
use strimzi_cluster_model::model::config::ExternalConfiguration;
use strimzi_cluster_model::model::desired::{self, BuildInputs};
use strimzi_cluster_model::model::listeners::ObservedListeners;
use strimzi_cluster_model::model::{self, KafkaCluster, ModelInput};
use strimzi_cluster_model::quorum;
use strimzi_cluster_model::rolling::RollClock;
use strimzi_cluster_operator::config::ClusterOperatorConfig;
use time::OffsetDateTime;

pub use predict::Plan;
pub use render::render;

use crate::connection::Cluster;
use crate::error::PluginError;
use crate::options::OperatorLocation;
use predict::{Note, Running};

/// What `plan` was asked.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    /// `-f`: a file with the changed Kafka and/or node pools.
    pub file: Option<PathBuf>,
    /// The Kafka `--set` changes.
    pub kafka: Option<String>,
    /// `--set` changes.
    pub set: Vec<String>,
    /// Where the cluster operator runs.
    pub operator: OperatorLocation,
}

/// The proposed Kafka and node pools, with the live ones.
struct Resources {
    name: String,
    live_kafka: Option<Kafka>,
    live_pools: Vec<KafkaNodePool>,
    kafka: Kafka,
    pools: Vec<KafkaNodePool>,
}

/// The resources `request` proposes, read against the live ones.
async fn proposed(cluster: &Cluster, request: &PlanRequest) -> Result<Resources, PluginError> {
    let file = match &request.file {
        Some(path) => Some(request::read_file(path)?),
        None => None,
    };
    let name = match (&file, &request.kafka) {
        (Some(file), _) => file.kafka_name()?,
        (None, Some(name)) => name.clone(),
        (None, None) => {
            return Err(PluginError::Input(
                "plan needs -f FILE or a Kafka name with --set".to_owned(),
            ));
        }
    };
    let live_kafka: Option<Kafka> = cluster.get_opt(&name).await?;
    let live_pools: Vec<KafkaNodePool> =
        cluster.list(&format!("{}={name}", labels::CLUSTER)).await?;
    let mut document = match (&file, &live_kafka) {
        (Some(file), _) if file.kafka.is_some() => file.kafka.clone().unwrap_or_default(),
        (_, Some(live)) => serde_json::to_value(live)
            .map_err(|error| PluginError::Input(format!("the live Kafka {name}: {error}")))?,
        (_, None) => {
            return Err(PluginError::NotFound {
                kind: "Kafka".to_owned(),
                name,
                namespace: cluster.namespace.clone(),
            });
        }
    };
    for change in &request.set {
        request::set(&mut document, change)?;
    }
    let mut kafka = request::proposed_kafka(live_kafka.as_ref(), &document)?;
    kafka.metadata.namespace = Some(cluster.namespace.clone());
    let pool_documents = file.map(|file| file.pools).unwrap_or_default();
    let mut pools = request::proposed_pools(&live_pools, &pool_documents)?;
    for pool in &mut pools {
        pool.metadata.namespace = Some(cluster.namespace.clone());
    }
    Ok(Resources {
        name,
        live_kafka,
        live_pools,
        kafka,
        pools,
    })
}

/// Computes the plan of `request` on `cluster`.
pub async fn plan(cluster: &Cluster, request: &PlanRequest) -> Result<Plan, PluginError> {
    let resources = proposed(cluster, request).await?;
    let deployment = crate::operator::find(cluster, &request.operator).await?;
    let config = crate::operator::configuration(&deployment)?;
    let mut plan = Plan {
        namespace: cluster.namespace.clone(),
        kafka: resources.name.clone(),
        ..Plan::default()
    };
    let now = OffsetDateTime::now_utc();
    let window_open = match maintenance_window_open(&resources.kafka, now) {
        Ok(open) => open,
        Err(refused) => return Ok(refused_plan(plan, refused)),
    };
    let cas = match certificate_authorities(cluster, &resources, &config, now, window_open).await? {
        Ok(cas) => cas,
        Err(refused) => return Ok(refused_plan(plan, refused)),
    };
    plan.certificate_authorities = cas.iter().filter_map(describe_ca_action).collect();
    let cluster_id = cluster_id(&resources);
    let mut kafka_cluster = match model::resolve(&ModelInput {
        kafka: &resources.kafka,
        pools: &resources.pools,
        cluster_id: &cluster_id,
        metadata_version_in_use: None,
        config: &config.model,
    }) {
        Ok(kafka_cluster) => kafka_cluster,
        Err(error) => {
            return Ok(refused_plan(plan, refusal(error.reason(), &error)));
        }
    };
    plan.warnings = kafka_cluster
        .all_warnings()
        .into_iter()
        .map(|warning| Note {
            reason: warning.reason,
            message: warning.message,
        })
        .collect();
    let live = read_live(cluster, &kafka_cluster, &config).await?;
    let dynamic_requested = quorum::dynamic_quorum_requested(&resources.kafka);
    match predict::quorum_outlook(&kafka_cluster, dynamic_requested, &live.running) {
        Ok(None) => {}
        Ok(Some(voters)) => {
            let desired: BTreeSet<i32> = kafka_cluster
                .controllers()
                .map(|node| node.node_id)
                .collect();
            let changing = voters != desired;
            kafka_cluster.quorum_voters = Some(voters);
            if changing {
                plan.unknown.push(
                "the voters of the dynamic KRaft quorum: the operator reads them from Kafka; each new controller becomes a voter once it has caught up, each removed controller leaves the voters before its pod goes, one at a time, a removal that would leave no caught-up majority refused (QuorumWouldBeLost); changed voter lists restart nothing".to_owned(),
                );
            }
        }
        Err(refused) => return Ok(refused_plan(plan, refused)),
    }
    let observed = ObservedListeners {
        services: typed(&live.running, "Service"),
        ingresses: typed(&live.running, "Ingress"),
        routes: Vec::new(),
    };
    let addresses = kafka_cluster.listener_addresses(&observed);
    if !addresses.pending.is_empty() {
        plan.unknown.push(format!(
            "the certificates, configuration and restarts of the brokers: Kubernetes assigns the addresses of listener(s) {} only once their Services (or Routes) exist",
            addresses.pending.join(", ")
        ));
        return Ok(plan);
    }
    let [cluster_ca, clients_ca] = cas;
    let trust_pending =
        desired::cluster_ca_trust_pending(&cluster_ca.authority, live.running.pods.values());
    let context = IssueContext {
        now,
        window_open,
        ca_action: &cluster_ca.action,
        trust_pending,
    };
    let requests = desired::certificate_requests(&kafka_cluster, &addresses, &live.secrets);
    let operator_request =
        desired::cluster_operator_certificate_request(&kafka_cluster, &live.secrets);
    let issued = desired::issue_certificates(&cluster_ca.authority, &requests, &context).and_then(
        |issued| {
            desired::issue_certificate(&cluster_ca.authority, &operator_request, &context)
                .map(|(_, operator)| (issued, operator))
        },
    );
    let (issued, operator_certificate) = match issued {
        Ok(issued) => issued,
        Err(error) => {
            return Ok(refused_plan(plan, refusal(error.reason(), &error)));
        }
    };
    let custom_secrets: Vec<Secret> = kafka_cluster
        .custom_certificate_secret_names()
        .iter()
        .filter_map(|name| live.secrets.get(name).cloned())
        .collect();
    let built = kafka_cluster
        .custom_listener_certificates(&custom_secrets)
        .map_err(desired::BuildError::from)
        .and_then(|custom| {
            let jmx = live
                .secrets
                .get(&naming::kafka_jmx_secret(&kafka_cluster.name));
            desired::build(
                &kafka_cluster,
                &BuildInputs {
                    observed: &observed,
                    cluster_ca: &cluster_ca.authority,
                    clients_ca: &clients_ca.authority,
                    node_certificates: &issued,
                    cluster_operator_certificate: &operator_certificate,
                    external: &live.external,
                    jmx_secret: jmx,
                    custom_certificates: &custom,
                },
            )
        });
    let desired = match built {
        Ok(desired) => desired,
        Err(error) => {
            return Ok(refused_plan(plan, refusal(error.reason(), &error)));
        }
    };
    let mut running = live.running;
    complete_live_objects(cluster, &desired.manifests(), &mut running).await;
    let (objects, unknown) = predict::object_changes(&desired, &running);
    plan.objects = objects;
    plan.unknown.extend(unknown);
    let pods: BTreeSet<&String> = running.pods.keys().collect();
    plan.nodes_added = desired
        .pods
        .keys()
        .filter(|pod| !pods.contains(pod))
        .cloned()
        .collect();
    plan.nodes_removed = running
        .pods
        .keys()
        .filter(|pod| !desired.pods.contains_key(*pod))
        .cloned()
        .collect();
    let clock = RollClock {
        now,
        renewal_days: cluster_ca.authority.settings().renewal_days,
        window_open,
    };
    (plan.restarts, plan.reloads) = predict::restarts(
        &kafka_cluster,
        &desired,
        &running,
        clock,
        cluster_ca.authority.trusted_certificates().len(),
        config.reload_certificates,
    );
    let before = live_model(&resources, &cluster_id, &config)
        .map(|live| predict::dynamic_options(&live))
        .unwrap_or_default();
    plan.live_changes = predict::live_changes(&before, &predict::dynamic_options(&kafka_cluster));
    if plan
        .restarts
        .iter()
        .filter(|restart| restart.roles.contains("controller"))
        .count()
        > 1
    {
        plan.unknown.push(
            "which controller is active: the operator restarts it last of the controllers (shown in node-ID order)".to_owned(),
        );
    }
    if !plan.nodes_removed.is_empty() {
        plan.unknown.push(
            "whether the removed brokers still hold partition replicas: the operator refuses to remove brokers that do".to_owned(),
        );
    }
    Ok(plan)
}

/// `plan` ending with `refused`.
fn refused_plan(mut plan: Plan, refused: Note) -> Plan {
    plan.refused = Some(refused);
    plan
}

/// The refusal of an error with a stable `reason`.
fn refusal(reason: &str, error: &dyn std::fmt::Display) -> Note {
    Note {
        reason: reason.to_owned(),
        message: error.to_string(),
    }
}

/// Whether a maintenance window is open now (always without windows); a window that does
/// not parse is refused as the operator refuses it.
fn maintenance_window_open(kafka: &Kafka, now: OffsetDateTime) -> Result<bool, Note> {
    let windows = kafka
        .spec
        .maintenance_time_windows
        .clone()
        .unwrap_or_default();
    if windows.is_empty() {
        return Ok(true);
    }
    MaintenanceWindows::parse(&windows)
        .map(|parsed| parsed.contains(now))
        .map_err(|error| refusal(error.reason(), &error))
}

/// The cluster ID the operator would use: the Kafka's, else a node pool's, else a new one.
fn cluster_id(resources: &Resources) -> String {
    resources
        .live_kafka
        .as_ref()
        .and_then(|kafka| kafka.status.as_ref()?.cluster_id.clone())
        .or_else(|| {
            resources
                .live_pools
                .iter()
                .find_map(|pool| pool.status.as_ref()?.cluster_id.clone())
        })
        .unwrap_or_else(|| "new-cluster-id".to_owned())
}

/// The model of the live Kafka and pools, when there is a live Kafka and it resolves.
fn live_model(
    resources: &Resources,
    cluster_id: &str,
    config: &ClusterOperatorConfig,
) -> Option<KafkaCluster> {
    model::resolve(&ModelInput {
        kafka: resources.live_kafka.as_ref()?,
        pools: &resources.live_pools,
        cluster_id,
        metadata_version_in_use: None,
        config: &config.model,
    })
    .ok()
}

/// Both CAs as the operator's CA step would leave them (in memory: nothing is written), or
/// why it would refuse.
async fn certificate_authorities(
    cluster: &Cluster,
    resources: &Resources,
    config: &ClusterOperatorConfig,
    now: OffsetDateTime,
    window_open: bool,
) -> Result<Result<[ReconciledCa; 2], Note>, PluginError> {
    let mut reconciled = Vec::new();
    for (kind, spec) in [
        (CaKind::Cluster, resources.kafka.spec.cluster_ca.as_ref()),
        (CaKind::Clients, resources.kafka.spec.clients_ca.as_ref()),
    ] {
        let mut settings = CaSettings::from_spec(spec);
        settings.pkcs12 = config.pkcs12;
        let cert: Option<Secret> = cluster
            .get_opt(&kind.cert_secret_name(&resources.name))
            .await?;
        let key: Option<Secret> = cluster
            .get_opt(&kind.key_secret_name(&resources.name))
            .await?;
        match authority::reconcile(
            kind,
            &resources.name,
            &settings,
            cert.as_ref(),
            key.as_ref(),
            now,
            window_open,
        ) {
            Ok(ca) => reconciled.push(ca),
            Err(error) => {
                return Ok(Err(refusal(error.reason(), &error)));
            }
        }
    }
    let [cluster_ca, clients_ca]: [ReconciledCa; 2] = reconciled
        .try_into()
        .map_err(|_| PluginError::Input("two CAs expected".to_owned()))?;
    Ok(Ok([cluster_ca, clients_ca]))
}

/// What the CA step would do to `ca`, when it does something.
fn describe_ca_action(ca: &ReconciledCa) -> Option<String> {
    let kind = ca.authority.kind();
    match &ca.action {
        CaAction::Keep => None,
        CaAction::Create => Some(format!("the {kind} would be created")),
        CaAction::Postponed(trigger) => Some(format!(
            "the {kind} is due for renewal ({trigger}), postponed to the next maintenance window"
        )),
        CaAction::RenewCertificate(trigger) => Some(format!(
            "the {kind} certificate would be renewed: {trigger}"
        )),
        CaAction::ReplaceKey(trigger) => Some(format!(
            "the {kind} key and certificate would be replaced: {trigger}"
        )),
    }
}

/// What was read of the live cluster.
struct Live {
    running: Running,
    /// Every Secret read, by name (the component's, the operator's certificate, custom
    /// listener certificates).
    secrets: BTreeMap<String, Secret>,
    external: ExternalConfiguration,
}

/// The kinds the operator's cleanup pass deletes from, listed by the component's labels.
const PRUNED_KINDS: [&str; 7] = [
    "Service",
    "Ingress",
    "Secret",
    "ConfigMap",
    "NetworkPolicy",
    "PodDisruptionBudget",
    "StrimziPodSet",
];

/// Reads what the plan compares with: the component's objects of every kind the objects step
/// writes, its pods, the Secrets the model reads, and the external logging and metrics.
async fn read_live(
    cluster: &Cluster,
    kafka_cluster: &KafkaCluster,
    config: &ClusterOperatorConfig,
) -> Result<Live, PluginError> {
    let selector = kafka_cluster.component_labels().selector_string();
    let mut running = Running::default();
    listed::<Service>(cluster, &selector, &mut running).await?;
    listed::<Ingress>(cluster, &selector, &mut running).await?;
    let secrets: Vec<Secret> = listed::<Secret>(cluster, &selector, &mut running).await?;
    let config_maps: Vec<ConfigMap> = listed::<ConfigMap>(cluster, &selector, &mut running).await?;
    listed::<NetworkPolicy>(cluster, &selector, &mut running).await?;
    listed::<PodDisruptionBudget>(cluster, &selector, &mut running).await?;
    listed::<StrimziPodSet>(cluster, &selector, &mut running).await?;
    listed::<PersistentVolumeClaim>(cluster, &selector, &mut running).await?;
    running.pruned_kinds = PRUNED_KINDS
        .iter()
        .filter(|kind| {
            **kind != "PodDisruptionBudget" || config.model.pod_disruption_budget_generation
        })
        .map(|kind| (*kind).to_owned())
        .collect();
    running.pods = cluster
        .list::<Pod>(&selector)
        .await?
        .into_iter()
        .map(|pod| (pod.name_any(), pod))
        .collect();
    running.server_configs = config_maps
        .iter()
        .filter_map(|map| {
            let text = map.data.as_ref()?.get("server.config")?;
            Some((map.name_any(), text.clone()))
        })
        .collect();
    let mut by_name: BTreeMap<String, Secret> = secrets
        .into_iter()
        .map(|secret| (secret.name_any(), secret))
        .collect();
    let mut wanted = kafka_cluster.custom_certificate_secret_names();
    wanted.push(naming::cluster_operator_certs_secret(&kafka_cluster.name));
    for name in wanted {
        if !by_name.contains_key(&name)
            && let Some(secret) = cluster.get_opt::<Secret>(&name).await?
        {
            by_name.insert(name, secret);
        }
    }
    let external = external_configuration(cluster, kafka_cluster).await?;
    Ok(Live {
        running,
        secrets: by_name,
        external,
    })
}

/// Lists the `K`s of `selector` into `running`'s objects and returns them.
async fn listed<K>(
    cluster: &Cluster,
    selector: &str,
    running: &mut Running,
) -> Result<Vec<K>, PluginError>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + DeserializeOwned
        + serde::Serialize
        + Clone
        + std::fmt::Debug,
{
    let objects: Vec<K> = cluster.list(selector).await?;
    for object in &objects {
        let value = serde_json::to_value(object).unwrap_or_default();
        running
            .objects
            .insert((K::kind(&()).into_owned(), object.name_any()), value);
    }
    Ok(objects)
}

/// The objects of `kind` in `running`, as `K`.
fn typed<K: DeserializeOwned>(running: &Running, kind: &str) -> Vec<K> {
    running
        .objects
        .iter()
        .filter(|((listed, _), _)| listed == kind)
        .filter_map(|(_, value)| serde_json::from_value(value.clone()).ok())
        .collect()
}

/// Reads by name each desired object `manifests` holds that the lists did not find (objects
/// not labelled for the component: the ServiceAccount, Role, RoleBinding, trust bundle...);
/// what cannot be read is recorded as such.
async fn complete_live_objects(cluster: &Cluster, manifests: &[Value], running: &mut Running) {
    for manifest in manifests {
        let kind = manifest
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let api_version = manifest
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name = manifest
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let key = (kind.to_owned(), name.to_owned());
        if running.objects.contains_key(&key) {
            continue;
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
        let namespaced = manifest.pointer("/metadata/namespace").is_some();
        let api: Api<DynamicObject> = if namespaced {
            Api::namespaced_with(cluster.client.clone(), &cluster.namespace, &resource)
        } else {
            Api::all_with(cluster.client.clone(), &resource)
        };
        match api.get_opt(name).await {
            Ok(Some(object)) => {
                running
                    .objects
                    .insert(key, serde_json::to_value(object).unwrap_or_default());
            }
            Ok(None) => {}
            Err(error) => {
                let scope = namespaced.then_some(cluster.namespace.as_str());
                let plural = if group.is_empty() {
                    resource.plural.clone()
                } else {
                    format!("{}.{group}", resource.plural)
                };
                let why = PluginError::from_api("get", &plural, scope, error);
                running.unreadable.insert(key, why.to_string());
            }
        }
    }
}

/// The external logging and metrics ConfigMap values the model reads.
async fn external_configuration(
    cluster: &Cluster,
    kafka_cluster: &KafkaCluster,
) -> Result<ExternalConfiguration, PluginError> {
    let sources = kafka_cluster.external_configuration_sources();
    Ok(ExternalConfiguration {
        logging: config_map_value(cluster, sources.logging).await?,
        metrics: config_map_value(cluster, sources.metrics).await?,
    })
}

/// The value of the ConfigMap key `reference` names; `None` when the ConfigMap or key is
/// missing.
async fn config_map_value(
    cluster: &Cluster,
    reference: Option<&strimzi_api::common::ExternalConfigurationReference>,
) -> Result<Option<String>, PluginError> {
    let Some(selector) = reference.and_then(|reference| reference.config_map_key_ref.as_ref())
    else {
        return Ok(None);
    };
    Ok(cluster
        .get_opt::<ConfigMap>(&selector.name)
        .await?
        .and_then(|map| map.data?.get(&selector.key).cloned()))
}
