//! Removing users: when a KafkaUser is deleted, its ACL bindings, quotas, SCRAM credential
//! and Secret go at once; and periodically, a sweep removes what Kafka has for user names no
//! KafkaUser asks for, with Strimzi's rules:
//!
//! - every Kafka user name with an ACL binding, a quota or a SCRAM credential is looked at,
//!   `CN=<name>` standing for the KafkaUser `<name>`;
//! - names matching `STRIMZI_IGNORED_USERS_PATTERN` (matched against the name as Kafka has
//!   it, with `CN=`) are left alone;
//! - a name is kept when a KafkaUser of that name exists in a watched namespace and matches
//!   `STRIMZI_LABELS`; otherwise everything Kafka has for it is removed;
//! - Secrets labelled `strimzi.io/kind=KafkaUser` whose KafkaUser is gone are deleted.
//!
//! Nothing runs before the KafkaUser and Secret caches are filled and the Kafka caches are
//! loaded (an empty cache would look like "no users"), nor on a replica that is not leading.

use std::collections::BTreeSet;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams};
use kube::core::{DeserializeGuard, PartialObjectMeta};
use kube::runtime::reflector::Store;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use strimzi_api::user::KafkaUser;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::cache::{CacheScope, Filled, log_watch_failures};
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_operator_common::scoped_cache::ScopedCache;
use tokio::sync::mpsc;

use crate::config::UserOperatorConfig;
use crate::error::UserError;
use crate::kafka::UserKafka;
use crate::model;

/// A deleted KafkaUser: namespace, name and uid.
type Deleted = (String, String, String);

/// Removes what deleted and unknown users left in Kafka and Kubernetes.
#[derive(Clone)]
pub struct Cleanup {
    runtime: OperatorRuntime,
    config: Arc<UserOperatorConfig>,
    kafka: UserKafka,
    users: Vec<(Store<DeserializeGuard<KafkaUser>>, Filled)>,
    secrets: ScopedCache<Secret>,
}

/// What one sweep removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Swept {
    /// Kafka user names whose ACL bindings, quotas and credentials were removed.
    pub kafka_names: Vec<String>,
    /// Secrets deleted, `namespace/name`.
    pub secrets: Vec<String>,
}

impl Cleanup {
    /// A cleanup that knows the KafkaUsers from `users` (one cache per watched scope) and
    /// their Secrets from `secrets`.
    pub fn new(
        runtime: OperatorRuntime,
        config: Arc<UserOperatorConfig>,
        kafka: UserKafka,
        users: Vec<(Store<DeserializeGuard<KafkaUser>>, Filled)>,
        secrets: ScopedCache<Secret>,
    ) -> Self {
        Self {
            runtime,
            config,
            kafka,
            users,
            secrets,
        }
    }

    /// Until shutdown: removes deleted users as their deletions are seen, sweeps every full
    /// reconciliation interval, and refreshes the Kafka caches every cache refresh interval.
    pub async fn run(self, scopes: Vec<CacheScope>) {
        let shutdown = self.runtime.shutdown_token();
        let (sender, deleted) = mpsc::channel::<Deleted>(1024);
        let watches = futures::future::join_all(
            scopes
                .into_iter()
                .map(|scope| watch_deletions(self.runtime.clone(), scope, sender.clone())),
        );
        // Deleted users are removed as many at once as users are reconciled, so that their
        // Kafka requests share batches.
        let removals = futures::stream::unfold(deleted, |mut deleted| async move {
            deleted.recv().await.map(|user| (user, deleted))
        })
        .for_each_concurrent(self.config.concurrency, |(namespace, name, uid)| {
            let cleanup = &self;
            async move {
                if let Err(error) = cleanup.remove_deleted(&namespace, &name, &uid).await {
                    tracing::warn!(namespace, name, %error, "removing a deleted KafkaUser; the next sweep retries");
                }
            }
        });
        let refreshes = every(self.config.cache_refresh_interval, || async {
            if let Err(error) = self.kafka.refresh().await {
                tracing::warn!(%error, "refreshing the ACL, quota and SCRAM caches");
            }
        });
        let sweeps = every(
            self.runtime.config().full_reconciliation_interval,
            || async {
                match self.sweep().await {
                    Ok(swept) if swept != Swept::default() => {
                        tracing::info!(?swept, "removed users without a KafkaUser");
                    }
                    Ok(_) => {}
                    Err(error) => tracing::warn!(%error, "sweeping users without a KafkaUser"),
                }
            },
        );
        tokio::select! {
            () = shutdown.cancelled() => {}
            _ = watches => {}
            () = removals => {}
            () = refreshes => {}
            () = sweeps => {}
        }
    }

    /// Whether a KafkaUser named `name` exists in `namespace`, or in any watched namespace,
    /// other than the one with uid `deleted` (which the cache may not have dropped yet).
    fn user_exists(&self, namespace: Option<&str>, name: &str, deleted: Option<&str>) -> bool {
        self.users.iter().any(|(store, _)| {
            store
                .find(|user| {
                    let meta = user.meta();
                    user.name_any() == name
                        && namespace
                            .is_none_or(|namespace| meta.namespace.as_deref() == Some(namespace))
                        && deleted.is_none_or(|uid| meta.uid.as_deref() != Some(uid))
                })
                .is_some()
        })
    }

    async fn ready(&self) -> Result<bool, UserError> {
        if !self.runtime.leadership().is_leading() {
            return Ok(false);
        }
        for (_, filled) in &self.users {
            if !filled.clone().await {
                return Ok(false);
            }
        }
        if !self.secrets.filled().await {
            return Ok(false);
        }
        self.kafka.ensure_loaded().await?;
        Ok(true)
    }

