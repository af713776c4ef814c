//! Real Kubernetes nodes: per node a containerd (with runc and the CNI bridge plugin) and a
//! kubelet, plus one kube-proxy and one CoreDNS for the environment, all inside its network
//! namespace (see [`crate::network`]). Pods run for real, from images built locally by
//! `tests/testenv/images/build-images.sh` and imported into each node's containerd.
//!
//! The settings that must be exactly so on this machine kind (cgroup v1 with a cgroup root of
//! our own, no negative `oom_score_adj`, no image garbage collection since images cannot be
//! pulled again, conntrack limits left alone) are explained in `tests/testenv/README.md`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::json;

use crate::control_plane::{ControlPlane, FIELD_MANAGER, MAX_NODES, binary, node_name};
use crate::error::TestEnvError;
use crate::layout::{Provision, cache_dir, parse_versions, provision, write};
use crate::measure::rss_mib;
use crate::network::{CLUSTER_DNS_IP, CNI_BIN_DIR, NodeNetwork, POD_NETWORK};
use crate::process::{Lifetime, ManagedProcess, ProcessSpec};
use crate::registry::{LocalRegistry, containerd_hosts};

/// Zones of the fake nodes, one node each, named as a cloud region's zones.
pub const ZONES: [&str; 3] = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];
/// How long a node may take to register and report Ready.
const NODE_READY_TIMEOUT: Duration = Duration::from_secs(120);
/// Kernel settings kubelet changes for the whole machine; recorded before it starts and put
/// back by the sweep.
const KUBELET_SYSCTLS: [&str; 3] = [
    "kernel.panic",
    "kernel.panic_on_oops",
    "vm.overcommit_memory",
];
/// Host paths kubelet, containerd or the CNI plugins use whatever their settings say; the
/// sweep removes those that did not exist before.
const FIXED_HOST_PATHS: [&str; 8] = [
    "/var/lib/kubelet",
    "/var/log/containers",
    "/var/log/pods",
    "/var/lib/cni",
    "/run/containerd",
    "/var/lib/containerd",
    "/opt/containerd",
    "/run/nri",
];

/// Pins of the images `build-images.sh` builds.
const IMAGE_VERSIONS: &str = include_str!("../testenv/images/versions.env");

/// The pinned value `key` of the images, e.g. `KAFKA_IMAGE`.
pub fn image_version(key: &str) -> &'static str {
    parse_versions(IMAGE_VERSIONS)
        .get(key)
        .copied()
        .unwrap_or("unknown")
}

/// The folder of built images, `<cache>/images`.
pub fn images_dir() -> PathBuf {
    cache_dir().join("images")
}

/// The running nodes of an environment; every process stops when dropped (the network's
/// sweep removes what they leave behind). The network has an address for one node more than
/// start with it: the standby node, started when a test first asks for it
/// ([`RealNodes::standby_node`]).
#[derive(Debug)]
pub struct RealNodes {
    // Dropped in this order: cluster services, then the standby node (its kubelet, then its
    // containerd), then kubelets, then containerds, then the registry they pull from.
    coredns: ManagedProcess,
    kube_proxy: ManagedProcess,
    standby: tokio::sync::Mutex<Option<(ManagedProcess, ManagedProcess)>>,
    kubelets: Vec<ManagedProcess>,
    containerds: Vec<ManagedProcess>,
    registry: LocalRegistry,
    node_start: NodeStart,
    /// The containerd socket of each node started with the environment.
    sockets: Vec<PathBuf>,
    started: Duration,
}

/// What starting a node takes: the binaries, the built images, where logs go and how long
/// the processes live.
#[derive(Debug)]
struct NodeStart {
    containerd_bin: PathBuf,
    kubelet_bin: PathBuf,
    images: Vec<PathBuf>,
    log_dir: PathBuf,
    lifetime: Lifetime,
}

