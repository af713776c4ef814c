//! `strimzi-kafka-exporter-standin`: Kafka Exporter's flags in, `/metrics` out (see the
//! library). Without arguments it takes the flags the pod's start script would pass from the
//! operator's `KAFKA_EXPORTER_*` variables ([`pod_arguments`]), so the image may install it as
//! `/opt/kafka-exporter/kafka_exporter_run.sh` itself. Any flag or file it cannot use ends it at once with exit status 2 and one line on
//! standard error naming the flag or file.

use std::process::ExitCode;

use strimzi_kafka_exporter_standin::collect::{Collector, client_settings};
use strimzi_kafka_exporter_standin::config::{parse_args, pod_arguments};
use strimzi_kafka_exporter_standin::{server, tls};

/// Ends the start: one line naming what is wrong, exit status 2.
fn fail(message: impl std::fmt::Display) -> ExitCode {
    strimzi_standin_common::fail("kafka-exporter-standin", 2, message)
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        // Run as the pod's start script: the flags from the operator's variables.
        args = match pod_arguments(&|name| std::env::var(name).ok()) {
            Ok(args) => args,
            Err(error) => return fail(error),
        };
        eprintln!("kafka-exporter-standin: {}", args.join(" "));
    }
    let config = match parse_args(&args) {
        Ok(config) => config,
        Err(error) => return fail(error),
    };
    let material = match config.tls.as_ref().map(tls::load).transpose() {
        Ok(material) => material.unwrap_or_default(),
        Err(error) => return fail(error),
    };
    let collector =
        match Collector::new(client_settings(&config, &material), config.filters.clone()) {
            Ok(collector) => collector,
            Err(error) => return fail(format!("Kafka client: {error}")),
        };
    let address = config.bind_address();
    let listener = match tokio::net::TcpListener::bind(&address).await {
        Ok(listener) => listener,
        Err(error) => return fail(format!("flag --web.listen-address: {address}: {error}")),
    };
    eprintln!(
        "kafka-exporter-standin: serving {} and /healthz on {address} for Kafka at {}",
        config.telemetry_path,
        config.servers.join(",")
    );
    let app = server::router(collector, config);
    match axum::serve(listener, app)
        .with_graceful_shutdown(strimzi_standin_common::stop_signal())
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(format!("HTTP server: {error}")),
    }
}
