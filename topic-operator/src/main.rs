//! Topic operator: keeps Kafka topics in line with KafkaTopic resources.
//!
//! Not implemented yet: see the project's issue list. The binary exists so the workspace
//! has its final shape; it refuses to run rather than pretend to work.

fn main() -> std::process::ExitCode {
    eprintln!("strimzi-topic-operator: not implemented yet (topic-operator issue)");
    std::process::ExitCode::FAILURE
}
