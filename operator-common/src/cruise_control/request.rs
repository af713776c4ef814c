//! The requests the operators send to Cruise Control, as HTTP requests (pure).

use crate::http_client::{Method, Request};

/// Where Cruise Control serves its REST API: `/kafkacruisecontrol/<endpoint>`.
pub const API_PATH: &str = "/kafkacruisecontrol";
/// The header carrying the ID of the user task a request created or asks about.
pub const USER_TASK_ID_HEADER: &str = "User-Task-ID";

/// The endpoints of Cruise Control's REST API that the operators call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `GET state`: the state of the executor (and other parts).
    State,
    /// `POST rebalance`: a proposal for the whole cluster, or its execution.
    Rebalance,
    /// `POST add_broker`: move replicas onto new brokers.
    AddBroker,
    /// `POST remove_broker`: move replicas off brokers to be removed.
    RemoveBroker,
    /// `POST remove_disks`: move replicas off log directories within their brokers.
    RemoveDisks,
    /// `GET user_tasks`: the state of earlier requests.
    UserTasks,
    /// `POST stop_proposal_execution`: stop the running execution.
    StopProposalExecution,
    /// `POST topic_configuration`: change the replication factor of topics.
    TopicConfiguration,
}

impl Endpoint {
    /// The endpoint's name, e.g. `add_broker`.
    pub fn name(self) -> &'static str {
        match self {
            Self::State => "state",
            Self::Rebalance => "rebalance",
            Self::AddBroker => "add_broker",
            Self::RemoveBroker => "remove_broker",
            Self::RemoveDisks => "remove_disks",
            Self::UserTasks => "user_tasks",
            Self::StopProposalExecution => "stop_proposal_execution",
            Self::TopicConfiguration => "topic_configuration",
        }
    }

    /// The HTTP method the endpoint takes.
    pub fn method(self) -> Method {
        match self {
            Self::State | Self::UserTasks => Method::Get,
            _ => Method::Post,
        }
    }

    /// A request to the endpoint with `json=true`, the first parameter of every call.
    pub fn request(self) -> Request {
        Request::new(self.method(), &format!("{API_PATH}/{}", self.name())).param("json", "true")
    }
}

/// A log directory of a broker whose replicas should move to the broker's other directories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerLogDir {
    /// Node ID of the broker.
    pub broker: i32,
    /// The log directory, e.g. `/var/lib/kafka/data-1/kafka-log3`.
    pub log_dir: String,
}

/// What a proposal moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProposalScope {
    /// Balance the whole cluster (`rebalance`).
    Full {
        /// Balance the disks within each broker instead of the brokers (`rebalance_disk`).
        rebalance_disk: bool,
        /// Most replica movements between the disks of a broker at a time, when positive.
        concurrent_intra_broker_partition_movements: Option<i32>,
    },
    /// Move replicas onto these brokers (`add_broker`).
    AddBrokers(Vec<i32>),
    /// Move every replica off these brokers (`remove_broker`).
    RemoveBrokers(Vec<i32>),
    /// Move every replica off these log directories (`remove_disks`). Only the directories
    /// are sent: Cruise Control's goals and limits do not apply to this endpoint.
    RemoveDisks(Vec<BrokerLogDir>),
}

/// Settings of a proposal besides its scope; an unset or non-positive limit leaves Cruise
/// Control's default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProposalOptions {
    /// Goals in decreasing priority; empty for Cruise Control's default goals.
    pub goals: Vec<String>,
    /// Whether the proposal may leave hard goals out.
    pub skip_hard_goal_check: bool,
    /// A regular expression of topics whose replicas stay where they are.
    pub excluded_topics: Option<String>,
    /// Most replica movements into or out of one broker at a time.
    pub concurrent_partition_movements_per_broker: Option<i32>,
    /// Most leadership movements at a time.
    pub concurrent_leader_movements: Option<i32>,
    /// Replication throttle while moving, in bytes per second.
    pub replication_throttle: Option<i64>,
    /// Class names of the strategies ordering the movements.
    pub replica_movement_strategies: Vec<String>,
}

/// A proposal to ask Cruise Control for (dry run) or to carry out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProposalRequest {
    /// What is moved.
    pub scope: ProposalScope,
    /// How.
    pub options: ProposalOptions,
}

