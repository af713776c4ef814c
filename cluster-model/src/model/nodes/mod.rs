//! Nodes and pods: resolving the Kafka and its pools into nodes with IDs, version and image,
//! their storage and claims, pod templates, and the StrimziPodSets that run them.

pub mod images;
pub mod node_ids;
pub mod pods;
pub mod resolve;
pub mod storage;
pub mod templates;
