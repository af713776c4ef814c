//! The command line, and running one command.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::connection::{Cluster, Target};
use crate::error::PluginError;
use crate::options::{CaChoice, OperatorLocation, Output, RebalanceAction, RollTarget};

/// `kubectl strimzi`: see what a change to a Kafka cluster would restart, and why, before you
/// apply it; read its status and certificates; pause, resume, roll and rebalance it; collect a
/// support bundle.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-strimzi",
    bin_name = "kubectl strimzi",
    version,
    after_long_help = AFTER_HELP
)]
pub struct Cli {
    /// The kubeconfig file (else KUBECONFIG, else ~/.kube/config, else in-cluster).
    #[arg(long, global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (else its current context).
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// The namespace of the Kafka cluster (else the context's).
    #[arg(short, long, global = true)]
    pub namespace: Option<String>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The end of `--help`: exit statuses, permissions and examples, as a man page has them.
const AFTER_HELP: &str = "\
Exit status:
  0  done (plan: the change would be applied)
  1  the API server failed a request, or a local file could not be written
  2  the command, its input file or its kubeconfig is not usable, or a named resource is missing
  3  the user's credentials lack a permission (the message names the verb and resource)
  4  plan: the operator would refuse the change (the reason is printed)

Permissions:
  plan, status, certs and support-bundle only read (get, list; plan and certs read Secrets,
  whose data is never printed); pause, resume, roll, rebalance and certs --renew patch the
  annotations of one kind of object each.

Examples:
  kubectl strimzi plan -f my-cluster.yaml
  kubectl strimzi plan my-cluster --set spec.kafka.config.log.retention.hours=72 -o json
  kubectl strimzi status my-cluster
  kubectl strimzi roll pool broker
  kubectl strimzi certs my-cluster --renew cluster-ca
  kubectl strimzi support-bundle my-cluster --output-file bundle.tar";

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// What applying a changed Kafka (or its node pools) would do: the objects that change,
    /// the pods that restart in the order the operator restarts them and why, the changes
    /// applied without a restart, and what would be refused. Reads only; needs get/list on
    /// the cluster's objects, Secrets included (their data is never printed).
    Plan {
        /// A YAML file with the changed Kafka and/or KafkaNodePools (several documents;
        /// `-` reads standard input).
        #[arg(short = 'f', long = "filename", conflicts_with = "kafka")]
        file: Option<PathBuf>,
        /// The Kafka to change with `--set` (its live spec otherwise unchanged).
        #[arg(required_unless_present = "file")]
        kafka: Option<String>,
        /// `path=value` changes to the Kafka, e.g. `spec.kafka.config.num.io.threads=16`
        /// (the value is read as YAML; under `config` the rest of the path is one key).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// How to print the plan.
        #[arg(short, long, value_enum, default_value_t)]
        output: Output,
        /// Where the cluster operator runs.
        #[command(flatten)]
        operator: OperatorLocation,
    },
    /// A Kafka cluster's nodes by pool and role, versions, readiness, conditions, CA and
    /// node certificate expiry, pending restarts and rebalances.
    Status {
        /// The Kafka.
        kafka: String,
        /// How to print it.
        #[arg(short, long, value_enum, default_value_t)]
        output: Output,
    },
    /// Pause the reconciliation of a Kafka (`strimzi.io/pause-reconciliation=true`).
    Pause {
        /// The Kafka.
        kafka: String,
    },
    /// Resume the reconciliation of a paused Kafka.
    Resume {
        /// The Kafka.
        kafka: String,
    },
    /// Restart pods with Strimzi's manual rolling update (`strimzi.io/manual-rolling-update`):
    /// the operator restarts them safely, one after the other.
    Roll {
        /// What to restart.
        #[arg(value_enum)]
        target: RollTarget,
        /// Its name (a pod, a KafkaNodePool or a Kafka).
        name: String,
    },
    /// Approve, refresh or stop a KafkaRebalance.
    Rebalance {
        /// What to ask.
        #[arg(value_enum)]
        action: RebalanceAction,
        /// The KafkaRebalance.
        name: String,
    },
    /// When the CA and node certificates of a Kafka cluster expire; `--renew` asks the
    /// operator to renew a CA (`strimzi.io/force-renew`).
    Certs {
        /// The Kafka.
        kafka: String,
        /// Renew this CA's certificate at the next reconciliation.
        #[arg(long, value_enum)]
        renew: Option<CaChoice>,
        /// How to print the table.
        #[arg(short, long, value_enum, default_value_t)]
        output: Output,
    },
    /// Print this command line's man page (roff), for `man -l -` or a `man1` folder.
    #[command(hide = true)]
    Man,
    /// Collect a Kafka cluster's resources, status, Events and operator logs into a tar file.
    /// Secrets are listed by name and keys only: their data is never included.
    SupportBundle {
        /// The Kafka.
        kafka: String,
        /// The tar file to write.
        #[arg(long = "output-file", default_value = "strimzi-support-bundle.tar")]
        output_file: PathBuf,
        /// Where the cluster operator runs.
        #[command(flatten)]
        operator: OperatorLocation,
    },
}

