//! The stand-in's binary against the local test broker, over the SCRAM listener with the
//! password resolved from configuration-provider placeholders inside `sasl.jaas.config`:
//! records produced and consumed over HTTP with the JSON shapes, content types and status
//! codes of the bridge's documented API; and a configuration it cannot use stops the start in
//! one line.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use serde_json::{Value, json};
use strimzi_tests::kafka::{ADMIN_PASSWORD, ADMIN_USER, KafkaBroker};
use strimzi_tests::layout::{free_port, log_dir};
use strimzi_tests::process::KillOnDrop;

const BINARY: &str = env!("CARGO_BIN_EXE_strimzi-bridge-standin");
const JSON_RECORDS: &str = "application/vnd.kafka.json.v2+json";
const BINARY_RECORDS: &str = "application/vnd.kafka.binary.v2+json";
const API: &str = "application/vnd.kafka.v2+json";

/// An answer: status, content type, body.
#[derive(Debug)]
struct Answer {
    status: u16,
    content_type: String,
    body: String,
    /// Header lines, names lower-cased.
    headers: Vec<(String, String)>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// One HTTP/1.1 request on 127.0.0.1:`port`.
fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> std::io::Result<Answer> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-type")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect();
    Ok(Answer {
        status,
        content_type,
        body: body.to_owned(),
        headers,
    })
}

/// The stand-in's API port, spoken to with the bridge's content types; every request must
/// get an answer.
#[derive(Clone, Copy)]
struct Bridge(u16);

impl Bridge {
    /// `POST` with `body` as `application/vnd.kafka.v2+json` (or no body).
    fn post(self, path: &str, body: Option<&Value>) -> Answer {
        self.send("POST", path, &[("Content-Type", API)], body)
    }

    /// `POST` of records in `content_type`.
    fn produce(self, path: &str, content_type: &str, body: &Value) -> Answer {
        self.send("POST", path, &[("Content-Type", content_type)], Some(body))
    }

    /// `GET` accepting `accept`.
    fn get(self, path: &str, accept: &str) -> Answer {
        self.send("GET", path, &[("Accept", accept)], None)
    }

    /// `DELETE`.
    fn delete(self, path: &str) -> Answer {
        self.send("DELETE", path, &[("Content-Type", API)], None)
    }

