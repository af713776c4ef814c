//! `strimzi-kafka-client`: a small Kafka client (rdkafka) for tests and demos that runs
//! inside the real nodes' network, where the brokers' advertised names resolve:
//!
//! ```text
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap my-cluster-kafka-bootstrap.kafka.svc:9092 produce --topic t --count 3
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap ...:9093 --ca-file ca.crt consume --topic t --count 3
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap ... consume-all --topic t
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap ... describe --topic t
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap ... produce-steadily --topic t --per-second 20 --stop-file /tmp/stop
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap ... broker-config --broker 3 --name log.retention.ms
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap ... assignments
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap ... group-offsets --group g
//! ```
//!
//! `produce` fails unless every record is acknowledged by its delivery report; `consume`
//! prints each value read (every partition from its beginning; with `--group`, the offsets
//! read are then committed for that consumer group, so that its lag can be seen) and fails
//! unless `--count` records arrive in time; `consume-all` prints every record the topic holds
//! (each partition from its beginning to the high watermark it had when reading began, so
//! that a record stored twice shows twice and none is left out); `describe` prints the topic's partition and
//! replica counts as `partitions=<n> replicas=<n>`; `produce-steadily` sends records
//! `steady-<n>` at a steady rate with an idempotent, `acks=all` producer until the stop file
//! exists (a record fails after `--delivery-timeout`, 120 s as in Java's producer; librdkafka's
//! log goes to stderr), then prints
//! `acked=<n> errors=<n> p99_ms=<ms> max_ms=<ms>` and the value of every acknowledged
//! record, one per line; `broker-config` prints the value of one option as the broker
//! describes it; `assignments` prints every partition of every topic (internal ones too) as
//! `topic=<name> partition=<n> replicas=<id,...> isr=<id,...>`, from the brokers' metadata;
//! `group-offsets` prints each offset the consumer group has committed as
//! `topic=<name> partition=<n> offset=<n>`, asked of its coordinator without joining the
//! group. Every failure is one line on stderr and exit status 1.
//!
//! Tests poll with `assignments` and `group-offsets`: a run takes milliseconds of CPU, where
//! Kafka's own tools start a JVM each.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

/// A Kafka client for the brokers of a test environment.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Bootstrap servers, `host:port[,host:port...]`.
    #[arg(long)]
    bootstrap: String,
    /// Use TLS, trusting this CA certificate (PEM), e.g. a cluster's `ca.crt`.
    #[arg(long)]
    ca_file: Option<PathBuf>,
    /// Authenticate with SCRAM-SHA-512 as `user:password` (with `--ca-file`, over TLS).
    #[arg(long)]
    scram: Option<String>,
    /// Authenticate with this client certificate (PEM; needs `--key-file` and `--ca-file`).
    #[arg(long)]
    cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long)]
    key_file: Option<PathBuf>,
    /// How long to wait for the brokers, in seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Produce `count` records `<prefix>-<n>` and wait until all are acknowledged.
    Produce {
        #[arg(long)]
        topic: String,
        #[arg(long, default_value_t = 1)]
        count: usize,
        #[arg(long, default_value = "record")]
        prefix: String,
    },
    /// Read `count` records from the beginning of the topic's partitions and print their values.
    Consume {
        #[arg(long)]
        topic: String,
        #[arg(long, default_value_t = 1)]
        count: usize,
        /// Commit the offsets read for this consumer group.
        #[arg(long)]
        group: Option<String>,
    },
    /// Read every record of the topic, each partition to its high watermark, and print
    /// their values.
    ConsumeAll {
        #[arg(long)]
        topic: String,
    },
    /// Print the topic's partition and replica counts.
    Describe {
        #[arg(long)]
        topic: String,
    },
    /// Produce records at a steady rate until `stop_file` exists, then report.
    ProduceSteadily {
        #[arg(long)]
        topic: String,
        #[arg(long, default_value_t = 20)]
        per_second: u32,
        #[arg(long)]
        stop_file: PathBuf,
        /// How long a record may wait for its acknowledgement before it fails, in seconds:
        /// the Java producer's default `delivery.timeout.ms`.
        #[arg(long, default_value_t = 120)]
        delivery_timeout: u64,
    },
    /// Print the value of the option `name` of broker `broker`.
    BrokerConfig {
        #[arg(long)]
        broker: i32,
        #[arg(long)]
        name: String,
    },
    /// Print the replicas and in-sync replicas of every partition.
    Assignments,
    /// Print the offsets consumer group `group` has committed.
    GroupOffsets {
        #[arg(long)]
        group: String,
    },
}

