//! The cluster operator's pure parts, in a crate of their own so that the compiler keeps them
//! pure: [`model`] turns custom resources, and what was read for them, into the desired
//! Kubernetes objects, [`rolling`] decides which pods to restart and when, and [`quorum`] how
//! the KRaft controller quorum's voters change.
//!
//! Nothing here talks to the API server or to Kafka, and nothing can: the crate depends on no
//! Kubernetes client and no async runtime (no `kube` client or runtime, no `tokio`, no
//! `strimzi-operator-common`), only on the types of `strimzi-api`, `k8s-openapi`, `kube-core`
//! and `strimzi-kafka-model`, and on `strimzi-certificate-manager`. What the model needs from
//! the outside world comes in as plain values; the reconcilers of `strimzi-cluster-operator`
//! read it, apply what comes out and re-export both modules at their old paths
//! (`strimzi_cluster_operator::model`, `strimzi_cluster_operator::rolling`).

pub mod model;
pub mod quorum;
pub mod rolling;
