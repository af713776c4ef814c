//! Structured logs with `tracing`, plain or JSON, at the configured `STRIMZI_LOG_LEVEL`.
//! Every reconciliation runs in a span carrying the kind, namespace and name of its resource.
//!
//! As Strimzi's operators read their log4j2 file from the logging ConfigMap mounted in their
//! pod and look at it again every `monitorInterval` seconds, ours follow the same file
//! ([`LogLevels::follow`]): `rootLogger.level` (with log4j's `${env:NAME:-default}`) and the
//! `logger.<id>.name`/`logger.<id>.level` pairs set the levels, and a changed ConfigMap
//! changes them without a restart. Appenders and layouts are not ours to read: the format is
//! `STRIMZI_LOG_FORMAT`'s. `RUST_LOG`, when set, wins over both.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry, reload};

use crate::config::{LogFormat, LogLevel};

/// How often the logging file is read again when it names no `monitorInterval` (log4j's
/// default is not to look again; Strimzi's files say 30).
pub const DEFAULT_MONITOR_INTERVAL: Duration = Duration::from_secs(30);

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

/// Installs the global logger at `level`, and returns what changes its levels later.
/// `RUST_LOG`, when set and valid, replaces that level with its per-module filter, and nothing
/// changes it later.
pub fn init(level: LogLevel, format: LogFormat) -> Result<LogLevels, LoggingError> {
    let from_environment = EnvFilter::try_from_default_env().ok();
    let fixed = from_environment.is_some();
    let filter = from_environment.unwrap_or_else(|| EnvFilter::new(level.directive()));
    let (filter, handle) = reload::Layer::new(filter);
    // Colour codes only on a terminal: a pod's log is a file that collectors read.
    let colours = std::io::IsTerminal::is_terminal(&std::io::stdout())
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let lines = match format {
        LogFormat::Plain => tracing_subscriber::fmt::layer().with_ansi(colours).boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .boxed(),
    };
    tracing_subscriber::registry()
        .with(filter)
        .with(lines)
        .try_init()
        .map_err(|error| LoggingError::Install(error.to_string()))?;
    Ok(LogLevels {
        handle,
        level,
        fixed,
    })
}

/// The levels of the installed logger: `STRIMZI_LOG_LEVEL`'s unless a logging file says
/// otherwise.
#[derive(Debug)]
pub struct LogLevels {
    handle: reload::Handle<EnvFilter, Registry>,
    /// The level when no file says otherwise.
    level: LogLevel,
    /// `RUST_LOG` was set: nothing changes the levels.
    fixed: bool,
}

impl LogLevels {
    /// Follows the log4j2 file at `path` until the process ends: reads it now and again every
    /// `monitorInterval` seconds ([`DEFAULT_MONITOR_INTERVAL`] when it has none; 0 reads it
    /// once), and applies its levels when they change. A file that goes away brings back the
    /// level of [`init`]; one that cannot be read or names no level keeps the levels as they
    /// are and logs why once.
    pub async fn follow(self, path: PathBuf) {
        if self.fixed {
            tracing::info!(file = %path.display(), "RUST_LOG is set: the logging file is not read");
            return;
        }
        let mut applied = self.level.directive().to_owned();
        let mut problem: Option<String> = None;
        loop {
            let (directives, interval) = match std::fs::read_to_string(&path) {
                Ok(text) => match LoggingFile::parse(&text, |name| std::env::var(name).ok()) {
                    Ok(file) => (
                        Some(file.directives()),
                        file.monitor_interval.unwrap_or(DEFAULT_MONITOR_INTERVAL),
                    ),
                    Err(message) => {
                        if problem.as_ref() != Some(&message) {
                            tracing::warn!(file = %path.display(), "logging file ignored: {message}");
                            problem = Some(message);
                        }
                        (None, DEFAULT_MONITOR_INTERVAL)
                    }
                },
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => (
                    Some(self.level.directive().to_owned()),
                    DEFAULT_MONITOR_INTERVAL,
                ),
                Err(error) => {
                    let message = error.to_string();
                    if problem.as_ref() != Some(&message) {
                        tracing::warn!(file = %path.display(), "logging file unreadable: {message}");
                        problem = Some(message);
                    }
                    (None, DEFAULT_MONITOR_INTERVAL)
                }
            };
            if let Some(directives) = directives {
                problem = None;
                if directives != applied {
                    self.apply(&path, &directives);
                    applied = directives;
                }
            }
            if interval.is_zero() {
                return;
            }
            tokio::time::sleep(interval).await;
        }
    }

