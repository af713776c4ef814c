//! Test environment of the workspace: where the reference data and our examples live. The
//! local Kubernetes control plane and Kafka broker are added by the testenv issue.

pub mod binaries;
pub mod bundle;
pub mod certs;
pub mod clients;
pub mod command_line;
pub mod control_plane;
pub mod docs;
pub mod environment;
pub mod error;
pub mod health;
pub mod kafka;
pub mod layout;
pub mod measure;
pub mod mock_api;
pub mod network;
pub mod nodes;
pub mod process;
pub mod prometheus;
pub mod reference;
pub mod registry;
pub mod resources;
