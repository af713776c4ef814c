//! The Dockerfile of a Connect build, in the layout of Strimzi's: a header, a
//! `downloadArtifacts` stage on the Maven builder image when a plugin has `maven` artifacts,
//! then `FROM` the Connect image, `USER root:root`, the proxy arguments of the operator's
//! environment, one section per plugin, and `USER 1001`. Each artifact goes under
//! `/opt/kafka/plugins/<plugin>/<hash>`: downloaded with `curl`, checked against its
//! `sha512sum` when given, archives unpacked (symbolic links of a ZIP removed), Maven
//! artifacts resolved with their dependencies by `mvn dependency:copy-dependencies` in the
//! first stage and copied over. Every command word is single-quoted for the shell.

use k8s_openapi::api::core::v1::EnvVar;
use strimzi_api::connect::{
    Build, BuildArtifact, BuildPlugin, DownloadableArtifact, MavenArtifact, MavenScope,
    OtherArtifact,
};

use crate::model::ModelError;
use crate::model::config::hash_stub;

/// Where the plugins go in the image.
const PLUGINS_PATH: &str = "/opt/kafka/plugins";
/// Where Maven artifacts come from when the artifact names no repository.
pub const MAVEN_CENTRAL: &str = "https://repo1.maven.org/maven2/";
/// The operator's variables that become `ARG`s of the build (lower-cased), when set.
const PROXY_VARIABLES: [&str; 3] = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"];

/// `word` single-quoted for the shell (a `'` becomes `'"'"'`).
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r#"'"'"'"#))
}

/// A command of quoted words.
fn command<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|word| quoted(word.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `RUN` instruction chaining `steps` with `&&`, one per line.
fn run(steps: &[String]) -> String {
    format!("RUN {}\n\n", steps.join(" \\\n      && "))
}

/// The URL of an artifact that needs one, or the error Strimzi gives without it.
fn url_of<'a>(kind: &str, url: Option<&'a String>) -> Result<&'a str, ModelError> {
    url.map(String::as_str)
        .filter(|url| !url.is_empty())
        .ok_or_else(|| {
            ModelError::InvalidConfiguration(format!("`{kind}` artifact is missing a URL."))
        })
}

/// `curl` downloading `url` to `file` (failing on an HTTP error; `-k` for `insecure`).
fn download(url: &str, file: &str, insecure: Option<bool>, create_dirs: bool) -> String {
    let mut words = vec!["curl", "-f", "-L"];
    if insecure == Some(true) {
        words.push("-k");
    }
    if create_dirs {
        words.push("--create-dirs");
    }
    words.extend(["--output", file, url]);
    command(&words)
}

/// The checksum steps of `file`, when `sha512sum` is given.
fn checksum(file: &str, sha512sum: Option<&String>) -> Vec<String> {
    let Some(sum) = sha512sum.filter(|sum| !sum.is_empty()) else {
        return Vec::new();
    };
    vec![
        format!(
            "{} > {file}.sha512",
            command(&["echo", &format!("{sum} {file}")])
        ),
        command(&["sha512sum", "--check", &format!("{file}.sha512")]),
        command(&["rm", "-f", &format!("{file}.sha512")]),
    ]
}

/// A Maven artifact's group, artifact and version, or the error Strimzi gives without one.
fn coordinates(artifact: &MavenArtifact) -> Result<(&str, &str, &str), ModelError> {
    fn part<'a>(value: Option<&'a String>, what: &str) -> Result<&'a str, ModelError> {
        value
            .map(String::as_str)
            .filter(|value| !value.is_empty())
            .ok_or_else(|| {
                ModelError::InvalidConfiguration(format!("`maven` artifact is missing {what}."))
            })
    }
    Ok((
        part(artifact.group.as_ref(), "a group ID")?,
        part(artifact.artifact.as_ref(), "an artifact ID")?,
        part(artifact.version.as_ref(), "a version number")?,
    ))
}

/// The repository a Maven artifact is fetched from, ending with `/`: its first mirror (every
/// request goes through the mirrors), else its repository, else Maven Central.
fn maven_repository(artifact: &MavenArtifact) -> String {
    let repository = artifact
        .mirrors
        .iter()
        .flatten()
        .map(|mirror| mirror.url.clone())
        .next()
        .or_else(|| artifact.repository.clone())
        .unwrap_or_else(|| MAVEN_CENTRAL.to_owned());
    if repository.ends_with('/') {
        repository
    } else {
        format!("{repository}/")
    }
}

/// The URL of a Maven artifact's file with `extension` in `repository`.
fn maven_url(
    repository: &str,
    (group, artifact, version): (&str, &str, &str),
    extension: &str,
) -> String {
    format!(
        "{repository}{}/{}/{version}/{artifact}-{version}.{extension}",
        group.replace('.', "/"),
        artifact.replace('.', "/"),
    )
}

