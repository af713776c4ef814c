//! The KafkaUser reconciler: the user's Secret (certificate or password), then in Kafka its
//! ACL bindings, quotas and SCRAM credential, each changed only where it differs from the
//! caches; status `username` and `secret`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::runtime::reflector::Store;
use kube::{Resource, ResourceExt};
use strimzi_api::user::{KafkaUser, KafkaUserStatus};
use strimzi_certificate_manager::leaf::IssueReason;
use strimzi_operator_common::apply::Applied;
use strimzi_operator_common::blocking::CpuPool;
use strimzi_operator_common::controller::{Reconciled, Reconciler};
use strimzi_operator_common::events::Severity;
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
    /// The certificate Secret.
    pub cert: Store<Secret>,
    /// The key Secret.
    pub key: Store<Secret>,
}

impl CaSecrets {
    /// Both Secrets as cached, once both caches are filled.
    async fn read(&self) -> Result<(Option<Arc<Secret>>, Option<Arc<Secret>>), UserError> {
        let waiting = |_| UserError::Internal("the clients CA cache stopped".to_owned());
        self.cert.wait_until_ready().await.map_err(waiting)?;
        self.key.wait_until_ready().await.map_err(waiting)?;
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
}

impl UserReconciler {
    /// A reconciler writing through `runtime`, reading users' Secrets from `secrets` and the
    /// clients CA from `ca`.
    pub fn new(
        runtime: OperatorRuntime,
        config: Arc<UserOperatorConfig>,
        kafka: UserKafka,
        secrets: ScopedCache<Secret>,
        ca: CaSecrets,
    ) -> Self {
        Self {
            runtime,
            config,
            kafka,
            secrets,
            ca,
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
                            UserError::kubernetes("reading the Secret with the password", error)
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
