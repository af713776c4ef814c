//! The locally rebuilt images (`tests/testenv/images/build-images.sh`): the Kafka image holds
//! what Strimzi's Kafka image holds at the paths our pods use (CONTRACT.md sections 2 to 6 and
//! 9), with our own scripts, launcher and broker-state agent (`tests/testenv/images/kafka/`)
//! and our contract stand-ins for Cruise Control and Kafka Exporter (`standins/`), named as
//! stand-ins, and runs with the settings of Strimzi's image; the bridge image runs our bridge
//! stand-in with Strimzi's bridge image's paths and no Java; the pause image is Kubernetes'
//! pause program; the Connect build's Buildah and Maven builder images hold those tools under
//! Strimzi's names; the archives are valid OCI image archives named as the kubelet and the
//! cluster operator refer to them, and a second run of the script is a no-op.
//!
//! The archives are read with the `tar` command (and `sha256sum`), not unpacked to disk.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use strimzi_tests::layout::{cache_dir, parse_versions};

const IMAGE_VERSIONS: &str = include_str!("../testenv/images/versions.env");

fn version(key: &str) -> &'static str {
    parse_versions(IMAGE_VERSIONS)
        .get(key)
        .copied()
        .unwrap_or_else(|| panic!("{key} missing from tests/testenv/images/versions.env"))
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run_script() -> (String, Duration) {
    let started = Instant::now();
    let output = Command::new("bash")
        .arg("tests/testenv/images/build-images.sh")
        .current_dir(workspace_root())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "build-images.sh failed ({}):\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    (stdout, started.elapsed())
}

/// Runs the script once per test process (a no-op on a warm cache).
fn built() -> &'static str {
    static BUILT: OnceLock<String> = OnceLock::new();
    BUILT.get_or_init(|| {
        let (stdout, elapsed) = run_script();
        eprintln!("build-images.sh ({elapsed:?}):\n{stdout}");
        stdout
    })
}

fn images_dir() -> PathBuf {
    cache_dir().join("images")
}

fn kafka_archive_path() -> PathBuf {
    kafka_archive_path_of(version("KAFKA_VERSION"))
}

/// The archive of the Kafka image of `kafka_version` (one of `KAFKA_VERSIONS`).
fn kafka_archive_path_of(kafka_version: &str) -> PathBuf {
    built();
    images_dir().join(format!(
        "kafka-{}-{kafka_version}.oci.tar",
        version("STRIMZI_VERSION")
    ))
}

/// The Kafka versions an image is built for (`KAFKA_VERSIONS`).
fn kafka_versions() -> Vec<&'static str> {
    version("KAFKA_VERSIONS").split(',').collect()
}

fn pause_archive_path() -> PathBuf {
    built();
    images_dir().join("pause.oci.tar")
}

fn bridge_archive_path() -> PathBuf {
    built();
    images_dir().join(format!(
        "kafka-bridge-{}.oci.tar",
        version("BRIDGE_VERSION")
    ))
}

fn command_output(command: &mut Command) -> Vec<u8> {
    let output = command.stderr(Stdio::inherit()).output().unwrap();
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        output.status
    );
    output.stdout
}

/// One entry of a layer listing (`tar -tv --numeric-owner`).
#[derive(Debug, Clone)]
struct Entry {
    mode: String,
    uid: u32,
    gid: u32,
    /// Symbolic link target, if the entry is one.
    link: Option<String>,
}

impl Entry {
    fn is_file(&self) -> bool {
        self.mode.starts_with('-')
    }

    fn is_dir(&self) -> bool {
        self.mode.starts_with('d')
    }

    fn executable(&self) -> bool {
        self.mode.as_bytes().get(3) == Some(&b'x')
    }

    fn group_readable(&self) -> bool {
        self.mode.as_bytes().get(4) == Some(&b'r')
    }
}

/// An OCI image archive with one layer, read through `tar`.
struct Archive {
    path: PathBuf,
    index: Value,
    manifest: Value,
    config: Value,
    layer_blob: String,
    entries: BTreeMap<String, Entry>,
}

