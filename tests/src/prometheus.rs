//! Strimzi's Prometheus alert rules and its operators' Grafana dashboard, evaluated by
//! Prometheus's own rule engine (`promtool test rules`) over the series our operators serve.
//!
//! The series come from an operator's `/metrics` text (scraped, or encoded by the code that
//! serves it); each is fed to promtool as a constant series, one sample a minute, so that
//! the rules' `for` clauses and the dashboard's `increase(...[1h])` have samples to work on.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::reference::reference_dir;

/// How promtool is installed where it is missing (the Debian package `prometheus`, which
/// `tests/testenv/install.sh --packages` installs).
pub const PROMTOOL_INSTALL: &str = "apt-get install -y --no-install-recommends prometheus \
     (or `bash tests/testenv/install.sh --packages` as root)";

/// Minutes of samples each input series has: one hour, the longest range the dashboard
/// queries.
pub const SERIES_MINUTES: usize = 60;

/// One sample of an operator's `/metrics`: the series (`name{labels}`, as served) and its
/// value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The metric's name.
    pub name: String,
    /// The series as served: the name and its labels, e.g. `strimzi_resources{kind="Kafka"}`.
    pub series: String,
    /// The value.
    pub value: f64,
}

impl Sample {
    /// The value of label `label`, if the series has it (label values without escapes).
    pub fn label(&self, label: &str) -> Option<&str> {
        let labels = &self.series[self.series.find('{')?..];
        let start = [format!("{{{label}=\""), format!(",{label}=\"")]
            .iter()
            .find_map(|prefix| Some(labels.find(prefix.as_str())? + prefix.len()))?;
        let rest = &labels[start..];
        Some(&rest[..rest.find('"')?])
    }
}

/// The samples of Prometheus text format `text` (comments skipped).
///
/// # Panics
/// When a sample line has no value that parses as a number.
pub fn parse_exposition(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (series, value) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("no value in the sample line {line:?}"));
            let value = value
                .parse()
                .unwrap_or_else(|error| panic!("sample line {line:?}: {error}"));
            let name = series.split('{').next().unwrap_or(series).to_owned();
            Sample {
                name,
                series: series.to_owned(),
                value,
            }
        })
        .collect()
}

/// promtool: `$PROMTOOL`, else `promtool` on the `PATH`.
///
/// # Panics
/// When it is not there, naming the command that installs it: a test that needs it fails
/// rather than skips.
pub fn promtool() -> PathBuf {
    let candidate = std::env::var_os("PROMTOOL").map_or_else(
        || {
            std::env::var_os("PATH")
                .map(|path| {
                    std::env::split_paths(&path)
                        .map(|dir| dir.join("promtool"))
                        .find(|file| file.is_file())
                })
                .unwrap_or_default()
        },
        |explicit| Some(PathBuf::from(explicit)),
    );
    match candidate {
        Some(path) if path.is_file() => path,
        _ => panic!(
            "promtool (Prometheus's rule tester) not found: install it with {PROMTOOL_INSTALL}, or set PROMTOOL"
        ),
    }
}

