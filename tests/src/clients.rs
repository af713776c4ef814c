//! Kafka clients inside the real nodes' network: `strimzi-kafka-client` (rdkafka) run with
//! `ip netns exec`, where the brokers' advertised `*.svc` names resolve through the
//! environment's CoreDNS exactly as they do for pods; and Kafka's own command-line tools,
//! for what only they do. Polls go through `strimzi-kafka-client`: a run of it costs
//! milliseconds of CPU, a run of a Kafka tool a JVM start of seconds.

use std::ffi::OsString;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;
use std::time::{Duration, Instant};

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

    /// Reads every record `topic` holds (each partition to the high watermark it had when
    /// reading began), returning their values: a record stored twice comes back twice.
    pub fn consume_all(&self, topic: &str) -> Result<Vec<String>, String> {
        self.run(&["consume-all", "--topic", topic])
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
        Ok((parsed(&output, "partitions")?, parsed(&output, "replicas")?))
    }

    /// Every partition's replicas and in-sync replicas, internal topics' too, from the
    /// brokers' metadata.
    pub fn assignments(&self) -> Result<Vec<PartitionReplicas>, String> {
        self.run(&["assignments"])?
            .lines()
            .map(partition_line)
            .collect()
    }

    /// The offsets consumer group `group` has committed, by topic and partition (partitions
    /// without a committed offset left out), as the group's coordinator answers them.
    pub fn group_offsets(&self, group: &str) -> Result<Vec<CommittedOffset>, String> {
        self.run(&["group-offsets", "--group", group])?
            .lines()
            .map(offset_line)
            .collect()
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
        let mut log_file = stop_file.as_os_str().to_owned();
        log_file.push("-producer.log");
        let log_file = PathBuf::from(log_file);
        let log = std::fs::File::create(&log_file)
            .map_err(|error| format!("creating {}: {error}", log_file.display()))?;
        let child = self
            .command()
            .args(["produce-steadily", "--topic", topic, "--per-second"])
            .arg(per_second.to_string())
            .arg("--stop-file")
            .arg(stop_file)
            .stdout(std::process::Stdio::piped())
            // A file, not a pipe: librdkafka's log would fill a pipe nobody reads until the
            // end, and the producer would block on it.
            .stderr(log)
            .spawn()
            .map_err(|error| format!("running {}: {error}", self.binary.display()))?;
        Ok(SteadyProducer {
            child,
            stop_file: stop_file.to_path_buf(),
            log_file,
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

/// How many of a steady producer's failures its report keeps.
const FAILURES_REPORTED: usize = 5;

/// A producer started by [`ClusterClient::produce_steadily`].
#[derive(Debug)]
pub struct SteadyProducer {
    child: std::process::Child,
    stop_file: PathBuf,
    /// The producer's stderr: its failures and librdkafka's log.
    log_file: PathBuf,
}

/// What a steady producer saw.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyReport {
    /// The values of the acknowledged records, in the order acknowledged.
    pub acked: Vec<String>,
    /// Records that failed for good.
    pub errors: usize,
    /// The first failures, as the client described them (record and error).
    pub first_failures: Vec<String>,
    /// 99th percentile of the time from send to acknowledgement, ms.
    pub p99_ms: f64,
    /// Longest time from send to acknowledgement, ms.
    pub max_ms: f64,
    /// The file with the producer's stderr (librdkafka's log, timed).
    pub log_file: PathBuf,
    /// The last warnings and errors librdkafka logged.
    pub last_warnings: Vec<String>,
}

/// How many lost, duplicated or unexpected values [`SteadyReport::check_read_back`] names.
const VALUES_REPORTED: usize = 10;

/// Whether a read-back may hold an acknowledged record more than once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redelivery {
    /// Each acknowledged record exactly once: no broker crashed while the producer ran, so
    /// its idempotent retries cannot write a record twice.
    Refused,
    /// A broker was killed while the producer ran. A request in flight to it times out, and
    /// an idempotent producer that then bumps its epoch (librdkafka does, KIP-360) sends the
    /// batch again under the new epoch, which the brokers cannot tell from a new batch: the
    /// records may be written twice (at least once, never lost). Duplicates are counted,
    /// not failed.
    AfterCrash,
}

impl SteadyReport {
    /// One line for a failed assertion: counts, the first failures and the range of the
    /// acknowledged records (not every value).
    pub fn summary(&self) -> String {
        format!(
            "{} acknowledged ({} to {}), {} failed, first failures: {:?}; p99 {:.0} ms, max {:.0} ms; librdkafka's last warnings {:?} (its whole log: {})",
            self.acked.len(),
            self.acked.first().map_or("-", String::as_str),
            self.acked.last().map_or("-", String::as_str),
            self.errors,
            self.first_failures,
            self.p99_ms,
            self.max_ms,
            self.last_warnings,
            self.log_file.display()
        )
    }

    /// Checks `read` (every value read back from the topic, other producers' records
    /// included) against the acknowledged records: each acknowledged record read (exactly
    /// once unless `redelivery` allows more), and no `steady-` record that was not
    /// acknowledged. Otherwise says which were lost (acknowledged, not read), duplicated
    /// (read more than once) and unexpected (read, never acknowledged), counted, with the
    /// first few named. The duplicates allowed, named.
    pub fn check_read_back(
        &self,
        read: &[String],
        redelivery: Redelivery,
    ) -> Result<Vec<String>, String> {
        let mut times_read: std::collections::BTreeMap<&str, usize> = Default::default();
        for value in read.iter().filter(|value| value.starts_with("steady-")) {
            *times_read.entry(value).or_default() += 1;
        }
        let acked: std::collections::BTreeSet<&str> =
            self.acked.iter().map(String::as_str).collect();
        let lost: Vec<&str> = acked
            .iter()
            .copied()
            .filter(|value| !times_read.contains_key(value))
            .collect();
        let duplicated: Vec<String> = times_read
            .iter()
            .filter(|(_, times)| **times > 1)
            .map(|(value, times)| format!("{value} ({times} times)"))
            .collect();
        let unexpected: Vec<&str> = times_read
            .keys()
            .copied()
            .filter(|value| !acked.contains(value))
            .collect();
        let duplicates_allowed = redelivery == Redelivery::AfterCrash;
        if lost.is_empty() && unexpected.is_empty() && (duplicated.is_empty() || duplicates_allowed)
        {
            return Ok(duplicated);
        }
        let named = |values: Vec<String>| {
            format!(
                "{} {:?}",
                values.len(),
                values.iter().take(VALUES_REPORTED).collect::<Vec<_>>()
            )
        };
        let owned = |values: Vec<&str>| values.into_iter().map(str::to_owned).collect();
        Err(format!(
            "of {} acknowledged records, {} read back: lost {}, duplicated {}, unexpected {}",
            acked.len(),
            times_read.len(),
            named(owned(lost)),
            named(duplicated),
            named(owned(unexpected))
        ))
    }
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
        let stderr = std::fs::read_to_string(&self.log_file)
            .map_err(|error| format!("reading {}: {error}", self.log_file.display()))?;
        if !output.status.success() {
            let last: Vec<&str> = stderr.lines().rev().take(FAILURES_REPORTED).collect();
            return Err(format!(
                "the producer failed (its log: {}): {last:?}",
                self.log_file.display()
            ));
        }
        let mut lines = stdout.lines();
        let summary = lines.next().unwrap_or_default();
        let first_failures = stderr
            .lines()
            .filter_map(|line| line.strip_prefix("delivery failed: "))
            .take(FAILURES_REPORTED)
            .map(str::to_owned)
            .collect();
        let mut last_warnings: Vec<String> = stderr
            .lines()
            .filter(|line| is_librdkafka_warning(line))
            .rev()
            .take(FAILURES_REPORTED)
            .map(str::to_owned)
            .collect();
        last_warnings.reverse();
        Ok(SteadyReport {
            errors: parsed(summary, "errors")?,
            first_failures,
            p99_ms: parsed(summary, "p99_ms")?,
            max_ms: parsed(summary, "max_ms")?,
            acked: lines.map(str::to_owned).collect(),
            log_file: self.log_file,
            last_warnings,
        })
    }
}