impl Archive {
    fn open(path: &Path) -> Archive {
        assert!(path.is_file(), "{} missing", path.display());
        let read = |name: &str| command_output(Command::new("tar").arg("-xOf").arg(path).arg(name));
        let blob_name = |digest: &Value| {
            let digest = digest.as_str().unwrap();
            format!("blobs/sha256/{}", digest.strip_prefix("sha256:").unwrap())
        };
        let index: Value = serde_json::from_slice(&read("index.json")).unwrap();
        let manifest_name = blob_name(&index["manifests"][0]["digest"]);
        let manifest: Value = serde_json::from_slice(&read(&manifest_name)).unwrap();
        let config_name = blob_name(&manifest["config"]["digest"]);
        let config: Value = serde_json::from_slice(&read(&config_name)).unwrap();
        let layer_blob = blob_name(&manifest["layers"][0]["digest"]);
        let mut archive = Archive {
            path: path.to_owned(),
            index,
            manifest,
            config,
            layer_blob,
            entries: BTreeMap::new(),
        };
        let listing = archive.pipe_layer(&["-tvz", "--numeric-owner", "-f", "-"]);
        archive.entries = parse_listing(&String::from_utf8_lossy(&listing));
        archive
    }

    /// Runs `tar <args>` with the layer blob on its standard input.
    fn pipe_layer(&self, args: &[&str]) -> Vec<u8> {
        let mut extract = Command::new("tar")
            .arg("-xOf")
            .arg(&self.path)
            .arg(&self.layer_blob)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let output = Command::new("tar")
            .args(args)
            .stdin(extract.stdout.take().unwrap())
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert!(
            extract.wait().unwrap().success(),
            "reading the layer of {}",
            self.path.display()
        );
        assert!(output.status.success(), "tar {args:?} on the layer failed");
        output.stdout
    }

    /// Extracts the layer's entries matching `patterns` (`*` within one name) into a new
    /// temporary folder named after `what`, in one pass over the layer.
    fn extract(&self, what: &str, patterns: &[&str]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("{what}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut args = vec![
            "-xz",
            "-f",
            "-",
            "-C",
            dir.to_str().unwrap(),
            "--wildcards",
            "--no-wildcards-match-slash",
        ];
        args.extend(patterns);
        self.pipe_layer(&args);
        dir
    }

    /// The content of a regular file in the layer.
    fn file(&self, name: &str) -> String {
        String::from_utf8(self.pipe_layer(&["-xzO", "-f", "-", name])).unwrap()
    }

    fn entry(&self, name: &str) -> &Entry {
        self.entries
            .get(name)
            .unwrap_or_else(|| panic!("{name} not in the layer of {}", self.path.display()))
    }

    fn env(&self) -> BTreeMap<String, String> {
        self.config["config"]["Env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| {
                let (key, value) = pair.as_str().unwrap().split_once('=').unwrap();
                (key.to_owned(), value.to_owned())
            })
            .collect()
    }

    /// Follows symbolic links (absolute or relative) inside the layer to a non-link entry.
    fn resolve(&self, name: &str) -> (String, &Entry) {
        let mut current = name.trim_start_matches('/').to_owned();
        for _ in 0..16 {
            let entry = self.entry(&current);
            let Some(target) = &entry.link else {
                return (current, entry);
            };
            current = if let Some(absolute) = target.strip_prefix('/') {
                absolute.to_owned()
            } else {
                let parent = Path::new(&current).parent().unwrap_or(Path::new(""));
                normalize(&parent.join(target))
            };
        }
        panic!("too many symbolic links from {name}");
    }
}

/// `a/b/../c` -> `a/c` (paths inside the layer, no leading slash).
fn normalize(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component.as_os_str().to_str().unwrap() {
            "." | "/" => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part.to_owned()),
        }
    }
    parts.join("/")
}

/// Parses GNU tar's verbose listing: `mode uid/gid size date time name[ -> target]`.
fn parse_listing(listing: &str) -> BTreeMap<String, Entry> {
    let mut entries = BTreeMap::new();
    for line in listing.lines() {
        let mut rest = line;
        let mut fields = Vec::new();
        for _ in 0..5 {
            let trimmed = rest.trim_start();
            let end = trimmed.find(' ').unwrap_or(trimmed.len());
            fields.push(&trimmed[..end]);
            rest = &trimmed[end..];
        }
        let name = rest.strip_prefix(' ').unwrap_or(rest);
        let (uid, gid) = fields[1].split_once('/').unwrap();
        let mode = fields[0].to_owned();
        let (name, link) = match name.split_once(" -> ") {
            Some((name, target)) if mode.starts_with('l') => (name, Some(target.to_owned())),
            _ => (name.split(" link to ").next().unwrap(), None),
        };
        let entry = Entry {
            mode,
            uid: uid.parse().unwrap(),
            gid: gid.parse().unwrap(),
            link,
        };
        entries.insert(name.trim_end_matches('/').to_owned(), entry);
    }
    entries
}

