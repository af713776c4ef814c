//! Prometheus metrics of the stand-in (its own names, `kafka_cruisecontrol_standin_*`; the JMX
//! exporter's rules in `metrics-config.json` do not apply to a program without JMX), served on
//! port 9404 when `CRUISE_CONTROL_JMX_EXPORTER_ENABLED=true`.

use std::fmt::Write;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::routing::get;

use crate::service::{StandIn, TaskStatus};

/// The metrics now, in Prometheus' text format.
pub fn render(standin: &StandIn) -> String {
    let view = standin.monitor_view();
    let execution = standin.execution();
    let tasks = standin.tasks();
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, values: &[(&str, f64)]| {
        let _ = writeln!(out, "# HELP kafka_cruisecontrol_standin_{name} {help}");
        let _ = writeln!(out, "# TYPE kafka_cruisecontrol_standin_{name} gauge");
        for (labels, value) in values {
            let _ = writeln!(out, "kafka_cruisecontrol_standin_{name}{labels} {value}");
        }
    };
    gauge(
        "valid_windows",
        "Valid metric windows of the load monitor.",
        &[("", f64::from(view.valid_windows))],
    );
    gauge(
        "monitored_partitions",
        "Partitions seen by the last sample.",
        &[("", view.partitions as f64)],
    );
    gauge(
        "execution_in_progress",
        "1 while a proposal is being carried out.",
        &[("", if execution.is_some() { 1.0 } else { 0.0 })],
    );
    let (total, finished, in_progress) = execution
        .as_ref()
        .map_or((0, 0, 0), |e| (e.total, e.finished, e.in_progress));
    gauge(
        "execution_partition_movements",
        "Partition movements of the execution in progress.",
        &[
            ("{state=\"total\"}", total as f64),
            ("{state=\"finished\"}", finished as f64),
            ("{state=\"in_progress\"}", in_progress as f64),
        ],
    );
    let count = |status: TaskStatus| tasks.iter().filter(|t| t.status == status).count() as f64;
    gauge(
        "user_tasks",
        "User tasks kept, by status.",
        &[
            ("{status=\"Active\"}", count(TaskStatus::Active)),
            ("{status=\"InExecution\"}", count(TaskStatus::InExecution)),
            ("{status=\"Completed\"}", count(TaskStatus::Completed)),
            (
                "{status=\"CompletedWithError\"}",
                count(TaskStatus::CompletedWithError),
            ),
        ],
    );
    out
}

/// `GET /metrics`.
pub fn router(standin: Arc<StandIn>) -> Router {
    Router::new()
        .route(
            "/metrics",
            get(|State(standin): State<Arc<StandIn>>| async move { render(&standin) }),
        )
        .with_state(standin)
}
