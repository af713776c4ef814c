//! The network namespace of a real-node environment: the only network its control plane,
//! nodes and pods see.
//!
//! Inside it, the node addresses `10.200.0.2`, `10.200.0.3`, ... sit on a bridge with no
//! ports, and the default route points at that bridge, so a packet for any address outside
//! the namespace has nowhere to go. Host-side programs reach into it three ways:
//! - the API server through a loopback bridge (see [`crate::control_plane`]), at the same
//!   `https://127.0.0.1:<port>` inside and outside, so one kubeconfig serves both;
//! - programs started inside with [`NodeNetwork::exec_prefix`] (`ip netns exec`, which also
//!   gives them `/etc/netns/<name>/resolv.conf`, pointing at the environment's CoreDNS);
//! - sockets opened by code run through [`NodeNetwork::enter`] (they stay in the namespace
//!   for their whole life; names resolve through the host's DNS settings, so use addresses).
//!
//! Everything the namespace leaves on the host is recorded in its folder and removed by
//! `tests/testenv/node/sweep.sh`: when the network drops, by a watchdog when the owning
//! process dies without dropping it, and by the next environment if both were missed.

use std::fs::File;
use std::net::Ipv4Addr;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use nix::sched::{CloneFlags, setns};

use crate::error::TestEnvError;
use crate::layout::{testenv_file, write};

/// Where Debian's `containernetworking-plugins` puts the CNI plugins.
pub const CNI_BIN_DIR: &str = "/usr/lib/cni";

/// Prefix of the folders of real-node environments in the system's temporary folder; kept
/// apart from [`crate::layout::scratch_dir`]'s folders, whose plain removal would not
/// unmount what the nodes mounted.
const NODE_DIR_PREFIX: &str = "strimzi-nodes-";
/// Held by the environment for its whole life: one real-node environment per machine, as
/// kubelet uses a few fixed host paths.
pub const NODE_LOCK: &str = "/run/lock/strimzi-testenv-nodes.lock";
/// The bridge carrying the node addresses.
const NODE_BRIDGE: &str = "testenv0";
/// The first three octets of the node addresses.
const NODE_NETWORK: [u8; 3] = [10, 200, 0];
/// The Service network (`--service-cluster-ip-range`): the API server's Service takes the
/// first address, cluster DNS the tenth.
pub const SERVICE_NETWORK: &str = "10.0.0.0/24";
/// The `kubernetes` Service's address.
pub const API_SERVICE_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
/// The cluster DNS Service's address, which kubelet writes into every pod's resolv.conf.
pub const CLUSTER_DNS_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 10);
/// The pod network; node `i` takes `10.244.<i>.0/24`.
pub const POD_NETWORK: &str = "10.244.0.0/16";

/// The addresses kwok gives the pods of its nodes, inside [`KWOK_BLACKHOLE`].
pub const KWOK_POD_NETWORK: &str = "10.245.0.0/17";
/// The address kwok gives its nodes, inside [`KWOK_BLACKHOLE`].
pub const KWOK_NODE_IP: &str = "10.245.128.1";
/// The network of kwok's pods and nodes, whose processes do not exist. Without real nodes,
/// the operators run on the host and connect to pod addresses; this network is blackholed
/// on the host (see [`blackhole_kwok_network`]) so such a connection fails at once, and no
/// packet for a simulated pod leaves the machine. (Loopback addresses would do the same,
/// but EndpointSlices refuse them, and Services would never get endpoints.)
pub const KWOK_BLACKHOLE: &str = "10.245.0.0/16";

/// Routes [`KWOK_BLACKHOLE`] nowhere on the host (`ip route replace blackhole`, idempotent,
/// left in place for the next environment: nothing else uses that network). Needs root and
/// iproute2.
pub fn blackhole_kwok_network() -> Result<(), TestEnvError> {
    let output = Command::new("ip")
        .args(["route", "replace", "blackhole", KWOK_BLACKHOLE])
        .output();
    let refused = match output {
        Ok(output) if output.status.success() => return Ok(()),
        Ok(output) => String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        Err(error) => error.to_string(),
    };
    Err(TestEnvError::MissingTool {
        program: format!("a blackhole route for kwok's pods ({refused})"),
        install: format!(
            "run the tests as root with iproute2 (apt-get install -y iproute2), or once: \
             ip route replace blackhole {KWOK_BLACKHOLE}"
        ),
    })
}

