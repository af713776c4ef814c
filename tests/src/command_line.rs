//! The command line of the binaries we ship, run as a user would run them: `--version` (and
//! `-V`) prints `<name> <version>` and exits 0, with nothing read from the environment;
//! the operators and the Kafka init program, which are configured through environment
//! variables, refuse any other argument in one line.

use std::process::{Command, Output};

/// Runs `command` to its end and returns what it printed.
///
/// # Panics
/// When it cannot be started or exits with a failure: the message names `what` and holds its
/// exit status, standard output and standard error.
pub fn run_ok(what: &str, command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{what}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs `program` with `arguments` and an empty environment.
///
/// # Panics
/// When it cannot be started.
pub fn run_without_environment(program: &str, arguments: &[&str]) -> Output {
    Command::new(program)
        .args(arguments)
        .env_clear()
        .output()
        .unwrap_or_else(|error| panic!("{program}: {error}"))
}

/// Asserts that `program` answers `--version` and `-V` with exactly `<name> <version>` on
/// stdout, nothing on stderr and exit 0, with an empty environment (an operator that read its
/// configuration would stop for the missing `STRIMZI_NAMESPACE` instead).
///
/// # Panics
/// When it does not.
pub fn assert_prints_version(program: &str, name: &str, version: &str) {
    for flag in ["--version", "-V"] {
        let output = run_without_environment(program, &[flag]);
        let (stdout, stderr) = texts(&output);
        assert!(output.status.success(), "{name} {flag}: {stderr}");
        assert_eq!(stdout, format!("{name} {version}\n"), "{name} {flag}");
        assert_eq!(stderr, "", "{name} {flag}");
    }
}

/// Asserts that `program` refuses `argument`: one line on stderr, `<name>: ...` naming the
/// argument, nothing on stdout, a non-zero exit.
///
/// # Panics
/// When it does not.
pub fn assert_refuses(program: &str, name: &str, argument: &str) {
    let output = run_without_environment(program, &[argument]);
    let (stdout, stderr) = texts(&output);
    assert!(!output.status.success(), "{name} {argument}: accepted");
    assert_eq!(stdout, "", "{name} {argument}");
    assert_eq!(stderr.lines().count(), 1, "{name} {argument}: {stderr}");
    assert!(
        stderr.starts_with(&format!("{name}: ")) && stderr.contains(argument),
        "{name} {argument}: {stderr}"
    );
}

fn texts(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