    fn apply(&self, path: &Path, directives: &str) {
        match self.handle.reload(EnvFilter::new(directives)) {
            Ok(()) => {
                tracing::info!(file = %path.display(), levels = directives, "log levels changed")
            }
            Err(error) => tracing::warn!(%error, "log levels unchanged"),
        }
    }
}

/// What the operators read of a log4j2 properties file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggingFile {
    /// `rootLogger.level`.
    pub root: LogLevel,
    /// Each `logger.<id>.name` with its `logger.<id>.level`, in the file's order of ids.
    pub loggers: Vec<(String, LogLevel)>,
    /// `monitorInterval`, in seconds.
    pub monitor_interval: Option<Duration>,
}

impl LoggingFile {
    /// Reads `text` as log4j2 properties, resolving `${env:NAME}` and `${env:NAME:-default}`
    /// with `environment`. An error says what is missing or invalid: a file without
    /// `rootLogger.level` (or `rootLogger`) is not a logging configuration.
    pub fn parse(text: &str, environment: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut root = None;
        let mut names = std::collections::BTreeMap::<String, String>::new();
        let mut levels = std::collections::BTreeMap::<String, String>::new();
        let mut monitor_interval = None;
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            let Some((key, value)) = line.split_once(['=', ':']) else {
                continue;
            };
            let (key, value) = (key.trim(), resolve(value.trim(), &environment));
            match key {
                // `rootLogger = INFO, STDOUT` is log4j's short form.
                "rootLogger.level" | "rootLogger" => {
                    let level = value.split(',').next().unwrap_or_default();
                    root = Some(level_named(key, level)?);
                }
                "monitorInterval" => {
                    let seconds = value.parse::<u64>().map_err(|_| {
                        format!("monitorInterval {value:?} is not a number of seconds")
                    })?;
                    monitor_interval = Some(Duration::from_secs(seconds));
                }
                _ => {
                    if let Some(id) = key
                        .strip_prefix("logger.")
                        .and_then(|k| k.strip_suffix(".name"))
                    {
                        names.insert(id.to_owned(), value);
                    } else if let Some(id) = key
                        .strip_prefix("logger.")
                        .and_then(|k| k.strip_suffix(".level"))
                    {
                        levels.insert(id.to_owned(), value);
                    }
                }
            }
        }
        let root = root.ok_or("no rootLogger.level")?;
        let mut loggers = Vec::new();
        for (id, name) in names {
            if let Some(level) = levels.get(&id) {
                loggers.push((name, level_named(&format!("logger.{id}.level"), level)?));
            }
        }
        Ok(Self {
            root,
            loggers,
            monitor_interval,
        })
    }

    /// The `tracing` filter of these levels: the root's, then each logger's for its name as
    /// a target prefix (Rust module paths such as `strimzi_topic_operator`; Java names such
    /// as `org.apache.kafka` match nothing here and change nothing).
    pub fn directives(&self) -> String {
        let mut directives = vec![self.root.directive().to_owned()];
        for (name, level) in &self.loggers {
            directives.push(format!("{name}={}", level.directive()));
        }
        directives.join(",")
    }
}

fn level_named(key: &str, value: &str) -> Result<LogLevel, String> {
    LogLevel::from_name(value).ok_or_else(|| {
        format!("{key} {value:?} is none of ALL, TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF")
    })
}

/// `value` with each `${env:NAME}` and `${env:NAME:-default}` replaced: by the variable, by
/// the default when it is unset or empty, else by nothing.
fn resolve(value: &str, environment: &impl Fn(&str) -> Option<String>) -> String {
    let mut resolved = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${env:") {
        let Some(length) = rest[start..].find('}') else {
            break;
        };
        resolved.push_str(&rest[..start]);
        let inner = &rest[start + "${env:".len()..start + length];
        let (name, default) = inner.split_once(":-").unwrap_or((inner, ""));
        match environment(name) {
            Some(found) if !found.is_empty() => resolved.push_str(&found),
            _ => resolved.push_str(default),
        }
        rest = &rest[start + length + 1..];
    }
    resolved.push_str(rest);
    resolved
}

