//! Where the test environment's pieces live: pinned versions (read from the same
//! `versions.env` files the install scripts source), the cache of built binaries and jars,
//! and the log folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::TestEnvError;

/// The crate's folder, `<workspace>/tests`.
const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Versions of the Kafka broker, from `tests/testenv/kafka/versions.env`.
const KAFKA_VERSIONS: &str = include_str!("../testenv/kafka/versions.env");

/// Reads `KEY=VALUE` lines, ignoring blank lines and `#` comments.
pub fn parse_versions(text: &str) -> BTreeMap<&str, &str> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.trim(), value.trim()))
        .collect()
}

/// The pinned Kafka version, e.g. `4.3.1`.
pub fn kafka_version() -> &'static str {
    parse_versions(KAFKA_VERSIONS)
        .get("KAFKA_VERSION")
        .copied()
        .unwrap_or("unknown")
}

/// The cache of provisioned components: `$STRIMZI_TESTENV_CACHE`, else
/// `~/.cache/strimzi-testenv`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("STRIMZI_TESTENV_CACHE") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    home.join(".cache/strimzi-testenv")
}

/// A file inside the crate's `testenv/` folder, e.g. `kafka/log4j2.properties`.
pub fn testenv_file(relative: &str) -> PathBuf {
    Path::new(CRATE_DIR).join("testenv").join(relative)
}

/// The folder with the Kafka jars, or the error that says how to install them.
pub fn kafka_libs() -> Result<PathBuf, TestEnvError> {
    provision(Provision::KafkaJars)?;
    let dir = cache_dir().join(format!("kafka-{}", kafka_version()));
    let libs = dir.join("libs");
    let installed = std::fs::read_dir(&libs)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|entry| entry.file_name().to_string_lossy().starts_with("kafka_"))
        })
        .unwrap_or(false);
    if installed {
        Ok(libs)
    } else {
        Err(TestEnvError::MissingTool {
            program: format!(
                "Apache Kafka {} jars in {}",
                kafka_version(),
                libs.display()
            ),
            install: "bash tests/testenv/kafka/install-kafka.sh".to_owned(),
        })
    }
}

/// What a provisioning script sets up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Provision {
    /// `tests/testenv/install.sh`: Debian packages, the Kubernetes components, etcd, kwok,
    /// containerd and CoreDNS.
    Kubernetes,
    /// `tests/testenv/kafka/install-kafka.sh`: the local Kafka broker's jars.
    KafkaJars,
    /// `tests/testenv/images/build-images.sh`: the container images of the real nodes.
    Images,
    /// `tests/testenv/images/build-images.sh --with-operator`: those images plus ours, built
    /// from the workspace's `Dockerfile` (of cargo's profile [`operator_image_profile`]).
    /// Real nodes started afterwards in the same process load it.
    OperatorImage,
}

/// The cargo profile the test environment builds the operator image's binaries with:
/// `STRIMZI_TESTENV_OPERATOR_PROFILE`, `dev` unless set (the Dockerfile builds `release`).
/// Figures measured in that image (memory of the operator pods) name it.
pub fn operator_image_profile() -> String {
    std::env::var("STRIMZI_TESTENV_OPERATOR_PROFILE").unwrap_or_else(|_| "dev".to_owned())
}

impl Provision {
    /// The script, relative to `tests/testenv`.
    fn script(self) -> &'static str {
        match self {
            Self::Kubernetes => "install.sh",
            Self::KafkaJars => "kafka/install-kafka.sh",
            Self::Images | Self::OperatorImage => "images/build-images.sh",
        }
    }

    /// The script's arguments.
    fn arguments(self) -> &'static [&'static str] {
        match self {
            Self::OperatorImage => &["--with-operator"],
            _ => &[],
        }
    }
}