impl Cli {
    /// Where to connect.
    pub fn target(&self) -> Target {
        Target {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
        }
    }

    /// Runs the command: what it prints, and its exit status.
    pub async fn run(self) -> Result<Printed, PluginError> {
        if let Command::Man = self.command {
            return Ok(Printed {
                text: man_page()?,
                exit_code: 0,
            });
        }
        let cluster = Cluster::connect(&self.target()).await?;
        let text = match self.command {
            Command::Plan {
                file,
                kafka,
                set,
                output,
                operator,
            } => {
                let request = crate::plan::PlanRequest {
                    file,
                    kafka,
                    set,
                    operator,
                };
                let plan = crate::plan::plan(&cluster, &request).await?;
                return Ok(Printed {
                    text: crate::plan::render(&plan, output),
                    // A pipeline's check fails on a change the operator would refuse.
                    exit_code: if plan.refused.is_some() { REFUSED } else { 0 },
                });
            }
            Command::Status { kafka, output } => {
                crate::status::status(&cluster, &kafka, output).await
            }
            Command::Pause { kafka } => crate::annotate::pause(&cluster, &kafka, true).await,
            Command::Resume { kafka } => crate::annotate::pause(&cluster, &kafka, false).await,
            Command::Roll { target, name } => crate::annotate::roll(&cluster, target, &name).await,
            Command::Rebalance { action, name } => {
                crate::annotate::rebalance(&cluster, action, &name).await
            }
            Command::Certs {
                kafka,
                renew,
                output,
            } => crate::certs::certs(&cluster, &kafka, renew, output).await,
            Command::SupportBundle {
                kafka,
                output_file,
                operator,
            } => crate::bundle::support_bundle(&cluster, &kafka, &output_file, &operator).await,
            Command::Man => man_page(),
        }?;
        Ok(Printed { text, exit_code: 0 })
    }
}

/// The man page of the command line, with a section per command.
pub fn man_page() -> Result<String, PluginError> {
    use clap::CommandFactory;
    let command = Cli::command();
    let mut page = Vec::new();
    let written = clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .and_then(|()| {
            for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
                let title = format!("kubectl-strimzi-{}", sub.get_name());
                let sub = sub
                    .clone()
                    .bin_name(format!("kubectl strimzi {}", sub.get_name()));
                clap_mangen::Man::new(sub).title(title).render(&mut page)?;
            }
            Ok(())
        });
    written.map_err(|source| PluginError::File {
        what: "writing the man page".to_owned(),
        source,
    })?;
    Ok(String::from_utf8_lossy(&page).into_owned())
}

/// The exit status of `plan` when the operator would refuse the change.
pub const REFUSED: u8 = 4;

/// What a command prints on standard output, and the binary's exit status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    /// The output.
    pub text: String,
    /// The exit status: 0, or [`REFUSED`].
    pub exit_code: u8,
}
