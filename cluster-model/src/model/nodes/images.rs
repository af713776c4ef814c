//! Kafka container images by Kafka version (`STRIMZI_KAFKA_IMAGES`) and the supported versions.

use std::collections::BTreeMap;

use strimzi_api::kafka::KafkaClusterSpec;

use crate::model::{KafkaVersion, ModelError};

/// A Kafka version the operator runs, with the KRaft `metadata.version` a new cluster starts at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupportedVersion {
    /// Kafka version, e.g. `4.3.1`.
    pub version: &'static str,
    /// Its default KRaft metadata version, e.g. `4.3-IV0`.
    pub metadata_version: &'static str,
}

/// The Kafka versions Strimzi 1.2 supports (its `kafka-versions.yaml`), oldest first.
pub const SUPPORTED_VERSIONS: [SupportedVersion; 4] = [
    SupportedVersion {
        version: "4.2.0",
        metadata_version: "4.2-IV1",
    },
    SupportedVersion {
        version: "4.2.1",
        metadata_version: "4.2-IV1",
    },
    SupportedVersion {
        version: "4.3.0",
        metadata_version: "4.3-IV0",
    },
    SupportedVersion {
        version: "4.3.1",
        metadata_version: "4.3-IV0",
    },
];

/// KRaft `metadata.version` names with their feature levels, as Kafka numbers them: from
/// `3.3-IV3`, the oldest Kafka 4 reads, to the newest a supported Kafka version runs.
const METADATA_VERSION_LEVELS: [(&str, i16); 24] = [
    ("3.3-IV3", 7),
    ("3.4-IV0", 8),
    ("3.5-IV0", 9),
    ("3.5-IV1", 10),
    ("3.5-IV2", 11),
    ("3.6-IV0", 12),
    ("3.6-IV1", 13),
    ("3.6-IV2", 14),
    ("3.7-IV0", 15),
    ("3.7-IV1", 16),
    ("3.7-IV2", 17),
    ("3.7-IV3", 18),
    ("3.7-IV4", 19),
    ("3.8-IV0", 20),
    ("3.9-IV0", 21),
    ("4.0-IV0", 22),
    ("4.0-IV1", 23),
    ("4.0-IV2", 24),
    ("4.0-IV3", 25),
    ("4.1-IV0", 26),
    ("4.1-IV1", 27),
    ("4.2-IV0", 28),
    ("4.2-IV1", 29),
    ("4.3-IV0", 30),
];

/// The feature level of `metadata_version`; a bare `<major>.<minor>` is its newest internal
/// version. `None` when Kafka has no such version (or none this operator runs).
pub fn metadata_feature_level(metadata_version: &str) -> Option<i16> {
    let exact = METADATA_VERSION_LEVELS
        .iter()
        .find(|(name, _)| *name == metadata_version);
    let newest_of_release = || {
        METADATA_VERSION_LEVELS.iter().rev().find(|(name, _)| {
            name.split_once("-IV").map(|(release, _)| release) == Some(metadata_version)
        })
    };
    exact.or_else(newest_of_release).map(|(_, level)| *level)
}

/// The name of the metadata version of feature level `level`, e.g. `4.3-IV0`.
pub fn metadata_version_name(level: i16) -> Option<&'static str> {
    METADATA_VERSION_LEVELS
        .iter()
        .find(|(_, known)| *known == level)
        .map(|(name, _)| *name)
}

/// The version a Kafka without `spec.kafka.version` runs.
pub const DEFAULT_KAFKA_VERSION: &str = "4.3.1";

/// The Strimzi release whose images run the nodes by default.
pub const STRIMZI_VERSION: &str = "1.2.0";

/// The default image of the init container (`STRIMZI_DEFAULT_KAFKA_INIT_IMAGE`): ours, whose
/// `/opt/strimzi/bin/kafka_init_run.sh` is `strimzi_cluster_operator::kafka_init`'s program.
pub const DEFAULT_KAFKA_INIT_IMAGE: &str = strimzi_api::OPERATOR_IMAGE;

