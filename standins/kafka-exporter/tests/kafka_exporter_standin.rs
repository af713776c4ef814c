//! The stand-in's binary against the local test broker: over mutual TLS with the flags the
//! pod passes, it reports the lag of a group that committed offsets and has no members left;
//! and it refuses to start on a missing flag or file, in one line naming it.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use strimzi_tests::kafka::{KafkaBroker, TLS_ADMIN_USER};
use strimzi_tests::layout::{free_port, log_dir};
use strimzi_tests::process::KillOnDrop;

const BINARY: &str = env!("CARGO_BIN_EXE_strimzi-kafka-exporter-standin");
const TIMEOUT: Duration = Duration::from_secs(30);

/// A GET over plain HTTP/1.1: status and body.
fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, body)| body)
        .unwrap_or("");
    Ok((status, body.to_owned()))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_exporter_reports_lag_of_a_group_that_committed_offsets() {
    let broker = KafkaBroker::start(&log_dir("exporter-standin").unwrap())
        .unwrap_or_else(|error| panic!("{error}"));

    // Topic `lagging` with 2 partitions and 10 records on partition 0, 4 on partition 1.
    let admin: AdminClient<DefaultClientContext> = broker.plain_client_config().create().unwrap();
    let topic = NewTopic::new("lagging", 2, TopicReplication::Fixed(1));
    let created = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(created.iter().all(Result::is_ok), "{created:?}");
    let producer: BaseProducer = broker.plain_client_config().create().unwrap();
    for (partition, count) in [(0, 10), (1, 4)] {
        for n in 0..count {
            let value = format!("record {n}");
            producer
                .send(
                    BaseRecord::<(), _>::to("lagging")
                        .partition(partition)
                        .payload(&value),
                )
                .unwrap();
        }
    }
    producer.flush(TIMEOUT).unwrap();

    // Group `watchers` commits offset 3 on partition 0 and 4 on partition 1, without joining:
    // it has no members, as in the real-node test.
    let watcher: BaseConsumer = broker
        .plain_client_config()
        .set("group.id", "watchers")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut offsets = TopicPartitionList::new();
    offsets
        .add_partition_offset("lagging", 0, Offset::Offset(3))
        .unwrap();
    offsets
        .add_partition_offset("lagging", 1, Offset::Offset(4))
        .unwrap();
    watcher
        .commit(&offsets, rdkafka::consumer::CommitMode::Sync)
        .unwrap();
    drop(watcher);

    // The stand-in on the TLS listener with the pod's flags and files.
    let files = tempfile::tempdir().unwrap();
    let certificate = broker.client_certificate(TLS_ADMIN_USER).unwrap();
    let (cert, key) = (files.path().join("e.crt"), files.path().join("e.key"));
    std::fs::write(&cert, &certificate.cert).unwrap();
    std::fs::write(&key, &certificate.key).unwrap();
    let port = free_port().unwrap();
    let exporter = KillOnDrop(
        Command::new(BINARY)
            .args([
                format!(
                    "--kafka.server={}",
                    broker.listener("tls").unwrap().bootstrap
                ),
                "--kafka.version=4.3.1".to_owned(),
                format!("--web.listen-address=127.0.0.1:{port}"),
                "--tls.enabled".to_owned(),
                format!("--tls.ca-file={}", broker.ca_file().display()),
                format!("--tls.cert-file={}", cert.display()),
                format!("--tls.key-file={}", key.display()),
                "--group.filter=.*".to_owned(),
                "--topic.filter=.*".to_owned(),
                "--verbosity=0".to_owned(),
                "--offset.show-all".to_owned(),
            ])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );

    let started = Instant::now();
    let text = loop {
        let scraped = http_get(port, "/metrics");
        if let Ok((200, text)) = &scraped
            && text.contains("kafka_consumergroup_lag{consumergroup=\"watchers\"")
        {
            break text.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "no lag of watchers: {scraped:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    for expected in [
        "kafka_brokers 1",
        "kafka_topic_partitions{topic=\"lagging\"} 2",
        "kafka_topic_partition_current_offset{topic=\"lagging\",partition=\"0\"} 10",
        "kafka_topic_partition_oldest_offset{topic=\"lagging\",partition=\"0\"} 0",
        "kafka_topic_partition_replicas{topic=\"lagging\",partition=\"1\"} 1",
        "kafka_topic_partition_under_replicated_partition{topic=\"lagging\",partition=\"1\"} 0",
        "kafka_consumergroup_members{consumergroup=\"watchers\"} 0",
        "kafka_consumergroup_current_offset{consumergroup=\"watchers\",topic=\"lagging\",partition=\"0\"} 3",
        "kafka_consumergroup_lag{consumergroup=\"watchers\",topic=\"lagging\",partition=\"0\"} 7",
        "kafka_consumergroup_lag{consumergroup=\"watchers\",topic=\"lagging\",partition=\"1\"} 0",
        "kafka_consumergroup_lag_sum{consumergroup=\"watchers\",topic=\"lagging\"} 7",
        "kafka_consumergroup_current_offset_sum{consumergroup=\"watchers\",topic=\"lagging\"} 7",
    ] {
        assert!(
            text.lines().any(|line| line == expected),
            "no {expected:?} in\n{text}"
        );
    }
    assert!(
        text.contains("kafka_broker_info{address=\"127.0.0.1:"),
        "{text}"
    );
    assert_eq!(http_get(port, "/healthz").unwrap(), (200, "ok".to_owned()));
    drop(exporter);
}

/// Runs the binary with `args`: its exit status and standard error.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(BINARY).args(args).output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_missing_flag_or_file_stops_the_start_in_one_line() {
    let (status, stderr) = refused(&["--web.listen-address=:9404"]);
    assert_eq!(status, Some(2));
    assert_eq!(
        stderr,
        "kafka-exporter-standin: flag --kafka.server is required\n"
    );
    let (status, stderr) = refused(&[
        "--kafka.server=127.0.0.1:1",
        "--tls.enabled",
        "--tls.ca-file=/nonexistent/cluster-ca.crt",
    ]);
    assert_eq!(status, Some(2));
    assert!(
        stderr.starts_with(
            "kafka-exporter-standin: flag --tls.ca-file: file /nonexistent/cluster-ca.crt:"
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // Without arguments it reads the pod's variables, as the start script does.
    let output = Command::new(BINARY)
        .env_remove("KAFKA_EXPORTER_KAFKA_SERVER")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "kafka-exporter-standin: environment variable KAFKA_EXPORTER_KAFKA_SERVER: missing\n"
    );
    let output = Command::new(BINARY)
        .env("KAFKA_EXPORTER_KAFKA_SERVER", "127.0.0.1:1")
        .env("KAFKA_EXPORTER_GROUP_REGEX", "(")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("flag --group.filter: \"(\" is not a regular expression"),
        "{stderr}"
    );
    let (status, stderr) = refused(&["--kafka.server=127.0.0.1:1", "--group.filter=("]);
    assert_eq!(status, Some(2));
    assert!(stderr.contains("--group.filter"), "{stderr}");
}
