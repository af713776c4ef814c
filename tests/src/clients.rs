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

    /// Like [`Self::consume`], then commits the offsets read for consumer group `group`.
    pub fn consume_in_group(
        &self,
        topic: &str,
        count: usize,
        group: &str,
    ) -> Result<Vec<String>, String> {
        let count = count.to_string();
        self.run(&[
            "consume", "--topic", topic, "--count", &count, "--group", group,
        ])
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

    /// Creates topic `topic` with one partition on the brokers `replicas` (the first its
    /// preferred leader) and the options `configs` (`key=value` each), with the topic tool.
    pub fn create_topic(
        &self,
        topic: &str,
        replicas: &[i32],
        configs: &[&str],
    ) -> Result<(), String> {
        let assignment: Vec<String> = replicas.iter().map(ToString::to_string).collect();
        let assignment = assignment.join(":");
        let mut args = vec![
            "--create",
            "--topic",
            topic,
            "--replica-assignment",
            &assignment,
        ];
        for config in configs {
            args.extend(["--config", config]);
        }
        self.run("org.apache.kafka.tools.TopicCommand", &args)
            .map(drop)
    }

    /// Moves every replica on broker `broker` to a broker of `remaining` that the partition
    /// has no replica on yet (the least used so far), or drops it when there is none, with
    /// Kafka's reassignment tool, the plan written to `plan_file`; waits up to `timeout` for
    /// the reassignment to complete.
    pub fn remove_replicas_of(
        &self,
        broker: i32,
        remaining: &[i32],
        timeout: std::time::Duration,
        plan_file: &Path,
    ) -> Result<(), String> {
        let mut given: std::collections::BTreeMap<i32, usize> =
            remaining.iter().map(|id| (*id, 0)).collect();
        let partitions: Vec<String> = self
            .assignments()?
            .into_iter()
            .filter(|found| found.replicas.contains(&broker))
            .map(|found| {
                let target = given
                    .iter()
                    .filter(|(id, _)| !found.replicas.contains(id))
                    .min_by_key(|(_, count)| **count)
                    .map(|(id, _)| *id);
                if let Some(id) = target {
                    *given.entry(id).or_default() += 1;
                }
                let kept: Vec<String> = found
                    .replicas
                    .iter()
                    .filter_map(|id| if *id == broker { target } else { Some(*id) })
                    .map(|id| id.to_string())
                    .collect();
                format!(
                    r#"{{"topic":"{}","partition":{},"replicas":[{}]}}"#,
                    found.topic,
                    found.partition,
                    kept.join(",")
                )
            })
            .collect();
        if partitions.is_empty() {
            return Ok(());
        }
        let plan = format!(r#"{{"version":1,"partitions":[{}]}}"#, partitions.join(","));
        std::fs::write(plan_file, plan)
            .map_err(|error| format!("writing {}: {error}", plan_file.display()))?;
        let plan_file = plan_file.to_string_lossy();
        let tool = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";
        self.run(tool, &["--reassignment-json-file", &plan_file, "--execute"])?;
        let started = std::time::Instant::now();
        loop {
            let verified = self.run(tool, &["--reassignment-json-file", &plan_file, "--verify"])?;
            if !verified.contains("is still in progress") {
                return Ok(());
            }
            if started.elapsed() > timeout {
                return Err(format!(
                    "reassignment not complete in {timeout:?}: {verified}"
                ));
            }
            std::thread::sleep(std::time::Duration::from_secs(2));
        }
    }

    /// The offsets consumer group `group` has committed, by topic and partition, from Kafka's
    /// consumer group tool (partitions without a committed offset left out).
    pub fn group_offsets(&self, group: &str) -> Result<Vec<CommittedOffset>, String> {
        let output = self.run(
            "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
            &["--describe", "--offsets", "--group", group],
        )?;
        // Rows: GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID ...
        Ok(output
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                match fields.as_slice() {
                    [name, topic, partition, offset, ..] if *name == group => {
                        Some(CommittedOffset {
                            topic: (*topic).to_owned(),
                            partition: partition.parse().ok()?,
                            offset: offset.parse().ok()?,
                        })
                    }
                    _ => None,
                }
            })
            .collect())
    }

    /// Every partition's replicas and in-sync replicas, from the topic tool.
    pub fn assignments(&self) -> Result<Vec<PartitionReplicas>, String> {
        let output = self.run("org.apache.kafka.tools.TopicCommand", &["--describe"])?;
        let mut found = Vec::new();
        for line in output.lines() {
            // `Name: value` pairs; an empty value is followed by the next name.
            let field = |name: &str| {
                let mut words = line.split_whitespace();
                words.find(|word| *word == name)?;
                words.next().filter(|word| !word.ends_with(':'))
            };
            let (Some(topic), Some(partition), Some(replicas)) =
                (field("Topic:"), field("Partition:"), field("Replicas:"))
            else {
                continue;
            };
            let ids = |list: Option<&str>| {
                list.unwrap_or_default()
                    .split(',')
                    .filter(|id| !id.is_empty())
                    .map(|id| {
                        id.parse::<i32>()
                            .map_err(|error| format!("{line}: {error}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
            };
            found.push(PartitionReplicas {
                topic: topic.to_owned(),
                partition: partition
                    .parse()
                    .map_err(|error| format!("{line}: {error}"))?,
                replicas: ids(Some(replicas))?,
                in_sync: ids(field("Isr:"))?,
            });
        }
        Ok(found)
    }
}

/// An offset a consumer group committed, as Kafka's consumer group tool describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommittedOffset {
    /// The topic.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
    /// The offset of the next record the group reads.
    pub offset: i64,
}

/// One partition as Kafka's topic tool describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionReplicas {
    /// The topic.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
    /// The brokers holding a replica, the preferred leader first.
    pub replicas: Vec<i32>,
    /// The replicas in sync with the leader.
    pub in_sync: Vec<i32>,
}