/// The supported version `version`, if it is one.
pub fn supported_version(version: &str) -> Option<SupportedVersion> {
    SUPPORTED_VERSIONS
        .into_iter()
        .find(|supported| supported.version == version)
}

/// The Kafka image of each supported Kafka version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KafkaImages {
    /// Image by Kafka version.
    pub by_version: BTreeMap<String, String>,
}

impl KafkaImages {
    /// Strimzi 1.2's own images: `quay.io/strimzi/kafka:1.2.0-kafka-<version>`.
    pub fn strimzi_defaults() -> Self {
        let by_version = SUPPORTED_VERSIONS
            .iter()
            .map(|supported| {
                (
                    supported.version.to_owned(),
                    format!(
                        "quay.io/strimzi/kafka:{STRIMZI_VERSION}-kafka-{}",
                        supported.version
                    ),
                )
            })
            .collect();
        Self { by_version }
    }

    /// Reads images by version (`STRIMZI_KAFKA_IMAGES` and the Connect and MirrorMaker 2
    /// variables): `<version>=<image>` entries separated by commas, spaces, tabs or line
    /// breaks. Every supported version needs an image.
    pub fn parse(value: &str) -> Result<Self, String> {
        let mut by_version = BTreeMap::new();
        for entry in value
            .split([',', ' ', '\t', '\n', '\r'])
            .filter(|entry| !entry.is_empty())
        {
            let Some((version, image)) = entry.split_once('=') else {
                return Err(format!(
                    "entries of the form <version>=<image>, not `{entry}`"
                ));
            };
            by_version.insert(version.trim().to_owned(), image.trim().to_owned());
        }
        let missing: Vec<&str> = SUPPORTED_VERSIONS
            .iter()
            .map(|supported| supported.version)
            .filter(|version| !by_version.contains_key(*version))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "an image for every supported Kafka version, none for {}",
                missing.join(", ")
            ));
        }
        Ok(Self { by_version })
    }

    /// The image of `version`.
    pub fn image(&self, version: &str) -> Option<&str> {
        self.by_version.get(version).map(String::as_str)
    }
}

/// The version, metadata version and image of `spec`: `version` (or the default) must be
/// supported; `image` and `metadataVersion` override what the version implies. The metadata
/// version may not be newer than the Kafka version runs; nor may the cluster's `current`
/// metadata version (from the Kafka's status), since Kafka cannot go back to an older one.
pub fn resolve_version(
    spec: &KafkaClusterSpec,
    images: &KafkaImages,
    current: Option<&str>,
) -> Result<KafkaVersion, ModelError> {
    let requested = spec.version.as_deref().unwrap_or(DEFAULT_KAFKA_VERSION);
    let Some(supported) = supported_version(requested) else {
        let versions: Vec<&str> = SUPPORTED_VERSIONS.iter().map(|v| v.version).collect();
        return Err(ModelError::UnsupportedKafkaVersion(format!(
            "Unsupported Kafka.spec.kafka.version: {requested}. Supported versions are: [{}]",
            versions.join(", ")
        )));
    };
    let image = match (&spec.image, images.image(requested)) {
        (Some(image), _) => image.clone(),
        (None, Some(image)) => image.to_owned(),
        (None, None) => {
            return Err(ModelError::UnsupportedKafkaVersion(format!(
                "No image is configured for Kafka version {requested}; set STRIMZI_KAFKA_IMAGES \
                 or spec.kafka.image"
            )));
        }
    };
    let metadata_version = spec
        .metadata_version
        .clone()
        .unwrap_or_else(|| supported.metadata_version.to_owned());
    validate_metadata_version(&metadata_version)?;
    let newest = metadata_feature_level(supported.metadata_version).unwrap_or(i16::MAX);
    match metadata_feature_level(&metadata_version) {
        None => {
            return Err(ModelError::InvalidConfiguration(format!(
                "Metadata version {metadata_version} is unknown"
            )));
        }
        Some(level) if level > newest => {
            return Err(ModelError::UnsupportedKafkaVersion(format!(
                "Metadata version {metadata_version} is newer than Kafka {requested} supports ({} at most)",
                supported.metadata_version
            )));
        }
        Some(_) => {}
    }
    if let Some(current) = current
        && metadata_feature_level(current).is_some_and(|level| level > newest)
    {
        return Err(ModelError::UnsupportedKafkaVersion(format!(
            "Kafka {requested} cannot run this cluster: its metadata version is {current}, newer than Kafka {requested} supports ({} at most), and a metadata version cannot be lowered",
            supported.metadata_version
        )));
    }
    Ok(KafkaVersion {
        version: requested.to_owned(),
        metadata_version,
        image,
    })
}

