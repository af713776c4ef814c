//! A real Apache Kafka broker for tests: one KRaft node on 127.0.0.1 with a PLAINTEXT, a
//! SASL_PLAINTEXT (SCRAM-SHA-512, SCRAM-SHA-256, and OAUTHBEARER with Kafka's unsecured token
//! validation) and a TLS listener with client authentication, the `StandardAuthorizer`, and an
//! `admin` super user created for both SCRAM mechanisms when the storage is formatted.
//! The configuration is `tests/testenv/kafka/server.properties.template`.
//!
//! [`KafkaCluster`] starts a small cluster instead: a few nodes that are each broker and
//! controller (KRaft combined mode, one quorum of all of them), PLAINTEXT only, each in a
//! rack of its own (`rack-<id>`), for tests that move replicas between brokers.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::certs::{CertifiedPem, TestCa};
use crate::error::TestEnvError;
use crate::layout::{free_port, kafka_libs, scratch_dir, testenv_file, write};
use crate::process::{Lifetime, ManagedProcess, ProcessSpec};

const TEMPLATE: &str = include_str!("../testenv/kafka/server.properties.template");
/// Kafka UUID (16 bytes, URL-safe base64) of every test cluster; each has its own data dir.
const CLUSTER_ID: &str = "c3RyaW16aS10ZXN0ZW52MQ";
/// Name of the SCRAM super user created at format time.
pub const ADMIN_USER: &str = "admin";
/// Password of [`ADMIN_USER`].
pub const ADMIN_PASSWORD: &str = "admin-secret";
/// Common name of a TLS client certificate that the broker treats as a super user.
pub const TLS_ADMIN_USER: &str = "testenv-admin";
/// The line the broker logs once it serves requests.
const READY_LINE: &str = "Kafka Server started";
const JVM_FLAGS: [&str; 4] = [
    "-Xms64m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
];
/// The JVM of each node of a [`KafkaCluster`]: smaller, since several run at once.
const CLUSTER_JVM_FLAGS: [&str; 4] = [
    "-Xms64m",
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
];
/// How many times to pick new ports when another process took one meanwhile.
const START_ATTEMPTS: usize = 3;
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// How a client reaches one listener of the broker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    /// `plain`, `scram` or `tls`.
    pub name: &'static str,
    /// `host:port` to bootstrap from.
    pub bootstrap: String,
    /// Kafka's `security.protocol` for this listener.
    pub security_protocol: &'static str,
}

/// A running broker, stopped when dropped.
#[derive(Debug)]
pub struct KafkaBroker {
    process: ManagedProcess,
    ca: TestCa,
    server_cert_pem: String,
    ca_file: PathBuf,
    ca_key_file: PathBuf,
    listeners: [Listener; 3],
    controller: String,
    _data: tempfile::TempDir,
}

impl KafkaBroker {
    /// Formats fresh storage and starts a broker, logging to `log_dir`.
    pub fn start(log_dir: &Path) -> Result<Self, TestEnvError> {
        let libs = kafka_libs()?;
        require_java()?;
        let mut last_error = None;
        for _ in 0..START_ATTEMPTS {
            match Self::start_once(&libs, log_dir) {
                Ok(broker) => return Ok(broker),
                Err(error) => last_error = Some(error),
            }
        }
        Err(last_error.unwrap_or_else(|| TestEnvError::Certificate("no attempt made".into())))
    }

    fn start_once(libs: &Path, log_dir: &Path) -> Result<Self, TestEnvError> {
        let data = scratch_dir("kafka")?;
        let ca = TestCa::new("strimzi-testenv-kafka-ca")?;
        let server = ca.server("kafka", &[])?;
        let keystore = data.path().join("keystore.pem");
        let truststore = data.path().join("truststore.pem");
        write(&keystore, &format!("{}{}", server.key, server.cert))?;
        write(&truststore, &ca.cert_pem())?;
        let ca_key_file = data.path().join("ca.key.pem");
        write(&ca_key_file, &ca.key_pem())?;
        let ports = [free_port()?, free_port()?, free_port()?, free_port()?];
        let properties = TEMPLATE
            .replace("@PLAIN_PORT@", &ports[0].to_string())
            .replace("@SCRAM_PORT@", &ports[1].to_string())
            .replace("@TLS_PORT@", &ports[2].to_string())
            .replace("@CONTROLLER_PORT@", &ports[3].to_string())
            .replace("@DATA_DIR@", &data.path().display().to_string())
            .replace("@TLS_KEYSTORE_PEM@", &keystore.display().to_string())
            .replace("@TLS_TRUSTSTORE_PEM@", &truststore.display().to_string());
        let config = data.path().join("server.properties");
        write(&config, &properties)?;
        let scram_users = ["SCRAM-SHA-512", "SCRAM-SHA-256"].map(|mechanism| {
            [
                "--add-scram".to_owned(),
                format!("{mechanism}=[name={ADMIN_USER},password={ADMIN_PASSWORD}]"),
            ]
        });
        format_storage(libs, &config, log_dir, scram_users.as_flattened())?;

        let spec = ProcessSpec::new("kafka", "java", log_dir)
            .args(JVM_FLAGS)
            .args(log_properties(log_dir, "kafka-server"))
            .args([
                "-cp".into(),
                classpath(libs),
                "kafka.Kafka".into(),
                config.into_os_string(),
            ]);
        let process = ManagedProcess::start(&spec, Lifetime::Tied)?;
        wait_started(&process, &log_dir.join("kafka-server.log"))?;
        let bootstrap = |port: u16| format!("127.0.0.1:{port}");
        Ok(Self {
            process,
            server_cert_pem: server.cert,
            ca_file: truststore,
            ca_key_file,
            ca,
            listeners: [
                Listener {
                    name: "plain",
                    bootstrap: bootstrap(ports[0]),
                    security_protocol: "PLAINTEXT",
                },
                Listener {
                    name: "scram",
                    bootstrap: bootstrap(ports[1]),
                    security_protocol: "SASL_PLAINTEXT",
                },
                Listener {
                    name: "tls",
                    bootstrap: bootstrap(ports[2]),
                    security_protocol: "SSL",
                },
            ],
            controller: bootstrap(ports[3]),
            _data: data,
        })
    }