fn kafka() -> &'static Archive {
    static ARCHIVE: OnceLock<Archive> = OnceLock::new();
    ARCHIVE.get_or_init(|| Archive::open(&kafka_archive_path()))
}

fn pause() -> &'static Archive {
    static ARCHIVE: OnceLock<Archive> = OnceLock::new();
    ARCHIVE.get_or_init(|| Archive::open(&pause_archive_path()))
}

fn bridge() -> &'static Archive {
    static ARCHIVE: OnceLock<Archive> = OnceLock::new();
    ARCHIVE.get_or_init(|| Archive::open(&bridge_archive_path()))
}

fn sha256_of_entry(archive: &Path, name: &str) -> String {
    let mut extract = Command::new("tar")
        .arg("-xOf")
        .arg(archive)
        .arg(name)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let output = Command::new("sha256sum")
        .stdin(extract.stdout.take().unwrap())
        .output()
        .unwrap();
    assert!(extract.wait().unwrap().success() && output.status.success());
    format!("sha256:{}", &String::from_utf8_lossy(&output.stdout)[..64])
}

/// The index names the image for containerd, and every descriptor's digest is its blob's.
fn assert_valid_oci_archive(archive: &Archive, image: &str) {
    let descriptor = &archive.index["manifests"][0];
    assert_eq!(archive.index["manifests"].as_array().unwrap().len(), 1);
    assert_eq!(
        descriptor["annotations"]["io.containerd.image.name"], image,
        "image name annotation"
    );
    let tag = image.rsplit_once(':').unwrap().1;
    assert_eq!(
        descriptor["annotations"]["org.opencontainers.image.ref.name"],
        tag
    );
    assert_eq!(
        descriptor["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        archive.manifest["layers"][0]["mediaType"],
        "application/vnd.oci.image.layer.v1.tar+gzip"
    );
    let layout = command_output(
        Command::new("tar")
            .arg("-xOf")
            .arg(&archive.path)
            .arg("oci-layout"),
    );
    let layout: Value = serde_json::from_slice(&layout).unwrap();
    assert_eq!(layout["imageLayoutVersion"], "1.0.0");
    for (what, descriptor) in [
        ("manifest", descriptor),
        ("config", &archive.manifest["config"]),
        ("layer", &archive.manifest["layers"][0]),
    ] {
        let digest = descriptor["digest"].as_str().unwrap();
        let name = format!("blobs/sha256/{}", digest.strip_prefix("sha256:").unwrap());
        assert_eq!(
            sha256_of_entry(&archive.path, &name),
            digest,
            "{what} digest"
        );
    }
    assert_eq!(archive.config["os"], "linux");
    assert_eq!(
        archive.config["architecture"],
        descriptor["platform"]["architecture"]
    );
    // The layer's uncompressed digest (diff_id) and everything else, checked by the script's
    // own checker as well.
    let verify = Command::new("python3")
        .arg(workspace_root().join("tests/testenv/images/oci.py"))
        .arg("verify")
        .arg(&archive.path)
        .arg("--name")
        .arg(image)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "oci.py verify: {}",
        String::from_utf8_lossy(&verify.stderr)
    );
}

#[test]
fn kafka_archive_is_a_valid_oci_image_named_like_strimzis() {
    assert_valid_oci_archive(kafka(), version("KAFKA_IMAGE"));
    assert_eq!(
        version("KAFKA_IMAGE"),
        format!(
            "quay.io/strimzi/kafka:{}-kafka-{}",
            version("STRIMZI_VERSION"),
            version("KAFKA_VERSION")
        )
    );
}

