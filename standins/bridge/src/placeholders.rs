//! Kafka configuration-provider placeholders (`${alias:[path:]key}`, CONTRACT.md 2.3) in the
//! `kafka.*` values of the bridge configuration, resolved the way the real bridge's Kafka
//! clients resolve them through `kafka.config.providers`: environment variables, keys of
//! properties files, files of directories, and keys of Kubernetes Secrets.
//!
//! Pure: [`secrets_needed`] says which Secrets to read, the caller reads them (see
//! [`crate::kube_secrets`]) and [`resolve`] substitutes, reading environment and files through
//! [`Sources`]. Unlike Kafka, a placeholder whose alias is not configured, or whose value
//! cannot be read, is an error naming the key and the placeholder, never left as it is.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use fancy_regex::Regex;

/// The kinds of provider the stand-in implements, by the Java class the configuration names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    /// `org.apache.kafka.common.config.provider.EnvVarConfigProvider`.
    Env,
    /// `org.apache.kafka.common.config.provider.FileConfigProvider`.
    File,
    /// `org.apache.kafka.common.config.provider.DirectoryConfigProvider`.
    Directory,
    /// `io.strimzi.kafka.KubernetesSecretConfigProvider`.
    Secret,
}

impl ProviderKind {
    fn of_class(class: &str) -> Option<Self> {
        match class {
            "org.apache.kafka.common.config.provider.EnvVarConfigProvider" => Some(Self::Env),
            "org.apache.kafka.common.config.provider.FileConfigProvider" => Some(Self::File),
            "org.apache.kafka.common.config.provider.DirectoryConfigProvider" => {
                Some(Self::Directory)
            }
            "io.strimzi.kafka.KubernetesSecretConfigProvider" => Some(Self::Secret),
            _ => None,
        }
    }
}

/// A configured provider.
#[derive(Clone, Debug)]
pub struct Provider {
    /// What it reads.
    pub kind: ProviderKind,
    /// `param.allowed.paths` (file and directory providers): paths must lie under one.
    pub allowed_paths: Option<Vec<String>>,
    /// `param.allowlist.pattern` (environment provider): names must match it as a whole.
    pub allowlist: Option<Regex>,
}

/// What is wrong with the providers or a placeholder; one line naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct PlaceholderError {
    /// The configuration key whose value (or provider declaration) is wrong.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

/// The providers of `kafka.config.providers`, by alias. Every declared alias must name a
/// class the stand-in implements.
pub fn providers(
    properties: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, Provider>, PlaceholderError> {
    let mut providers = BTreeMap::new();
    let Some(list) = properties.get("kafka.config.providers") else {
        return Ok(providers);
    };
    for alias in list.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let class_key = format!("kafka.config.providers.{alias}.class");
        let error = |message: String| PlaceholderError {
            key: class_key.clone(),
            message,
        };
        let class = properties.get(&class_key).ok_or_else(|| {
            error("missing: every alias of kafka.config.providers needs one".into())
        })?;
        let kind = ProviderKind::of_class(class.trim()).ok_or_else(|| {
            error(format!(
                "{class} is not a provider the bridge stand-in implements (environment, file, \
                 directory, Kubernetes Secret)"
            ))
        })?;
        let param =
            |name: &str| properties.get(&format!("kafka.config.providers.{alias}.param.{name}"));
        let allowed_paths = param("allowed.paths").map(|paths| {
            paths
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect()
        });
        let allowlist = param("allowlist.pattern")
            .map(|pattern| {
                Regex::new(&format!("^(?:{pattern})$")).map_err(|e| PlaceholderError {
                    key: format!("kafka.config.providers.{alias}.param.allowlist.pattern"),
                    message: format!("{pattern:?} is not a regular expression: {e}"),
                })
            })
            .transpose()?;
        providers.insert(
            alias.to_owned(),
            Provider {
                kind,
                allowed_paths,
                allowlist,
            },
        );
    }
    Ok(providers)
}

/// One placeholder in a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placeholder {
    /// Byte range of `${…}` in the value.
    pub start: usize,
    /// End of that range (exclusive).
    pub end: usize,
    /// The provider alias.
    pub alias: String,
    /// The path part, if any (`ns/secret`, a file, a directory).
    pub path: Option<String>,
    /// The key part (a Secret key, a properties key, a file name, a variable).
    pub key: String,
}

