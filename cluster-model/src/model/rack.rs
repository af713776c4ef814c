//! Rack awareness through the init container, shared by the Kafka brokers and the Kafka
//! clients the operator runs (Connect, MirrorMaker 2, the Bridge).
//!
//! With a `topology-label` rack (the default type), the pod gets an init container
//! (`kafka-init`, the operator image's `/opt/strimzi/bin/kafka_init_run.sh`, that is
//! `strimzi_cluster_operator::kafka_init`) that reads the label `RACK_TOPOLOGY_KEY` of the
//! node named by `NODE_NAME` and writes it to `rack.id` in the memory-backed `rack-volume`;
//! the main container reads that file through the directory config provider. Reading the
//! node needs a cluster-scoped ClusterRoleBinding of the pods' ServiceAccount, and the pods
//! must run on nodes that have the label (a required node affinity). With an
//! `environment-variable` rack, the clients read the rack from the named variable and none of
//! this is needed.

use k8s_openapi::api::core::v1::{
    Affinity, Container, EnvVar, EnvVarSource, NodeAffinity, NodeSelector, NodeSelectorRequirement,
    NodeSelectorTerm, ObjectFieldSelector, ResourceRequirements, SecurityContext, Volume,
    VolumeMount,
};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use strimzi_api::common::{ContainerTemplate, Rack, RackType};

use crate::model::ModelConfig;
use crate::model::containers::{
    add_shared_and_template_env, empty_dir, env, mount, template_mounts,
};
use crate::model::meta::RBAC_API_GROUP;

/// Name of the init container.
pub const INIT_CONTAINER: &str = "kafka-init";
/// The volume the init container writes the rack file to.
pub const INIT_VOLUME: &str = "rack-volume";
/// The init container's command in the operator image.
pub const INIT_COMMAND: &str = "/opt/strimzi/bin/kafka_init_run.sh";
/// The ClusterRole granted to the Kafka brokers' init container.
pub const BROKER_CLUSTER_ROLE: &str = "strimzi-kafka-broker";
/// The ClusterRole granted to the init container of Connect, MirrorMaker 2 and Bridge pods.
pub const CLIENT_CLUSTER_ROLE: &str = "strimzi-kafka-client";

/// The node label naming the rack, when `rack` reads it from the node (`topology-label`,
/// the default type) and names one.
pub fn topology_key(rack: Option<&Rack>) -> Option<&str> {
    rack.filter(|rack| rack.r#type.unwrap_or(RackType::TopologyLabel) == RackType::TopologyLabel)
        .and_then(|rack| rack.topology_key.as_deref())
}

/// The value of a client's `client.rack`: the `rack.id` file the init container writes to
/// `init_folder` for a `topology-label` rack, the named variable for an
/// `environment-variable` one.
pub fn client_rack(rack: &Rack, init_folder: &str) -> Option<String> {
    match rack.r#type.unwrap_or(RackType::TopologyLabel) {
        RackType::TopologyLabel => Some(format!("${{strimzidir:{init_folder}:rack.id}}")),
        RackType::EnvironmentVariable => rack
            .env_var_name
            .as_ref()
            .map(|name| format!("${{strimzienv:{name}}}")),
    }
}

/// `affinity` with the requirement that the node carries the label `topology_key`, added to
/// every term of the required node affinity (a term of its own when there is none).
pub fn with_rack_affinity(affinity: Option<Affinity>, topology_key: &str) -> Affinity {
    let requirement = NodeSelectorRequirement {
        key: topology_key.to_owned(),
        operator: "Exists".to_owned(),
        values: None,
    };
    let mut affinity = affinity.unwrap_or_default();
    let required = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default)
        .required_during_scheduling_ignored_during_execution
        .get_or_insert_with(NodeSelector::default);
    if required.node_selector_terms.is_empty() {
        required
            .node_selector_terms
            .push(NodeSelectorTerm::default());
    }
    for term in &mut required.node_selector_terms {
        term.match_expressions
            .get_or_insert_with(Vec::new)
            .push(requirement.clone());
    }
    affinity
}

/// The memory-backed volume the rack file is written to.
pub fn init_volume() -> Volume {
    empty_dir(INIT_VOLUME, Some("1Mi".to_owned()), Some("Memory"))
}

/// The mount of [`init_volume`] at `path`.
pub fn init_mount(path: &str) -> VolumeMount {
    mount(INIT_VOLUME, path)
}

/// What makes one init container differ from another.
#[derive(Clone, Debug)]
pub struct InitContainer<'a> {
    /// The operator image that holds the init program.
    pub image: String,
    /// Its pull policy.
    pub image_pull_policy: String,
    /// Variables after `NODE_NAME` and before the shared ones (`RACK_TOPOLOGY_KEY`, ...).
    pub env: Vec<EnvVar>,
    /// The operator's shared variables ([`ModelConfig::shared_env`]), before the template's.
    pub shared_env: &'a [EnvVar],
    /// Mounts before the template's; the first holds the files written.
    pub mounts: Vec<VolumeMount>,
    /// Resources (those of the main container).
    pub resources: Option<ResourceRequirements>,
    /// The security context.
    pub security_context: Option<SecurityContext>,
    /// `template.initContainer`.
    pub template: Option<&'a ContainerTemplate>,
}