/// Every other Kafka version of `KAFKA_VERSIONS` (the upgrade test's) has its image too, named
/// as Strimzi names it, with that version's Kafka jars and settings and the same parts
/// otherwise; a tool whose class moved runs the one that version has.
#[test]
fn every_kafka_version_has_its_image() {
    let versions = kafka_versions();
    assert!(
        versions.contains(&version("KAFKA_VERSION")),
        "KAFKA_VERSIONS {versions:?} lacks KAFKA_VERSION"
    );
    assert!(versions.len() >= 2, "KAFKA_VERSIONS {versions:?}");
    let default = kafka();
    for kafka_version in versions
        .into_iter()
        .filter(|kafka_version| *kafka_version != version("KAFKA_VERSION"))
    {
        let image = Archive::open(&kafka_archive_path_of(kafka_version));
        let name = format!(
            "quay.io/strimzi/kafka:{}-kafka-{kafka_version}",
            version("STRIMZI_VERSION")
        );
        assert_valid_oci_archive(&image, &name);
        let env = image.env();
        assert_eq!(
            env.get("KAFKA_VERSION").map(String::as_str),
            Some(kafka_version)
        );
        assert_eq!(image.config["config"]["User"], "1001");
        for jar in [
            format!("opt/kafka/libs/kafka-clients-{kafka_version}.jar"),
            format!("opt/kafka/libs/kafka-server-{kafka_version}.jar"),
            format!("opt/kafka/libs/kafka_2.13-{kafka_version}.jar"),
        ] {
            assert!(image.entry(&jar).is_file(), "{name}: {jar}");
        }
        assert!(
            !image.entries.keys().any(|entry| entry
                .ends_with(&format!("-{}.jar", version("KAFKA_VERSION")))
                && entry.contains("/kafka")),
            "{name} holds Kafka {} jars",
            version("KAFKA_VERSION")
        );
        // The same scripts, stand-ins and agent as the default image, at the same paths.
        for shared in [
            "opt/kafka/kafka_run.sh",
            "opt/kafka/kafka_readiness.sh",
            "opt/kafka/bin/kafka-run-class.sh",
            "opt/kafka/libs/strimzi-rs-kafka-agent-0.1.0.jar",
            "opt/cruise-control/strimzi-cruise-control-standin",
            "opt/kafka-exporter/strimzi-kafka-exporter-standin",
        ] {
            let (ours, theirs) = (image.entry(shared), default.entry(shared));
            assert!(ours.is_file(), "{name}: {shared}");
            assert_eq!(ours.mode, theirs.mode, "{name}: {shared}");
        }
        let wrapper = String::from_utf8_lossy(&image.pipe_layer(&[
            "-xzO",
            "-f",
            "-",
            "opt/kafka/bin/kafka-dump-log.sh",
        ]))
        .into_owned();
        let class = wrapper
            .split("kafka-run-class.sh\" ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{name}: kafka-dump-log.sh:\n{wrapper}"));
        let class_file = format!("{}.class", class.replace('.', "/"));
        let listing = image.pipe_layer(&[
            "-xzO",
            "-f",
            "-",
            "--wildcards",
            "opt/kafka/libs/kafka*.jar",
        ]);
        assert!(
            listing
                .windows(class_file.len())
                .any(|window| window == class_file.as_bytes()),
            "{name}: kafka-dump-log.sh runs {class}, not in its Kafka jars"
        );
        println!("figure: {name}: {} entries", image.entries.len());
    }
}

#[test]
fn kafka_image_has_strimzis_runtime_settings() {
    let image = kafka();
    let config = &image.config["config"];
    assert_eq!(config["User"], "1001");
    assert_eq!(config["WorkingDir"], "/opt/kafka");
    // Strimzi's image has no entry point: the pods name kafka_run.sh as their command.
    assert!(
        config["Entrypoint"].is_null(),
        "unexpected entry point {}",
        config["Entrypoint"]
    );
    let env = image.env();
    for (key, value) in [
        ("KAFKA_HOME", "/opt/kafka"),
        ("KAFKA_VERSION", version("KAFKA_VERSION")),
        ("STRIMZI_VERSION", version("STRIMZI_VERSION")),
        ("KAFKA_EXPORTER_HOME", "/opt/kafka-exporter"),
        ("JMX_EXPORTER_HOME", "/opt/prometheus-jmx-exporter"),
        ("CRUISE_CONTROL_HOME", "/opt/cruise-control"),
    ] {
        assert_eq!(env.get(key).map(String::as_str), Some(value), "{key}");
    }
    assert!(
        env["PATH"].split(':').any(|dir| dir == "/usr/bin"),
        "PATH {}",
        env["PATH"]
    );
    // JAVA_HOME points at the JRE inside the image, and `java` on the PATH is that JRE.
    let java_home = env.get("JAVA_HOME").expect("JAVA_HOME");
    let java = image.entry(&format!("{}/bin/java", java_home.trim_start_matches('/')));
    assert!(
        java.is_file() && java.executable(),
        "{java_home}/bin/java: {java:?}"
    );
    let (resolved, entry) = image.resolve("usr/bin/java");
    assert_eq!(
        resolved,
        format!("{}/bin/java", java_home.trim_start_matches('/'))
    );
    assert!(entry.executable());
}

