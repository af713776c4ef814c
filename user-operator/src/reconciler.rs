//! The KafkaUser reconciler: the user's Secret (certificate or password), then in Kafka its
//! ACL bindings, quotas and SCRAM credential, each changed only where it differs from the
//! caches; status `username` and `secret`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::core::DeserializeGuard;
use kube::runtime::reflector::Store;
use kube::{Resource, ResourceExt};
use strimzi_api::user::{KafkaUser, KafkaUserStatus};
use strimzi_certificate_manager::leaf::IssueReason;
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::apply::Applied;
use strimzi_operator_common::blocking::CpuPool;
use strimzi_operator_common::cache::{Filled, filled};
use strimzi_operator_common::controller::{Reconciled, Reconciler};
use strimzi_operator_common::events::Severity;
use strimzi_operator_common::ownership::{self, Claim};
use strimzi_operator_common::runtime::OperatorRuntime;
use strimzi_operator_common::scoped_cache::ScopedCache;
use time::OffsetDateTime;

use crate::cleanup::delete_user_secret;
use crate::config::UserOperatorConfig;
use crate::credentials::{self, PasswordOrigin};
use crate::error::UserError;
use crate::kafka::UserKafka;
use crate::model::{self, Credentials, DesiredUser};

/// The cached clients CA Secrets (certificate and key), each watched by name.
#[derive(Clone)]
pub struct CaSecrets {
    cert: Store<Secret>,
    key: Store<Secret>,
    /// Resolve once the caches are filled: one shared future per store, as every user of a
    /// first reconciliation waits on them at once (kube-runtime's `wait_until_ready` wakes
    /// only the last of several waiters).
    cert_filled: Filled,
    key_filled: Filled,
}

impl CaSecrets {
    /// The caches of the certificate Secret and of the key Secret.
    pub fn new(cert: Store<Secret>, key: Store<Secret>) -> Self {
        CaSecrets {
            cert_filled: filled(&cert),
            key_filled: filled(&key),
            cert,
            key,
        }
    }

    /// Both Secrets as cached, once both caches are filled.
    async fn read(&self) -> Result<(Option<Arc<Secret>>, Option<Arc<Secret>>), UserError> {
        let (cert_filled, key_filled) =
            futures::join!(self.cert_filled.clone(), self.key_filled.clone());
        if !(cert_filled && key_filled) {
            return Err(UserError::Internal(
                "the clients CA cache stopped".to_owned(),
            ));
        }
        let first = |store: &Store<Secret>| store.state().into_iter().next();
        Ok((first(&self.cert), first(&self.key)))
    }
}

/// Reconciles KafkaUsers against Kafka.
pub struct UserReconciler {
    runtime: OperatorRuntime,
    config: Arc<UserOperatorConfig>,
    kafka: UserKafka,
    secrets: ScopedCache<Secret>,
    ca: CaSecrets,
    /// Every watched KafkaUser, to find other resources of the same name.
    users: Vec<Store<DeserializeGuard<KafkaUser>>>,
}

impl UserReconciler {
    /// A reconciler writing through `runtime`, reading users' Secrets from `secrets` and the
    /// clients CA from `ca`, looking for KafkaUsers of the same name among `users`.
    pub fn new(
        runtime: OperatorRuntime,
        config: Arc<UserOperatorConfig>,
        kafka: UserKafka,
        secrets: ScopedCache<Secret>,
        ca: CaSecrets,
        users: Vec<Store<DeserializeGuard<KafkaUser>>>,
    ) -> Self {
        Self {
            runtime,
            config,
            kafka,
            secrets,
            ca,
            users,
        }
    }

    /// `Err(ResourceConflict)` when a KafkaUser of the same name in another watched namespace
    /// owns the Kafka user: the one already `Ready`, otherwise the oldest, as topic names go.
    fn check_owner(&self, resource: &KafkaUser) -> Result<(), UserError> {
        let me = ownership::key(&resource.metadata);
        let name = resource.name_any();
        let claims = ownership::rival_claims(
            &self.users,
            &me,
            |other| other.metadata.name.as_deref() == Some(name.as_str()),
            claim,
        );
        match ownership::owner(&claims) {
            Some(owner) if owner.key != me => Err(UserError::ResourceConflict(
                model::conflict_message(&name, &owner.reference()),
            )),
            _ => Ok(()),
        }
    }

