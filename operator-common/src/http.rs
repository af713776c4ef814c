//! The HTTP server of an operator: `/healthy`, `/ready` (once every cache has synced) and
//! `/metrics` in Prometheus text format.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;

/// The server could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The address could not be bound or the server failed.
    #[error("HTTP server on {address}: {source}")]
    Serve {
        /// Address the server was to listen on.
        address: SocketAddr,
        /// What failed.
        source: std::io::Error,
    },
}

impl crate::ErrorReason for HttpError {
    fn reason(&self) -> &'static str {
        "HttpServerError"
    }
}

/// Whether every cache an operator waits for has synced. Cloning shares the state.
#[derive(Debug, Clone, Default)]
pub struct Readiness {
    unsynced: Arc<AtomicUsize>,
}

/// One cache the operator waits for; ready once [`CacheSync::synced`] is called.
#[derive(Debug)]
pub struct CacheSync {
    unsynced: Arc<AtomicUsize>,
}

impl Readiness {
    /// Adds a cache to wait for.
    pub fn track(&self) -> CacheSync {
        self.unsynced.fetch_add(1, Ordering::SeqCst);
        CacheSync {
            unsynced: self.unsynced.clone(),
        }
    }

    /// Whether every tracked cache has synced.
    pub fn is_ready(&self) -> bool {
        self.unsynced.load(Ordering::SeqCst) == 0
    }
}

impl CacheSync {
    /// Marks the cache as synced.
    pub fn synced(self) {
        self.unsynced.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Clone)]
struct ServerState {
    metrics: Metrics,
    readiness: Readiness,
}

/// The routes of the server.
pub fn router(metrics: Metrics, readiness: Readiness) -> Router {
    Router::new()
        .route("/healthy", get(|| async { (StatusCode::OK, "ok") }))
        .route("/ready", get(ready))
        .route("/metrics", get(metrics_text))
        .with_state(ServerState { metrics, readiness })
}

async fn ready(State(state): State<ServerState>) -> (StatusCode, &'static str) {
    if state.readiness.is_ready() {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "caches not synced yet")
    }
}

async fn metrics_text(State(state): State<ServerState>) -> (StatusCode, String) {
    match state.metrics.encode() {
        Ok(text) => (StatusCode::OK, text),
        Err(error) => (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()),
    }
}

/// Binds `address` and serves [`router`] until `shutdown` is cancelled. Returns the bound
/// address (useful with port 0) and the serving task.
pub async fn serve(
    address: SocketAddr,
    metrics: Metrics,
    readiness: Readiness,
    shutdown: CancellationToken,
) -> Result<(SocketAddr, tokio::task::JoinHandle<Result<(), HttpError>>), HttpError> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| HttpError::Serve { address, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| HttpError::Serve { address, source })?;
    let server = axum::serve(listener, router(metrics, readiness))
        .with_graceful_shutdown(async move { shutdown.cancelled().await });
    let task = tokio::spawn(async move {
        server.await.map_err(|source| HttpError::Serve {
            address: bound,
            source,
        })
    });
    Ok((bound, task))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(address: SocketAddr, path: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    #[tokio::test]
    async fn health_readiness_and_metrics() {
        let metrics = Metrics::new().unwrap();
        metrics.count_write("Pod", "delete");
        let readiness = Readiness::default();
        let cache = readiness.track();
        let shutdown = CancellationToken::new();
        let (address, task) = serve(
            "127.0.0.1:0".parse().unwrap(),
            metrics,
            readiness,
            shutdown.clone(),
        )
        .await
        .unwrap();
        assert!(get(address, "/healthy").await.starts_with("HTTP/1.1 200"));
        assert!(get(address, "/ready").await.starts_with("HTTP/1.1 503"));
        cache.synced();
        assert!(get(address, "/ready").await.starts_with("HTTP/1.1 200"));
        let text = get(address, "/metrics").await;
        assert!(
            text.contains("strimzi_operator_api_writes_total{kind=\"Pod\",verb=\"delete\"} 1"),
            "{text}"
        );
        shutdown.cancel();
        task.await.unwrap().unwrap();
    }
}
