//! Identity and access: the nodes' server certificates and their Secrets, the trust bundle,
//! and the ServiceAccount, Role, RoleBinding, ClusterRoleBinding, NetworkPolicy and
//! PodDisruptionBudget of the Kafka component, and the cluster security it reports.

pub mod certificates;
pub mod cluster_security;
pub mod policies;
