//! The test broker works for a real, independent Kafka client (rdkafka) on every listener,
//! and authentication is enforced.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use strimzi_tests::kafka::{ADMIN_PASSWORD, ADMIN_USER, KafkaBroker, Listener, TLS_ADMIN_USER};
use strimzi_tests::layout::log_dir;

const TIMEOUT: Duration = Duration::from_secs(30);

fn broker() -> &'static KafkaBroker {
    static BROKER: OnceLock<KafkaBroker> = OnceLock::new();
    BROKER.get_or_init(|| {
        let logs = log_dir("kafka-broker").unwrap();
        KafkaBroker::start(&logs).unwrap_or_else(|error| panic!("{error}"))
    })
}

/// Client settings for `listener`, authenticating as the super user of that listener.
fn client_config(listener: &Listener, password: &str) -> ClientConfig {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", &listener.bootstrap)
        .set("security.protocol", listener.security_protocol);
    match listener.name {
        "scram" => {
            config
                .set("sasl.mechanism", "SCRAM-SHA-512")
                .set("sasl.username", ADMIN_USER)
                .set("sasl.password", password);
        }
        "tls" => {
            let certificate = broker().client_certificate(TLS_ADMIN_USER).unwrap();
            config
                .set("ssl.ca.pem", broker().ca_pem())
                .set("ssl.certificate.pem", certificate.cert)
                .set("ssl.key.pem", certificate.key);
        }
        _ => {}
    }
    config
}

fn create_topic(name: &str) {
    create_topic_with(name, &[]);
}

/// Creates topic `name` (one partition) with the topic options `config`.
fn create_topic_with(name: &str, config: &[(&str, &str)]) {
    let config: Vec<(String, String)> = config
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    let admin: AdminClient<DefaultClientContext> =
        client_config(broker().listener("plain").unwrap(), "")
            .create()
            .unwrap();
    let runtime = std::thread::spawn({
        let name = name.to_owned();
        move || {
            let topic = config.iter().fold(
                NewTopic::new(&name, 1, TopicReplication::Fixed(1)),
                |topic, (key, value)| topic.set(key, value),
            );
            let options = AdminOptions::new().operation_timeout(Some(TIMEOUT));
            futures_executor(admin.create_topics([&topic], &options))
        }
    });
    for result in runtime.join().unwrap().unwrap() {
        result.unwrap();
    }
}

/// Runs a future to completion on this thread (the admin API is async).
fn futures_executor<F: std::future::Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::park_timeout(Duration::from_millis(50));
    }
}

fn produce_and_consume(listener: &Listener) {
    let topic = format!("smoke-{}", listener.name);
    create_topic(&topic);
    let producer: BaseProducer = client_config(listener, ADMIN_PASSWORD).create().unwrap();
    let payload = format!("hello over {}", listener.name);
    producer
        .send(BaseRecord::<(), str>::to(&topic).payload(&payload))
        .map_err(|(error, _)| error)
        .unwrap();
    producer.flush(TIMEOUT).unwrap();

    let consumer: BaseConsumer = client_config(listener, ADMIN_PASSWORD)
        .set("group.id", format!("smoke-{}", listener.name))
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&[&topic]).unwrap();
    let deadline = std::time::Instant::now() + TIMEOUT;
    while std::time::Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(500)) {
            let message = message.unwrap();
            assert_eq!(message.payload(), Some(payload.as_bytes()));
            return;
        }
    }
    panic!(
        "no record consumed over {} within {TIMEOUT:?}",
        listener.name
    );
}

#[test]
fn plaintext_listener_produces_and_consumes() {
    produce_and_consume(broker().listener("plain").unwrap());
}

#[test]
fn scram_listener_produces_and_consumes() {
    produce_and_consume(broker().listener("scram").unwrap());
}

#[test]
fn tls_listener_produces_and_consumes_with_a_client_certificate() {
    produce_and_consume(broker().listener("tls").unwrap());
}

#[test]
fn a_wrong_scram_password_is_refused() {
    let listener = broker().listener("scram").unwrap();
    let producer: BaseProducer = client_config(listener, "not-the-password")
        .create()
        .unwrap();
    let result = producer
        .client()
        .fetch_metadata(None, Duration::from_secs(10));
    let error = result.expect_err("metadata must not be served to a wrong password");
    println!("refused as expected: {error}");
}

/// Runs `strimzi-kafka-client` on the plain listener with `args`.
fn run_kafka_client(args: &[&str]) -> std::process::Output {
    let bootstrap = &broker().listener("plain").unwrap().bootstrap;
    std::process::Command::new(env!("CARGO_BIN_EXE_strimzi-kafka-client"))
        .args(["--bootstrap", bootstrap, "--timeout", "30"])
        .args(args)
        .output()
        .unwrap()
}

/// Runs `strimzi-kafka-client` on the plain listener with `args`; what it prints.
fn kafka_client(args: &[&str]) -> String {
    let output = run_kafka_client(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The real-node tests prove that a listener refuses a client by a failed `produce`: it
/// must fail when the brokers refuse the records, not only when they cannot be reached (a
/// flush alone succeeds once refused records have left the queue).
#[test]
fn the_test_client_fails_when_the_broker_refuses_the_records() {
    let topic = "client-refused";
    create_topic_with(topic, &[("max.message.bytes", "1")]);
    let output = run_kafka_client(&["produce", "--topic", topic, "--count", "2"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "records refused were taken as produced"
    );
    assert!(
        stderr.contains("2 of 2 records to client-refused were not delivered"),
        "{stderr}"
    );
}

/// What the real-node tests poll with instead of Kafka's tools: every partition's replicas
/// and in-sync replicas, and the offsets a group committed.
#[test]
fn the_test_client_reports_replicas_and_the_offsets_a_group_committed() {
    let topic = "client-polls";
    let group = "client-polls-group";
    create_topic(topic);
    kafka_client(&["produce", "--topic", topic, "--count", "3"]);
    assert_eq!(kafka_client(&["group-offsets", "--group", group]), "");
    kafka_client(&[
        "consume", "--topic", topic, "--count", "3", "--group", group,
    ]);

    let consumer: BaseConsumer = client_config(broker().listener("plain").unwrap(), "")
        .create()
        .unwrap();
    let metadata = consumer.fetch_metadata(None, TIMEOUT).unwrap();
    let id = metadata.brokers()[0].id();
    let assignments = kafka_client(&["assignments"]);
    let lines: Vec<&str> = assignments.lines().collect();
    assert!(
        lines.contains(&format!("topic={topic} partition=0 replicas={id} isr={id}").as_str()),
        "{assignments}"
    );
    // Every partition of every topic, Kafka's own included.
    let partitions: usize = metadata
        .topics()
        .iter()
        .map(|found| found.partitions().len())
        .sum();
    assert_eq!(lines.len(), partitions, "{assignments}");
    assert!(
        lines
            .iter()
            .any(|line| line.starts_with("topic=__consumer_offsets ")),
        "{assignments}"
    );

    assert_eq!(
        kafka_client(&["group-offsets", "--group", group]),
        format!("topic={topic} partition=0 offset=3\n")
    );
}
