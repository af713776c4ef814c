//! `spec.build`: a Connect image with the listed connector plugins, built in the cluster and
//! pushed to `spec.build.output`, as Strimzi 1.2 builds it on Kubernetes.
//!
//! [`ConnectBuild`] checks the build and makes its objects: the Dockerfile ([`dockerfile`])
//! in ConfigMap `<name>-connect-dockerfile` (key `Dockerfile`), the ServiceAccount and the
//! builder pod `<name>-connect-build`. The pod runs **Buildah** (the default; feature gate
//! `UseConnectBuildWithBuildah`): `buildah build` with the `vfs` storage driver, `buildah
//! push` writing the digest, and the pushed image's name with that digest written to the
//! termination log; or **Kaniko** with that gate off (`--image-name-with-digest-file` to the
//! termination log). The image's revision ([`build_revision`]: hashes of the Dockerfile and
//! the output image) is the pod's `strimzi.io/connect-build-revision`; [`progress`] decides,
//! from that pod and the StrimziPodSet's record of the last build, what a reconciliation
//! does next.

pub mod dockerfile;
pub mod progress;

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, KeyToPath, Pod, PodSpec, SecretVolumeSource,
    ServiceAccount, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use strimzi_api::annotations;
use strimzi_api::connect::{Build, BuildOutput, DockerOutput};
use strimzi_api::selectors::ComponentLabels;

use super::ConnectCluster;
use crate::model::config::hash_stub;
use crate::model::containers::{
    add_shared_and_template_env, empty_dir, env, mount, template_mounts, template_volumes,
    templated_pod_spec,
};
use crate::model::meta::{
    merged, non_empty, template_annotations, template_labels, with_additional_labels,
};
use crate::model::{ModelError, PodSecurityProfile};

/// Key of the Dockerfile in its ConfigMap.
pub const DOCKERFILE_KEY: &str = "Dockerfile";
/// `strimzi.io/component-type` of the build's objects.
pub const COMPONENT_TYPE: &str = "kafka-connect-build";
/// Strimzi 1.2's Buildah image (`STRIMZI_DEFAULT_BUILDAH_IMAGE`).
pub const DEFAULT_BUILDAH_IMAGE: &str = "quay.io/strimzi/buildah:1.2.0";
/// Strimzi 1.2's Kaniko executor image (`STRIMZI_DEFAULT_KANIKO_EXECUTOR_IMAGE`).
pub const DEFAULT_KANIKO_EXECUTOR_IMAGE: &str = "quay.io/strimzi/kaniko-executor:1.2.0";
/// Strimzi 1.2's Maven builder image (`STRIMZI_DEFAULT_MAVEN_BUILDER`), the first stage of a
/// Dockerfile with Maven artifacts.
pub const DEFAULT_MAVEN_BUILDER_IMAGE: &str = "quay.io/strimzi/maven-builder:1.2.0";
/// How long a build may run before it is reported stalled
/// (`STRIMZI_CONNECT_BUILD_TIMEOUT_MS`, Strimzi's default).
pub const DEFAULT_BUILD_TIMEOUT: Duration = Duration::from_secs(300);
/// Options `spec.build.output.additionalBuildOptions` may hold for `buildah build`.
pub const BUILDAH_BUILD_OPTIONS: [&str; 7] = [
    "--authfile",
    "--cert-dir",
    "--creds",
    "--decryption-key",
    "--retry",
    "--retry-delay",
    "--tls-verify",
];
/// Options `spec.build.output.additionalPushOptions` may hold for `buildah push`.
pub const BUILDAH_PUSH_OPTIONS: [&str; 7] = [
    "--authfile",
    "--cert-dir",
    "--creds",
    "--quiet",
    "--retry",
    "--retry-delay",
    "--tls-verify",
];
/// Options `spec.build.output.additionalBuildOptions` may hold for Kaniko.
pub const KANIKO_OPTIONS: [&str; 19] = [
    "--customPlatform",
    "--custom-platform",
    "--insecure",
    "--insecure-pull",
    "--insecure-registry",
    "--log-format",
    "--log-timestamp",
    "--registry-mirror",
    "--reproducible",
    "--single-snapshot",
    "--skip-tls-verify",
    "--skip-tls-verify-pull",
    "--skip-tls-verify-registry",
    "--verbosity",
    "--snapshotMode",
    "--use-new-run",
    "--registry-certificate",
    "--registry-client-cert",
    "--ignore-path",
];
/// Where the builder finds the push Secret's `config.json` with Buildah.
const BUILDAH_DOCKER_CONFIG: &str = "/build/.docker";
/// Where the builder finds the push Secret's `config.json` with Kaniko.
const KANIKO_DOCKER_CONFIG: &str = "/kaniko/.docker";

