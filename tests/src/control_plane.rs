//! A real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver (RBAC, token and
//! service-account authentication), kube-controller-manager, kube-scheduler and kwok, which
//! plays the kubelet for fake nodes so that pods become Ready without running anything.
//!
//! With real nodes, every component runs inside the environment's network namespace (see
//! [`crate::network`]): the API server advertises the first node's address, so pods reach it
//! through the `kubernetes` Service, and authorizes kubelets with the Node authorizer. Two
//! `socat` processes joined by a unix socket bridge `127.0.0.1:<port>` on the host to the
//! same address inside, so the one kubeconfig works on both sides.
//! Our CRDs are applied, and Established, before the controller manager starts: its garbage
//! collector reads the API's resource types once at start and then only every 30 s, and deletes
//! the children of a custom resource (by their owner references) only for types it knows.
//! The binaries are built by `tests/testenv/install.sh`; the flags are explained in
//! `tests/testenv/README.md`.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config, ResourceExt};

use crate::certs::{TestCa, key_pair_pem};
use crate::error::TestEnvError;
use crate::layout::{
    Provision, cache_dir, free_port, parse_versions, provision, scratch_dir, testenv_file, write,
};
use crate::network::{
    API_SERVICE_IP, KWOK_NODE_IP, KWOK_POD_NETWORK, NodeNetwork, SERVICE_NETWORK,
    blackhole_kwok_network,
};
use crate::process::{Lifetime, ManagedProcess, ProcessSpec};

/// At most this many real nodes (each has an identity in the API server's token file).
pub const MAX_NODES: usize = 8;

/// The name of real node `index` (its identity is `system:node:<name>`); zone labels follow
/// [`crate::nodes::ZONES`].
pub fn node_name(index: usize) -> String {
    format!("testenv-node-{index}")
}

/// Field manager of everything the environment applies.
pub const FIELD_MANAGER: &str = "strimzi-testenv";

const VERSIONS: &str = include_str!("../testenv/versions.env");
/// How long a control-plane component may take to answer as ready: over two minutes
/// happened while the machine ran the real-node lane's Kafka nodes (load average 55 on two
/// cores, CI of 2026-11-30).
const READY_TIMEOUT: Duration = Duration::from_secs(300);
/// How long each of our CRDs may take to become Established.
const CRD_TIMEOUT: Duration = Duration::from_secs(60);
/// The bearer token of the `admin` user (group `system:masters`); the environment is
/// reachable from this machine only.
const ADMIN_TOKEN: &str = "strimzi-testenv-admin-token";

/// The pinned version of a component, e.g. `KUBERNETES_VERSION`.
fn version(key: &str) -> &'static str {
    parse_versions(VERSIONS)
        .get(key)
        .copied()
        .unwrap_or("unknown")
}

/// `<cache>/<component>-<version>/bin/<binary>`, built first if missing.
pub fn binary(component: &str, version_key: &str, binary: &str) -> Result<PathBuf, TestEnvError> {
    provision(Provision::Kubernetes)?;
    let path = cache_dir()
        .join(format!("{component}-{}", version(version_key)))
        .join("bin")
        .join(binary);
    if path.is_file() {
        Ok(path)
    } else {
        Err(TestEnvError::MissingTool {
            program: path.display().to_string(),
            install: "bash tests/testenv/install.sh".to_owned(),
        })
    }
}

/// A running control plane; every component stops when it is dropped.
#[derive(Debug)]
pub struct ControlPlane {
    // Dropped in reverse start order: kwok first, etcd last.
    kwok: ManagedProcess,
    scheduler: ManagedProcess,
    controller_manager: ManagedProcess,
    /// The host side of the loopback bridge, then the namespace side (real nodes only).
    bridge: Vec<ManagedProcess>,
    apiserver: ManagedProcess,
    /// How the API server was started, for [`ControlPlane::api_server_replica`].
    apiserver_spec: ProcessSpec,
    etcd: ManagedProcess,
    kubeconfig: PathBuf,
    server: String,
    dir: tempfile::TempDir,
}