/// Runs the provisioning script of `what` unless this process already did: a no-op on a warm
/// cache, a cold build with a progress line per component otherwise (the scripts lock the
/// cache, so parallel test binaries wait for one another). The scripts' progress goes
/// straight to this process's stderr, past the test harness's capture, so a cold start shows
/// it; their error line (which names the failed component and its log) becomes the error.
pub fn provision(what: Provision) -> Result<(), TestEnvError> {
    static DONE: std::sync::Mutex<Vec<Provision>> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if done.contains(&what) {
        return Ok(());
    }
    let script = testenv_file(what.script());
    let output = std::process::Command::new("bash")
        .arg(&script)
        .args(what.arguments())
        .env("STRIMZI_TESTENV_QUIET", "1")
        // Set for test programs by CI's test runner (.ci/test-runner) only; the operator
        // image's cargo build must not see it.
        .env_remove("RUSTC_BOOTSTRAP")
        .stdin(std::process::Stdio::null())
        .stdout(std::io::stderr())
        .output()
        .map_err(|error| TestEnvError::io(&script, error))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(TestEnvError::Provisioning {
            script: format!("tests/testenv/{}", what.script()),
            message: stderr
                .lines()
                .rfind(|line| !line.trim().is_empty())
                .unwrap_or("failed with no message")
                .to_owned(),
        });
    }
    done.push(what);
    Ok(())
}

/// Writes `text` to `path`, naming the path in the error.
pub fn write(path: &Path, text: &str) -> Result<(), TestEnvError> {
    std::fs::write(path, text).map_err(|error| TestEnvError::io(path, error))
}

/// A fresh folder for the logs of one environment: `target/testenv-logs/<name>-<pid>`.
pub fn log_dir(name: &str) -> Result<PathBuf, TestEnvError> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| Path::new(CRATE_DIR).join("../target"), PathBuf::from);
    let dir = target
        .join("testenv-logs")
        .join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|error| TestEnvError::io(&dir, error))?;
    Ok(dir)
}

/// Prefix of every scratch folder the environment creates in the system's temporary folder.
const SCRATCH_PREFIX: &str = "strimzi-testenv-";

/// A fresh scratch folder `<tmp>/strimzi-testenv-<kind>-<pid>-<random>`, deleted when the
/// returned handle drops. Shared environments live in statics that never drop, so first this
/// removes the scratch folders of processes that are gone: their tied children died with
/// them, and their etcd and Kafka data would otherwise fill the disk run after run.
pub fn scratch_dir(kind: &str) -> Result<tempfile::TempDir, TestEnvError> {
    let temp = std::env::temp_dir();
    remove_orphaned_scratch_dirs(&temp);
    tempfile::Builder::new()
        .prefix(&format!("{SCRATCH_PREFIX}{kind}-{}-", std::process::id()))
        .tempdir()
        .map_err(|error| TestEnvError::io(&temp, error))
}

/// Removes the scratch folders in `temp` whose owner process no longer runs. Folders of
/// running processes, and folders whose name carries no owner, are left alone.
fn remove_orphaned_scratch_dirs(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(owner) = scratch_dir_owner(&name.to_string_lossy()) else {
            continue;
        };
        if !crate::process::is_running(owner) {
            // Another process may be sweeping the same folder; losing that race is fine.
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The owner's process ID in a scratch folder's name, `strimzi-testenv-<kind>-<pid>-<random>`.
fn scratch_dir_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(SCRATCH_PREFIX)?;
    let mut parts = rest.rsplitn(3, '-');
    let _random = parts.next()?;
    let pid = parts.next()?;
    let _kind = parts.next()?;
    pid.parse().ok()
}

/// The file whose lock and content hand out ports to every test process on the machine.
const PORT_COUNTER: &str = "strimzi-testenv-ports";

/// The lowest port [`free_port`] hands out: above the ports Kubernetes components and
/// Kafka listen on by default.
const FIRST_PORT: u16 = 20000;

/// The highest port [`free_port`] hands out: below Kubernetes' NodePort range.
const LAST_PORT: u16 = 29999;

/// A port on every address that no test process on this machine has been given lately and
/// nothing listens on.
///
/// Ports come from below the kernel's ephemeral range (and Kubernetes' NodePorts), so no outgoing connection and no
/// bind to port 0 can take one between this call and the component binding it; a counter in
/// a locked file shared by every test process hands each port out once per round, so two
/// environments starting at the same moment never pick the same one.
pub fn free_port() -> Result<u16, TestEnvError> {
    let last = ephemeral_range_start().saturating_sub(1).min(LAST_PORT);
    if last <= FIRST_PORT {
        return any_free_port();
    }
    let path = std::env::temp_dir().join(PORT_COUNTER);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|error| TestEnvError::io(&path, error))?;
    let mut locked = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, error)| TestEnvError::io(&path, error.into()))?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut *locked, &mut text)
        .map_err(|error| TestEnvError::io(&path, error))?;
    let span = last - FIRST_PORT + 1;
    let mut offset = text.trim().parse::<u16>().unwrap_or(0) % span;
    for _ in 0..span {
        let port = FIRST_PORT + offset;
        offset = (offset + 1) % span;
        if std::net::TcpListener::bind(("0.0.0.0", port)).is_ok() {
            std::io::Seek::rewind(&mut *locked).map_err(|error| TestEnvError::io(&path, error))?;
            locked
                .set_len(0)
                .and_then(|()| {
                    std::io::Write::write_all(&mut *locked, offset.to_string().as_bytes())
                })
                .map_err(|error| TestEnvError::io(&path, error))?;
            return Ok(port);
        }
    }
    any_free_port()
}

