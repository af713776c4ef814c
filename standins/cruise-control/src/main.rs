//! `strimzi-cruise-control-standin`: the Cruise Control stand-in's program. Reads the pod's
//! environment and files, then serves the REST API until SIGTERM. Exits 1 with one line
//! naming the file, variable or key when the configuration is missing or malformed.

use std::process::ExitCode;
use std::sync::Arc;

use strimzi_cruise_control_standin::config::{self, Paths};
use strimzi_cruise_control_standin::service::StandIn;
use strimzi_operator_common::kafka::AdminClient;

/// Ends the start: one line naming what is wrong, exit status 1.
fn fail(message: impl std::fmt::Display) -> ExitCode {
    strimzi_standin_common::fail("Cruise Control stand-in", 1, message)
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let settings = match config::load(|name| std::env::var(name).ok(), &Paths::default()) {
        Ok(settings) => settings,
        Err(error) => return fail(error),
    };
    if !settings.ignored.is_empty() {
        tracing::info!(
            "options accepted but not acted on by the stand-in: {}",
            settings.ignored.join(", ")
        );
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(format!("runtime: {error}")),
    };
    match runtime.block_on(run(settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(error),
    }
}

async fn run(settings: config::Settings) -> Result<(), String> {
    let admin = AdminClient::new(settings.kafka.clone())
        .map_err(|error| format!("STRIMZI_KAFKA_BOOTSTRAP_SERVERS / certificates: {error}"))?;
    let port = settings.api.port;
    let tcp = tokio::net::TcpListener::bind(("0.0.0.0", port))
        .await
        .map_err(|error| format!("webserver.http.port {port}: {error}"))?;
    tracing::info!(
        port,
        tls = settings.api.tls.is_some(),
        auth = settings.api.users.is_some(),
        "Cruise Control stand-in serving"
    );
    let metrics = if settings.metrics {
        let port = config::METRICS_PORT;
        Some(
            tokio::net::TcpListener::bind(("0.0.0.0", port))
                .await
                .map_err(|error| format!("metrics port {port}: {error}"))?,
        )
    } else {
        None
    };
    let standin = StandIn::new(settings, Arc::new(admin));
    if let Some(listener) = metrics {
        let app = strimzi_cruise_control_standin::metrics::router(standin.clone());
        tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::error!(%error, "metrics endpoint stopped");
            }
        });
    }
    strimzi_cruise_control_standin::serve(standin, tcp, strimzi_standin_common::stop_signal()).await
}