/// The program that builds and pushes the image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ImageBuilder {
    /// Buildah (feature gate `UseConnectBuildWithBuildah` on, the default).
    #[default]
    Buildah,
    /// Kaniko (that gate off).
    Kaniko,
}

impl ImageBuilder {
    fn name(self) -> &'static str {
        match self {
            Self::Buildah => "Buildah",
            Self::Kaniko => "Kaniko",
        }
    }
}

/// Operator-wide settings of Connect builds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildSettings {
    /// Which program builds.
    pub builder: ImageBuilder,
    /// The Buildah image (`STRIMZI_DEFAULT_BUILDAH_IMAGE`).
    pub buildah_image: String,
    /// The Kaniko executor image (`STRIMZI_DEFAULT_KANIKO_EXECUTOR_IMAGE`).
    pub kaniko_image: String,
    /// The Maven builder image (`STRIMZI_DEFAULT_MAVEN_BUILDER`).
    pub maven_builder_image: String,
    /// Labels every builder pod gets (`STRIMZI_CUSTOM_KAFKA_CONNECT_BUILD_LABELS`).
    pub pod_labels: BTreeMap<String, String>,
    /// How long a build may run before it is reported stalled
    /// (`STRIMZI_CONNECT_BUILD_TIMEOUT_MS`).
    pub timeout: Duration,
}

impl Default for BuildSettings {
    fn default() -> Self {
        Self {
            builder: ImageBuilder::default(),
            buildah_image: DEFAULT_BUILDAH_IMAGE.to_owned(),
            kaniko_image: DEFAULT_KANIKO_EXECUTOR_IMAGE.to_owned(),
            maven_builder_image: DEFAULT_MAVEN_BUILDER_IMAGE.to_owned(),
            pod_labels: BTreeMap::new(),
            timeout: DEFAULT_BUILD_TIMEOUT,
        }
    }
}

/// The Dockerfile ConfigMap of a Connect cluster named `component_name`.
pub fn dockerfile_config_map(component_name: &str) -> String {
    format!("{component_name}-dockerfile")
}

/// The builder pod and its ServiceAccount of a Connect cluster named `component_name`.
pub fn builder_name(component_name: &str) -> String {
    format!("{component_name}-build")
}

/// The revision of a build: hashes of its Dockerfile and of the image it pushes, so that a
/// change of either builds again (and nothing else does).
pub fn build_revision(dockerfile: &str, output_image: &str) -> String {
    format!("{}{}", hash_stub(dockerfile), hash_stub(output_image))
}

/// The options of `options` (the part before `=`) that `allowed` lacks, refused as Strimzi
/// refuses them.
fn check_options(
    options: Option<&Vec<String>>,
    allowed: &[&str],
    field: &str,
) -> Result<(), ModelError> {
    let forbidden: Vec<&str> = options
        .into_iter()
        .flatten()
        .map(|option| {
            option
                .split_once('=')
                .map_or(option.as_str(), |(name, _)| name)
        })
        .filter(|name| !allowed.contains(name))
        .collect();
    if forbidden.is_empty() {
        Ok(())
    } else {
        Err(ModelError::InvalidResource(format!(
            "{field} contains forbidden options: [{}]",
            forbidden.join(", ")
        )))
    }
}

/// A KafkaConnect's checked `spec.build` and the objects that run it.
#[derive(Clone, Debug)]
pub struct ConnectBuild<'a> {
    cluster: &'a ConnectCluster,
    build: &'a Build,
    output: &'a DockerOutput,
    dockerfile: String,
    revision: String,
}

