//! Building a custom Kafka Connect container image with extra connector plugins, and mounting
//! plugins from OCI images without a build.

use k8s_openapi::api::core::v1::ResourceRequirements;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::tagged_union;

/// How the operator builds a Connect image that contains additional connector plugins.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Build {
    /// Where the built image is pushed.
    pub output: BuildOutput,
    /// The connector plugins to add to the image.
    pub plugins: Vec<BuildPlugin>,
    /// CPU and memory for the build pod.
    pub resources: Option<ResourceRequirements>,
}

/// Pushing the built image to a container registry.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerOutput {
    /// Name (and usually tag) of the image to build and push.
    pub image: String,
    /// Secret of type `kubernetes.io/dockerconfigjson` with the registry credentials for pushing.
    pub push_secret: Option<String>,
    /// Extra options for the image build command (Kaniko or Buildah); changing them does not
    /// trigger a rebuild.
    pub additional_build_options: Option<Vec<String>>,
    /// Extra options for the Buildah push command; changing them does not trigger a rebuild.
    pub additional_push_options: Option<Vec<String>>,
}

/// Pushing the built image to an OpenShift ImageStream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageStreamOutput {
    /// ImageStream and tag to push to, such as `my-connect:latest`.
    pub image: String,
}

tagged_union! {
    /// Where the built Connect image is stored.
    pub enum BuildOutput {
        /// A Docker-compatible container registry.
        Docker("docker") => DockerOutput,
        /// An OpenShift ImageStream.
        ImageStream("imagestream") => ImageStreamOutput,
    }
}

/// One connector plugin, made of downloaded artifacts, added to the built image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildPlugin {
    /// Name of the plugin, unique within the resource; it becomes the plugin's directory name.
    #[schemars(regex(pattern = r"^[a-z0-9][-_a-z0-9]*[a-z0-9]$"))]
    pub name: String,
    /// The files that make up the plugin.
    pub artifacts: Vec<BuildArtifact>,
}

/// An artifact downloaded from a URL: a JAR file, or a TGZ or ZIP archive that is unpacked.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DownloadableArtifact {
    /// Where to download the artifact from. Needed for every type except `maven`.
    #[schemars(regex(
        pattern = r"^(https?|ftp)://[-a-zA-Z0-9+&@#/%?=~_|!:,.;]*[-a-zA-Z0-9+&@#/%=~_|]$"
    ))]
    pub url: Option<String>,
    /// Expected SHA-512 checksum of the download; not checked when unset.
    pub sha512sum: Option<String>,
    /// Skips TLS verification of the download server when `true`.
    pub insecure: Option<bool>,
}

/// A file of any kind, downloaded from a URL and stored under a chosen name.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OtherArtifact {
    /// Where to download the artifact from.
    #[schemars(regex(
        pattern = r"^(https?|ftp)://[-a-zA-Z0-9+&@#/%?=~_|!:,.;]*[-a-zA-Z0-9+&@#/%=~_|]$"
    ))]
    pub url: Option<String>,
    /// Expected SHA-512 checksum of the download; not checked when unset.
    pub sha512sum: Option<String>,
    /// File name under which the artifact is stored in the plugin directory.
    pub file_name: Option<String>,
    /// Skips TLS verification of the download server when `true`.
    pub insecure: Option<bool>,
}

/// A Maven artifact, fetched together with its dependencies.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MavenArtifact {
    /// Repository to fetch from; Maven Central when unset.
    pub repository: Option<String>,
    /// Maven group id.
    pub group: Option<String>,
    /// Maven artifact id.
    pub artifact: Option<String>,
    /// Maven version.
    pub version: Option<String>,
    /// Only dependencies of this scope are included; all dependencies when unset.
    pub include_scope: Option<MavenScope>,
    /// Mirrors that every repository request of the build goes through.
    pub mirrors: Option<Vec<MavenMirror>>,
    /// Skips TLS verification of the repository when `true`.
    pub insecure: Option<bool>,
}

/// A Maven dependency scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum MavenScope {
    /// The `compile` scope.
    #[serde(rename = "compile")]
    Compile,
    /// The `provided` scope.
    #[serde(rename = "provided")]
    Provided,
    /// The `runtime` scope.
    #[serde(rename = "runtime")]
    Runtime,
    /// The `test` scope.
    #[serde(rename = "test")]
    Test,
    /// The `system` scope.
    #[serde(rename = "system")]
    System,
}

