//! A real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver (RBAC, token and
//! service-account authentication), kube-controller-manager, kube-scheduler and kwok, which
//! plays the kubelet for fake nodes so that pods become Ready without running anything.
//! The binaries are built by `tests/testenv/install.sh`; the flags are explained in
//! `tests/testenv/README.md`.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::certs::{TestCa, key_pair_pem};
use crate::error::TestEnvError;
use crate::layout::{cache_dir, free_port, parse_versions, scratch_dir, testenv_file};
use crate::process::{Lifetime, ManagedProcess, ProcessSpec};

const VERSIONS: &str = include_str!("../testenv/versions.env");
const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// The bearer token of the `admin` user (group `system:masters`); the environment is
/// reachable from this machine only.
const ADMIN_TOKEN: &str = "strimzi-testenv-admin-token";

/// The pinned version of a control-plane component, e.g. `KUBERNETES_VERSION`.
fn version(key: &str) -> &'static str {
    parse_versions(VERSIONS)
        .get(key)
        .copied()
        .unwrap_or("unknown")
}

/// `<cache>/<component>-<version>/bin/<binary>`, or how to build it.
fn binary(component: &str, version_key: &str, binary: &str) -> Result<PathBuf, TestEnvError> {
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
    apiserver: ManagedProcess,
    etcd: ManagedProcess,
    kubeconfig: PathBuf,
    server: String,
    dir: tempfile::TempDir,
}