impl ControlPlane {
    /// Starts every component, inside `network` if given, and waits until the API server is
    /// ready and the controller manager works (the `default` ServiceAccount exists). Our CRDs
    /// are Established before the controller manager starts, so that its garbage collector
    /// deletes the children of our custom resources from the start.
    pub async fn start(
        log_dir: &Path,
        lifetime: Lifetime,
        network: Option<&NodeNetwork>,
    ) -> Result<Self, TestEnvError> {
        let kubernetes = |name| binary("kubernetes", "KUBERNETES_VERSION", name);
        let (apiserver_bin, kcm_bin, scheduler_bin) = (
            kubernetes("kube-apiserver")?,
            kubernetes("kube-controller-manager")?,
            kubernetes("kube-scheduler")?,
        );
        let etcd_bin = binary("etcd", "ETCD_VERSION", "etcd")?;
        let kwok_bin = binary("kwok", "KWOK_VERSION", "kwok")?;

        // With real nodes, inside the nodes' folder, which the sweep always removes.
        let dir = match network {
            Some(network) => tempfile::Builder::new()
                .prefix("control-plane-")
                .tempdir_in(network.dir())
                .map_err(|error| TestEnvError::io(network.dir(), error))?,
            None => scratch_dir("k8s")?,
        };
        if network.is_none() {
            blackhole_kwok_network()?;
        }
        let files = Files::write(dir.path(), network)?;
        let inside = |spec: ProcessSpec| match network {
            Some(network) => spec.launched_by(network.daemon_prefix()),
            None => spec,
        };

        let etcd_client = free_port()?;
        let etcd_peer = free_port()?;
        let etcd = ManagedProcess::start(
            &inside(ProcessSpec::new("etcd", etcd_bin, log_dir)).args([
                "--name=testenv".to_owned(),
                format!("--data-dir={}", dir.path().join("etcd").display()),
                format!("--listen-client-urls=http://127.0.0.1:{etcd_client}"),
                format!("--advertise-client-urls=http://127.0.0.1:{etcd_client}"),
                format!("--listen-peer-urls=http://127.0.0.1:{etcd_peer}"),
                format!("--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer}"),
                format!("--initial-cluster=testenv=http://127.0.0.1:{etcd_peer}"),
                "--unsafe-no-fsync".to_owned(),
                "--log-level=warn".to_owned(),
            ]),
            lifetime,
        )?;
        wait_for_port(&etcd, etcd_client, network).await?;

        let apiserver_port = free_port()?;
        let network_flags = match network {
            // Pods reach the API server through the `kubernetes` Service, whose endpoint is
            // the advertised address; kubelets are authorized by the Node authorizer.
            Some(network) => vec![
                "--bind-address=0.0.0.0".to_owned(),
                format!("--advertise-address={}", network.node_ip(0)),
                "--authorization-mode=Node,RBAC".to_owned(),
                "--enable-admission-plugins=NodeRestriction".to_owned(),
                // Node names do not resolve (there is no DNS server outside).
                "--kubelet-preferred-address-types=InternalIP".to_owned(),
                format!(
                    "--kubelet-client-certificate={}",
                    files.kubelet_client_cert.display()
                ),
                format!(
                    "--kubelet-client-key={}",
                    files.kubelet_client_key.display()
                ),
            ],
            None => vec![
                "--bind-address=127.0.0.1".to_owned(),
                "--advertise-address=127.0.0.1".to_owned(),
                // The endpoint reconciler refuses loopback addresses; nothing needs it here.
                "--endpoint-reconciler-type=none".to_owned(),
                "--authorization-mode=RBAC".to_owned(),
            ],
        };
        let apiserver_spec = inside(ProcessSpec::new("kube-apiserver", apiserver_bin, log_dir))
            .args(network_flags)
            .args([
                format!("--etcd-servers=http://127.0.0.1:{etcd_client}"),
                format!("--secure-port={apiserver_port}"),
                format!("--tls-cert-file={}", files.serving_cert.display()),
                format!("--tls-private-key-file={}", files.serving_key.display()),
                format!("--token-auth-file={}", files.tokens.display()),
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_owned(),
                format!(
                    "--service-account-key-file={}",
                    files.service_account_public_key.display()
                ),
                format!(
                    "--service-account-signing-key-file={}",
                    files.service_account_key.display()
                ),
                format!("--service-cluster-ip-range={SERVICE_NETWORK}"),
                "--allow-privileged=true".to_owned(),
                "--profiling=false".to_owned(),
            ]);
        let apiserver = ManagedProcess::start(&apiserver_spec, lifetime)?;
        let bridge = match network {
            Some(network) => {
                loopback_bridge(network, apiserver_port, dir.path(), log_dir, lifetime)?
            }
            None => Vec::new(),
        };
        let server = format!("https://127.0.0.1:{apiserver_port}");
        let kubeconfig = dir.path().join("kubeconfig");
        write(
            &kubeconfig,
            &kubeconfig_yaml(&server, &files.ca, ADMIN_TOKEN),
        )?;
        let client = client_for(&kubeconfig).await?;
        wait_until(&apiserver, || async {
            client
                .request_text(http_get("/readyz").map_err(|error| error.to_string())?)
                .await
                .map(|_| ())
                .map_err(|error| error.to_string())
        })
        .await?;
        install_crds(&client, &apiserver).await?;

        let kubeconfig_flag = format!("--kubeconfig={}", kubeconfig.display());
        let controller_manager = ManagedProcess::start(
            &inside(ProcessSpec::new(
                "kube-controller-manager",
                kcm_bin,
                log_dir,
            ))
            .arg(&kubeconfig_flag)
            .args([
                "--bind-address=127.0.0.1".to_owned(),
                format!("--secure-port={}", free_port()?),
                "--leader-elect=false".to_owned(),
                "--use-service-account-credentials=false".to_owned(),
                format!(
                    "--service-account-private-key-file={}",
                    files.service_account_key.display()
                ),
                format!("--root-ca-file={}", files.ca.display()),
                "--controllers=*".to_owned(),
                "--profiling=false".to_owned(),
            ]),
            lifetime,
        )?;
        let scheduler = ManagedProcess::start(
            &inside(ProcessSpec::new("kube-scheduler", scheduler_bin, log_dir))
                .arg(&kubeconfig_flag)
                .args([
                    "--bind-address=127.0.0.1".to_owned(),
                    format!("--secure-port={}", free_port()?),
                    "--leader-elect=false".to_owned(),
                    "--profiling=false".to_owned(),
                ]),
            lifetime,
        )?;
        let kwok = ManagedProcess::start(
            &inside(ProcessSpec::new("kwok", kwok_bin, log_dir))
                .arg(&kubeconfig_flag)
                .args([
                    format!("--config={}", testenv_file("kwok-stages.yaml").display()),
                    "--manage-all-nodes=false".to_owned(),
                    format!("--manage-nodes-with-label-selector={KWOK_NODE_LABEL}=true"),
                    format!("--server-address=127.0.0.1:{}", free_port()?),
                    // In a network no packet leaves the machine for (see KWOK_BLACKHOLE).
                    format!("--cidr={KWOK_POD_NETWORK}"),
                    format!("--node-ip={KWOK_NODE_IP}"),
                    // With kwok's default of 0 the node flaps between Ready and NotReady.
                    "--node-lease-duration-seconds=40".to_owned(),
                ])
                // kwok keeps state under $HOME/.kwok.
                .env("HOME", dir.path()),
            lifetime,
        )?;
        wait_until(&controller_manager, || async {
            let accounts: kube::Api<k8s_openapi::api::core::v1::ServiceAccount> =
                kube::Api::namespaced(client.clone(), "default");
            match accounts.get_opt("default").await {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err("no default ServiceAccount yet".to_owned()),
                Err(error) => Err(error.to_string()),
            }
        })
        .await?;
        for process in [&scheduler, &kwok] {
            if let Some(error) = process.exited_early(Duration::ZERO) {
                return Err(error);
            }
        }
        Ok(Self {
            kwok,
            scheduler,
            controller_manager,
            bridge,
            apiserver,
            apiserver_spec,
            etcd,
            kubeconfig,
            server,
            dir,
        })
    }

