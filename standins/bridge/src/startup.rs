//! From the command line to a [`BridgeConfig`]: the `--config-file` flag the real bridge takes,
//! the properties file, the placeholders resolved (Secrets read from the Kubernetes API only
//! when a placeholder names one), the configuration checked. Every failure is one line naming
//! the flag, file, key or Secret.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{BridgeConfig, from_properties};
use crate::placeholders::{self, SecretName, Sources};
use crate::properties;

/// The configuration file of the command line: `--config-file=<path>` or
/// `--config-file <path>`; without arguments, the file the pod mounts,
/// `<home>/custom-config/application.properties` (`home` = `STRIMZI_HOME`, by default
/// `/opt/strimzi`), so that the image may run the stand-in as its start script. Nothing else is
/// accepted.
pub fn config_file(args: &[String], home: Option<&str>) -> Result<String, String> {
    if args.is_empty() {
        let home = home
            .filter(|home| !home.is_empty())
            .unwrap_or("/opt/strimzi");
        return Ok(format!(
            "{}/custom-config/application.properties",
            home.trim_end_matches('/')
        ));
    }
    let mut file = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if let Some(path) = arg.strip_prefix("--config-file=") {
            file = Some(path.to_owned());
        } else if arg == "--config-file" {
            file = Some(
                rest.next()
                    .cloned()
                    .ok_or_else(|| "flag --config-file needs a value".to_owned())?,
            );
        } else {
            return Err(format!("unknown argument {arg:?}"));
        }
    }
    file.filter(|path| !path.is_empty())
        .ok_or_else(|| "flag --config-file needs a value".to_owned())
}

/// The configuration text as the start script prints it: values of `sasl.jaas.config` and of
/// keys naming a password replaced by `[hidden]`.
pub fn redacted(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let key = trimmed
            .split(['=', ':', ' '])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let secret = key.ends_with("sasl.jaas.config") || key.contains("password");
        if secret && !trimmed.starts_with('#') && !trimmed.starts_with('!') {
            out.push_str(&trimmed[..key.len()]);
            out.push_str("=[hidden]");
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Environment, files and the Secrets read before.
struct ProcessSources {
    secrets: BTreeMap<SecretName, BTreeMap<String, String>>,
}

impl Sources for ProcessSources {
    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn read(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
    fn secret(&self, namespace: &str, name: &str) -> Option<&BTreeMap<String, String>> {
        self.secrets.get(&(namespace.to_owned(), name.to_owned()))
    }
}

/// Reads `path` and everything its placeholders name.
pub async fn load(path: &str) -> Result<BridgeConfig, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--config-file {path}: {e}"))?;
    let properties = properties::parse(&text).map_err(|e| format!("{path}: {e}"))?;
    let providers = placeholders::providers(&properties).map_err(|e| format!("{path}: {e}"))?;
    let needed = placeholders::secrets_needed(&properties, &providers)
        .map_err(|e| format!("{path}: {e}"))?;
    let secrets = crate::kube_secrets::read_secrets(&needed).await?;
    let resolved = placeholders::resolve(&properties, &providers, &ProcessSources { secrets })
        .map_err(|e| format!("{path}: {e}"))?;
    from_properties(&resolved).map_err(|e| format!("{path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn the_config_file_flag_is_read() {
        assert_eq!(
            config_file(&args(&["--config-file=/tmp/kafka-bridge.properties"]), None).unwrap(),
            "/tmp/kafka-bridge.properties"
        );
        assert_eq!(
            config_file(&args(&["--config-file", "/c"]), None).unwrap(),
            "/c"
        );
        assert_eq!(
            config_file(&args(&[]), None).unwrap(),
            "/opt/strimzi/custom-config/application.properties"
        );
        assert_eq!(
            config_file(&args(&[]), Some("/home/b/")).unwrap(),
            "/home/b/custom-config/application.properties"
        );
        assert_eq!(
            config_file(&args(&["--config-file"]), None).unwrap_err(),
            "flag --config-file needs a value"
        );
        assert_eq!(
            config_file(&args(&["--config-file="]), None).unwrap_err(),
            "flag --config-file needs a value"
        );
        assert_eq!(
            config_file(&args(&["--verbose"]), None).unwrap_err(),
            "unknown argument \"--verbose\""
        );
    }

    #[test]
    fn secrets_are_hidden_when_the_configuration_is_printed() {
        let text = "# comment with password=x\nbridge.id=web\n\
                    kafka.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule \
                    required username=\"u\" password=\"p\";\n\
                    kafka.ssl.key.password=secret\nhttp.port=8080\n";
        assert_eq!(
            redacted(text),
            "# comment with password=x\nbridge.id=web\nkafka.sasl.jaas.config=[hidden]\n\
             kafka.ssl.key.password=[hidden]\nhttp.port=8080\n"
        );
    }

    #[tokio::test]
    async fn a_file_is_loaded_with_its_placeholders() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("b.properties");
        std::fs::write(
            &file,
            "bridge.id=web\nkafka.bootstrap.servers=${strimzienv:STANDIN_TEST_BOOTSTRAP}\n\
             kafka.config.providers=strimzienv\nkafka.config.providers.strimzienv.class=\
             org.apache.kafka.common.config.provider.EnvVarConfigProvider\n",
        )
        .unwrap();
        let path = file.display().to_string();
        let error = load(&path).await.unwrap_err();
        assert_eq!(
            error,
            format!(
                "{path}: kafka.bootstrap.servers: ${{strimzienv:STANDIN_TEST_BOOTSTRAP}}: \
                 variable STANDIN_TEST_BOOTSTRAP is not set"
            )
        );
        let missing = load("/nonexistent/b.properties").await.unwrap_err();
        assert!(
            missing.starts_with("--config-file /nonexistent/b.properties: "),
            "{missing}"
        );
    }
}