/// A network namespace of the environment's own, with its folder on the host.
#[derive(Debug)]
pub struct NodeNetwork {
    name: String,
    dir: tempfile::TempDir,
    nodes: usize,
    // Dropped last: the lock is released once everything is swept.
    _lock: nix::fcntl::Flock<File>,
    watchdog: Child,
}

impl NodeNetwork {
    /// Creates the namespace with addresses for `nodes` nodes. Waits for the real-node lock
    /// first, and sweeps environments whose owner died without cleaning up.
    pub fn create(nodes: usize) -> Result<Self, TestEnvError> {
        check_host()?;
        let lock = lock()?;
        sweep_orphans();
        let dir = tempfile::Builder::new()
            .prefix(&format!("{NODE_DIR_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|error| TestEnvError::io(std::env::temp_dir(), error))?;
        let name = format!("strimzi-testenv-{}", std::process::id());
        write(&dir.path().join("netns"), &name)?;
        // The watchdog first, so that even a failed start below leaves nothing behind.
        let watchdog = Command::new("setsid")
            .arg("bash")
            .arg(testenv_file("node/sweep.sh"))
            .args(["--after", &std::process::id().to_string()])
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| start_error(&name, format!("running setsid: {error}")))?;
        let network = Self {
            name,
            dir,
            nodes,
            _lock: lock,
            watchdog,
        };
        network.configure()?;
        Ok(network)
    }

    fn configure(&self) -> Result<(), TestEnvError> {
        ip(&["netns", "add", &self.name])?;
        let mut steps: Vec<Vec<String>> = vec![
            words("link set lo up"),
            words(&format!("link add {NODE_BRIDGE} type bridge")),
        ];
        for node in 0..self.nodes {
            steps.push(words(&format!(
                "addr add {}/24 dev {NODE_BRIDGE}",
                self.node_ip(node)
            )));
        }
        steps.push(words(&format!("link set {NODE_BRIDGE} up")));
        steps.push(words(&format!("route add default dev {NODE_BRIDGE}")));
        for step in steps {
            let mut args = vec!["-n".to_owned(), self.name.clone()];
            args.extend(step);
            ip(&args.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
        // Pods on one bridge must pass through iptables to reach each other via Services;
        // both settings belong to this namespace alone.
        for setting in [
            "net.ipv4.ip_forward=1",
            "net.bridge.bridge-nf-call-iptables=1",
        ] {
            run(Command::new("ip")
                .args(["netns", "exec", &self.name, "sysctl", "-q", "-w", setting]))?;
        }
        let resolv = PathBuf::from("/etc/netns").join(&self.name);
        std::fs::create_dir_all(&resolv).map_err(|error| TestEnvError::io(&resolv, error))?;
        write(
            &resolv.join("resolv.conf"),
            &format!(
                "nameserver {}\nsearch svc.cluster.local cluster.local\noptions ndots:5\n",
                self.node_ip(0)
            ),
        )
    }

    /// The namespace's name, for `ip netns exec <name>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace's file, for `nsenter --net=<path>`.
    pub fn path(&self) -> PathBuf {
        Path::new("/run/netns").join(&self.name)
    }

    /// The environment's folder on the host: everything of its nodes lives below it.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// How many nodes the namespace has addresses for.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The address of node `index`.
    pub fn node_ip(&self, index: usize) -> Ipv4Addr {
        let [a, b, c] = NODE_NETWORK;
        Ipv4Addr::new(a, b, c, 2 + u8::try_from(index).unwrap_or(u8::MAX - 2))
    }

    /// The command that runs a program inside the namespace as a daemon: it keeps the host's
    /// `/sys` and mounts (which kubelet and containerd need), unlike `ip netns exec`.
    pub fn daemon_prefix(&self) -> Vec<String> {
        vec![
            "nsenter".to_owned(),
            format!("--net={}", self.path().display()),
            "--".to_owned(),
        ]
    }

    /// The command that runs a client program inside the namespace, with the environment's
    /// DNS for `*.svc.cluster.local` names.
    pub fn exec_prefix(&self) -> Vec<String> {
        vec![
            "ip".to_owned(),
            "netns".to_owned(),
            "exec".to_owned(),
            self.name.clone(),
        ]
    }

    /// Runs `work` on a thread inside the namespace: sockets it opens, and threads it starts,
    /// belong to the namespace.
    pub fn enter<T: Send>(&self, work: impl FnOnce() -> T + Send) -> Result<T, TestEnvError> {
        let namespace =
            File::open(self.path()).map_err(|error| TestEnvError::io(self.path(), error))?;
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    setns(namespace.as_fd(), CloneFlags::CLONE_NEWNET)
                        .map_err(|error| start_error(&self.name, format!("setns: {error}")))?;
                    Ok(work())
                })
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// Records that the environment created `path` on the host.
    pub fn record_created(&self, path: &Path) -> Result<(), TestEnvError> {
        use std::io::Write;
        let record = self.dir().join("created");
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&record)
            .and_then(|mut file| writeln!(file, "{}", path.display()))
            .map_err(|error| TestEnvError::io(&record, error))
    }

    /// Writes `name` (a file of the environment's folder, e.g. `cgroup-root` or `sysctl`)
    /// for the sweep.
    pub fn record(&self, name: &str, text: &str) -> Result<(), TestEnvError> {
        write(&self.dir().join(name), text)
    }
}

impl Drop for NodeNetwork {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(testenv_file("node/sweep.sh"))
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .status();
        let _ = self.watchdog.kill();
        let _ = self.watchdog.wait();
    }
}

