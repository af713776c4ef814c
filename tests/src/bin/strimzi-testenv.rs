//! `strimzi-testenv`: starts the local test environment (Kubernetes control plane with fake
//! nodes and a Kafka broker, or with real nodes; our CRDs) for people and demos, and stops it
//! again.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use strimzi_tests::environment::{Nodes, TestEnv};
use strimzi_tests::process::Lifetime;

/// Local Kubernetes control plane and Kafka broker for trying the operators.
#[derive(Parser)]
#[command(version)]
struct Args {
    #[command(subcommand)]
    command: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Start the environment, write DIR/kubeconfig and DIR/env, and run until interrupted.
    Up {
        /// Folder for the kubeconfig, the env file and the process id.
        #[arg(long, default_value = "target/testenv")]
        dir: PathBuf,
        /// Return once the environment is ready and leave it running; stop it with `down`.
        #[arg(long)]
        detach: bool,
        /// Run this many real nodes (kubelet, containerd) in a network namespace instead of
        /// fake kwok nodes and a local Kafka broker.
        #[arg(long, value_name = "N")]
        real_nodes: Option<usize>,
    },
    /// Stop an environment started with `up --detach`.
    Down {
        /// The folder given to `up`.
        #[arg(long, default_value = "target/testenv")]
        dir: PathBuf,
    },
}

const READY_TIMEOUT: Duration = Duration::from_secs(300);
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

fn main() -> ExitCode {
    let result = match Args::parse().command {
        Action::Up {
            dir,
            detach: false,
            real_nodes,
        } => up(&dir, real_nodes),
        Action::Up {
            dir,
            detach: true,
            real_nodes,
        } => detach(&dir, real_nodes),
        Action::Down { dir } => down(&dir),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("strimzi-testenv: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the environment in the foreground until SIGINT or SIGTERM.
fn up(dir: &Path, real_nodes: Option<usize>) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let env_file = dir.join("env");
    let _ = std::fs::remove_file(&env_file);
    let nodes = match real_nodes {
        Some(count) => {
            println!("starting the control plane and {count} real node(s) ...");
            Nodes::Real(count)
        }
        None => {
            println!("starting the control plane and Kafka ...");
            Nodes::Fake
        }
    };
    let started = Instant::now();
    let env = TestEnv::start_with(Lifetime::Tied, "up", nodes)?;
    if nodes == Nodes::Fake {
        // Tests start the broker on first use; people use it through the env file.
        env.start_kafka()
            .map_err(|error| anyhow::anyhow!("local Kafka broker: {error}"))?;
    }
    let kubeconfig = dir.join("kubeconfig");
    std::fs::copy(env.control_plane().kubeconfig(), &kubeconfig)
        .with_context(|| format!("writing {}", kubeconfig.display()))?;
    let pids: Vec<String> = env.pids().iter().map(u32::to_string).collect();
    std::fs::write(dir.join("pids"), pids.join("\n") + "\n")?;
    std::fs::write(dir.join("pid"), format!("{}\n", std::process::id()))?;
    // Written last: its presence means the environment is ready.
    let env_text = env.env_file().replace(
        &env.control_plane().kubeconfig().display().to_string(),
        &kubeconfig.display().to_string(),
    );
    std::fs::write(&env_file, &env_text)?;
    println!(
        "ready in {:.1} s; logs in {}\n\n{env_text}\nuse it with:  set -a; . {}; set +a; kubectl get nodes\nstop with Ctrl-C",
        started.elapsed().as_secs_f64(),
        env.log_dir().display(),
        env_file.display()
    );
    env.runtime().block_on(async {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        anyhow::Ok(())
    })?;
    println!("stopping ...");
    let _ = std::fs::remove_file(&env_file);
    drop(env);
    Ok(())
}

/// Starts `up` in a session of its own and waits until it is ready.
fn detach(dir: &Path, real_nodes: Option<usize>) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let env_file = dir.join("env");
    let _ = std::fs::remove_file(&env_file);
    let log_path = dir.join("testenv.log");
    let log = std::fs::File::create(&log_path)?;
    let mut child = Command::new("setsid")
        .arg(std::env::current_exe()?)
        .args(["up", "--dir"])
        .arg(dir)
        .args(real_nodes.map(|count| format!("--real-nodes={count}")))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .context("running setsid (util-linux)")?;
    let started = Instant::now();
    while !env_file.exists() {
        if let Some(status) = child.try_wait()? {
            // The reason is in the log's last line; the log may not outlive its folder.
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            bail!(
                "the environment stopped with {status}: {}; see {}",
                log.lines().last().unwrap_or("no output"),
                log_path.display()
            );
        }
        if started.elapsed() > READY_TIMEOUT {
            bail!(
                "the environment was not ready after {READY_TIMEOUT:?}; see {}",
                log_path.display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    print!("{}", std::fs::read_to_string(&env_file)?);
    println!(
        "running in the background (log: {}); stop it with: strimzi-testenv down --dir {}",
        log_path.display(),
        dir.display()
    );
    Ok(())
}

/// Stops the `up` process recorded in `dir`, which stops every component.
fn down(dir: &Path) -> anyhow::Result<()> {
    let pid_file = dir.join("pid");
    let text = std::fs::read_to_string(&pid_file)
        .with_context(|| format!("no environment recorded in {}", pid_file.display()))?;
    let pid: i32 = text.trim().parse().context("pid file")?;
    let process = Pid::from_raw(pid);
    if kill(process, None).is_err() {
        println!("environment in {} is not running", dir.display());
        return Ok(());
    }
    kill(process, Signal::SIGTERM).context("stopping the environment")?;
    let started = Instant::now();
    while kill(process, None).is_ok() {
        if started.elapsed() > STOP_TIMEOUT {
            kill(process, Signal::SIGKILL)?;
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = std::fs::remove_file(&pid_file);
    println!("stopped the environment in {}", dir.display());
    Ok(())
}
