//! The admin client's settings as Strimzi 1.2's standalone topic operator bundle passes them
//! (`STRIMZI_*` variables, read by `AdminConfig::from_lookup`): PKCS#12 and JKS stores made by
//! Java's `keytool` and by `openssl` at run time, and connections to the real test broker with
//! SCRAM-SHA-256, with TLS from PKCS#12 and JKS stores, and with OAUTHBEARER tokens from a
//! local token endpoint (a contract stand-in for an OAuth server's client-credentials grant).

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use strimzi_operator_common::kafka::*;
use strimzi_tests::certs::{CertifiedPem, TestCa};
use strimzi_tests::kafka::{ADMIN_PASSWORD, ADMIN_USER, KafkaBroker, TLS_ADMIN_USER};
use strimzi_tests::layout::log_dir;

/// Store password, as Strimzi's `ca.password` and `user.password` hold them.
const STORE_PASSWORD: &str = "Zk3pQ9xv2LmA";
const OAUTH_CLIENT_ID: &str = "topic-operator";
const OAUTH_CLIENT_SECRET: &str = "topic-operator-secret";
const OAUTH_SCOPE: &str = "kafka";
const STRIMZI_OAUTH_HANDLER: &str =
    "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler";
const OAUTHBEARER_LOGIN_MODULE: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";

fn broker() -> &'static KafkaBroker {
    static BROKER: OnceLock<KafkaBroker> = OnceLock::new();
    BROKER.get_or_init(|| {
        let logs = log_dir("kafka-settings").unwrap();
        KafkaBroker::start(&logs).unwrap_or_else(|error| panic!("{error}"))
    })
}

fn config(pairs: &[(&str, &str)]) -> Result<AdminConfig, AdminError> {
    let map: HashMap<&str, &str> = pairs.iter().copied().collect();
    AdminConfig::from_lookup(|name| map.get(name).map(|value| (*value).to_owned()))
}

/// Runs a tool and panics with its output when it fails.
fn run(program: &str, args: &[&str]) {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|error| {
            panic!("{program} could not be run ({error}); it must be installed")
        });
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A trust store of `storetype` (`PKCS12`, `JKS`, `JCEKS`) holding the CA certificate in
/// `ca_file`, made by `keytool`, with `extra` options for the JVM.
fn keytool_trust_store(dir: &Path, storetype: &str, ca_file: &Path, extra: &[&str]) -> PathBuf {
    let store = dir.join(format!("ca.{}", storetype.to_ascii_lowercase()));
    // keytool adds to an existing store: start from none.
    let _ = std::fs::remove_file(&store);
    let mut args = extra.to_vec();
    args.extend([
        "-importcert",
        "-noprompt",
        "-alias",
        "ca",
        "-file",
        path(ca_file),
        "-keystore",
        path(&store),
        "-storetype",
        storetype,
        "-storepass",
        STORE_PASSWORD,
    ]);
    run("keytool", &args);
    store
}

/// A PKCS#12 key store made by `openssl pkcs12 -export`: the client's key and certificate,
/// and the CA certificate in its chain, protected by `password`.
fn openssl_key_store(
    dir: &Path,
    name: &str,
    client: &CertifiedPem,
    ca: &str,
    password: &str,
) -> PathBuf {
    let store = dir.join(format!("{name}.p12"));
    let cert = write(dir, &format!("{name}.crt"), &client.cert);
    let key = write(dir, &format!("{name}.key"), &client.key);
    let ca = write(dir, &format!("{name}-ca.crt"), ca);
    run(
        "openssl",
        &[
            "pkcs12",
            "-export",
            "-name",
            name,
            "-in",
            path(&cert),
            "-inkey",
            path(&key),
            "-certfile",
            path(&ca),
            "-out",
            path(&store),
            "-passout",
            &format!("pass:{password}"),
        ],
    );
    store
}

/// The PKCS#12 key store `p12` converted to JKS by `keytool -importkeystore`.
fn keytool_jks_key_store(dir: &Path, p12: &Path) -> PathBuf {
    let store = dir.join("user.jks");
    run(
        "keytool",
        &[
            "-importkeystore",
            "-noprompt",
            "-srckeystore",
            path(p12),
            "-srcstoretype",
            "PKCS12",
            "-srcstorepass",
            STORE_PASSWORD,
            "-destkeystore",
            path(&store),
            "-deststoretype",
            "JKS",
            "-deststorepass",
            STORE_PASSWORD,
        ],
    );
    store
}

fn certificates_der(pem: &str) -> Vec<Vec<u8>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .map(|certificate| certificate.unwrap().to_vec())
        .collect()
}

