//! The one error shape of the plugin: each says, in one line, what the user can do about it.

/// Why a command could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// No Kubernetes configuration was found, or it could not be read.
    #[error(
        "no usable Kubernetes configuration ({0}): pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config"
    )]
    NoKubeconfig(String),
    /// The user's credentials do not allow a request.
    #[error(
        "not allowed to {verb} {resource} in {scope}: ask for RBAC permission to {verb} {resource}"
    )]
    Forbidden {
        /// The verb (`get`, `list`, `patch`, ...).
        verb: &'static str,
        /// The resource, as RBAC names it (`kafkas.kafka.strimzi.io`, `secrets`, ...).
        resource: String,
        /// `namespace <ns>` or `the cluster`.
        scope: String,
    },
    /// A custom resource definition the command needs is not installed.
    #[error(
        "the CustomResourceDefinition {crd} is not installed in this cluster: install Strimzi's CRDs (or this operator) first"
    )]
    CrdMissing {
        /// The CRD's name (`kafkas.kafka.strimzi.io`).
        crd: String,
    },
    /// A named object does not exist.
    #[error("{kind} {name} not found in namespace {namespace}")]
    NotFound {
        /// Its kind.
        kind: String,
        /// Its name.
        name: String,
        /// The namespace looked in.
        namespace: String,
    },
    /// A request to the API server failed otherwise.
    #[error("{verb} {resource}: {source}")]
    Api {
        /// The verb.
        verb: &'static str,
        /// The resource.
        resource: String,
        /// What failed.
        #[source]
        source: kube::Error,
    },
    /// The command's arguments or input file are not usable.
    #[error("{0}")]
    Input(String),
    /// Reading or writing a local file failed.
    #[error("{what}: {source}")]
    File {
        /// Which file, and what was done with it.
        what: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
}

impl PluginError {
    /// The error of `verb` on `resource` (RBAC's plural name, with its group for custom
    /// resources) in `namespace` (`None`: cluster-wide), from the API server's answer: a 403
    /// names the missing permission, a 404 of a custom resource type names its CRD.
    pub fn from_api(
        verb: &'static str,
        resource: &str,
        namespace: Option<&str>,
        source: kube::Error,
    ) -> Self {
        let scope = namespace.map_or_else(
            || "the cluster".to_owned(),
            |namespace| format!("namespace {namespace}"),
        );
        match &source {
            kube::Error::Api(response) if response.code == 403 => Self::Forbidden {
                verb,
                resource: resource.to_owned(),
                scope,
            },
            kube::Error::Api(response)
                if response.code == 404
                    && resource.contains('.')
                    && !response.message.contains(" not found") =>
            {
                Self::CrdMissing {
                    crd: resource.to_owned(),
                }
            }
            _ => Self::Api {
                verb,
                resource: resource.to_owned(),
                source,
            },
        }
    }

    /// The exit status of the binary for this error: 2 for what the user must change in the
    /// command or its input, 3 for missing permissions, 1 for anything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Input(_) | Self::NotFound { .. } | Self::NoKubeconfig(_) => 2,
            Self::Forbidden { .. } => 3,
            Self::CrdMissing { .. } | Self::Api { .. } | Self::File { .. } => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, "")
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn a_refusal_names_the_verb_and_resource_a_missing_type_its_crd() {
        let forbidden = PluginError::from_api("list", "pods", Some("kafka"), answered(403, "no"));
        assert_eq!(
            forbidden.to_string(),
            "not allowed to list pods in namespace kafka: ask for RBAC permission to list pods"
        );
        assert_eq!(forbidden.exit_code(), 3);
        let missing_type = PluginError::from_api(
            "get",
            "kafkas.kafka.strimzi.io",
            Some("kafka"),
            answered(404, "the server could not find the requested resource"),
        );
        assert!(
            matches!(&missing_type, PluginError::CrdMissing { crd } if crd == "kafkas.kafka.strimzi.io"),
            "{missing_type}"
        );
        let missing_object = PluginError::from_api(
            "get",
            "kafkas.kafka.strimzi.io",
            Some("kafka"),
            answered(404, "kafkas.kafka.strimzi.io \"my-cluster\" not found"),
        );
        assert!(
            matches!(&missing_object, PluginError::Api { source: kube::Error::Api(status), .. } if status.code == 404),
            "{missing_object}"
        );
        let cluster_wide =
            PluginError::from_api("list", "deployments.apps", None, answered(403, ""));
        assert!(
            cluster_wide.to_string().contains("in the cluster"),
            "{cluster_wide}"
        );
    }
}
