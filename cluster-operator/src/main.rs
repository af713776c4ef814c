//! Cluster operator: reconciles Kafka clusters, node pools, Connect, MirrorMaker 2 and Bridge.
//!
//! Not implemented yet: see the project's issue list. The binary exists so the workspace
//! has its final shape; it refuses to run rather than pretend to work.

fn main() -> std::process::ExitCode {
    eprintln!("strimzi-cluster-operator: not implemented yet (cluster-operator issues)");
    std::process::ExitCode::FAILURE
}