impl ProposalRequest {
    /// The endpoint of the request.
    pub fn endpoint(&self) -> Endpoint {
        match self.scope {
            ProposalScope::Full { .. } => Endpoint::Rebalance,
            ProposalScope::AddBrokers(_) => Endpoint::AddBroker,
            ProposalScope::RemoveBrokers(_) => Endpoint::RemoveBroker,
            ProposalScope::RemoveDisks(_) => Endpoint::RemoveDisks,
        }
    }

    /// The HTTP request: a dry run only computes the proposal, otherwise Cruise Control
    /// carries it out once computed. Answers carry the load of every broker before and after
    /// (`verbose`), but for `remove_disks`.
    pub fn to_request(&self, dry_run: bool) -> Request {
        let request = self
            .endpoint()
            .request()
            .param("dryrun", dry_run.to_string());
        let ProposalScope::RemoveDisks(dirs) = &self.scope else {
            return self.with_options(request);
        };
        let dirs: Vec<String> = dirs
            .iter()
            .map(|dir| format!("{}-{}", dir.broker, dir.log_dir))
            .collect();
        request.param("brokerid_and_logdirs", dirs.join(","))
    }

    /// `request` with the verbose flag, the scope's parameters and the options.
    fn with_options(&self, request: Request) -> Request {
        let options = &self.options;
        let mut request = request.param("verbose", "true").param(
            "skip_hard_goal_check",
            options.skip_hard_goal_check.to_string(),
        );
        match &self.scope {
            ProposalScope::Full {
                rebalance_disk,
                concurrent_intra_broker_partition_movements,
            } => {
                request = request.param("rebalance_disk", rebalance_disk.to_string());
                if let Some(limit) = positive(*concurrent_intra_broker_partition_movements) {
                    request = request.param("concurrent_intra_broker_partition_movements", limit);
                }
            }
            ProposalScope::AddBrokers(brokers) | ProposalScope::RemoveBrokers(brokers) => {
                request = request.param("brokerid", join(brokers));
            }
            ProposalScope::RemoveDisks(_) => {}
        }
        if let Some(topics) = &options.excluded_topics {
            request = request.param("excluded_topics", topics.clone());
        }
        if !options.replica_movement_strategies.is_empty() {
            request = request.param(
                "replica_movement_strategies",
                options.replica_movement_strategies.join(","),
            );
        }
        if let Some(limit) = positive(options.concurrent_partition_movements_per_broker) {
            request = request.param("concurrent_partition_movements_per_broker", limit);
        }
        if let Some(limit) = positive(options.concurrent_leader_movements) {
            request = request.param("concurrent_leader_movements", limit);
        }
        if let Some(throttle) = options.replication_throttle.filter(|value| *value > 0) {
            request = request.param("replication_throttle", throttle.to_string());
        }
        if !options.goals.is_empty() {
            request = request.param("goals", options.goals.join(","));
        }
        request
    }
}

/// `value` as text when it is positive.
fn positive(value: Option<i32>) -> Option<String> {
    value
        .filter(|value| *value > 0)
        .map(|value| value.to_string())
}