/// Whether a line of the client's stderr is a librdkafka log line of level warning or worse
/// (`librdkafka <seconds>s <level> <facility>: <message>`).
fn is_librdkafka_warning(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next() == Some("librdkafka")
        && matches!(
            words.nth(1),
            Some("Warning" | "Error" | "Critical" | "Alert" | "Emerg")
        )
}

/// A line of the client's `assignments`.
fn partition_line(line: &str) -> Result<PartitionReplicas, String> {
    Ok(PartitionReplicas {
        topic: field(line, "topic")?.to_owned(),
        partition: parsed(line, "partition")?,
        replicas: ids(line, "replicas")?,
        in_sync: ids(line, "isr")?,
    })
}

/// A line of the client's `group-offsets`.
fn offset_line(line: &str) -> Result<CommittedOffset, String> {
    Ok(CommittedOffset {
        topic: field(line, "topic")?.to_owned(),
        partition: parsed(line, "partition")?,
        offset: parsed(line, "offset")?,
    })
}

/// The value of the word `<name>=<value>` in `line`, the client's output format.
fn field<'a>(line: &'a str, name: &str) -> Result<&'a str, String> {
    line.split_whitespace()
        .find_map(|word| word.strip_prefix(name)?.strip_prefix('='))
        .ok_or_else(|| format!("no {name}= in: {line}"))
}

