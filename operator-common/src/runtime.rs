//! What one operator process shares between its controllers: client, configuration,
//! metrics, writer, Event recorder, caches, readiness and leadership; and how it runs them
//! until SIGTERM, finishing in-flight reconciliations within a bound and releasing the
//! Lease.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use kube::core::NamespaceResourceScope;
use kube::{Api, Client, Resource};
use tokio_util::sync::CancellationToken;

use crate::apply::Applier;
use crate::cache::Caches;
use crate::config::OperatorConfig;
use crate::events::EventPublisher;
use crate::http::{HttpError, Readiness};
use crate::leader::{LeaderElectionError, Leadership};
use crate::metrics::{Metrics, MetricsError};

/// The exit status of an operator binary for `result`: success, or failure after printing
/// the error (with its causes, `{:#}`) as one line `<name>: <error>` on stderr.
pub fn exit_status<E: std::fmt::Display>(
    name: &str,
    result: Result<(), E>,
) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{name}: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// What the command line of one of our binaries asks for. They are configured through
/// environment variables (Strimzi's), so the only argument they take is `--version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandLine {
    /// No argument: the program runs.
    Run,
    /// `--version` or `-V`: the program prints its name and version and exits.
    PrintVersion,
}

/// An argument our binaries do not take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown argument {0:?}: the program is configured through environment variables and takes only --version"
)]
pub struct UnknownArgument(pub String);

impl CommandLine {
    /// Reads the arguments after the program's name; the first one that is neither
    /// `--version` nor `-V` is an [`UnknownArgument`].
    pub fn parse(
        arguments: impl IntoIterator<Item = std::ffi::OsString>,
    ) -> Result<Self, UnknownArgument> {
        let mut command = Self::Run;
        for argument in arguments {
            if argument == "--version" || argument == "-V" {
                command = Self::PrintVersion;
            } else {
                return Err(UnknownArgument(argument.to_string_lossy().into_owned()));
            }
        }
        Ok(command)
    }
}

/// Answers the process's command line for the binary `name` before it reads its
/// environment: for `--version` (or `-V`) prints `<name> <version>` ([`crate::VERSION`]) on
/// stdout and returns success; for any other argument prints one line naming it on stderr
/// (as [`exit_status`] does) and returns failure; without arguments returns `None`, and the
/// program runs.
pub fn answer_command_line(name: &str) -> Option<std::process::ExitCode> {
    match CommandLine::parse(std::env::args_os().skip(1)) {
        Ok(CommandLine::Run) => None,
        Ok(CommandLine::PrintVersion) => {
            println!("{name} {}", crate::VERSION);
            Some(std::process::ExitCode::SUCCESS)
        }
        Err(unknown) => Some(exit_status(name, Err(unknown))),
    }
}

/// What an operator calls itself towards the API server. From a `&str`, one name for both.
#[derive(Clone, Copy, Debug)]
pub struct OperatorNames<'a> {
    /// The field manager of its writes, and the name of its caches.
    pub name: &'a str,
    /// The `reportingController` of its Events (`kubectl get events --field-selector
    /// reportingController=<it>` finds them).
    pub events_controller: &'a str,
}

impl<'a> From<&'a str> for OperatorNames<'a> {
    fn from(name: &'a str) -> Self {
        Self {
            name,
            events_controller: name,
        }
    }
}

/// The shared runtime of one operator process; cloning shares it.
#[derive(Clone)]
pub struct OperatorRuntime {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    config: OperatorConfig,
    metrics: Metrics,
    applier: Applier,
    events: EventPublisher,
    caches: Caches,
    readiness: Readiness,
    leadership: Leadership,
    /// The leader election task, until [`OperatorRuntime::run`] waits for it to end.
    election: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Cancelled to stop taking work.
    shutdown: CancellationToken,
    /// Cancelled once the controllers stopped, to release the Lease.
    stop_election: CancellationToken,
}

impl std::fmt::Debug for OperatorRuntime {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("OperatorRuntime")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl OperatorRuntime {
    /// The runtime of the operator of `names` (its field manager and Event reporter),
    /// starting leader election when configured. Every request of `client` made through the
    /// runtime counts its reads in the metrics ([`crate::api_reads`]). Must be called inside
    /// a Tokio runtime.
    pub fn new<'a>(
        client: Client,
        config: OperatorConfig,
        names: impl Into<OperatorNames<'a>>,
    ) -> Result<Self, MetricsError> {
        Self::with_metrics(client, config, names, Metrics::new()?)
    }