    fn send(
        self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Answer {
        request(self.0, method, path, headers, body)
            .unwrap_or_else(|error| panic!("{method} {path}: {error}"))
    }
}

/// Writes `text` as the configuration file in `dir` and starts the stand-in on it with the
/// environment `env` (names with `None` removed).
fn start(
    dir: &std::path::Path,
    text: &str,
    env: &[(&str, Option<&std::ffi::OsStr>)],
) -> KillOnDrop {
    let config = dir.join("kafka-bridge.properties");
    std::fs::write(&config, text).unwrap();
    let mut command = Command::new(BINARY);
    command.arg(format!("--config-file={}", config.display()));
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    KillOnDrop(command.stdout(Stdio::null()).spawn().unwrap())
}

/// The start of a configuration whose Kafka is never reached (the tests of the HTTP side):
/// the bridge's id, an unused bootstrap address, and the API and management ports.
fn without_kafka(port: u16, management: u16) -> String {
    format!(
        "bridge.id=web\nkafka.bootstrap.servers=127.0.0.1:1\nhttp.host=127.0.0.1\n\
         http.port={port}\nhttp.management.port={management}\n"
    )
}

/// Waits until the management port `management` answers `GET /ready` with 200.
async fn until_ready(management: u16) {
    let started = Instant::now();
    while request(management, "GET", "/ready", &[], None)
        .map(|a| a.status)
        .ok()
        != Some(200)
    {
        assert!(started.elapsed() < Duration::from_secs(30), "never ready");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A stand-in for the Kubernetes API server: answers `GET` of Secret `ns/web-user` (key
/// `password`) to clients presenting `Bearer test-token`, 404 otherwise; returns its address
/// and the requests it saw (path and authorization).
async fn fake_api_server() -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>,
) {
    use axum::http::{HeaderMap, StatusCode, Uri};
    use base64::Engine as _;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
        let log = std::sync::Arc::clone(&log);
        async move {
            let authorization = headers
                .get("authorization")
                .and_then(|value| value.to_str().ok())
                .unwrap_or("")
                .to_owned();
            log.lock()
                .unwrap()
                .push((uri.path().to_owned(), authorization.clone()));
            if uri.path() == "/api/v1/namespaces/ns/secrets/web-user"
                && authorization == "Bearer test-token"
            {
                let password = base64::engine::general_purpose::STANDARD.encode(ADMIN_PASSWORD);
                let secret = json!({"apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": "web-user", "namespace": "ns"},
                    "data": {"password": password}});
                (StatusCode::OK, secret.to_string())
            } else {
                let status = json!({"apiVersion": "v1", "kind": "Status", "status": "Failure",
                    "reason": "NotFound", "code": 404, "message": "not found"});
                (StatusCode::NOT_FOUND, status.to_string())
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (address, seen)
}

/// A kubeconfig for the fake API server, authenticating with `test-token`.
fn kubeconfig(dir: &std::path::Path, server: std::net::SocketAddr) -> std::path::PathBuf {
    let file = dir.join("kubeconfig");
    let lines = [
        "apiVersion: v1".to_owned(),
        "kind: Config".to_owned(),
        "current-context: test".to_owned(),
        "clusters:".to_owned(),
        "- name: test".to_owned(),
        "  cluster:".to_owned(),
        format!("    server: http://{server}"),
        "users:".to_owned(),
        "- name: test".to_owned(),
        "  user:".to_owned(),
        "    token: test-token".to_owned(),
        "contexts:".to_owned(),
        "- name: test".to_owned(),
        "  context:".to_owned(),
        "    cluster: test".to_owned(),
        "    user: test".to_owned(),
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();
    file
}

/// The configuration our operator writes for SCRAM-SHA-512, with the password read from a
/// Kubernetes Secret, the user name through the environment provider and the rack through the
/// directory provider.
fn config_text(
    broker: &KafkaBroker,
    secrets: &std::path::Path,
    port: u16,
    management: u16,
) -> String {
    let dir = secrets.display();
    format!(
        "# Generated by the cluster operator from the KafkaBridge.\n\
         bridge.id=web\n\
         bridge.metrics=jmxPrometheusExporter\n\
         kafka.bootstrap.servers={bootstrap}\n\
         kafka.sasl.mechanism=SCRAM-SHA-512\n\
         kafka.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"${{strimzienv:BRIDGE_TEST_USER}}\" password=\"${{strimzisecrets:ns/web-user:password}}\";\n\
         kafka.security.protocol=SASL_PLAINTEXT\n\
         kafka.config.providers=strimzienv,strimzifile,strimzidir,strimzisecrets\n\
         kafka.config.providers.strimzienv.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n\
         kafka.config.providers.strimzienv.param.allowlist.pattern=.*\n\
         kafka.config.providers.strimzifile.class=org.apache.kafka.common.config.provider.FileConfigProvider\n\
         kafka.config.providers.strimzifile.param.allowed.paths={dir}\n\
         kafka.config.providers.strimzidir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider\n\
         kafka.config.providers.strimzidir.param.allowed.paths={dir}\n\
         kafka.config.providers.strimzisecrets.class=io.strimzi.kafka.KubernetesSecretConfigProvider\n\
         kafka.producer.acks=all\n\
         kafka.consumer.client.rack=${{strimzidir:{dir}:rack.id}}\n\
         http.host=127.0.0.1\n\
         http.port={port}\n\
         http.management.port={management}\n\
         http.cors.enabled=false\n\
         http.consumer.enabled=true\n\
         http.timeoutSeconds=-1\n\
         http.producer.enabled=true\n",
        bootstrap = broker.listener("scram").unwrap().bootstrap,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn records_are_produced_and_consumed_over_http_with_the_documented_shapes() {
    let broker = KafkaBroker::start(&log_dir("bridge-standin").unwrap())
        .unwrap_or_else(|error| panic!("{error}"));
    // The test broker does not create topics on first use.
    let admin: AdminClient<DefaultClientContext> = broker.plain_client_config().create().unwrap();
    let topics = [
        NewTopic::new("bridge-records", 1, TopicReplication::Fixed(1)),
        NewTopic::new("bridge-bytes", 1, TopicReplication::Fixed(1)),
    ];
    let created = admin
        .create_topics(&topics, &AdminOptions::new())
        .await
        .unwrap();
    assert!(created.iter().all(Result::is_ok), "{created:?}");

    let files = tempfile::tempdir().unwrap();
    std::fs::write(files.path().join("rack.id"), "rack-1").unwrap();
    let (api_server, api_requests) = fake_api_server().await;
    let kubeconfig = kubeconfig(files.path(), api_server);
    let (port, management) = (free_port().unwrap(), free_port().unwrap());
    let _bridge = start(
        files.path(),
        &config_text(&broker, files.path(), port, management),
        &[
            ("BRIDGE_TEST_USER", Some(ADMIN_USER.as_ref())),
            ("KUBECONFIG", Some(kubeconfig.as_os_str())),
            ("KUBERNETES_SERVICE_HOST", None),
        ],
    );
    until_ready(management).await;
    let bridge = Bridge(port);
    assert_eq!(
        request(management, "GET", "/healthy", &[], None)
            .unwrap()
            .status,
        200
    );
    // The password came from the Secret, read with the client's token.
    assert_eq!(
        *api_requests.lock().unwrap(),
        [(
            "/api/v1/namespaces/ns/secrets/web-user".to_owned(),
            "Bearer test-token".to_owned()
        )]
    );
    let info = bridge.get("/", API);
    assert_eq!(info.status, 200);
    assert!(
        info.json()["bridge_version"]
            .as_str()
            .unwrap()
            .ends_with("-standin")
    );

    // Produce five JSON values.
    let values: Vec<Value> = (0..5)
        .map(|n| json!({"n": n, "text": format!("record {n}")}))
        .collect();
    let produce =
        json!({"records": values.iter().map(|value| json!({"value": value})).collect::<Vec<_>>()});
    let answer = bridge.produce("/topics/bridge-records", JSON_RECORDS, &produce);
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.content_type, API);
    let offsets = answer.json()["offsets"].as_array().unwrap().clone();
    assert_eq!(
        offsets,
        (0..5)
            .map(|n| json!({"partition": 0, "offset": n}))
            .collect::<Vec<_>>()
    );
    // Wrong content type and malformed bodies.
    let plain_json = bridge.produce("/topics/bridge-records", "application/json", &produce);
    assert_eq!(plain_json.status, 400, "{plain_json:?}");
    assert_eq!(plain_json.json()["error_code"], 400);
    let malformed = bridge.produce(
        "/topics/bridge-records",
        JSON_RECORDS,
        &json!({"records": [{"valeu": 1}]}),
    );
    assert_eq!(malformed.status, 422, "{malformed:?}");

    // A consumer in a group: created, subscribed, polled until all five came, committed.
    let group = "/consumers/bridge-group";
    let instance = format!("{group}/instances/reader");
    let consumer = json!({"name": "reader", "format": "json", "auto.offset.reset": "earliest", "enable.auto.commit": false});
    let created = bridge.post(group, Some(&consumer));
    assert_eq!(created.status, 200, "{created:?}");
    assert_eq!(created.content_type, API);
    assert_eq!(
        created.json(),
        json!({"instance_id": "reader", "base_uri": format!("http://127.0.0.1:{port}{instance}")})
    );
    let again = bridge.post(group, Some(&consumer));
    assert_eq!(again.status, 409, "{again:?}");
    assert_eq!(again.json()["error_code"], 409);
    let subscribed = bridge.post(
        &format!("{instance}/subscription"),
        Some(&json!({"topics": ["bridge-records"]})),
    );
    assert_eq!(subscribed.status, 204, "{subscribed:?}");
    let wrong_accept = bridge.get(&format!("{instance}/records?timeout=100"), BINARY_RECORDS);
    assert_eq!(wrong_accept.status, 406, "{wrong_accept:?}");
    let mut read: Vec<Value> = Vec::new();
    let started = Instant::now();
    while read.len() < values.len() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "consumed only {read:?}"
        );
        let polled = bridge.get(&format!("{instance}/records?timeout=2000"), JSON_RECORDS);
        assert_eq!(polled.status, 200, "{polled:?}");
        assert_eq!(polled.content_type, JSON_RECORDS);
        for record in polled.json().as_array().unwrap() {
            assert_eq!(record["topic"], "bridge-records");
            assert_eq!(record["partition"], 0);
            assert_eq!(record["key"], Value::Null);
            assert_eq!(record["offset"], json!(read.len()));
            read.push(record["value"].clone());
        }
    }
    assert_eq!(read, values);
    // Committing what was read, then named offsets.
    let named = json!({"offsets": [{"topic": "bridge-records", "partition": 0, "offset": 5}]});
    for body in [None, Some(&named)] {
        let committed = bridge.post(&format!("{instance}/offsets"), body);
        assert_eq!(committed.status, 204, "{committed:?}");
    }
    // Topics and their partitions.
    let topics = bridge.get("/topics", API);
    assert_eq!(topics.status, 200, "{topics:?}");
    let names = topics.json();
    assert!(
        names.as_array().unwrap().contains(&json!("bridge-records")),
        "{names}"
    );
    assert!(
        !names
            .as_array()
            .unwrap()
            .contains(&json!("__consumer_offsets")),
        "{names}"
    );
    let topic = bridge.get("/topics/bridge-records", API).json();
    assert_eq!(topic["name"], "bridge-records");
    assert_eq!(topic["partitions"][0]["partition"], 0);
    assert_eq!(topic["partitions"][0]["replicas"][0]["leader"], true);
    assert_eq!(topic["partitions"][0]["replicas"][0]["in_sync"], true);
    let listing = bridge.get(&format!("{instance}/subscription"), API);
    assert_eq!(listing.json()["topics"], json!(["bridge-records"]));
    assert_eq!(bridge.delete(&instance).status, 204);
    let gone = bridge.delete(&instance);
    assert_eq!(gone.status, 404);
    assert_eq!(gone.json()["error_code"], 404);
    let unknown = bridge.get(&format!("{instance}/records"), JSON_RECORDS);
    assert_eq!(unknown.status, 404);

    // The group's committed offset, seen by an independent client.
    let checker: BaseConsumer = broker
        .plain_client_config()
        .set("group.id", "bridge-group")
        .create()
        .unwrap();
    let mut partitions = TopicPartitionList::new();
    partitions.add_partition("bridge-records", 0);
    let offsets = checker
        .committed_offsets(partitions, Duration::from_secs(30))
        .unwrap();
    assert_eq!(
        offsets
            .find_partition("bridge-records", 0)
            .unwrap()
            .offset(),
        Offset::Offset(5)
    );

    // Binary keys and values, read from an assigned partition after a seek to the beginning.
    let produce = json!({"records": [{"key": "a2V5", "value": "dmFsdWU=", "headers": [{"key": "h", "value": "aGk="}]}]});
    let answer = bridge.produce(
        "/topics/bridge-bytes/partitions/0",
        BINARY_RECORDS,
        &produce,
    );
    assert_eq!(
        answer.json(),
        json!({"offsets": [{"partition": 0, "offset": 0}]})
    );
    let created = bridge.post(
        "/consumers/bytes",
        Some(&json!({"name": "b", "format": "binary"})),
    );
    assert_eq!(created.status, 200, "{created:?}");
    let instance = "/consumers/bytes/instances/b";
    let partition = json!({"partitions": [{"topic": "bridge-bytes", "partition": 0}]});
    let assigned = bridge.post(&format!("{instance}/assignments"), Some(&partition));
    assert_eq!(assigned.status, 204, "{assigned:?}");
    let mut polled = Vec::new();
    let started = Instant::now();
    while polled.is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no binary record"
        );
        bridge.post(&format!("{instance}/positions/beginning"), Some(&partition));
        let answer = bridge.get(&format!("{instance}/records?timeout=2000"), BINARY_RECORDS);
        assert_eq!(answer.status, 200, "{answer:?}");
        polled = answer.json().as_array().unwrap().clone();
    }
    assert_eq!(polled[0]["key"], "a2V5");
    assert_eq!(polled[0]["value"], "dmFsdWU=");
    assert_eq!(polled[0]["headers"], json!([{"key": "h", "value": "aGk="}]));

    let metrics = request(management, "GET", "/metrics", &[], None).unwrap();
    assert_eq!(metrics.status, 200);
    assert!(
        metrics.body.contains(
            "strimzi_bridge_kafka_producer_record_send_total{topic=\"bridge-records\"} 5"
        ),
        "{}",
        metrics.body
    );
    assert_eq!(bridge.get("/no/such/path", API).status, 404);
}

#[test]
fn a_configuration_it_cannot_use_stops_the_start_in_one_line() {
    let files = tempfile::tempdir().unwrap();
    let config = files.path().join("b.properties");
    std::fs::write(
        &config,
        "bridge.id=web\nkafka.bootstrap.servers=127.0.0.1:1\nhttp.port=eighty\n",
    )
    .unwrap();
    let output = Command::new(BINARY)
        .arg(format!("--config-file={}", config.display()))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr,
        format!(
            "bridge-standin: {}: http.port: \"eighty\" is not a port number\n",
            config.display()
        )
    );
    // Without arguments: the file the pod mounts under STRIMZI_HOME.
    let output = Command::new(BINARY)
        .env("STRIMZI_HOME", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(
            "bridge-standin: --config-file /nonexistent/custom-config/application.properties: "
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn the_api_port_speaks_https_with_the_mounted_pair() {
    let files = tempfile::tempdir().unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let certificate = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (cert_file, key_file) = (files.path().join("tls.crt"), files.path().join("tls.key"));
    std::fs::write(&cert_file, certificate.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    let (port, management) = (free_port().unwrap(), free_port().unwrap());
    let _bridge = start(
        files.path(),
        &format!(
            "{}http.ssl.enable=true\nhttp.ssl.certificate.location={}\n\
             http.ssl.key.location={}\nhttp.ssl.enabled.protocols=TLSv1.3,TLSv1.2\n",
            without_kafka(port, management),
            cert_file.display(),
            key_file.display()
        ),
        &[],
    );
    let started = Instant::now();
    let body = loop {
        let output = Command::new("curl")
            .args(["--silent", "--show-error", "--max-time", "10", "--cacert"])
            .arg(&cert_file)
            .args(["--resolve", &format!("localhost:{port}:127.0.0.1")])
            .arg(format!("https://localhost:{port}/"))
            .output()
            .unwrap();
        if output.status.success() {
            break String::from_utf8_lossy(&output.stdout).into_owned();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no HTTPS answer: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let info: Value = serde_json::from_str(&body).unwrap();
    assert!(
        info["bridge_version"]
            .as_str()
            .unwrap()
            .ends_with("-standin")
    );
    // Plain HTTP on the HTTPS port gets no answer.
    assert!(request(port, "GET", "/", &[], None).map_or(true, |a| a.status == 0));
    // Health stays plain HTTP on the management port.
    assert_eq!(
        request(management, "GET", "/healthy", &[], None)
            .unwrap()
            .status,
        200
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_that_cannot_be_read_stops_the_start_naming_it() {
    let (api_server, _) = fake_api_server().await;
    let files = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig(files.path(), api_server);
    let providers = "kafka.config.providers=strimzisecrets\n\
        kafka.config.providers.strimzisecrets.class=io.strimzi.kafka.KubernetesSecretConfigProvider\n";
    for (placeholder, expected) in [
        (
            "${strimzisecrets:ns/missing:password}",
            "bridge-standin: reading Secret ns/missing: ",
        ),
        (
            "${strimzisecrets:ns/web-user:nokey}",
            "bridge-standin: CONFIG: kafka.sasl.jaas.config: ${strimzisecrets:ns/web-user:nokey}: \
             Secret ns/web-user has no key nokey",
        ),
    ] {
        let config = files.path().join("b.properties");
        std::fs::write(
            &config,
            format!(
                "bridge.id=web\nkafka.bootstrap.servers=127.0.0.1:1\n{providers}\
                 kafka.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule \
                 required username=\"u\" password=\"{placeholder}\";\n"
            ),
        )
        .unwrap();
        let expected = expected.replace("CONFIG", &config.display().to_string());
        let kubeconfig = kubeconfig.clone();
        let output = tokio::task::spawn_blocking(move || {
            Command::new(BINARY)
                .arg(format!("--config-file={}", config.display()))
                .env("KUBECONFIG", &kubeconfig)
                .env_remove("KUBERNETES_SERVICE_HOST")
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.starts_with(&expected), "{stderr:?} vs {expected:?}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cors_disabled_endpoints_and_idle_consumers_follow_the_http_options() {
    let files = tempfile::tempdir().unwrap();
    let (port, management) = (free_port().unwrap(), free_port().unwrap());
    let _bridge = start(
        files.path(),
        &format!(
            "{}http.cors.enabled=true\nhttp.cors.allowedOrigins=https://a.example\n\
             http.cors.allowedMethods=GET,POST\nhttp.producer.enabled=false\n\
             http.timeoutSeconds=1\n",
            without_kafka(port, management)
        ),
        &[],
    );
    until_ready(management).await;
    let bridge = Bridge(port);
    // CORS: pre-flight answered for an allowed origin, other origins refused.
    let preflight = bridge.send(
        "OPTIONS",
        "/topics/t",
        &[
            ("Origin", "https://a.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
        None,
    );
    assert_eq!(preflight.status, 204, "{preflight:?}");
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("https://a.example")
    );
    assert_eq!(
        preflight.header("access-control-allow-methods"),
        Some("GET,POST")
    );
    let allowed = bridge.send("GET", "/", &[("Origin", "https://a.example")], None);
    assert_eq!(allowed.status, 200);
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some("https://a.example")
    );
    let refused = bridge.send("GET", "/", &[("Origin", "https://b.example")], None);
    assert_eq!(refused.status, 403);
    // http.producer.enabled=false.
    let disabled = bridge.produce(
        "/topics/t",
        JSON_RECORDS,
        &json!({"records": [{"value": 1}]}),
    );
    assert_eq!(disabled.status, 503, "{disabled:?}");
    assert_eq!(disabled.json()["error_code"], 503);
    // http.timeoutSeconds=1: an idle consumer is deleted.
    let created = bridge.post("/consumers/g", Some(&json!({"name": "idle"})));
    assert_eq!(created.status, 200, "{created:?}");
    // Without a name, one is made from the bridge id.
    let unnamed = bridge.post("/consumers/g", Some(&json!({})));
    assert!(
        unnamed.json()["instance_id"]
            .as_str()
            .unwrap()
            .starts_with("web-"),
        "{unnamed:?}"
    );
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let gone = bridge.delete("/consumers/g/instances/idle");
    assert_eq!(gone.status, 404, "{gone:?}");
    // Metrics are off without bridge.metrics.
    assert_eq!(
        request(management, "GET", "/metrics", &[], None)
            .unwrap()
            .status,
        404
    );
}
