//! The CA step: the cluster and clients CAs are created, renewed or have their keys replaced
//! by `certificate-manager`, and their Secrets written with Strimzi's labels and, when
//! `generateSecretOwnerReference` (the default), an owner reference to the Kafka.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{Api, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use strimzi_api::annotations;
use strimzi_api::kafka::Kafka;
use strimzi_certificate_manager::authority::{
    self, CaAction, CaKind, CaSettings, CertificateAuthority, ForceAnnotationsDone, ReconciledCa,
};
use strimzi_certificate_manager::maintenance::MaintenanceWindows;
use strimzi_operator_common::labels::{ComponentLabels, owner_reference};
use strimzi_operator_common::metrics::CertificateType;
use time::OffsetDateTime;

use strimzi_certificate_manager::leaf::{
    self, IssueContext, IssueReason, IssuedCertificate, LeafSpec,
};

/// The user name of the certificate [`ClusterCas::trust_check_identity`] issues.
const TRUST_CHECK_USER: &str = "strimzi-cluster-operator-trust-check";

use super::{ReconcileError, Reconciliation, off_the_async_workers};
use crate::model::desired::{self, CertificateRequest};
use crate::model::nodes::pods::CaGenerations;

/// Both CAs of a cluster after the CA step.
#[derive(Debug)]
pub struct ClusterCas {
    /// The cluster CA, which signs the nodes' certificates (shared with the blocking thread
    /// that issues them).
    pub cluster: Arc<ReconciledCa>,
    /// The clients CA, which signs the users' certificates (shared with the blocking thread
    /// that issues the certificate of a trust check).
    pub clients: Arc<ReconciledCa>,
    /// Whether a maintenance time window is open now.
    pub window_open: bool,
    /// When the step ran.
    pub now: OffsetDateTime,
}

impl ClusterCas {
    /// Issues or reuses the certificate of `request` with the cluster CA, on a blocking
    /// thread of the CPU pool; by the request's name. `trust_pending`: whether some node does not trust a new CA key yet.
    pub(super) async fn issue(
        &self,
        request: CertificateRequest,
        trust_pending: bool,
    ) -> Result<(String, IssuedCertificate), ReconcileError> {
        self.signing(
            self.cluster.clone(),
            trust_pending,
            move |authority, context| desired::issue_certificate(authority, &request, context),
        )
        .await
    }

    /// Runs `sign` with the CA of `authority` and the context of this step, on a blocking
    /// thread of the CPU pool (a new RSA key takes about half a second).
    async fn signing<T, E>(
        &self,
        authority: Arc<ReconciledCa>,
        trust_pending: bool,
        sign: impl FnOnce(&CertificateAuthority, &IssueContext<'_>) -> Result<T, E> + Send + 'static,
    ) -> Result<T, ReconcileError>
    where
        T: Send + 'static,
        E: Into<ReconcileError> + Send + 'static,
    {
        let (now, window_open) = (self.now, self.window_open);
        off_the_async_workers(move || {
            let context = IssueContext {
                now,
                window_open,
                ca_action: &authority.action,
                trust_pending,
            };
            sign(&authority.authority, &context)
        })
        .await
    }

    /// A client certificate (`CN=strimzi-cluster-operator-trust-check`) and its key, PEM,
    /// signed by the current clients CA, issued on a blocking thread of the CPU pool: what a
    /// user with a certificate of the current clients CA presents, for checking that a node
    /// accepts it after loading its trust stores. Never stored.
    pub(super) async fn trust_check_identity(&self) -> Result<String, ReconcileError> {
        self.signing(self.clients.clone(), false, |authority, context| {
            leaf::issue(
                authority,
                &LeafSpec::user(TRUST_CHECK_USER),
                IssueReason::Missing,
                context,
            )
            .map(|issued| format!("{}{}", issued.certificate.to_pem(), issued.key_pem))
        })
        .await
    }

    /// The generations the pods are annotated with.
    pub fn generations(&self) -> CaGenerations {
        CaGenerations {
            cluster_ca_cert: self.cluster.authority.cert_generation(),
            cluster_ca_key: self.cluster.authority.key_generation(),
            clients_ca_cert: self.clients.authority.cert_generation(),
        }
    }
}

/// Whether the Kafka owns the Secrets of a CA with `spec` (`generateSecretOwnerReference`,
/// true by default).
fn owns_ca_secrets(spec: Option<&strimzi_api::kafka::CertificateAuthority>) -> bool {
    spec.is_none_or(|spec| spec.generates_secret_owner_reference())
}

impl Reconciliation<'_> {
    /// Whether a maintenance time window (`spec.maintenanceTimeWindows`) is open at `now`;
    /// always without windows. An expression that does not parse is an invalid spec.
    pub(super) fn maintenance_window_open(
        &self,
        now: OffsetDateTime,
    ) -> Result<bool, ReconcileError> {
        let windows = self
            .kafka
            .spec
            .maintenance_time_windows
            .clone()
            .unwrap_or_default();
        Ok(windows.is_empty() || MaintenanceWindows::parse(&windows)?.contains(now))
    }

