//! A contract stand-in for Kafka Exporter (CONTRACT.md section 6 of
//! `tests/testenv/images/`): the program the `<cluster>-kafka-exporter` pod runs in the test
//! environment's Kafka image instead of the real Kafka Exporter. It takes the real program's
//! flags ([`config`]), checks the mounted TLS files ([`tls`]), reads the cluster with rdkafka
//! ([`collect`]) and serves the metric subset Strimzi's dashboards, alerts and our tests use
//! ([`metrics`]) on `/metrics`, with `/healthz` for the probes ([`server`]).
//!
//! It is not Kafka Exporter: no ZooKeeper lag, no topic/group labels from `--kafka.labels`,
//! no server-side TLS or basic auth on the metrics endpoint, no consumer-group metrics of the
//! KIP-848 protocol beyond what OffsetFetch gives.

pub mod collect;
pub mod config;
pub mod metrics;
pub mod server;
pub mod tls;
