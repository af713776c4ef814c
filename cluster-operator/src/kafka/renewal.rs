//! What a reconciliation of a Kafka whose spec is invalid still does after the CA step: it
//! renews, where due, the certificates of the nodes that run, as they were issued, so that a
//! cluster left with an invalid spec does not drift towards expired certificates. Nothing else
//! is applied: the StrimziPodSets stay as they are and nothing restarts, so a node loads its
//! renewed certificate when it next starts (or with the roll that follows once the spec is
//! valid again).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use strimzi_api::pod_set::StrimziPodSet;

use super::{ClusterCas, ReconcileError, Reconciliation};
use crate::model::desired;
use crate::model::kafka_component_labels;
use crate::model::security::certificates::renewed_node_certificate_secret;

impl Reconciliation<'_> {
    /// Issues again, with the cluster CA as the CA step left it, the certificate of every node
    /// the cluster's StrimziPodSets list whose certificate is due (the CA certificate was
    /// issued again, the certificate expires within the renewal period and a maintenance
    /// window is open, or it is unreadable or signed by another CA; while some node does not
    /// trust a replaced CA key yet, a certificate of the old key is kept, as always), with
    /// the names it has, and writes only those Secrets, with a Normal Event naming the nodes.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) async fn renew_running_certificates(
        &self,
        cas: &ClusterCas,
    ) -> Result<(), ReconcileError> {
        let selector =
            kafka_component_labels(&self.name, &self.operator.config.model).selector_string();
        let sets = self.list::<StrimziPodSet>(&selector).await?;
        let pods = crate::pod_set::described_annotations(&sets);
        if pods.is_empty() {
            return Ok(());
        }
        let secrets: BTreeMap<String, Secret> = self
            .list::<Secret>(&selector)
            .await?
            .into_iter()
            .map(|secret| (secret.name_any(), secret))
            .collect();
        let requests = desired::running_certificate_requests(&self.name, pods.keys(), &secrets);
        let trust_pending = self.cluster_ca_trust_pending(&selector, cas).await?;
        let issued = futures::future::try_join_all(
            requests
                .into_iter()
                .map(|request| cas.issue(request, trust_pending)),
        )
        .await?;
        let generation = cas.cluster.authority.cert_generation();
        let mut renewed = Vec::new();
        for (pod, certificate) in issued.iter().filter(|(_, issued)| issued.is_new()) {
            let Some(current) = secrets.get(pod) else {
                continue;
            };
            let secret = renewed_node_certificate_secret(current, certificate, generation);
            self.operator
                .runtime
                .applier()
                .apply_cached(&secret, Some(current))
                .await?;
            tracing::info!(%pod, reason = %certificate.reason, "renewed the certificate of a running node while the spec is invalid");
            renewed.push(format!("{pod} ({})", certificate.reason));
        }
        if !renewed.is_empty() {
            self.tell(
                "NodeCertificatesRenewed",
                "RenewNodeCertificates",
                &format!(
                    "Renewed the certificates of running nodes while the Kafka's spec is invalid: {}; a node loads its new certificate when it next starts",
                    renewed.join(", ")
                ),
            )
            .await;
        }
        Ok(())
    }
}
