//! Why a pod must be restarted: the difference between the pod as it runs and the pod its
//! StrimziPodSet now describes, or a user's request.

use std::collections::BTreeMap;

use strimzi_api::annotations;

use crate::model::nodes::pods::definition_revisions;

/// One reason to restart a Kafka pod. Its [`RestartReason::name`] is the reason Strimzi gives
/// the same restart (`PascalCase` in Events and metrics, e.g. `PodHasOldRevision`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RestartReason {
    /// The cluster CA certificate changed: the node must load the new trust.
    ClusterCaCertChanged,
    /// The cluster CA key changed: the node's own certificate is signed by the new key.
    ClusterCaKeyChanged,
    /// The clients CA certificate changed: the node must trust the new one.
    ClientsCaCertChanged,
    /// The node's server certificate changed (e.g. new addresses).
    KafkaCertificatesChanged,
    /// A user-provided listener certificate changed.
    CustomListenerCertificateChanged,
    /// The node reloaded its certificates without a restart, and the certificate its KRaft
    /// quorum client started with, which a reload does not replace, expires on the given
    /// date (or its date cannot be read): see [`super::reload`].
    StartupCertificateExpiring(String),
    /// A configuration option that Kafka cannot change while running changed.
    ConfigChangeRequiresRestart,
    /// Anything else of the pod definition changed (image, resources, template...).
    PodHasOldRevision,
    /// `strimzi.io/manual-rolling-update` on the pod or its StrimziPodSet.
    ManualRollingUpdate,
    /// The pod cannot start as it is (unschedulable, image not pulled, crash looping).
    PodStuck(String),
    /// The TLS authentication between the operator and the brokers failed, so the safety
    /// checks could not run (see [`super::unchecked`]).
    PodUnresponsive,
}

/// Every name [`RestartReason::name`] gives: the label values of the restart metric, listed
/// from the start so that each reason's series exists before its first restart.
pub const RESTART_REASON_NAMES: [&str; 9] = [
    "CaCertHasOldGeneration",
    "ClusterCaCertKeyReplaced",
    "KafkaCertificatesChanged",
    "CustomListenerCaCertChange",
    "ConfigChangeRequiresRestart",
    "PodHasOldRevision",
    "ManualRollingUpdate",
    "PodStuck",
    "PodUnresponsive",
];

impl RestartReason {
    /// The stable, CamelCase name used as Event reason and metric label: Strimzi's restart
    /// reason for the same cause. Strimzi names a pod that runs an older cluster or clients
    /// CA certificate generation alike (`CaCertHasOldGeneration`); the Event's note says
    /// which CA.
    pub fn name(&self) -> &'static str {
        match self {
            Self::ClusterCaCertChanged | Self::ClientsCaCertChanged => "CaCertHasOldGeneration",
            Self::ClusterCaKeyChanged => "ClusterCaCertKeyReplaced",
            Self::KafkaCertificatesChanged | Self::StartupCertificateExpiring(_) => {
                "KafkaCertificatesChanged"
            }
            Self::CustomListenerCertificateChanged => "CustomListenerCaCertChange",
            Self::ConfigChangeRequiresRestart => "ConfigChangeRequiresRestart",
            Self::PodHasOldRevision => "PodHasOldRevision",
            Self::ManualRollingUpdate => "ManualRollingUpdate",
            Self::PodStuck(_) => "PodStuck",
            Self::PodUnresponsive => "PodUnresponsive",
        }
    }

    /// A sentence for the Event's note and the log.
    pub fn explanation(&self) -> String {
        match self {
            Self::ClusterCaCertChanged => "the cluster CA certificate changed".to_owned(),
            Self::ClusterCaKeyChanged => "the cluster CA key was replaced".to_owned(),
            Self::ClientsCaCertChanged => "the clients CA certificate changed".to_owned(),
            Self::KafkaCertificatesChanged => "its server certificate changed".to_owned(),
            Self::CustomListenerCertificateChanged => {
                "a user-provided listener certificate changed".to_owned()
            }
            Self::StartupCertificateExpiring(date) => format!(
                "the certificate it started with, which its KRaft quorum client still presents after a reload, expires on {date}"
            ),
            Self::ConfigChangeRequiresRestart => {
                "a configuration option Kafka cannot change while running changed".to_owned()
            }
            Self::PodHasOldRevision => "it runs an older definition".to_owned(),
            Self::ManualRollingUpdate => "a manual rolling update was requested".to_owned(),
            Self::PodStuck(why) => format!("it seems to be stuck ({why})"),
            Self::PodUnresponsive => {
                "the TLS authentication with the brokers failed, so its safety could not be checked"
                    .to_owned()
            }
        }
    }
}

