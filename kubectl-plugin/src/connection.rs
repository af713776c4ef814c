//! The user's connection to the cluster: their kubeconfig (or in-cluster configuration), their
//! credentials, and a namespace; every request's failure becomes a [`PluginError`] naming the
//! verb and resource.

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::NamespaceResourceScope;
use kube::{Client, Config, Resource};
use serde::de::DeserializeOwned;
use strimzi_api::labels;
use strimzi_api::pod_set::StrimziPodSet;

use crate::error::PluginError;

/// Where to connect, as `kubectl` is told.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// `--kubeconfig`; else `KUBECONFIG`, else `~/.kube/config`, else the in-cluster
    /// configuration.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`; else the kubeconfig's current context.
    pub context: Option<String>,
    /// `--namespace`; else the context's namespace, else `default`.
    pub namespace: Option<String>,
}

/// A client with the user's credentials and the namespace commands work in.
#[derive(Clone)]
pub struct Cluster {
    /// The client.
    pub client: Client,
    /// The namespace.
    pub namespace: String,
}

/// The name RBAC gives `K`'s resource: its plural, with its API group for other groups than
/// the core one (`kafkas.kafka.strimzi.io`, `pods`).
pub fn resource_name<K: Resource<DynamicType = ()>>() -> String {
    let group = K::group(&());
    let plural = K::plural(&());
    if group.is_empty() {
        plural.into_owned()
    } else {
        format!("{plural}.{group}")
    }
}

/// `kind.group/name`, as kubectl names an object in what it prints
/// (`kafka.kafka.strimzi.io/my-cluster`, `pod/my-cluster-broker-0`).
pub fn qualified<K: Resource<DynamicType = ()>>(name: &str) -> String {
    let group = K::group(&());
    let kind = K::kind(&()).to_lowercase();
    if group.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}.{group}/{name}")
    }
}

/// The label selector of every object of Kafka `kafka` (`strimzi.io/cluster=<kafka>`):
/// its node pools, topics, users, rebalances and the objects the operator made for it.
pub fn cluster_selector(kafka: &str) -> String {
    format!("{}={kafka}", labels::CLUSTER)
}

/// The label selector of the Kafka nodes of Kafka `kafka` and their StrimziPodSets
/// (`strimzi.io/cluster=<kafka>,strimzi.io/kind=Kafka`).
pub fn kafka_nodes_selector(kafka: &str) -> String {
    format!("{}={kafka},{}=Kafka", labels::CLUSTER, labels::KIND)
}

impl Cluster {
    /// Connects as `target` says.
    pub async fn connect(target: &Target) -> Result<Self, PluginError> {
        let options = KubeConfigOptions {
            context: target.context.clone(),
            ..KubeConfigOptions::default()
        };
        let unusable = |error: &dyn std::fmt::Display| PluginError::NoKubeconfig(error.to_string());
        let config = match &target.kubeconfig {
            Some(path) => {
                let kubeconfig = Kubeconfig::read_from(path).map_err(|error| {
                    PluginError::NoKubeconfig(format!("{}: {error}", path.display()))
                })?;
                Config::from_custom_kubeconfig(kubeconfig, &options)
                    .await
                    .map_err(|error| unusable(&error))?
            }
            None if target.context.is_some() => Config::from_kubeconfig(&options)
                .await
                .map_err(|error| unusable(&error))?,
            None => Config::infer().await.map_err(|error| unusable(&error))?,
        };
        let namespace = target
            .namespace
            .clone()
            .unwrap_or_else(|| config.default_namespace.clone());
        let client = Client::try_from(config).map_err(|error| unusable(&error))?;
        Ok(Self { client, namespace })
    }

    /// The API of namespaced `K` in the command's namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// `K` `name`; [`PluginError::NotFound`] when it does not exist.
    pub async fn get<K>(&self, name: &str) -> Result<K, PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + DeserializeOwned
            + Clone
            + std::fmt::Debug,
    {
        self.get_opt(name)
            .await?
            .ok_or_else(|| PluginError::NotFound {
                kind: K::kind(&()).into_owned(),
                name: name.to_owned(),
                namespace: self.namespace.clone(),
            })
    }

    /// `K` `name`, if it exists.
    pub async fn get_opt<K>(&self, name: &str) -> Result<Option<K>, PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + DeserializeOwned
            + Clone
            + std::fmt::Debug,
    {
        self.api::<K>()
            .get_opt(name)
            .await
            .map_err(|source| self.failed::<K>("get", source))
    }

    /// Every `K` whose labels match `selector` (empty: all), by name.
    pub async fn list<K>(&self, selector: &str) -> Result<Vec<K>, PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + DeserializeOwned
            + Clone
            + std::fmt::Debug,
    {
        let params = ListParams::default().labels(selector);
        self.api::<K>()
            .list(&params)
            .await
            .map(|list| list.items)
            .map_err(|source| self.failed::<K>("list", source))
    }

    /// The pods of the Kafka nodes of Kafka `kafka`, by name.
    pub async fn kafka_pods(&self, kafka: &str) -> Result<Vec<Pod>, PluginError> {
        self.list(&kafka_nodes_selector(kafka)).await
    }

    /// The StrimziPodSets of the node pools of Kafka `kafka`, by name.
    pub async fn kafka_pod_sets(&self, kafka: &str) -> Result<Vec<StrimziPodSet>, PluginError> {
        self.list(&kafka_nodes_selector(kafka)).await
    }

    /// Sets (`Some`) or removes (`None`) annotations of `K` `name` with a merge patch.
    pub async fn annotate<K>(
        &self,
        name: &str,
        annotations: &BTreeMap<String, Option<String>>,
    ) -> Result<(), PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + DeserializeOwned
            + Clone
            + std::fmt::Debug,
    {
        let patch = serde_json::json!({"metadata": {"annotations": annotations}});
        match self
            .api::<K>()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(response)) if response.code == 404 => Err(PluginError::NotFound {
                kind: K::kind(&()).into_owned(),
                name: name.to_owned(),
                namespace: self.namespace.clone(),
            }),
            Err(source) => Err(self.failed::<K>("patch", source)),
        }
    }

    /// The error of `verb` on `K` in the command's namespace.
    pub fn failed<K: Resource<DynamicType = ()>>(
        &self,
        verb: &'static str,
        source: kube::Error,
    ) -> PluginError {
        PluginError::from_api(verb, &resource_name::<K>(), Some(&self.namespace), source)
    }
}