#[test]
fn kafka_image_holds_what_strimzis_dockerfile_lists() {
    let image = kafka();
    let kafka_version = version("KAFKA_VERSION");
    let executables = [
        "opt/kafka/kafka_run.sh".to_owned(),
        "opt/kafka/kafka_readiness.sh".to_owned(),
        "opt/kafka/kafka_liveness.sh".to_owned(),
        "opt/kafka/kafka_connect_run.sh".to_owned(),
        "opt/kafka/bin/kafka-server-start.sh".to_owned(),
        "opt/kafka/bin/kafka-storage.sh".to_owned(),
        "opt/kafka/bin/kafka-run-class.sh".to_owned(),
        "opt/kafka/bin/connect-distributed.sh".to_owned(),
        "opt/kafka/bin/kafka-topics.sh".to_owned(),
        "opt/kafka/bin/kafka-reassign-partitions.sh".to_owned(),
        "opt/kafka/bin/kafka-console-producer.sh".to_owned(),
        "opt/kafka/bin/kafka-console-consumer.sh".to_owned(),
        "opt/kafka/bin/kafka-metadata-quorum.sh".to_owned(),
        "opt/kafka-exporter/strimzi-kafka-exporter-standin".to_owned(),
        "opt/kafka-exporter/kafka_exporter_run.sh".to_owned(),
        "opt/cruise-control/strimzi-cruise-control-standin".to_owned(),
        "opt/cruise-control/cruise_control_run.sh".to_owned(),
        "opt/cruise-control/cruise_control_healthcheck.sh".to_owned(),
        "usr/bin/tini".to_owned(),
    ];
    let files = [
        "opt/kafka/kafka_common.sh".to_owned(),
        "opt/kafka/LICENSE".to_owned(),
        "opt/kafka/NOTICE".to_owned(),
        "opt/kafka/config/tools-log4j2.properties".to_owned(),
        "opt/kafka/libs/strimzi-rs-kafka-agent-0.1.0.jar".to_owned(),
        "opt/kafka/libs/cruise-control-metrics-reporter-standin-0.1.0.jar".to_owned(),
        "opt/kafka-exporter/STAND-IN".to_owned(),
        "opt/cruise-control/STAND-IN".to_owned(),
        format!("opt/kafka/libs/kafka-server-{kafka_version}.jar"),
        format!("opt/kafka/libs/kafka-clients-{kafka_version}.jar"),
        format!("opt/kafka/libs/kafka_2.13-{kafka_version}.jar"),
        format!("opt/kafka/libs/connect-runtime-{kafka_version}.jar"),
        format!("opt/kafka/libs/connect-mirror-{kafka_version}.jar"),
    ];
    for name in &executables {
        let entry = image.entry(name);
        assert!(
            entry.is_file() && entry.executable(),
            "{name} is not an executable file: {entry:?}"
        );
    }
    for name in files.iter().chain(&executables) {
        let entry = image.entry(name);
        assert!(entry.is_file(), "{name}: {entry:?}");
        if name.starts_with("opt/") {
            // Like Strimzi's image: owned by root, readable by group 0 (the kafka user's group).
            assert_eq!((entry.uid, entry.gid), (0, 0), "{name} owner");
            assert!(entry.group_readable(), "{name}: {}", entry.mode);
        }
    }
    // The JMX exporter agent: the pinned version, or the newest release Maven Central has
    // below it (the script prints which); kafka_run.sh finds it by this prefix.
    assert!(
        image.entries.keys().any(|name| name
            .strip_prefix("opt/prometheus-jmx-exporter/jmx_prometheus_javaagent-")
            .is_some_and(|rest| rest.ends_with(".jar"))),
        "no JMX exporter agent in /opt/prometheus-jmx-exporter"
    );
    for dir in ["opt/kafka/plugins", "opt/kafka/libs"] {
        assert!(image.entry(dir).is_dir(), "{dir}");
    }
    // Kafka Exporter's program, at the path of Strimzi's image, is the stand-in.
    assert_eq!(
        image.resolve("opt/kafka-exporter/kafka_exporter").0,
        "opt/kafka-exporter/strimzi-kafka-exporter-standin"
    );
    // Third-party libraries from Strimzi's list (at the newest version Maven Central has).
    let libs: Vec<&str> = image
        .entries
        .keys()
        .filter_map(|name| name.strip_prefix("opt/kafka/libs/"))
        .collect();
    for prefix in [
        "kafka-oauth-common-",
        "kafka-oauth-server-",
        "kafka-oauth-client-",
        "kafka-quotas-plugin-",
        "kafka-kubernetes-config-provider-",
        "opentelemetry-api-",
        "log4j-layout-template-json-",
        "prometheus-metrics-exporter-httpserver-",
    ] {
        assert!(
            libs.iter()
                .any(|jar| jar.starts_with(prefix) && jar.ends_with(".jar")),
            "no {prefix}*.jar in /opt/kafka/libs"
        );
    }
    // The kafka user: uid 1001 in group 0, with a home directory.
    let passwd = image.file("etc/passwd");
    let kafka_user = passwd
        .lines()
        .find(|line| line.starts_with("kafka:"))
        .unwrap_or_else(|| panic!("no kafka user in /etc/passwd:\n{passwd}"));
    let fields: Vec<&str> = kafka_user.split(':').collect();
    assert_eq!(
        (fields[2], fields[3], fields[5]),
        ("1001", "0", "/home/kafka"),
        "{kafka_user}"
    );
    let home = image.entry("home/kafka");
    assert!(home.is_dir() && home.uid == 1001, "/home/kafka: {home:?}");
    // Tools the scripts call.
    for tool in [
        "usr/bin/curl",
        "usr/bin/netstat",
        "usr/bin/gawk",
        "usr/bin/openssl",
        "usr/bin/hostname",
        "usr/bin/keytool",
    ] {
        let (_, entry) = image.resolve(tool);
        assert!(entry.is_file() && entry.executable(), "{tool}: {entry:?}");
    }
}

