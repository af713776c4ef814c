//! Our Kafka image's own parts run a broker pod as our cluster operator makes it, without a
//! kubelet (tests/testenv/images/CONTRACT.md sections 2, 3 and 11): the built image's root
//! filesystem is unpacked into a temporary folder, and `args[0]` of the `kafka` container that
//! the model renders for a one-node combined KRaft cluster (our `kafka_run.sh`) runs in it
//! with `chroot` as uid 1001, in namespaces of its own (mount, PID, network, host name), with
//! the pod's environment and the files of its mounts: the node's ConfigMap at
//! `/opt/kafka/custom-config`, an in-memory `/tmp` of the pod's size, the data volume, and a
//! service account folder whose token a stand-in Kubernetes API (an HTTPS file server serving
//! the node's Secrets) requires. The node must start, its readiness and liveness commands must
//! pass, the broker-state agent must answer `RUNNING` to the operator's client certificate
//! (and refuse a client without one), and a client must produce a record to it.
//!
//! Needs root, the images of `build-images.sh` (run first; a no-op when they are current),
//! `unshare`, `nsenter`, `ip`, `openssl`, `curl` and `python3`. CI runs it in the `real` lane.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Container, Pod, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_cluster_operator::model::config::ExternalConfiguration;
use strimzi_cluster_operator::model::listeners::ListenerAddresses;
use strimzi_cluster_operator::model::nodes::pods::PodInputs;
use strimzi_cluster_operator::model::{KafkaCluster, ModelInput, resolve};
use strimzi_tests::command_line::run_ok;
use strimzi_tests::layout::cache_dir;

const NAMESPACE: &str = "ns";
const CLUSTER: &str = "my-cluster";
const POD: &str = "my-cluster-dual-0";
/// A KRaft cluster ID that starts with `-` (CONTRACT 3.2 step 7: it must not be read as an
/// option).
const CLUSTER_ID: &str = "-AB5Da8cQVOJxH337-NdPg";
const API_PORT: u16 = 6443;
const TOKEN: &str = "token-of-the-pods-service-account";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(command: &mut Command) -> String {
    let what = format!("{command:?}");
    let output = run_ok(&what, command.stdin(Stdio::null()));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The model's one-node combined cluster: its pod and its ConfigMap's data.
fn rendered_node() -> (Pod, BTreeMap<String, String>) {
    let kafka: Kafka = serde_json::from_value(json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": CLUSTER, "namespace": NAMESPACE, "uid": "kafka-uid"},
        "spec": {"kafka": {
            "listeners": [
                {"name": "plain", "port": 9092, "type": "internal", "tls": false},
                {"name": "tls", "port": 9093, "type": "internal", "tls": true}
            ],
            "config": {
                "offsets.topic.replication.factor": 1,
                "transaction.state.log.replication.factor": 1,
                "transaction.state.log.min.isr": 1,
                "default.replication.factor": 1,
                "min.insync.replicas": 1
            }
        }}
    }))
    .unwrap();
    let pool: KafkaNodePool = serde_json::from_value(json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaNodePool",
        "metadata": {"name": "dual", "namespace": NAMESPACE, "uid": "pool-uid",
                     "labels": {"strimzi.io/cluster": CLUSTER}},
        "spec": {"replicas": 1, "roles": ["controller", "broker"],
                 "storage": {"type": "ephemeral"}}
    }))
    .unwrap();
    let config = model_support::default_model_config();
    let pools = [pool];
    let cluster: KafkaCluster = resolve(&ModelInput {
        kafka: &kafka,
        pools: &pools,
        cluster_id: CLUSTER_ID,
        metadata_version_in_use: None,
        config: &config,
    })
    .unwrap();
    let pod = cluster
        .pod_sets(&PodInputs::default())
        .iter()
        .flat_map(|set| set.spec.pod_list().unwrap())
        .find(|pod| pod.metadata.name.as_deref() == Some(POD))
        .expect("the model renders pod my-cluster-dual-0");
    let config_map = cluster
        .config_maps(
            &ListenerAddresses::default(),
            &ExternalConfiguration::default(),
        )
        .into_iter()
        .find(|map| map.metadata.name.as_deref() == Some(POD))
        .expect("the model renders ConfigMap my-cluster-dual-0");
    (pod, config_map.data.unwrap().into_iter().collect())
}

fn kafka_container(pod: &Pod) -> &Container {
    pod.spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .find(|container| container.name == "kafka")
        .expect("a kafka container")
}

