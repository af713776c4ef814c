//! The claim step: whether this operator, and no other, acts on the Kafka
//! ([`strimzi_operator_common::claim`]). It runs first; while another cluster operator claims
//! the Kafka too, nothing else runs (no certificate, object, roll or status field changes) and
//! both operators report the conflict.

use std::collections::BTreeMap;

use kube::ResourceExt;
use strimzi_api::kafka::KafkaStatus;
use strimzi_api::{labels, naming};
use strimzi_operator_common::claim::Verdict;
use strimzi_operator_common::controller::Reconciled;

use super::{ReconcileError, Reconciliation};

/// The reason of the `NotReady` condition and of the Warning Event while two operators claim
/// one Kafka.
pub(super) const CONFLICTING_OPERATOR: &str = "ConflictingOperator";

impl Reconciliation<'_> {
    /// Checks (and writes, where due) the Kafka's claim Lease.
    pub(super) async fn check_claim(&self) -> Result<Verdict, ReconcileError> {
        let claim_labels = BTreeMap::from([
            (labels::CLUSTER.to_owned(), self.name.clone()),
            (labels::KIND.to_owned(), "Kafka".to_owned()),
        ]);
        Ok(self
            .operator
            .claims
            .check(
                self.kafka,
                &naming::cluster_operator_claim_lease(&self.name),
                claim_labels,
            )
            .await?)
    }

    /// The status while `operators` (the holder first) both claim the Kafka: the previous
    /// one, `NotReady` with the same message from either operator (so that they do not
    /// rewrite each other's condition), `observedGeneration` kept; and a Warning Event from
    /// this operator. It looks again every renewal period of the claim.
    pub(super) async fn conflict_status(&self, operators: &[String; 2]) -> Reconciled<KafkaStatus> {
        let claims = &self.operator.claims;
        let [holder, contender] = operators;
        let message = format!(
            "Kafka {}/{} is claimed by two cluster operators, {holder} (which acted on it) and \
             {contender}: neither acts on it while both run. Stop one of them; the other acts \
             again about {} s after the last renewal of the stopped one's part of Lease {}.",
            self.namespace,
            self.name,
            claims.timing().duration.as_secs(),
            naming::cluster_operator_claim_lease(&self.name),
        );
        self.alert(
            CONFLICTING_OPERATOR,
            "Reconcile",
            &format!("{} stops acting: {message}", claims.identity()),
        )
        .await;
        tracing::warn!(kafka = %self.kafka.name_any(), %message, "another cluster operator claims this Kafka");
        Reconciled::stalled(
            self.kafka.status.clone().unwrap_or_default(),
            CONFLICTING_OPERATOR,
            &message,
            claims.timing().renew_period(),
        )
        .keep_observed_generation()
    }
}