/// The placeholders of `value`, in order: `${alias:key}` or `${alias:path:key}` (as in Kafka,
/// the path ends at the second colon; the key is the rest).
pub fn find(value: &str) -> Vec<Placeholder> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = value[from..].find("${") {
        let start = from + offset;
        let Some(length) = value[start..].find('}') else {
            break;
        };
        let end = start + length + 1;
        let inner = &value[start + 2..end - 1];
        if let Some((alias, rest)) = inner.split_once(':') {
            let (path, key) = match rest.split_once(':') {
                Some((path, key)) => (Some(path.to_owned()), key.to_owned()),
                None => (None, rest.to_owned()),
            };
            found.push(Placeholder {
                start,
                end,
                alias: alias.to_owned(),
                path,
                key,
            });
        }
        from = end;
    }
    found
}

/// Whether `key` is resolved: the Kafka clients' options, not the providers' own.
fn resolvable(key: &str) -> bool {
    key.starts_with("kafka.") && !key.starts_with("kafka.config.providers")
}

/// A Secret a placeholder reads: namespace and name.
pub type SecretName = (String, String);

/// The Secrets the placeholders of `properties` read, each once.
pub fn secrets_needed(
    properties: &BTreeMap<String, String>,
    providers: &BTreeMap<String, Provider>,
) -> Result<Vec<SecretName>, PlaceholderError> {
    let mut names = Vec::new();
    for (key, value) in properties.iter().filter(|(key, _)| resolvable(key)) {
        for placeholder in find(value) {
            let Some(provider) = providers.get(&placeholder.alias) else {
                continue;
            };
            if provider.kind == ProviderKind::Secret {
                let name = secret_name(key, &placeholder)?;
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    Ok(names)
}

fn secret_name(key: &str, placeholder: &Placeholder) -> Result<SecretName, PlaceholderError> {
    placeholder
        .path
        .as_deref()
        .and_then(|path| path.split_once('/'))
        .filter(|(namespace, name)| {
            !namespace.is_empty() && !name.is_empty() && !name.contains('/')
        })
        .map(|(namespace, name)| (namespace.to_owned(), name.to_owned()))
        .ok_or_else(|| PlaceholderError {
            key: key.to_owned(),
            message: format!(
                "placeholder ${{{}:…}} does not name <namespace>/<secret>:<key>",
                placeholder.alias
            ),
        })
}

/// Where values come from during [`resolve`].
pub trait Sources {
    /// An environment variable.
    fn env(&self, name: &str) -> Option<String>;
    /// A file's text.
    fn read(&self, path: &Path) -> std::io::Result<String>;
    /// The decoded data of a Secret read before (see [`secrets_needed`]).
    fn secret(&self, namespace: &str, name: &str) -> Option<&BTreeMap<String, String>>;
}

fn allowed(path: &Path, provider: &Provider) -> bool {
    if path.components().any(|c| c == Component::ParentDir) || !path.is_absolute() {
        return false;
    }
    match &provider.allowed_paths {
        None => true,
        Some(paths) => paths.iter().any(|allowed| path.starts_with(allowed)),
    }
}

/// The value of one placeholder.
fn value_of(
    key: &str,
    placeholder: &Placeholder,
    provider: &Provider,
    sources: &dyn Sources,
) -> Result<String, PlaceholderError> {
    let text = &placeholder_text(placeholder);
    let error = |message: String| PlaceholderError {
        key: key.to_owned(),
        message: format!("{text}: {message}"),
    };
    match provider.kind {
        ProviderKind::Env => {
            let name = &placeholder.key;
            if let Some(allowlist) = &provider.allowlist
                && !allowlist.is_match(name).unwrap_or(false)
            {
                return Err(error(format!("variable {name} is not allowed")));
            }
            sources
                .env(name)
                .ok_or_else(|| error(format!("variable {name} is not set")))
        }
        ProviderKind::File | ProviderKind::Directory => {
            let path = placeholder
                .path
                .as_deref()
                .ok_or_else(|| error("needs a path".into()))?;
            let path = Path::new(path);
            if !allowed(path, provider) {
                return Err(error(format!(
                    "{} is outside the allowed paths",
                    path.display()
                )));
            }
            if provider.kind == ProviderKind::Directory {
                let file = path.join(&placeholder.key);
                return sources
                    .read(&file)
                    .map_err(|e| error(format!("{}: {e}", file.display())));
            }
            let text = sources
                .read(path)
                .map_err(|e| error(format!("{}: {e}", path.display())))?;
            let values = crate::properties::parse(&text)
                .map_err(|e| error(format!("{}: {e}", path.display())))?;
            values
                .get(&placeholder.key)
                .cloned()
                .ok_or_else(|| error(format!("no key {} in {}", placeholder.key, path.display())))
        }
        ProviderKind::Secret => {
            let (namespace, name) = secret_name(key, placeholder)?;
            let data = sources
                .secret(&namespace, &name)
                .ok_or_else(|| error(format!("Secret {namespace}/{name} was not read")))?;
            data.get(&placeholder.key).cloned().ok_or_else(|| {
                error(format!(
                    "Secret {namespace}/{name} has no key {}",
                    placeholder.key
                ))
            })
        }
    }
}

fn placeholder_text(placeholder: &Placeholder) -> String {
    match &placeholder.path {
        Some(path) => format!("${{{}:{path}:{}}}", placeholder.alias, placeholder.key),
        None => format!("${{{}:{}}}", placeholder.alias, placeholder.key),
    }
}

/// `properties` with every placeholder of the `kafka.*` values replaced (also inside longer
/// values such as `sasl.jaas.config`).
pub fn resolve(
    properties: &BTreeMap<String, String>,
    providers: &BTreeMap<String, Provider>,
    sources: &dyn Sources,
) -> Result<BTreeMap<String, String>, PlaceholderError> {
    let mut resolved = BTreeMap::new();
    for (key, value) in properties {
        if !resolvable(key) {
            resolved.insert(key.clone(), value.clone());
            continue;
        }
        let mut out = String::new();
        let mut last = 0;
        for placeholder in find(value) {
            let provider = providers
                .get(&placeholder.alias)
                .ok_or_else(|| PlaceholderError {
                    key: key.clone(),
                    message: format!(
                        "{} names no provider of kafka.config.providers",
                        placeholder_text(&placeholder)
                    ),
                })?;
            out.push_str(&value[last..placeholder.start]);
            out.push_str(&value_of(key, &placeholder, provider, sources)?);
            last = placeholder.end;
        }
        out.push_str(&value[last..]);
        resolved.insert(key.clone(), out);
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The providers our operator declares for a bridge (`model/bridge.rs`).
    fn operator_providers() -> BTreeMap<String, String> {
        [
            (
                "kafka.config.providers",
                "strimzienv,strimzifile,strimzidir,strimzisecrets",
            ),
            (
                "kafka.config.providers.strimzienv.class",
                "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
            ),
            (
                "kafka.config.providers.strimzienv.param.allowlist.pattern",
                ".*",
            ),
            (
                "kafka.config.providers.strimzifile.class",
                "org.apache.kafka.common.config.provider.FileConfigProvider",
            ),
            (
                "kafka.config.providers.strimzifile.param.allowed.paths",
                "/opt/strimzi",
            ),
            (
                "kafka.config.providers.strimzidir.class",
                "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
            ),
            (
                "kafka.config.providers.strimzidir.param.allowed.paths",
                "/opt/strimzi",
            ),
            (
                "kafka.config.providers.strimzisecrets.class",
                "io.strimzi.kafka.KubernetesSecretConfigProvider",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    struct Fake {
        secrets: BTreeMap<SecretName, BTreeMap<String, String>>,
    }

    impl Sources for Fake {
        fn env(&self, name: &str) -> Option<String> {
            (name == "RACK_ENV").then(|| "zone-a".to_owned())
        }
        fn read(&self, path: &Path) -> std::io::Result<String> {
            match path.to_str() {
                Some("/opt/strimzi/init/rack.id") => Ok("rack-1".into()),
                Some("/opt/strimzi/custom-config/extra.properties") => Ok("linger=5\n".into()),
                _ => Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "not found",
                )),
            }
        }
        fn secret(&self, namespace: &str, name: &str) -> Option<&BTreeMap<String, String>> {
            self.secrets.get(&(namespace.to_owned(), name.to_owned()))
        }
    }

    fn fake() -> Fake {
        Fake {
            secrets: BTreeMap::from([(
                ("ns".to_owned(), "web-user".to_owned()),
                BTreeMap::from([
                    ("password".to_owned(), "p4ss".to_owned()),
                    ("user.crt".to_owned(), "CERT".to_owned()),
                ]),
            )]),
        }
    }

    #[test]
    fn placeholders_are_found_inside_longer_values() {
        let found = find("a ${strimzisecrets:ns/s:password} b ${strimzienv:X}");
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].alias, "strimzisecrets");
        assert_eq!(found[0].path.as_deref(), Some("ns/s"));
        assert_eq!(found[0].key, "password");
        assert_eq!(found[1].path, None);
        assert_eq!(found[1].key, "X");
        assert!(find("no ${placeholder} here").is_empty());
        let colons = &find("${strimzifile:/a:b:c}")[0];
        assert_eq!(
            (colons.path.as_deref(), colons.key.as_str()),
            (Some("/a"), "b:c")
        );
    }

    #[test]
    fn every_provider_resolves_also_inside_jaas_config() {
        let mut properties = operator_providers();
        for (key, value) in [
            (
                "kafka.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required \
                 username=\"web-user\" password=\"${strimzisecrets:ns/web-user:password}\";",
            ),
            (
                "kafka.ssl.keystore.certificate.chain",
                "${strimzisecrets:ns/web-user:user.crt}",
            ),
            (
                "kafka.consumer.client.rack",
                "${strimzidir:/opt/strimzi/init:rack.id}",
            ),
            (
                "kafka.producer.linger.ms",
                "${strimzifile:/opt/strimzi/custom-config/extra.properties:linger}",
            ),
            ("kafka.admin.client.id", "${strimzienv:RACK_ENV}"),
            ("http.port", "8080"),
        ] {
            properties.insert(key.to_owned(), value.to_owned());
        }
        let providers = providers(&properties).unwrap();
        assert_eq!(
            secrets_needed(&properties, &providers).unwrap(),
            [("ns".to_owned(), "web-user".to_owned())]
        );
        let resolved = resolve(&properties, &providers, &fake()).unwrap();
        assert_eq!(
            resolved["kafka.sasl.jaas.config"],
            "org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"web-user\" password=\"p4ss\";"
        );
        assert_eq!(resolved["kafka.ssl.keystore.certificate.chain"], "CERT");
        assert_eq!(resolved["kafka.consumer.client.rack"], "rack-1");
        assert_eq!(resolved["kafka.producer.linger.ms"], "5");
        assert_eq!(resolved["kafka.admin.client.id"], "zone-a");
        // The providers' own settings are not touched.
        assert_eq!(
            resolved["kafka.config.providers"],
            properties["kafka.config.providers"]
        );
    }

    #[test]
    fn what_cannot_be_resolved_is_an_error_naming_key_and_placeholder() {
        let cases = [
            (
                "${strimzisecrets:ns/web-user:nokey}",
                "kafka.x: ${strimzisecrets:ns/web-user:nokey}: Secret ns/web-user has no key nokey",
            ),
            (
                "${strimzisecrets:ns/other:password}",
                "kafka.x: ${strimzisecrets:ns/other:password}: Secret ns/other was not read",
            ),
            (
                "${strimzisecrets:password}",
                "kafka.x: placeholder ${strimzisecrets:…} does not name <namespace>/<secret>:<key>",
            ),
            (
                "${strimzienv:UNSET}",
                "kafka.x: ${strimzienv:UNSET}: variable UNSET is not set",
            ),
            (
                "${strimzidir:/etc:passwd}",
                "kafka.x: ${strimzidir:/etc:passwd}: /etc is outside the allowed paths",
            ),
            (
                "${strimzidir:/opt/strimzi/../etc:passwd}",
                "kafka.x: ${strimzidir:/opt/strimzi/../etc:passwd}: /opt/strimzi/../etc is outside the allowed paths",
            ),
            (
                "${strimzidir:/opt/strimzi/init:missing}",
                "kafka.x: ${strimzidir:/opt/strimzi/init:missing}: /opt/strimzi/init/missing: not found",
            ),
            (
                "${vault:a:b}",
                "kafka.x: ${vault:a:b} names no provider of kafka.config.providers",
            ),
        ];
        for (value, expected) in cases {
            let mut properties = operator_providers();
            properties.insert("kafka.x".to_owned(), value.to_owned());
            let providers = providers(&properties).unwrap();
            let error = secrets_needed(&properties, &providers)
                .and_then(|_| resolve(&properties, &providers, &fake()))
                .unwrap_err();
            assert_eq!(error.to_string(), expected);
        }
    }

    #[test]
    fn unknown_provider_classes_are_refused() {
        let mut properties = operator_providers();
        properties.insert("kafka.config.providers".into(), "strimzienv,cm".into());
        let error = providers(&properties).unwrap_err();
        assert_eq!(error.key, "kafka.config.providers.cm.class");
        properties.insert(
            "kafka.config.providers.cm.class".into(),
            "io.strimzi.kafka.KubernetesConfigMapConfigProvider".into(),
        );
        let error = providers(&properties).unwrap_err();
        assert!(
            error
                .message
                .contains("not a provider the bridge stand-in implements")
        );
    }
}