    /// A second API server on the same etcd, started like the first (inside the nodes'
    /// network, if any) on a port of its own, for one client to use through
    /// [`ApiServerReplica::kubeconfig`]: stopping it is a real API server outage for that
    /// client alone, while the other components and tests keep using the first. It leaves
    /// the `kubernetes` Service's endpoints to the first.
    pub fn api_server_replica(&self, name: &str) -> Result<ApiServerReplica, TestEnvError> {
        let port = free_port()?;
        let mut spec = self.apiserver_spec.clone();
        spec.name = format!("kube-apiserver-{name}");
        spec.log = spec.log.with_file_name(format!("{}.log", spec.name));
        spec.args.retain(|arg| {
            let arg = arg.to_string_lossy();
            !arg.starts_with("--secure-port=") && !arg.starts_with("--endpoint-reconciler-type=")
        });
        spec.args.push(format!("--secure-port={port}").into());
        spec.args.push("--endpoint-reconciler-type=none".into());
        let kubeconfig = self.dir.path().join(format!("kubeconfig-replica-{name}"));
        write(
            &kubeconfig,
            &kubeconfig_yaml(
                &format!("https://127.0.0.1:{port}"),
                &self.dir.path().join("ca.crt"),
                ADMIN_TOKEN,
            ),
        )?;
        let replica = ApiServerReplica {
            process: std::sync::Mutex::new(None),
            spec,
            kubeconfig,
        };
        replica.start()?;
        Ok(replica)
    }