fn main() -> std::process::ExitCode {
    match run(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("strimzi-kafka-client: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let config = client_config(&args)?;
    let timeout = Duration::from_secs(args.timeout);
    match &args.action {
        Action::Produce {
            topic,
            count,
            prefix,
        } => produce(&config, topic, *count, prefix, timeout),
        Action::Consume {
            topic,
            count,
            group,
        } => consume(&config, topic, *count, group.as_deref(), timeout),
        Action::ConsumeAll { topic } => consume_all(&config, topic, timeout),
        Action::Describe { topic } => describe(&config, topic, timeout),
        Action::ProduceSteadily {
            topic,
            per_second,
            stop_file,
            delivery_timeout,
        } => produce_steadily(
            &config,
            topic,
            *per_second,
            stop_file,
            Duration::from_secs(*delivery_timeout),
        ),
        Action::BrokerConfig { broker, name } => broker_config(&config, *broker, name, timeout),
        Action::Assignments => assignments(&config, timeout),
        Action::GroupOffsets { group } => group_offsets(&config, group, timeout),
    }
}

fn client_config(args: &Args) -> anyhow::Result<ClientConfig> {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", &args.bootstrap);
    let tls = args.ca_file.is_some();
    if let Some(ca_file) = &args.ca_file {
        config.set("ssl.ca.pem", read(ca_file)?);
    }
    let protocol = match (&args.scram, tls) {
        (Some(credentials), _) => {
            let (user, password) = credentials
                .split_once(':')
                .context("--scram takes user:password")?;
            config
                .set("sasl.mechanism", "SCRAM-SHA-512")
                .set("sasl.username", user)
                .set("sasl.password", password);
            if tls { "SASL_SSL" } else { "SASL_PLAINTEXT" }
        }
        (None, true) => "SSL",
        (None, false) => "PLAINTEXT",
    };
    config.set("security.protocol", protocol);
    match (&args.cert_file, &args.key_file) {
        (Some(cert), Some(key)) if tls => {
            config
                .set("ssl.certificate.pem", read(cert)?)
                .set("ssl.key.pem", read(key)?);
        }
        (None, None) => {}
        _ => bail!("--cert-file and --key-file go together, with --ca-file"),
    }
    Ok(config)
}

fn read(path: &PathBuf) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

fn produce(
    config: &ClientConfig,
    topic: &str,
    count: usize,
    prefix: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    // Success is what the delivery reports say: a flush only says that the queue is empty,
    // and a record that failed (a refused handshake, its timeout run out) leaves it too.
    let producer: BaseProducer<Recording> = config
        .clone()
        .set("acks", "all")
        .set("message.timeout.ms", timeout.as_millis().to_string())
        .create_with_context(Recording::new())
        .context("creating the producer")?;
    for index in 0..count {
        let value = format!("{prefix}-{index}");
        let opaque = Box::new((value.clone(), Instant::now()));
        producer
            .send(BaseRecord::<(), _, _>::with_opaque_to(topic, opaque).payload(&value))
            .map_err(|(error, _)| error)
            .with_context(|| format!("queueing {value}"))?;
    }
    producer
        .flush(timeout)
        .with_context(|| format!("producing {count} records to {topic}"))?;
    let deliveries = producer
        .context()
        .deliveries
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(error) = deliveries.errors.first() {
        bail!(
            "{} of {count} records to {topic} were not delivered, the first: {error}",
            deliveries.errors.len()
        );
    }
    if deliveries.acked.len() != count {
        bail!(
            "{} of {count} records to {topic} were acknowledged",
            deliveries.acked.len()
        );
    }
    println!("produced {count} records to {topic}");
    Ok(())
}

fn consume(
    config: &ClientConfig,
    topic: &str,
    count: usize,
    group: Option<&str>,
    timeout: Duration,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let (consumer, _) = assigned_consumer(config, topic, group, timeout)?;
    let mut seen = 0;
    while seen < count {
        if started.elapsed() > timeout {
            bail!("read {seen} of {count} records from {topic} in {timeout:?}");
        }
        // Errors and empty polls are transient while the topic's leaders settle.
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(500)) {
            println!("{}", value_of(&message));
            seen += 1;
        }
    }
    if group.is_some() {
        consumer
            .commit_consumer_state(rdkafka::consumer::CommitMode::Sync)
            .context("committing the offsets read")?;
    }
    Ok(())
}

fn consume_all(config: &ClientConfig, topic: &str, timeout: Duration) -> anyhow::Result<()> {
    let started = Instant::now();
    let (consumer, partitions) = assigned_consumer(config, topic, None, timeout)?;
    // The offset each partition is read up to: its high watermark now.
    let mut unread = std::collections::BTreeMap::new();
    for partition in partitions {
        let (low, high) = consumer
            .fetch_watermarks(topic, partition, timeout)
            .with_context(|| format!("fetching the offsets of {topic}-{partition}"))?;
        if high > low {
            unread.insert(partition, high);
        }
    }
    let mut seen = 0;
    while !unread.is_empty() {
        if started.elapsed() > timeout {
            bail!(
                "read {seen} records from {topic} in {timeout:?}, partitions (and their ends) left: {unread:?}"
            );
        }
        // Errors and empty polls are transient while the topic's leaders settle.
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(500)) {
            let Some(&end) = unread.get(&message.partition()) else {
                continue;
            };
            if message.offset() < end {
                println!("{}", value_of(&message));
                seen += 1;
            }
            if message.offset() + 1 >= end {
                unread.remove(&message.partition());
            }
        }
    }
    Ok(())
}