fn key_der(pem: &str) -> Vec<u8> {
    PrivateKeyDer::from_pem_slice(pem.as_bytes())
        .unwrap()
        .secret_der()
        .to_vec()
}

/// The TLS settings read with TLS on and `pairs` added.
/// A folder of the test's own with a new CA's certificate in `ca.crt`: the folder, the CA and
/// the file.
fn ca_in_temporary_folder() -> (tempfile::TempDir, TestCa, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("settings-test-ca").unwrap();
    let ca_file = write(dir.path(), "ca.crt", &ca.cert_pem());
    (dir, ca, ca_file)
}

/// Why the TLS settings of `pairs` are refused.
fn tls_refusal(pairs: &[(&str, &str)]) -> String {
    tls_settings(pairs).unwrap_err().to_string()
}

fn tls_settings(pairs: &[(&str, &str)]) -> Result<TlsConfig, AdminError> {
    let mut all = vec![
        ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9093"),
        ("STRIMZI_TLS_ENABLED", "true"),
    ];
    all.extend_from_slice(pairs);
    Ok(config(&all)?.tls.unwrap())
}

#[test]
fn trust_stores_made_by_keytool_give_their_ca_certificate_and_check_their_password() {
    let (dir, ca, ca_file) = ca_in_temporary_folder();
    let expected = certificates_der(&ca.cert_pem());
    for storetype in ["PKCS12", "JKS"] {
        let store = keytool_trust_store(dir.path(), storetype, &ca_file, &[]);
        let tls = tls_settings(&[
            ("STRIMZI_TRUSTSTORE_LOCATION", path(&store)),
            ("STRIMZI_TRUSTSTORE_PASSWORD", STORE_PASSWORD),
        ])
        .unwrap();
        assert_eq!(certificates_der(&tls.ca_pem), expected, "{storetype}");
        assert_eq!(tls.client_identity_pem, None);

        let error = tls_settings(&[
            ("STRIMZI_TRUSTSTORE_LOCATION", path(&store)),
            ("STRIMZI_TRUSTSTORE_PASSWORD", "not-the-password"),
        ])
        .unwrap_err();
        let message = error.to_string();
        assert_eq!(error.reason(), "KafkaInvalidConfig");
        assert!(
            message.starts_with(&format!(
                "STRIMZI_TRUSTSTORE_LOCATION={:?} is invalid",
                path(&store)
            )) && message.contains("STRIMZI_TRUSTSTORE_PASSWORD opens (the password is wrong"),
            "{storetype}: {message}"
        );
    }
    // Without a password, Java reads a JKS store's certificates without checking its
    // integrity, and cannot open a password-protected PKCS#12 store.
    let jks = keytool_trust_store(dir.path(), "JKS", &ca_file, &[]);
    let tls = tls_settings(&[("STRIMZI_TRUSTSTORE_LOCATION", path(&jks))]).unwrap();
    assert_eq!(certificates_der(&tls.ca_pem), expected);
    let p12 = keytool_trust_store(dir.path(), "PKCS12", &ca_file, &[]);
    let message = tls_refusal(&[("STRIMZI_TRUSTSTORE_LOCATION", path(&p12))]);
    assert!(
        message.contains("set STRIMZI_TRUSTSTORE_PASSWORD"),
        "{message}"
    );
}

#[test]
fn a_pkcs12_store_without_password_protection_opens_without_a_password() {
    let (dir, ca, ca_file) = ca_in_temporary_folder();
    // Java's way to write a PKCS#12 store with neither integrity check nor encryption.
    let store = keytool_trust_store(
        dir.path(),
        "PKCS12",
        &ca_file,
        &[
            "-J-Dkeystore.pkcs12.certProtectionAlgorithm=NONE",
            "-J-Dkeystore.pkcs12.macAlgorithm=NONE",
        ],
    );
    for password in [None, Some("")] {
        let mut pairs = vec![("STRIMZI_TRUSTSTORE_LOCATION", path(&store))];
        pairs.extend(password.map(|password| ("STRIMZI_TRUSTSTORE_PASSWORD", password)));
        let tls = tls_settings(&pairs).unwrap();
        assert_eq!(
            certificates_der(&tls.ca_pem),
            certificates_der(&ca.cert_pem())
        );
    }
}

#[test]
fn an_openssl_store_with_the_empty_password_trusts_its_key_entry_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("settings-test-ca").unwrap();
    let client = ca.client("alice", None).unwrap();
    let store = openssl_key_store(dir.path(), "alice", &client, &ca.cert_pem(), "");
    let tls = tls_settings(&[("STRIMZI_TRUSTSTORE_LOCATION", path(&store))]).unwrap();
    // As Java's trust manager: the leaf of a private-key entry is trusted; its chain is not.
    assert_eq!(
        certificates_der(&tls.ca_pem),
        certificates_der(&client.cert)
    );
}