impl NodeStart {
    /// Starts node `node` of `network`: its containerd, with every built image imported, and
    /// its kubelet (not waited for). Its containerd and kubelet.
    fn start(
        &self,
        network: &NodeNetwork,
        node: usize,
        control_plane: &ControlPlane,
    ) -> Result<(ManagedProcess, ManagedProcess), TestEnvError> {
        let begun = Instant::now();
        let dirs = NodeDirs::create(network, node, control_plane)?;
        let containerd = ManagedProcess::start(
            &ProcessSpec::new(
                &format!("containerd-{node}"),
                &self.containerd_bin,
                &self.log_dir,
            )
            .launched_by(network.daemon_prefix())
            .arg(format!("--config={}", dirs.containerd_config.display()))
            .env("PATH", tool_path(&self.containerd_bin)),
            self.lifetime,
        )?;
        containerd.wait_ready(Duration::from_secs(60), || {
            ctr(&self.containerd_bin, &dirs.socket, &["version"]).map(|_| ())
        })?;
        for image in &self.images {
            ctr(
                &self.containerd_bin,
                &dirs.socket,
                &[
                    "-n",
                    "k8s.io",
                    "images",
                    "import",
                    &image.display().to_string(),
                ],
            )
            .map_err(|message| containerd.not_ready(begun.elapsed(), message))?;
        }
        let kubeconfig =
            control_plane.kubeconfig_for(&format!("system:node:{}", node_name(node)))?;
        let kubelet = ManagedProcess::start(
            &ProcessSpec::new(&format!("kubelet-{node}"), &self.kubelet_bin, &self.log_dir)
                .launched_by(network.daemon_prefix())
                .args([
                    format!("--config={}", dirs.kubelet_config.display()),
                    format!("--kubeconfig={}", kubeconfig.display()),
                    format!("--hostname-override={}", node_name(node)),
                    format!("--node-ip={}", network.node_ip(node)),
                    format!("--root-dir={}", dirs.kubelet_root.display()),
                    format!(
                        "--container-runtime-endpoint=unix://{}",
                        dirs.socket.display()
                    ),
                    format!("--node-labels={}", node_labels(node)),
                ])
                .env("PATH", tool_path(&self.containerd_bin)),
            self.lifetime,
        )?;
        Ok((containerd, kubelet))
    }
}

impl RealNodes {
    /// Starts one node per address of `network` but the last (the standby node's), imports
    /// the built images into each, starts kube-proxy and CoreDNS, and waits until every node
    /// is Ready.
    pub async fn start(
        network: &NodeNetwork,
        control_plane: &ControlPlane,
        log_dir: &Path,
        lifetime: Lifetime,
    ) -> Result<Self, TestEnvError> {
        let begun = Instant::now();
        if network.nodes() > MAX_NODES {
            return Err(TestEnvError::Start {
                component: "real nodes".to_owned(),
                message: format!(
                    "at most {MAX_NODES} real nodes with the standby one, not {}",
                    network.nodes()
                ),
                log: log_dir.to_path_buf(),
            });
        }
        let kubernetes = |name| binary("kubernetes", "KUBERNETES_VERSION", name);
        let node_start = NodeStart {
            containerd_bin: binary("containerd", "CONTAINERD_VERSION", "containerd")?,
            kubelet_bin: kubernetes("kubelet")?,
            images: built_images()?,
            log_dir: log_dir.to_path_buf(),
            lifetime,
        };
        let kube_proxy_bin = kubernetes("kube-proxy")?;
        let coredns_bin = binary("coredns", "COREDNS_VERSION", "coredns")?;
        prepare_host(network)?;
        let registry = LocalRegistry::start(network, log_dir, lifetime)?;
        let client = control_plane.client().await?;
        install_cluster_dns(&client, network).await?;

        let mut containerds = Vec::new();
        let mut kubelets = Vec::new();
        for node in 0..network.nodes().saturating_sub(1) {
            let (containerd, kubelet) = node_start.start(network, node, control_plane)?;
            containerds.push(containerd);
            kubelets.push(kubelet);
        }

        let proxy_config = network.dir().join("kube-proxy.yaml");
        write(
            &proxy_config,
            &kube_proxy_config(&control_plane.kubeconfig_for("system:kube-proxy")?),
        )?;
        let kube_proxy = ManagedProcess::start(
            &ProcessSpec::new("kube-proxy", kube_proxy_bin, log_dir)
                .launched_by(network.daemon_prefix())
                .args([
                    format!("--config={}", proxy_config.display()),
                    format!("--hostname-override={}", node_name(0)),
                ]),
            lifetime,
        )?;
        let corefile = network.dir().join("Corefile");
        write(
            &corefile,
            &corefile_text(network, &control_plane.kubeconfig_for("admin")?),
        )?;
        let coredns = ManagedProcess::start(
            &ProcessSpec::new("coredns", coredns_bin, log_dir)
                .launched_by(network.daemon_prefix())
                .args(["-conf".to_owned(), corefile.display().to_string()]),
            lifetime,
        )?;

        for (node, kubelet) in kubelets.iter().enumerate() {
            wait_node_ready(&client, &node_name(node), kubelet).await?;
        }
        let sockets = (0..containerds.len())
            .map(|node| containerd_socket(network, node))
            .collect();
        Ok(Self {
            coredns,
            kube_proxy,
            standby: tokio::sync::Mutex::new(None),
            kubelets,
            containerds,
            registry,
            sockets,
            node_start,
            started: begun.elapsed(),
        })
    }