    /// `host:port` of the node's KRaft controller listener (PLAINTEXT, every client the super
    /// user `User:ANONYMOUS`), which serves controller requests but no metadata.
    pub fn controller_listener(&self) -> &str {
        &self.controller
    }

    /// The PLAINTEXT, SCRAM and TLS listeners, in that order. On PLAINTEXT every client is
    /// the super user `User:ANONYMOUS`; test authorization through the other two.
    pub fn listeners(&self) -> &[Listener; 3] {
        &self.listeners
    }

    /// The listener named `name` (`plain`, `scram` or `tls`).
    pub fn listener(&self, name: &str) -> Option<&Listener> {
        self.listeners.iter().find(|listener| listener.name == name)
    }

    /// An rdkafka client configuration for the PLAINTEXT listener (the super user).
    pub fn plain_client_config(&self) -> rdkafka::ClientConfig {
        let mut config = rdkafka::ClientConfig::new();
        if let Some(plain) = self.listener("plain") {
            config.set("bootstrap.servers", &plain.bootstrap);
        }
        config
    }

    /// The CA that signed the broker's certificate and signs client certificates, PEM.
    pub fn ca_pem(&self) -> String {
        self.ca.cert_pem()
    }

    /// The certificate the broker's TLS listener presents, PEM.
    pub fn server_cert_pem(&self) -> &str {
        &self.server_cert_pem
    }

    /// The private key of that CA, PEM: with [`Self::ca_pem`] it can serve as a clients CA
    /// whose certificates the TLS listener accepts.
    pub fn ca_key_pem(&self) -> String {
        self.ca.key_pem()
    }

    /// A file holding [`Self::ca_key_pem`], for running the user operator by hand.
    pub fn ca_key_file(&self) -> &Path {
        &self.ca_key_file
    }

    /// A renewed certificate of that CA (same name and key), PEM; the broker keeps trusting
    /// certificates it signs.
    pub fn renewed_ca_pem(&self) -> Result<String, TestEnvError> {
        self.ca.renewed_pem()
    }

    /// A file holding [`Self::ca_pem`], for clients that want a path.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }

    /// A client certificate with `CN=<user>`, which the broker sees as `User:CN=<user>`
    /// (the principal Strimzi's User Operator uses for TLS users).
    pub fn client_certificate(&self, user: &str) -> Result<CertifiedPem, TestEnvError> {
        self.ca.client(user, None)
    }

    /// The broker's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }
}

/// Waits until the node whose server log is `server_log` serves requests.
fn wait_started(process: &ManagedProcess, server_log: &Path) -> Result<(), TestEnvError> {
    process.wait_ready(READY_TIMEOUT, || {
        let text = std::fs::read_to_string(server_log).unwrap_or_default();
        if text.contains(READY_LINE) {
            Ok(())
        } else {
            Err(format!("no \"{READY_LINE}\" in {}", server_log.display()))
        }
    })
}

/// A running cluster of combined broker and controller nodes, stopped when dropped.
#[derive(Debug)]
pub struct KafkaCluster {
    nodes: Vec<ManagedProcess>,
    bootstrap: String,
    _data: tempfile::TempDir,
}