impl InitContainer<'_> {
    /// The container: `NODE_NAME` from the pod's node, then the given, the shared and the
    /// template's variables, and the given and the template's mounts.
    pub fn container(self) -> Container {
        let mut vars = vec![EnvVar {
            name: "NODE_NAME".to_owned(),
            value: None,
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    api_version: None,
                    field_path: "spec.nodeName".to_owned(),
                }),
                ..EnvVarSource::default()
            }),
        }];
        vars.extend(self.env);
        add_shared_and_template_env(&mut vars, self.shared_env, self.template);
        let mut mounts = self.mounts;
        mounts.extend(template_mounts(self.template));
        Container {
            name: INIT_CONTAINER.to_owned(),
            image: Some(self.image),
            image_pull_policy: Some(self.image_pull_policy),
            args: Some(vec![INIT_COMMAND.to_owned()]),
            env: Some(vars),
            volume_mounts: Some(mounts),
            resources: self.resources,
            security_context: self.security_context,
            ..Container::default()
        }
    }
}

/// The image of a client's (Connect, MirrorMaker 2, Bridge) rack init container and its pull
/// policy: `spec.clientRackInitImage` when set, else the operator's Kafka init image.
pub fn client_init_image(requested: Option<&String>, config: &ModelConfig) -> (String, String) {
    let image = requested
        .cloned()
        .unwrap_or_else(|| config.kafka_init_image.clone());
    (image.clone(), config.image_pull_policy(&image))
}

/// The variables of a client's (Connect, MirrorMaker 2, Bridge) init container: the node
/// label to read and, when given, the folder to write to (`INIT_FOLDER`; the Bridge's is not
/// the program's default).
pub fn rack_init_variables(topology_key: &str, init_folder_env: Option<&str>) -> Vec<EnvVar> {
    let mut vars = vec![env("RACK_TOPOLOGY_KEY", topology_key)];
    if let Some(folder) = init_folder_env {
        vars.push(env("INIT_FOLDER", folder));
    }
    vars
}

/// The cluster-scoped ClusterRoleBinding `name` granting `cluster_role` to the ServiceAccount
/// `service_account` of `namespace`. `metadata` carries the labels and annotations; being
/// cluster-scoped it has no namespace and no owner.
pub fn init_cluster_role_binding(
    metadata: ObjectMeta,
    cluster_role: &str,
    service_account: &str,
    namespace: &str,
) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: ObjectMeta {
            namespace: None,
            owner_references: None,
            ..metadata
        },
        role_ref: RoleRef {
            api_group: RBAC_API_GROUP.to_owned(),
            kind: "ClusterRole".to_owned(),
            name: cluster_role.to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: service_account.to_owned(),
            namespace: Some(namespace.to_owned()),
            ..Subject::default()
        }]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rack(kind: Option<RackType>, key: Option<&str>, var: Option<&str>) -> Rack {
        Rack {
            r#type: kind,
            topology_key: key.map(str::to_owned),
            env_var_name: var.map(str::to_owned),
        }
    }

    #[test]
    fn the_rack_comes_from_the_node_label_or_a_variable() {
        let zone = rack(None, Some("topology.kubernetes.io/zone"), None);
        assert_eq!(
            topology_key(Some(&zone)),
            Some("topology.kubernetes.io/zone")
        );
        assert_eq!(
            client_rack(&zone, "/opt/kafka/init").as_deref(),
            Some("${strimzidir:/opt/kafka/init:rack.id}")
        );
        let variable = rack(Some(RackType::EnvironmentVariable), None, Some("MY_ZONE"));
        assert_eq!(topology_key(Some(&variable)), None);
        assert_eq!(
            client_rack(&variable, "/opt/kafka/init").as_deref(),
            Some("${strimzienv:MY_ZONE}")
        );
        assert_eq!(topology_key(None), None);
    }

    #[test]
    fn the_affinity_requires_the_label_in_every_term() {
        let user = Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm::default(); 2],
                }),
                ..NodeAffinity::default()
            }),
            ..Affinity::default()
        };
        let merged = with_rack_affinity(Some(user), "zone");
        let terms = merged
            .node_affinity
            .and_then(|affinity| affinity.required_during_scheduling_ignored_during_execution)
            .map(|selector| selector.node_selector_terms)
            .unwrap_or_default();
        assert_eq!(terms.len(), 2);
        assert!(terms.iter().all(|term| {
            term.match_expressions
                .as_ref()
                .is_some_and(|expressions| expressions[0].key == "zone")
        }));
        let fresh = with_rack_affinity(None, "zone");
        assert!(fresh.node_affinity.is_some());
    }
}