    /// A kubeconfig for `user`, written next to the admin's: `admin`, `system:kube-proxy`, or
    /// the kubelet identity `system:node:<node>` of a real node.
    pub fn kubeconfig_for(&self, user: &str) -> Result<PathBuf, TestEnvError> {
        let token = if user == "admin" {
            ADMIN_TOKEN.to_owned()
        } else {
            identity_token(user)
        };
        let path = self
            .dir
            .path()
            .join(format!("kubeconfig-{}", user.replace(':', "-")));
        write(
            &path,
            &kubeconfig_yaml(&self.server, &self.dir.path().join("ca.crt"), &token),
        )?;
        Ok(path)
    }

    /// A client with cluster-admin rights.
    pub async fn client(&self) -> Result<Client, TestEnvError> {
        client_for(&self.kubeconfig).await
    }

    /// The admin kubeconfig file.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The API server's URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The folder holding certificates, keys and etcd data.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Process ids of every component.
    pub fn pids(&self) -> Vec<u32> {
        [
            &self.etcd,
            &self.apiserver,
            &self.controller_manager,
            &self.scheduler,
            &self.kwok,
        ]
        .into_iter()
        .chain(&self.bridge)
        .map(ManagedProcess::pid)
        .collect()
    }
}

/// A second API server of a [`ControlPlane`] ([`ControlPlane::api_server_replica`]), stopped
/// when dropped.
#[derive(Debug)]
pub struct ApiServerReplica {
    spec: ProcessSpec,
    process: std::sync::Mutex<Option<ManagedProcess>>,
    kubeconfig: PathBuf,
}

impl ApiServerReplica {
    /// A kubeconfig with cluster-admin rights on this API server alone. It is reachable only
    /// where the first one listens (inside the nodes' network, if any).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Starts the API server again (it serves once it has read its state from etcd, a few
    /// seconds later; its clients retry meanwhile).
    pub fn start(&self) -> Result<(), TestEnvError> {
        let mut process = self
            .process
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if process.is_none() {
            *process = Some(ManagedProcess::start(&self.spec, Lifetime::Tied)?);
        }
        Ok(())
    }

