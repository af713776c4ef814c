//! Which restarts go without the safety checks, and what the roller does when it cannot run
//! them, as Strimzi 1.2's roller but stricter.
//!
//! Only a stuck pod of an older definition (it never ran as desired, so restarting it cannot
//! make things worse) restarts without the checks; a pod that is not ready otherwise is waited
//! for. Every other restart needs the quorum and `min.insync.replicas` checks. When the
//! brokers cannot be asked for them, a TLS authentication failure (the operator and the
//! brokers no longer trust each other's certificates, as in a cluster CA key replacement)
//! still restarts the next node in the rolling order, as Strimzi forces it; any other
//! failure (no connection, no admin client) restarts nothing and says what is unreachable,
//! where Strimzi's fallback restarts the nodes it visits when its admin client cannot even be
//! created.

use strimzi_kafka_model::AdminError;

use super::{AvailabilityCheck, NodeToRoll, RestartReason, RollDecision, next_restarts};

/// How a node's pod stands when the roller looks at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodStanding {
    /// Ready.
    Ready,
    /// Not ready, and not stuck (starting, recovering its logs, or failing in a way a new
    /// definition would not cure).
    NotReady,
    /// Stuck (unschedulable, or a container waiting for a reason a new definition may cure).
    Stuck {
        /// Whether it runs an older definition than its StrimziPodSet now describes.
        outdated: bool,
    },
}

/// Whether a pod standing as `standing` restarts without the safety checks: only a stuck pod
/// of an older definition. Any other pod that is not ready is waited for; a ready one
/// restarts only through [`next_step`].
pub fn restarts_without_checks(standing: PodStanding) -> bool {
    matches!(standing, PodStanding::Stuck { outdated: true })
}

/// Why the safety checks of a rolling step could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unchecked {
    /// The admin client could not be created; what failed.
    ClientNotCreated(String),
    /// No connection to the brokers could be opened or answered in time; what is
    /// unreachable.
    Unreachable(String),
    /// The TLS authentication between the operator and a broker failed, either way; what
    /// failed.
    TlsAuthentication(String),
}

impl Unchecked {
    /// Why describing the cluster failed with `error`, when it is a failure to reach the
    /// brokers; `None` for an answer from Kafka (a failure of the reconciliation, retried).
    pub fn from_describe_error(error: &AdminError) -> Option<Self> {
        match error {
            // The handshake failed: the operator does not trust the broker's certificate
            // or the broker refused the operator's (TLS 1.2).
            AdminError::Tls(_) => Some(Self::TlsAuthentication(error.to_string())),
            // With TLS 1.3 the broker refuses the operator's certificate with an alert after
            // the handshake, closing the connection.
            AdminError::Connection { message, .. } if message.contains("fatal alert") => {
                Some(Self::TlsAuthentication(error.to_string()))
            }
            AdminError::Timeout { .. } => Some(Self::Unreachable(error.to_string())),
            _ if error.is_connection() => Some(Self::Unreachable(error.to_string())),
            _ => None,
        }
    }

    /// The stable reason of the `NotReady` condition and the Warning Event when nothing
    /// restarts for it.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::ClientNotCreated(_) => "KafkaAdminClientNotCreated",
            Self::Unreachable(_) => "KafkaBrokersUnreachable",
            Self::TlsAuthentication(_) => "KafkaTlsAuthenticationFailed",
        }
    }

    /// Whether the wait for it needs a person, so that the Kafka is `NotReady` at once: an
    /// admin client that cannot be created (its Secret or certificates are unusable). Brokers
    /// that cannot be reached, or whose TLS authentication fails, are what a routine roll or
    /// CA key replacement looks like for a while (a broker restarting, a new certificate not
    /// trusted yet): progress, until the operation timeout as Strimzi's roller retries.
    pub fn stalls(&self) -> bool {
        matches!(self, Self::ClientNotCreated(_))
    }

    /// What failed, for messages.
    pub fn describe(&self) -> String {
        match self {
            Self::ClientNotCreated(why) => {
                format!("the admin client for the safety checks could not be created: {why}")
            }
            Self::Unreachable(why) => {
                format!("the brokers cannot be reached for the safety checks: {why}")
            }
            Self::TlsAuthentication(why) => {
                format!("the TLS authentication with the brokers failed: {why}")
            }
        }
    }
}

