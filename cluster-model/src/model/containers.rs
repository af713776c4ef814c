//! Pieces of containers, volumes and pod specs that every builder shares (the Kafka nodes, the
//! components, Connect, the bridge): literal variables, mounts, `emptyDir` volumes, the
//! template's variables and mounts, and the pod spec fields `template.pod` decides.

use k8s_openapi::api::core::v1::{
    ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource, PodSpec, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use strimzi_api::common::ContainerTemplate;

/// The parts of a pod's spec its `template.pod` decides (affinity, tolerations, grace period,
/// security context, scheduling and DNS options), with Kubernetes' defaults where the
/// template is silent; the caller adds its containers, volumes and identity.
pub(crate) fn templated_pod_spec(pod: Option<&strimzi_api::common::PodTemplate>) -> PodSpec {
    PodSpec {
        affinity: pod.and_then(|pod| pod.affinity.clone()),
        tolerations: pod.and_then(|pod| pod.tolerations.clone()),
        topology_spread_constraints: pod.and_then(|pod| pod.topology_spread_constraints.clone()),
        termination_grace_period_seconds: Some(
            pod.and_then(|pod| pod.termination_grace_period_seconds)
                .map_or(30, i64::from),
        ),
        security_context: pod.and_then(|pod| pod.security_context.clone()),
        priority_class_name: pod.and_then(|pod| pod.priority_class_name.clone()),
        scheduler_name: Some(
            pod.and_then(|pod| pod.scheduler_name.clone())
                .unwrap_or_else(|| "default-scheduler".to_owned()),
        ),
        host_aliases: pod.and_then(|pod| pod.host_aliases.clone()),
        dns_policy: pod
            .and_then(|pod| pod.dns_policy)
            .and_then(|policy| convert(&policy)),
        dns_config: pod.and_then(|pod| pod.dns_config.clone()),
        enable_service_links: pod.and_then(|pod| pod.enable_service_links),
        host_users: pod.and_then(|pod| pod.host_users),
        ..PodSpec::default()
    }
}

/// A TCP container port.
pub(crate) fn container_port(name: &str, port: i32) -> ContainerPort {
    ContainerPort {
        name: Some(name.to_owned()),
        container_port: port,
        protocol: Some("TCP".to_owned()),
        ..ContainerPort::default()
    }
}

/// An environment variable with a literal value.
pub(crate) fn env(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: Some(value.into()),
        value_from: None,
    }
}

/// A volume mount.
pub(crate) fn mount(name: &str, path: &str) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        ..VolumeMount::default()
    }
}

/// An `emptyDir` volume.
pub(crate) fn empty_dir(name: &str, size_limit: Option<String>, medium: Option<&str>) -> Volume {
    Volume {
        name: name.to_owned(),
        empty_dir: Some(EmptyDirVolumeSource {
            medium: medium.map(str::to_owned),
            size_limit: size_limit.map(Quantity),
        }),
        ..Volume::default()
    }
}

/// The template's extra volumes (`template.pod.volumes`), as Kubernetes volumes.
pub(crate) fn template_volumes(
    pod: Option<&strimzi_api::common::PodTemplate>,
) -> impl Iterator<Item = Volume> + '_ {
    pod.and_then(|pod| pod.volumes.as_ref())
        .into_iter()
        .flatten()
        .filter_map(convert::<_, Volume>)
}

/// Converts between two types that share a JSON shape (template types to Kubernetes types).
pub(crate) fn convert<T: serde::Serialize, U: serde::de::DeserializeOwned>(value: &T) -> Option<U> {
    serde_json::to_value(value)
        .ok()
        .and_then(|value| serde_json::from_value(value).ok())
}

/// Completes a container's variables as Strimzi does: the operator's shared variables
/// ([`crate::model::ModelConfig::shared_env`]), then the template's whose names are not
/// taken yet (so a template cannot replace a shared one).
pub(crate) fn add_shared_and_template_env(
    vars: &mut Vec<EnvVar>,
    shared: &[EnvVar],
    template: Option<&ContainerTemplate>,
) {
    vars.extend(shared.iter().cloned());
    add_template_env(vars, template);
}

/// Appends the template's environment variables whose names are not taken yet.
fn add_template_env(vars: &mut Vec<EnvVar>, template: Option<&ContainerTemplate>) {
    for var in template.and_then(|t| t.env.as_ref()).into_iter().flatten() {
        let Some(name) = var.name.clone() else {
            continue;
        };
        if vars.iter().any(|existing| existing.name == name) {
            continue;
        }
        if let Some(value) = &var.value {
            vars.push(env(&name, value.clone()));
        } else if let Some(source) = &var.value_from {
            vars.push(EnvVar {
                name,
                value: None,
                value_from: Some(EnvVarSource {
                    secret_key_ref: source.secret_key_ref.clone(),
                    config_map_key_ref: source.config_map_key_ref.clone(),
                    ..EnvVarSource::default()
                }),
            });
        }
    }
}

/// The template's extra volume mounts.
pub(crate) fn template_mounts(template: Option<&ContainerTemplate>) -> Vec<VolumeMount> {
    template
        .and_then(|t| t.volume_mounts.clone())
        .unwrap_or_default()
}