/// The directory of a Maven artifact, relative to a plugin's: a hash of its coordinates.
fn maven_directory((group, artifact, version): (&str, &str, &str)) -> String {
    hash_stub(&format!("{group}{artifact}{version}"))
}

/// Maven's name of a dependency scope.
fn scope_name(scope: MavenScope) -> &'static str {
    match scope {
        MavenScope::Compile => "compile",
        MavenScope::Provided => "provided",
        MavenScope::Runtime => "runtime",
        MavenScope::Test => "test",
        MavenScope::System => "system",
    }
}

/// The `downloadArtifacts` stage's instruction for one Maven artifact of `plugin`: its POM,
/// its dependencies (`mvn dependency:copy-dependencies`, through the mirrors when given),
/// and its JAR, all under `/tmp/artifacts/<plugin>/<hash>`.
fn maven_stage_step(plugin: &str, artifact: &MavenArtifact) -> Result<String, ModelError> {
    let gav = coordinates(artifact)?;
    let repository = maven_repository(artifact);
    let directory = format!("{plugin}/{}", maven_directory(gav));
    let pom = format!("/tmp/{directory}/pom.xml");
    let output = format!("/tmp/artifacts/{directory}");
    let mut steps = vec![download(
        &maven_url(&repository, gav, "pom"),
        &pom,
        artifact.insecure,
        true,
    )];
    let mut maven = vec![
        "mvn".to_owned(),
        "dependency:copy-dependencies".to_owned(),
        format!("-DoutputDirectory={output}"),
    ];
    if let Some(scope) = artifact.include_scope {
        maven.push(format!("-DincludeScope={}", scope_name(scope)));
    }
    if artifact.insecure == Some(true) {
        maven.extend([
            "-Dmaven.wagon.http.ssl.insecure=true".to_owned(),
            "-Dmaven.wagon.http.ssl.allowall=true".to_owned(),
            "-Dmaven.resolver.transport=wagon".to_owned(),
        ]);
    }
    let mirrors: Vec<&str> = artifact
        .mirrors
        .iter()
        .flatten()
        .map(|mirror| mirror.url.as_str())
        .collect();
    if !mirrors.is_empty() {
        let settings = format!("/tmp/{directory}/settings.xml");
        let entries: String = mirrors
            .iter()
            .enumerate()
            .map(|(index, url)| {
                format!(
                    "<mirror><id>mirror-{index}</id><mirrorOf>*</mirrorOf><url>{url}</url></mirror>"
                )
            })
            .collect();
        steps.push(format!(
            "{} > {settings}",
            command(&[
                "echo",
                &format!("<settings><mirrors>{entries}</mirrors></settings>")
            ])
        ));
        maven.extend(["-s".to_owned(), settings]);
    }
    maven.extend(["-f".to_owned(), pom]);
    steps.push(command(&maven));
    steps.push(download(
        &maven_url(&repository, gav, "jar"),
        &format!("{output}/{}-{}.jar", gav.1, gav.2),
        artifact.insecure,
        true,
    ));
    Ok(run(&steps))
}

/// The instruction that puts one artifact of `plugin` into the image.
fn artifact_step(plugin: &str, artifact: &BuildArtifact) -> Result<String, ModelError> {
    let plugin_path = format!("{PLUGINS_PATH}/{plugin}");
    let single_file = |kind: &str,
                       url: Option<&String>,
                       sha512sum: Option<&String>,
                       insecure,
                       name: Option<&String>| {
        let url = url_of(kind, url)?;
        let hash = hash_stub(url);
        let directory = format!("{plugin_path}/{hash}");
        let file = match name {
            Some(name) => format!("{directory}/{name}"),
            None if kind == "jar" => format!("{directory}/{hash}.jar"),
            None => format!("{directory}/{hash}"),
        };
        let mut steps = vec![
            format!("mkdir -p {directory}"),
            download(url, &file, insecure, false),
        ];
        steps.extend(checksum(&file, sha512sum));
        Ok(run(&steps))
    };
    let archive = |kind: &str,
                   DownloadableArtifact {
                       url,
                       sha512sum,
                       insecure,
                   }: &DownloadableArtifact| {
        let url = url_of(kind, url.as_ref())?;
        let hash = hash_stub(url);
        let directory = format!("{plugin_path}/{hash}");
        let file = format!("{plugin_path}/{hash}.{kind}");
        let mut steps = vec![
            format!("mkdir -p {directory}"),
            download(url, &file, *insecure, false),
        ];
        steps.extend(checksum(&file, sha512sum.as_ref()));
        if kind == "zip" {
            steps.push(command(&["unzip", &file, "-d", &directory]));
            steps.push(format!(
                "{} | {}",
                command(&["find", &directory, "-type", "l"]),
                command(&["xargs", "rm", "-f"])
            ));
        } else {
            steps.push(command(&["tar", "xvfz", &file, "-C", &directory]));
        }
        steps.push(command(&["rm", "-vf", &file]));
        Ok(run(&steps))
    };
    match artifact {
        BuildArtifact::Jar(jar) => single_file(
            "jar",
            jar.url.as_ref(),
            jar.sha512sum.as_ref(),
            jar.insecure,
            None,
        ),
        BuildArtifact::Other(OtherArtifact {
            url,
            sha512sum,
            file_name,
            insecure,
        }) => single_file(
            "other",
            url.as_ref(),
            sha512sum.as_ref(),
            *insecure,
            file_name.as_ref(),
        ),
        BuildArtifact::Tgz(tgz) => archive("tgz", tgz),
        BuildArtifact::Zip(zip) => archive("zip", zip),
        BuildArtifact::Maven(maven) => {
            let hash = maven_directory(coordinates(maven)?);
            Ok(format!(
                "COPY --from=downloadArtifacts /tmp/artifacts/{plugin}/{hash} {plugin_path}/{hash}\n\n"
            ))
        }
    }
}