/// [`field`], parsed.
fn parsed<T>(line: &str, name: &str) -> Result<T, String>
where
    T: FromStr,
    T::Err: Display,
{
    field(line, name)?
        .parse()
        .map_err(|error| format!("{name} in {line}: {error}"))
}

/// [`field`] as a list of broker ids, `a,b,c` (empty: none).
fn ids(line: &str, name: &str) -> Result<Vec<i32>, String> {
    field(line, name)?
        .split(',')
        .filter(|id| !id.is_empty())
        .map(|id| {
            id.parse()
                .map_err(|error| format!("{name} in {line}: {error}"))
        })
        .collect()
}

/// The admin client settings Kafka's tools get (`--command-config`). With the defaults (30 s
/// a request, 60 s a call) a tool on a loaded machine failed with "Timed out waiting for a
/// node assignment" before its JVM had reached a broker; these give it three minutes.
const TOOLS_ADMIN_CONFIG: &str = "\
default.api.timeout.ms=180000
request.timeout.ms=60000
socket.connection.setup.timeout.ms=30000
socket.connection.setup.timeout.max.ms=60000
";

/// JVM options for the tools' short runs: the C1 compiler only and the serial collector, so
/// that a start takes a fraction of the CPU the default C2 and G1 threads do.
const TOOLS_JVM_OPTIONS: [&str; 2] = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"];

/// How often [`KafkaTools::remove_replicas_of`] starts a reassignment whose tool timed out.
const EXECUTE_ATTEMPTS: usize = 3;

/// Kafka's own command-line tools, from the Kafka jars the environment installs, run with
/// `java` inside the nodes' network against one bootstrap address. A JVM start each: for
/// one-shot steps; polls go through [`ClusterClient`].
#[derive(Clone, Debug)]
pub struct KafkaTools {
    namespace: String,
    libs: PathBuf,
    bootstrap: String,
    /// [`TOOLS_ADMIN_CONFIG`] in a file, removed with the last clone.
    admin_config: std::sync::Arc<tempfile::TempPath>,
}

impl KafkaTools {
    /// The tools for `bootstrap` (plaintext) inside `network`.
    pub fn new(network: &NodeNetwork, bootstrap: &str) -> Result<Self, crate::error::TestEnvError> {
        let admin_config = tempfile::Builder::new()
            .prefix("kafka-tools-")
            .suffix(".properties")
            .tempfile()
            .and_then(|mut file| {
                std::io::Write::write_all(&mut file, TOOLS_ADMIN_CONFIG.as_bytes())?;
                Ok(file.into_temp_path())
            })
            .map_err(|error| crate::error::TestEnvError::io(std::env::temp_dir(), error))?;
        Ok(Self {
            namespace: network.name().to_owned(),
            libs: crate::layout::kafka_libs()?,
            bootstrap: bootstrap.to_owned(),
            admin_config: std::sync::Arc::new(admin_config),
        })
    }