    /// Like [`Self::new`] with metrics of the caller's.
    pub fn with_metrics<'a>(
        client: Client,
        config: OperatorConfig,
        names: impl Into<OperatorNames<'a>>,
        metrics: Metrics,
    ) -> Result<Self, MetricsError> {
        let client = crate::api_reads::count_reads(client, metrics.clone());
        let stop_election = CancellationToken::new();
        let election = config.leader_election.as_ref().map(|election| {
            crate::leader::elect(client.clone(), election.clone(), stop_election.clone())
        });
        Ok(Self::assemble(
            client,
            config,
            names.into(),
            metrics,
            election,
            stop_election,
        ))
    }

    /// The runtime following `election` (the Leadership and the task of a leader election
    /// stopped by `stop_election`), or always leading without one.
    fn assemble(
        client: Client,
        config: OperatorConfig,
        names: OperatorNames<'_>,
        metrics: Metrics,
        election: Option<(Leadership, tokio::task::JoinHandle<()>)>,
        stop_election: CancellationToken,
    ) -> Self {
        let identity = config
            .leader_election
            .as_ref()
            .map(|election| election.identity.clone());
        let (leadership, election) = match election {
            Some((leadership, task)) => (leadership, Some(task)),
            None => (Leadership::always(), None),
        };
        Self {
            inner: Arc::new(Inner {
                applier: Applier::new(client.clone(), names.name, metrics.clone()),
                events: EventPublisher::new(client.clone(), names.events_controller, identity),
                client,
                config,
                metrics,
                caches: Caches::new(names.name),
                readiness: Readiness::default(),
                leadership,
                election: Mutex::new(election),
                shutdown: CancellationToken::new(),
                stop_election,
            }),
        }
    }

    /// The Kubernetes client; its reads are counted in [`Self::metrics`].
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The configuration.
    pub fn config(&self) -> &OperatorConfig {
        &self.inner.config
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The writer every controller writes with.
    pub fn applier(&self) -> &Applier {
        &self.inner.applier
    }

    /// The shared Event recorder.
    pub fn events(&self) -> &EventPublisher {
        &self.inner.events
    }

    /// The shared caches.
    pub fn caches(&self) -> &Caches {
        &self.inner.caches
    }

    /// Whether the caches have synced.
    pub fn readiness(&self) -> &Readiness {
        &self.inner.readiness
    }

    /// Whether this replica leads.
    pub fn leadership(&self) -> &Leadership {
        &self.inner.leadership
    }

    /// Cancelled when the operator is to stop; cancel it to stop the operator.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// An API of `K` in `namespace`, or in all namespaces.
    pub fn api<K>(&self, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    {
        match namespace {
            Some(namespace) => Api::namespaced(self.inner.client.clone(), namespace),
            None => Api::all(self.inner.client.clone()),
        }
    }

    /// Serves `/healthy`, `/ready` and `/metrics` on `address` until shutdown; the bound
    /// address.
    pub async fn serve_http(&self, address: SocketAddr) -> Result<SocketAddr, HttpError> {
        let (bound, _task) = crate::http::serve(
            address,
            self.inner.metrics.clone(),
            self.inner.readiness.clone(),
            self.inner.shutdown.clone(),
        )
        .await?;
        Ok(bound)
    }

    /// Cancels the shutdown token on SIGTERM or SIGINT.
    pub fn shutdown_on_signals(&self) {
        let shutdown = self.inner.shutdown.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            tracing::info!("shutdown requested");
            shutdown.cancel();
        });
    }

    /// Starts the caches and runs `controllers` (built with [`crate::controller::ControllerBuilder`]) until
    /// shutdown: then no new reconciliation starts, those in flight get the configured
    /// shutdown grace to finish and are abandoned after it, and the Lease is released.
    ///
    /// Should the leader election end while the operator runs (its task panicked), the
    /// replica has stopped leading already; the operator then stops the same way and returns
    /// [`LeaderElectionError::Ended`], for the process to exit non-zero and be restarted.
    pub async fn run(
        self,
        controllers: Vec<BoxFuture<'static, ()>>,
    ) -> Result<(), LeaderElectionError> {
        let caches = self.inner.caches.start(&self.inner.readiness);
        let cache_tasks: Vec<_> = caches.into_iter().map(tokio::spawn).collect();
        let controllers = futures::future::join_all(controllers);
        tokio::pin!(controllers);
        let mut election = self
            .inner
            .election
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let failure = {
            let election_ended = async {
                match election.as_mut() {
                    Some(task) => task.await,
                    None => std::future::pending().await,
                }
            };
            tokio::pin!(election_ended);
            tokio::select! {
                _ = &mut controllers => None,
                () = self.inner.shutdown.cancelled() => {
                    self.finish(&mut controllers).await;
                    None
                }
                ended = &mut election_ended => {
                    let reason = match ended {
                        Ok(()) => "the election task returned".to_owned(),
                        Err(error) => error.to_string(),
                    };
                    tracing::error!(%reason, "leader election ended; stopping the operator");
                    self.inner.shutdown.cancel();
                    self.finish(&mut controllers).await;
                    Some(LeaderElectionError::Ended { reason })
                }
            }
        };
        for task in cache_tasks {
            task.abort();
        }
        if let Some(failure) = failure {
            return Err(failure);
        }
        self.inner.stop_election.cancel();
        if let Some(election) = election {
            // Ends once the Lease is released.
            if let Err(error) = election.await {
                tracing::warn!(%error, "leader election task");
            }
        }
        Ok(())
    }

    /// Gives the reconciliations in flight the shutdown grace to finish.
    async fn finish(&self, controllers: impl Future<Output = Vec<()>>) {
        if tokio::time::timeout(self.inner.config.shutdown_grace, controllers)
            .await
            .is_err()
        {
            tracing::warn!("reconciliations still running after the shutdown grace; abandoned");
        }
    }
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut terminate), Ok(mut interrupt)) => {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = interrupt.recv() => {}
            }
        }
        _ => {
            tracing::warn!("cannot listen for signals; stopping on Ctrl-C only");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::time::Duration;

    use futures::FutureExt;

    use super::*;

    #[test]
    fn the_command_line_takes_only_the_version_flag() {
        let parse = |arguments: &[&str]| CommandLine::parse(arguments.iter().map(Into::into));
        assert_eq!(parse(&[]), Ok(CommandLine::Run));
        assert_eq!(parse(&["--version"]), Ok(CommandLine::PrintVersion));
        assert_eq!(parse(&["-V"]), Ok(CommandLine::PrintVersion));
        for (arguments, unknown) in [
            (&["--help"][..], "--help"),
            (&["-v"][..], "-v"),
            (&["--version", "extra"][..], "extra"),
            (&["run", "--version"][..], "run"),
        ] {
            let error = parse(arguments).unwrap_err();
            assert_eq!(error, UnknownArgument(unknown.to_owned()));
            let message = error.to_string();
            assert!(message.contains(&format!("{unknown:?}")), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
    }

    #[tokio::test]
    async fn an_operator_whose_leader_election_fails_stops_with_an_error() {
        let client =
            Client::try_from(kube::Config::new("http://127.0.0.1:9".parse().unwrap())).unwrap();
        let mut config = OperatorConfig::from_lookup(|name| {
            (name == crate::config::NAMESPACE).then(|| "ns".to_owned())
        })
        .unwrap();
        config.shutdown_grace = Duration::from_millis(200);
        let runtime = OperatorRuntime::assemble(
            client,
            config,
            "test-operator".into(),
            Metrics::new().unwrap(),
            Some(crate::leader::tests::failing_election()),
            CancellationToken::new(),
        );
        let leadership = runtime.leadership().clone();
        let shutdown = runtime.shutdown_token();
        // A controller that acts for as long as the replica leads.
        let controller = async move { leadership.lost().await }.boxed();
        let forever = std::future::pending::<()>().boxed();
        let ran = tokio::time::timeout(
            Duration::from_secs(10),
            runtime.run(vec![controller, forever]),
        )
        .await
        .expect("the operator stops once its leader election failed");
        assert!(
            matches!(ran, Err(LeaderElectionError::Ended { .. })),
            "{ran:?}"
        );
        assert!(shutdown.is_cancelled());
    }
}
