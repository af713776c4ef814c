//! `strimzi-bridge-standin --config-file=<file>`: the HTTP Bridge's API over rdkafka (see the
//! library). Without arguments it reads the file the pod mounts,
//! `$STRIMZI_HOME/custom-config/application.properties`, so that the image may install it as
//! the start script itself. A configuration it cannot use ends it at once with exit status 2 and one line on
//! standard error naming the file, key or Secret.

use std::process::ExitCode;
use std::time::Duration;

use strimzi_bridge_standin::https;
use strimzi_bridge_standin::kafka::Producer;
use strimzi_bridge_standin::server::{Bridge, api_router, management_router};
use strimzi_bridge_standin::startup::{config_file, load, redacted};

use strimzi_standin_common::stop_signal;

/// Ends the start: one line naming what is wrong, exit status 2.
fn fail(message: impl std::fmt::Display) -> ExitCode {
    strimzi_standin_common::fail("bridge-standin", 2, message)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let home = std::env::var("STRIMZI_HOME").ok();
    let path = match config_file(&args, home.as_deref()) {
        Ok(path) => path,
        Err(error) => return fail(error),
    };
    // The configuration it starts with, secrets hidden, as the start script prints it.
    if let Ok(text) = std::fs::read_to_string(&path) {
        println!("bridge-standin: configuration {path}:\n{}", redacted(&text));
    }
    let config = match load(&path).await {
        Ok(config) => config,
        Err(error) => return fail(error),
    };
    let acceptor = match config.http.tls.as_ref().map(https::acceptor).transpose() {
        Ok(acceptor) => acceptor,
        Err(error) => return fail(format!("{path}: {error}")),
    };
    if let Some(tracing) = &config.tracing {
        eprintln!("bridge-standin: bridge.tracing={tracing} is accepted but nothing is traced");
    }
    let producer = match Producer::new(&config.producer) {
        Ok(producer) => producer,
        Err(error) => return fail(format!("{path}: kafka.producer settings: {error}")),
    };
    // Consumer settings are checked now, not at the first request.
    let mut check = rdkafka::ClientConfig::new();
    for (key, value) in &config.consumer {
        check.set(key, value);
    }
    if let Err(error) = check
        .set("group.id", "strimzi-bridge-standin-check")
        .create::<rdkafka::consumer::BaseConsumer>()
    {
        return fail(format!("{path}: kafka.consumer settings: {error}"));
    }
    let api_address = format!("{}:{}", config.http.host, config.http.port);
    let management_address = format!("{}:{}", config.http.host, config.http.management_port);
    let api = match tokio::net::TcpListener::bind(&api_address).await {
        Ok(listener) => listener,
        Err(error) => return fail(format!("http.port: {api_address}: {error}")),
    };
    let management = match tokio::net::TcpListener::bind(&management_address).await {
        Ok(listener) => listener,
        Err(error) => {
            return fail(format!(
                "http.management.port: {management_address}: {error}"
            ));
        }
    };
    eprintln!(
        "bridge-standin: bridge {} serving the API on {api_address}, health and metrics on \
         {management_address}",
        config.id
    );
    let bridge = Bridge::new(config, producer);
    let expiring = std::sync::Arc::clone(&bridge);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            // Closing a consumer leaves its group: blocking work.
            let bridge = std::sync::Arc::clone(&expiring);
            let expired = tokio::task::spawn_blocking(move || bridge.expire_idle())
                .await
                .unwrap_or(0);
            if expired > 0 {
                eprintln!("bridge-standin: deleted {expired} idle consumer(s)");
            }
        }
    });
    let api_routes = api_router(std::sync::Arc::clone(&bridge));
    let management_server =
        axum::serve(management, management_router(bridge)).with_graceful_shutdown(stop_signal());
    let served = match acceptor {
        None => {
            let api_server = axum::serve(api, api_routes).with_graceful_shutdown(stop_signal());
            tokio::try_join!(api_server.into_future(), management_server.into_future())
        }
        Some(acceptor) => {
            let listener = match https::TlsListener::new(api, acceptor) {
                Ok(listener) => listener,
                Err(error) => return fail(format!("http.port: {api_address}: {error}")),
            };
            let api_server =
                axum::serve(listener, api_routes).with_graceful_shutdown(stop_signal());
            tokio::try_join!(api_server.into_future(), management_server.into_future())
        }
    };
    match served {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => fail(format!("HTTP server: {error}")),
    }
}