/// Strimzi's `PrometheusRule` file `file_name` (in the reference data's
/// `metrics/prometheus-rules/`), parsed.
///
/// # Panics
/// When the file cannot be read or has no `spec.groups`.
fn strimzi_prometheus_rule(file_name: &str) -> Value {
    let path = reference_dir()
        .join("metrics/prometheus-rules")
        .join(file_name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let rule: Value = serde_yaml_ng::from_str(&text)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    assert!(
        rule["spec"]["groups"].is_array(),
        "{}: no spec.groups",
        path.display()
    );
    rule
}

/// The rule groups of Strimzi's `PrometheusRule` file `file_name`, as a plain Prometheus
/// rules file (its `spec`), JSON being YAML.
pub fn strimzi_rule_file(file_name: &str) -> String {
    strimzi_prometheus_rule(file_name)["spec"].to_string()
}

/// The alert `alert` of Strimzi's `PrometheusRule` file `file_name` as promtool expects it to
/// fire on a series with `labels`: those labels, the rule's own, and its annotations with
/// each `{{ $labels.<name> }}` filled in from `labels` (an `exp_alerts` entry).
///
/// # Panics
/// When the file has no such alert.
pub fn strimzi_alert(file_name: &str, alert: &str, labels: &[(&str, &str)]) -> Value {
    let file = strimzi_prometheus_rule(file_name);
    let rule = file["spec"]["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["rules"].as_array().into_iter().flatten())
        .find(|rule| rule["alert"] == alert)
        .unwrap_or_else(|| panic!("{file_name}: no alert {alert}"));
    let mut exp_labels = rule["labels"].clone();
    let mut exp_annotations = rule["annotations"].clone();
    for (name, value) in labels {
        exp_labels[*name] = json!(value);
    }
    for annotation in exp_annotations
        .as_object_mut()
        .into_iter()
        .flat_map(|annotations| annotations.values_mut())
    {
        let mut text = annotation.as_str().unwrap_or_default().to_owned();
        for (name, value) in labels {
            text = text.replace(&format!("{{{{ $labels.{name} }}}}"), value);
        }
        *annotation = json!(text);
    }
    json!({"exp_labels": exp_labels, "exp_annotations": exp_annotations})
}

/// The containers the rules of Strimzi's `PrometheusRule` file `file_name` name in a
/// `container="..."` matcher, each once, sorted.
pub fn strimzi_rule_containers(file_name: &str) -> Vec<String> {
    const MATCHER: &str = "container=\"";
    let rule = strimzi_prometheus_rule(file_name);
    let mut containers: Vec<String> = rule["spec"]["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["rules"].as_array().into_iter().flatten())
        .filter_map(|rule| rule["expr"].as_str())
        .flat_map(|expr| {
            expr.match_indices(MATCHER).filter_map(|(at, _)| {
                let rest = &expr[at + MATCHER.len()..];
                Some(rest[..rest.find('"')?].to_owned())
            })
        })
        .collect();
    containers.sort_unstable();
    containers.dedup();
    containers
}

/// The input series of a promtool test: each sample constant for [`SERIES_MINUTES`] minutes,
/// `shift` applied to its value first (to move a timestamp onto promtool's clock, which
/// starts at the epoch).
pub fn input_series<'a>(
    samples: impl IntoIterator<Item = &'a Sample>,
    shift: impl Fn(&Sample) -> f64,
) -> Vec<Value> {
    samples
        .into_iter()
        .map(|sample| {
            let value = shift(sample);
            let values = vec![value.to_string(); SERIES_MINUTES + 1].join(" ");
            json!({"series": sample.series, "values": values})
        })
        .collect()
}

/// Runs `promtool test rules` on one test group (`interval: 1m`) with `input_series` and
/// `cases` (`alert_rule_test` and `promql_expr_test` entries of promtool's format), against
/// `rule_files` (name and content), in a folder of its own. `Err` holds promtool's report.
///
/// # Panics
/// When promtool is missing or the folder cannot be written.
pub fn run_rule_test(
    rule_files: &[(&str, String)],
    input_series: Vec<Value>,
    cases: Value,
) -> Result<(), String> {
    let promtool = promtool();
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("a temporary folder: {error}"));
    for (name, content) in rule_files {
        write(&dir.path().join(name), content);
    }
    let mut group = json!({"interval": "1m", "input_series": input_series});
    if let (Some(group), Some(cases)) = (group.as_object_mut(), cases.as_object()) {
        group.extend(cases.clone());
    }
    let test = json!({
        "rule_files": rule_files.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "evaluation_interval": "1m",
        "tests": [group],
    });
    let test_file = dir.path().join("test.yaml");
    write(&test_file, &test.to_string());
    let output = Command::new(&promtool)
        .arg("test")
        .arg("rules")
        .arg(&test_file)
        .current_dir(dir.path())
        .output()
        .unwrap_or_else(|error| panic!("running {}: {error}", promtool.display()));
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "promtool test rules failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

fn write(path: &Path, content: &str) {
    std::fs::write(path, content).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
}

/// One query of a Grafana dashboard: the panel's title and the PromQL expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DashboardQuery {
    /// The title of the panel that shows it.
    pub panel: String,
    /// The PromQL expression.
    pub expr: String,
}

/// Every query of Strimzi's Grafana dashboard `file_name` (in the reference data's
/// `metrics/grafana-dashboards/`), nested panels included.
///
/// # Panics
/// When the file cannot be read or parsed.
pub fn strimzi_dashboard_queries(file_name: &str) -> Vec<DashboardQuery> {
    let path = reference_dir()
        .join("metrics/grafana-dashboards")
        .join(file_name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let dashboard: Value =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut queries = Vec::new();
    collect_queries(&dashboard, &mut queries);
    queries
}

fn collect_queries(node: &Value, queries: &mut Vec<DashboardQuery>) {
    for panel in node["panels"].as_array().into_iter().flatten() {
        let title = panel["title"].as_str().unwrap_or_default();
        for target in panel["targets"].as_array().into_iter().flatten() {
            if let Some(expr) = target["expr"].as_str() {
                queries.push(DashboardQuery {
                    panel: title.to_owned(),
                    expr: expr.to_owned(),
                });
            }
        }
        collect_queries(panel, queries);
    }
}

/// The kinds whose `strimzi_resources` the cluster operator serves.
pub const CLUSTER_OPERATOR_KINDS: [&str; 7] = [
    "Kafka",
    "KafkaNodePool",
    "KafkaConnect",
    "KafkaConnector",
    "KafkaMirrorMaker2",
    "KafkaBridge",
    "KafkaRebalance",
];

/// Strimzi's operator dashboard (in the reference data's `metrics/grafana-dashboards/`).
pub const OPERATORS_DASHBOARD: &str = "strimzi-operators.json";

/// Whether `query` reads the JVM's metrics (`jvm_...`), which a Rust operator has not: the
/// dashboard's JVM panels, a difference from Strimzi (see the README).
pub fn is_jvm(query: &DashboardQuery) -> bool {
    query.expr.contains("jvm_")
}

/// The queries of Strimzi's operator dashboard an operator that reconciles `kinds` must
/// answer on its own: those of one of its kinds, those of every kind (the reconciliation
/// panels, summed by kind) and, with `certificates` (the cluster operator), the certificate
/// panel. The JVM panels are left out ([`is_jvm`]).
pub fn operator_dashboard_queries(kinds: &[&str], certificates: bool) -> Vec<DashboardQuery> {
    strimzi_dashboard_queries(OPERATORS_DASHBOARD)
        .into_iter()
        .filter(|query| !is_jvm(query))
        .filter(|query| {
            let named_kind = query
                .expr
                .split("kind=\"")
                .nth(1)
                .map(|rest| rest.split('"').next().unwrap_or_default().to_owned());
            match named_kind {
                Some(kind) => kinds.contains(&kind.as_str()),
                None if query.expr.contains("strimzi_certificate_") => certificates,
                None => true,
            }
        })
        .collect()
}

/// A `promql_expr_test` case that holds when `query` returns at least one series after the
/// hour of input series: `count(expr) > bool 0` is 1 then, and no sample at all otherwise.
pub fn returns_series(query: &DashboardQuery) -> Value {
    json!({
        "expr": format!("count({}) > bool 0", query.expr),
        "eval_time": format!("{SERIES_MINUTES}m"),
        "exp_samples": [{"labels": "{}", "value": 1}],
    })
}

/// Checks with promtool that each of `queries` returns series over `samples` (an operator's
/// `/metrics`, each sample constant for an hour).
///
/// # Panics
/// With promtool's report of the queries that return nothing.
pub fn assert_dashboard_answered(samples: &[Sample], queries: &[DashboardQuery]) {
    let cases: Vec<Value> = queries.iter().map(returns_series).collect();
    if let Err(report) = run_rule_test(
        &[],
        input_series(samples, |sample| sample.value),
        json!({"promql_expr_test": cases}),
    ) {
        panic!("queries of Strimzi's operator dashboard without series:\n{report}");
    }
}

/// The body of an HTTP response `response` (what follows the headers).
pub fn http_body(response: &str) -> &str {
    response
        .split_once("\r\n\r\n")
        .map_or(response, |(_, body)| body)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn samples_and_their_labels_are_read_from_the_text_format() {
        let samples = parse_exposition(
            "# HELP x a gauge\n# TYPE x gauge\nx{kind=\"Kafka\",namespace=\"\",resource_namespace=\"r\"} 1900000000000\ny 0.5\n",
        );
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[0].name, "x");
        assert_eq!(samples[0].value, 1.9e12);
        assert_eq!(samples[0].label("kind"), Some("Kafka"));
        assert_eq!(samples[0].label("namespace"), Some(""));
        assert_eq!(samples[0].label("resource_namespace"), Some("r"));
        assert_eq!(samples[0].label("cluster"), None);
        assert_eq!(samples[1].series, "y");
    }

    #[test]
    fn promtool_tells_a_query_with_series_from_one_without() {
        let samples =
            parse_exposition("strimzi_resources{kind=\"Kafka\",namespace=\"a\",selector=\"\"} 1\n");
        let of_kind = |kind: &str| -> Vec<DashboardQuery> {
            operator_dashboard_queries(&[kind], false)
                .into_iter()
                .filter(|query| query.expr.contains(&format!("kind=\"{kind}\"")))
                .collect()
        };
        assert_dashboard_answered(&samples, &of_kind("Kafka"));
        let bridge = of_kind("KafkaBridge");
        assert_eq!(bridge.len(), 1);
        let report = run_rule_test(
            &[],
            input_series(&samples, |sample| sample.value),
            json!({"promql_expr_test": bridge.iter().map(returns_series).collect::<Vec<_>>()}),
        )
        .unwrap_err();
        assert!(report.contains("KafkaBridge"), "{report}");
    }

    /// Every query of the dashboard but the JVM panels is answered by one of the operators:
    /// the cluster operator, or the topic or user operator (each checked in its own tests).
    #[test]
    fn every_non_jvm_query_of_the_operator_dashboard_has_an_operator_to_answer_it() {
        let answered: Vec<DashboardQuery> = [
            operator_dashboard_queries(&CLUSTER_OPERATOR_KINDS, true),
            operator_dashboard_queries(&["KafkaTopic"], false),
            operator_dashboard_queries(&["KafkaUser"], false),
        ]
        .concat();
        let queries = strimzi_dashboard_queries(OPERATORS_DASHBOARD);
        let unanswered: Vec<_> = queries
            .iter()
            .filter(|query| !is_jvm(query) && !answered.contains(query))
            .collect();
        assert!(unanswered.is_empty(), "{unanswered:?}");
        let jvm: Vec<_> = queries.iter().filter(|query| is_jvm(query)).collect();
        assert_eq!(jvm.len(), 3, "the JVM panels the README lists: {jvm:?}");
        assert_eq!(
            operator_dashboard_queries(&CLUSTER_OPERATOR_KINDS, true).len(),
            14
        );
    }
}