/// A consumer of every partition of `topic` from its beginning, and the partitions' ids.
/// Assigned rather than subscribed: the group (which librdkafka requires) is never joined, so
/// reading needs no group coordinator (nor the offsets topic a first group would create)
/// unless offsets are committed for `group`.
fn assigned_consumer(
    config: &ClientConfig,
    topic: &str,
    group: Option<&str>,
    timeout: Duration,
) -> anyhow::Result<(BaseConsumer, Vec<i32>)> {
    let consumer: BaseConsumer = config
        .clone()
        .set(
            "group.id",
            group.map_or_else(
                || format!("strimzi-kafka-client-{}", std::process::id()),
                str::to_owned,
            ),
        )
        .set("enable.auto.commit", "false")
        .create()
        .context("creating the consumer")?;
    let metadata = consumer
        .fetch_metadata(Some(topic), timeout)
        .with_context(|| format!("fetching the metadata of {topic}"))?;
    let ids: Vec<i32> = metadata
        .topics()
        .iter()
        .filter(|found| found.name() == topic)
        .flat_map(|found| found.partitions().iter().map(|partition| partition.id()))
        .collect();
    if ids.is_empty() {
        bail!("no partitions of {topic}");
    }
    let mut partitions = TopicPartitionList::new();
    for id in &ids {
        partitions
            .add_partition_offset(topic, *id, Offset::Beginning)
            .context("listing partitions")?;
    }
    consumer
        .assign(&partitions)
        .with_context(|| format!("assigning the partitions of {topic}"))?;
    Ok((consumer, ids))
}

/// A record's value as text (empty without one).
fn value_of(message: &impl Message) -> String {
    message
        .payload()
        .map(|payload| String::from_utf8_lossy(payload).into_owned())
        .unwrap_or_default()
}