    /// Creates or renews the cluster and clients CAs at `now` and writes their Secrets;
    /// renewals wait for `window_open`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn reconcile_cas(
        &mut self,
        now: OffsetDateTime,
        window_open: bool,
    ) -> Result<ClusterCas, ReconcileError> {
        let cluster = self
            .reconcile_ca(
                CaKind::Cluster,
                self.kafka.spec.cluster_ca.as_ref(),
                now,
                window_open,
            )
            .await?;
        let clients = self
            .reconcile_ca(
                CaKind::Clients,
                self.kafka.spec.clients_ca.as_ref(),
                now,
                window_open,
            )
            .await?;
        self.report_ca_expiry(&cluster, CertificateType::ClusterCa);
        self.report_ca_expiry(&clients, CertificateType::ClientsCa);
        Ok(ClusterCas {
            cluster: Arc::new(cluster),
            clients: Arc::new(clients),
            window_open,
            now,
        })
    }

    /// Serves when the certificate of the `ca` expires, as
    /// `strimzi_certificate_expiration_timestamp_ms` (milliseconds since the epoch), which
    /// Strimzi's `CertificateExpiration` alert reads.
    fn report_ca_expiry(&self, reconciled: &ReconciledCa, ca: CertificateType) {
        let not_after = reconciled.authority.certificate().not_after();
        let expires_ms =
            i64::try_from(not_after.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX);
        self.operator.runtime.metrics().set_certificate_expiration(
            "Kafka",
            &self.namespace,
            &self.name,
            ca,
            expires_ms,
        );
    }

    async fn reconcile_ca(
        &mut self,
        kind: CaKind,
        spec: Option<&strimzi_api::kafka::CertificateAuthority>,
        now: OffsetDateTime,
        window_open: bool,
    ) -> Result<ReconciledCa, ReconcileError> {
        let mut settings = CaSettings::from_spec(spec);
        settings.pkcs12 = self.operator.config.pkcs12;
        let secrets: Api<Secret> = Api::namespaced(self.client(), &self.namespace);
        let cert_name = kind.cert_secret_name(&self.name);
        let key_name = kind.key_secret_name(&self.name);
        let cert = secrets
            .get_opt(&cert_name)
            .await
            .map_err(|source| ReconcileError::api("get Secret", &cert_name, source))?;
        let key = secrets
            .get_opt(&key_name)
            .await
            .map_err(|source| ReconcileError::api("get Secret", &key_name, source))?;
        let reconciled = {
            let (name, cert, key) = (self.name.clone(), cert.clone(), key.clone());
            super::off_the_async_workers(move || {
                authority::reconcile(
                    kind,
                    &name,
                    &settings,
                    cert.as_ref(),
                    key.as_ref(),
                    now,
                    window_open,
                )
            })
            .await?
        };
        let owned = owns_ca_secrets(spec);
        // The key first, so that no certificate is stored for a key that is not; a key
        // replacement's new key is marked until its certificate is stored and the force
        // annotations are gone, so that an interruption is completed by the next
        // reconciliation (see `authority`).
        let first_key = reconciled
            .pending_key_secret
            .as_ref()
            .or(reconciled.key_secret.as_ref());
        self.write_ca_secret(first_key, key.as_ref(), owned).await?;
        self.write_ca_secret(reconciled.cert_secret.as_ref(), cert.as_ref(), owned)
            .await?;
        self.clear_force_annotations(
            reconciled.force_annotations_done,
            cert.as_ref(),
            key.as_ref(),
        )
        .await?;
        if reconciled.pending_key_secret.is_some() {
            // Read again: the marked key Secret was just written.
            self.write_ca_secret(reconciled.key_secret.as_ref(), None, owned)
                .await?;
        }
        for warning in &reconciled.warnings {
            self.warn(warning.reason, &warning.message);
        }
        match &reconciled.action {
            CaAction::RenewCertificate(trigger) => {
                self.tell(
                    "CaCertificateRenewed",
                    "RenewCaCertificate",
                    &format!("Renewed the {kind} certificate: {trigger}"),
                )
                .await;
            }
            CaAction::ReplaceKey(trigger) => {
                self.tell(
                    "CaKeyReplaced",
                    "ReplaceCaKey",
                    &format!("Replaced the {kind} key and certificate: {trigger}"),
                )
                .await;
            }
            _ => {}
        }
        Ok(reconciled)
    }

    /// Writes `desired`, a CA Secret of the `certificate-manager`, with Strimzi's labels and
    /// (when `owned`) the Kafka as owner, compared with `current` (read first when `None`).
    async fn write_ca_secret(
        &self,
        desired: Option<&Secret>,
        current: Option<&Secret>,
        owned: bool,
    ) -> Result<(), ReconcileError> {
        if let Some(desired) = desired {
            let secret = self.ca_secret(desired, owned);
            self.operator
                .runtime
                .applier()
                .apply(&secret, current)
                .await?;
        }
        Ok(())
    }

    /// Removes from the live CA Secrets the force annotations that the CA step has carried
    /// out (`done`), so that the next reconciliation does not act again: the user set them
    /// with another field manager, so applying our Secrets does not remove them. A postponed
    /// action keeps them.
    async fn clear_force_annotations(
        &self,
        done: ForceAnnotationsDone,
        cert: Option<&Secret>,
        key: Option<&Secret>,
    ) -> Result<(), ReconcileError> {
        let carried_out = [
            (done.replace, key, annotations::FORCE_REPLACE),
            (done.renew, cert, annotations::FORCE_RENEW),
        ];
        let secrets: Api<Secret> = self.api();
        for (done, secret, annotation) in carried_out {
            let Some(secret) = secret.filter(|_| done) else {
                continue;
            };
            if !secret.annotations().contains_key(annotation) {
                continue;
            }
            let name = secret.name_any();
            let patch = serde_json::json!({"metadata": {"annotations": {annotation: null}}});
            secrets
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|source| ReconcileError::api("patch Secret", &name, source))?;
        }
        Ok(())
    }

    /// Once a cluster CA key replacement is over — every pod of the cluster (`pods`) runs
    /// trusting the current CA certificate and nothing is left to roll, so every node
    /// presents a certificate of the new key — removes the old CA certificates from the
    /// `<cluster>-cluster-ca-cert` Secret, with a Normal Event. Pods keep the old
    /// certificates in their trust until they next restart; nothing rolls for this. A CA the
    /// user supplies is never touched.
    pub(super) async fn drop_old_cluster_ca_certificates<'p>(
        &self,
        cas: &ClusterCas,
        pods: impl IntoIterator<Item = &'p Pod>,
    ) -> Result<(), ReconcileError> {
        let ca = &cas.cluster;
        let Some(cert_secret) = ca.cert_secret.as_ref() else {
            return Ok(());
        };
        let generation = ca.authority.cert_generation().to_string();
        let all_trust_current = pods.into_iter().all(|pod| {
            pod.annotations()
                .get(annotations::CLUSTER_CA_CERT_GENERATION)
                == Some(&generation)
        });
        if !all_trust_current {
            return Ok(());
        }
        let Some(dropped) = authority::without_old_certificates(&ca.authority, cert_secret)? else {
            return Ok(());
        };
        let owned = owns_ca_secrets(self.kafka.spec.cluster_ca.as_ref());
        self.write_ca_secret(Some(&dropped), Some(cert_secret), owned)
            .await?;
        self.tell(
            "OldCaCertificatesRemoved",
            "RemoveOldCaCertificates",
            "Removed the old cluster CA certificates: every node trusts and uses the current one",
        )
        .await;
        Ok(())
    }

    /// `secret` with namespace, Strimzi's labels and, if `owned`, the Kafka as owner.
    fn ca_secret(&self, secret: &Secret, owned: bool) -> Secret {
        let labels = ComponentLabels {
            kind: Kafka::kind(&()).into_owned(),
            cluster: self.name.clone(),
            // Strimzi names every CA Secret's component `strimzi`, as it does the trust
            // bundle and the operator's certificate Secret.
            component_name: "strimzi".to_owned(),
            component_type: "certificate-authority".to_owned(),
            managed_by: crate::config::NAME.to_owned(),
        }
        .labels(
            &self.kafka.labels().clone(),
            &self.operator.config.model.label_exclusion,
        );
        let mut secret = secret.clone();
        secret.metadata.namespace = Some(self.namespace.clone());
        secret
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .extend(labels);
        secret.metadata.owner_references = owned
            .then(|| owner_reference(self.kafka))
            .flatten()
            .map(|owner| vec![owner]);
        secret
    }
}