impl<'a> ConnectBuild<'a> {
    /// The build of `cluster`, `None` without `spec.build`. Refused as Strimzi refuses it:
    /// plugins without a unique name or without artifacts, an output that is the image the
    /// spec already names, options the builder does not allow, an artifact without its URL
    /// or coordinates; also an ImageStream output (built by OpenShift's BuildConfig, which
    /// this operator does not use) and the `restricted` security profile without the build
    /// container's own security context (the builder needs what that profile forbids).
    pub fn of(cluster: &'a ConnectCluster) -> Result<Option<Self>, ModelError> {
        let Some(build) = cluster.spec.build.as_ref() else {
            return Ok(None);
        };
        let mut names: Vec<&str> = build
            .plugins
            .iter()
            .map(|plugin| plugin.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        if names.len() != build.plugins.len() {
            return Err(ModelError::InvalidResource(
                "Connector plugins names have to be unique within a single KafkaConnect resource."
                    .to_owned(),
            ));
        }
        if build
            .plugins
            .iter()
            .any(|plugin| plugin.artifacts.is_empty())
        {
            return Err(ModelError::InvalidResource(
                "Each connector plugin needs to have a list of artifacts.".to_owned(),
            ));
        }
        let output = match &build.output {
            BuildOutput::Docker(output) => output,
            BuildOutput::ImageStream(_) => {
                return Err(ModelError::InvalidResource(
                    "spec.build.output of type `imagestream` is built by OpenShift's BuildConfig, \
                     which this operator does not use: push to a registry with type `docker`"
                        .to_owned(),
                ));
            }
        };
        if cluster.spec.image.as_deref() == Some(output.image.as_str()) {
            return Err(ModelError::InvalidResource(
                "KafkaConnect .spec.image cannot be the same as .spec.build.output.image"
                    .to_owned(),
            ));
        }
        let settings = &cluster.config.connect_build;
        match settings.builder {
            ImageBuilder::Buildah => {
                check_options(
                    output.additional_build_options.as_ref(),
                    &BUILDAH_BUILD_OPTIONS,
                    ".spec.build.output.additionalBuildOptions",
                )?;
                check_options(
                    output.additional_push_options.as_ref(),
                    &BUILDAH_PUSH_OPTIONS,
                    ".spec.build.output.additionalPushOptions",
                )?;
            }
            ImageBuilder::Kaniko => check_options(
                output.additional_build_options.as_ref(),
                &KANIKO_OPTIONS,
                ".spec.build.output.additionalBuildOptions",
            )?,
        }
        let container_template = cluster
            .spec
            .template
            .as_ref()
            .and_then(|template| template.build_container.as_ref());
        if cluster.config.pod_security == PodSecurityProfile::Restricted
            && container_template
                .and_then(|template| template.security_context.as_ref())
                .is_none()
        {
            return Err(ModelError::InvalidConfiguration(format!(
                "Kafka Connect Build using the {} builder is not available under the restricted \
                 security profile: it needs capabilities (SETUID, SETGID, KILL) that profile \
                 forbids; set template.buildContainer.securityContext or use the baseline profile",
                settings.builder.name()
            )));
        }
        let dockerfile = dockerfile::dockerfile(
            &cluster.image,
            build,
            &settings.maven_builder_image,
            &cluster.config.shared_env,
        )?;
        let revision = build_revision(&dockerfile, &output.image);
        Ok(Some(Self {
            cluster,
            build,
            output,
            dockerfile,
            revision,
        }))
    }

    /// The build's revision ([`build_revision`]).
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// The image the build pushes, as the spec names it.
    pub fn output_image(&self) -> &str {
        &self.output.image
    }

    /// The generated Dockerfile.
    pub fn dockerfile(&self) -> &str {
        &self.dockerfile
    }

    /// Who the build's objects belong to: the cluster, component `<name>-connect-build`.
    fn component_labels(&self) -> ComponentLabels {
        ComponentLabels {
            component_name: builder_name(&self.cluster.component_name),
            component_type: COMPONENT_TYPE.to_owned(),
            ..self.cluster.component_labels()
        }
    }

    /// Labels of the build's objects.
    pub fn labels(&self) -> BTreeMap<String, String> {
        self.component_labels().labels(
            &self.cluster.resource_labels,
            &self.cluster.config.label_exclusion,
        )
    }

    fn meta(&self, name: &str, extra_labels: &BTreeMap<String, String>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(self.cluster.namespace.clone()),
            labels: non_empty(with_additional_labels(&self.labels(), extra_labels)),
            owner_references: self.cluster.owner.clone().map(|owner| vec![owner]),
            ..ObjectMeta::default()
        }
    }

    /// ConfigMap `<name>-connect-dockerfile` with the Dockerfile.
    pub fn dockerfile_config_map(&self) -> ConfigMap {
        ConfigMap {
            metadata: self.meta(
                &dockerfile_config_map(&self.cluster.component_name),
                &BTreeMap::new(),
            ),
            data: Some(BTreeMap::from([(
                DOCKERFILE_KEY.to_owned(),
                self.dockerfile.clone(),
            )])),
            ..ConfigMap::default()
        }
    }

    /// ServiceAccount `<name>-connect-build` of the builder pod.
    pub fn service_account(&self) -> ServiceAccount {
        let template = self
            .cluster
            .spec
            .template
            .as_ref()
            .and_then(|template| template.build_service_account.as_ref())
            .and_then(|template| template.metadata.as_ref());
        let mut metadata = self.meta(
            &builder_name(&self.cluster.component_name),
            &template_labels(template),
        );
        metadata.annotations = non_empty(template_annotations(template));
        ServiceAccount {
            metadata,
            ..ServiceAccount::default()
        }
    }