fn exec_command(probe: Option<&k8s_openapi::api::core::v1::Probe>) -> Vec<String> {
    probe
        .and_then(|probe| probe.exec.as_ref())
        .and_then(|exec| exec.command.clone())
        .expect("an exec probe")
}

/// Every `${strimzisecrets:<namespace>/<secret>:<key>}` of a configuration.
fn secret_placeholders(config: &str) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    let mut rest = config;
    while let Some(start) = rest.find("${strimzisecrets:") {
        rest = &rest[start + "${strimzisecrets:".len()..];
        let end = rest.find('}').unwrap();
        let (secret, key) = rest[..end].split_once(':').unwrap();
        let (namespace, secret) = secret.split_once('/').unwrap();
        assert_eq!(namespace, NAMESPACE);
        found.insert((secret.to_owned(), key.to_owned()));
        rest = &rest[end..];
    }
    found
}

/// The folder of one run, deleted (with everything mounted in it detached first) at the end.
struct Work {
    dir: PathBuf,
    child: Option<Child>,
}

impl Drop for Work {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            // The first process of the PID namespace (unshare's child): killing it kills every
            // process of the namespace. (unshare's --kill-child alone does not reach it: the
            // parent-death signal is cleared when chroot --userspec changes the user.)
            let children = fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id()))
                .unwrap_or_default();
            for first in children.split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", first]).status();
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::env::var_os("STRIMZI_KEEP_IMAGE_RUN").is_none() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

fn write(path: &Path, content: impl AsRef<[u8]>) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

fn openssl(dir: &Path, args: &[&str]) {
    run(Command::new("openssl").current_dir(dir).args(args));
}

/// A CA and certificates made with `openssl`: the cluster CA with the node's certificate (the
/// names our certificate manager gives it) and the operator's client certificate, and the
/// stand-in API server's own CA and certificate.
fn make_certificates(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    for ca in ["cluster-ca", "api-ca", "other-ca"] {
        let (key, cert, subject) = (
            format!("{ca}.key"),
            format!("{ca}.crt"),
            format!("/O=io.strimzi/CN={ca}"),
        );
        openssl(
            dir,
            &[
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &cert,
                "-subj", &subject, "-days", "30",
            ],
        );
    }
    let node_names = format!(
        "subjectAltName=DNS:{POD}.{CLUSTER}-kafka-brokers.{NAMESPACE}.svc,DNS:{POD}.{CLUSTER}-kafka-brokers.{NAMESPACE}.svc.cluster.local,DNS:{CLUSTER}-kafka-bootstrap,DNS:{CLUSTER}-kafka-brokers,DNS:localhost,IP:127.0.0.1"
    );
    for (name, subject, ca, extension) in [
        (
            "node",
            format!("/O=io.strimzi/CN={CLUSTER}-kafka"),
            "cluster-ca",
            node_names.as_str(),
        ),
        (
            "operator",
            "/O=io.strimzi/CN=cluster-operator".to_owned(),
            "cluster-ca",
            "subjectAltName=DNS:cluster-operator",
        ),
        (
            "stranger",
            "/O=io.strimzi/CN=cluster-operator".to_owned(),
            "other-ca",
            "subjectAltName=DNS:cluster-operator",
        ),
        (
            "api",
            "/CN=kubernetes".to_owned(),
            "api-ca",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ),
    ] {
        openssl(
            dir,
            &[
                "req",
                "-new",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &subject,
            ],
        );
        write(&dir.join(format!("{name}.ext")), format!("{extension}\n"));
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                &format!("{ca}.crt"),
                "-CAkey",
                &format!("{ca}.key"),
                "-CAcreateserial",
                "-out",
                &format!("{name}.crt"),
                "-days",
                "30",
                "-extfile",
                &format!("{name}.ext"),
            ],
        );
    }
    // The node's PEM as our certificate manager writes it: certificate, then the CA's.
    let chain = fs::read_to_string(dir.join("node.crt")).unwrap()
        + &fs::read_to_string(dir.join("cluster-ca.crt")).unwrap();
    write(&dir.join("node-chain.crt"), chain);
    let key = fs::read_to_string(dir.join("node.key")).unwrap();
    assert!(
        key.starts_with("-----BEGIN PRIVATE KEY-----"),
        "PKCS#8 key expected"
    );
}

