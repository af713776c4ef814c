//! The `strimzi-topic-operator` binary: reads Strimzi's environment variables (its only
//! argument is `--version`), logs its version and configuration, serves `/healthy`, `/ready`
//! and `/metrics`, and runs the KafkaTopic controller until SIGTERM.

use std::sync::Arc;

use anyhow::Context;
use strimzi_operator_common::kafka::AdminClient;
use strimzi_operator_common::runtime::{OperatorRuntime, answer_command_line, exit_status};
use strimzi_topic_operator::config::TopicOperatorConfig;

fn main() -> std::process::ExitCode {
    if let Some(answered) = answer_command_line(strimzi_topic_operator::NAME) {
        return answered;
    }
    exit_status(strimzi_topic_operator::NAME, run_from_env())
}

#[tokio::main]
async fn run_from_env() -> anyhow::Result<()> {
    run(TopicOperatorConfig::from_env()?).await
}

async fn run(config: TopicOperatorConfig) -> anyhow::Result<()> {
    strimzi_operator_common::logging::start(
        strimzi_topic_operator::NAME,
        &config.operator,
        strimzi_topic_operator::LOGGING_FILE,
        &config,
    )
    .context("logging")?;
    for unused in &config.kafka.unused_settings {
        tracing::warn!("{unused}");
    }
    let client = kube::Client::try_default()
        .await
        .context("Kubernetes client")?;
    let admin = Arc::new(AdminClient::new(config.kafka.clone()).context("Kafka admin client")?);
    let port = config.operator.http_port;
    let runtime = OperatorRuntime::new(
        client,
        config.operator.clone(),
        strimzi_topic_operator::NAME,
    )
    .context("metrics")?;
    runtime
        .serve_http(([0, 0, 0, 0], port).into())
        .await
        .context("HTTP server")?;
    runtime.shutdown_on_signals();
    if !config.skip_cluster_config_review {
        let admin = admin.clone();
        tokio::spawn(async move {
            if let Err(error) = strimzi_topic_operator::review_cluster_config(admin.as_ref()).await
            {
                tracing::warn!(%error, "reviewing the Kafka cluster config");
            }
        });
    }
    let (_kafka, controller) =
        strimzi_topic_operator::controller(&runtime, &config, admin).context("controller")?;
    runtime.run(vec![controller]).await?;
    Ok(())
}
