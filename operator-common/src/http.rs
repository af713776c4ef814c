//! The HTTP server of an operator: `/healthy`, `/ready` (once every cache has synced) and
//! `/metrics` in Prometheus text format.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
    all_tracked: Arc<AtomicBool>,
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

    /// Says that every cache to wait for is tracked; until then the operator is not ready.
    pub fn all_tracked(&self) {
        self.all_tracked.store(true, Ordering::SeqCst);
    }

    /// Whether every cache is tracked and has synced.
    pub fn is_ready(&self) -> bool {
        self.all_tracked.load(Ordering::SeqCst) && self.unsynced.load(Ordering::SeqCst) == 0
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
    use super::*;

    #[test]
    fn ready_once_every_tracked_cache_synced() {
        let readiness = Readiness::default();
        assert!(!readiness.is_ready(), "nothing tracked yet");
        let first = readiness.track();
        let second = readiness.track();
        readiness.all_tracked();
        assert!(!readiness.is_ready());
        first.synced();
        assert!(!readiness.is_ready());
        second.synced();
        assert!(readiness.is_ready());
    }
}
