//! `log4j2.properties` of the Kafka nodes (inline and external logging).

use strimzi_api::common::Logging;

use crate::model::config::options::Properties;
use crate::model::{KafkaCluster, ModelError};

/// The loggers of Strimzi's default Kafka logging: property id, logger name and level.
const DEFAULT_LOGGERS: &[(&str, &str, &str)] = &[
    ("kafka", "kafka", "INFO"),
    ("orgapachekafka", "org.apache.kafka", "INFO"),
    ("requestlogger", "kafka.request.logger", "WARN"),
    ("requestchannel", "kafka.network.RequestChannel$", "WARN"),
    ("controller", "org.apache.kafka.controller", "INFO"),
    ("logcleaner", "kafka.log.LogCleaner", "INFO"),
    ("statechange", "state.change.logger", "INFO"),
    ("authorizer", "kafka.authorizer.logger", "INFO"),
];

/// Strimzi's default Log4j2 configuration of the Kafka nodes, which inline loggers override:
/// everything goes to the console.
fn default_logging_properties() -> Properties {
    let mut properties = Properties::from_pairs([
        ("name", "KafkaConfig"),
        ("appender.console.type", "Console"),
        ("appender.console.name", "STDOUT"),
        ("appender.console.layout.type", "PatternLayout"),
        (
            "appender.console.layout.pattern",
            "%d{yyyy-MM-dd HH:mm:ss} %-5p [%t] %c{1}:%L - %m%n",
        ),
        ("rootLogger.level", "INFO"),
    ]);
    let console = |properties: &mut Properties, prefix: &str| {
        properties.set(format!("{prefix}.appenderRefs"), "console".to_owned());
        properties.set(
            format!("{prefix}.appenderRef.console.ref"),
            "STDOUT".to_owned(),
        );
        properties.set(format!("{prefix}.additivity"), "false".to_owned());
    };
    console(&mut properties, "rootLogger");
    for (id, name, level) in DEFAULT_LOGGERS {
        let prefix = format!("logger.{id}");
        properties.set(format!("{prefix}.name"), (*name).to_owned());
        properties.set(format!("{prefix}.level"), (*level).to_owned());
        console(&mut properties, &prefix);
    }
    properties
}

/// First line of a generated logging configuration.
const GENERATED_COMMENT: &str = "# Do not change this generated file. Logging can be configured in the corresponding Kubernetes resource.\n";

/// How often (seconds) Log4j2 re-reads its configuration, added unless the user set it.
const MONITOR_INTERVAL_SECONDS: &str = "30";

impl KafkaCluster {
    /// The nodes' `log4j2.properties`: Strimzi's defaults with the inline loggers on top, or the
    /// content of the user's ConfigMap (`external`) for external logging. Either way Log4j2 is
    /// told to re-read the file every 30 seconds unless the file says otherwise.
    pub fn logging_configuration(&self, external: Option<&str>) -> Result<String, ModelError> {
        logging_file(
            self.spec.logging.as_ref(),
            default_logging_properties(),
            external,
        )
    }
}

/// A component's `log4j2.properties` from its `logging` section: `defaults` with the inline
/// loggers on top, or the content of the user's ConfigMap (`external`) for external logging,
/// told to re-read the file every 30 seconds unless it says otherwise.
pub(crate) fn logging_file(
    logging: Option<&Logging>,
    defaults: Properties,
    external: Option<&str>,
) -> Result<String, ModelError> {
    match logging {
        Some(Logging::External(logging)) => {
            let reference = logging
                .value_from
                .as_ref()
                .and_then(|value_from| value_from.config_map_key_ref.as_ref())
                .ok_or_else(|| {
                    ModelError::InvalidConfiguration(
                        "Property logging.valueFrom has to be specified when using external logging."
                            .to_owned(),
                    )
                })?;
            let content = external.ok_or_else(|| {
                ModelError::InvalidConfiguration(format!(
                    "ConfigMap {} with external logging configuration does not exist or doesn't contain the configuration under the {} key.",
                    reference.name, reference.key
                ))
            })?;
            Ok(with_monitor_interval(content.to_owned()))
        }
        Some(Logging::Inline(logging)) => {
            let mut properties = defaults;
            for (logger, level) in logging.loggers.iter().flatten() {
                properties.set(logger.clone(), level.clone());
            }
            Ok(generated(&properties))
        }
        None => Ok(generated(&defaults)),
    }
}

/// Strimzi's default logging configuration as the nodes get it.
pub fn default_logging_configuration() -> String {
    generated(&default_logging_properties())
}

/// A generated logging file: the comment line, then the properties.
fn generated(properties: &Properties) -> String {
    with_monitor_interval(format!("{GENERATED_COMMENT}{}", properties.write()))
}

/// Appends `monitorInterval=30` unless the configuration sets `monitorInterval`.
fn with_monitor_interval(content: String) -> String {
    if Properties::parse(&content).get("monitorInterval").is_some() {
        content
    } else {
        format!("{content}\nmonitorInterval={MONITOR_INTERVAL_SECONDS}\n")
    }
}
