//! Leader election through a `coordination.k8s.io/v1` Lease, as client-go and Strimzi do it:
//! the leader renews the Lease every retry period and stops leading when it could not renew
//! within the renew deadline; a standby takes the Lease only after it saw no renewal for a
//! whole lease duration. As the renew deadline is shorter than the lease duration, a leader
//! that loses the Lease stops before another replica starts.
//!
//! A replica whose election task ends while it runs (a panic) no longer leads: it cannot
//! renew the Lease any more, so [`Leadership::lost`] fires and [`Leadership::is_leading`]
//! turns false at once, and [`crate::runtime::OperatorRuntime::run`] stops the operator with
//! [`LeaderElectionError::Ended`] (the process exits non-zero and its Deployment restarts it).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::api_error::ApiCallError;
use crate::config::LeaderElectionConfig;

/// Reading or writing the Lease failed.
#[derive(Debug, thiserror::Error)]
pub enum LeaderElectionError {
    /// The API server refused or could not be reached.
    #[error(transparent)]
    Api(#[from] ApiCallError),
    /// The election task ended while the operator ran (it panicked): the replica can no
    /// longer renew the Lease and must stop acting.
    #[error("leader election ended while the operator was running: {reason}")]
    Ended {
        /// How the task ended.
        reason: String,
    },
}

impl crate::ErrorReason for LeaderElectionError {
    fn reason(&self) -> &'static str {
        "LeaderElectionError"
    }
}

/// Whether this replica leads now; cloned freely. Without leader election it always leads.
/// With it, the replica leads while the election task says so and runs: once the task has
/// ended, whatever it said last, the replica no longer leads.
#[derive(Debug, Clone)]
pub struct Leadership {
    leading: watch::Receiver<bool>,
    /// The sender of a replica that runs alone, kept so that its leadership never ends.
    alone: Option<Arc<watch::Sender<bool>>>,
}

impl Leadership {
    /// Leadership of a replica that runs alone: it always leads.
    pub fn always() -> Self {
        let (sender, leading) = watch::channel(true);
        Self {
            leading,
            alone: Some(Arc::new(sender)),
        }
    }

    /// Whether the election still runs (always, for a replica that runs alone).
    fn running(&self) -> bool {
        self.alone.is_some() || self.leading.has_changed().is_ok()
    }

    /// Whether this replica leads now.
    pub fn is_leading(&self) -> bool {
        *self.leading.borrow() && self.running()
    }

    /// Waits until this replica leads (at once if it does; never once the election ended).
    pub async fn acquired(&self) {
        let mut leading = self.leading.clone();
        if leading.wait_for(|leading| *leading).await.is_err() || !self.running() {
            std::future::pending::<()>().await;
        }
    }

    /// Waits until this replica stops leading (never returns while it keeps leading): the
    /// election says so, or it ended.
    pub async fn lost(&self) {
        let mut leading = self.leading.clone();
        // An error means the election ended: nothing renews the Lease any more.
        let _ = leading.wait_for(|leading| !*leading).await;
    }
}

/// The record of the Lease that matters to tell whether its holder is alive.
#[derive(Debug, Clone, PartialEq)]
struct Record {
    holder: Option<String>,
    renew_time: Option<MicroTime>,
    transitions: Option<i32>,
    /// How long the holder's claim lasts, as the holder wrote it.
    duration_seconds: Option<i32>,
}

impl Record {
    fn of(lease: &Lease) -> Self {
        let spec = lease.spec.clone().unwrap_or_default();
        Self {
            holder: spec.holder_identity.filter(|holder| !holder.is_empty()),
            renew_time: spec.renew_time,
            transitions: spec.lease_transitions,
            duration_seconds: spec.lease_duration_seconds,
        }
    }
}

/// One replica's side of the election.
struct Elector {
    api: Api<Lease>,
    config: LeaderElectionConfig,
    /// The Lease record last seen and when it was first seen, by this replica's clock.
    observed: Option<(Record, Instant)>,
}

/// Starts electing with `config`. The returned task renews the Lease while leading and
/// releases it when `shutdown` is cancelled.
pub fn elect(
    client: Client,
    config: LeaderElectionConfig,
    shutdown: CancellationToken,
) -> (Leadership, tokio::task::JoinHandle<()>) {
    let api = Api::namespaced(client, &config.lease_namespace);
    let elector = Elector {
        api,
        config,
        observed: None,
    };
    spawn_election(|sender| elector.run(sender, shutdown))
}

/// Spawns the election `run`, which says through the sender it is given whether this replica
/// leads, and returns the [`Leadership`] following it with the task.
pub(crate) fn spawn_election<Run>(
    run: impl FnOnce(watch::Sender<bool>) -> Run,
) -> (Leadership, tokio::task::JoinHandle<()>)
where
    Run: Future<Output = ()> + Send + 'static,
{
    let (sender, leading) = watch::channel(false);
    let task = tokio::spawn(run(sender));
    (
        Leadership {
            leading,
            alone: None,
        },
        task,
    )
}

