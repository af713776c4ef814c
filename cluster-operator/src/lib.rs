//! The Strimzi cluster operator: turns `Kafka` and `KafkaNodePool` resources into running
//! clusters.
//!
//! - [`model`] is pure: custom resources in, desired Kubernetes objects out.

pub mod model;