/// The first port of the kernel's ephemeral range (`32768` if it cannot be read).
fn ephemeral_range_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768)
}

/// A port the kernel picks from its ephemeral range; another process may take it before it
/// is used.
fn any_free_port() -> Result<u16, TestEnvError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|error| TestEnvError::io("127.0.0.1:0", error))?;
    listener
        .local_addr()
        .map(|address| address.port())
        .map_err(|error| TestEnvError::io("127.0.0.1:0", error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_like_the_scripts_read_them() {
        let versions = parse_versions("# comment\n\nA=1\nB = two\nnot a pair\n");
        assert_eq!(versions.get("A"), Some(&"1"));
        assert_eq!(versions.get("B"), Some(&"two"));
        assert_eq!(versions.len(), 2);
        assert!(kafka_version().starts_with('4'), "{}", kafka_version());
    }

    #[test]
    fn scratch_folders_name_their_owner() {
        assert_eq!(
            scratch_dir_owner("strimzi-testenv-k8s-4242-AbC12"),
            Some(4242)
        );
        assert_eq!(scratch_dir_owner("strimzi-testenv-kafka-7-x-y"), None);
        assert_eq!(scratch_dir_owner("strimzi-testenv-k8s-Kh8vWb"), None);
        assert_eq!(scratch_dir_owner("other-k8s-1-abc"), None);
        let dir = scratch_dir("unit").unwrap();
        let name = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(scratch_dir_owner(&name), Some(std::process::id()));
    }

    #[test]
    fn orphaned_scratch_folders_are_removed_and_live_ones_kept() {
        let temp = tempfile::tempdir().unwrap();
        // PIDs never reach u32::MAX - 1, so that owner is surely gone.
        let orphan = temp
            .path()
            .join(format!("{SCRATCH_PREFIX}k8s-{}-aa", u32::MAX - 1));
        let live = temp
            .path()
            .join(format!("{SCRATCH_PREFIX}k8s-{}-bb", std::process::id()));
        let foreign = temp.path().join("something-else-1-cc");
        for dir in [&orphan, &live, &foreign] {
            std::fs::create_dir_all(dir.join("etcd")).unwrap();
        }
        remove_orphaned_scratch_dirs(temp.path());
        assert!(!orphan.exists());
        assert!(live.exists());
        assert!(foreign.exists());
    }

    #[test]
    fn free_ports_differ_are_bindable_and_outside_the_ephemeral_range() {
        let (first, second) = (free_port().unwrap(), free_port().unwrap());
        assert_ne!(first, second);
        std::net::TcpListener::bind(("127.0.0.1", first)).unwrap();
        assert!(
            (FIRST_PORT..ephemeral_range_start()).contains(&first),
            "{first}"
        );
    }
}
