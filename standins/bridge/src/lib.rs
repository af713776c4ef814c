//! A contract stand-in for Strimzi's HTTP Bridge (CONTRACT.md section 8 of
//! `tests/testenv/images/`): the program the `<name>-bridge` pod runs in the test
//! environment's bridge image instead of the real bridge. It reads the
//! `application.properties` our operator generates ([`properties`]), resolves the
//! configuration-provider placeholders itself ([`placeholders`], Secrets through
//! [`kube_secrets`]), translates the Kafka clients' options for librdkafka ([`config`]), and
//! serves the HTTP API subset our tests and operator use ([`server`]) on top of rdkafka
//! ([`kafka`]), with the record shapes of the documented API ([`records`]).
//!
//! HTTPS on the API port is served with rustls ([`https`]).
//!
//! It is not the HTTP Bridge: no OpenAPI document, no tracing, no JMX metrics (a few
//! dashboard counters of its own, [`metrics`]), no Java key stores, no OAuth.

pub mod config;
pub mod https;
pub mod kafka;
pub mod kube_secrets;
pub mod metrics;
pub mod placeholders;
pub use strimzi_standin_common::properties;
pub mod records;
pub mod server;
pub mod startup;