/// A Secret as the API server returns it.
fn secret_json(name: &str, data: &[(&str, Vec<u8>)]) -> String {
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NAMESPACE.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(key, value)| ((*key).to_owned(), ByteString(value.clone())))
                .collect(),
        ),
        type_: Some("Opaque".to_owned()),
        ..Secret::default()
    };
    serde_json::to_string(&secret).unwrap()
}

/// The stand-in API server: files under a folder, by URL path, to the pod's token only.
const FAKE_API: &str = r#"
import http.server, os, ssl, sys
port, cert, key, root, token = sys.argv[1:6]
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        path = os.path.normpath(self.path.split("?")[0]).lstrip("/")
        file = os.path.join(root, path)
        if self.headers.get("Authorization") != "Bearer " + token:
            status, body = 401, b'{"kind":"Status","code":401}'
        elif os.path.isfile(file):
            status, body = 200, open(file, "rb").read()
        else:
            status, body = 404, b'{"kind":"Status","code":404}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, format, *args):
        sys.stderr.write("fake-api: " + (format % args) + "\n")
server = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
"#;

/// What runs as the first process of the new namespaces: loopback up, the pod's host name,
/// the stand-in API, the pod's mounts inside the unpacked root, then `args[0]` in it as uid
/// 1001 with exactly the given environment.
const START: &str = r#"
set -euo pipefail
root=$1 work=$2 tmp_size=$3 hostname=$4
shift 4
ip link set lo up
hostname "$hostname"
# The client outside the root resolves the node's names as the pod's /etc/hosts does.
mount --bind "$work/hosts" /etc/hosts
python3 "$work/fake_api.py" 6443 "$work/certs/api.crt" "$work/certs/api.key" "$work/api" "$(cat "$work/serviceaccount/token")" &
mount -t tmpfs -o "size=$tmp_size,mode=1777" strimzi-tmp "$root/tmp"
mount -t tmpfs -o size=1k,mode=1777 ready-files "$root/var/opt/kafka"
mount --bind "$work/custom-config" "$root/opt/kafka/custom-config"
mount --bind "$work/data" "$root/var/lib/kafka/data"
mount --bind "$work/serviceaccount" "$root/run/secrets/kubernetes.io/serviceaccount"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
# Wait for the stand-in API before the node starts.
for _ in $(seq 50); do
    if curl -s -o /dev/null --cacert "$work/certs/api-ca.crt" https://127.0.0.1:6443/; then break; fi
    sleep 0.2
done
cd /
exec chroot --userspec=1001:0 "$root" /usr/bin/env -i "$@"
"#;

fn image_archive() -> PathBuf {
    let versions =
        fs::read_to_string(workspace_root().join("tests/testenv/images/versions.env")).unwrap();
    let pin = |key: &str| {
        versions
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{key}=")))
            .unwrap()
            .to_owned()
    };
    cache_dir().join("images").join(format!(
        "kafka-{}-{}.oci.tar",
        pin("STRIMZI_VERSION"),
        pin("KAFKA_VERSION")
    ))
}

/// Unpacks the image's single layer into `root`; returns the image's environment.
fn unpack(archive: &Path, root: &Path) -> Vec<String> {
    let read = |name: &str| run(Command::new("tar").arg("-xOf").arg(archive).arg(name));
    let blob = |digest: &Value| {
        format!(
            "blobs/sha256/{}",
            digest.as_str().unwrap().strip_prefix("sha256:").unwrap()
        )
    };
    let index: Value = serde_json::from_str(&read("index.json")).unwrap();
    let manifest: Value =
        serde_json::from_str(&read(&blob(&index["manifests"][0]["digest"]))).unwrap();
    let config: Value = serde_json::from_str(&read(&blob(&manifest["config"]["digest"]))).unwrap();
    fs::create_dir_all(root).unwrap();
    let layer = blob(&manifest["layers"][0]["digest"]);
    run(Command::new("bash")
        .arg("-c")
        .arg(r#"set -o pipefail; tar -xOf "$1" "$2" | tar -xz --numeric-owner -C "$3""#)
        .arg("unpack")
        .arg(archive)
        .arg(&layer)
        .arg(root));
    config["config"]["Env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| pair.as_str().unwrap().to_owned())
        .collect()
}

fn kafka_client() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let binary = dir.join("strimzi-kafka-client");
    if !binary.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut command = Command::new(cargo);
        command.current_dir(workspace_root()).args([
            "build",
            "-p",
            "strimzi-tests",
            "--bin",
            "strimzi-kafka-client",
        ]);
        if dir.ends_with("release") {
            command.arg("--release");
        }
        run(&mut command);
    }
    binary
}

