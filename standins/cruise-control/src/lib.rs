//! A **contract stand-in** for Cruise Control 2.5 (not Cruise Control): it reads what Cruise
//! Control reads in the pods our cluster operator creates (CONTRACT.md 5.1, 5.2), connects to
//! Kafka the same way (mutual TLS with the mounted certificates), and serves the REST API
//! subset our operators call (5.4) with real proposals carried out through Kafka's admin API.
//!
//! Layout: [`config`] reads and checks the configuration; [`model`] computes proposals (pure);
//! [`monitor`] counts metric windows (pure); [`render`] shapes the JSON (pure); [`service`]
//! holds the state and talks to Kafka; [`executor`] carries proposals out; [`api`] is the
//! HTTP side; [`metrics`] the Prometheus endpoint; [`serve`] puts them together.

pub mod api;
pub mod config;
pub mod executor;
pub mod metrics;
pub mod model;
pub mod monitor;
pub mod render;
pub mod service;
pub mod tls;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use service::StandIn;

/// The address of a REST API client (what Cruise Control reports as `Client:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddress(pub SocketAddr);

impl Connected<IncomingStream<'_, tokio::net::TcpListener>> for ClientAddress {
    fn connect_info(stream: IncomingStream<'_, tokio::net::TcpListener>) -> Self {
        Self(*stream.remote_addr())
    }
}

impl Connected<IncomingStream<'_, tls::TlsListener>> for ClientAddress {
    fn connect_info(stream: IncomingStream<'_, tls::TlsListener>) -> Self {
        Self(*stream.remote_addr())
    }
}

/// Serves the REST API of `standin` on `tcp` (HTTPS when configured) until `shutdown`
/// completes, sampling the cluster meanwhile.
pub async fn serve(
    standin: Arc<StandIn>,
    tcp: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let sampler = tokio::spawn(standin.clone().sample_forever());
    let app = api::router(standin.clone()).into_make_service_with_connect_info::<ClientAddress>();
    let result = match &standin.settings.api.tls {
        Some((chain, key)) => {
            let listener = tls::TlsListener {
                tcp,
                acceptor: tls::acceptor(chain, key)?,
            };
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
        }
        None => axum::serve(tcp, app).with_graceful_shutdown(shutdown).await,
    };
    sampler.abort();
    result.map_err(|error| format!("REST API: {error}"))
}