/// The next rolling step over `nodes` (ready, each needing a restart): with the cluster
/// described (`Ok`: its checks and the active controller), the checked choice of
/// [`next_restarts`]; when the checks could not run, on a TLS authentication failure the
/// first node in the rolling order alone, with [`RestartReason::PodUnresponsive`] added;
/// otherwise nothing restarts, blocked on what is unreachable. `None` when `nodes` is empty.
pub fn next_step<C: AvailabilityCheck>(
    nodes: Vec<NodeToRoll>,
    checks: Result<(&C, Option<i32>), &Unchecked>,
    max_parallel_brokers: usize,
) -> Option<RollDecision> {
    match checks {
        Ok((check, active_controller)) => {
            next_restarts(nodes, active_controller, max_parallel_brokers, check)
        }
        Err(Unchecked::TlsAuthentication(_)) => {
            let mut first = next_restarts(nodes, None, 1, &Unblocked)?;
            if let RollDecision::Restart(chosen) = &mut first {
                for node in chosen.iter_mut() {
                    node.reasons.push(RestartReason::PodUnresponsive);
                }
            }
            Some(first)
        }
        Err(unchecked) => {
            let pods: Vec<&str> = nodes.iter().map(|node| node.pod.as_str()).collect();
            (!pods.is_empty()).then(|| {
                RollDecision::Blocked(format!(
                    "{} cannot be restarted safely: {}",
                    pods.join(", "),
                    unchecked.describe()
                ))
            })
        }
    }
}

/// The order alone, for the restart forced by a TLS authentication failure: nothing blocks.
struct Unblocked;

impl AvailabilityCheck for Unblocked {
    fn controller_blocker(&self, _node_id: i32) -> Option<String> {
        None
    }

    fn broker_blockers(&self, _brokers: &std::collections::BTreeSet<i32>) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::*;

    /// A cluster whose checks block broker 4 (it holds the last spare replica) and nothing
    /// else.
    struct Healthy;

    impl AvailabilityCheck for Healthy {
        fn controller_blocker(&self, _node_id: i32) -> Option<String> {
            None
        }
        fn broker_blockers(&self, brokers: &BTreeSet<i32>) -> Vec<String> {
            brokers
                .contains(&4)
                .then(|| "partition t-0 is at its minimum ISR".to_owned())
                .into_iter()
                .collect()
        }
    }

    fn node(node_id: i32, controller: bool) -> NodeToRoll {
        NodeToRoll {
            pod: format!("c-pool-{node_id}"),
            node_id,
            controller,
            broker: !controller,
            reasons: vec![RestartReason::PodHasOldRevision],
        }
    }

    /// Controller 0 (the active one), controller 1, brokers 3 and 4.
    fn cluster() -> Vec<NodeToRoll> {
        vec![node(4, false), node(3, false), node(0, true), node(1, true)]
    }

    fn restarted(decision: Option<RollDecision>) -> Vec<(i32, Vec<RestartReason>)> {
        match decision {
            Some(RollDecision::Restart(nodes)) => nodes
                .into_iter()
                .map(|node| (node.node_id, node.reasons))
                .collect(),
            other => panic!("expected restarts, got {other:?}"),
        }
    }

    fn blocked(decision: Option<RollDecision>) -> String {
        match decision {
            Some(RollDecision::Blocked(why)) => why,
            other => panic!("expected nothing to restart, got {other:?}"),
        }
    }

    #[test]
    fn only_a_stuck_pod_of_an_older_definition_restarts_without_the_checks() {
        assert!(restarts_without_checks(PodStanding::Stuck {
            outdated: true
        }));
        // Stuck as now desired: the user has to change something.
        assert!(!restarts_without_checks(PodStanding::Stuck {
            outdated: false
        }));
        // Not ready otherwise (starting, recovering its logs): waited for.
        assert!(!restarts_without_checks(PodStanding::NotReady));
        // Ready: only through the checks.
        assert!(!restarts_without_checks(PodStanding::Ready));
    }

