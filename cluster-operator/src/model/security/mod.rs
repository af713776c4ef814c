//! Identity and access: the nodes' server certificates and their Secrets, the trust bundle,
//! and the ServiceAccount, Role, RoleBinding, ClusterRoleBinding, NetworkPolicy and
//! PodDisruptionBudget of the Kafka component.

pub mod certificates;
pub mod policies;
