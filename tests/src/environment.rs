//! The whole test environment: control plane, our CRDs, StorageClasses with a provisioner,
//! addresses for LoadBalancer Services, and either fake nodes in three zones with a local
//! Kafka broker started on first use ([`TestEnv::shared`], [`TestEnv::kafka`]), or real nodes
//! that run pods in a network namespace of the environment's own ([`TestEnv::shared_real`]).
//! One per test binary; each test works in its own namespace.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{
    HostPathVolumeSource, Namespace, Node, ObjectReference, PersistentVolume,
    PersistentVolumeClaim, PersistentVolumeSpec, Service,
};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use serde_json::json;

use crate::control_plane::{ControlPlane, FIELD_MANAGER, KWOK_NODE_LABEL};
use crate::error::TestEnvError;
use crate::kafka::KafkaBroker;
use crate::layout::{Provision, log_dir, provision};
use crate::network::NodeNetwork;
use crate::nodes::RealNodes;
use crate::process::Lifetime;

/// Name of the default StorageClass, served by the environment's provisioner.
pub const STORAGE_CLASS: &str = "standard";
/// Every StorageClass the provisioner serves: the default, and the names examples use for
/// faster and slower disks.
pub const STORAGE_CLASSES: [&str; 3] = [STORAGE_CLASS, "fast-ssd", "standard-hdd"];
pub use crate::nodes::ZONES;
/// Addresses given to LoadBalancer Services: `198.51.100.<n>`, a documentation network (not
/// 192.0.2.0/24, which machines of this kind use for their own interface).
const LOAD_BALANCER_NETWORK: &str = "198.51.100";

/// What runs the pods of an environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nodes {
    /// Three kwok nodes, one per zone: pods become Ready but nothing runs. A local Kafka
    /// broker runs beside the control plane once a test asks for it ([`TestEnv::kafka`]).
    Fake,
    /// This many real nodes (kubelet, containerd, runc) in a network namespace of the
    /// environment's own, which has an address for one more, the standby node, started when
    /// a test asks for it ([`TestEnv::standby_node`]); no local Kafka broker.
    Real(usize),
}

/// A running environment.
#[derive(Debug)]
pub struct TestEnv {
    // Dropped in this order: nodes, control plane, broker, then the network's sweep.
    nodes: Option<RealNodes>,
    control_plane: ControlPlane,
    /// The local broker of an environment with fake nodes, or its start's error, once started.
    kafka: Option<OnceLock<Result<KafkaBroker, TestEnvError>>>,
    network: Option<NodeNetwork>,
    log_dir: PathBuf,
    runtime: tokio::runtime::Runtime,
}