    /// The standby node's name, started (its images imported) and waited for until Ready the
    /// first time a test asks; schedulable, as any node registers. Pods go to it only once
    /// it runs, so the other tests' scenarios run on the nodes they were measured on until a
    /// test needs a second node (a drain).
    pub async fn standby_node(
        &self,
        network: &NodeNetwork,
        control_plane: &ControlPlane,
    ) -> Result<String, TestEnvError> {
        let node = network.nodes() - 1;
        let name = node_name(node);
        let mut standby = self.standby.lock().await;
        if standby.is_none() {
            let (containerd, kubelet) = self.node_start.start(network, node, control_plane)?;
            let client = control_plane.client().await?;
            let waited = wait_node_ready(&client, &name, &kubelet).await;
            *standby = Some((kubelet, containerd));
            waited?;
        }
        Ok(name)
    }

    /// Names of the nodes started with the environment (not the standby node).
    pub fn names(&self) -> Vec<String> {
        (0..self.kubelets.len()).map(node_name).collect()
    }

    /// The `ctr` program of the nodes' containerd, and the socket of each node started with
    /// the environment: with `CONTAINERD_ADDRESS` set to one, `ctr` works on that node as a
    /// user's `ctr` on a node of theirs does.
    pub fn ctr(&self) -> (PathBuf, &[PathBuf]) {
        (
            self.node_start.containerd_bin.with_file_name("ctr"),
            &self.sockets,
        )
    }

    /// How long the nodes took from start to Ready.
    pub fn start_time(&self) -> Duration {
        self.started
    }

    /// The resident memory of the pod with `uid`, in MiB: the sum over the processes in its
    /// cgroups (0 when it runs nothing here).
    pub fn pod_rss_mib(&self, uid: &str) -> f64 {
        let root = Path::new("/sys/fs/cgroup/memory")
            .join(format!("strimzi-testenv-{}", std::process::id()));
        let mut pending = vec![root];
        let mut total = 0.0;
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let in_pod = dir.ancestors().any(|ancestor| {
                ancestor
                    .file_name()
                    .is_some_and(|name| name.to_string_lossy() == format!("pod{uid}"))
            });
            if in_pod {
                let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                total += procs
                    .lines()
                    .filter_map(|pid| pid.parse().ok())
                    .map(|pid| rss_mib(pid, "VmRSS"))
                    .sum::<f64>();
            }
            pending.extend(
                entries
                    .filter_map(Result::ok)
                    .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
                    .map(|entry| entry.path()),
            );
        }
        total
    }

    /// Process ids and names of every node component.
    pub fn processes(&self) -> Vec<(String, u32)> {
        let mut processes = Vec::new();
        for (node, (containerd, kubelet)) in self.containerds.iter().zip(&self.kubelets).enumerate()
        {
            processes.push((format!("containerd-{node}"), containerd.pid()));
            processes.push((format!("kubelet-{node}"), kubelet.pid()));
        }
        // Unless the standby node is starting right now.
        if let Ok(standby) = self.standby.try_lock()
            && let Some((kubelet, containerd)) = standby.as_ref()
        {
            let node = self.kubelets.len();
            processes.push((format!("containerd-{node}"), containerd.pid()));
            processes.push((format!("kubelet-{node}"), kubelet.pid()));
        }
        processes.push(("kube-proxy".to_owned(), self.kube_proxy.pid()));
        processes.push(("coredns".to_owned(), self.coredns.pid()));
        processes.push(("registry".to_owned(), self.registry.pid()));
        processes
    }

    /// The environment's container registry, which every node pulls from.
    pub fn registry(&self) -> &LocalRegistry {
        &self.registry
    }
}

/// The folders and files of one node, all below the environment's folder.
/// Where node `node`'s containerd listens.
fn containerd_socket(network: &NodeNetwork, node: usize) -> PathBuf {
    network
        .dir()
        .join(format!("node-{node}/containerd/containerd.sock"))
}

