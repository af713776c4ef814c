//! The workspace's binaries, built for the tests that run them as users do.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The folder of the operator binaries built next to the running test, example or bench.
pub fn binaries_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/examples/<name> or target/<profile>/deps/<name>
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// Builds every binary of the workspace (the operators, the kubectl plugin, the test
/// environment's programs such as `strimzi-kafka-client`) in the profile of the running
/// program, with the cargo running us; their folder.
pub fn workspace_binaries() -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let release = binaries_dir().ends_with("release");
    let mut command = std::process::Command::new(cargo);
    // Cargo sets these for the test program (`CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, ...), and
    // CI's test runner (.ci/test-runner) sets `RUSTC_BOOTSTRAP`. Build scripts that watch one
    // of them (ring's watches `CARGO_PKG_NAME`) would find the value changed from the
    // `cargo test` that built them, run again and rebuild their crate and all above it, here
    // and again in the next `cargo test`: minutes of CPU each time.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_by_cargo_for_tests = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_NAME",
            "CARGO_BIN_",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_CFG_",
            "CARGO_FEATURE_",
            "OUT_DIR",
            "RUSTC_BOOTSTRAP",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix));
        if set_by_cargo_for_tests {
            command.env_remove(name.as_ref());
        }
    }
    let status = command
        .arg("build")
        .args(release.then_some("--release"))
        // Every binary of the workspace, as `cargo test --workspace` built them: a selection of
        // packages (`-p`) resolves the features of those packages alone, and any crate whose
        // features differ (one the stand-ins use with more features) is compiled again, with
        // everything above it, here and in the next `cargo test`.
        .args(["--quiet", "--workspace", "--bins"])
        .status()
        .expect("running cargo build");
    assert!(status.success(), "building the workspace's binaries failed");
    binaries_dir()
}
