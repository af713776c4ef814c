//! A client of Cruise Control's REST API (Cruise Control 2.5, as Strimzi deploys it):
//! `https://<host>:9090/kafkacruisecontrol/<endpoint>`, with HTTP basic authentication of
//! Jetty's users and a server certificate of the Kafka cluster's CA; plain HTTP and no
//! authentication when Cruise Control is configured so (`webserver.ssl.enable`,
//! `webserver.security.enable`).
//!
//! How Cruise Control answers, and how the client reads it:
//!
//! - A proposal request (`rebalance`, `add_broker`, `remove_broker`, `remove_disks`, and
//!   `topic_configuration`) answers 200 with the result, or 202 while still computing; both
//!   carry the `User-Task-ID` header of the task Cruise Control tracks the request with
//!   ([`ProposalAnswer`]). The task's result is fetched later from `user_tasks`
//!   ([`CruiseControlClient::user_task`]) or by sending the same request again with the task's
//!   ID ([`CruiseControlClient::proposal_of_task`]).
//! - Errors answer an error status with `{"errorMessage": ...}` ([`CruiseControlError`]);
//!   a load monitor that has not collected enough metric windows is
//!   [`CruiseControlError::NotEnoughData`], which goes away by waiting.
//!
//! [`request`] builds the HTTP requests and [`response`] reads the answers; both are pure.
//! The exchange itself is [`crate::http_client`]'s.

mod error;
pub mod request;
pub mod response;

use std::time::Duration;

use base64::Engine;

pub use error::CruiseControlError;
pub use request::{BrokerLogDir, Endpoint, ProposalOptions, ProposalRequest, ProposalScope};
pub use response::{
    BrokerLoad, ExecutorState, OptimizationResult, ProposalAnswer, ProposalSummary, TaskStatus,
    UserTask,
};

use crate::http_client::{self, Exchange, Request, Response, Server};

/// The port of Cruise Control's REST API.
pub const REST_API_PORT: u16 = 9090;
/// The most of an answer read: a verbose proposal of a large cluster lists every movement.
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// A user of the REST API (HTTP basic authentication).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user name.
    pub user: String,
    /// The password.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &crate::redact::Redacted)
            .finish()
    }
}

/// A client of one Cruise Control.
#[derive(Clone, Debug)]
pub struct CruiseControlClient {
    server: Server,
    credentials: Option<Credentials>,
    timeout: Duration,
}

impl CruiseControlClient {
    /// A client of the Cruise Control at `server` (TLS or plain, as `server.tls` says),
    /// authenticating with `credentials` when given, each call bounded by `timeout`.
    pub fn new(server: Server, credentials: Option<Credentials>, timeout: Duration) -> Self {
        Self {
            server,
            credentials,
            timeout,
        }
    }

    /// The state of the executor: whether a proposal is being carried out, and how far.
    pub async fn executor_state(&self) -> Result<ExecutorState, CruiseControlError> {
        let response = self.send(request::executor_state()).await?;
        response::executor_state(&response)
    }

    /// Asks for the proposal `proposal` describes: computed only with `dry_run`, else also
    /// carried out once computed.
    pub async fn request_proposal(
        &self,
        proposal: &ProposalRequest,
        dry_run: bool,
    ) -> Result<ProposalAnswer, CruiseControlError> {
        let response = self.send(proposal.to_request(dry_run)).await?;
        response::proposal(proposal.endpoint(), &response)
    }

    /// The answer of the earlier request `proposal` (with the same `dry_run`) that created
    /// task `task_id`: the request again, with the task's ID.
    pub async fn proposal_of_task(
        &self,
        proposal: &ProposalRequest,
        dry_run: bool,
        task_id: &str,
    ) -> Result<ProposalAnswer, CruiseControlError> {
        let request = proposal
            .to_request(dry_run)
            .header(request::USER_TASK_ID_HEADER, task_id);
        let response = self.send(request).await?;
        response::proposal(proposal.endpoint(), &response)
    }

    /// The task `task_id` with its result once it has one; `None` when Cruise Control does
    /// not know it (it restarted, or the task expired).
    pub async fn user_task(&self, task_id: &str) -> Result<Option<UserTask>, CruiseControlError> {
        let response = self.send(request::user_task(task_id)).await?;
        response::user_task(task_id, &response)
    }

    /// Stops the execution in progress: movements under way finish, the others are dropped.
    pub async fn stop_execution(&self) -> Result<(), CruiseControlError> {
        let response = self.send(request::stop_execution()).await?;
        response::accepted(Endpoint::StopProposalExecution, &response)
    }

    /// Changes the replication factor of the topics matching `topics` (a regular expression)
    /// to `replication_factor`, moving replicas as needed.
    pub async fn change_replication_factor(
        &self,
        topics: &str,
        replication_factor: i32,
    ) -> Result<ProposalAnswer, CruiseControlError> {
        let request = request::change_replication_factor(topics, replication_factor);
        let response = self.send(request).await?;
        response::proposal(Endpoint::TopicConfiguration, &response)
    }

    /// Sends `request` with the credentials.
    async fn send(&self, mut request: Request) -> Result<Response, CruiseControlError> {
        if let Some(credentials) = &self.credentials {
            let token = base64::engine::general_purpose::STANDARD
                .encode(format!("{}:{}", credentials.user, credentials.password));
            request = request.header("Authorization", format!("Basic {token}"));
        }
        let bounds = Exchange {
            timeout: self.timeout,
            max_bytes: MAX_ANSWER_BYTES,
        };
        Ok(http_client::send(&self.server, &request, bounds).await?)
    }
}
