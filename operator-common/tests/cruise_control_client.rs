//! The Cruise Control client against a real HTTP server on 127.0.0.1 (axum, as plain HTTP and
//! behind TLS with a certificate of a test CA): what goes over the wire (method, path, query,
//! credentials, `User-Task-ID`) and how the answers are read (200 and 202 with their task,
//! chunked bodies, Gson's `NaN`, error bodies). The server answers with canned bodies shaped
//! like Cruise Control 2.5's; it does not compute anything.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::json;
use strimzi_operator_common::cruise_control::{
    Credentials, CruiseControlClient, CruiseControlError, ProposalAnswer, ProposalOptions,
    ProposalRequest, ProposalScope, TaskStatus,
};
use strimzi_operator_common::http_client::{HttpError, Server, ServerTls};
use strimzi_operator_common::kafka::{HostResolution, TlsConfig};
use strimzi_tests::certs::TestCa;

const USER: &str = "rebalance-operator";
const PASSWORD: &str = "s3cret";
const SERVER_NAME: &str = "my-cluster-cruise-control.kafka.svc";

/// One request as the server saw it.
#[derive(Clone, Debug)]
struct Seen {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    task_header: Option<String>,
}

#[derive(Clone, Default)]
struct FakeCruiseControl {
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeCruiseControl {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn proposal_body() -> String {
    // Gson writes non-finite numbers bare, as here.
    r#"{"summary": {"numReplicaMovements": 12, "dataToMoveMB": 340, "numLeaderMovements": 4,
        "numIntraBrokerReplicaMovements": 0, "intraBrokerDataToMoveMB": 0, "recentWindows": 5,
        "monitoredPartitionsPercentage": 100.0, "excludedTopics": [],
        "excludedBrokersForLeadership": [], "excludedBrokersForReplicaMove": [],
        "onDemandBalancednessScoreBefore": NaN, "onDemandBalancednessScoreAfter": 91.5,
        "provisionStatus": "RIGHT_SIZED", "provisionRecommendation": ""},
       "goalSummary": [], "proposals": [],
       "loadBeforeOptimization": {"hosts": [], "brokers": [{"Broker": 0, "Leaders": 3, "Replicas": 9, "CpuPct": 1.5}]},
       "loadAfterOptimization": {"hosts": [], "brokers": [{"Broker": 0, "Leaders": 2, "Replicas": 6, "CpuPct": 1.0}]},
       "version": 1}"#
        .to_owned()
}

fn error_body(status: StatusCode, message: &str) -> Response {
    let body =
        json!({"errorMessage": message, "stackTrace": "java.lang.Exception ...", "version": 1});
    (status, body.to_string()).into_response()
}

fn with_task(status: StatusCode, task: &str, body: String) -> Response {
    (status, [("User-Task-ID", task)], body).into_response()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            out.push(u8::from_str_radix(&text[index + 1..index + 3], 16).unwrap());
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

async fn handle(
    State(fake): State<FakeCruiseControl>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"))
    );
    if headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        != Some(&expected)
    {
        return (
            StatusCode::UNAUTHORIZED,
            "<html><body>401 Unauthorized</body></html>",
        )
            .into_response();
    }
    let query: Vec<(String, String)> = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, value)| (decode(name), decode(value)))
        .collect();
    let param = |name: &str| {
        query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    let task_header = headers
        .get("user-task-id")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    fake.seen.lock().unwrap().push(Seen {
        method: method.clone(),
        path: uri.path().to_owned(),
        query: query.clone(),
        task_header: task_header.clone(),
    });
    match (method, uri.path()) {
        (Method::GET, "/kafkacruisecontrol/state") => {
            // Sent in pieces, so the body goes out chunked.
            let state = json!({"ExecutorState": {
                "state": "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS",
                "triggeredUserTaskId": "task-1",
                "triggeredTaskReason": "No reason provided (Client: 127.0.0.1, Date: 2026-11-25T10:00:00Z)",
                "finishedDataMovement": 100, "totalDataToMove": 400
            }, "version": 1})
            .to_string();
            let (first, rest) = state.split_at(state.len() / 2);
            let pieces: Vec<Result<String, std::io::Error>> =
                vec![Ok(first.to_owned()), Ok(rest.to_owned())];
            Response::new(Body::from_stream(futures::stream::iter(pieces)))
        }
        (Method::POST, "/kafkacruisecontrol/rebalance") => match task_header.as_deref() {
            Some("task-1") => with_task(StatusCode::OK, "task-1", proposal_body()),
            _ => with_task(
                StatusCode::ACCEPTED,
                "task-1",
                json!({"progress": [{"operation": "Rebalance"}], "version": 1}).to_string(),
            ),
        },
        (Method::POST, "/kafkacruisecontrol/add_broker") => {
            if param("goals").is_some_and(|goals| goals.contains("NoSuchGoal")) {
                error_body(
                    StatusCode::BAD_REQUEST,
                    "Bad POST request '/add_broker' due to 'Goal NoSuchGoal is not supported.'.",
                )
            } else {
                error_body(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Error processing POST request '/add_broker' due to: 'com.linkedin.kafka.cruisecontrol.exception.NotEnoughValidWindowsException: There are only 0 valid windows'.",
                )
            }
        }
        (Method::GET, "/kafkacruisecontrol/user_tasks") => {
            let id = param("user_task_ids").unwrap_or_default();
            let tasks = if id == "task-1" {
                json!([{"UserTaskId": "task-1", "Status": "Completed", "StartMs": "1764064800000",
                        "ClientIdentity": "127.0.0.1",
                        "RequestURL": "POST /kafkacruisecontrol/rebalance?dryrun=true",
                        "originalResponse": proposal_body()}])
            } else {
                json!([])
            };
            (
                StatusCode::OK,
                json!({"userTasks": tasks, "version": 1}).to_string(),
            )
                .into_response()
        }
        (Method::POST, "/kafkacruisecontrol/stop_proposal_execution") => (
            StatusCode::OK,
            json!({"message": "Proposal execution stopped.", "version": 1}).to_string(),
        )
            .into_response(),
        (Method::POST, "/kafkacruisecontrol/topic_configuration") => with_task(
            StatusCode::ACCEPTED,
            "task-7",
            json!({"progress": [], "version": 1}).to_string(),
        ),
        _ => error_body(StatusCode::NOT_FOUND, "Unsupported request"),
    }
}