impl TestEnv {
    /// The environment of this test binary with fake nodes, started on first use. A failed
    /// start panics with its one-line reason (which names the log file), failing the test.
    pub fn shared() -> &'static TestEnv {
        static SHARED: OnceLock<TestEnv> = OnceLock::new();
        SHARED.get_or_init(|| start_shared(Nodes::Fake, "shared"))
    }

    /// The environment of this test binary with one real node, started on first use.
    pub fn shared_real() -> &'static TestEnv {
        static SHARED: OnceLock<TestEnv> = OnceLock::new();
        SHARED.get_or_init(|| start_shared(Nodes::Real(1), "shared-real"))
    }

    /// Starts an environment with fake nodes whose logs go to
    /// `target/testenv-logs/<name>-<pid>`.
    pub fn start(lifetime: Lifetime, name: &str) -> Result<TestEnv, TestEnvError> {
        Self::start_with(lifetime, name, Nodes::Fake)
    }

    /// Starts an environment with `nodes` whose logs go to `target/testenv-logs/<name>-<pid>`.
    pub fn start_with(
        lifetime: Lifetime,
        name: &str,
        nodes: Nodes,
    ) -> Result<TestEnv, TestEnvError> {
        // Kubernetes first: its failure then stops the start before anything else is built.
        provision(Provision::Kubernetes)?;
        let log_dir = log_dir(name)?;
        let network = match nodes {
            Nodes::Fake => None,
            Nodes::Real(count) => Some(NodeNetwork::create(count + 1)?),
        };
        // A runtime of the environment's own runs the provisioner for as long as it lives.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|error| TestEnvError::io("tokio runtime", error))?;
        let (control_plane, real_nodes) = runtime.block_on(async {
            let control_plane = ControlPlane::start(&log_dir, lifetime, network.as_ref()).await?;
            let client = control_plane.client().await?;
            install_storage(&client).await?;
            let real_nodes = match &network {
                Some(network) => {
                    Some(RealNodes::start(network, &control_plane, &log_dir, lifetime).await?)
                }
                None => {
                    add_nodes(&client).await?;
                    None
                }
            };
            Ok::<_, TestEnvError>((control_plane, real_nodes))
        })?;
        let client = runtime.block_on(control_plane.client())?;
        // Volumes of real nodes are folders of the environment's own that pods can write.
        let volumes = network
            .as_ref()
            .map(|network| network.dir().join("volumes"));
        runtime.spawn(provision_volumes(client.clone(), volumes));
        runtime.spawn(assign_load_balancer_addresses(client));
        Ok(TestEnv {
            nodes: real_nodes,
            control_plane,
            kafka: (nodes == Nodes::Fake).then(OnceLock::new),
            network,
            log_dir,
            runtime,
        })
    }

    /// A new client with cluster-admin rights, for the caller's runtime.
    pub async fn client(&self) -> Client {
        self.control_plane
            .client()
            .await
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// Creates a namespace of its own for one test, named `<prefix>-<n>`. Tests share the
    /// Kafka broker too, so they should also use this name as a prefix for their topics and
    /// users.
    pub async fn namespace(&self, prefix: &str) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let namespaces: Api<Namespace> = Api::all(self.client().await);
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .unwrap_or_else(|error| panic!("creating namespace {name}: {error}"));
        name
    }

    /// The local Kafka broker (environments with fake nodes only), started by the first call;
    /// calls from other threads meanwhile wait for that start. A failed start panics with its
    /// one-line reason, failing the calling test, and every later call fails the same way
    /// without starting again.
    pub fn kafka(&self) -> &KafkaBroker {
        self.start_kafka()
            .unwrap_or_else(|error| panic!("local Kafka broker: {error}"))
    }

    /// Starts the local Kafka broker unless it was started already, as [`Self::kafka`] does,
    /// returning the start's error instead of panicking. Panics in a real-node environment,
    /// which has no local broker.
    pub fn start_kafka(&self) -> Result<&KafkaBroker, &TestEnvError> {
        let kafka = self.kafka.as_ref().unwrap_or_else(|| {
            panic!("a real-node environment has no local Kafka broker: Kafka runs in its pods")
        });
        kafka
            .get_or_init(|| KafkaBroker::start(&self.log_dir))
            .as_ref()
    }

    /// The local Kafka broker if it has been started (successfully).
    fn started_kafka(&self) -> Option<&KafkaBroker> {
        self.kafka.as_ref()?.get()?.as_ref().ok()
    }

    /// The network namespace of the real nodes, if the environment has any.
    pub fn network(&self) -> Option<&NodeNetwork> {
        self.network.as_ref()
    }

    /// The real nodes, if the environment has any.
    pub fn real_nodes(&self) -> Option<&RealNodes> {
        self.nodes.as_ref()
    }

    /// The name of the standby node of an environment with real nodes, started and Ready (see
    /// [`RealNodes::standby_node`]); an error for an environment with fake nodes.
    pub async fn standby_node(&self) -> Result<String, TestEnvError> {
        match (&self.nodes, &self.network) {
            (Some(nodes), Some(network)) => nodes.standby_node(network, &self.control_plane).await,
            _ => Err(TestEnvError::Start {
                component: "standby node".to_owned(),
                message: "an environment with fake nodes has no standby node".to_owned(),
                log: self.log_dir.clone(),
            }),
        }
    }

    /// The control plane.
    pub fn control_plane(&self) -> &ControlPlane {
        &self.control_plane
    }

    /// The folder with every component's log.
    pub fn log_dir(&self) -> &Path {
        &self.log_dir
    }

    /// Process ids of every component: etcd, the Kubernetes components, kwok, and Kafka once
    /// started or the real nodes' components.
    pub fn pids(&self) -> Vec<u32> {
        let mut pids = self.control_plane.pids();
        pids.extend(self.started_kafka().map(KafkaBroker::pid));
        pids.extend(
            self.nodes
                .iter()
                .flat_map(RealNodes::processes)
                .map(|(_, pid)| pid),
        );
        pids
    }

    /// `KEY=VALUE` lines telling clients how to reach the environment: the Kafka broker's
    /// only once it has been started ([`Self::start_kafka`]).
    pub fn env_file(&self) -> String {
        let mut lines = vec![format!(
            "KUBECONFIG={}",
            self.control_plane.kubeconfig().display()
        )];
        if let Some(network) = &self.network {
            lines.push(format!("NETWORK_NAMESPACE={}", network.name()));
        }
        let Some(kafka) = self.started_kafka() else {
            return lines.join("\n") + "\n";
        };
        for listener in kafka.listeners() {
            lines.push(format!(
                "KAFKA_BOOTSTRAP_SERVERS_{}={}",
                listener.name.to_uppercase(),
                listener.bootstrap
            ));
        }
        lines.push(format!("KAFKA_CA_FILE={}", kafka.ca_file().display()));
        lines.push(format!(
            "KAFKA_CA_KEY_FILE={}",
            kafka.ca_key_file().display()
        ));
        lines.push(format!("KAFKA_SCRAM_USERNAME={}", crate::kafka::ADMIN_USER));
        lines.push(format!(
            "KAFKA_SCRAM_PASSWORD={}",
            crate::kafka::ADMIN_PASSWORD
        ));
        lines.join("\n") + "\n"
    }

    /// The runtime that runs the environment's own tasks.
    pub fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.runtime
    }
}

