//! Child processes of the test environment (etcd, the Kubernetes components, kwok, Kafka).
//!
//! Each child writes its output to a log file and is stopped when its [`ManagedProcess`] is
//! dropped. So that none outlives the test binary even when it panics or is killed, children
//! are started through `setpriv --pdeathsig KILL` from one thread that lives as long as the
//! process: Linux kills such a child when the thread that started it ends.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::error::TestEnvError;

/// What to run and where its output goes.
#[derive(Clone, Debug)]
pub struct ProcessSpec {
    /// Name used in messages and for the log file, e.g. `kube-apiserver`.
    pub name: String,
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment variables.
    pub env: BTreeMap<OsString, OsString>,
    /// Where stdout and stderr are written.
    pub log: PathBuf,
    /// A command the program is run through, e.g. `nsenter --net=<path> --` to start it in
    /// a network namespace; empty to run it directly.
    pub launcher: Vec<OsString>,
}

impl ProcessSpec {
    /// A process named `name` running `program`, logging to `<log_dir>/<name>.log`.
    pub fn new(name: &str, program: impl Into<PathBuf>, log_dir: &Path) -> Self {
        Self {
            name: name.to_owned(),
            program: program.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            log: log_dir.join(format!("{name}.log")),
            launcher: Vec::new(),
        }
    }

    /// Runs the program through `launcher` (see [`crate::network::NodeNetwork`]).
    pub fn launched_by<I, S>(mut self, launcher: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.launcher = launcher.into_iter().map(Into::into).collect();
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }
}

/// Whether a child should die with the process that started it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifetime {
    /// Killed when this process exits, however it exits (tests).
    Tied,
    /// Keeps running after this process exits (`strimzi-testenv up --detach`).
    Detached,
}

/// A running child process, stopped when dropped (unless detached).
#[derive(Debug)]
pub struct ManagedProcess {
    name: String,
    log: PathBuf,
    child: Mutex<Child>,
    lifetime: Lifetime,
}

/// How long a child gets to stop after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How many last lines of its log the error for a component that exited early quotes.
const LOG_TAIL_LINES: usize = 4;