fn describe(config: &ClientConfig, topic: &str, timeout: Duration) -> anyhow::Result<()> {
    let consumer: BaseConsumer = config.create().context("creating the client")?;
    let metadata = consumer
        .fetch_metadata(Some(topic), timeout)
        .with_context(|| format!("fetching the metadata of {topic}"))?;
    let Some(found) = metadata.topics().iter().find(|found| found.name() == topic) else {
        bail!("no topic {topic}");
    };
    if let Some(error) = found.error() {
        bail!("topic {topic}: {error:?}");
    }
    let replicas = found
        .partitions()
        .iter()
        .map(|partition| partition.replicas().len())
        .max()
        .unwrap_or(0);
    println!(
        "partitions={} replicas={replicas}",
        found.partitions().len()
    );
    Ok(())
}

/// `a,b,c` of broker ids.
fn id_list(ids: &[i32]) -> String {
    let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
    ids.join(",")
}

fn assignments(config: &ClientConfig, timeout: Duration) -> anyhow::Result<()> {
    let consumer: BaseConsumer = config.create().context("creating the client")?;
    let metadata = consumer
        .fetch_metadata(None, timeout)
        .context("fetching the metadata of every topic")?;
    for topic in metadata.topics() {
        // Without its partitions a topic could hide replicas: fail, and let the caller ask
        // again. (A partition's own error, such as no leader, still comes with its replicas.)
        if let Some(error) = topic.error() {
            bail!("topic {}: {error:?}", topic.name());
        }
        for partition in topic.partitions() {
            println!(
                "topic={} partition={} replicas={} isr={}",
                topic.name(),
                partition.id(),
                id_list(partition.replicas()),
                id_list(partition.isr())
            );
        }
    }
    Ok(())
}

fn group_offsets(config: &ClientConfig, group: &str, timeout: Duration) -> anyhow::Result<()> {
    // Never subscribed nor assigned, the consumer does not join the group: it only asks the
    // group's coordinator for the committed offsets, and commits nothing.
    let consumer: BaseConsumer = config
        .clone()
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .context("creating the consumer")?;
    let metadata = consumer
        .fetch_metadata(None, timeout)
        .context("fetching the metadata of every topic")?;
    let mut partitions = TopicPartitionList::new();
    for topic in metadata.topics() {
        for partition in topic.partitions() {
            partitions.add_partition(topic.name(), partition.id());
        }
    }
    // The group's coordinator may not be known yet (on a new cluster, its offsets topic is
    // being made): asked again until the time is up.
    let started = Instant::now();
    let committed = loop {
        let left = timeout.saturating_sub(started.elapsed());
        match consumer.committed_offsets(partitions.clone(), left) {
            Ok(committed) => break committed,
            Err(error) if started.elapsed() + Duration::from_millis(500) < timeout => {
                eprintln!("fetching the offsets of group {group}, again: {error}");
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(error) => {
                return Err(error)
                    .with_context(|| format!("fetching the offsets of group {group}"));
            }
        }
    };
    for element in committed.elements() {
        element.error().with_context(|| {
            format!(
                "the offset of {}-{} for group {group}",
                element.topic(),
                element.partition()
            )
        })?;
        if let Offset::Offset(offset) = element.offset() {
            println!(
                "topic={} partition={} offset={offset}",
                element.topic(),
                element.partition()
            );
        }
    }
    Ok(())
}

/// What a producer's delivery callbacks saw.
#[derive(Default)]
struct Deliveries {
    acked: Vec<String>,
    errors: Vec<String>,
    latencies_ms: Vec<f64>,
}

/// A producer context that records every delivery, with its latency, and writes librdkafka's
/// log to stderr with the seconds since the start (a stall can then be matched with the
/// brokers' and the operator's logs).
struct Recording {
    deliveries: std::sync::Mutex<Deliveries>,
    started: Instant,
}

impl Recording {
    fn new() -> Self {
        Self {
            deliveries: std::sync::Mutex::default(),
            started: Instant::now(),
        }
    }
}

impl rdkafka::ClientContext for Recording {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, facility: &str, message: &str) {
        eprintln!(
            "librdkafka {:.3}s {level:?} {facility}: {message}",
            self.started.elapsed().as_secs_f64()
        );
    }
}