/// A Maven repository mirror.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MavenMirror {
    /// URL of the mirror.
    pub url: String,
}

tagged_union! {
    /// One file or archive that belongs to a built connector plugin.
    pub enum BuildArtifact {
        /// A JAR file, copied as is.
        Jar("jar") => DownloadableArtifact,
        /// A gzipped TAR archive, unpacked into the plugin directory.
        Tgz("tgz") => DownloadableArtifact,
        /// A ZIP archive, unpacked into the plugin directory.
        Zip("zip") => DownloadableArtifact,
        /// A Maven artifact with its dependencies.
        Maven("maven") => MavenArtifact,
        /// Any other file, copied as is.
        Other("other") => OtherArtifact,
    }
}

/// A connector plugin mounted into the Connect pods from OCI images, without building an image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MountedPlugin {
    /// Name of the plugin, unique within the resource; it becomes the plugin's mount path.
    #[schemars(regex(pattern = r"^[a-z0-9][-_a-z0-9]*[a-z0-9]$"))]
    pub name: String,
    /// The images that make up the plugin.
    pub artifacts: Vec<MountedArtifact>,
}

/// An OCI image (artifact) mounted as an image volume.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageArtifact {
    /// Reference of the image that holds the plugin files.
    pub reference: String,
    /// When the image is pulled: `Always`, `Never` or `IfNotPresent`. Kubernetes picks
    /// `Always` for `:latest` tags and `IfNotPresent` otherwise.
    pub pull_policy: Option<String>,
}

tagged_union! {
    /// One artifact of a mounted connector plugin.
    pub enum MountedArtifact {
        /// An OCI image.
        Image("image") => ImageArtifact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn build_round_trips_every_variant() {
        let document = json!({
            "output": {
                "type": "docker",
                "image": "registry.example/connect:1",
                "pushSecret": "push",
                "additionalBuildOptions": ["--insecure"],
                "additionalPushOptions": ["--retry=3"]
            },
            "plugins": [{
                "name": "file-connector",
                "artifacts": [
                    {"type": "jar", "url": "https://example.com/a.jar", "sha512sum": "abc"},
                    {"type": "tgz", "url": "https://example.com/a.tgz", "insecure": true},
                    {"type": "zip", "url": "https://example.com/a.zip"},
                    {"type": "maven", "repository": "https://repo.example", "group": "g",
                     "artifact": "a", "version": "1", "includeScope": "runtime",
                     "mirrors": [{"url": "https://mirror.example"}], "insecure": false},
                    {"type": "other", "url": "https://example.com/x", "fileName": "x.bin"}
                ]
            }],
            "resources": {"limits": {"cpu": "1"}}
        });
        let build: Build = serde_json::from_value(document.clone()).unwrap();
        let types: Vec<_> = build.plugins[0]
            .artifacts
            .iter()
            .map(BuildArtifact::type_name)
            .collect();
        assert_eq!(types, BuildArtifact::TYPES);
        assert_eq!(serde_json::to_value(&build).unwrap(), document);

        let imagestream = json!({"type": "imagestream", "image": "my-connect:latest"});
        let output: BuildOutput = serde_json::from_value(imagestream.clone()).unwrap();
        assert!(matches!(output, BuildOutput::ImageStream(_)));
        assert_eq!(serde_json::to_value(&output).unwrap(), imagestream);
    }

    #[test]
    fn every_maven_scope_parses() {
        for scope in ["compile", "provided", "runtime", "test", "system"] {
            let parsed: MavenScope = serde_json::from_value(json!(scope)).unwrap();
            assert_eq!(serde_json::to_value(parsed).unwrap(), json!(scope));
        }
    }

    #[test]
    fn mounted_plugin_round_trips() {
        let document = json!({
            "name": "debezium",
            "artifacts": [{"type": "image", "reference": "quay.io/x/debezium:1", "pullPolicy": "Always"}]
        });
        let plugin: MountedPlugin = serde_json::from_value(document.clone()).unwrap();
        assert_eq!(serde_json::to_value(&plugin).unwrap(), document);
    }

    #[test]
    fn plugin_name_and_url_have_patterns() {
        let schema = serde_json::to_value(schemars::schema_for!(Build)).unwrap();
        let text = schema.to_string();
        assert!(text.contains("^[a-z0-9][-_a-z0-9]*[a-z0-9]$"));
        assert!(text.contains("^(https?|ftp)://"));
    }
}
