//! `strimzi-kafka-client`: a small Kafka client (rdkafka) for tests and demos that runs
//! inside the real nodes' network, where the brokers' advertised names resolve:
//!
//! ```text
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap my-cluster-kafka-bootstrap.kafka.svc:9092 produce --topic t --count 3
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap ...:9093 --ca-file ca.crt consume --topic t --count 3
//! ip netns exec <namespace> strimzi-kafka-client --bootstrap ... describe --topic t
//! ```
//!
//! `produce` prints how many records were acknowledged; `consume` prints each value read
//! (every partition from its beginning, no consumer group) and fails unless `--count`
//! records arrive in time; `describe` prints the
//! topic's partition and replica counts as `partitions=<n> replicas=<n>`. Every failure is
//! one line on stderr and exit status 1.

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
    },
    /// Print the topic's partition and replica counts.
    Describe {
        #[arg(long)]
        topic: String,
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
        Action::Consume { topic, count } => consume(&config, topic, *count, timeout),
        Action::Describe { topic } => describe(&config, topic, timeout),
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
    let producer: BaseProducer = config
        .clone()
        .set("acks", "all")
        .set("message.timeout.ms", timeout.as_millis().to_string())
        .create()
        .context("creating the producer")?;
    for index in 0..count {
        let value = format!("{prefix}-{index}");
        producer
            .send(BaseRecord::<(), _>::to(topic).payload(&value))
            .map_err(|(error, _)| error)
            .with_context(|| format!("queueing {value}"))?;
    }
    producer
        .flush(timeout)
        .with_context(|| format!("producing {count} records to {topic}"))?;
    println!("produced {count} records to {topic}");
    Ok(())
}

fn consume(
    config: &ClientConfig,
    topic: &str,
    count: usize,
    timeout: Duration,
) -> anyhow::Result<()> {
    // Every partition from its beginning, assigned rather than subscribed: the group (which
    // librdkafka requires) is never joined, so reading needs no group coordinator (nor the
    // offsets topic a first group would create).
    let consumer: BaseConsumer = config
        .clone()
        .set(
            "group.id",
            format!("strimzi-kafka-client-{}", std::process::id()),
        )
        .set("enable.auto.commit", "false")
        .create()
        .context("creating the consumer")?;
    let started = Instant::now();
    let metadata = consumer
        .fetch_metadata(Some(topic), timeout)
        .with_context(|| format!("fetching the metadata of {topic}"))?;
    let mut partitions = TopicPartitionList::new();
    for found in metadata
        .topics()
        .iter()
        .filter(|found| found.name() == topic)
    {
        for partition in found.partitions() {
            partitions
                .add_partition_offset(topic, partition.id(), Offset::Beginning)
                .context("listing partitions")?;
        }
    }
    if partitions.count() == 0 {
        bail!("no partitions of {topic}");
    }
    consumer
        .assign(&partitions)
        .with_context(|| format!("assigning the partitions of {topic}"))?;
    let mut seen = 0;
    while seen < count {
        if started.elapsed() > timeout {
            bail!("read {seen} of {count} records from {topic} in {timeout:?}");
        }
        // Errors and empty polls are transient while the topic's leaders settle.
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(500)) {
            let value = message
                .payload()
                .map(|payload| String::from_utf8_lossy(payload).into_owned())
                .unwrap_or_default();
            println!("{value}");
            seen += 1;
        }
    }
    Ok(())
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
