//! Kafka clients inside the real nodes' network: `strimzi-kafka-client` (rdkafka) run with
//! `ip netns exec`, where the brokers' advertised `*.svc` names resolve through the
//! environment's CoreDNS exactly as they do for pods.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::network::NodeNetwork;

/// A client of one bootstrap address, with its security settings.
#[derive(Clone, Debug)]
pub struct ClusterClient {
    binary: PathBuf,
    namespace: String,
    options: Vec<OsString>,
}

impl ClusterClient {
    /// A plaintext client of `bootstrap`, run from `binary` (a built `strimzi-kafka-client`)
    /// inside `network`.
    pub fn new(binary: &Path, network: &NodeNetwork, bootstrap: &str) -> Self {
        Self {
            binary: binary.to_path_buf(),
            namespace: network.name().to_owned(),
            options: vec!["--bootstrap".into(), bootstrap.into()],
        }
    }

    /// Uses TLS, trusting the CA certificate in `ca_file`.
    pub fn tls(mut self, ca_file: &Path) -> Self {
        self.options.push("--ca-file".into());
        self.options.push(ca_file.into());
        self
    }

    /// Authenticates with a client certificate and key (PEM files).
    pub fn certificate(mut self, cert_file: &Path, key_file: &Path) -> Self {
        for (flag, path) in [("--cert-file", cert_file), ("--key-file", key_file)] {
            self.options.push(flag.into());
            self.options.push(path.into());
        }
        self
    }

    /// Gives up on the brokers after `seconds` (60 by default).
    pub fn timeout(mut self, seconds: u64) -> Self {
        self.options.push("--timeout".into());
        self.options.push(seconds.to_string().into());
        self
    }

    /// Produces `count` records `<prefix>-<n>` to `topic`.
    pub fn produce(&self, topic: &str, count: usize, prefix: &str) -> Result<(), String> {
        let count = count.to_string();
        self.run(&[
            "produce", "--topic", topic, "--count", &count, "--prefix", prefix,
        ])
        .map(drop)
    }

    /// Reads `count` records from the beginning of `topic`, returning their values.
    pub fn consume(&self, topic: &str, count: usize) -> Result<Vec<String>, String> {
        let count = count.to_string();
        self.run(&["consume", "--topic", topic, "--count", &count])
            .map(|output| output.lines().map(str::to_owned).collect())
    }

    /// The partition and replica counts of `topic`.
    pub fn describe(&self, topic: &str) -> Result<(usize, usize), String> {
        let output = self.run(&["describe", "--topic", topic])?;
        let field = |name: &str| {
            output
                .split_whitespace()
                .find_map(|word| word.strip_prefix(name)?.parse::<usize>().ok())
                .ok_or_else(|| format!("unexpected output: {output}"))
        };
        Ok((field("partitions=")?, field("replicas=")?))
    }

    /// The value of option `name` as broker `broker` describes it.
    pub fn broker_config(&self, broker: i32, name: &str) -> Result<String, String> {
        let broker = broker.to_string();
        self.run(&["broker-config", "--broker", &broker, "--name", name])
            .map(|output| output.trim().to_owned())
    }

    /// Starts producing records `steady-<n>` to `topic`, `per_second` of them each second,
    /// with an idempotent `acks=all` producer, until [`SteadyProducer::stop`].
    pub fn produce_steadily(
        &self,
        topic: &str,
        per_second: u32,
        stop_file: &Path,
    ) -> Result<SteadyProducer, String> {
        let _ = std::fs::remove_file(stop_file);
        let child = self
            .command()
            .args(["produce-steadily", "--topic", topic, "--per-second"])
            .arg(per_second.to_string())
            .arg("--stop-file")
            .arg(stop_file)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|error| format!("running {}: {error}", self.binary.display()))?;
        Ok(SteadyProducer {
            child,
            stop_file: stop_file.to_path_buf(),
        })
    }

    /// The shell command that runs this client with `action` (for people to copy).
    pub fn command_line(&self, action: &str) -> String {
        let options: Vec<String> = self
            .options
            .iter()
            .map(|option| option.to_string_lossy().into_owned())
            .collect();
        format!(
            "ip netns exec {} {} {} {action}",
            self.namespace,
            self.binary.display(),
            options.join(" ")
        )
    }

    /// The client inside the network, with its options, before the action.
    fn command(&self) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.namespace])
            .arg(&self.binary)
            .args(&self.options);
        command
    }

    fn run(&self, action: &[&str]) -> Result<String, String> {
        let output = self
            .command()
            .args(action)
            .output()
            .map_err(|error| format!("running {}: {error}", self.binary.display()))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
        }
    }
}