impl ManagedProcess {
    /// Starts `spec`.
    pub fn start(spec: &ProcessSpec, lifetime: Lifetime) -> Result<Self, TestEnvError> {
        if let Some(parent) = spec.log.parent() {
            std::fs::create_dir_all(parent).map_err(|error| TestEnvError::io(parent, error))?;
        }
        let log = File::create(&spec.log).map_err(|error| TestEnvError::io(&spec.log, error))?;
        let log_err = log
            .try_clone()
            .map_err(|error| TestEnvError::io(&spec.log, error))?;
        let mut words: Vec<OsString> = match lifetime {
            Lifetime::Tied => ["setpriv", "--pdeathsig", "KILL", "--"]
                .map(OsString::from)
                .to_vec(),
            Lifetime::Detached => Vec::new(),
        };
        words.extend(spec.launcher.iter().cloned());
        words.push(spec.program.clone().into_os_string());
        let mut command = Command::new(&words[0]);
        command
            .args(&words[1..])
            .args(&spec.args)
            .envs(&spec.env)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err);
        let child = match lifetime {
            Lifetime::Tied => spawn_from_keeper(command),
            Lifetime::Detached => command.spawn(),
        }
        .map_err(|error| TestEnvError::Start {
            component: spec.name.clone(),
            message: format!("cannot run {}: {error}", spec.program.display()),
            log: spec.log.clone(),
        })?;
        Ok(Self {
            name: spec.name.clone(),
            log: spec.log.clone(),
            child: Mutex::new(child),
            lifetime,
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.lock().id()
    }

    /// The log file.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The exit status, if the process has exited.
    pub fn exited(&self) -> Option<ExitStatus> {
        self.lock().try_wait().ok().flatten()
    }

    /// Waits until `ready` returns `Ok`, failing early when the process exits and with
    /// [`TestEnvError::NotReady`] after `timeout`. `ready` returns what it observed on failure.
    pub fn wait_ready(
        &self,
        timeout: Duration,
        mut ready: impl FnMut() -> Result<(), String>,
    ) -> Result<(), TestEnvError> {
        let started = Instant::now();
        let mut last = String::from("not checked yet");
        while started.elapsed() < timeout {
            if let Some(error) = self.exited_early(started.elapsed()) {
                return Err(error);
            }
            match ready() {
                Ok(()) => return Ok(()),
                Err(observed) => last = observed,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(self.not_ready(started.elapsed(), last))
    }

    /// The error for a process that has exited while it should be running, with the last
    /// lines of its log (CI shows the error, not the log file); `None` while it runs.
    pub fn exited_early(&self, waited: Duration) -> Option<TestEnvError> {
        let status = self.exited()?;
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().filter(|line| !line.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join(" | ");
        Some(self.not_ready(
            waited,
            format!("exited with {status}; its log ends: {tail}"),
        ))
    }

    /// The error for a process that did not become ready.
    pub fn not_ready(&self, waited: Duration, message: String) -> TestEnvError {
        TestEnvError::NotReady {
            component: self.name.clone(),
            waited,
            message,
            log: self.log.clone(),
        }
    }

    /// Kills the process at once (SIGKILL, no chance to clean up, as the OOM killer or a
    /// failed node ends it) and waits until it is gone.
    pub fn kill(&self) {
        let mut child = self.lock();
        // It may have exited meanwhile, which is fine.
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Stops the process: SIGTERM, then SIGKILL after a grace period.
    pub fn stop(&self) {
        let mut child = self.lock();
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        if let Ok(pid) = i32::try_from(child.id()) {
            // Our own child; it may have exited meanwhile, which is fine.
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Child> {
        self.child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for ManagedProcess {
    fn drop(&mut self) {
        // A failing test shows whether its children had died and what they last
        // complained about: CI keeps only the test's output, not the log files.
        if std::thread::panicking() {
            if let Some(status) = self.exited() {
                eprintln!("{} had exited before the test ended: {status}", self.name);
            }
            let complaints = last_complaints(&self.log, LOG_LINES_SHOWN_ON_FAILURE);
            if !complaints.is_empty() {
                eprintln!(
                    "last warnings and errors of {} ({}):\n{}",
                    self.name,
                    self.log.display(),
                    complaints.join("\n")
                );
            }
        }
        if self.lifetime == Lifetime::Tied {
            self.stop();
        }
    }
}

/// A child process killed (and reaped) when this is dropped: a program a test starts and
/// leaves running until the test ends.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// How many warning or error lines of a child's log a failing test shows.
const LOG_LINES_SHOWN_ON_FAILURE: usize = 25;

/// The last `count` lines of the log at `path` that report a warning, an error or a panic,
/// without terminal colours.
fn last_complaints(path: &Path, count: usize) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<String> = text
        .lines()
        .map(without_colours)
        .filter(|line| {
            line.contains(" WARN ") || line.contains(" ERROR ") || line.contains("panicked at")
        })
        .collect();
    lines[lines.len().saturating_sub(count)..].to_vec()
}

/// `line` without ANSI escape sequences (`ESC [ ... letter`).
fn without_colours(line: &str) -> String {
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // Skip up to and including the sequence's final letter.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// Whether process `pid` runs (exists and is not a zombie waiting to be reaped).
pub fn is_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// A request to the keeper thread: a command to spawn and where to send the result.
type SpawnRequest = (Command, Sender<std::io::Result<Child>>);

/// Spawns `command` from the keeper thread, which never ends before the process does, so
/// that `--pdeathsig` fires only when this process exits.
fn spawn_from_keeper(command: Command) -> std::io::Result<Child> {
    static KEEPER: OnceLock<Mutex<Sender<SpawnRequest>>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (sender, requests) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("testenv-process-keeper".to_owned())
            .spawn(move || {
                for (mut command, reply) in requests {
                    let _ = reply.send(command.spawn());
                }
                // The sender lives in a static, so the loop above never ends.
            })
            .map(|_| ())
            .unwrap_or_else(|error| panic!("cannot start the process keeper thread: {error}"));
        Mutex::new(sender)
    });
    let (reply, result) = mpsc::channel();
    keeper
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .send((command, reply))
        .map_err(|_| std::io::Error::other("process keeper thread is gone"))?;
    result
        .recv()
        .map_err(|_| std::io::Error::other("process keeper thread did not answer"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleeper(dir: &Path) -> ProcessSpec {
        ProcessSpec::new("sleeper", "sleep", dir).args(["300"])
    }

    #[test]
    fn dropping_a_process_stops_it() {
        let dir = tempfile::tempdir().unwrap();
        let process = ManagedProcess::start(&sleeper(dir.path()), Lifetime::Tied).unwrap();
        let pid = process.pid();
        assert!(is_running(pid));
        drop(process);
        assert!(!is_running(pid), "process {pid} survived its handle");
    }

    #[test]
    fn a_process_that_exits_is_not_ready_and_names_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let spec = ProcessSpec::new("quitter", "sh", dir.path()).args(["-c", "echo bye; exit 3"]);
        let process = ManagedProcess::start(&spec, Lifetime::Tied).unwrap();
        let error = process
            .wait_ready(Duration::from_secs(5), || Err("not yet".to_owned()))
            .unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("quitter not ready"), "{message}");
        assert!(message.contains("exit status: 3"), "{message}");
        assert!(message.contains("quitter.log"), "{message}");
        assert_eq!(std::fs::read_to_string(process.log()).unwrap(), "bye\n");
    }

    #[test]
    fn a_missing_program_is_a_start_error() {
        let dir = tempfile::tempdir().unwrap();
        let spec = ProcessSpec::new("ghost", "/nonexistent/ghost", dir.path());
        // setpriv starts, then fails to run the program: the child exits at once.
        let process = ManagedProcess::start(&spec, Lifetime::Tied).unwrap();
        let error = process.wait_ready(Duration::from_secs(5), || Err(String::new()));
        assert!(error.is_err());
        let detached = ManagedProcess::start(&spec, Lifetime::Detached).unwrap_err();
        assert_eq!(detached.reason(), "StartFailed");
    }

    #[test]
    fn a_failing_test_sees_the_last_warnings_and_errors_without_colours() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("operator.log");
        let lines = [
            "\u{1b}[2m2026-11-24T16:53:48Z\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m started",
            "\u{1b}[2m2026-11-24T16:53:49Z\u{1b}[0m \u{1b}[33m WARN\u{1b}[0m first",
            "2026-11-24T16:53:50Z ERROR second",
            "thread 'main' panicked at src/main.rs:1:1:",
        ];
        std::fs::write(&log, lines.join("\n")).unwrap();
        assert_eq!(
            last_complaints(&log, 2),
            [
                "2026-11-24T16:53:50Z ERROR second",
                "thread 'main' panicked at src/main.rs:1:1:"
            ]
        );
        assert_eq!(
            last_complaints(&log, 5)[0],
            "2026-11-24T16:53:49Z  WARN first"
        );
        assert!(last_complaints(&dir.path().join("missing.log"), 5).is_empty());
    }
}