impl rdkafka::producer::ProducerContext for Recording {
    type DeliveryOpaque = Box<(String, Instant)>;

    fn delivery(
        &self,
        result: &rdkafka::message::DeliveryResult<'_>,
        opaque: Self::DeliveryOpaque,
    ) {
        let (value, sent) = *opaque;
        let mut deliveries = self
            .deliveries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match result {
            Ok(_) => {
                deliveries
                    .latencies_ms
                    .push(sent.elapsed().as_secs_f64() * 1000.0);
                deliveries.acked.push(value);
            }
            Err((error, _)) => deliveries.errors.push(format!("{value}: {error}")),
        }
    }
}

fn produce_steadily(
    config: &ClientConfig,
    topic: &str,
    per_second: u32,
    stop_file: &std::path::Path,
    delivery_timeout: Duration,
) -> anyhow::Result<()> {
    let producer: BaseProducer<Recording> = config
        .clone()
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set(
            "message.timeout.ms",
            delivery_timeout.as_millis().to_string(),
        )
        // Connections, metadata and the idempotence state in the log: what a stall waited on.
        .set("debug", "broker,topic,metadata,eos")
        .set_log_level(rdkafka::config::RDKafkaLogLevel::Debug)
        .create_with_context(Recording::new())
        .context("creating the producer")?;
    let interval = Duration::from_secs(1) / per_second.max(1);
    let mut next = Instant::now();
    let mut index = 0_u64;
    while !stop_file.exists() {
        let value = format!("steady-{index}");
        let opaque = Box::new((value.clone(), Instant::now()));
        producer
            .send(
                BaseRecord::with_opaque_to(topic, opaque)
                    .payload(&value)
                    .key(&value),
            )
            .map_err(|(error, _)| error)
            .with_context(|| format!("queueing {value}"))?;
        index += 1;
        next += interval;
        // Sleep, then serve the delivery reports and log lines that came meanwhile. Polling
        // with the time left as timeout spun a core (and one of librdkafka's broker threads)
        // for the whole run; a report served up to one interval late only shifts the latency
        // figures. A poll with no time serves one event, so the log lines (events too) would
        // queue up behind it: a millisecond serves what is there.
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        producer.poll(Duration::from_millis(1));
    }
    // Every record is acknowledged or failed by its delivery timeout.
    producer
        .flush(delivery_timeout + Duration::from_secs(10))
        .with_context(|| format!("delivering the records sent to {topic}"))?;
    let deliveries = producer
        .context()
        .deliveries
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut latencies = deliveries.latencies_ms.clone();
    latencies.sort_by(f64::total_cmp);
    let percentile = |fraction: f64| {
        let rank = ((latencies.len() as f64) * fraction).ceil() as usize;
        latencies
            .get(rank.saturating_sub(1))
            .copied()
            .unwrap_or_default()
    };
    println!(
        "acked={} errors={} p99_ms={:.1} max_ms={:.1}",
        deliveries.acked.len(),
        deliveries.errors.len(),
        percentile(0.99),
        percentile(1.0)
    );
    for error in &deliveries.errors {
        eprintln!("delivery failed: {error}");
    }
    for value in &deliveries.acked {
        println!("{value}");
    }
    Ok(())
}

fn broker_config(
    config: &ClientConfig,
    broker: i32,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    use rdkafka::admin::{AdminClient, AdminOptions, ResourceSpecifier};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> =
        config.create().context("creating the admin client")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting a runtime")?;
    let options = AdminOptions::new().request_timeout(Some(timeout));
    let results = runtime
        .block_on(admin.describe_configs([&ResourceSpecifier::Broker(broker)], &options))
        .with_context(|| format!("describing broker {broker}"))?;
    let resource = results
        .into_iter()
        .next()
        .context("no result")?
        .map_err(|error| anyhow::anyhow!("describing broker {broker}: {error:?}"))?;
    let entry = resource
        .get(name)
        .with_context(|| format!("no option {name}"))?;
    println!("{}", entry.value.as_deref().unwrap_or_default());
    Ok(())
}