/// A producer started by [`ClusterClient::produce_steadily`].
#[derive(Debug)]
pub struct SteadyProducer {
    child: std::process::Child,
    stop_file: PathBuf,
}

/// What a steady producer saw.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyReport {
    /// The values of the acknowledged records, in the order acknowledged.
    pub acked: Vec<String>,
    /// Records that failed for good.
    pub errors: usize,
    /// 99th percentile of the time from send to acknowledgement, ms.
    pub p99_ms: f64,
    /// Longest time from send to acknowledgement, ms.
    pub max_ms: f64,
}

impl SteadyProducer {
    /// Stops producing, waits until every record is delivered or failed, and reports.
    pub fn stop(self) -> Result<SteadyReport, String> {
        std::fs::write(&self.stop_file, b"stop")
            .map_err(|error| format!("writing {}: {error}", self.stop_file.display()))?;
        let output = self
            .child
            .wait_with_output()
            .map_err(|error| format!("waiting for the producer: {error}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
        }
        let mut lines = stdout.lines();
        let summary = lines.next().unwrap_or_default();
        let field = |name: &str| -> Result<f64, String> {
            summary
                .split_whitespace()
                .find_map(|word| word.strip_prefix(name)?.parse().ok())
                .ok_or_else(|| format!("unexpected summary: {summary}"))
        };
        Ok(SteadyReport {
            errors: field("errors=")? as usize,
            p99_ms: field("p99_ms=")?,
            max_ms: field("max_ms=")?,
            acked: lines.map(str::to_owned).collect(),
        })
    }
}

/// Kafka's own command-line tools, from the Kafka jars the environment installs, run with
/// `java` inside the nodes' network against one bootstrap address.
#[derive(Clone, Debug)]
pub struct KafkaTools {
    namespace: String,
    libs: PathBuf,
    bootstrap: String,
}

impl KafkaTools {
    /// The tools for `bootstrap` (plaintext) inside `network`.
    pub fn new(network: &NodeNetwork, bootstrap: &str) -> Result<Self, crate::error::TestEnvError> {
        Ok(Self {
            namespace: network.name().to_owned(),
            libs: crate::layout::kafka_libs()?,
            bootstrap: bootstrap.to_owned(),
        })
    }

    fn run(&self, class: &str, args: &[&str]) -> Result<String, String> {
        let output = Command::new("ip")
            .args(["netns", "exec", &self.namespace, "java", "-cp"])
            .arg(self.libs.join("*"))
            .arg(class)
            .args(["--bootstrap-server", &self.bootstrap])
            .args(args)
            .output()
            .map_err(|error| format!("running java {class}: {error}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if output.status.success() {
            Ok(stdout)
        } else {
            Err(format!(
                "{class}: {stdout}{}",
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }

    /// Sets the options `set` (`key=value,...`) of topic `topic`, keeping its others, with
    /// Kafka's config tool.
    pub fn set_topic_config(&self, topic: &str, set: &str) -> Result<(), String> {
        self.run(
            "kafka.admin.ConfigCommand",
            &[
                "--alter",
                "--entity-type",
                "topics",
                "--entity-name",
                topic,
                "--add-config",
                set,
            ],
        )
        .map(drop)
    }

    /// Every partition's replicas, as `(topic, partition, replicas)`, from the topic tool.
    pub fn assignments(&self) -> Result<Vec<(String, i32, Vec<i32>)>, String> {
        let output = self.run("org.apache.kafka.tools.TopicCommand", &["--describe"])?;
        let mut found = Vec::new();
        for line in output.lines() {
            let field = |name: &str| {
                let mut words = line.split_whitespace();
                words.find(|word| *word == name)?;
                words.next().map(str::to_owned)
            };
            let (Some(topic), Some(partition), Some(replicas)) =
                (field("Topic:"), field("Partition:"), field("Replicas:"))
            else {
                continue;
            };
            let replicas = replicas
                .split(',')
                .map(|id| {
                    id.parse::<i32>()
                        .map_err(|error| format!("{line}: {error}"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let partition = partition
                .parse()
                .map_err(|error| format!("{line}: {error}"))?;
            found.push((topic, partition, replicas));
        }
        Ok(found)
    }
}