impl Elector {
    async fn run(mut self, sender: watch::Sender<bool>, shutdown: CancellationToken) {
        let mut last_renewal: Option<Instant> = None;
        loop {
            let started = Instant::now();
            let leading = *sender.borrow();
            // A leader may try only until its renew deadline; a standby a deadline per try.
            let budget = match last_renewal.filter(|_| leading) {
                Some(renewed) => self.config.renew_deadline.saturating_sub(renewed.elapsed()),
                None => self.config.renew_deadline,
            };
            let attempt = tokio::select! {
                () = shutdown.cancelled() => break,
                attempt = tokio::time::timeout(budget, self.try_acquire_or_renew()) => attempt,
            };
            match attempt {
                Ok(Ok(true)) => {
                    last_renewal = Some(started);
                    if !leading {
                        tracing::info!(identity = %self.config.identity, lease = %self.config.lease_name, "became leader");
                    }
                    sender.send_replace(true);
                }
                Ok(Ok(false)) => {
                    if leading {
                        tracing::warn!(identity = %self.config.identity, "another replica holds the lease; stopped leading");
                    }
                    sender.send_replace(false);
                }
                Ok(Err(error)) => tracing::warn!(%error, "leader election"),
                Err(_) => {
                    tracing::warn!(identity = %self.config.identity, "leader election: the API server did not answer in time")
                }
            }
            let expired =
                last_renewal.is_none_or(|renewed| renewed.elapsed() >= self.config.renew_deadline);
            if *sender.borrow() && expired {
                tracing::warn!(identity = %self.config.identity, "could not renew the lease in time; stopped leading");
                sender.send_replace(false);
            }
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(self.config.retry_period) => {}
            }
        }
        if *sender.borrow() {
            sender.send_replace(false);
            if let Err(error) = self.release().await {
                tracing::warn!(%error, "releasing the lease");
            }
        }
    }

    /// The error of `verb` on the Lease.
    fn error(&self, verb: &'static str, source: kube::Error) -> LeaderElectionError {
        ApiCallError::of::<Lease>(
            verb,
            &self.config.lease_namespace,
            &self.config.lease_name,
            source,
        )
        .into()
    }

    async fn read(&self) -> Result<Option<Lease>, LeaderElectionError> {
        self.api
            .get_opt(&self.config.lease_name)
            .await
            .map_err(|error| self.error("get", error))
    }

    fn lease_seconds(&self) -> i32 {
        i32::try_from(self.config.lease_duration.as_secs_f64().ceil() as u64).unwrap_or(i32::MAX)
    }

    /// Takes or renews the Lease; `Ok(false)` when another live replica holds it or won a
    /// race for it.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, LeaderElectionError> {
        let now = MicroTime(jiff::Timestamp::now());
        let identity = self.config.identity.clone();
        let Some(mut lease) = self.read().await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.lease_name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(identity),
                    lease_duration_seconds: Some(self.lease_seconds()),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return self.write(self.api.create(&PostParams::default(), &lease).await);
        };
        let record = Record::of(&lease);
        let seen_at = match &self.observed {
            Some((observed, at)) if *observed == record => *at,
            _ => {
                let at = Instant::now();
                self.observed = Some((record.clone(), at));
                at
            }
        };
        let held_by_me = record.holder.as_deref() == Some(identity.as_str());
        // The holder's own duration counts, measured on this replica's clock from when
        // this replica first saw the current record.
        let valid_for = record
            .duration_seconds
            .and_then(|seconds| u64::try_from(seconds).ok())
            .map_or(self.config.lease_duration, Duration::from_secs);
        if !held_by_me && record.holder.is_some() && seen_at.elapsed() < valid_for {
            return Ok(false);
        }
        let mut spec = lease.spec.take().unwrap_or_default();
        if !held_by_me {
            spec.acquire_time = Some(now.clone());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.holder_identity = Some(identity);
        spec.lease_duration_seconds = Some(self.lease_seconds());
        spec.renew_time = Some(now);
        lease.spec = Some(spec);
        // The resource version read above makes this fail if anyone wrote in between.
        let result = self
            .api
            .replace(&self.config.lease_name, &PostParams::default(), &lease)
            .await;
        self.write(result)
    }

    fn write(&mut self, result: Result<Lease, kube::Error>) -> Result<bool, LeaderElectionError> {
        match result {
            Ok(lease) => {
                self.observed = Some((Record::of(&lease), Instant::now()));
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(self.error("write", error)),
        }
    }

    /// Gives the Lease up so that a standby can take it at once.
    async fn release(&self) -> Result<(), LeaderElectionError> {
        let Some(mut lease) = self.read().await? else {
            return Ok(());
        };
        let mut spec = lease.spec.take().unwrap_or_default();
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(jiff::Timestamp::now()));
        lease.spec = Some(spec);
        self.api
            .replace(&self.config.lease_name, &PostParams::default(), &lease)
            .await
            .map(|_| ())
            .map_err(|error| self.error("release", error))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn alone_always_leads() {
        let leadership = Leadership::always();
        assert!(leadership.is_leading());
        leadership.acquired().await;
        let lost = tokio::time::timeout(Duration::from_millis(50), leadership.lost()).await;
        assert!(lost.is_err(), "a lone replica never loses leadership");
    }

    /// An election task that takes the lead and then panics, as an elector failure would.
    pub(crate) fn failing_election() -> (Leadership, tokio::task::JoinHandle<()>) {
        spawn_election(|sender| async move {
            sender.send_replace(true);
            tokio::time::sleep(Duration::from_millis(100)).await;
            panic!("injected elector failure");
        })
    }

    #[tokio::test]
    async fn a_leader_whose_election_fails_stops_leading() {
        let (leadership, task) = failing_election();
        leadership.acquired().await;
        assert!(leadership.is_leading());
        let lost = tokio::time::timeout(Duration::from_secs(5), leadership.lost()).await;
        assert!(
            lost.is_ok(),
            "the leadership is lost once the election failed"
        );
        assert!(task.await.is_err(), "the election task panicked");
        assert!(!leadership.is_leading());
        let again = tokio::time::timeout(Duration::from_millis(50), leadership.acquired()).await;
        assert!(again.is_err(), "an ended election never leads again");
    }
}