    /// Removes what the deleted KafkaUser `namespace/name` (with `uid`) had, unless another
    /// KafkaUser of that name exists.
    pub async fn remove_deleted(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
    ) -> Result<(), UserError> {
        if !self.ready().await? {
            return Ok(());
        }
        let _guard = self.kafka.lock_user(name).await;
        if !self.user_exists(None, name, Some(uid)) {
            for kafka_name in [model::tls_user_name(name), name.to_owned()] {
                self.kafka.remove_all(&kafka_name).await?;
            }
            tracing::info!(
                namespace,
                name,
                "removed the ACLs, quotas and credentials of a deleted KafkaUser"
            );
        }
        let secret_name = format!("{}{name}", self.config.secret_prefix);
        if !self.user_exists(Some(namespace), name, Some(uid))
            && self.secrets.get(namespace, &secret_name).await.is_some()
        {
            self.delete_secret(namespace, &secret_name).await?;
        }
        Ok(())
    }

    /// One sweep: removes everything Kafka has for user names without a KafkaUser (except
    /// ignored ones) and deletes our Secrets whose KafkaUser is gone.
    pub async fn sweep(&self) -> Result<Swept, UserError> {
        let mut swept = Swept::default();
        if !self.ready().await? {
            return Ok(swept);
        }
        let candidates: Vec<String> = self
            .kafka
            .kafka_names()
            .into_iter()
            .filter(|kafka_name| !self.config.is_ignored(kafka_name))
            .filter(|kafka_name| {
                !self.user_exists(None, &model::decode_user_name(kafka_name), None)
            })
            .collect();
        let removed: Vec<(String, Result<bool, UserError>)> = futures::stream::iter(candidates)
            .map(|kafka_name| async move {
                let name = model::decode_user_name(&kafka_name);
                let _guard = self.kafka.lock_user(&name).await;
                // Checked again under the lock: the user may have been created meanwhile.
                let result = if self.user_exists(None, &name, None) {
                    Ok(false)
                } else {
                    self.kafka.remove_all(&kafka_name).await.map(|()| true)
                };
                (kafka_name, result)
            })
            .buffer_unordered(self.config.concurrency)
            .collect()
            .await;
        let mut failures = Vec::new();
        for (kafka_name, result) in removed {
            match result {
                Ok(true) => swept.kafka_names.push(kafka_name),
                Ok(false) => {}
                Err(error) => failures.push(error),
            }
        }
        let orphans: BTreeSet<(String, String)> = self
            .secrets
            .all()
            .iter()
            .filter_map(|secret| {
                let namespace = secret.namespace()?;
                let name = secret.name_any();
                let user = model::user_of_secret(&name, &self.config.secret_prefix)?;
                (!self.user_exists(Some(&namespace), user, None)).then(|| (namespace, name.clone()))
            })
            .collect();
        let deleted: Vec<(String, String, Result<(), UserError>)> = futures::stream::iter(orphans)
            .map(|(namespace, name)| async move {
                let result = self.delete_secret(&namespace, &name).await;
                (namespace, name, result)
            })
            .buffer_unordered(self.config.concurrency)
            .collect()
            .await;
        for (namespace, name, result) in deleted {
            match result {
                Ok(()) => swept.secrets.push(format!("{namespace}/{name}")),
                Err(error) => failures.push(error),
            }
        }
        if failures.is_empty() {
            Ok(swept)
        } else {
            Err(UserError::Several(failures))
        }
    }

    async fn delete_secret(&self, namespace: &str, name: &str) -> Result<(), UserError> {
        delete_user_secret(&self.runtime, namespace, name).await?;
        tracing::info!(namespace, name, "deleted the Secret of a deleted KafkaUser");
        Ok(())
    }
}

/// Deletes the user Secret `namespace/name`, which the caller knows to be one of ours; one
/// that is already gone counts as deleted.
pub(crate) async fn delete_user_secret(
    runtime: &OperatorRuntime,
    namespace: &str,
    name: &str,
) -> Result<(), UserError> {
    let api: Api<Secret> = Api::namespaced(runtime.client().clone(), namespace);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {
            runtime.metrics().count_write("Secret", "delete");
            Ok(())
        }
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(UserError::kubernetes(
            "deleting a user's Secret",
            ApiCallError::of::<Secret>("delete", namespace, name, error),
        )),
    }
}

/// Runs `work` every `period`, the first time one period from now; never returns.
async fn every<F, Fut>(period: std::time::Duration, work: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        work().await;
    }
}

/// Watches the KafkaUsers of `scope` as metadata only and sends each deletion; runs until the
/// receiver is gone. Deletions missed while the watch was down are found by the next sweep.
async fn watch_deletions(
    runtime: OperatorRuntime,
    scope: CacheScope,
    sender: mpsc::Sender<Deleted>,
) {
    let api: Api<PartialObjectMeta<KafkaUser>> = runtime.api(scope.namespace.as_deref());
    let mut events = log_watch_failures::<KafkaUser, _, _>(
        watcher(api, scope.watcher_config()).default_backoff(),
        &scope,
    )
    .boxed();
    while let Some(event) = events.next().await {
        if let Ok(watcher::Event::Delete(user)) = event {
            let deleted = (
                user.namespace().unwrap_or_default(),
                user.name_any(),
                user.uid().unwrap_or_default(),
            );
            if sender.send(deleted).await.is_err() {
                return;
            }
        }
    }
}
