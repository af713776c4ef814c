//! The `strimzi-cluster-operator` binary: reads Strimzi's environment variables (its only
//! argument is `--version`), logs its version and configuration, serves `/healthy`, `/ready`
//! and `/metrics`, takes part in leader election, and runs the Kafka and StrimziPodSet
//! controllers in the configured namespaces until SIGTERM.

use anyhow::Context;
use strimzi_cluster_operator::config::{
    ClusterOperatorConfig, LOGGING_FILE, NAME, OPERATOR_NAMES, set_ignored_variables,
};
use strimzi_operator_common::runtime::{OperatorRuntime, answer_command_line, exit_status};

fn main() -> std::process::ExitCode {
    if let Some(answered) = answer_command_line(NAME) {
        return answered;
    }
    let result = ClusterOperatorConfig::from_env()
        .map_err(anyhow::Error::new)
        .and_then(|config| {
            tokio::runtime::Builder::new_multi_thread()
                .thread_stack_size(strimzi_cluster_operator::THREAD_STACK_SIZE)
                .enable_all()
                .build()
                .context("Tokio runtime")?
                .block_on(run(config))
        });
    exit_status(NAME, result)
}

async fn run(mut config: ClusterOperatorConfig) -> anyhow::Result<()> {
    strimzi_operator_common::logging::start(NAME, &config.operator, LOGGING_FILE, &config)
        .context("logging")?;
    for ignored in set_ignored_variables(|name| std::env::var_os(name).is_some()) {
        tracing::warn!(
            "{} is set but has no effect here: {}",
            ignored.name,
            ignored.why
        );
    }
    let client = kube::Client::try_default()
        .await
        .context("Kubernetes client")?;
    config.model.platform = strimzi_cluster_operator::platform::discover(&client)
        .await
        .context("API discovery")?;
    tracing::info!(
        openshift = config.model.platform.openshift,
        "platform features"
    );
    if config.install_crds {
        use strimzi_cluster_operator::crds::{CrdAction, install};
        for (crd, action) in install(&client, NAME)
            .await
            .context("installing the CRDs")?
        {
            match action {
                CrdAction::Keep(why) => tracing::warn!(%crd, "CRD left alone: {why}"),
                CrdAction::Create => tracing::info!(%crd, "CRD created"),
                CrdAction::Upgrade(from) => tracing::info!(%crd, %from, "CRD applied"),
            }
        }
    }
    let port = config.operator.http_port;
    let runtime =
        OperatorRuntime::new(client, config.operator.clone(), OPERATOR_NAMES).context("metrics")?;
    runtime
        .serve_http(([0, 0, 0, 0], port).into())
        .await
        .context("HTTP server")?;
    runtime.shutdown_on_signals();
    tracing::info!(namespaces = ?config.operator.namespaces, "starting the cluster operator");
    let controllers =
        strimzi_cluster_operator::controllers(&runtime, &config).context("controllers")?;
    runtime.run(controllers).await?;
    Ok(())
}