fn router(fake: FakeCruiseControl) -> Router {
    Router::new().fallback(handle).with_state(fake)
}

fn client(address: SocketAddr, tls: Option<ServerTls>, password: &str) -> CruiseControlClient {
    CruiseControlClient::new(
        Server {
            host: address.ip().to_string(),
            port: address.port(),
            tls,
            host_resolution: HostResolution::IpAddressesOnly,
        },
        Some(Credentials {
            user: USER.to_owned(),
            password: password.to_owned(),
        }),
        Duration::from_secs(10),
    )
}

fn full_rebalance() -> ProposalRequest {
    ProposalRequest {
        scope: ProposalScope::Full {
            rebalance_disk: false,
            concurrent_intra_broker_partition_movements: None,
        },
        options: ProposalOptions {
            goals: vec!["RackAwareGoal".to_owned(), "DiskCapacityGoal".to_owned()],
            excluded_topics: Some("archive-.*".to_owned()),
            ..ProposalOptions::default()
        },
    }
}

#[tokio::test]
async fn the_client_talks_to_a_real_http_server() {
    let fake = FakeCruiseControl::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let serve = axum::serve(listener, router(fake.clone()));
    let server = tokio::spawn(async move { serve.await });
    let cruise_control = client(address, None, PASSWORD);

    // 202 first, then the same request with the task's ID gets the result.
    let proposal = full_rebalance();
    let pending = cruise_control
        .request_proposal(&proposal, true)
        .await
        .unwrap();
    assert_eq!(
        pending,
        ProposalAnswer::InProgress {
            task_id: "task-1".to_owned()
        }
    );
    let ready = cruise_control
        .proposal_of_task(&proposal, true, "task-1")
        .await
        .unwrap();
    let ProposalAnswer::Ready { task_id, result } = ready else {
        panic!("not ready: {ready:?}");
    };
    assert_eq!(task_id.as_deref(), Some("task-1"));
    assert_eq!(result.summary.num_replica_movements, Some(12));
    assert_eq!(
        result.summary_json["onDemandBalancednessScoreBefore"],
        serde_json::Value::Null
    );
    assert_eq!(result.load_before.unwrap()[0].leaders, Some(3));
    assert_eq!(result.load_after.unwrap()[0].cpu_percentage, Some(1.0));

    // The task, with its original answer.
    let task = cruise_control.user_task("task-1").await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Completed);
    assert_eq!(task.result.unwrap().summary.data_to_move_mb, Some(340));
    assert_eq!(cruise_control.user_task("forgotten").await.unwrap(), None);

    // A chunked answer.
    let executor = cruise_control.executor_state().await.unwrap();
    assert_eq!(executor.total_data_to_move_mb, Some(400));
    assert_eq!(
        executor.task_started(),
        Some("2026-11-25T10:00:00Z".parse().unwrap())
    );

    cruise_control.stop_execution().await.unwrap();
    assert_eq!(
        cruise_control
            .change_replication_factor("orders|payments", 3)
            .await
            .unwrap(),
        ProposalAnswer::InProgress {
            task_id: "task-7".to_owned()
        }
    );

    // Errors: a goal Cruise Control does not know, and too few metric windows.
    let mut add = ProposalRequest {
        scope: ProposalScope::AddBrokers(vec![3, 4]),
        options: ProposalOptions {
            goals: vec!["NoSuchGoal".to_owned()],
            ..ProposalOptions::default()
        },
    };
    let refused = cruise_control
        .request_proposal(&add, true)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, CruiseControlError::Rejected { status: 400, message, .. } if message.contains("NoSuchGoal")),
        "{refused:?}"
    );
    add.options.goals.clear();
    let early = cruise_control
        .request_proposal(&add, false)
        .await
        .unwrap_err();
    assert!(
        matches!(early, CruiseControlError::NotEnoughData { .. }),
        "{early:?}"
    );

    // What went over the wire.
    let seen = fake.seen();
    let paths: Vec<(Method, &str)> = seen
        .iter()
        .map(|request| (request.method.clone(), request.path.as_str()))
        .collect();
    assert_eq!(
        paths,
        [
            (Method::POST, "/kafkacruisecontrol/rebalance"),
            (Method::POST, "/kafkacruisecontrol/rebalance"),
            (Method::GET, "/kafkacruisecontrol/user_tasks"),
            (Method::GET, "/kafkacruisecontrol/user_tasks"),
            (Method::GET, "/kafkacruisecontrol/state"),
            (Method::POST, "/kafkacruisecontrol/stop_proposal_execution"),
            (Method::POST, "/kafkacruisecontrol/topic_configuration"),
            (Method::POST, "/kafkacruisecontrol/add_broker"),
            (Method::POST, "/kafkacruisecontrol/add_broker"),
        ]
    );
    assert_eq!(seen[0].task_header, None);
    assert_eq!(seen[1].task_header.as_deref(), Some("task-1"));
    let query = |index: usize, name: &str| {
        seen[index]
            .query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    assert_eq!(
        query(0, "goals").as_deref(),
        Some("RackAwareGoal,DiskCapacityGoal")
    );
    assert_eq!(query(0, "excluded_topics").as_deref(), Some("archive-.*"));
    assert_eq!(query(0, "dryrun").as_deref(), Some("true"));
    assert_eq!(query(2, "fetch_completed_task").as_deref(), Some("true"));
    assert_eq!(query(4, "substates").as_deref(), Some("executor"));
    assert_eq!(query(6, "topic").as_deref(), Some("orders|payments"));
    assert_eq!(query(8, "brokerid").as_deref(), Some("3,4"));
    assert_eq!(query(8, "dryrun").as_deref(), Some("false"));
    assert!(
        seen.iter()
            .all(|request| request.query.first() == Some(&("json".to_owned(), "true".to_owned())))
    );

    // Wrong credentials.
    let denied = client(address, None, "wrong")
        .executor_state()
        .await
        .unwrap_err();
    assert!(
        matches!(denied, CruiseControlError::Unauthorized { status: 401, .. }),
        "{denied:?}"
    );
    assert_eq!(fake.seen().len(), seen.len(), "refused before it counted");
    server.abort();
}

