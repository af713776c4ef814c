//! The `strimzi-kafka-init` binary: the Kafka pods' init container. Reads `NODE_NAME`,
//! `RACK_TOPOLOGY_KEY`, `EXTERNAL_ADDRESS` and `INIT_FOLDER` (its only argument is
//! `--version`), reads its node with the pod's service account, writes the rack ID and the
//! node's addresses, and exits (1 with one line on stderr when it cannot).

use anyhow::Context;
use strimzi_cluster_operator::kafka_init::{KafkaInitConfig, run};
use strimzi_operator_common::runtime::{answer_command_line, exit_status};

const NAME: &str = "strimzi-kafka-init";

fn main() -> std::process::ExitCode {
    if let Some(answered) = answer_command_line(NAME) {
        return answered;
    }
    let result = KafkaInitConfig::from_lookup(|name| std::env::var(name).ok())
        .map_err(anyhow::Error::new)
        .and_then(|config| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("Tokio runtime")?
                .block_on(async {
                    let client = kube::Client::try_default()
                        .await
                        .context("Kubernetes client")?;
                    for path in run(client, &config).await? {
                        println!("{NAME}: wrote {}", path.display());
                    }
                    anyhow::Ok(())
                })
        });
    exit_status(NAME, result)
}
