//! User operator: keeps Kafka users, ACLs and quotas in line with KafkaUser resources.
//!
//! Not implemented yet: see the project's issue list. The binary exists so the workspace
//! has its final shape; it refuses to run rather than pretend to work.

fn main() -> std::process::ExitCode {
    eprintln!("strimzi-user-operator: not implemented yet (user-operator issue)");
    std::process::ExitCode::FAILURE
}
