//! `log4j2.properties` of the Kafka nodes (inline and external logging). Owner: configuration.

use strimzi_api::common::Logging;

use super::user_config::Properties;
use super::{KafkaCluster, ModelError};

/// Strimzi's default Log4j2 configuration of the Kafka nodes, which inline loggers override.
pub const DEFAULT_KAFKA_LOGGING: &str = "name = KafkaConfig

appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yyyy-MM-dd HH:mm:ss} %-5p [%t] %c{1}:%L - %m%n

rootLogger.level = INFO
rootLogger.appenderRefs = console
rootLogger.appenderRef.console.ref = STDOUT
rootLogger.additivity = false

logger.kafka.name = kafka
logger.kafka.level = INFO
logger.kafka.appenderRefs = console
logger.kafka.appenderRef.console.ref = STDOUT
logger.kafka.additivity = false

logger.orgapachekafka.name = org.apache.kafka
logger.orgapachekafka.level = INFO
logger.orgapachekafka.appenderRefs = console
logger.orgapachekafka.appenderRef.console.ref = STDOUT
logger.orgapachekafka.additivity = false

logger.requestlogger.name = kafka.request.logger
logger.requestlogger.level = WARN
logger.requestlogger.appenderRefs = console
logger.requestlogger.appenderRef.console.ref = STDOUT
logger.requestlogger.additivity = false

logger.requestchannel.name = kafka.network.RequestChannel$
logger.requestchannel.level = WARN
logger.requestchannel.appenderRefs = console
logger.requestchannel.appenderRef.console.ref = STDOUT
logger.requestchannel.additivity = false

logger.controller.name = org.apache.kafka.controller
logger.controller.level = INFO
logger.controller.appenderRefs = console
logger.controller.appenderRef.console.ref = STDOUT
logger.controller.additivity = false

logger.logcleaner.name = kafka.log.LogCleaner
logger.logcleaner.level = INFO
logger.logcleaner.appenderRefs = console
logger.logcleaner.appenderRef.console.ref = STDOUT
logger.logcleaner.additivity = false

logger.statechange.name = state.change.logger
logger.statechange.level = INFO
logger.statechange.appenderRefs = console
logger.statechange.appenderRef.console.ref = STDOUT
logger.statechange.additivity = false

logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = INFO
logger.authorizer.appenderRefs = console
logger.authorizer.appenderRef.console.ref = STDOUT
logger.authorizer.additivity = false
";

/// First line of a generated logging configuration.
const GENERATED_COMMENT: &str = "# Do not change this generated file. Logging can be configured in the corresponding Kubernetes resource.\n";

/// How often (seconds) Log4j2 re-reads its configuration, added unless the user set it.
const MONITOR_INTERVAL_SECONDS: &str = "30";

impl KafkaCluster {
    /// The nodes' `log4j2.properties`: Strimzi's defaults with the inline loggers on top, or the
    /// content of the user's ConfigMap (`external`) for external logging. Either way Log4j2 is
    /// told to re-read the file every 30 seconds unless the file says otherwise.
    pub fn logging_configuration(&self, external: Option<&str>) -> Result<String, ModelError> {
        match &self.spec.logging {
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
                let mut properties = Properties::parse(DEFAULT_KAFKA_LOGGING);
                for (logger, level) in logging.loggers.iter().flatten() {
                    properties.set(logger.clone(), level.clone());
                }
                Ok(generated(&properties))
            }
            None => Ok(default_logging_configuration()),
        }
    }
}

/// Strimzi's default logging configuration as the nodes get it.
pub fn default_logging_configuration() -> String {
    generated(&Properties::parse(DEFAULT_KAFKA_LOGGING))
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
