//! The ServiceAccount, PodDisruptionBudget, NetworkPolicy and JMX Secret of the Kafka
//! component. Owner: listeners and services.
