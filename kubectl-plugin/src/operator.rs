//! The cluster operator's Deployment: where it runs and the settings its environment gives it.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use strimzi_cluster_operator::config::ClusterOperatorConfig;

use crate::connection::{Cluster, resource_name};
use crate::error::PluginError;
use crate::options::OperatorLocation;

/// The cluster operator's Deployment as `location` says, looked for in its namespace, else in
/// the Kafka's (`cluster`'s) namespace, else in every namespace the user may list.
pub async fn find(
    cluster: &Cluster,
    location: &OperatorLocation,
) -> Result<Deployment, PluginError> {
    let name = &location.operator_deployment;
    let namespaces: Vec<&str> = match &location.operator_namespace {
        Some(namespace) => vec![namespace.as_str()],
        None => vec![cluster.namespace.as_str()],
    };
    for namespace in &namespaces {
        let api: Api<Deployment> = Api::namespaced(cluster.client.clone(), namespace);
        match api.get_opt(name).await {
            Ok(Some(deployment)) => return Ok(deployment),
            Ok(None) => {}
            Err(source) => {
                return Err(PluginError::from_api(
                    "get",
                    &resource_name::<Deployment>(),
                    Some(namespace),
                    source,
                ));
            }
        }
    }
    if location.operator_namespace.is_none() {
        let api: Api<Deployment> = Api::all(cluster.client.clone());
        let params = ListParams::default().fields(&format!("metadata.name={name}"));
        if let Ok(found) = api.list(&params).await
            && let Some(deployment) = found.items.into_iter().next()
        {
            return Ok(deployment);
        }
    }
    Err(PluginError::Input(format!(
        "no cluster operator Deployment {name} found in namespace {}{}: pass --operator-namespace (and --operator-deployment)",
        namespaces.join(", "),
        if location.operator_namespace.is_none() {
            " nor in any namespace listed"
        } else {
            ""
        }
    )))
}

/// The environment of the operator container of `deployment`: literal values, and
/// `fieldRef`s to the pod's namespace (the Deployment's); other references are left out.
pub fn environment(deployment: &Deployment) -> BTreeMap<String, String> {
    let namespace = deployment.namespace().unwrap_or_default();
    let containers = deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.template.spec.as_ref())
        .map(|spec| spec.containers.as_slice())
        .unwrap_or_default();
    containers
        .first()
        .and_then(|container| container.env.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|variable| {
            let value = match (&variable.value, &variable.value_from) {
                (Some(value), _) => value.clone(),
                (None, Some(from)) => {
                    let field = from.field_ref.as_ref()?;
                    (field.field_path == "metadata.namespace").then(|| namespace.clone())?
                }
                (None, None) => String::new(),
            };
            Some((variable.name.clone(), value))
        })
        .collect()
}

/// The operator's configuration from its Deployment's environment, as the operator reads it
/// when it starts.
pub fn configuration(deployment: &Deployment) -> Result<ClusterOperatorConfig, PluginError> {
    let variables = environment(deployment);
    ClusterOperatorConfig::from_lookup(|name| variables.get(name).cloned()).map_err(|error| {
        PluginError::Input(format!(
            "the cluster operator Deployment {} has a configuration it cannot start with: {error}",
            deployment.name_any()
        ))
    })
}
