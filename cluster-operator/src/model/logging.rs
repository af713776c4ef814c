//! `log4j2.properties` of the Kafka nodes (inline and external logging). Owner: configuration.
