//! The container registry of a real-node environment: Debian's `docker-registry`
//! (Distribution 2.8) inside the node network, at the first node's address, port
//! [`REGISTRY_PORT`], over plain HTTP. Every node's containerd pulls from it (a `hosts.toml`
//! saying so, [`containerd_hosts`]); builder pods push to it (KafkaConnect's `spec.build`).
//!
//! Its storage is kept in the cache (`<cache>/registry`), so an image pushed by one run (the
//! Kafka image a Connect build starts `FROM`) is found by the next one: a push copies only the
//! blobs the registry lacks.

use std::net::{SocketAddrV4, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::error::TestEnvError;
use crate::layout::{cache_dir, write};
use crate::network::{NodeNetwork, on_path};
use crate::process::{Lifetime, ManagedProcess, ProcessSpec};

/// The port the registry listens on.
pub const REGISTRY_PORT: u16 = 5000;

/// `<address>:<port>` of the registry of `network`, as image names start with it.
pub fn registry_host(network: &NodeNetwork) -> String {
    format!("{}:{REGISTRY_PORT}", network.node_ip(0))
}

/// The folders of containerd's registry hosts (`config_path`) with the one file that sends
/// pulls from the environment's registry over plain HTTP.
pub fn containerd_hosts(network: &NodeNetwork, root: &Path) -> Result<PathBuf, TestEnvError> {
    let host = registry_host(network);
    let dir = root.join("certs.d");
    let host_dir = dir.join(&host);
    std::fs::create_dir_all(&host_dir).map_err(|error| TestEnvError::io(&host_dir, error))?;
    write(
        &host_dir.join("hosts.toml"),
        &format!(
            "server = \"http://{host}\"\n\n[host.\"http://{host}\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
        ),
    )?;
    Ok(dir)
}

/// The running registry; stopped when dropped.
#[derive(Debug)]
pub struct LocalRegistry {
    process: ManagedProcess,
    host: String,
    exec_prefix: Vec<String>,
}

impl LocalRegistry {
    /// Starts the registry inside `network` and waits until it accepts connections.
    pub fn start(
        network: &NodeNetwork,
        log_dir: &Path,
        lifetime: Lifetime,
    ) -> Result<Self, TestEnvError> {
        if !on_path("docker-registry") {
            return Err(TestEnvError::MissingTool {
                program: "docker-registry".to_owned(),
                install: "apt-get install -y docker-registry (or bash tests/testenv/install.sh --packages)"
                    .to_owned(),
            });
        }
        let storage = cache_dir().join("registry");
        std::fs::create_dir_all(&storage).map_err(|error| TestEnvError::io(&storage, error))?;
        let host = registry_host(network);
        let config = network.dir().join("registry.yaml");
        write(
            &config,
            &format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n",
                storage.display()
            ),
        )?;
        let process = ManagedProcess::start(
            &ProcessSpec::new("registry", "docker-registry", log_dir)
                .launched_by(network.daemon_prefix())
                .args(["serve".to_owned(), config.display().to_string()]),
            lifetime,
        )?;
        let address = SocketAddrV4::new(network.node_ip(0), REGISTRY_PORT);
        process.wait_ready(Duration::from_secs(30), || {
            network
                .enter(|| TcpStream::connect_timeout(&address.into(), Duration::from_secs(1)))
                .map_err(|error| error.to_string())?
                .map(|_| ())
                .map_err(|error| format!("{address}: {error}"))
        })?;
        Ok(Self {
            process,
            host,
            exec_prefix: network.exec_prefix(),
        })
    }

    /// `<address>:<port>`, as image names start with it.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The registry's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Pushes the image of an OCI archive (as `build-images.sh` writes them) as
    /// `<host>/<repository>` (with its tag) and gives that name. Blobs the registry has
    /// already are not sent again.
    pub fn push_archive(&self, archive: &Path, repository: &str) -> Result<String, TestEnvError> {
        if !on_path("skopeo") {
            return Err(TestEnvError::MissingTool {
                program: "skopeo".to_owned(),
                install: "apt-get install -y skopeo (or bash tests/testenv/install.sh --packages)"
                    .to_owned(),
            });
        }
        let image = format!("{}/{repository}", self.host);
        let begun = Instant::now();
        let output = Command::new(&self.exec_prefix[0])
            .args(&self.exec_prefix[1..])
            .args(["skopeo", "copy", "--quiet", "--dest-tls-verify=false"])
            .arg(format!("oci-archive:{}", archive.display()))
            .arg(format!("docker://{image}"))
            .output()
            .map_err(|error| TestEnvError::io(archive, error))?;
        if output.status.success() {
            Ok(image)
        } else {
            Err(TestEnvError::NotReady {
                component: format!("push of {} to the registry", archive.display()),
                waited: begun.elapsed(),
                message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
                log: self.process.log().to_path_buf(),
            })
        }
    }
}