#[test]
fn an_openssl_trust_store_without_javas_trust_mark_is_refused_with_the_reason() {
    let (dir, _, ca_file) = ca_in_temporary_folder();
    let store = dir.path().join("openssl-ca.p12");
    run(
        "openssl",
        &[
            "pkcs12",
            "-export",
            "-nokeys",
            "-in",
            path(&ca_file),
            "-out",
            path(&store),
            "-passout",
            &format!("pass:{STORE_PASSWORD}"),
        ],
    );
    let message = tls_refusal(&[
        ("STRIMZI_TRUSTSTORE_LOCATION", path(&store)),
        ("STRIMZI_TRUSTSTORE_PASSWORD", STORE_PASSWORD),
    ]);
    assert!(
        message.contains("marked trusted as Java requires"),
        "{message}"
    );
}

#[test]
fn key_stores_from_openssl_and_keytool_give_their_key_and_chain() {
    let (dir, ca, ca_file) = ca_in_temporary_folder();
    let truststore = keytool_trust_store(dir.path(), "PKCS12", &ca_file, &[]);
    let client = ca.client("alice", None).unwrap();
    let p12 = openssl_key_store(dir.path(), "user", &client, &ca.cert_pem(), STORE_PASSWORD);
    let jks = keytool_jks_key_store(dir.path(), &p12);
    let mut chain = certificates_der(&client.cert);
    chain.extend(certificates_der(&ca.cert_pem()));
    for store in [&p12, &jks] {
        let with_password = |password: Option<&str>| {
            let mut pairs = vec![
                ("STRIMZI_TRUSTSTORE_LOCATION", path(&truststore)),
                ("STRIMZI_TRUSTSTORE_PASSWORD", STORE_PASSWORD),
                ("STRIMZI_KEYSTORE_LOCATION", path(store)),
            ];
            pairs.extend(password.map(|password| ("STRIMZI_KEYSTORE_PASSWORD", password)));
            tls_settings(&pairs)
        };
        let identity = with_password(Some(STORE_PASSWORD))
            .unwrap()
            .client_identity_pem
            .unwrap();
        assert_eq!(certificates_der(&identity), chain, "{store:?}");
        assert_eq!(key_der(&identity), key_der(&client.key), "{store:?}");

        let message = with_password(Some("not-the-password"))
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("STRIMZI_KEYSTORE_LOCATION=")
                && message.contains("STRIMZI_KEYSTORE_PASSWORD opens"),
            "{message}"
        );
        // As with Strimzi, a key store is used only with its password; the operator logs
        // that it is not used.
        assert_eq!(with_password(None).unwrap().client_identity_pem, None);
        let unused = config(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9093"),
            ("STRIMZI_TLS_ENABLED", "true"),
            ("STRIMZI_TRUSTSTORE_LOCATION", path(&truststore)),
            ("STRIMZI_TRUSTSTORE_PASSWORD", STORE_PASSWORD),
            ("STRIMZI_KEYSTORE_LOCATION", path(store)),
        ])
        .unwrap()
        .unused_settings;
        assert!(
            unused
                .iter()
                .any(|line| line.contains("STRIMZI_KEYSTORE_PASSWORD is not set")),
            "{unused:?}"
        );
    }
}

#[test]
fn a_jceks_store_is_refused_by_name() {
    let (dir, _, ca_file) = ca_in_temporary_folder();
    let store = keytool_trust_store(dir.path(), "JCEKS", &ca_file, &[]);
    let message = tls_refusal(&[
        ("STRIMZI_TRUSTSTORE_LOCATION", path(&store)),
        ("STRIMZI_TRUSTSTORE_PASSWORD", STORE_PASSWORD),
    ]);
    assert!(message.contains("not a JCEKS store"), "{message}");
}

