//! The user operator: keeps Kafka users (SCRAM credentials, ACL bindings, quotas) and their
//! Secrets (certificates from the clients CA, passwords) in line with KafkaUser resources,
//! as Strimzi's User Operator does.
//!
//! - [`config`]: Strimzi's environment variables and defaults.
//! - [`connection`]: the admin client's connection from those variables and Secrets.
//! - [`model`]: pure logic: names, ACL bindings, quotas, changes, the user's Secret.
//! - [`credentials`]: user certificates and passwords.
//! - [`kafka`]: the caches of what Kafka has and the batched writes.
//! - [`reconciler`]: the KafkaUser reconciler on `operator-common`'s controller.
//! - [`cleanup`]: removing deleted users and users without a KafkaUser.
//!
//! KafkaUsers have no finalizer, as with Strimzi: a deletion is acted on when the watch
//! reports it, and one missed while the operator was down is found by the periodic sweep.

pub mod cleanup;
pub mod config;
pub mod connection;
pub mod credentials;
pub mod error;
pub mod kafka;
pub mod model;
pub mod reconciler;

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use kube::core::DeserializeGuard;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use strimzi_api::user::KafkaUser;
use strimzi_operator_common::cache::CacheScope;
use strimzi_operator_common::config::WatchedNamespaces;
use strimzi_operator_common::kafka::KafkaAdmin;
use strimzi_operator_common::labels::selector_string;
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_operator_common::scoped_cache::ScopedCache;
use tokio::sync::watch;

use crate::cleanup::Cleanup;
use crate::config::UserOperatorConfig;
use crate::kafka::{UserKafka, request_counts};
use crate::reconciler::{CaSecrets, UserReconciler};

/// The operator's name: field manager and Event reporter.
pub const NAME: &str = model::OPERATOR_NAME;
/// The operator's log4j2 file, where the entity operator's pod mounts its logging ConfigMap
/// (from `spec.entityOperator.userOperator.logging`): its levels apply without a restart.
pub const LOGGING_FILE: &str = "/opt/user-operator/custom-config/log4j2.properties";

pub use strimzi_operator_common::controller::{ControllerBuilder, StartError};

/// The user operator on `runtime`, talking to Kafka through `admin`: its Kafka view (whose
/// request counts it exposes), and the future that runs the controller, the clients CA
/// watches and the cleanup. Run the future with [`OperatorRuntime::run`].
pub fn controller(
    runtime: &OperatorRuntime,
    config: Arc<UserOperatorConfig>,
    admin: Arc<dyn KafkaAdmin>,
) -> Result<(UserKafka, BoxFuture<'static, ()>), StartError> {
    let requests = request_counts(runtime.metrics())?;
    let kafka = UserKafka::new(
        admin,
        config.batching,
        requests,
        config.acls_admin_api_supported,
    );
    let scopes: Vec<CacheScope> = match &runtime.config().namespaces {
        WatchedNamespaces::All => vec![None],
        WatchedNamespaces::List(namespaces) => namespaces.iter().cloned().map(Some).collect(),
    }
    .into_iter()
    .map(|namespace| CacheScope {
        namespace,
        selector: runtime.config().selector_string(),
    })
    .collect();

    // The KafkaUsers, from the cache the controller watches through.
    let mut users = Vec::new();
    for scope in &scopes {
        let api: Api<DeserializeGuard<KafkaUser>> = runtime.api(scope.namespace.as_deref());
        let watch = scope.watcher_config();
        let subscription = runtime
            .caches()
            .subscribe::<DeserializeGuard<KafkaUser>>(scope, move || watcher(api, watch).boxed())?;
        users.push((subscription.store, subscription.filled));
    }

    let (ca_changed, _) = watch::channel(0_u64);
    let (cert, watch_cert) = watch_ca_secret(runtime, &config, &config.ca.cert_secret, &ca_changed);
    let (key, watch_key) = watch_ca_secret(runtime, &config, &config.ca.key_secret, &ca_changed);

    let secrets: ScopedCache<Secret> = ScopedCache::new(runtime.applier().field_manager());
    let reconciler = UserReconciler::new(
        runtime.clone(),
        config.clone(),
        kafka.clone(),
        secrets.clone(),
        CaSecrets::new(cert, key),
        users.iter().map(|(store, _)| store.clone()).collect(),
    );
    let mut secret_selector = runtime.config().custom_resource_selector.clone();
    secret_selector.insert(strimzi_api::labels::KIND.to_owned(), model::KIND.to_owned());
    let secret_selector = selector_string(&secret_selector);
    let prefix = config.secret_prefix.clone();
    let cached_secrets = secrets.clone();
    let controller = ControllerBuilder::new(runtime, reconciler)
        .concurrency(u16::try_from(config.concurrency).unwrap_or(u16::MAX))
        .wire(move |controller, scope, runtime| {
            let api: Api<Secret> = runtime.api(scope.namespace.as_deref());
            let stream = cached_secrets.watch(api, scope.namespace.clone(), &secret_selector);
            let prefix = prefix.clone();
            let changes = ca_changed.subscribe();
            let ca_renewed = futures::stream::unfold(changes, |mut changes| async move {
                changes.changed().await.ok()?;
                Some(((), changes))
            });
            controller
                .watches_stream(stream, move |secret: Secret| {
                    let namespace = secret.namespace().unwrap_or_default();
                    let name = secret.name_any();
                    model::user_of_secret(&name, &prefix)
                        .map(|user| ObjectRef::new(user).within(&namespace))
                })
                .reconcile_all_on(ca_renewed)
        })
        .build()?;
    let cleanup = Cleanup::new(runtime.clone(), config, kafka.clone(), users, secrets);
    let all = futures::future::join4(controller, watch_cert, watch_key, cleanup.run(scopes))
        .map(|_| ())
        .boxed();
    Ok((kafka, all))
}

/// A cache of the CA Secret `name` and the future that fills it, which bumps `changed`
/// whenever the Secret changes after the first list.
fn watch_ca_secret(
    runtime: &OperatorRuntime,
    config: &UserOperatorConfig,
    name: &str,
    changed: &watch::Sender<u64>,
) -> (Store<Secret>, BoxFuture<'static, ()>) {
    let (store, writer) = reflector::store();
    let api: Api<Secret> = Api::namespaced(runtime.client().clone(), &config.ca.namespace);
    let watch = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let changed = changed.clone();
    let shutdown = runtime.shutdown_token();
    let mut listed = false;
    let events = watcher(api, watch)
        .default_backoff()
        .reflect(writer)
        .for_each(move |event| {
            match event {
                Ok(watcher::Event::InitDone) => listed = true,
                Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_)) if listed => {
                    changed.send_modify(|count| *count += 1);
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "watching the clients CA"),
            }
            futures::future::ready(())
        });
    let run = async move {
        tokio::select! {
            () = events => {}
            () = shutdown.cancelled() => {}
        }
    }
    .boxed();
    (store, run)
}
