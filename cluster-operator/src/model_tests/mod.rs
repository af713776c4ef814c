//! Tests of the model (`strimzi-cluster-model`) that build its settings from the operator's
//! environment with [`ClusterOperatorConfig`](crate::config::ClusterOperatorConfig), which
//! reads it with `strimzi-operator-common` and so is not in the model's crate.

mod connect;
mod mirror_maker2;