/// Checks that `metadata_version` reads as `<major>.<minor>` or `<major>.<minor>-IV<n>` and is
/// not older than `3.3-IV3`, the oldest Kafka 4 accepts.
fn validate_metadata_version(metadata_version: &str) -> Result<(), ModelError> {
    let invalid = || {
        ModelError::InvalidConfiguration(format!("Metadata version {metadata_version} is invalid"))
    };
    let (release, iv) = match metadata_version.split_once("-IV") {
        Some((release, iv)) => (release, Some(iv.parse::<u32>().map_err(|_| invalid())?)),
        None => (metadata_version, None),
    };
    let (major, minor) = release.split_once('.').ok_or_else(invalid)?;
    let major: u32 = major.parse().map_err(|_| invalid())?;
    let minor: u32 = minor.parse().map_err(|_| invalid())?;
    // A bare `3.3` means its newest feature level, which is at least 3.3-IV3.
    let too_old =
        (major, minor) < (3, 3) || ((major, minor) == (3, 3) && iv.is_some_and(|iv| iv < 3));
    if too_old {
        return Err(ModelError::InvalidConfiguration(
            "The oldest supported metadata version is 3.3-IV3".to_owned(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// Strimzi 1.2's own table of Kafka versions (`kafka-versions.yaml` of its reference data):
    /// ours supports exactly the versions it supports, with the same metadata versions and the
    /// same default.
    #[test]
    fn supported_versions_are_strimzis() {
        #[derive(serde::Deserialize)]
        struct Entry {
            version: String,
            #[serde(default)]
            metadata: Option<serde_yaml_ng::Value>,
            supported: bool,
            default: bool,
        }
        let path = strimzi_tests::reference::reference_dir().join("kafka-versions.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        let entries: Vec<Entry> = serde_yaml_ng::from_str(&text).unwrap();
        let strimzis: Vec<(String, String)> = entries
            .iter()
            .filter(|entry| entry.supported)
            .map(|entry| {
                let metadata = match entry.metadata.as_ref().unwrap() {
                    serde_yaml_ng::Value::String(text) => text.clone(),
                    other => serde_yaml_ng::to_string(other).unwrap().trim().to_owned(),
                };
                (entry.version.clone(), metadata)
            })
            .collect();
        let ours: Vec<(String, String)> = SUPPORTED_VERSIONS
            .iter()
            .map(|supported| {
                (
                    supported.version.to_owned(),
                    supported.metadata_version.to_owned(),
                )
            })
            .collect();
        assert_eq!(ours, strimzis, "{}", path.display());
        let default: Vec<&str> = entries
            .iter()
            .filter(|entry| entry.default)
            .map(|entry| entry.version.as_str())
            .collect();
        assert_eq!(default, [DEFAULT_KAFKA_VERSION]);
        for (version, metadata) in &strimzis {
            assert!(
                metadata_feature_level(metadata).is_some(),
                "{version}: metadata version {metadata} unknown"
            );
        }
    }

    #[test]
    fn defaults_are_strimzi_images() {
        let images = KafkaImages::strimzi_defaults();
        assert_eq!(
            images.image("4.3.1"),
            Some("quay.io/strimzi/kafka:1.2.0-kafka-4.3.1")
        );
        assert_eq!(images.by_version.len(), SUPPORTED_VERSIONS.len());
    }

    #[test]
    fn parses_the_operator_environment_format() {
        let images = KafkaImages::parse(
            "4.2.0=registry/kafka:a 4.2.1=registry/kafka:a\n4.3.0=registry/kafka:b, 4.3.1=registry/kafka:c\t9.9.9=x",
        )
        .unwrap();
        assert_eq!(images.image("4.3.0"), Some("registry/kafka:b"));
        assert_eq!(images.image("9.9.9"), Some("x"));
        assert!(KafkaImages::parse("4.2.0").unwrap_err().contains("4.2.0"));
        assert!(
            KafkaImages::parse("4.2.0=a 4.3.0=b")
                .unwrap_err()
                .contains("4.3.1")
        );
    }

    #[test]
    fn resolves_version_image_and_metadata_version() {
        let images = KafkaImages::strimzi_defaults();
        let resolved = resolve_version(&KafkaClusterSpec::default(), &images, None).unwrap();
        assert_eq!(resolved.version, "4.3.1");
        assert_eq!(resolved.metadata_version, "4.3-IV0");
        assert_eq!(resolved.image, "quay.io/strimzi/kafka:1.2.0-kafka-4.3.1");

        let spec = KafkaClusterSpec {
            version: Some("4.2.0".into()),
            metadata_version: Some("4.1-IV1".into()),
            image: Some("mine:1".into()),
            ..KafkaClusterSpec::default()
        };
        let resolved = resolve_version(&spec, &images, None).unwrap();
        assert_eq!(resolved.image, "mine:1");
        assert_eq!(resolved.metadata_version, "4.1-IV1");
    }

    #[test]
    fn rejects_unsupported_versions_and_bad_metadata_versions() {
        let images = KafkaImages::strimzi_defaults();
        let spec = |version: &str, metadata: Option<&str>| KafkaClusterSpec {
            version: Some(version.into()),
            metadata_version: metadata.map(Into::into),
            ..KafkaClusterSpec::default()
        };
        let error = resolve_version(&spec("3.9.0", None), &images, None).unwrap_err();
        assert_eq!(error.reason(), "UnsupportedKafkaVersionException");
        let no_images = KafkaImages::default();
        assert!(matches!(
            resolve_version(&spec("4.3.1", None), &no_images, None),
            Err(ModelError::UnsupportedKafkaVersion(_))
        ));
        for bad in ["3.3-IV2", "3.2", "four", "4.3-IVx", "4.3-IV9", "4.4-IV0"] {
            assert!(
                resolve_version(&spec("4.3.1", Some(bad)), &images, None).is_err(),
                "{bad} accepted"
            );
        }
        assert!(resolve_version(&spec("4.3.1", Some("3.3-IV3")), &images, None).is_ok());
        // A metadata version newer than the Kafka version runs, asked for or already in use.
        let error = resolve_version(&spec("4.2.0", Some("4.3-IV0")), &images, None).unwrap_err();
        assert!(error.to_string().contains("4.2-IV1 at most"), "{error}");
        let error = resolve_version(&spec("4.2.0", None), &images, Some("4.3-IV0")).unwrap_err();
        assert!(error.to_string().contains("cannot be lowered"), "{error}");
        assert!(resolve_version(&spec("4.3.1", None), &images, Some("4.2-IV1")).is_ok());
    }

    #[test]
    fn metadata_versions_map_to_kafkas_feature_levels() {
        assert_eq!(metadata_feature_level("3.3-IV3"), Some(7));
        assert_eq!(metadata_feature_level("4.2-IV1"), Some(29));
        assert_eq!(metadata_feature_level("4.2"), Some(29));
        assert_eq!(metadata_feature_level("4.3"), Some(30));
        assert_eq!(metadata_feature_level("4.4-IV0"), None);
        assert_eq!(metadata_version_name(30), Some("4.3-IV0"));
        for supported in SUPPORTED_VERSIONS {
            assert!(metadata_feature_level(supported.metadata_version).is_some());
        }
    }
}