    /// The Secret data of `desired` (`None` for users without a Secret), with what happened
    /// to the credential.
    async fn secret_data(
        &self,
        desired: &DesiredUser,
        existing: Option<&Arc<Secret>>,
    ) -> Result<
        Option<(
            Credential,
            std::collections::BTreeMap<String, k8s_openapi::ByteString>,
        )>,
        UserError,
    > {
        match &desired.credentials {
            Credentials::Tls {
                validity_days,
                renewal_days,
            } => {
                let (ca_cert, ca_key) = self.ca.read().await?;
                let ca = self.config.ca.clone();
                let name = desired.name.clone();
                let days = (*validity_days, *renewal_days);
                let existing = existing.cloned();
                let certificate = CpuPool::global()
                    .run(move || {
                        credentials::user_certificate(
                            &ca,
                            ca_cert.as_deref(),
                            ca_key.as_deref(),
                            &name,
                            days,
                            existing.as_deref(),
                            OffsetDateTime::now_utc(),
                        )
                    })
                    .await
                    .map_err(|error| UserError::Internal(error.to_string()))??;
                Ok(Some((
                    Credential::Certificate(certificate.reason),
                    certificate.data,
                )))
            }
            Credentials::Scram { chosen } => {
                let chosen_secret = match chosen {
                    Some((secret_name, _)) => {
                        let api: Api<Secret> =
                            Api::namespaced(self.runtime.client().clone(), &desired.namespace);
                        api.get_opt(secret_name).await.map_err(|error| {
                            UserError::kubernetes(
                                "reading the Secret with the password",
                                ApiCallError::of::<Secret>(
                                    "get",
                                    &desired.namespace,
                                    secret_name,
                                    error,
                                ),
                            )
                        })?
                    }
                    None => None,
                };
                let chosen = chosen
                    .as_ref()
                    .map(|(name, key)| (name.as_str(), chosen_secret.as_ref(), key.as_str()));
                let (password, origin) = credentials::scram_password(
                    chosen,
                    existing.map(AsRef::as_ref),
                    self.config.password_length,
                )?;
                let data = credentials::scram_data(&desired.kafka_name(), &password);
                Ok(Some((Credential::Password(password, origin), data)))
            }
            Credentials::TlsExternal | Credentials::None => Ok(None),
        }
    }

    /// Brings the ACL bindings, quotas and SCRAM credential of `desired` in line.
    async fn reconcile_kafka(
        &self,
        desired: &DesiredUser,
        password: Option<&str>,
    ) -> Result<bool, UserError> {
        let kafka = &self.kafka;
        let used = desired.kafka_name();
        let unused = desired.unused_kafka_name();
        let _guard = kafka.lock_user(&desired.name).await;
        let acls = async {
            let Some(wanted) = &desired.acls else {
                return Ok(());
            };
            let used_changes = model::acl_changes(wanted, &kafka.acls(&used));
            let unused_changes = model::acl_changes(&Default::default(), &kafka.acls(&unused));
            let (first, second) = futures::join!(
                kafka.change_acls(&used, used_changes),
                kafka.change_acls(&unused, unused_changes)
            );
            first.and(second)
        };
        let quotas = async {
            let (first, second) = futures::join!(
                kafka.change_quotas(
                    &used,
                    model::quota_changes(&desired.quotas, &kafka.quotas(&used))
                ),
                kafka.change_quotas(
                    &unused,
                    model::quota_changes(&Default::default(), &kafka.quotas(&unused))
                )
            );
            first.and(second)
        };
        let scram_name = desired.name.as_str();
        let mut changed_password = false;
        let scram = async {
            match password {
                Some(password) if !kafka.scram_is_current(scram_name, password) => {
                    changed_password = kafka.has_scram(scram_name);
                    kafka.upsert_scram(scram_name, password).await
                }
                Some(_) => Ok(()),
                None if kafka.has_scram(scram_name) => kafka.delete_scram(scram_name).await,
                None => Ok(()),
            }
        };
        let (acls, quotas, scram) = futures::join!(acls, quotas, scram);
        acls.and(quotas).and(scram)?;
        Ok(changed_password)
    }

    async fn publish(&self, user: &KafkaUser, reason: &str, note: &str) {
        self.runtime
            .events()
            .publish_logged(
                &user.object_ref(&()),
                Severity::Normal,
                reason,
                "Reconcile",
                note,
            )
            .await;
    }
}

/// The claim of `user` on its Kafka user: established when a reconciliation of it succeeded
/// once (its status has a user name) and it was not refused for the conflict since. A
/// passing failure of the owner (Kafka unreachable) does not hand its name to another.
fn claim(user: &KafkaUser) -> Claim {
    let established = user.status.as_ref().is_some_and(|status| {
        status.username.is_some()
            && !status.conditions.iter().flatten().any(|condition| {
                condition.reason.as_deref() == Some(crate::error::RESOURCE_CONFLICT)
            })
    });
    Claim::of(&user.metadata, established)
}

/// What the user's credential is.
enum Credential {
    /// A certificate, and why it was (re)issued or kept.
    Certificate(IssueReason),
    /// A SCRAM password and where it came from.
    Password(String, PasswordOrigin),
}