#[test]
fn pause_image_is_kubernetes_pause_program() {
    let image = pause();
    assert_valid_oci_archive(image, version("PAUSE_IMAGE"));
    assert_eq!(image.config["config"]["Entrypoint"][0], "/pause");
    assert_eq!(image.config["config"]["User"], "65535:65535");
    let entry = image.entry("pause");
    assert!(
        entry.is_file() && entry.executable() && entry.uid == 0,
        "{entry:?}"
    );
    assert_eq!(image.entries.len(), 1, "{:?}", image.entries.keys());
}

#[test]
fn second_run_is_a_no_op() {
    built();
    let (stdout, elapsed) = run_script();
    assert!(
        !stdout.contains("building"),
        "a warm run rebuilt something:\n{stdout}"
    );
    // The pause image, a Kafka image per version, the Bridge, Buildah and Maven builder images.
    assert_eq!(
        stdout.matches(": cached").count(),
        4 + kafka_versions().len(),
        "{stdout}"
    );
    println!("figure: a warm run of build-images.sh took {elapsed:.1?}");
}

/// The scripts at Strimzi's paths are ours, byte for byte (`tests/testenv/images/kafka/`), no
/// Strimzi or Apache Kafka script is left, and every tool wrapper runs the class our list names
/// through our launcher.
#[test]
fn kafka_image_scripts_are_ours() {
    let image = kafka();
    let ours = workspace_root().join("tests/testenv/images/kafka");
    let dir = image.extract(
        "kafka-image-scripts",
        &["opt/kafka/*.sh", "opt/kafka/bin/*"],
    );
    let read = |name: &str| {
        std::fs::read_to_string(dir.join("opt/kafka").join(name))
            .unwrap_or_else(|error| panic!("/opt/kafka/{name}: {error}"))
    };
    for script in [
        "kafka_run.sh",
        "kafka_connect_run.sh",
        "kafka_readiness.sh",
        "kafka_liveness.sh",
        "kafka_common.sh",
        "bin/kafka-run-class.sh",
    ] {
        let expected = std::fs::read_to_string(ours.join(script)).unwrap();
        assert_eq!(
            read(script),
            expected,
            "/opt/kafka/{script} differs from tests/testenv/images/kafka/{script}"
        );
    }
    // Strimzi's helper scripts and Apache Kafka's launchers are gone.
    for gone in [
        "opt/kafka/dynamic_resources.sh",
        "opt/kafka/set_kafka_jmx_options.sh",
        "opt/kafka/set_kafka_gc_options.sh",
        "opt/kafka/to_bytes.gawk",
        "opt/kafka/bin/windows",
        "opt/kafka/bin/zookeeper-server-start.sh",
    ] {
        assert!(!image.entries.contains_key(gone), "{gone} is in the image");
    }
    assert!(
        !image
            .entries
            .keys()
            .any(|name| name.starts_with("opt/kafka/libs/kafka-agent-")),
        "Strimzi's kafka-agent jar is in the image"
    );
    let tools = std::fs::read_to_string(ours.join("bin/tools.list")).unwrap();
    let mut count = 0;
    for line in tools.lines().filter(|line| !line.starts_with('#')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, class, ..] = fields[..] else {
            continue;
        };
        let wrapper = read(&format!("bin/{name}"));
        // `a|b`: a class that moved; this image's Kafka (the newest) has the first.
        let class = class.split('|').next().unwrap();
        assert!(
            wrapper.contains(&format!("kafka-run-class.sh\" {class} \"$@\"")),
            "bin/{name} does not run {class}:\n{wrapper}"
        );
        count += 1;
    }
    assert!(count >= 20, "only {count} tool wrappers");
    // Every script there parses (the build ran `bash -n` on them in the image too).
    for entry in std::fs::read_dir(dir.join("opt/kafka"))
        .unwrap()
        .chain(std::fs::read_dir(dir.join("opt/kafka/bin")).unwrap())
    {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "sh") {
            let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
            assert!(
                check.status.success(),
                "bash -n {}: {check:?}",
                path.display()
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `installed` (a file extracted from an image) is byte for byte our `source` (relative to the
/// workspace).
fn assert_same_file(installed: &Path, source: &str) {
    let read = |path: &Path| {
        std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    };
    assert!(
        read(installed) == read(&workspace_root().join(source)),
        "{} differs from {source}",
        installed.display()
    );
}

/// Cruise Control and Kafka Exporter in the Kafka image are our contract stand-ins
/// (`standins/`), installed with their own start scripts, and say so: a `STAND-IN` note in each
/// folder and a label of the image. Nothing of Cruise Control's own build is left.
#[test]
fn kafka_image_stand_ins_are_ours_and_named_as_such() {
    let image = kafka();
    let dir = image.extract(
        "kafka-image-stand-ins",
        &[
            "opt/kafka-exporter/*.sh",
            "opt/kafka-exporter/STAND-IN",
            "opt/cruise-control/*.sh",
            "opt/cruise-control/STAND-IN",
        ],
    );
    for (installed, source) in [
        (
            "opt/kafka-exporter/kafka_exporter_run.sh",
            "standins/kafka-exporter/scripts/kafka_exporter_run.sh",
        ),
        (
            "opt/cruise-control/cruise_control_run.sh",
            "standins/cruise-control/scripts/cruise_control_run.sh",
        ),
        (
            "opt/cruise-control/cruise_control_healthcheck.sh",
            "standins/cruise-control/scripts/cruise_control_healthcheck.sh",
        ),
    ] {
        assert_same_file(&dir.join(installed), source);
    }
    for (note, program) in [
        ("opt/kafka-exporter/STAND-IN", "Kafka Exporter"),
        ("opt/cruise-control/STAND-IN", "Cruise Control"),
    ] {
        let text = std::fs::read_to_string(dir.join(note)).unwrap();
        assert!(
            text.contains(&format!(
                "contract stand-in for {program}; it is not {program}"
            )),
            "{note}: {text}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let label = image.config["config"]["Labels"]["io.strimzi.rs.stand-ins"]
        .as_str()
        .unwrap_or_default();
    assert!(
        label.contains("Cruise Control") && label.contains("Kafka Exporter"),
        "stand-ins label: {label:?}"
    );
    assert!(
        !image.entries.keys().any(|name| {
            name.starts_with("opt/cruise-control/libs")
                || name.starts_with("opt/kafka/libs/cruise-control-metrics-reporter-2")
        }),
        "Cruise Control's own jars are in the image"
    );
}

/// The builders of KafkaConnect's `spec.build` under Strimzi's names: Buildah run as root with
/// `chroot` isolation, with the containers' policy it pulls under and what the operator's
/// script calls; Maven with the `curl` and Java a build's first stage runs.
#[test]
fn connect_build_images_hold_buildah_and_maven() {
    built();
    let strimzi = version("STRIMZI_VERSION");
    let buildah = Archive::open(&images_dir().join(format!("buildah-{strimzi}.oci.tar")));
    assert_valid_oci_archive(&buildah, version("BUILDAH_IMAGE"));
    assert_eq!(buildah.config["config"]["User"], "0");
    assert_eq!(
        buildah.env().get("BUILDAH_ISOLATION").map(String::as_str),
        Some("chroot")
    );
    for name in ["usr/bin/buildah", "usr/bin/bash", "usr/bin/cat"] {
        let entry = buildah.entry(name);
        assert!(entry.is_file() && entry.executable(), "{name}: {entry:?}");
    }
    assert!(buildah.entry("etc/containers/policy.json").is_file());
    let maven =
        Archive::open(&images_dir().join(format!("registry/maven-builder-{strimzi}.oci.tar")));
    assert_valid_oci_archive(&maven, version("MAVEN_BUILDER_IMAGE"));
    for name in ["usr/share/maven/bin/mvn", "usr/bin/curl", "usr/bin/bash"] {
        let entry = maven.entry(name);
        assert!(entry.is_file() && entry.executable(), "{name}: {entry:?}");
    }
    assert!(maven.env().contains_key("JAVA_HOME"), "{:?}", maven.env());
}

/// The bridge image: Strimzi's bridge image's name, user, paths and settings (CONTRACT.md 8),
/// with our bridge stand-in and its start script, named as a stand-in, and no Java.
#[test]
fn bridge_image_runs_our_bridge_stand_in_without_java() {
    let image = bridge();
    assert_valid_oci_archive(image, version("BRIDGE_IMAGE"));
    let config = &image.config["config"];
    assert_eq!(config["User"], "1001");
    assert_eq!(config["WorkingDir"], "/opt/strimzi");
    assert!(config["Entrypoint"].is_null(), "{}", config["Entrypoint"]);
    let env = image.env();
    assert_eq!(
        env.get("STRIMZI_HOME").map(String::as_str),
        Some("/opt/strimzi")
    );
    assert!(!env.contains_key("JAVA_HOME"), "{env:?}");
    for name in [
        "opt/strimzi/bin/docker/kafka_bridge_run.sh",
        "opt/strimzi/bin/strimzi-bridge-standin",
        "usr/bin/tini",
        "usr/bin/bash",
    ] {
        let entry = image.entry(name);
        assert!(entry.is_file() && entry.executable(), "{name}: {entry:?}");
    }
    assert!(
        !image
            .entries
            .keys()
            .any(|name| name.starts_with("usr/lib/jvm/") || name == "usr/bin/java"),
        "Java is in the bridge image"
    );
    let passwd = image.file("etc/passwd");
    assert!(
        passwd
            .lines()
            .any(|line| line.starts_with("strimzi:x:1001:0:")),
        "{passwd}"
    );
    let dir = image.extract(
        "bridge-image-stand-in",
        &["opt/strimzi/STAND-IN", "opt/strimzi/bin/docker/*"],
    );
    assert_same_file(
        &dir.join("opt/strimzi/bin/docker/kafka_bridge_run.sh"),
        "standins/bridge/scripts/kafka_bridge_run.sh",
    );
    let note = std::fs::read_to_string(dir.join("opt/strimzi/STAND-IN")).unwrap();
    assert!(
        note.contains(
            "contract stand-in for Strimzi's HTTP Bridge; it is not Strimzi's HTTP Bridge"
        ),
        "{note}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let label = config["Labels"]["io.strimzi.rs.stand-ins"]
        .as_str()
        .unwrap_or_default();
    assert!(label.contains("stand-in"), "stand-ins label: {label:?}");
}
