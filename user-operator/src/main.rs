//! The `strimzi-user-operator` binary: reads Strimzi's environment variables (its only
//! argument is `--version`), logs its version and configuration, reads the Secrets it
//! connects to Kafka with, serves `/healthy`, `/ready` and `/metrics`, and runs the KafkaUser
//! controller until SIGTERM.

use std::sync::Arc;

use anyhow::Context;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use strimzi_operator_common::kafka::AdminClient;
use strimzi_operator_common::runtime::{OperatorRuntime, answer_command_line, exit_status};
use strimzi_user_operator::config::UserOperatorConfig;

fn main() -> std::process::ExitCode {
    if let Some(answered) = answer_command_line(strimzi_user_operator::NAME) {
        return answered;
    }
    exit_status(strimzi_user_operator::NAME, run_from_env())
}

#[tokio::main]
async fn run_from_env() -> anyhow::Result<()> {
    run(UserOperatorConfig::from_env()?).await
}

/// The Secret `name` of the CA namespace, which must exist.
async fn read_secret(client: &kube::Client, namespace: &str, name: &str) -> anyhow::Result<Secret> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    api.get_opt(name)
        .await
        .with_context(|| format!("reading Secret {namespace}/{name}"))?
        .with_context(|| format!("Secret {namespace}/{name} does not exist"))
}

async fn run(config: UserOperatorConfig) -> anyhow::Result<()> {
    strimzi_operator_common::logging::start(
        strimzi_user_operator::NAME,
        &config.operator,
        strimzi_user_operator::LOGGING_FILE,
        &config,
    )
    .context("logging")?;
    let client = kube::Client::try_default()
        .await
        .context("Kubernetes client")?;
    let namespace = &config.ca.namespace;
    let cluster_ca = match &config.kafka.cluster_ca_cert_secret {
        Some(name) => Some(read_secret(&client, namespace, name).await?),
        None => None,
    };
    let operator_key = match &config.kafka.operator_key_secret {
        Some(name) => Some(read_secret(&client, namespace, name).await?),
        None => None,
    };
    let (admin_config, ignored) = strimzi_user_operator::connection::admin_config(
        &config.kafka,
        cluster_ca.as_ref(),
        operator_key.as_ref(),
    )?;
    if !ignored.is_empty() {
        tracing::warn!(
            ?ignored,
            "admin client properties that this operator does not use"
        );
    }
    let admin = Arc::new(AdminClient::new(admin_config).context("Kafka admin client")?);
    let port = config.operator.http_port;
    let runtime =
        OperatorRuntime::new(client, config.operator.clone(), strimzi_user_operator::NAME)
            .context("metrics")?;
    runtime
        .serve_http(([0, 0, 0, 0], port).into())
        .await
        .context("HTTP server")?;
    runtime.shutdown_on_signals();
    let (_kafka, controller) = strimzi_user_operator::controller(&runtime, Arc::new(config), admin)
        .context("controller")?;
    runtime.run(vec![controller]).await?;
    Ok(())
}