struct NodeDirs {
    containerd_config: PathBuf,
    kubelet_config: PathBuf,
    kubelet_root: PathBuf,
    socket: PathBuf,
}

impl NodeDirs {
    fn create(
        network: &NodeNetwork,
        node: usize,
        control_plane: &ControlPlane,
    ) -> Result<Self, TestEnvError> {
        let root = network.dir().join(format!("node-{node}"));
        for sub in [
            "containerd/root",
            "containerd/state",
            "containerd/opt",
            "runc",
            "cni/net.d",
            "cni/networks",
            "kubelet",
            "pod-logs",
            "volume-plugins",
        ] {
            let path = root.join(sub);
            std::fs::create_dir_all(&path).map_err(|error| TestEnvError::io(&path, error))?;
        }
        let dirs = Self {
            containerd_config: root.join("containerd.toml"),
            kubelet_config: root.join("kubelet.yaml"),
            kubelet_root: root.join("kubelet"),
            socket: containerd_socket(network, node),
        };
        let registry_hosts = containerd_hosts(network, &root)?;
        write(
            &dirs.containerd_config,
            &containerd_config(&root, &dirs.socket, &registry_hosts),
        )?;
        write(
            &root.join("cni/net.d/10-testenv.conflist"),
            &cni_config(&root, node),
        )?;
        let cgroup_root = format!("strimzi-testenv-{}-{node}", std::process::id());
        create_cgroup_root(&cgroup_root)?;
        write(
            &dirs.kubelet_config,
            &kubelet_config(network, node, &root, &cgroup_root, control_plane),
        )?;
        Ok(dirs)
    }
}

/// The archives built by `tests/testenv/images/build-images.sh`, built first if missing.
fn built_images() -> Result<Vec<PathBuf>, TestEnvError> {
    provision(Provision::Images)?;
    let dir = images_dir();
    let missing = || TestEnvError::MissingTool {
        program: format!("container images in {}", dir.display()),
        install: "bash tests/testenv/images/build-images.sh".to_owned(),
    };
    let mut images: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|_| missing())?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.to_string_lossy().ends_with(".oci.tar"))
        .collect();
    images.sort();
    let has = |prefix: &str| {
        images.iter().any(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(prefix))
        })
    };
    if has("pause") && has("kafka") {
        Ok(images)
    } else {
        Err(missing())
    }
}

/// Records the kernel settings kubelet changes, the fixed host paths that do not exist yet,
/// and the cgroup root's name, all for the sweep.
fn prepare_host(network: &NodeNetwork) -> Result<(), TestEnvError> {
    let mut settings = String::new();
    for key in KUBELET_SYSCTLS {
        let file = PathBuf::from("/proc/sys").join(key.replace('.', "/"));
        let value =
            std::fs::read_to_string(&file).map_err(|error| TestEnvError::io(&file, error))?;
        settings.push_str(&format!("{key}={}\n", value.trim()));
    }
    network.record("sysctl", &settings)?;
    for path in FIXED_HOST_PATHS {
        if !Path::new(path).exists() {
            network.record_created(Path::new(path))?;
        }
    }
    network.record(
        "cgroup-root",
        &format!("strimzi-testenv-{}", std::process::id()),
    )?;
    Ok(())
}

/// The CPU weight (`cpu.shares`) of the nodes' cgroup root: that of ten busy host threads, so
/// that the pods get the cores they ask for while host builds and tests run beside them
/// (each host process weighs 1024, the default of a group).
pub const NODE_CPU_SHARES: u64 = 10 * 1024;

/// Creates the cgroup root of one node in every cgroup v1 hierarchy. kubelet expects it to
/// exist; a cpuset group starts with no CPUs or memory nodes, so it gets its parent's.
fn create_cgroup_root(name: &str) -> Result<(), TestEnvError> {
    let Ok(hierarchies) = std::fs::read_dir("/sys/fs/cgroup") else {
        return Ok(());
    };
    // The sweep removes `<hierarchy>/strimzi-testenv-<pid>*`: the node roots sit inside a
    // folder named after the process.
    let (parent_name, _) = name.rsplit_once('-').unwrap_or((name, ""));
    for hierarchy in hierarchies.filter_map(Result::ok).map(|entry| entry.path()) {
        if !hierarchy.join("cgroup.procs").is_file()
            || hierarchy.join("cgroup.controllers").exists()
        {
            continue;
        }
        let parent = hierarchy.join(parent_name);
        let group = parent.join(name);
        std::fs::create_dir_all(&group).map_err(|error| TestEnvError::io(&group, error))?;
        // Every host process sits in the root group with the weight of one group: left at
        // the default, all the pods together would get the CPU of a single busy host
        // thread, and a compiling machine starves their JVMs (failed probes, timeouts).
        let shares = parent.join("cpu.shares");
        if shares.is_file() {
            std::fs::write(&shares, NODE_CPU_SHARES.to_string())
                .map_err(|error| TestEnvError::io(&shares, error))?;
        }
        for file in ["cpuset.cpus", "cpuset.mems"] {
            for (from, to) in [(&hierarchy, &parent), (&parent, &group)] {
                if let Ok(value) = std::fs::read_to_string(from.join(file)) {
                    std::fs::write(to.join(file), value.trim())
                        .map_err(|error| TestEnvError::io(to.join(file), error))?;
                }
            }
        }
    }
    Ok(())
}

