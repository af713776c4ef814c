//! Where the test environment's pieces live: pinned versions (read from the same
//! `versions.env` files the install scripts source), the cache of built binaries and jars,
//! and the log folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::TestEnvError;

/// The crate's folder, `<workspace>/tests`.
const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Versions of the Kafka broker, from `tests/testenv/kafka/versions.env`.
const KAFKA_VERSIONS: &str = include_str!("../testenv/kafka/versions.env");

/// Reads `KEY=VALUE` lines, ignoring blank lines and `#` comments.
pub fn parse_versions(text: &str) -> BTreeMap<&str, &str> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.trim(), value.trim()))
        .collect()
}

/// The pinned Kafka version, e.g. `4.3.1`.
pub fn kafka_version() -> &'static str {
    parse_versions(KAFKA_VERSIONS)
        .get("KAFKA_VERSION")
        .copied()
        .unwrap_or("unknown")
}

/// The cache of provisioned components: `$STRIMZI_TESTENV_CACHE`, else
/// `~/.cache/strimzi-testenv`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("STRIMZI_TESTENV_CACHE") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    home.join(".cache/strimzi-testenv")
}

/// A file inside the crate's `testenv/` folder, e.g. `kafka/log4j2.properties`.
pub fn testenv_file(relative: &str) -> PathBuf {
    Path::new(CRATE_DIR).join("testenv").join(relative)
}

/// The folder with the Kafka jars, or the error that says how to install them.
pub fn kafka_libs() -> Result<PathBuf, TestEnvError> {
    let dir = cache_dir().join(format!("kafka-{}", kafka_version()));
    let libs = dir.join("libs");
    let installed = std::fs::read_dir(&libs)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|entry| entry.file_name().to_string_lossy().starts_with("kafka_"))
        })
        .unwrap_or(false);
    if installed {
        Ok(libs)
    } else {
        Err(TestEnvError::MissingTool {
            program: format!(
                "Apache Kafka {} jars in {}",
                kafka_version(),
                libs.display()
            ),
            install: "bash tests/testenv/kafka/install-kafka.sh".to_owned(),
        })
    }
}

/// A fresh folder for the logs of one environment: `target/testenv-logs/<name>-<pid>`.
pub fn log_dir(name: &str) -> Result<PathBuf, TestEnvError> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| Path::new(CRATE_DIR).join("../target"), PathBuf::from);
    let dir = target
        .join("testenv-logs")
        .join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|error| TestEnvError::io(&dir, error))?;
    Ok(dir)
}

/// A port on 127.0.0.1 that was free a moment ago. Another process may take it before it is
/// used, so starters retry with new ports when a component cannot bind.
pub fn free_port() -> Result<u16, TestEnvError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|error| TestEnvError::io("127.0.0.1:0", error))?;
    listener
        .local_addr()
        .map(|address| address.port())
        .map_err(|error| TestEnvError::io("127.0.0.1:0", error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_like_the_scripts_read_them() {
        let versions = parse_versions("# comment\n\nA=1\nB = two\nnot a pair\n");
        assert_eq!(versions.get("A"), Some(&"1"));
        assert_eq!(versions.get("B"), Some(&"two"));
        assert_eq!(versions.len(), 2);
        assert!(kafka_version().starts_with('4'), "{}", kafka_version());
    }

    #[test]
    fn free_ports_differ_and_are_bindable() {
        let port = free_port().unwrap();
        std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        assert_ne!(port, 0);
    }
}