impl Reconciler for UserReconciler {
    type Resource = KafkaUser;
    type Status = KafkaUserStatus;
    type Error = UserError;

    async fn reconcile(
        &self,
        resource: Arc<KafkaUser>,
    ) -> Result<Reconciled<KafkaUserStatus>, UserError> {
        let desired = DesiredUser::of(
            &resource,
            &self.config.secret_prefix,
            self.config.acls_admin_api_supported,
        )?;
        // Before anything is written: the Kafka user may be another tenant's.
        self.check_owner(&resource)?;
        self.kafka.ensure_loaded().await?;
        let existing = self
            .secrets
            .get(&desired.namespace, &desired.secret_name)
            .await;
        let mut status = KafkaUserStatus {
            username: Some(desired.kafka_name()),
            ..KafkaUserStatus::default()
        };
        let mut password = None;
        match self.secret_data(&desired, existing.as_ref()).await? {
            Some((credential, data)) => {
                let secret = model::user_secret(&resource, &desired, data);
                let applied = self
                    .runtime
                    .applier()
                    .apply_cached(&secret, existing.as_deref())
                    .await
                    .map_err(|error| UserError::kubernetes("applying the user's Secret", error))?;
                status.secret = Some(desired.secret_name.clone());
                match credential {
                    Credential::Certificate(reason) => {
                        if existing.is_some()
                            && applied == Applied::Written
                            && reason != IssueReason::Reused
                        {
                            self.publish(
                                &resource,
                                "CertificateRenewed",
                                &format!(
                                    "Issued a new certificate for the user in Secret {}: {reason}",
                                    desired.secret_name
                                ),
                            )
                            .await;
                        }
                    }
                    Credential::Password(value, origin) => {
                        password = Some((value, origin));
                    }
                }
            }
            None => {
                // A user that stopped using tls or scram-sha-512 has no Secret any more.
                if existing.is_some() {
                    delete_user_secret(&self.runtime, &desired.namespace, &desired.secret_name)
                        .await?;
                }
            }
        }
        let changed_password = self
            .reconcile_kafka(&desired, password.as_ref().map(|(value, _)| value.as_str()))
            .await?;
        if changed_password && matches!(password, Some((_, PasswordOrigin::Chosen))) {
            self.publish(
                &resource,
                "PasswordChanged",
                "Set the password from the Secret named in spec.authentication.password in Kafka",
            )
            .await;
        }
        tracing::debug!(user = resource.name_any(), "user reconciled");
        Ok(Reconciled::new(status))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn user(status: serde_json::Value) -> KafkaUser {
        serde_json::from_value(json!({
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaUser",
            "metadata": {"name": "alice", "namespace": "a",
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {}, "status": status,
        }))
        .unwrap()
    }

    fn condition(r#type: &str, reason: Option<&str>) -> serde_json::Value {
        json!({"type": r#type, "status": "True", "reason": reason})
    }

    #[tokio::test]
    async fn every_reconciliation_waiting_for_the_ca_caches_goes_on_once_they_are_filled() {
        use kube::runtime::{reflector, watcher};
        let (cert, mut cert_writer) = reflector::store::<Secret>();
        let (key, mut key_writer) = reflector::store::<Secret>();
        let ca = CaSecrets::new(cert, key);
        // As many users' first reconciliations as start together.
        let waiting: Vec<_> = (0..4)
            .map(|_| {
                let ca = ca.clone();
                tokio::spawn(async move { ca.read().await.map(|_| ()) })
            })
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        for writer in [&mut cert_writer, &mut key_writer] {
            writer.apply_watcher_event(&watcher::Event::Init);
            writer.apply_watcher_event(&watcher::Event::InitDone);
        }
        for read in waiting {
            tokio::time::timeout(std::time::Duration::from_secs(5), read)
                .await
                .expect("a reconciliation still waits for filled caches")
                .unwrap()
                .unwrap();
        }
    }

    #[test]
    fn a_passing_failure_keeps_the_name_and_a_refused_user_has_none() {
        let ready = user(json!({"username": "alice", "conditions": [condition("Ready", None)]}));
        assert!(claim(&ready).ready);
        let failing = user(json!({"username": "alice",
            "conditions": [condition("NotReady", Some("KafkaError"))]}));
        assert!(claim(&failing).ready, "Kafka unreachable: still the owner");
        let refused = user(json!({"username": "alice",
            "conditions": [condition("NotReady", Some(crate::error::RESOURCE_CONFLICT))]}));
        assert!(!claim(&refused).ready);
        assert!(!claim(&user(json!({}))).ready, "never reconciled");
        assert_eq!(claim(&ready).key, "a/alice");
    }
}