/// A TCP listener that completes a TLS handshake before handing connections to axum.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, address)) = self.tcp.accept().await else {
                continue;
            };
            // A client that refuses the certificate ends the handshake: wait for the next.
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, address);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

fn tls_acceptor(ca: &TestCa) -> tokio_rustls::TlsAcceptor {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    // The names Cruise Control's certificate carries.
    let certified = ca
        .server(
            "my-cluster-cruise-control",
            &[
                "my-cluster-cruise-control",
                "my-cluster-cruise-control.kafka",
                SERVER_NAME,
                "my-cluster-cruise-control.kafka.svc.cluster.local",
            ],
        )
        .unwrap();
    let chain = CertificateDer::pem_slice_iter(certified.cert.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(certified.key.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .unwrap();
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

#[tokio::test]
async fn tls_checks_the_cluster_ca_and_the_service_name() {
    let ca = TestCa::new("cluster-ca v0").unwrap();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = tcp.local_addr().unwrap();
    let listener = TlsListener {
        tcp,
        acceptor: tls_acceptor(&ca),
    };
    let serve = axum::serve(listener, router(FakeCruiseControl::default()));
    let server = tokio::spawn(async move { serve.await });
    let tls = |ca_pem: String, server_name: &str| {
        Some(ServerTls {
            config: TlsConfig {
                ca_pem,
                client_identity_pem: None,
                verify_hostname: true,
            },
            server_name: server_name.to_owned(),
        })
    };

    // The pod's address, checked against the Service's name.
    let trusted = client(address, tls(ca.cert_pem(), SERVER_NAME), PASSWORD);
    let state = trusted.executor_state().await.unwrap();
    assert_eq!(state.triggered_user_task_id.as_deref(), Some("task-1"));

    let wrong_name = client(
        address,
        tls(ca.cert_pem(), "other-cruise-control.kafka.svc"),
        PASSWORD,
    );
    let error = wrong_name.executor_state().await.unwrap_err();
    assert!(
        matches!(&error, CruiseControlError::Http(HttpError::Connection { message, .. }) if message.contains("certificate")),
        "{error:?}"
    );

    let other_ca = TestCa::new("another ca").unwrap();
    let untrusted = client(address, tls(other_ca.cert_pem(), SERVER_NAME), PASSWORD);
    let error = untrusted.executor_state().await.unwrap_err();
    assert!(
        matches!(
            &error,
            CruiseControlError::Http(HttpError::Connection { .. })
        ),
        "{error:?}"
    );
    assert!(error.is_transient());

    let no_ca = client(address, tls(String::new(), SERVER_NAME), PASSWORD);
    let error = no_ca.executor_state().await.unwrap_err();
    assert!(
        matches!(&error, CruiseControlError::Http(HttpError::Tls { .. })),
        "{error:?}"
    );
    server.abort();
}