/// Annotations whose change tells more precisely why a pod's revision changed.
const EXPLAINED_BY: [(&str, RestartReason); 6] = [
    (
        annotations::CLUSTER_CA_CERT_GENERATION,
        RestartReason::ClusterCaCertChanged,
    ),
    (
        annotations::CLUSTER_CA_KEY_GENERATION,
        RestartReason::ClusterCaKeyChanged,
    ),
    (
        annotations::CLIENTS_CA_CERT_GENERATION,
        RestartReason::ClientsCaCertChanged,
    ),
    (
        annotations::SERVER_CERT_HASH,
        RestartReason::KafkaCertificatesChanged,
    ),
    (
        annotations::CUSTOM_LISTENER_CERT_THUMBPRINTS,
        RestartReason::CustomListenerCertificateChanged,
    ),
    (
        annotations::CONFIGURATION_HASH,
        RestartReason::ConfigChangeRequiresRestart,
    ),
];

/// What is known about one ready pod: its annotations as it runs and as its StrimziPodSet
/// now describes it.
#[derive(Clone, Copy, Debug)]
pub struct PodRevisions<'a> {
    /// The running pod's annotations.
    pub running: &'a BTreeMap<String, String>,
    /// The annotations of the pod the StrimziPodSet describes.
    pub desired: &'a BTreeMap<String, String>,
}