    /// Stops the API server as an administrator would (SIGTERM; it closes its connections),
    /// and waits until it has exited.
    pub fn stop(&self) {
        let stopped = self
            .process
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(process) = stopped {
            process.stop();
        }
    }
}

/// Applies our CRDs with server-side apply and waits until each is Established; a failure
/// names the API server's log.
async fn install_crds(client: &Client, apiserver: &ManagedProcess) -> Result<(), TestEnvError> {
    let failed = |what: &str, error: &dyn std::fmt::Display| TestEnvError::Start {
        component: "kube-apiserver".to_owned(),
        message: format!("{what}: {error}"),
        log: apiserver.log().to_path_buf(),
    };
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let generated = strimzi_crd_generator::custom_resource_definitions()
        .map_err(|error| failed("generating the CRDs", &error))?;
    for generated in &generated {
        let name = generated.crd.name_any();
        crds.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&generated.crd),
        )
        .await
        .map_err(|error| failed(&format!("applying CRD {name}"), &error))?;
    }
    for generated in &generated {
        let name = generated.crd.name_any();
        let established = kube::runtime::wait::await_condition(
            crds.clone(),
            &name,
            kube::runtime::wait::conditions::is_crd_established(),
        );
        tokio::time::timeout(CRD_TIMEOUT, established)
            .await
            .map_err(|_| failed(&format!("CRD {name}"), &"not Established in time"))?
            .map_err(|error| failed(&format!("waiting for CRD {name}"), &error))?;
    }
    Ok(())
}

/// The label kwok looks for on the fake nodes it manages.
pub const KWOK_NODE_LABEL: &str = "strimzi.io/testenv-kwok";

/// The static bearer token of `user`.
fn identity_token(user: &str) -> String {
    format!("strimzi-testenv-{}", user.replace(':', "-"))
}

/// Files the components read.
struct Files {
    ca: PathBuf,
    serving_cert: PathBuf,
    serving_key: PathBuf,
    kubelet_client_cert: PathBuf,
    kubelet_client_key: PathBuf,
    service_account_key: PathBuf,
    service_account_public_key: PathBuf,
    tokens: PathBuf,
}

impl Files {
    fn write(dir: &Path, network: Option<&NodeNetwork>) -> Result<Self, TestEnvError> {
        let ca = TestCa::new("strimzi-testenv-kubernetes-ca")?;
        let mut addresses = vec![std::net::IpAddr::V4(API_SERVICE_IP)];
        if let Some(network) = network {
            addresses.extend(
                (0..network.nodes()).map(|node| std::net::IpAddr::V4(network.node_ip(node))),
            );
        }
        let serving = ca.server_with_ips(
            "kube-apiserver",
            &[
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
            ],
            &addresses,
        )?;
        let kubelet_client = ca.client("kube-apiserver-kubelet-client", Some("system:masters"))?;
        let files = Self {
            ca: dir.join("ca.crt"),
            serving_cert: dir.join("apiserver.crt"),
            serving_key: dir.join("apiserver.key"),
            kubelet_client_cert: dir.join("apiserver-kubelet-client.crt"),
            kubelet_client_key: dir.join("apiserver-kubelet-client.key"),
            service_account_key: dir.join("service-account.key"),
            service_account_public_key: dir.join("service-account.pub"),
            tokens: dir.join("tokens.csv"),
        };
        write(&files.ca, &ca.cert_pem())?;
        write(&files.serving_cert, &serving.cert)?;
        write(&files.serving_key, &serving.key)?;
        write(&files.kubelet_client_cert, &kubelet_client.cert)?;
        write(&files.kubelet_client_key, &kubelet_client.key)?;
        let (private_key, public_key) = key_pair_pem()?;
        write(&files.service_account_key, &private_key)?;
        write(&files.service_account_public_key, &public_key)?;
        let mut tokens = format!("{ADMIN_TOKEN},admin,admin,\"system:masters\"\n");
        let proxy = "system:kube-proxy";
        tokens.push_str(&format!("{},{proxy},{proxy},\n", identity_token(proxy)));
        // Identities of the real nodes' components, with the groups the Node authorizer and
        // the default RBAC bindings expect.
        for node in 0..MAX_NODES {
            let user = format!("system:node:{}", node_name(node));
            tokens.push_str(&format!(
                "{},{user},{user},\"system:nodes\"\n",
                identity_token(&user)
            ));
        }
        write(&files.tokens, &tokens)?;
        Ok(files)
    }
}