/// Starts a shared environment on a thread of its own (tests call this from inside their
/// runtime), panicking with the one-line reason if it fails.
fn start_shared(nodes: Nodes, name: &'static str) -> TestEnv {
    std::thread::spawn(move || TestEnv::start_with(Lifetime::Tied, name, nodes))
        .join()
        .unwrap_or_else(|_| panic!("the test environment's start thread panicked"))
        .unwrap_or_else(|error| panic!("test environment: {error}"))
}

async fn install_storage(client: &Client) -> Result<(), TestEnvError> {
    let classes: Api<StorageClass> = Api::all(client.clone());
    for name in STORAGE_CLASSES {
        let default = (name == STORAGE_CLASS).then(|| {
            BTreeMap::from([(
                "storageclass.kubernetes.io/is-default-class".to_owned(),
                "true".to_owned(),
            )])
        });
        let class = StorageClass {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                annotations: default,
                ..ObjectMeta::default()
            },
            provisioner: FIELD_MANAGER.to_owned(),
            allow_volume_expansion: Some(true),
            volume_binding_mode: Some("Immediate".to_owned()),
            ..StorageClass::default()
        };
        classes
            .patch(
                name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&class),
            )
            .await
            .map_err(|error| api_error(&format!("creating StorageClass {name}"), error))?;
    }
    Ok(())
}

/// Adds one fake node per zone for kwok to manage.
async fn add_nodes(client: &Client) -> Result<(), TestEnvError> {
    let nodes: Api<Node> = Api::all(client.clone());
    for zone in ZONES {
        let name = format!("kwok-{zone}");
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {
                    KWOK_NODE_LABEL: "true",
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "topology.kubernetes.io/zone": zone,
                },
                "annotations": {"kwok.x-k8s.io/node": "fake"},
            },
            "status": {
                "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
                "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            },
        }))
        .map_err(|error| api_error("building a fake node", error))?;
        nodes
            .patch(
                &name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&node),
            )
            .await
            .map_err(|error| api_error(&format!("creating node {name}"), error))?;
    }
    Ok(())
}