/// Every reason to restart the pod, sorted; empty when it runs as desired.
///
/// A changed `strimzi.io/revision` or `strimzi.io/resource-revision` (resources are changed
/// by restarting the pod, not resized in place) is explained by the annotations that changed with it
/// (CA generations, server certificate, static configuration); when none did, it is
/// `PodHasOldRevision`. A manual rolling update is asked for on the pod (the one on its
/// StrimziPodSet is passed to its pods first).
pub fn restart_reasons(pod: PodRevisions<'_>) -> Vec<RestartReason> {
    let get = |map: &BTreeMap<String, String>, key: &str| map.get(key).cloned();
    let mut reasons = Vec::new();
    let outdated =
        definition_revisions(Some(pod.running)) != definition_revisions(Some(pod.desired));
    if outdated {
        reasons.extend(
            EXPLAINED_BY
                .iter()
                .filter(|(key, _)| get(pod.running, key) != get(pod.desired, key))
                .map(|(_, reason)| reason.clone()),
        );
        if reasons.is_empty() {
            reasons.push(RestartReason::PodHasOldRevision);
        }
    }
    if annotations::is_true(Some(pod.running), annotations::MANUAL_ROLLING_UPDATE) {
        reasons.push(RestartReason::ManualRollingUpdate);
    }
    reasons.sort();
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    fn reasons(running: &[(&str, &str)], desired: &[(&str, &str)]) -> Vec<RestartReason> {
        restart_reasons(PodRevisions {
            running: &annotations(running),
            desired: &annotations(desired),
        })
    }

    /// Every reason is one Strimzi 1.2 gives its restart Events (its `RestartReason` values,
    /// PascalCased, as its documentation lists them), so that a filter on Strimzi's reasons
    /// finds ours; the notes tell apart the causes that share one.
    #[test]
    fn every_reason_is_one_of_strimzis() {
        const STRIMZI: [&str; 15] = [
            "CaCertHasOldGeneration",
            "CaCertRemoved",
            "CaCertRenewed",
            "ClientCaCertKeyReplaced",
            "ClusterCaCertKeyReplaced",
            "ConfigChangeRequiresRestart",
            "CustomListenerCaCertChange",
            "FileSystemResizeNeeded",
            "JbodVolumesChanged",
            "KafkaCertificatesChanged",
            "ManualRollingUpdate",
            "PodForceRestartOnError",
            "PodHasOldRevision",
            "PodStuck",
            "PodUnresponsive",
        ];
        let all = [
            RestartReason::ClusterCaCertChanged,
            RestartReason::ClusterCaKeyChanged,
            RestartReason::ClientsCaCertChanged,
            RestartReason::KafkaCertificatesChanged,
            RestartReason::CustomListenerCertificateChanged,
            RestartReason::StartupCertificateExpiring("2027-01-01".to_owned()),
            RestartReason::ConfigChangeRequiresRestart,
            RestartReason::PodHasOldRevision,
            RestartReason::ManualRollingUpdate,
            RestartReason::PodStuck("crash looping".to_owned()),
            RestartReason::PodUnresponsive,
        ];
        for reason in &all {
            assert!(
                STRIMZI.contains(&reason.name()),
                "{reason:?} is named {}, not one of Strimzi's reasons",
                reason.name()
            );
        }
        let names: std::collections::BTreeSet<&str> = all.iter().map(RestartReason::name).collect();
        assert_eq!(
            names,
            RESTART_REASON_NAMES.into_iter().collect(),
            "RESTART_REASON_NAMES lists every name, and only those"
        );
        let explanations: std::collections::BTreeSet<String> =
            all.iter().map(RestartReason::explanation).collect();
        assert_eq!(explanations.len(), all.len(), "two causes explained alike");
    }

    #[test]
    fn a_pod_of_the_desired_revision_stays() {
        let current = [(annotations::REVISION, "aaaa")];
        assert!(reasons(&current, &current).is_empty());
    }

    #[test]
    fn a_changed_revision_is_explained_by_the_annotations_that_changed_with_it() {
        let running = [
            (annotations::REVISION, "aaaa"),
            (annotations::CLUSTER_CA_CERT_GENERATION, "0"),
            (annotations::CONFIGURATION_HASH, "1111"),
        ];
        let desired = [
            (annotations::REVISION, "bbbb"),
            (annotations::CLUSTER_CA_CERT_GENERATION, "1"),
            (annotations::CONFIGURATION_HASH, "2222"),
        ];
        assert_eq!(
            reasons(&running, &desired),
            [
                RestartReason::ClusterCaCertChanged,
                RestartReason::ConfigChangeRequiresRestart
            ]
        );
        let image_only = [
            (annotations::REVISION, "cccc"),
            (annotations::CLUSTER_CA_CERT_GENERATION, "0"),
            (annotations::CONFIGURATION_HASH, "1111"),
        ];
        assert_eq!(
            reasons(&running, &image_only),
            [RestartReason::PodHasOldRevision]
        );
    }

    #[test]
    fn a_manual_rolling_update_of_a_current_pod_restarts_it() {
        let current = [(annotations::REVISION, "aaaa")];
        let annotated = [
            (annotations::REVISION, "aaaa"),
            (annotations::MANUAL_ROLLING_UPDATE, "true"),
        ];
        assert_eq!(
            reasons(&annotated, &current),
            [RestartReason::ManualRollingUpdate]
        );
        let not_true = [
            (annotations::REVISION, "aaaa"),
            (annotations::MANUAL_ROLLING_UPDATE, "false"),
        ];
        assert!(reasons(&not_true, &current).is_empty());
    }
}