/// Checks that this machine can run real nodes, naming the fix for what is missing.
fn check_host() -> Result<(), TestEnvError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(TestEnvError::MissingTool {
            program: "root".to_owned(),
            install: "real nodes need root (network namespaces, mounts, cgroups): run as root"
                .to_owned(),
        });
    }
    let tools = [
        ("ip", "iproute2"),
        ("nsenter", "util-linux"),
        ("setsid", "util-linux"),
        ("iptables", "iptables"),
        ("conntrack", "conntrack"),
        ("runc", "runc"),
        ("sysctl", "procps"),
        ("getent", "libc-bin"),
    ];
    for (tool, package) in tools {
        if !on_path(tool) {
            return Err(missing_package(tool, package));
        }
    }
    for plugin in ["bridge", "host-local", "loopback", "portmap"] {
        let path = Path::new(CNI_BIN_DIR).join(plugin);
        if !path.is_file() {
            return Err(missing_package(
                &path.display().to_string(),
                "containernetworking-plugins",
            ));
        }
    }
    if !Path::new("/sys/fs/cgroup/memory").is_dir()
        && !Path::new("/sys/fs/cgroup/cgroup.controllers").is_file()
    {
        return Err(TestEnvError::MissingTool {
            program: "cgroups".to_owned(),
            install: "real nodes need the memory cgroup controller mounted under /sys/fs/cgroup"
                .to_owned(),
        });
    }
    Ok(())
}

fn missing_package(tool: &str, package: &str) -> TestEnvError {
    TestEnvError::MissingTool {
        program: tool.to_owned(),
        install: format!(
            "apt-get install -y {package} (or bash tests/testenv/install.sh, which installs every package real nodes need)"
        ),
    }
}

/// Whether `program` is on `PATH` (or, for system tools, in `/usr/sbin` or `/sbin`).
pub fn on_path(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .any(|dir| dir.join(program).is_file())
}

fn lock() -> Result<nix::fcntl::Flock<File>, TestEnvError> {
    let path = Path::new(NODE_LOCK);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|error| TestEnvError::io(parent, error))?;
    }
    let file = File::create(path).map_err(|error| TestEnvError::io(path, error))?;
    match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(locked) => Ok(locked),
        Err((file, nix::errno::Errno::EWOULDBLOCK)) => {
            eprintln!("waiting for another real-node environment to end (it holds {NODE_LOCK})");
            nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
                .map_err(|(_, error)| TestEnvError::io(path, error.into()))
        }
        Err((_, error)) => Err(TestEnvError::io(path, error.into())),
    }
}

/// Sweeps the folders of real-node environments whose owner process is gone.
fn sweep_orphans() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(owner) = name
            .strip_prefix(NODE_DIR_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !crate::process::is_running(owner) {
            let _ = Command::new("bash")
                .arg(testenv_file("node/sweep.sh"))
                .arg(entry.path())
                .stdout(Stdio::null())
                .status();
        }
    }
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}

fn ip(args: &[&str]) -> Result<(), TestEnvError> {
    run(Command::new("ip").args(args))
}

/// Runs a set-up command, failing with its output.
pub fn run(command: &mut Command) -> Result<(), TestEnvError> {
    let shown = format!("{command:?}");
    let output = command
        .output()
        .map_err(|error| start_error("network namespace", format!("{shown}: {error}")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(start_error(
            "network namespace",
            format!(
                "{shown} failed with {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        ))
    }
}

fn start_error(component: &str, message: String) -> TestEnvError {
    TestEnvError::Start {
        component: component.to_owned(),
        message,
        log: PathBuf::from("(no log: a set-up command)"),
    }
}