#[tokio::test]
async fn scram_sha_256_from_strimzis_variables_reaches_the_broker() {
    let bootstrap = &broker().listener("scram").unwrap().bootstrap;
    let settings = |password: &str| {
        config(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", bootstrap),
            ("STRIMZI_SECURITY_PROTOCOL", "SASL_PLAINTEXT"),
            ("STRIMZI_SASL_ENABLED", "true"),
            ("STRIMZI_SASL_MECHANISM", "scram-sha-256"),
            ("STRIMZI_SASL_USERNAME", ADMIN_USER),
            ("STRIMZI_SASL_PASSWORD", password),
        ])
        .unwrap()
    };
    let admin = AdminClient::new(settings(ADMIN_PASSWORD)).unwrap();
    let cluster = admin.describe_cluster().await.unwrap();
    assert_eq!(cluster.brokers.len(), 1);
    let mut topic = NewTopic::new("settings-scram-sha-256");
    topic.partitions = Some(1);
    topic.replication_factor = Some(1);
    let created = admin.create_topics(&[topic], false).await.unwrap();
    assert!(
        created.iter().all(|(_, result)| result.is_ok()),
        "{created:?}"
    );

    let refused = AdminClient::new(settings("not-the-password"))
        .unwrap()
        .describe_cluster()
        .await
        .unwrap_err();
    assert_eq!(refused.reason(), "KafkaAuthenticationFailed", "{refused}");
}

#[tokio::test]
async fn tls_with_pkcs12_and_jks_stores_reaches_the_broker() {
    let dir = tempfile::tempdir().unwrap();
    let bootstrap = &broker().listener("tls").unwrap().bootstrap;
    let client = broker().client_certificate(TLS_ADMIN_USER).unwrap();
    let p12_truststore = keytool_trust_store(dir.path(), "PKCS12", broker().ca_file(), &[]);
    let jks_truststore = keytool_trust_store(dir.path(), "JKS", broker().ca_file(), &[]);
    let p12_keystore = openssl_key_store(
        dir.path(),
        "user",
        &client,
        &broker().ca_pem(),
        STORE_PASSWORD,
    );
    let jks_keystore = keytool_jks_key_store(dir.path(), &p12_keystore);
    for (truststore, keystore) in [
        (&p12_truststore, &p12_keystore),
        (&jks_truststore, &jks_keystore),
    ] {
        let settings = config(&[
            ("STRIMZI_KAFKA_BOOTSTRAP_SERVERS", bootstrap),
            ("STRIMZI_TLS_ENABLED", "true"),
            ("STRIMZI_TRUSTSTORE_LOCATION", path(truststore)),
            ("STRIMZI_TRUSTSTORE_PASSWORD", STORE_PASSWORD),
            ("STRIMZI_KEYSTORE_LOCATION", path(keystore)),
            ("STRIMZI_KEYSTORE_PASSWORD", STORE_PASSWORD),
        ])
        .unwrap();
        assert_eq!(settings.security_protocol, SecurityProtocol::Ssl);
        let admin = AdminClient::new(settings).unwrap();
        let cluster = admin
            .describe_cluster()
            .await
            .unwrap_or_else(|error| panic!("{truststore:?} and {keystore:?}: {error}"));
        assert_eq!(cluster.brokers.len(), 1);
    }
}

/// What the token endpoint stand-in saw: one line per request, `ok` or what was wrong.
type Requests = Arc<Mutex<Vec<String>>>;

/// A contract stand-in for an OAuth server's token endpoint (RFC 6749, section 4.4, as
/// Strimzi OAuth's client asks): `POST /token` with a form body `grant_type=client_credentials`
/// and `scope=kafka`, the client's id and secret in a Basic `Authorization` header. It answers
/// with an unsigned JWT for the principal `admin` (which the broker's unsecured validation
/// accepts), and anything else with a 400 or 401 naming what was wrong. It serves at most 20
/// requests.
fn token_endpoint() -> (String, Requests) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let uri = format!("http://{}/token", listener.local_addr().unwrap());
    let requests: Requests = Arc::default();
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(20) {
            let mut stream = stream.unwrap();
            let (status, body) = match check_token_request(&mut stream) {
                Ok(()) => {
                    seen.lock().unwrap().push("ok".to_owned());
                    let token = unsigned_jwt(ADMIN_USER, 3600);
                    (
                        "200 OK",
                        serde_json::json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}),
                    )
                }
                Err((status, problem)) => {
                    seen.lock().unwrap().push(problem.clone());
                    (
                        status,
                        serde_json::json!({"error": "invalid_request", "error_description": problem}),
                    )
                }
            };
            let body = body.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (uri, requests)
}

