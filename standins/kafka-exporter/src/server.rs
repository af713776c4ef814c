//! The HTTP side: `/metrics` (or `--web.telemetry-path`) scrapes the cluster on every request,
//! as the real exporter does; `/healthz` answers 200 `ok` while the process runs; `/` links to
//! the metrics.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::collect::Collector;
use crate::config::ExporterConfig;
use crate::metrics::render;

/// What the handlers share.
struct Shared {
    collector: Collector,
    config: ExporterConfig,
}

/// The exporter's routes.
pub fn router(collector: Collector, config: ExporterConfig) -> Router {
    let path = config.telemetry_path.clone();
    let shared = Arc::new(Shared { collector, config });
    Router::new()
        .route(&path, get(metrics))
        .route("/healthz", get(|| async { "ok" }))
        .route("/", get(index))
        .with_state(shared)
}

async fn index(State(shared): State<Arc<Shared>>) -> Html<String> {
    let path = &shared.config.telemetry_path;
    Html(format!(
        "<html><head><title>Kafka Exporter stand-in</title></head><body>\
         <h1>Kafka Exporter stand-in</h1><p><a href=\"{path}\">Metrics</a></p></body></html>"
    ))
}

async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    let scrape = Arc::clone(&shared);
    let snapshot = tokio::task::spawn_blocking(move || scrape.collector.snapshot()).await;
    match snapshot {
        Ok(Ok(snapshot)) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            render(
                &snapshot,
                &shared.config.filters,
                shared.config.show_all_offsets,
            ),
        )
            .into_response(),
        Ok(Err(error)) => {
            eprintln!("scrape failed: {error}");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("scrape failed: {error}\n"),
            )
                .into_response()
        }
        Err(error) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("scrape failed: {error}\n"),
        )
            .into_response(),
    }
}
