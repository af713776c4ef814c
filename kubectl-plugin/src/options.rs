//! The values commands take besides names: how to print, where the operator runs, what to
//! roll, rebalance or renew. Apart from the command line (`cli`), which runs the commands,
//! so that the commands depend on these and not on it.

use clap::{Args, ValueEnum};

/// How a command prints its result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Lines for people.
    #[default]
    Text,
    /// One JSON document, for scripts and CI pipelines.
    Json,
}

/// Where the cluster operator runs: its settings (images, DNS domain, feature flags) shape
/// the objects it builds.
#[derive(Clone, Debug, Args)]
pub struct OperatorLocation {
    /// The namespace of the cluster operator's Deployment (else the Kafka's namespace, then
    /// every namespace).
    #[arg(long)]
    pub operator_namespace: Option<String>,
    /// The name of the cluster operator's Deployment.
    #[arg(long, default_value = "strimzi-cluster-operator")]
    pub operator_deployment: String,
}

/// What `roll` restarts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RollTarget {
    /// One pod of a Kafka cluster (by pod name).
    Pod,
    /// Every pod of a node pool (by KafkaNodePool name).
    Pool,
    /// Every pod of a Kafka cluster (by Kafka name).
    Cluster,
}

/// What `rebalance` asks of a KafkaRebalance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RebalanceAction {
    /// Carry out the proposal (`strimzi.io/rebalance=approve`).
    Approve,
    /// Ask for a new proposal (`strimzi.io/rebalance=refresh`).
    Refresh,
    /// Stop the rebalance in progress (`strimzi.io/rebalance=stop`).
    Stop,
}

/// Which CA `certs --renew` renews.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CaChoice {
    /// The cluster CA, which signs the nodes' certificates.
    ClusterCa,
    /// The clients CA, which signs the users' certificates.
    ClientsCa,
}