impl ControlPlane {
    /// Starts every component and waits until the API server is ready and the controller
    /// manager works (the `default` ServiceAccount exists).
    pub async fn start(log_dir: &Path, lifetime: Lifetime) -> Result<Self, TestEnvError> {
        let kubernetes = |name| binary("kubernetes", "KUBERNETES_VERSION", name);
        let (apiserver_bin, kcm_bin, scheduler_bin) = (
            kubernetes("kube-apiserver")?,
            kubernetes("kube-controller-manager")?,
            kubernetes("kube-scheduler")?,
        );
        let etcd_bin = binary("etcd", "ETCD_VERSION", "etcd")?;
        let kwok_bin = binary("kwok", "KWOK_VERSION", "kwok")?;

        let dir = scratch_dir("k8s")?;
        let files = Files::write(dir.path())?;

        let etcd_client = free_port()?;
        let etcd_peer = free_port()?;
        let etcd = ManagedProcess::start(
            &ProcessSpec::new("etcd", etcd_bin, log_dir).args([
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
        wait_for_port(&etcd, etcd_client).await?;

        let apiserver_port = free_port()?;
        let apiserver = ManagedProcess::start(
            &ProcessSpec::new("kube-apiserver", apiserver_bin, log_dir).args([
                format!("--etcd-servers=http://127.0.0.1:{etcd_client}"),
                "--bind-address=127.0.0.1".to_owned(),
                "--advertise-address=127.0.0.1".to_owned(),
                // The endpoint reconciler refuses loopback addresses; nothing needs it here.
                "--endpoint-reconciler-type=none".to_owned(),
                format!("--secure-port={apiserver_port}"),
                format!("--tls-cert-file={}", files.serving_cert.display()),
                format!("--tls-private-key-file={}", files.serving_key.display()),
                format!("--token-auth-file={}", files.tokens.display()),
                "--authorization-mode=RBAC".to_owned(),
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_owned(),
                format!(
                    "--service-account-key-file={}",
                    files.service_account_public_key.display()
                ),
                format!(
                    "--service-account-signing-key-file={}",
                    files.service_account_key.display()
                ),
                "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
                "--allow-privileged=true".to_owned(),
                "--profiling=false".to_owned(),
            ]),
            lifetime,
        )?;
        let server = format!("https://127.0.0.1:{apiserver_port}");
        let kubeconfig = dir.path().join("kubeconfig");
        write(&kubeconfig, &kubeconfig_yaml(&server, &files.ca))?;
        let client = client_for(&kubeconfig).await?;
        wait_until(&apiserver, || async {
            client
                .request_text(http_get("/readyz").map_err(|error| error.to_string())?)
                .await
                .map(|_| ())
                .map_err(|error| error.to_string())
        })
        .await?;

        let kubeconfig_flag = format!("--kubeconfig={}", kubeconfig.display());
        let controller_manager = ManagedProcess::start(
            &ProcessSpec::new("kube-controller-manager", kcm_bin, log_dir)
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
            &ProcessSpec::new("kube-scheduler", scheduler_bin, log_dir)
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
            &ProcessSpec::new("kwok", kwok_bin, log_dir)
                .arg(&kubeconfig_flag)
                .args([
                    format!("--config={}", testenv_file("kwok-stages.yaml").display()),
                    "--manage-all-nodes=false".to_owned(),
                    format!("--manage-nodes-with-label-selector={KWOK_NODE_LABEL}=true"),
                    format!("--server-address=127.0.0.1:{}", free_port()?),
                    "--cidr=10.244.0.0/16".to_owned(),
                    "--node-ip=10.96.0.1".to_owned(),
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
            if let Some(status) = process.exited() {
                return Err(process.not_ready(Duration::ZERO, format!("exited with {status}")));
            }
        }
        Ok(Self {
            kwok,
            scheduler,
            controller_manager,
            apiserver,
            etcd,
            kubeconfig,
            server,
            dir,
        })
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
    pub fn pids(&self) -> [u32; 5] {
        [
            self.etcd.pid(),
            self.apiserver.pid(),
            self.controller_manager.pid(),
            self.scheduler.pid(),
            self.kwok.pid(),
        ]
    }
}

/// The label kwok looks for on the fake nodes it manages.
pub const KWOK_NODE_LABEL: &str = "strimzi.io/testenv-kwok";

/// Files the components read.
struct Files {
    ca: PathBuf,
    serving_cert: PathBuf,
    serving_key: PathBuf,
    service_account_key: PathBuf,
    service_account_public_key: PathBuf,
    tokens: PathBuf,
}

impl Files {
    fn write(dir: &Path) -> Result<Self, TestEnvError> {
        let ca = TestCa::new("strimzi-testenv-kubernetes-ca")?;
        let serving = ca.server(
            "kube-apiserver",
            &["kubernetes", "kubernetes.default", "kubernetes.default.svc"],
        )?;
        let files = Self {
            ca: dir.join("ca.crt"),
            serving_cert: dir.join("apiserver.crt"),
            serving_key: dir.join("apiserver.key"),
            service_account_key: dir.join("service-account.key"),
            service_account_public_key: dir.join("service-account.pub"),
            tokens: dir.join("tokens.csv"),
        };
        write(&files.ca, &ca.cert_pem())?;
        write(&files.serving_cert, &serving.cert)?;
        write(&files.serving_key, &serving.key)?;
        let (private_key, public_key) = key_pair_pem()?;
        write(&files.service_account_key, &private_key)?;
        write(&files.service_account_public_key, &public_key)?;
        write(
            &files.tokens,
            &format!("{ADMIN_TOKEN},admin,admin,\"system:masters\"\n"),
        )?;
        Ok(files)
    }
}

fn kubeconfig_yaml(server: &str, ca: &Path) -> String {
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
    token: {ADMIN_TOKEN}
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
        if let Some(status) = process.exited() {
            return Err(process.not_ready(started.elapsed(), format!("exited with {status}")));
        }
        match ready().await {
            Ok(()) => return Ok(()),
            Err(observed) => last = observed,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(process.not_ready(started.elapsed(), last))
}

async fn wait_for_port(process: &ManagedProcess, port: u16) -> Result<(), TestEnvError> {
    wait_until(process, || async move {
        TcpStream::connect(("127.0.0.1", port))
            .map(|_| ())
            .map_err(|error| format!("port {port}: {error}"))
    })
    .await
}

fn write(path: &Path, text: &str) -> Result<(), TestEnvError> {
    std::fs::write(path, text).map_err(|error| TestEnvError::io(path, error))
}