/// Runs a command in the node's namespaces (mount, network, PID), as root outside the root.
fn in_node(pid: u32, command: &[&str]) -> std::process::Output {
    Command::new("nsenter")
        .args(["-t", &pid.to_string(), "-m", "-n", "-p", "--"])
        .args(command)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A probe command run as the container runs it: in the root, as uid 1001.
fn probe(pid: u32, root: &Path, env: &[String], command: &[String]) -> std::process::Output {
    let mut args: Vec<String> = vec![
        "chroot".into(),
        "--userspec=1001:0".into(),
        root.display().to_string(),
        "/usr/bin/env".into(),
        "-i".into(),
    ];
    args.extend(env.iter().cloned());
    args.extend(command.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    in_node(pid, &args)
}

fn log_of(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn kafka_run_starts_a_ready_broker_from_the_pod_our_operator_renders() {
    assert!(
        nix_is_root(),
        "this test needs root (chroot, mounts, namespaces)"
    );
    let (pod, config_map) = rendered_node();
    let container = kafka_container(&pod);

    // The pod's side of the contract this test provides.
    let args = container.args.clone().unwrap();
    assert_eq!(args, ["/opt/kafka/kafka_run.sh"], "args");
    assert!(container.command.is_none());
    let readiness = exec_command(container.readiness_probe.as_ref());
    let liveness = exec_command(container.liveness_probe.as_ref());
    assert_eq!(readiness, ["/opt/kafka/kafka_readiness.sh"]);
    assert_eq!(liveness, ["/opt/kafka/kafka_liveness.sh"]);
    let mounts: BTreeSet<String> = container
        .volume_mounts
        .iter()
        .flatten()
        .map(|mount| mount.mount_path.trim_end_matches('/').to_owned())
        .collect();
    let provided: BTreeSet<String> = [
        "/opt/kafka/custom-config",
        "/tmp",
        "/var/lib/kafka/data",
        "/var/opt/kafka",
        "/var/run/secrets/kubernetes.io/serviceaccount",
    ]
    .iter()
    .map(|path| (*path).to_owned())
    .collect();
    assert_eq!(mounts, provided, "the mounts this test provides");
    let tmp_size = pod
        .spec
        .as_ref()
        .unwrap()
        .volumes
        .iter()
        .flatten()
        .find(|volume| volume.name == "strimzi-tmp")
        .and_then(|volume| volume.empty_dir.as_ref())
        .and_then(|dir| dir.size_limit.as_ref())
        .map(|size| size.0.replace("Mi", "m").replace("Ki", "k"))
        .expect("strimzi-tmp has a size limit");
    let mut env: Vec<String> = Vec::new();
    for variable in container.env.iter().flatten() {
        let value = variable
            .value
            .clone()
            .unwrap_or_else(|| panic!("{} has no literal value: extend this test", variable.name));
        env.push(format!("{}={value}", variable.name));
    }
    for key in [
        "server.config",
        "log4j2.properties",
        "cluster.id",
        "metadata.version",
    ] {
        assert!(config_map.contains_key(key), "ConfigMap key {key}");
    }
    assert_eq!(config_map["cluster.id"], CLUSTER_ID);

    // The Secrets the configuration names, as our operator fills them.
    let id = std::process::id();
    let mut work = Work {
        dir: cache_dir()
            .join("images")
            .join(format!(".run-kafka-image-{id}")),
        child: None,
    };
    let _ = fs::remove_dir_all(&work.dir);
    let dir = work.dir.clone();
    let certs = dir.join("certs");
    make_certificates(&certs);
    let read = |name: &str| fs::read(certs.join(name)).unwrap();
    let secrets: BTreeMap<String, Vec<(&str, Vec<u8>)>> = [
        (
            format!("{CLUSTER}-cluster-ca-cert"),
            vec![("ca.crt", read("cluster-ca.crt"))],
        ),
        (
            format!("{CLUSTER}-trustbundle"),
            vec![
                ("cluster-ca.crt", read("cluster-ca.crt")),
                ("clients-ca.crt", read("cluster-ca.crt")),
            ],
        ),
        (
            POD.to_owned(),
            vec![
                ("my-cluster-dual-0.crt", read("node-chain.crt")),
                ("my-cluster-dual-0.key", read("node.key")),
            ],
        ),
    ]
    .into_iter()
    .collect();
    let placeholders = secret_placeholders(&config_map["server.config"]);
    assert!(
        !placeholders.is_empty(),
        "no Secret placeholders: {}",
        config_map["server.config"]
    );
    for (secret, key) in &placeholders {
        assert!(
            secrets
                .get(secret)
                .is_some_and(|data| data.iter().any(|(name, _)| name == key)),
            "server.config names {secret}:{key}, which this test does not serve"
        );
    }
    for (name, data) in &secrets {
        write(
            &dir.join(format!("api/api/v1/namespaces/{NAMESPACE}/secrets/{name}")),
            secret_json(name, data),
        );
    }

    // The pod's files.
    for (key, value) in &config_map {
        write(&dir.join("custom-config").join(key), value);
    }
    write(&dir.join("serviceaccount/token"), TOKEN);
    write(&dir.join("serviceaccount/namespace"), NAMESPACE);
    fs::copy(certs.join("api-ca.crt"), dir.join("serviceaccount/ca.crt")).unwrap();
    fs::create_dir_all(dir.join("data")).unwrap();
    run(Command::new("chown").arg("1001:0").arg(dir.join("data")));
    for sub in ["custom-config", "serviceaccount", "api", "certs"] {
        run(Command::new("chmod")
            .args(["-R", "a+rX"])
            .arg(dir.join(sub)));
    }
    let hosts = format!(
        "127.0.0.1 localhost\n127.0.0.1 {POD}.{CLUSTER}-kafka-brokers.{NAMESPACE}.svc.cluster.local {POD}.{CLUSTER}-kafka-brokers.{NAMESPACE}.svc {POD}\n"
    );
    write(&dir.join("hosts"), &hosts);
    write(&dir.join("fake_api.py"), FAKE_API);

    // The image's root, with the mount points the kubelet would make.
    let archive = image_archive();
    let build = Command::new("bash")
        .arg(workspace_root().join("tests/testenv/images/build-images.sh"))
        .env("STRIMZI_TESTENV_QUIET", "1")
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(build.success(), "build-images.sh failed");
    let started = Instant::now();
    let root = dir.join("root");
    let image_env = unpack(&archive, &root);
    eprintln!("unpacked the image in {:.1?}", started.elapsed());
    assert_eq!(
        fs::read_link(root.join("var/run")).ok(),
        Some(PathBuf::from("/run")),
        "/var/run of the image"
    );
    for mount_point in [
        "opt/kafka/custom-config",
        "var/lib/kafka/data",
        "var/opt/kafka",
        "run/secrets/kubernetes.io/serviceaccount",
    ] {
        fs::create_dir_all(root.join(mount_point)).unwrap();
    }
    write(&root.join("etc/hosts"), &hosts);
    let mut full_env: Vec<String> = image_env.clone();
    full_env.push(format!("HOSTNAME={POD}"));
    full_env.push("HOME=/home/kafka".to_owned());
    full_env.push("KUBERNETES_SERVICE_HOST=127.0.0.1".to_owned());
    full_env.push(format!("KUBERNETES_SERVICE_PORT={API_PORT}"));
    full_env.extend(env.iter().cloned());

    // Start the node.
    let log = dir.join("node.log");
    let log_file = fs::File::create(&log).unwrap();
    let mut command = Command::new("unshare");
    command
        .args([
            "--mount",
            "--propagation",
            "private",
            "--pid",
            "--net",
            "--uts",
            "--fork",
            "--kill-child",
            "--",
            "bash",
            "-c",
            START,
            "start",
        ])
        .arg(&root)
        .arg(&dir)
        .arg(&tmp_size)
        .arg(POD)
        .args(&full_env)
        .arg(&args[0])
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file);
    let child = command.spawn().unwrap();
    let pid = child.id();
    work.child = Some(child);

    // Ready: the pod's readiness command passes (the agent says the broker runs).
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut last = String::new();
    let mut probes = 0;
    loop {
        if let Some(status) = work.child.as_mut().unwrap().try_wait().unwrap() {
            panic!("the node stopped ({status}):\n{}", log_of(&log));
        }
        let output = probe(pid, &root, &full_env, &readiness);
        if output.status.success() {
            break;
        }
        probes += 1;
        last = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            Instant::now() < deadline,
            "not ready after 240 s (last readiness answer: {last}):\n{}",
            log_of(&log)
        );
        sleep(Duration::from_secs(2));
    }
    println!(
        "figure: the node was ready {:.1?} after its start ({probes} readiness probes failed first; the last said {:?})",
        started.elapsed(),
        last.trim()
    );
    let output = probe(pid, &root, &full_env, &liveness);
    assert!(output.status.success(), "liveness: {output:?}");

    let node_log = log_of(&log);
    assert!(
        node_log.lines().any(|line| line == "STRIMZI_BROKER_ID=0"),
        "no STRIMZI_BROKER_ID=0 line:\n{node_log}"
    );
    assert!(node_log.contains("Starting Kafka with configuration:"));
    assert!(
        node_log.contains("node.id=0"),
        "the configuration was not printed:\n{node_log}"
    );
    // The files the contract says kafka_run.sh writes.
    let cat = in_node(
        pid,
        &[
            "cat",
            &root.join("tmp/strimzi.properties").display().to_string(),
        ],
    );
    assert!(cat.status.success(), "/tmp/strimzi.properties: {cat:?}");
    let strimzi_properties = String::from_utf8_lossy(&cat.stdout).into_owned();
    assert_eq!(strimzi_properties, config_map["server.config"]);

    // The agent: RUNNING to the operator's certificate, over the pod's DNS name.
    let host = format!("{POD}.{CLUSTER}-kafka-brokers.{NAMESPACE}.svc");
    let url = format!("https://{host}:8443/v1/broker-state/");
    let resolve = format!("{host}:8443:127.0.0.1");
    let cert = |name: &str| certs.join(name).display().to_string();
    let answer = in_node(
        pid,
        &[
            "curl",
            "-sS",
            "--fail",
            "--max-time",
            "10",
            "--resolve",
            &resolve,
            "--cacert",
            &cert("cluster-ca.crt"),
            "--cert",
            &cert("operator.crt"),
            "--key",
            &cert("operator.key"),
            &url,
        ],
    );
    assert!(answer.status.success(), "agent: {answer:?}");
    let state: Value = serde_json::from_slice(&answer.stdout).unwrap();
    assert_eq!(state["brokerState"], 3, "{state}");
    // No client certificate, or one of another CA: refused.
    for extra in [
        vec![],
        vec![
            "--cert".to_owned(),
            cert("stranger.crt"),
            "--key".to_owned(),
            cert("stranger.key"),
        ],
    ] {
        let mut args: Vec<String> = [
            "curl",
            "-sS",
            "--fail",
            "--max-time",
            "10",
            "--resolve",
            &resolve,
            "--cacert",
            &cert("cluster-ca.crt"),
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
        args.extend(extra.iter().cloned());
        args.push(url.clone());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let refused = in_node(pid, &args);
        assert!(
            !refused.status.success(),
            "the agent answered {args:?}: {refused:?}"
        );
    }
    // Anything else: 404.
    let other = in_node(
        pid,
        &[
            "curl",
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--max-time",
            "10",
            "--resolve",
            &resolve,
            "--cacert",
            &cert("cluster-ca.crt"),
            "--cert",
            &cert("operator.crt"),
            "--key",
            &cert("operator.key"),
            &format!("https://{host}:8443/v1/other"),
        ],
    );
    assert_eq!(String::from_utf8_lossy(&other.stdout), "404");

    // A client produces a record on the plain listener, through the advertised name.
    let client = kafka_client();
    let bootstrap = format!("{host}:9092");
    let produced = in_node(
        pid,
        &[
            &client.display().to_string(),
            "--bootstrap",
            &bootstrap,
            "produce",
            "--topic",
            "image-test",
            "--count",
            "3",
        ],
    );
    assert!(
        produced.status.success(),
        "produce: {}{}\n{}",
        String::from_utf8_lossy(&produced.stdout),
        String::from_utf8_lossy(&produced.stderr),
        log_of(&log)
    );
    let consumed = in_node(
        pid,
        &[
            &client.display().to_string(),
            "--bootstrap",
            &bootstrap,
            "consume",
            "--topic",
            "image-test",
            "--count",
            "3",
        ],
    );
    assert!(consumed.status.success(), "consume: {consumed:?}");

    // The data directory holds the formatted log directory of node 0.
    assert!(
        dir.join("data/kafka-log0/meta.properties").is_file(),
        "no formatted log directory in the data volume"
    );
    let mode = fs::metadata(dir.join("data/kafka-log0"))
        .unwrap()
        .permissions()
        .mode();
    assert!(mode & 0o700 == 0o700, "kafka-log0 mode {mode:o}");
    println!("figure: the whole run took {:.1?}", started.elapsed());
}

fn nix_is_root() -> bool {
    run(Command::new("id").arg("-u")).trim() == "0"
}