/// What every operator does first, inside its Tokio runtime: installs the logger at the
/// level and format of `operator`, logs [`start_line`] of `config`, and follows the log4j2
/// file `logging_file` (where the operator's pod mounts its logging ConfigMap) in a task of
/// its own.
pub fn start(
    name: &str,
    operator: &crate::config::OperatorConfig,
    logging_file: &str,
    config: &dyn std::fmt::Debug,
) -> Result<(), LoggingError> {
    let levels = init(operator.log_level, operator.log_format)?;
    log_start(name, config);
    tokio::spawn(levels.follow(PathBuf::from(logging_file)));
    Ok(())
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

    /// Strimzi 1.2's own `050-ConfigMap` file for its cluster operator, as users have it.
    const STRIMZIS_FILE: &str = "name = COConfig\nmonitorInterval = 30\n\nappender.console.type = Console\nappender.console.layout.pattern = %d{yyyy-MM-dd HH:mm:ss} %-5p %c{1}:%L - %m%n\n\nrootLogger.level = ${env:STRIMZI_LOG_LEVEL:-INFO}\nrootLogger.appenderRefs = stdout\n\nlogger.kafka.name = org.apache.kafka\nlogger.kafka.level = WARN\n";

    #[test]
    fn strimzis_logging_file_is_read_with_its_environment_defaults() {
        let unset = LoggingFile::parse(STRIMZIS_FILE, |_| None).unwrap();
        assert_eq!(unset.root, LogLevel::Info);
        assert_eq!(unset.monitor_interval, Some(Duration::from_secs(30)));
        assert_eq!(unset.directives(), "info,org.apache.kafka=warn");
        let set = LoggingFile::parse(STRIMZIS_FILE, |name| {
            (name == "STRIMZI_LOG_LEVEL").then(|| "debug".to_owned())
        })
        .unwrap();
        assert_eq!(set.root, LogLevel::Debug);
        let ours = LoggingFile::parse(
            "rootLogger.level=WARN\nlogger.to.name = strimzi_topic_operator\nlogger.to.level = TRACE\nlogger.lonely.name = no_level\n",
            |_| None,
        )
        .unwrap();
        assert_eq!(ours.directives(), "warn,strimzi_topic_operator=trace");
        assert_eq!(ours.monitor_interval, None);
        // The entity operator's ConfigMap as the cluster operator writes it.
        let entity = LoggingFile::parse("name = EOConfig\nrootLogger.appenderRef.console.ref = STDOUT\nrootLogger.level = DEBUG\n", |_| None).unwrap();
        assert_eq!(entity.root, LogLevel::Debug);
    }

    #[test]
    fn a_file_without_a_root_level_or_with_a_bad_level_or_interval_is_refused() {
        assert_eq!(
            LoggingFile::parse("name = x\n", |_| None),
            Err("no rootLogger.level".to_owned())
        );
        assert!(
            LoggingFile::parse("rootLogger.level = LOUD\n", |_| None)
                .unwrap_err()
                .contains("\"LOUD\" is none of")
        );
        assert!(
            LoggingFile::parse("rootLogger.level = INFO\nmonitorInterval = soon\n", |_| {
                None
            })
            .unwrap_err()
            .contains("monitorInterval")
        );
    }

    #[test]
    fn environment_references_resolve_to_the_variable_or_the_default() {
        let environment = |name: &str| match name {
            "SET" => Some("DEBUG".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        assert_eq!(resolve("${env:SET:-INFO}", &environment), "DEBUG");
        assert_eq!(resolve("${env:EMPTY:-INFO}", &environment), "INFO");
        assert_eq!(resolve("${env:UNSET:-WARN}", &environment), "WARN");
        assert_eq!(
            resolve("a ${env:SET} b ${env:UNSET}", &environment),
            "a DEBUG b "
        );
        assert_eq!(resolve("${env:OPEN", &environment), "${env:OPEN");
    }

    /// The filter follows the file: its level at once, a changed file's at the next look,
    /// the environment's level once the file is gone. The logger is not installed globally
    /// here: the handle of a filter of the test's own is followed.
    #[tokio::test]
    async fn a_changed_logging_file_changes_the_levels_without_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log4j2.properties");
        std::fs::write(&path, "monitorInterval = 1\nrootLogger.level = DEBUG\n").unwrap();
        let (_filter, handle) = reload::Layer::<EnvFilter, Registry>::new(EnvFilter::new("info"));
        let levels = LogLevels {
            handle: handle.clone(),
            level: LogLevel::Info,
            fixed: false,
        };
        let following = tokio::spawn(levels.follow(path.clone()));
        let current = || handle.with_current(ToString::to_string).unwrap();
        let until = |directives: &'static str| {
            let current = &current;
            let expected = EnvFilter::new(directives).to_string();
            async move {
                for _ in 0..100 {
                    if current() == expected {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                panic!("the filter is {:?}, not {expected:?}", current());
            }
        };
        until("debug").await;
        std::fs::write(
            &path,
            "monitorInterval = 1\nrootLogger.level = WARN\nlogger.u.name = strimzi_user_operator\nlogger.u.level = TRACE\n",
        )
        .unwrap();
        until("warn,strimzi_user_operator=trace").await;
        std::fs::remove_file(&path).unwrap();
        until("info").await;
        following.abort();
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