    fn run(&self, class: &str, args: &[&str]) -> Result<String, String> {
        let output = Command::new("ip")
            .args(["netns", "exec", &self.namespace, "java"])
            .args(TOOLS_JVM_OPTIONS)
            .arg("-cp")
            .arg(self.libs.join("*"))
            .arg(class)
            .args(["--bootstrap-server", &self.bootstrap, "--command-config"])
            .arg(self.admin_config.as_os_str())
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

    /// The metadata quorum's leader and the node IDs of its voters, with Kafka's quorum
    /// tool (`kafka-metadata-quorum.sh describe --status`).
    pub fn quorum_status(&self) -> Result<(i32, std::collections::BTreeSet<i32>), String> {
        let output = self.run(
            "org.apache.kafka.tools.MetadataQuorumCommand",
            &["describe", "--status"],
        )?;
        let leader = output
            .lines()
            .find_map(|line| line.trim_start().strip_prefix("LeaderId:"))
            .and_then(|id| id.trim().parse().ok())
            .ok_or_else(|| format!("no LeaderId in: {output}"))?;
        let line = output
            .lines()
            .find(|line| line.trim_start().starts_with("CurrentVoters:"))
            .ok_or_else(|| format!("no CurrentVoters in: {output}"))?;
        line.split("\"id\":")
            .skip(1)
            .map(|rest| {
                let digits: String = rest
                    .trim_start()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits
                    .parse()
                    .map_err(|_| format!("no voter ID in: {line}"))
            })
            .collect::<Result<_, _>>()
            .map(|voters| (leader, voters))
    }

    /// The finalized level of feature `name` (0 when none is finalized), with Kafka's
    /// feature tool (`kafka-features.sh describe`).
    pub fn finalized_feature(&self, name: &str) -> Result<i16, String> {
        let output = self.run("org.apache.kafka.tools.FeatureCommand", &["describe"])?;
        let Some(line) = output.lines().find(|line| {
            line.split_whitespace().nth(1) == Some(name) && line.starts_with("Feature:")
        }) else {
            return Ok(0);
        };
        line.split_whitespace()
            .skip_while(|word| *word != "FinalizedVersionLevel:")
            .nth(1)
            .and_then(|level| level.parse().ok())
            .ok_or_else(|| format!("no finalized level in: {line}"))
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
    /// every planned partition to have exactly its new replicas, as `client` reads them.
    ///
    /// The tool's admin client reaches a broker in several calls before the one that starts
    /// the reassignment; when one of them times out, the same plan is executed again, with
    /// `--additional` in case the timed-out call had started it: a plan submitted twice asks
    /// for the same replicas twice, which Kafka takes as one reassignment (or none, when it is
    /// done). A plan naming a broker that is not live (fenced while its controller restarts)
    /// is executed again for up to 2 minutes. Any other failure, or a timeout on the last
    /// attempt, is returned. The wait then
    /// checks the replicas themselves, so a reassignment towards other brokers fails it.
    pub fn remove_replicas_of(
        &self,
        client: &ClusterClient,
        broker: i32,
        remaining: &[i32],
        timeout: Duration,
        plan_file: &Path,
    ) -> Result<(), String> {
        let plan = removal_plan(&client.assignments()?, broker, remaining);
        if plan.is_empty() {
            return Ok(());
        }
        std::fs::write(plan_file, plan_json(&plan))
            .map_err(|error| format!("writing {}: {error}", plan_file.display()))?;
        let plan_path = plan_file.to_string_lossy();
        let tool = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";
        let brokers_deadline = Instant::now() + UNKNOWN_BROKERS_WAIT;
        let mut attempt = 1;
        loop {
            let mut args = vec!["--reassignment-json-file", &plan_path, "--execute"];
            if attempt > 1 {
                args.push("--additional");
            }
            match self.run(tool, &args) {
                Ok(_) => break,
                Err(error) if attempt < EXECUTE_ATTEMPTS && is_client_timeout(&error) => {
                    eprintln!("reassignment attempt {attempt} timed out, executing again: {error}");
                    attempt += 1;
                    std::thread::sleep(Duration::from_secs(5));
                }
                // A broker of the plan is not in the cluster's metadata yet (fenced while
                // its controller restarts): nothing was started, so the same call again.
                Err(error) if is_unknown_broker(&error) && Instant::now() < brokers_deadline => {
                    eprintln!(
                        "reassignment attempt {attempt} named a broker not back yet, waiting: {error}"
                    );
                    std::thread::sleep(Duration::from_secs(5));
                }
                Err(error) => return Err(format!("attempt {attempt}: {error}")),
            }
        }
        // A metadata read every 2 s (milliseconds of CPU, where `--verify` started a JVM);
        // a read that fails is one more "not yet".
        let started = Instant::now();
        loop {
            let outcome = client
                .assignments()
                .and_then(|current| reassigned(&plan, &current));
            match outcome {
                Ok(()) => return Ok(()),
                Err(last) if started.elapsed() > timeout => {
                    return Err(format!("reassignment not complete in {timeout:?}: {last}"));
                }
                Err(_) => std::thread::sleep(Duration::from_secs(2)),
            }
        }
    }
}

/// Whether Kafka's reassignment tool refused a plan because a broker it names is not among
/// the cluster's live brokers.
fn is_unknown_broker(error: &str) -> bool {
    error.contains("Unknown broker id")
}

/// How long a reassignment waits for the brokers of its plan to be live.
const UNKNOWN_BROKERS_WAIT: Duration = Duration::from_secs(120);

/// Whether a Kafka tool failed because its admin client timed out (reaching a broker, or
/// waiting for an answer), rather than because Kafka refused what it asked.
fn is_client_timeout(error: &str) -> bool {
    error.contains("org.apache.kafka.common.errors.TimeoutException")
}

/// A partition and the replicas a reassignment gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Reassignment {
    topic: String,
    partition: i32,
    replicas: Vec<i32>,
}

/// The reassignments that take every replica off `broker`: each to the broker of `remaining`
/// the partition has no replica on and that got the fewest so far (the lowest id on a tie),
/// or none when there is no such broker (the partition loses that replica).
fn removal_plan(
    current: &[PartitionReplicas],
    broker: i32,
    remaining: &[i32],
) -> Vec<Reassignment> {
    let mut given: std::collections::BTreeMap<i32, usize> =
        remaining.iter().map(|id| (*id, 0)).collect();
    current
        .iter()
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
            Reassignment {
                topic: found.topic.clone(),
                partition: found.partition,
                replicas: found
                    .replicas
                    .iter()
                    .filter_map(|id| if *id == broker { target } else { Some(*id) })
                    .collect(),
            }
        })
        .collect()
}

