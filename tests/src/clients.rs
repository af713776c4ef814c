//! Kafka clients inside the real nodes' network: `strimzi-kafka-client` (rdkafka) run with
//! `ip netns exec`, where the brokers' advertised `*.svc` names resolve through the
//! environment's CoreDNS exactly as they do for pods.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::network::NodeNetwork;

/// A client of one bootstrap address, with its security settings.
#[derive(Clone, Debug)]
pub struct ClusterClient {
    binary: PathBuf,
    namespace: String,
    options: Vec<OsString>,
}

impl ClusterClient {
    /// A plaintext client of `bootstrap`, run from `binary` (a built `strimzi-kafka-client`)
    /// inside `network`.
    pub fn new(binary: &Path, network: &NodeNetwork, bootstrap: &str) -> Self {
        Self {
            binary: binary.to_path_buf(),
            namespace: network.name().to_owned(),
            options: vec!["--bootstrap".into(), bootstrap.into()],
        }
    }

    /// Uses TLS, trusting the CA certificate in `ca_file`.
    pub fn tls(mut self, ca_file: &Path) -> Self {
        self.options.push("--ca-file".into());
        self.options.push(ca_file.into());
        self
    }

    /// Authenticates with a client certificate and key (PEM files).
    pub fn certificate(mut self, cert_file: &Path, key_file: &Path) -> Self {
        for (flag, path) in [("--cert-file", cert_file), ("--key-file", key_file)] {
            self.options.push(flag.into());
            self.options.push(path.into());
        }
        self
    }

    /// Gives up on the brokers after `seconds` (60 by default).
    pub fn timeout(mut self, seconds: u64) -> Self {
        self.options.push("--timeout".into());
        self.options.push(seconds.to_string().into());
        self
    }

    /// Produces `count` records `<prefix>-<n>` to `topic`.
    pub fn produce(&self, topic: &str, count: usize, prefix: &str) -> Result<(), String> {
        let count = count.to_string();
        self.run(&[
            "produce", "--topic", topic, "--count", &count, "--prefix", prefix,
        ])
        .map(drop)
    }

    /// Reads `count` records from the beginning of `topic`, returning their values.
    pub fn consume(&self, topic: &str, count: usize) -> Result<Vec<String>, String> {
        let count = count.to_string();
        self.run(&["consume", "--topic", topic, "--count", &count])
            .map(|output| output.lines().map(str::to_owned).collect())
    }

    /// The partition and replica counts of `topic`.
    pub fn describe(&self, topic: &str) -> Result<(usize, usize), String> {
        let output = self.run(&["describe", "--topic", topic])?;
        let field = |name: &str| {
            output
                .split_whitespace()
                .find_map(|word| word.strip_prefix(name)?.parse::<usize>().ok())
                .ok_or_else(|| format!("unexpected output: {output}"))
        };
        Ok((field("partitions=")?, field("replicas=")?))
    }

    /// The shell command that runs this client with `action` (for people to copy).
    pub fn command_line(&self, action: &str) -> String {
        let options: Vec<String> = self
            .options
            .iter()
            .map(|option| option.to_string_lossy().into_owned())
            .collect();
        format!(
            "ip netns exec {} {} {} {action}",
            self.namespace,
            self.binary.display(),
            options.join(" ")
        )
    }

    fn run(&self, action: &[&str]) -> Result<String, String> {
        let output = Command::new("ip")
            .args(["netns", "exec", &self.namespace])
            .arg(&self.binary)
            .args(&self.options)
            .args(action)
            .output()
            .map_err(|error| format!("running {}: {error}", self.binary.display()))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
        }
    }
}