/// Gives every pending claim of one of [`STORAGE_CLASSES`] a volume of its own, as a cloud
/// provisioner would; the controller manager then binds them. With `root`, each volume is a
/// folder below it that any user may write (as pods run with other user ids).
async fn provision_volumes(client: Client, root: Option<PathBuf>) {
    let claims: Api<PersistentVolumeClaim> = Api::all(client.clone());
    let volumes: Api<PersistentVolume> = Api::all(client);
    let mut events = watcher(claims, watcher::Config::default())
        .applied_objects()
        .boxed();
    while let Some(event) = events.next().await {
        let Ok(claim) = event else { continue };
        let Some(volume) = volume_for(&claim, root.as_deref()) else {
            continue;
        };
        if let Some(path) = volume
            .spec
            .as_ref()
            .and_then(|spec| spec.host_path.as_ref())
            .map(|host_path| PathBuf::from(&host_path.path))
            .filter(|_| root.is_some())
        {
            use std::os::unix::fs::PermissionsExt;
            // A folder that cannot be made fails the pod's mount, which reports it.
            let _ = std::fs::create_dir_all(&path).and_then(|()| {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777))
            });
        }
        // Already provisioned claims conflict; that is fine.
        let _ = volumes.create(&PostParams::default(), &volume).await;
    }
}

/// The volume for `claim`, if it is an unbound claim of one of [`STORAGE_CLASSES`]: a folder
/// below `root`, or below `/var/testenv` (never created) for fake nodes.
fn volume_for(claim: &PersistentVolumeClaim, root: Option<&Path>) -> Option<PersistentVolume> {
    let spec = claim.spec.as_ref()?;
    let class = spec.storage_class_name.as_deref()?;
    if !STORAGE_CLASSES.contains(&class) || spec.volume_name.is_some() {
        return None;
    }
    let namespace = claim.namespace()?;
    let name = claim.name_any();
    let size = spec
        .resources
        .as_ref()?
        .requests
        .as_ref()?
        .get("storage")?
        .clone();
    Some(PersistentVolume {
        metadata: ObjectMeta {
            name: Some(format!("pv-{namespace}-{name}")),
            ..ObjectMeta::default()
        },
        spec: Some(PersistentVolumeSpec {
            capacity: Some(BTreeMap::from([("storage".to_owned(), size)])),
            access_modes: spec.access_modes.clone(),
            storage_class_name: Some(class.to_owned()),
            persistent_volume_reclaim_policy: Some("Delete".to_owned()),
            host_path: Some(HostPathVolumeSource {
                path: root
                    .unwrap_or(Path::new("/var/testenv"))
                    .join(&namespace)
                    .join(&name)
                    .display()
                    .to_string(),
                type_: None,
            }),
            claim_ref: Some(ObjectReference {
                namespace: Some(namespace),
                name: Some(name),
                uid: claim.uid(),
                ..ObjectReference::default()
            }),
            ..PersistentVolumeSpec::default()
        }),
        ..PersistentVolume::default()
    })
}

/// Gives every LoadBalancer Service without an address one of its own, as a cloud's load
/// balancer controller would: `198.51.100.1`, `198.51.100.2`, ... in the order they are seen.
async fn assign_load_balancer_addresses(client: Client) {
    let services: Api<Service> = Api::all(client.clone());
    let mut events = watcher(services, watcher::Config::default())
        .applied_objects()
        .boxed();
    let mut next = 1_u32;
    while let Some(event) = events.next().await {
        let Ok(service) = event else { continue };
        let is_load_balancer =
            service.spec.as_ref().and_then(|spec| spec.type_.as_deref()) == Some("LoadBalancer");
        let assigned = service
            .status
            .as_ref()
            .and_then(|status| status.load_balancer.as_ref())
            .and_then(|balancer| balancer.ingress.as_ref())
            .is_some_and(|ingress| !ingress.is_empty());
        let Some(namespace) = service.namespace() else {
            continue;
        };
        if !is_load_balancer || assigned {
            continue;
        }
        let address = format!("{LOAD_BALANCER_NETWORK}.{}", next % 254 + 1);
        next += 1;
        let status = json!({"status": {"loadBalancer": {"ingress": [{"ip": address}]}}});
        let api: Api<Service> = Api::namespaced(client.clone(), &namespace);
        // A Service deleted meanwhile needs no address.
        let _ = api
            .patch_status(
                &service.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&status),
            )
            .await;
    }
}

fn api_error(what: &str, error: impl std::fmt::Display) -> TestEnvError {
    TestEnvError::Start {
        component: "kube-apiserver".to_owned(),
        message: format!("{what}: {error}"),
        log: PathBuf::from("target/testenv-logs"),
    }
}