fn check_token_request(stream: &mut std::net::TcpStream) -> Result<(), (&'static str, String)> {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|length| length.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let bad = |problem: String| Err(("400 Bad Request", problem));
    if request_line.trim_end() != "POST /token HTTP/1.1" {
        return bad(format!("expected POST /token, got {request_line:?}"));
    }
    if headers.get("content-type").map(String::as_str) != Some("application/x-www-form-urlencoded")
    {
        return bad(format!(
            "expected a form body, got {:?}",
            headers.get("content-type")
        ));
    }
    let form: HashMap<&str, &str> = std::str::from_utf8(&body)
        .unwrap()
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .collect();
    if form.get("grant_type") != Some(&"client_credentials") {
        return bad(format!(
            "expected grant_type=client_credentials, got {form:?}"
        ));
    }
    if form.get("scope") != Some(&OAUTH_SCOPE) {
        return bad(format!("expected scope={OAUTH_SCOPE}, got {form:?}"));
    }
    let expected = format!(
        "Basic {}",
        STANDARD.encode(format!("{OAUTH_CLIENT_ID}:{OAUTH_CLIENT_SECRET}"))
    );
    if headers.get("authorization") != Some(&expected) {
        return Err((
            "401 Unauthorized",
            format!(
                "wrong client credentials: {:?}",
                headers.get("authorization")
            ),
        ));
    }
    Ok(())
}

/// An unsigned JWT (`"alg":"none"`) for `subject`, valid for `seconds` from now (negative: expired).
fn unsigned_jwt(subject: &str, seconds: i64) -> String {
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap();
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#);
    let claims = URL_SAFE_NO_PAD.encode(
        serde_json::json!({"sub": subject, "iat": now.min(now + seconds) - 60, "exp": now + seconds})
            .to_string(),
    );
    format!("{header}.{claims}.")
}

/// The settings for the SCRAM listener with OAUTHBEARER and Strimzi OAuth's `options`.
fn oauth_settings(options: &str) -> AdminConfig {
    let custom = serde_json::json!({
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": format!("{OAUTHBEARER_LOGIN_MODULE} required {options} ;"),
        "sasl.login.callback.handler.class": STRIMZI_OAUTH_HANDLER,
    })
    .to_string();
    config(&[
        (
            "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
            &broker().listener("scram").unwrap().bootstrap,
        ),
        ("STRIMZI_SECURITY_PROTOCOL", "SASL_PLAINTEXT"),
        ("STRIMZI_SASL_ENABLED", "true"),
        ("STRIMZI_SASL_CUSTOM_CONFIG_JSON", &custom),
    ])
    .unwrap()
}

#[tokio::test]
async fn oauthbearer_with_a_client_credentials_token_reaches_the_broker() {
    let (uri, requests) = token_endpoint();
    let options = |secret: &str| {
        format!(
            r#"oauth.token.endpoint.uri="{uri}" oauth.client.id="{OAUTH_CLIENT_ID}" oauth.client.secret="{secret}" oauth.scope="{OAUTH_SCOPE}""#
        )
    };
    let admin = AdminClient::new(oauth_settings(&options(OAUTH_CLIENT_SECRET))).unwrap();
    let cluster = admin.describe_cluster().await.unwrap_or_else(|error| {
        panic!(
            "{error}; the token endpoint saw {:?}",
            requests.lock().unwrap()
        )
    });
    assert_eq!(cluster.brokers.len(), 1);
    let mut topic = NewTopic::new("settings-oauthbearer");
    topic.partitions = Some(1);
    topic.replication_factor = Some(1);
    let created = admin.create_topics(&[topic], false).await.unwrap();
    assert!(
        created.iter().all(|(_, result)| result.is_ok()),
        "{created:?}"
    );
    // One token, taken by the first connection and held for the later ones.
    assert_eq!(*requests.lock().unwrap(), ["ok"]);

    let refused = AdminClient::new(oauth_settings(&options("not-the-secret")))
        .unwrap()
        .describe_cluster()
        .await
        .unwrap_err();
    let message = refused.to_string();
    assert_eq!(refused.reason(), "KafkaAuthenticationFailed", "{message}");
    assert!(
        message.contains(&format!("OAuth token endpoint {uri}: answered 401"))
            && message.contains("wrong client credentials"),
        "{message}"
    );
    assert_eq!(requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_static_oauth_token_is_sent_and_an_expired_one_is_refused_by_the_broker() {
    let admin = AdminClient::new(oauth_settings(&format!(
        r#"oauth.access.token="{}""#,
        unsigned_jwt(ADMIN_USER, 600)
    )))
    .unwrap();
    assert_eq!(admin.describe_cluster().await.unwrap().brokers.len(), 1);

    let expired = AdminClient::new(oauth_settings(&format!(
        r#"oauth.access.token="{}""#,
        unsigned_jwt(ADMIN_USER, -600)
    )))
    .unwrap()
    .describe_cluster()
    .await
    .unwrap_err();
    let message = expired.to_string();
    assert_eq!(expired.reason(), "KafkaAuthenticationFailed", "{message}");
    assert!(
        message.contains("the broker refused the OAuth token"),
        "{message}"
    );
}
