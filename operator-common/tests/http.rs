//! The health and metrics server of a running operator: `/healthy` at once, `/ready` once
//! the caches synced, `/metrics` with Strimzi's metric names and process metrics.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The status line and body of `GET path`.
async fn get(address: SocketAddr, path: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    let (client, namespace) = support::namespace("http").await;
    let runtime = strimzi_operator_common::runtime::OperatorRuntime::new(
        client.clone(),
        support::config(&namespace, &[]),
        "test-operator",
    )
    .unwrap();
    let address = runtime
        .serve_http(([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    assert!(get(address, "/healthy").await.starts_with("HTTP/1.1 200"));
    assert!(
        get(address, "/ready").await.starts_with("HTTP/1.1 503"),
        "not ready before the caches start"
    );
    runtime.shutdown_token().cancel();

    let running = support::start_default(&client, &namespace, Duration::ZERO);
    let address = running
        .runtime
        .serve_http(([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    support::create(&client, &namespace, support::topic("served", json!({}))).await;
    support::wait_for_condition(&client, &namespace, "served", "Ready").await;
    assert!(get(address, "/ready").await.starts_with("HTTP/1.1 200"));
    let labels = format!("kind=\"KafkaTopic\",namespace=\"{namespace}\",selector=\"\"");
    let expected = [
        format!("strimzi_reconciliations_total{{{labels}}}"),
        format!("strimzi_reconciliations_successful_total{{{labels}}}"),
        format!("strimzi_reconciliations_duration_seconds_count{{{labels}}}"),
        "strimzi_operator_api_writes_total{kind=\"ConfigMap\",verb=\"apply\"} 1".to_owned(),
        "strimzi_operator_api_writes_total{kind=\"KafkaTopic\",verb=\"status\"} 1".to_owned(),
        "process_resident_memory_bytes".to_owned(),
    ];
    // The reconciliation is counted when it returns, just after it wrote the Ready status
    // the test waited for: ask again for a moment.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let metrics = get(address, "/metrics").await;
        let missing: Vec<&String> = expected
            .iter()
            .filter(|line| !metrics.contains(line.as_str()))
            .collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "missing {missing:?} in\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    running.stop().await;
}