    /// The builder's command: Buildah's script (build, push with the digest written to a
    /// file, the pushed name with that digest to the termination log) or Kaniko's arguments,
    /// with the user's options, each quoted for the shell in Buildah's script.
    fn arguments(&self) -> Vec<String> {
        let image = &self.output.image;
        let options = |options: Option<&Vec<String>>| -> String {
            options
                .into_iter()
                .flatten()
                .map(|option| format!(" '{}'", option.replace('\'', r#"'"'"'"#)))
                .collect()
        };
        match self.cluster.config.connect_build.builder {
            ImageBuilder::Buildah => vec![
                "/bin/bash".to_owned(),
                "-ec".to_owned(),
                format!(
                    "buildah build --file=/dockerfile/Dockerfile --tag={image} --storage-driver=vfs{}\n\
                     buildah push --storage-driver=vfs --digestfile=/tmp/digest{} {image}\n\
                     echo \"$(buildah images --storage-driver=vfs --format '{{{{.Name}}}}' {image})@$(cat /tmp/digest)\" > /dev/termination-log",
                    options(self.output.additional_build_options.as_ref()),
                    options(self.output.additional_push_options.as_ref()),
                ),
            ],
            ImageBuilder::Kaniko => [
                "--dockerfile=/dockerfile/Dockerfile".to_owned(),
                "--image-name-with-digest-file=/dev/termination-log".to_owned(),
                format!("--destination={image}"),
            ]
            .into_iter()
            .chain(
                self.output
                    .additional_build_options
                    .iter()
                    .flatten()
                    .cloned(),
            )
            .collect(),
        }
    }

    /// The builder pod `<name>-connect-build`, annotated with the build's revision: the
    /// Dockerfile ConfigMap at `/dockerfile`, the push Secret's `.dockerconfigjson` as
    /// `config.json` (at `/build/.docker` with `REGISTRY_AUTH_FILE` for Buildah, at
    /// `/kaniko/.docker` for Kaniko), an `emptyDir` at `/var/tmp` for Buildah, and what
    /// `template.buildPod` and `template.buildContainer` add.
    pub fn builder_pod(&self) -> Pod {
        let cluster = self.cluster;
        let settings = &cluster.config.connect_build;
        let template = cluster.spec.template.as_ref();
        let pod_template = template.and_then(|template| template.build_pod.as_ref());
        let container_template = template.and_then(|template| template.build_container.as_ref());
        let pod_metadata = pod_template.and_then(|pod| pod.metadata.as_ref());
        let name = builder_name(&cluster.component_name);
        let buildah = settings.builder == ImageBuilder::Buildah;
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
        let mut vars = Vec::new();
        if let Some(secret) = &self.output.push_secret {
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
            let directory = if buildah {
                BUILDAH_DOCKER_CONFIG
            } else {
                KANIKO_DOCKER_CONFIG
            };
            mounts.push(mount("docker-credentials", directory));
            if buildah {
                vars.push(env(
                    "REGISTRY_AUTH_FILE",
                    format!("{directory}/config.json"),
                ));
            }
        }
        if buildah {
            volumes.push(empty_dir("var-tmp", None, None));
            mounts.push(mount("var-tmp", "/var/tmp"));
        }
        volumes.extend(template_volumes(pod_template));
        mounts.extend(template_mounts(container_template));
        add_shared_and_template_env(&mut vars, &cluster.config.shared_env, container_template);
        let image = match settings.builder {
            ImageBuilder::Buildah => settings.buildah_image.clone(),
            ImageBuilder::Kaniko => settings.kaniko_image.clone(),
        };
        let labels = with_additional_labels(
            &with_additional_labels(&self.labels(), &settings.pod_labels),
            &template_labels(pod_metadata),
        );
        let annotations = merged([
            &template_annotations(pod_metadata),
            &BTreeMap::from([(
                annotations::CONNECT_BUILD_REVISION.to_owned(),
                self.revision.clone(),
            )]),
        ]);
        Pod {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(cluster.namespace.clone()),
                labels: Some(labels),
                annotations: Some(annotations),
                owner_references: cluster.owner.clone().map(|owner| vec![owner]),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                service_account_name: Some(name.clone()),
                restart_policy: Some("Never".to_owned()),
                containers: vec![Container {
                    name,
                    image_pull_policy: Some(cluster.config.image_pull_policy(&image)),
                    image: Some(image),
                    args: Some(self.arguments()),
                    env: non_empty_list(vars),
                    volume_mounts: Some(mounts),
                    resources: self.build.resources.clone(),
                    security_context: cluster
                        .config
                        .container_security_context(container_template),
                    ..Container::default()
                }],
                volumes: Some(volumes),
                image_pull_secrets: cluster.config.image_pull_secrets(pod_template),
                ..templated_pod_spec(pod_template)
            }),
            status: None,
        }
    }
}

/// `list`, or `None` when empty.
fn non_empty_list<T>(list: Vec<T>) -> Option<Vec<T>> {
    (!list.is_empty()).then_some(list)
}