/// `PATH` for containerd and kubelet: containerd's own folder (for its shim) first.
fn tool_path(containerd: &Path) -> String {
    let own = containerd
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    format!(
        "{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        own.display()
    )
}

/// Runs `ctr` (next to `containerd`) against `socket`; the error is its output.
fn ctr(containerd: &Path, socket: &Path, args: &[&str]) -> Result<String, String> {
    let ctr = containerd.with_file_name("ctr");
    let output = Command::new(&ctr)
        .arg(format!("--address={}", socket.display()))
        .args(args)
        .output()
        .map_err(|error| format!("{}: {error}", ctr.display()))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "ctr {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

fn node_labels(node: usize) -> String {
    let zones = ZONES;
    format!(
        "topology.kubernetes.io/zone={},strimzi.io/testenv-real-node=true",
        zones[node % zones.len()]
    )
}

fn containerd_config(root: &Path, socket: &Path, registry_hosts: &Path) -> String {
    let root = root.display();
    format!(
        r#"version = 3
root = "{root}/containerd/root"
state = "{root}/containerd/state"

[grpc]
  address = "{socket}"

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = "{registry_hosts}"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "{pause}"
  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    # This machine kind lacks CAP_SYS_RESOURCE: runc cannot set a negative oom_score_adj.
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "runc"
          Root = "{root}/runc"
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["{CNI_BIN_DIR}"]
      conf_dir = "{root}/cni/net.d"
  [plugins.'io.containerd.internal.v1.opt']
    path = "{root}/containerd/opt"
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
"#,
        socket = socket.display(),
        registry_hosts = registry_hosts.display(),
        pause = image_version("PAUSE_IMAGE"),
    )
}

fn cni_config(root: &Path, node: usize) -> String {
    json!({
        "cniVersion": "1.0.0",
        "name": "testenv",
        "plugins": [
            {
                "type": "bridge",
                "bridge": format!("cni{node}"),
                "isGateway": true,
                "ipMasq": false,
                "hairpinMode": true,
                "ipam": {
                    "type": "host-local",
                    "dataDir": root.join("cni/networks"),
                    "ranges": [[{"subnet": format!("10.244.{node}.0/24")}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": true}},
        ],
    })
    .to_string()
}

fn kubelet_config(
    network: &NodeNetwork,
    node: usize,
    root: &Path,
    cgroup_root: &str,
    control_plane: &ControlPlane,
) -> String {
    let parent = cgroup_root
        .rsplit_once('-')
        .map_or(cgroup_root, |(parent, _)| parent);
    let ca = control_plane.dir().join("ca.crt");
    json!({
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": network.node_ip(node).to_string(),
        "port": 10250,
        "readOnlyPort": 0,
        "healthzBindAddress": network.node_ip(node).to_string(),
        "healthzPort": 10248,
        "authentication": {
            "anonymous": {"enabled": false},
            "webhook": {"enabled": false},
            "x509": {"clientCAFile": ca},
        },
        "authorization": {"mode": "AlwaysAllow"},
        // cgroup v1 host: kubelet refuses it unless told, and places pods below a root of
        // the environment's own.
        "failCgroupV1": false,
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": format!("/{parent}/{cgroup_root}"),
        "clusterDNS": [CLUSTER_DNS_IP.to_string()],
        "clusterDomain": "cluster.local",
        // No DNS server of the host's in pods: names outside the cluster do not resolve.
        "resolvConf": "",
        // Images cannot be pulled again: never collect them; and a busy disk must not evict.
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {
            "memory.available": "1%",
            "nodefs.available": "1%",
            "nodefs.inodesFree": "1%",
            "imagefs.available": "1%",
        },
        "podLogsDir": root.join("pod-logs"),
        "volumePluginDir": root.join("volume-plugins"),
        "serializeImagePulls": false,
        "failSwapOn": false,
        "maxPods": 110,
        "syncFrequency": "10s",
        "nodeStatusReportFrequency": "10s",
        "shutdownGracePeriod": "0s",
    })
    .to_string()
}

fn kube_proxy_config(kubeconfig: &Path) -> String {
    json!({
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": kubeconfig},
        "mode": "iptables",
        "clusterCIDR": POD_NETWORK,
        // nf_conntrack_max is read-only outside the initial network namespace.
        "conntrack": {"maxPerCore": 0, "min": 0},
        "metricsBindAddress": "127.0.0.1:10249",
        "healthzBindAddress": "127.0.0.1:10256",
    })
    .to_string()
}

/// CoreDNS serving the cluster's names only: nothing is forwarded, so no query leaves.
fn corefile_text(network: &NodeNetwork, kubeconfig: &Path) -> String {
    format!(
        ".:53 {{
    bind {ip}
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {{
        kubeconfig {kubeconfig} testenv
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }}
    cache 5
}}
",
        ip = network.node_ip(0),
        kubeconfig = kubeconfig.display()
    )
}

/// The `kube-dns` Service at the cluster DNS address, with CoreDNS (on the first node's
/// address) as its endpoint.
async fn install_cluster_dns(client: &Client, network: &NodeNetwork) -> Result<(), TestEnvError> {
    let ports = json!([
        {"name": "dns", "port": 53, "protocol": "UDP"},
        {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
    ]);
    let service: Service = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {"k8s-app": "kube-dns"}},
        "spec": {"clusterIP": CLUSTER_DNS_IP.to_string(), "ports": ports},
    }))
    .map_err(|error| api_error("building the kube-dns Service", error))?;
    let slice: EndpointSlice = serde_json::from_value(json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "kube-dns-testenv",
            "namespace": "kube-system",
            "labels": {
                "kubernetes.io/service-name": "kube-dns",
                "endpointslice.kubernetes.io/managed-by": FIELD_MANAGER,
            },
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": [network.node_ip(0).to_string()], "conditions": {"ready": true}}],
        "ports": ports,
    }))
    .map_err(|error| api_error("building the kube-dns EndpointSlice", error))?;
    let apply = PatchParams::apply(FIELD_MANAGER).force();
    Api::<Service>::namespaced(client.clone(), "kube-system")
        .patch("kube-dns", &apply, &Patch::Apply(&service))
        .await
        .map_err(|error| api_error("applying the kube-dns Service", error))?;
    Api::<EndpointSlice>::namespaced(client.clone(), "kube-system")
        .patch("kube-dns-testenv", &apply, &Patch::Apply(&slice))
        .await
        .map_err(|error| api_error("applying the kube-dns EndpointSlice", error))?;
    Ok(())
}

