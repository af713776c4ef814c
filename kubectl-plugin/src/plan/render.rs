//! The plan as text for people, or as one JSON document.

use std::fmt::Write;

use super::predict::{Plan, PlannedRestart};
use crate::options::Output;

/// `plan` printed as `output` says.
pub fn render(plan: &Plan, output: Output) -> String {
    match output {
        Output::Json => crate::text::json(plan),
        Output::Text => text(plan),
    }
}

/// One restart or reload: `my-cluster-broker-1 (node 1, broker): PodHasOldRevision: it runs an
/// older definition`, one reason a line.
fn restart_lines(out: &mut String, index: Option<usize>, restart: &PlannedRestart) {
    let number = index
        .map(|index| format!("{}. ", index + 1))
        .unwrap_or_else(|| "- ".to_owned());
    let _ = writeln!(
        out,
        "  {number}{} (node {}, {})",
        restart.pod, restart.node_id, restart.roles
    );
    for reason in &restart.reasons {
        let _ = writeln!(out, "       {}: {}", reason.reason, reason.message);
    }
    if let Some(note) = &restart.note {
        let _ = writeln!(out, "       ({note})");
    }
}

/// The plan as text.
fn text(plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Plan for Kafka {}/{}", plan.namespace, plan.kafka);
    if let Some(refused) = &plan.refused {
        let _ = writeln!(
            out,
            "\nRefused: the operator would not apply this change.\n  {}: {}",
            refused.reason, refused.message
        );
        return out;
    }
    for warning in &plan.warnings {
        let _ = writeln!(out, "\nWarning {}: {}", warning.reason, warning.message);
    }
    if !plan.certificate_authorities.is_empty() {
        let _ = writeln!(out, "\nCertificate authorities:");
        for line in &plan.certificate_authorities {
            let _ = writeln!(out, "  - {line}");
        }
    }
    let _ = writeln!(out, "\nObjects:");
    if plan.objects.is_empty() {
        let _ = writeln!(out, "  no change");
    }
    for object in &plan.objects {
        let sign = match object.action {
            "create" => "+",
            "delete" => "-",
            _ => "~",
        };
        let _ = writeln!(out, "  {sign} {} {}", object.kind, object.name);
        for change in &object.changes {
            let _ = writeln!(out, "      {change}");
        }
    }
    for (title, pods) in [
        ("Nodes added", &plan.nodes_added),
        ("Nodes removed", &plan.nodes_removed),
    ] {
        if !pods.is_empty() {
            let _ = writeln!(out, "\n{title}: {}", pods.join(", "));
        }
    }
    let _ = writeln!(out, "\nRestarts (in this order):");
    if plan.restarts.is_empty() {
        let _ = writeln!(out, "  none");
    }
    for (index, restart) in plan.restarts.iter().enumerate() {
        restart_lines(&mut out, Some(index), restart);
    }
    if !plan.reloads.is_empty() {
        let _ = writeln!(
            out,
            "\nCertificates reloaded without a restart (a node restarts instead if its reload fails):"
        );
        for reload in &plan.reloads {
            restart_lines(&mut out, None, reload);
        }
    }
    let _ = writeln!(out, "\nApplied to the running brokers without a restart:");
    if plan.live_changes.is_empty() {
        let _ = writeln!(out, "  none");
    }
    for change in &plan.live_changes {
        let show = |value: &Option<String>| value.clone().unwrap_or_else(|| "(unset)".to_owned());
        let _ = writeln!(
            out,
            "  {}: {} -> {}",
            change.option,
            show(&change.from),
            show(&change.to)
        );
    }
    if !plan.unknown.is_empty() {
        let _ = writeln!(out, "\nNot known before applying:");
        for line in &plan.unknown {
            let _ = writeln!(out, "  - {line}");
        }
    }
    out
}
