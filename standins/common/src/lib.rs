//! What the contract stand-ins of the test environment's images (`standins/`: Cruise Control,
//! Kafka Exporter, HTTP Bridge) share: reading Java properties files as the real programs do,
//! ending with one line that names what is wrong, and stopping on the signal a container gets.

pub mod properties;

use std::fmt::Display;
use std::process::ExitCode;

/// Ends a stand-in that cannot start: `<program>: <message>` on one line of standard error
/// (a message of several lines is joined), and the exit status `status`.
pub fn fail(program: &str, status: u8, message: impl Display) -> ExitCode {
    eprintln!("{program}: {}", one_line(&message.to_string()));
    ExitCode::from(status)
}

/// `text`'s non-empty lines, trimmed and joined with single spaces.
pub fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Completes when the process gets SIGTERM (how the kubelet stops a container) or Ctrl-C.
pub async fn stop_signal() {
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => return std::future::pending().await,
        };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_of_several_lines_becomes_one() {
        assert_eq!(
            one_line("Kafka client:\n  broker down\n\n  retrying\n"),
            "Kafka client: broker down retrying"
        );
    }
}
