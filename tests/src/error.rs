//! What can go wrong while setting up the test environment. Every message is one readable
//! line: what failed, where its log is, and how to fix it.

use std::path::PathBuf;
use std::time::Duration;

/// Why the test environment, or a part of it, could not be started.
#[derive(Debug, thiserror::Error)]
pub enum TestEnvError {
    /// A program the environment needs is not installed.
    #[error("{program} not found: {install}")]
    MissingTool {
        /// The program, e.g. `kube-apiserver`.
        program: String,
        /// The command that installs it.
        install: String,
    },
    /// A component could not be started at all.
    #[error("starting {component} failed: {message} (log: {})", log.display())]
    Start {
        /// The component, e.g. `etcd`.
        component: String,
        /// What went wrong.
        message: String,
        /// The component's log file.
        log: PathBuf,
    },
    /// A component started but did not become ready in time, or exited early.
    #[error("{component} not ready after {waited:?}: {message} (log: {})", log.display())]
    NotReady {
        /// The component.
        component: String,
        /// How long we waited.
        waited: Duration,
        /// The last thing observed, e.g. an exit status or a failed request.
        message: String,
        /// The component's log file.
        log: PathBuf,
    },
    /// A provisioning script (building or installing a missing piece) failed.
    #[error("provisioning with {script} failed: {message}")]
    Provisioning {
        /// The script, e.g. `tests/testenv/install.sh`.
        script: String,
        /// Its last error line, which names the component and its log.
        message: String,
    },
    /// A certificate or key could not be generated.
    #[error("generating a test certificate failed: {0}")]
    Certificate(String),
    /// A file or folder of the environment could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl TestEnvError {
    /// A stable CamelCase word for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::MissingTool { .. } => "MissingTool",
            Self::Start { .. } => "StartFailed",
            Self::NotReady { .. } => "NotReady",
            Self::Provisioning { .. } => "ProvisioningFailed",
            Self::Certificate(_) => "CertificateFailed",
            Self::Io { .. } => "IoFailed",
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