/// `plan` as the reassignment tool reads it.
fn plan_json(plan: &[Reassignment]) -> String {
    let partitions: Vec<serde_json::Value> = plan
        .iter()
        .map(|moved| {
            serde_json::json!({
                "topic": moved.topic,
                "partition": moved.partition,
                "replicas": moved.replicas,
            })
        })
        .collect();
    serde_json::json!({"version": 1, "partitions": partitions}).to_string()
}

/// `Ok` once every partition of `plan` has exactly its planned brokers in `current`; else the
/// partitions that do not, with what they have. While a reassignment runs, a partition's
/// replicas are its new ones and the ones leaving together, so they equal the new ones only
/// once it is complete.
fn reassigned(plan: &[Reassignment], current: &[PartitionReplicas]) -> Result<(), String> {
    use std::collections::BTreeSet;
    let pending: Vec<String> = plan
        .iter()
        .filter_map(|moved| {
            let found = current
                .iter()
                .find(|found| found.topic == moved.topic && found.partition == moved.partition);
            let wanted: BTreeSet<i32> = moved.replicas.iter().copied().collect();
            match found {
                Some(found)
                    if found.replicas.iter().copied().collect::<BTreeSet<_>>() == wanted =>
                {
                    None
                }
                Some(found) => Some(format!(
                    "{}-{}: replicas {:?}, planned {:?}",
                    moved.topic, moved.partition, found.replicas, moved.replicas
                )),
                None => Some(format!(
                    "{}-{}: not in the metadata",
                    moved.topic, moved.partition
                )),
            }
        })
        .collect();
    if pending.is_empty() {
        Ok(())
    } else {
        Err(pending.join("; "))
    }
}