impl KafkaCluster {
    /// Formats fresh storage and starts `size` nodes (ids 1 to `size`), logging to `log_dir`
    /// as `kafka-node-<id>.log` (output) and `kafka-node-<id>-server.log` (Kafka's log).
    pub fn start(size: usize, log_dir: &Path) -> Result<Self, TestEnvError> {
        let libs = kafka_libs()?;
        require_java()?;
        let mut last_error = None;
        for _ in 0..START_ATTEMPTS {
            match Self::start_once(&libs, size, log_dir) {
                Ok(cluster) => return Ok(cluster),
                Err(error) => last_error = Some(error),
            }
        }
        Err(last_error.unwrap_or_else(|| TestEnvError::Certificate("no attempt made".into())))
    }

    fn start_once(libs: &Path, size: usize, log_dir: &Path) -> Result<Self, TestEnvError> {
        let data = scratch_dir("kafka-cluster")?;
        let ports = (1..=size)
            .map(|id| Ok((id, free_port()?, free_port()?)))
            .collect::<Result<Vec<_>, TestEnvError>>()?;
        let voters = ports
            .iter()
            .map(|(id, _, controller)| format!("{id}@127.0.0.1:{controller}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut nodes = Vec::with_capacity(size);
        for (id, plain, controller) in &ports {
            let dir = data.path().join(format!("node-{id}"));
            let config = dir.join("server.properties");
            std::fs::create_dir_all(&dir).map_err(|error| TestEnvError::io(&dir, error))?;
            write(
                &config,
                &node_properties(*id, *plain, *controller, &voters, &dir),
            )?;
            format_storage(libs, &config, log_dir, &[])?;
            let name = format!("kafka-node-{id}");
            let spec = ProcessSpec::new(&name, "java", log_dir)
                .args(CLUSTER_JVM_FLAGS)
                .args(log_properties(log_dir, &format!("{name}-server")))
                .args([
                    "-cp".into(),
                    classpath(libs),
                    "kafka.Kafka".into(),
                    config.into_os_string(),
                ]);
            nodes.push(ManagedProcess::start(&spec, Lifetime::Tied)?);
        }
        for ((id, _, _), node) in ports.iter().zip(&nodes) {
            wait_started(node, &log_dir.join(format!("kafka-node-{id}-server.log")))?;
        }
        Ok(Self {
            nodes,
            bootstrap: ports
                .iter()
                .map(|(_, plain, _)| format!("127.0.0.1:{plain}"))
                .collect::<Vec<_>>()
                .join(","),
            _data: data,
        })
    }

    /// `host:port` of every node's PLAINTEXT listener, comma-separated.
    pub fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    /// The nodes' process ids.
    pub fn pids(&self) -> Vec<u32> {
        self.nodes.iter().map(ManagedProcess::pid).collect()
    }
}

/// The configuration of node `id` of a [`KafkaCluster`].
fn node_properties(id: usize, plain: u16, controller: u16, voters: &str, dir: &Path) -> String {
    format!(
        "process.roles=broker,controller
node.id={id}
broker.rack=rack-{id}
controller.quorum.voters={voters}
controller.listener.names=CONTROLLER
listeners=PLAIN://127.0.0.1:{plain},CONTROLLER://127.0.0.1:{controller}
advertised.listeners=PLAIN://127.0.0.1:{plain}
listener.security.protocol.map=PLAIN:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAIN
log.dirs={}
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
background.threads=2
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=2097152
",
        dir.join("kraft-logs").display()
    )
}

fn format_storage(
    libs: &Path,
    config: &Path,
    log_dir: &Path,
    extra: &[String],
) -> Result<(), TestEnvError> {
    let output = Command::new("java")
        .args(JVM_FLAGS)
        .args(log_properties(log_dir, "kafka-storage"))
        .arg("-cp")
        .arg(classpath(libs))
        .args(["kafka.tools.StorageTool", "format", "--config"])
        .arg(config)
        .args(["--cluster-id", CLUSTER_ID])
        .args(extra)
        .output()
        .map_err(|error| TestEnvError::io("java", error))?;
    if output.status.success() {
        return Ok(());
    }
    Err(TestEnvError::Start {
        component: "kafka storage format".to_owned(),
        message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        log: log_dir.join("kafka-storage.log"),
    })
}

fn classpath(libs: &Path) -> std::ffi::OsString {
    libs.join("*").into_os_string()
}

fn log_properties(log_dir: &Path, name: &str) -> [String; 3] {
    [
        format!(
            "-Dlog4j2.configurationFile={}",
            testenv_file("kafka/log4j2.properties").display()
        ),
        format!("-Dkafka.logs.dir={}", log_dir.display()),
        format!("-Dkafka.log.name={name}"),
    ]
}

fn require_java() -> Result<(), TestEnvError> {
    match Command::new("java").arg("-version").output() {
        Ok(output) if output.status.success() => Ok(()),
        _ => Err(TestEnvError::MissingTool {
            program: "java".to_owned(),
            install: "apt-get install -y openjdk-17-jre-headless".to_owned(),
        }),
    }
}