/// Numbers joined with commas.
fn join(numbers: &[i32]) -> String {
    numbers
        .iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `GET state?json=true&substates=executor`.
pub fn executor_state() -> Request {
    Endpoint::State.request().param("substates", "executor")
}

/// `GET user_tasks?json=true&user_task_ids=<id>&fetch_completed_task=true`: the task with its
/// original answer once it has one.
pub fn user_task(task_id: &str) -> Request {
    Endpoint::UserTasks
        .request()
        .param("user_task_ids", task_id)
        .param("fetch_completed_task", "true")
}

/// `POST stop_proposal_execution?json=true`.
pub fn stop_execution() -> Request {
    Endpoint::StopProposalExecution.request()
}

/// `POST topic_configuration?json=true&topic=<regex>&replication_factor=<n>&dryrun=false`:
/// change the replication factor of the topics matching `topics` (a regular expression).
pub fn change_replication_factor(topics: &str, replication_factor: i32) -> Request {
    Endpoint::TopicConfiguration
        .request()
        .param("topic", topics)
        .param("replication_factor", replication_factor.to_string())
        .param("dryrun", "false")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(request: &Request) -> Vec<(&str, &str)> {
        request
            .query
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect()
    }

    #[test]
    fn a_full_rebalance_sends_every_option_that_is_set() {
        let request = ProposalRequest {
            scope: ProposalScope::Full {
                rebalance_disk: true,
                concurrent_intra_broker_partition_movements: Some(2),
            },
            options: ProposalOptions {
                goals: vec!["RackAwareGoal".to_owned(), "CpuCapacityGoal".to_owned()],
                skip_hard_goal_check: true,
                excluded_topics: Some("archive-.*".to_owned()),
                concurrent_partition_movements_per_broker: Some(5),
                concurrent_leader_movements: Some(1000),
                replication_throttle: Some(104_857_600),
                replica_movement_strategies: vec!["a.B".to_owned(), "c.D".to_owned()],
            },
        };
        let http = request.to_request(true);
        assert_eq!(http.method, Method::Post);
        assert_eq!(http.path, "/kafkacruisecontrol/rebalance");
        assert_eq!(
            query(&http),
            [
                ("json", "true"),
                ("dryrun", "true"),
                ("verbose", "true"),
                ("skip_hard_goal_check", "true"),
                ("rebalance_disk", "true"),
                ("concurrent_intra_broker_partition_movements", "2"),
                ("excluded_topics", "archive-.*"),
                ("replica_movement_strategies", "a.B,c.D"),
                ("concurrent_partition_movements_per_broker", "5"),
                ("concurrent_leader_movements", "1000"),
                ("replication_throttle", "104857600"),
                ("goals", "RackAwareGoal,CpuCapacityGoal"),
            ]
        );
    }

    #[test]
    fn unset_and_zero_limits_are_left_to_cruise_control() {
        let request = ProposalRequest {
            scope: ProposalScope::AddBrokers(vec![3, 4]),
            options: ProposalOptions {
                concurrent_leader_movements: Some(0),
                replication_throttle: Some(0),
                ..ProposalOptions::default()
            },
        };
        let http = request.to_request(false);
        assert_eq!(http.path, "/kafkacruisecontrol/add_broker");
        assert_eq!(
            query(&http),
            [
                ("json", "true"),
                ("dryrun", "false"),
                ("verbose", "true"),
                ("skip_hard_goal_check", "false"),
                ("brokerid", "3,4"),
            ]
        );
        let remove = ProposalRequest {
            scope: ProposalScope::RemoveBrokers(vec![5]),
            options: ProposalOptions::default(),
        };
        assert_eq!(
            remove.to_request(true).path,
            "/kafkacruisecontrol/remove_broker"
        );
        assert!(query(&remove.to_request(true)).contains(&("brokerid", "5")));
    }

    #[test]
    fn removing_disks_sends_broker_and_log_directory_pairs_only() {
        let request = ProposalRequest {
            scope: ProposalScope::RemoveDisks(vec![
                BrokerLogDir {
                    broker: 1,
                    log_dir: "/var/lib/kafka/data-0/kafka-log1".to_owned(),
                },
                BrokerLogDir {
                    broker: 2,
                    log_dir: "/var/lib/kafka/data-1/kafka-log2".to_owned(),
                },
            ]),
            options: ProposalOptions {
                goals: vec!["ignored".to_owned()],
                ..ProposalOptions::default()
            },
        };
        let http = request.to_request(true);
        assert_eq!(http.path, "/kafkacruisecontrol/remove_disks");
        assert_eq!(
            query(&http),
            [
                ("json", "true"),
                ("dryrun", "true"),
                (
                    "brokerid_and_logdirs",
                    "1-/var/lib/kafka/data-0/kafka-log1,2-/var/lib/kafka/data-1/kafka-log2"
                ),
            ]
        );
    }

    #[test]
    fn the_other_endpoints_ask_what_the_operators_need() {
        let state = executor_state();
        assert_eq!(
            (state.method, state.target().as_str()),
            (
                Method::Get,
                "/kafkacruisecontrol/state?json=true&substates=executor"
            )
        );
        let task = user_task("a-b");
        assert_eq!(
            task.target(),
            "/kafkacruisecontrol/user_tasks?json=true&user_task_ids=a-b&fetch_completed_task=true"
        );
        let stop = stop_execution();
        assert_eq!(
            (stop.method, stop.target().as_str()),
            (
                Method::Post,
                "/kafkacruisecontrol/stop_proposal_execution?json=true"
            )
        );
        assert_eq!(
            change_replication_factor("orders|payments", 3).target(),
            "/kafkacruisecontrol/topic_configuration?json=true&topic=orders%7Cpayments&replication_factor=3&dryrun=false"
        );
    }
}