/// The Maven artifacts of `plugins`, with the plugin each belongs to, in the spec's order.
fn maven_artifacts(plugins: &[BuildPlugin]) -> impl Iterator<Item = (&str, &MavenArtifact)> {
    plugins.iter().flat_map(|plugin| {
        plugin
            .artifacts
            .iter()
            .filter_map(move |artifact| match artifact {
                BuildArtifact::Maven(maven) => Some((plugin.name.as_str(), maven)),
                _ => None,
            })
    })
}

/// The Dockerfile that adds `build`'s plugins to `base_image`, with `maven_image` as the
/// first stage's image when a plugin has Maven artifacts, and the proxy variables of
/// `operator_env` as build arguments. An artifact without its URL or coordinates is an
/// error, as in Strimzi.
pub fn dockerfile(
    base_image: &str,
    build: &Build,
    maven_image: &str,
    operator_env: &[EnvVar],
) -> Result<String, ModelError> {
    let mut out = String::from(
        "##############################\n##############################\n\
         # This file is automatically generated by the Strimzi Cluster Operator\n\
         # Any changes to this file will be ignored and overwritten!\n\
         ##############################\n##############################\n\n",
    );
    let mut maven = maven_artifacts(&build.plugins).peekable();
    if maven.peek().is_some() {
        out.push_str(&format!("FROM {maven_image} AS downloadArtifacts\n"));
        for (plugin, artifact) in maven {
            out.push_str(&maven_stage_step(plugin, artifact)?);
        }
    }
    out.push_str(&format!("FROM {base_image}\n\nUSER root:root\n\n"));
    for name in PROXY_VARIABLES {
        let value = operator_env
            .iter()
            .find(|variable| variable.name == name)
            .and_then(|variable| variable.value.as_deref());
        if let Some(value) = value {
            out.push_str(&format!("ARG {}={value}\n\n", name.to_lowercase()));
        }
    }
    for plugin in &build.plugins {
        out.push_str(&format!(
            "##########\n# Connector plugin {}\n##########\n",
            plugin.name
        ));
        for artifact in &plugin.artifacts {
            out.push_str(&artifact_step(&plugin.name, artifact)?);
        }
    }
    out.push_str("USER 1001\n\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(plugins: serde_json::Value) -> Build {
        serde_json::from_value(serde_json::json!({
            "output": {"type": "docker", "image": "registry.example/connect:1"},
            "plugins": plugins,
        }))
        .unwrap()
    }

    #[test]
    fn a_jar_with_a_checksum_is_downloaded_and_checked_in_strimzis_layout() {
        let text = dockerfile(
            "kafka:1",
            &build(serde_json::json!([{"name": "echo", "artifacts": [
                {"type": "jar", "url": "http://plugins.test/echo.jar", "sha512sum": "abc"}
            ]}])),
            "maven:1",
            &[],
        )
        .unwrap();
        let hash = hash_stub("http://plugins.test/echo.jar");
        let file = format!("/opt/kafka/plugins/echo/{hash}/{hash}.jar");
        assert_eq!(
            text,
            format!(
                "##############################\n##############################\n\
                 # This file is automatically generated by the Strimzi Cluster Operator\n\
                 # Any changes to this file will be ignored and overwritten!\n\
                 ##############################\n##############################\n\n\
                 FROM kafka:1\n\nUSER root:root\n\n\
                 ##########\n# Connector plugin echo\n##########\n\
                 RUN mkdir -p /opt/kafka/plugins/echo/{hash} \\\n      \
                 && 'curl' '-f' '-L' '--output' '{file}' 'http://plugins.test/echo.jar' \\\n      \
                 && 'echo' 'abc {file}' > {file}.sha512 \\\n      \
                 && 'sha512sum' '--check' '{file}.sha512' \\\n      \
                 && 'rm' '-f' '{file}.sha512'\n\n\
                 USER 1001\n\n"
            )
        );
    }

    #[test]
    fn archives_are_unpacked_and_zip_links_removed() {
        let text = dockerfile(
            "kafka:1",
            &build(serde_json::json!([{"name": "p", "artifacts": [
                {"type": "tgz", "url": "http://plugins.test/a.tgz"},
                {"type": "zip", "url": "http://plugins.test/b.zip", "insecure": true},
                {"type": "other", "url": "http://plugins.test/c", "fileName": "c.txt"}
            ]}])),
            "maven:1",
            &[],
        )
        .unwrap();
        let tgz = hash_stub("http://plugins.test/a.tgz");
        let zip = hash_stub("http://plugins.test/b.zip");
        let other = hash_stub("http://plugins.test/c");
        assert!(text.contains(&format!(
            "'tar' 'xvfz' '/opt/kafka/plugins/p/{tgz}.tgz' '-C' '/opt/kafka/plugins/p/{tgz}'"
        )));
        assert!(text.contains(&format!(
            "'curl' '-f' '-L' '-k' '--output' '/opt/kafka/plugins/p/{zip}.zip'"
        )));
        assert!(text.contains(&format!(
            "'find' '/opt/kafka/plugins/p/{zip}' '-type' 'l' | 'xargs' 'rm' '-f'"
        )));
        assert!(text.contains(&format!("'--output' '/opt/kafka/plugins/p/{other}/c.txt'")));
        assert!(!text.contains("downloadArtifacts"));
    }

    #[test]
    fn maven_artifacts_are_resolved_in_a_first_stage_and_copied() {
        let text = dockerfile(
            "kafka:1",
            &build(serde_json::json!([{"name": "m", "artifacts": [
                {"type": "maven", "group": "org.example", "artifact": "sink", "version": "1.0",
                 "repository": "http://maven.test/repo", "includeScope": "runtime"}
            ]}])),
            "maven:1",
            &[crate::model::containers::env(
                "HTTP_PROXY",
                "http://proxy:3128",
            )],
        )
        .unwrap();
        let hash = hash_stub("org.examplesink1.0");
        assert!(
            text.contains(
                "FROM maven:1 AS downloadArtifacts\nRUN 'curl' '-f' '-L' '--create-dirs'"
            )
        );
        assert!(text.contains(&format!(
            "'--output' '/tmp/m/{hash}/pom.xml' 'http://maven.test/repo/org/example/sink/1.0/sink-1.0.pom'"
        )));
        assert!(text.contains(&format!(
            "'mvn' 'dependency:copy-dependencies' '-DoutputDirectory=/tmp/artifacts/m/{hash}' \
             '-DincludeScope=runtime' '-f' '/tmp/m/{hash}/pom.xml'"
        )));
        assert!(text.contains(&format!(
            "COPY --from=downloadArtifacts /tmp/artifacts/m/{hash} /opt/kafka/plugins/m/{hash}\n"
        )));
        assert!(text.contains("USER root:root\n\nARG http_proxy=http://proxy:3128\n\n"));
        let stage = text.find("AS downloadArtifacts").unwrap();
        assert!(stage < text.find("FROM kafka:1").unwrap());
    }

    #[test]
    fn mirrors_take_every_maven_request() {
        let text = dockerfile(
            "kafka:1",
            &build(serde_json::json!([{"name": "m", "artifacts": [
                {"type": "maven", "group": "g", "artifact": "a", "version": "1",
                 "mirrors": [{"url": "http://mirror.test/maven"}]}
            ]}])),
            "maven:1",
            &[],
        )
        .unwrap();
        assert!(text.contains("'http://mirror.test/maven/g/a/1/a-1.pom'"));
        assert!(text.contains("<mirrorOf>*</mirrorOf><url>http://mirror.test/maven</url>"));
        assert!(text.contains("'-s' '/tmp/m/"));
    }

    #[test]
    fn an_artifact_without_its_url_or_coordinates_is_refused() {
        for (artifact, message) in [
            (
                serde_json::json!({"type": "jar"}),
                "`jar` artifact is missing a URL.",
            ),
            (
                serde_json::json!({"type": "maven", "group": "g", "artifact": "a"}),
                "`maven` artifact is missing a version number.",
            ),
        ] {
            let error = dockerfile(
                "kafka:1",
                &build(serde_json::json!([{"name": "p", "artifacts": [artifact]}])),
                "maven:1",
                &[],
            )
            .unwrap_err();
            assert_eq!(error.to_string(), message);
        }
    }

    #[test]
    fn quotes_inside_words_are_escaped_for_the_shell() {
        assert_eq!(quoted("it's"), r#"'it'"'"'s'"#);
    }
}
