//! Shared by the tests that drive the `strimzi-testenv` binary: reading what `up` records in
//! its folder, and `down`.

use std::path::Path;
use std::process::Command;

/// The `strimzi-testenv` binary under test.
pub const BINARY: &str = env!("CARGO_BIN_EXE_strimzi-testenv");

/// The component process ids `up` recorded in `dir`.
pub fn pids(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("pids"))
        .unwrap()
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

/// Runs `down` on `dir`, failing the test with its error output if it fails.
pub fn down(dir: &Path) {
    let down = Command::new(BINARY)
        .args(["down", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
}
