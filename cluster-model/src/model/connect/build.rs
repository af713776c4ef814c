//! `spec.build`: the Dockerfile that adds the connector plugins to the Connect image, kept in
//! ConfigMap `<name>-connect-dockerfile` (key `Dockerfile`) as Strimzi keeps it for its
//! builder. Each plugin's artifacts go under `/opt/kafka/plugins/<plugin>/<hash of the
//! artifact>`, downloaded with `curl` (checked against `sha512sum` when given); archives are
//! unpacked; Maven artifacts are fetched from their repository (Maven Central by default) as
//! one JAR.
//!
//! [`builder_pod`] is the Kaniko pod Strimzi runs to build and push the image
//! (`<name>-connect-build`). Running the build needs that image builder and a registry to
//! push to; the operator does not run it (see the KafkaConnect controller), so it never
//! changes the image the workers run, and the pod is built for inspection only.

use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, Container, KeyToPath, Pod, PodSpec, SecretVolumeSource, Volume,
};
use strimzi_api::annotations;
use strimzi_api::connect::{Build, BuildArtifact, BuildOutput};

use super::ConnectCluster;
use crate::model::config::hash_stub;
use crate::model::containers::mount;

/// Key of the Dockerfile in its ConfigMap.
pub const DOCKERFILE_KEY: &str = "Dockerfile";
/// Strimzi 1.2's Kaniko executor image, which builds and pushes the image.
pub const KANIKO_EXECUTOR_IMAGE: &str = "quay.io/strimzi/kaniko-executor:1.2.0";
/// Where Maven artifacts come from when the artifact names no repository.
const MAVEN_CENTRAL: &str = "https://repo1.maven.org/maven2";

/// The Dockerfile ConfigMap of a Connect cluster named `component_name`.
pub fn dockerfile_config_map(component_name: &str) -> String {
    format!("{component_name}-dockerfile")
}

/// The build revision of a Dockerfile.
pub fn build_revision(dockerfile: &str) -> String {
    hash_stub(dockerfile)
}