async fn wait_node_ready(
    client: &Client,
    name: &str,
    kubelet: &ManagedProcess,
) -> Result<(), TestEnvError> {
    let nodes: Api<Node> = Api::all(client.clone());
    let started = Instant::now();
    let mut last = "not registered".to_owned();
    while started.elapsed() < NODE_READY_TIMEOUT {
        if let Some(error) = kubelet.exited_early(started.elapsed()) {
            return Err(error);
        }
        match nodes.get_opt(name).await {
            Ok(Some(node)) => {
                let ready = node
                    .status
                    .as_ref()
                    .and_then(|status| status.conditions.as_ref())
                    .and_then(|conditions| conditions.iter().find(|c| c.type_ == "Ready"));
                match ready {
                    Some(condition) if condition.status == "True" => return Ok(()),
                    Some(condition) => {
                        last = format!(
                            "node {} not Ready: {}",
                            node.name_any(),
                            condition.message.clone().unwrap_or_default()
                        );
                    }
                    None => last = format!("node {name} has no Ready condition yet"),
                }
            }
            Ok(None) => last = format!("node {name} not registered"),
            Err(error) => last = error.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Err(kubelet.not_ready(started.elapsed(), last))
}

fn api_error(what: &str, error: impl std::fmt::Display) -> TestEnvError {
    TestEnvError::Start {
        component: "real nodes".to_owned(),
        message: format!("{what}: {error}"),
        log: PathBuf::from("target/testenv-logs"),
    }
}
