//! Structured logs with `tracing`, plain or JSON, at the configured `STRIMZI_LOG_LEVEL`.
//! Every reconciliation runs in a span carrying the kind, namespace, name and trigger.

use tracing_subscriber::EnvFilter;

use crate::config::{LogFormat, LogLevel};

/// The logger could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// Another global logger is installed already.
    #[error("installing the logger: {0}")]
    Install(String),
}

impl crate::ErrorReason for LoggingError {
    fn reason(&self) -> &'static str {
        "LoggingError"
    }
}

/// Installs the global logger. `RUST_LOG`, when set, refines the level per module.
pub fn init(level: LogLevel, format: LogFormat) -> Result<(), LoggingError> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level.directive()));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let result = match format {
        LogFormat::Plain => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
    };
    result.map_err(|error| LoggingError::Install(error.to_string()))
}

/// The first line an operator logs: `<name> <version>` ([`crate::VERSION`]) and its
/// effective configuration, the parsed `config` as `Debug` prints it (one line; the types
/// that hold secrets print them as [`crate::redact::REDACTED`]).
pub fn start_line(name: &str, config: &dyn std::fmt::Debug) -> String {
    format!("{name} {}, configuration: {config:?}", crate::VERSION)
}

/// Logs [`start_line`] at `INFO`: what an operator does first once [`init`] has installed the
/// logger.
pub fn log_start(name: &str, config: &dyn std::fmt::Debug) {
    tracing::info!("{}", start_line(name, config));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorReason;

    #[test]
    fn installs_once() {
        assert!(init(LogLevel::Debug, LogFormat::Json).is_ok());
        let again = init(LogLevel::Info, LogFormat::Plain).expect_err("a logger is installed");
        assert_eq!(again.reason(), "LoggingError");
        tracing::info!(kind = "KafkaTopic", "logged as JSON");
    }

    #[test]
    fn the_start_line_names_the_program_its_version_and_its_configuration() {
        let line = start_line("strimzi-topic-operator", &LogLevel::Warn);
        assert_eq!(
            line,
            format!(
                "strimzi-topic-operator {}, configuration: Warn",
                crate::VERSION
            )
        );
    }
}