    #[test]
    fn a_healthy_cluster_rolls_through_the_checks() {
        let checks = Ok((&Healthy, Some(0)));
        assert_eq!(
            restarted(next_step(cluster(), checks, 1)),
            [(1, vec![RestartReason::PodHasOldRevision])]
        );
        let brokers = vec![node(4, false), node(3, false)];
        assert_eq!(
            restarted(next_step(brokers, Ok((&Healthy, Some(0))), 2)),
            [(3, vec![RestartReason::PodHasOldRevision])]
        );
        let at_minimum = blocked(next_step(vec![node(4, false)], Ok((&Healthy, Some(0))), 1));
        assert!(at_minimum.contains("minimum ISR"), "{at_minimum}");
    }

    #[test]
    fn ready_nodes_whose_brokers_cannot_be_reached_do_not_restart() {
        for error in [
            AdminError::Connection {
                address: "10.0.0.7:9091".to_owned(),
                message: "Connection refused (os error 111)".to_owned(),
            },
            AdminError::HostNameNotLookedUp {
                address: "c-kafka-bootstrap.ns.svc:9091".to_owned(),
            },
            AdminError::Timeout {
                operation: "connecting to 10.0.0.7:9091".to_owned(),
                after: Duration::from_secs(10),
            },
        ] {
            let unchecked = Unchecked::from_describe_error(&error).unwrap_or_else(|| panic!());
            assert_eq!(unchecked.reason(), "KafkaBrokersUnreachable");
            // A restarting broker is unreachable for a while: progress, not stalled.
            assert!(!unchecked.stalls());
            let why = blocked(next_step::<Healthy>(cluster(), Err(&unchecked), 1));
            assert!(why.contains("c-pool-1"), "{why}");
            assert!(why.contains(&error.to_string()), "{why}");
        }
    }

    #[test]
    fn ready_nodes_do_not_restart_when_the_admin_client_cannot_be_created() {
        let unchecked = Unchecked::ClientNotCreated("TLS setup failed: no key".to_owned());
        assert_eq!(unchecked.reason(), "KafkaAdminClientNotCreated");
        assert!(unchecked.stalls(), "only the user can mend its Secret");
        let why = blocked(next_step::<Healthy>(cluster(), Err(&unchecked), 4));
        assert!(
            why.contains("admin client") && why.contains("no key"),
            "{why}"
        );
        assert_eq!(next_step::<Healthy>(Vec::new(), Err(&unchecked), 1), None);
    }

    #[test]
    fn a_tls_authentication_failure_restarts_one_node_at_a_time_in_the_rolling_order() {
        for error in [
            AdminError::Tls("handshake with 10.0.0.7:9091: invalid peer certificate".to_owned()),
            AdminError::Connection {
                address: "10.0.0.7:9091".to_owned(),
                message: "connection closed: received fatal alert: UnknownCA".to_owned(),
            },
        ] {
            let unchecked = Unchecked::from_describe_error(&error).unwrap_or_else(|| panic!());
            assert_eq!(unchecked.reason(), "KafkaTlsAuthenticationFailed");
            // As during a CA key replacement: progress.
            assert!(!unchecked.stalls());
            // The active controller is unknown: controllers by node ID, then brokers.
            let reasons = vec![
                RestartReason::PodHasOldRevision,
                RestartReason::PodUnresponsive,
            ];
            assert_eq!(
                restarted(next_step::<Healthy>(cluster(), Err(&unchecked), 4)),
                [(0, reasons.clone())]
            );
            // Brokers too, one at a time, even one the checks would block.
            let brokers = vec![node(4, false), node(3, false)];
            assert_eq!(
                restarted(next_step::<Healthy>(brokers, Err(&unchecked), 4)),
                [(3, reasons)]
            );
        }
    }

    #[test]
    fn an_answer_from_kafka_is_not_a_reason_to_skip_the_checks() {
        let error = AdminError::from_code(29, Some("not authorized")).unwrap_or_else(|| panic!());
        assert_eq!(Unchecked::from_describe_error(&error), None);
    }
}