/// An offset a consumer group committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommittedOffset {
    /// The topic.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
    /// The offset of the next record the group reads.
    pub offset: i64,
}

/// One partition's replicas, as the brokers' metadata describes it.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn report(acked: &[&str]) -> SteadyReport {
        SteadyReport {
            acked: acked.iter().map(|value| (*value).to_owned()).collect(),
            errors: 0,
            first_failures: Vec::new(),
            p99_ms: 0.0,
            max_ms: 0.0,
            log_file: PathBuf::new(),
            last_warnings: Vec::new(),
        }
    }

    fn values(read: &[&str]) -> Vec<String> {
        read.iter().map(|value| (*value).to_owned()).collect()
    }

    #[test]
    fn only_librdkafka_warnings_and_worse_are_reported() {
        assert!(is_librdkafka_warning(
            "librdkafka 12.500s Warning FAIL: cc-broker-4:9091/4: Connect failed"
        ));
        assert!(is_librdkafka_warning(
            "librdkafka 1.0s Error ERROR: all brokers down"
        ));
        assert!(!is_librdkafka_warning(
            "librdkafka 1.0s Debug BROKER: connected"
        ));
        assert!(!is_librdkafka_warning("delivery failed: steady-1: Warning"));
    }

    #[test]
    fn records_read_back_once_each_pass_in_any_order_beside_other_records() {
        let acked = report(&["steady-0", "steady-1", "steady-2"]);
        let read = values(&["first-0", "steady-2", "steady-0", "steady-1"]);
        assert_eq!(
            acked.check_read_back(&read, Redelivery::Refused),
            Ok(Vec::new())
        );
    }

    #[test]
    fn lost_duplicated_and_unexpected_records_are_counted_and_named() {
        let acked = report(&["steady-0", "steady-1", "steady-2"]);
        let lost = acked
            .check_read_back(&values(&["steady-0", "steady-2"]), Redelivery::AfterCrash)
            .unwrap_err();
        assert!(
            lost.contains("lost 1 [\"steady-1\"], duplicated 0 [], unexpected 0 []"),
            "{lost}"
        );
        let duplicated = acked
            .check_read_back(
                &values(&["steady-0", "steady-1", "steady-1", "steady-2"]),
                Redelivery::Refused,
            )
            .unwrap_err();
        assert!(
            duplicated.contains("lost 0 [], duplicated 1 [\"steady-1 (2 times)\"]"),
            "{duplicated}"
        );
        let unexpected = acked
            .check_read_back(
                &values(&["steady-0", "steady-1", "steady-2", "steady-3"]),
                Redelivery::AfterCrash,
            )
            .unwrap_err();
        assert!(
            unexpected.contains("unexpected 1 [\"steady-3\"]"),
            "{unexpected}"
        );
    }

    #[test]
    fn duplicates_pass_after_a_crash_and_are_named_but_losses_never_do() {
        let acked = report(&["steady-0", "steady-1", "steady-2"]);
        let twice = values(&["steady-0", "steady-1", "steady-1", "steady-2"]);
        assert_eq!(
            acked.check_read_back(&twice, Redelivery::AfterCrash),
            Ok(vec!["steady-1 (2 times)".to_owned()])
        );
        let twice_and_lost = values(&["steady-0", "steady-0"]);
        let refused = acked
            .check_read_back(&twice_and_lost, Redelivery::AfterCrash)
            .unwrap_err();
        assert!(refused.contains("lost 2"), "{refused}");
    }

    fn partition(topic: &str, partition: i32, replicas: &[i32]) -> PartitionReplicas {
        PartitionReplicas {
            topic: topic.to_owned(),
            partition,
            replicas: replicas.to_vec(),
            in_sync: replicas.to_vec(),
        }
    }

    #[test]
    fn reads_the_lines_the_client_prints() {
        assert_eq!(
            partition_line("topic=__consumer_offsets partition=12 replicas=3,0,1 isr=0,3").unwrap(),
            PartitionReplicas {
                topic: "__consumer_offsets".to_owned(),
                partition: 12,
                replicas: vec![3, 0, 1],
                in_sync: vec![0, 3],
            }
        );
        // No replica in sync (the leader gone): an empty list, not a failure.
        assert_eq!(
            partition_line("topic=t partition=0 replicas=4 isr=")
                .unwrap()
                .in_sync,
            Vec::<i32>::new()
        );
        assert_eq!(
            offset_line("topic=src.mirrored-topic partition=0 offset=5").unwrap(),
            CommittedOffset {
                topic: "src.mirrored-topic".to_owned(),
                partition: 0,
                offset: 5,
            }
        );
        // `partition` is not read from `partitions=`, nor anything from a line without it.
        assert!(parsed::<i32>("partitions=3 replicas=2", "partition").is_err());
        assert_eq!(
            parsed::<usize>("partitions=3 replicas=2", "partitions"),
            Ok(3)
        );
        assert!(partition_line("topic=t replicas=1 isr=1").is_err());
        assert!(partition_line("topic=t partition=0 replicas=1,x isr=1").is_err());
    }

    #[test]
    fn a_removal_plan_spreads_the_replicas_over_brokers_without_one() {
        let current = [
            partition("moved", 0, &[1, 2, 3]),
            partition("moved", 1, &[3, 0]),
            partition("kept", 0, &[0, 1]),
            partition("alone", 0, &[3]),
        ];
        let plan = removal_plan(&current, 3, &[0, 1, 2]);
        let targets: Vec<(&str, i32, Vec<i32>)> = plan
            .iter()
            .map(|moved| {
                (
                    moved.topic.as_str(),
                    moved.partition,
                    moved.replicas.clone(),
                )
            })
            .collect();
        // 0 is the only broker moved-0 lacks; then 1 and 2 have none yet, 1 the lower id;
        // then 2 has none yet. The preferred leader's place is kept.
        assert_eq!(
            targets,
            [
                ("moved", 0, vec![1, 2, 0]),
                ("moved", 1, vec![1, 0]),
                ("alone", 0, vec![2]),
            ]
        );
        // With no broker to take it, the replica is dropped.
        let plan = removal_plan(&[partition("full", 0, &[0, 1, 3])], 3, &[0, 1]);
        assert_eq!(plan[0].replicas, [0, 1]);
        assert!(removal_plan(&current, 5, &[0, 1]).is_empty());
        let json: serde_json::Value = serde_json::from_str(&plan_json(&plan)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"version": 1, "partitions": [
                {"topic": "full", "partition": 0, "replicas": [0, 1]},
            ]})
        );
    }

    #[test]
    fn a_reassignment_is_complete_once_the_replicas_are_the_planned_ones() {
        let plan = removal_plan(&[partition("t", 0, &[1, 3])], 3, &[0, 1]);
        // Running: the new replica and the leaving one side by side.
        let running = reassigned(&plan, &[partition("t", 0, &[1, 0, 3])]).unwrap_err();
        assert!(
            running.contains("t-0: replicas [1, 0, 3], planned [1, 0]"),
            "{running}"
        );
        // Not started, or the partition gone from the metadata.
        assert!(reassigned(&plan, &[partition("t", 0, &[1, 3])]).is_err());
        assert!(reassigned(&plan, &[partition("t", 1, &[1, 0])]).is_err());
        // Elsewhere than planned.
        assert!(reassigned(&plan, &[partition("t", 0, &[1, 2])]).is_err());
        assert_eq!(reassigned(&plan, &[partition("t", 0, &[1, 0])]), Ok(()));
        assert_eq!(reassigned(&plan, &[partition("t", 0, &[0, 1])]), Ok(()));
    }

    #[test]
    fn only_a_client_timeout_is_executed_again() {
        assert!(is_client_timeout(
            "ReassignPartitionsCommand: Error: org.apache.kafka.common.errors.TimeoutException: \
             Timed out waiting for a node assignment. Call: listPartitionReassignments"
        ));
        assert!(!is_client_timeout(
            "ReassignPartitionsCommand: Error: Cannot execute because there is an existing \
             partition assignment."
        ));
        assert!(!is_client_timeout(
            "ReassignPartitionsCommand: Error: org.apache.kafka.common.errors.InvalidReplicaAssignmentException"
        ));
    }
}