/// `word` quoted for the shell.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A `RUN` line chaining `commands`, each a list of words.
fn run(commands: &[Vec<String>]) -> String {
    let lines: Vec<String> = commands
        .iter()
        .map(|words| {
            words
                .iter()
                .map(|word| quoted(word))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    format!("RUN {}\n", lines.join(" \\\n      && "))
}

/// `curl` downloading `url` to `file`.
fn download(url: &str, file: &str, insecure: bool) -> Vec<String> {
    let mut words = vec!["curl".to_owned(), "-f".to_owned(), "-L".to_owned()];
    if insecure {
        words.push("-k".to_owned());
    }
    words.extend(["--output".to_owned(), file.to_owned(), url.to_owned()]);
    words
}

/// The check of `file` against `sha512sum`, when given.
fn checksum(file: &str, sha512sum: Option<&String>) -> Option<Vec<String>> {
    sha512sum.map(|sum| {
        vec![
            "sh".to_owned(),
            "-c".to_owned(),
            format!("echo '{sum} {file}' | sha512sum --check"),
        ]
    })
}

/// The commands that put one artifact of `plugin` into the image.
fn artifact_commands(plugin: &str, artifact: &BuildArtifact) -> Vec<Vec<String>> {
    let (url, sha512sum, insecure) = match artifact {
        BuildArtifact::Jar(a) | BuildArtifact::Tgz(a) | BuildArtifact::Zip(a) => (
            a.url.clone().unwrap_or_default(),
            a.sha512sum.clone(),
            a.insecure.unwrap_or(false),
        ),
        BuildArtifact::Other(a) => (
            a.url.clone().unwrap_or_default(),
            a.sha512sum.clone(),
            a.insecure.unwrap_or(false),
        ),
        BuildArtifact::Maven(a) => {
            let group = a.group.clone().unwrap_or_default();
            let name = a.artifact.clone().unwrap_or_default();
            let version = a.version.clone().unwrap_or_default();
            let repository = a
                .repository
                .clone()
                .unwrap_or_else(|| MAVEN_CENTRAL.to_owned());
            (
                format!(
                    "{}/{}/{name}/{version}/{name}-{version}.jar",
                    repository.trim_end_matches('/'),
                    group.replace('.', "/")
                ),
                None,
                a.insecure.unwrap_or(false),
            )
        }
    };
    let directory = format!("/opt/kafka/plugins/{plugin}/{}", hash_stub(&url));
    let mkdir = vec!["mkdir".to_owned(), "-p".to_owned(), directory.clone()];
    let mut commands = vec![mkdir];
    match artifact {
        BuildArtifact::Jar(_) | BuildArtifact::Maven(_) => {
            let file = format!("{directory}/{}.jar", hash_stub(&url));
            commands.push(download(&url, &file, insecure));
            commands.extend(checksum(&file, sha512sum.as_ref()));
        }
        BuildArtifact::Other(other) => {
            let file = format!(
                "{directory}/{}",
                other.file_name.clone().unwrap_or_else(|| hash_stub(&url))
            );
            commands.push(download(&url, &file, insecure));
            commands.extend(checksum(&file, sha512sum.as_ref()));
        }
        BuildArtifact::Tgz(_) | BuildArtifact::Zip(_) => {
            let is_zip = matches!(artifact, BuildArtifact::Zip(_));
            let file = format!("{directory}.{}", if is_zip { "zip" } else { "tgz" });
            commands.push(download(&url, &file, insecure));
            commands.extend(checksum(&file, sha512sum.as_ref()));
            if is_zip {
                commands.push(vec![
                    "unzip".to_owned(),
                    file.clone(),
                    "-d".to_owned(),
                    directory,
                ]);
            } else {
                commands.push(vec![
                    "tar".to_owned(),
                    "xvfz".to_owned(),
                    file.clone(),
                    "-C".to_owned(),
                    directory,
                ]);
            }
            commands.push(vec!["rm".to_owned(), "-vf".to_owned(), file]);
        }
    }
    commands
}

/// The Dockerfile that adds `build`'s plugins to `base_image`.
pub fn dockerfile(base_image: &str, build: &Build) -> String {
    let mut out = String::from(
        "##############################\n##############################\n\
         # This file is automatically generated by the Strimzi Cluster Operator\n\
         # Any changes to this file will be ignored and overwritten!\n\
         ##############################\n##############################\n\n",
    );
    out.push_str(&format!("FROM {base_image}\n\nUSER root:root\n\n"));
    for plugin in &build.plugins {
        out.push_str(&format!(
            "##########\n# Connector plugin {}\n##########\n",
            plugin.name
        ));
        let commands: Vec<Vec<String>> = plugin
            .artifacts
            .iter()
            .flat_map(|artifact| artifact_commands(&plugin.name, artifact))
            .collect();
        out.push_str(&run(&commands));
        out.push('\n');
    }
    out.push_str("USER 1001\n\n");
    out
}

/// The pod that builds the image of `build` with Kaniko and pushes it (`<name>-connect-build`,
/// the Dockerfile ConfigMap at `/dockerfile`, the push Secret's `.dockerconfigjson` as
/// `/kaniko/.docker/config.json`), `None` for an OpenShift ImageStream output, which Strimzi
/// builds with a BuildConfig instead.
pub fn builder_pod(cluster: &ConnectCluster, build: &Build) -> Option<Pod> {
    let BuildOutput::Docker(output) = &build.output else {
        return None;
    };
    let name = format!("{}-build", cluster.component_name);
    let dockerfile = self::dockerfile(&cluster.image, build);
    let mut args = vec![
        "--dockerfile=/dockerfile/Dockerfile".to_owned(),
        "--image-name-with-digest-file=/dev/termination-log".to_owned(),
        format!("--destination={}", output.image),
    ];
    args.extend(output.additional_build_options.iter().flatten().cloned());
    let mut volumes = vec![Volume {
        name: "dockerfile".to_owned(),
        config_map: Some(ConfigMapVolumeSource {
            name: dockerfile_config_map(&cluster.component_name),
            items: Some(vec![KeyToPath {
                key: DOCKERFILE_KEY.to_owned(),
                path: DOCKERFILE_KEY.to_owned(),
                mode: None,
            }]),
            ..ConfigMapVolumeSource::default()
        }),
        ..Volume::default()
    }];
    let mut mounts = vec![mount("dockerfile", "/dockerfile")];
    if let Some(secret) = &output.push_secret {
        volumes.push(Volume {
            name: "docker-credentials".to_owned(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(secret.clone()),
                items: Some(vec![KeyToPath {
                    key: ".dockerconfigjson".to_owned(),
                    path: "config.json".to_owned(),
                    mode: None,
                }]),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        });
        mounts.push(mount("docker-credentials", "/kaniko/.docker"));
    }
    let mut metadata = cluster.meta(&name, None);
    metadata.annotations = Some(
        [(
            annotations::CONNECT_BUILD_REVISION.to_owned(),
            build_revision(&dockerfile),
        )]
        .into_iter()
        .collect(),
    );
    Some(Pod {
        metadata,
        spec: Some(PodSpec {
            service_account_name: Some(name.clone()),
            restart_policy: Some("Never".to_owned()),
            containers: vec![Container {
                name: name.clone(),
                image: Some(KANIKO_EXECUTOR_IMAGE.to_owned()),
                image_pull_policy: Some(cluster.config.image_pull_policy(KANIKO_EXECUTOR_IMAGE)),
                args: Some(args),
                volume_mounts: Some(mounts),
                resources: build.resources.clone(),
                ..Container::default()
            }],
            volumes: Some(volumes),
            ..PodSpec::default()
        }),
        status: None,
    })
}