/// `socat` on the host listening on `127.0.0.1:<port>`, joined through a unix socket in
/// `dir` to `socat` inside `network`, which connects to the API server there.
fn loopback_bridge(
    network: &NodeNetwork,
    port: u16,
    dir: &Path,
    log_dir: &Path,
    lifetime: Lifetime,
) -> Result<Vec<ManagedProcess>, TestEnvError> {
    if !crate::network::on_path("socat") {
        return Err(TestEnvError::MissingTool {
            program: "socat".to_owned(),
            install: "apt-get install -y socat".to_owned(),
        });
    }
    let socket = dir.join("apiserver.sock");
    let inner = ManagedProcess::start(
        &ProcessSpec::new("apiserver-bridge-inside", "socat", log_dir)
            .launched_by(network.daemon_prefix())
            .args([
                format!("UNIX-LISTEN:{},fork,unlink-early", socket.display()),
                format!("TCP:127.0.0.1:{port}"),
            ]),
        lifetime,
    )?;
    let outer = ManagedProcess::start(
        &ProcessSpec::new("apiserver-bridge-host", "socat", log_dir).args([
            format!("TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork"),
            format!("UNIX-CONNECT:{}", socket.display()),
        ]),
        lifetime,
    )?;
    Ok(vec![outer, inner])
}

fn kubeconfig_yaml(server: &str, ca: &Path, token: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: {server}
    certificate-authority: {ca}
users:
- name: admin
  user:
    token: {token}
contexts:
- name: testenv
  context:
    cluster: testenv
    user: admin
current-context: testenv
",
        ca = ca.display()
    )
}

async fn client_for(kubeconfig: &Path) -> Result<Client, TestEnvError> {
    let invalid = |message: String| TestEnvError::Start {
        component: "kube client".to_owned(),
        message,
        log: kubeconfig.to_path_buf(),
    };
    let file = Kubeconfig::read_from(kubeconfig).map_err(|error| invalid(error.to_string()))?;
    let config = Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
        .await
        .map_err(|error| invalid(error.to_string()))?;
    Client::try_from(config).map_err(|error| invalid(error.to_string()))
}

fn http_get(path: &str) -> Result<http::Request<Vec<u8>>, http::Error> {
    http::Request::get(path).body(Vec::new())
}

/// Polls `ready` until it succeeds, failing early when `process` exits.
async fn wait_until<F, Fut>(process: &ManagedProcess, mut ready: F) -> Result<(), TestEnvError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let started = Instant::now();
    let mut last = String::from("not checked yet");
    while started.elapsed() < READY_TIMEOUT {
        if let Some(error) = process.exited_early(started.elapsed()) {
            return Err(error);
        }
        match ready().await {
            Ok(()) => return Ok(()),
            Err(observed) => last = observed,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(process.not_ready(started.elapsed(), last))
}

/// Waits until `port` on 127.0.0.1 (inside `network`, if given) accepts connections.
async fn wait_for_port(
    process: &ManagedProcess,
    port: u16,
    network: Option<&NodeNetwork>,
) -> Result<(), TestEnvError> {
    let connect = move || {
        TcpStream::connect(("127.0.0.1", port))
            .map(|_| ())
            .map_err(|error| format!("port {port}: {error}"))
    };
    wait_until(process, || async move {
        match network {
            Some(network) => network.enter(connect).map_err(|error| error.to_string())?,
            None => connect(),
        }
    })
    .await
}
