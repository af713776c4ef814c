//! `deploy/install/cluster-operator` against the code it installs: no wildcard rules, CRDs
//! identical to the generated ones, our image and program, and a Deployment whose every
//! variable the operator reads and accepts, with the defaults the code has. And Strimzi's own
//! install files against the variables the operator reads or names as ignored. And every
//! other place that states our version (the packages, the Helm chart, the documentation)
//! against the workspace's. And the troubleshooting guide against the condition and Event
//! reasons the operators can set.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use strimzi_cluster_operator::config::{ClusterOperatorConfig, IGNORED_VARIABLES};
use strimzi_cluster_operator::model::nodes::images::{DEFAULT_KAFKA_INIT_IMAGE, KafkaImages};
use strimzi_operator_common::config::WatchedNamespaces;
use strimzi_operator_common::{OPERATOR_IMAGE, VERSION};
use strimzi_tests::bundle::{
    Bundle, PLACEHOLDER_NAMESPACE, checked_bundle, container_environment, helm_chart_dir,
    read_environment, rule_problems,
};
use strimzi_tests::reference::{reference_dir, workspace_root};

#[test]
fn the_cluster_operator_bundle_matches_the_operator() {
    let (bundle, config) = checked_bundle(
        "cluster-operator",
        OPERATOR_IMAGE,
        "/opt/strimzi/bin/cluster_operator_run.sh",
        |lookup| ClusterOperatorConfig::from_lookup(lookup),
    );
    assert_eq!(
        bundle.of_kind("CustomResourceDefinition").count(),
        10,
        "every CRD"
    );
    assert_eq!(config.model.kafka_init_image, DEFAULT_KAFKA_INIT_IMAGE);
    assert_eq!(config.model.topic_operator_image, OPERATOR_IMAGE);
    assert_eq!(config.model.user_operator_image, OPERATOR_IMAGE);
    assert_eq!(config.model.images, KafkaImages::strimzi_defaults());
    assert_eq!(config.model.connect_images, KafkaImages::strimzi_defaults());
    assert_eq!(
        config.model.mirror_maker2_images,
        KafkaImages::strimzi_defaults()
    );
    assert_eq!(
        config.operator.namespaces,
        WatchedNamespaces::List(vec![PLACEHOLDER_NAMESPACE.to_owned()])
    );
    let election = config
        .operator
        .leader_election
        .as_ref()
        .expect("leader election on");
    let lease_rule = bundle
        .rules()
        .into_iter()
        .filter(|(role, _)| role == "ClusterRole/strimzi-cluster-operator-leader-election")
        .find_map(|(_, rule)| rule.resource_names)
        .unwrap_or_default();
    assert_eq!(lease_rule, vec![election.lease_name.clone()]);
}

#[test]
fn the_optional_crd_self_install_permissions_match_the_setting() {
    let bundle = Bundle::load("crd-self-install");
    let problems = rule_problems(&bundle);
    assert!(problems.is_empty(), "{problems:#?}");
    let (_, rule) = bundle.rules().into_iter().next().unwrap();
    assert_eq!(rule.resources.unwrap(), ["customresourcedefinitions"]);
    let mut environment = container_environment(
        &Bundle::load("cluster-operator").deployment(),
        "myproject",
        "cluster-operator-5d9f-x",
    );
    environment.insert("STRIMZI_INSTALL_CRDS".to_owned(), "true".to_owned());
    let (config, unread) = read_environment(&environment, |lookup| {
        ClusterOperatorConfig::from_lookup(lookup)
    });
    assert!(unread.is_empty(), "set but never read: {unread:?}");
    assert!(config.unwrap().install_crds);
}

#[test]
fn the_cluster_operator_holds_the_rules_it_grants_entity_operators() {
    let bundle = Bundle::load("cluster-operator");
    let granted: Vec<_> = bundle
        .rules()
        .into_iter()
        .filter(|(role, _)| role == "ClusterRole/strimzi-entity-operator")
        .map(|(_, rule)| rule)
        .collect();
    assert_eq!(
        granted,
        strimzi_cluster_operator::model::components::entity_operator::role_rules(),
        "031-ClusterRole-strimzi-entity-operator.yaml must list the entity operator Role's rules"
    );
    let delegation = bundle
        .of_kind("RoleBinding")
        .find(|binding| binding["roleRef"]["name"] == "strimzi-entity-operator");
    assert!(
        delegation.is_some(),
        "the delegation RoleBinding is missing"
    );
}

/// The values of Strimzi 1.2's Helm chart that set cluster operator variables, with the
/// variables its Deployment template sets from them (facts from the chart's
/// `060-Deployment-strimzi-cluster-operator.yaml`; the reference data holds its
/// `values.yaml` only).
const STRIMZI_CHART_VALUES_WITH_VARIABLES: [(&str, &[&str]); 24] = [
    ("watchNamespaces", &["STRIMZI_NAMESPACE"]),
    ("watchAnyNamespace", &["STRIMZI_NAMESPACE"]),
    (
        "image",
        &[
            "STRIMZI_IMAGE_PULL_SECRETS",
            "STRIMZI_OPERATOR_NAMESPACE_LABELS",
            "STRIMZI_IMAGE_PULL_POLICY",
        ],
    ),
    (
        "fullReconciliationIntervalMs",
        &["STRIMZI_FULL_RECONCILIATION_INTERVAL_MS"],
    ),
    ("operationTimeoutMs", &["STRIMZI_OPERATION_TIMEOUT_MS"]),
    (
        "kubernetesServiceDnsDomain",
        &["KUBERNETES_SERVICE_DNS_DOMAIN"],
    ),
    ("featureGates", &["STRIMZI_FEATURE_GATES"]),
    (
        "leaderElection",
        &[
            "STRIMZI_LEADER_ELECTION_ENABLED",
            "STRIMZI_LEADER_ELECTION_LEASE_NAME",
            "STRIMZI_LEADER_ELECTION_LEASE_NAMESPACE",
            "STRIMZI_LEADER_ELECTION_IDENTITY",
        ],
    ),
    ("kafka", &["STRIMZI_KAFKA_IMAGES"]),
    ("kafkaConnect", &["STRIMZI_KAFKA_CONNECT_IMAGES"]),
    (
        "kafkaMirrorMaker2",
        &["STRIMZI_KAFKA_MIRROR_MAKER_2_IMAGES"],
    ),
    ("topicOperator", &["STRIMZI_DEFAULT_TOPIC_OPERATOR_IMAGE"]),
    ("userOperator", &["STRIMZI_DEFAULT_USER_OPERATOR_IMAGE"]),
    ("kafkaInit", &["STRIMZI_DEFAULT_KAFKA_INIT_IMAGE"]),
    ("kafkaBridge", &["STRIMZI_DEFAULT_KAFKA_BRIDGE_IMAGE"]),
    ("kafkaExporter", &["STRIMZI_DEFAULT_KAFKA_EXPORTER_IMAGE"]),
    ("cruiseControl", &["STRIMZI_DEFAULT_CRUISE_CONTROL_IMAGE"]),
    ("kanikoExecutor", &["STRIMZI_DEFAULT_KANIKO_EXECUTOR_IMAGE"]),
    ("buildah", &["STRIMZI_DEFAULT_BUILDAH_IMAGE"]),
    ("mavenBuilder", &["STRIMZI_DEFAULT_MAVEN_BUILDER"]),
    (
        "labelsExclusionPattern",
        &["STRIMZI_LABELS_EXCLUSION_PATTERN"],
    ),
    (
        "generateNetworkPolicy",
        &["STRIMZI_NETWORK_POLICY_GENERATION"],
    ),
    (
        "connectBuildTimeoutMs",
        &["STRIMZI_CONNECT_BUILD_TIMEOUT_MS"],
    ),
    (
        "generatePodDisruptionBudget",
        &["STRIMZI_POD_DISRUPTION_BUDGET_GENERATION"],
    ),
];

/// The values of Strimzi 1.2's Helm chart that set no variable of their own (the operator
/// pod's scheduling, metadata and resources, RBAC, the logging ConfigMap, the registry
/// defaults the image values are built from, `extraEnvs`).
const STRIMZI_CHART_VALUES_WITHOUT_VARIABLES: [&str; 35] = [
    "replicas",
    "defaultImageRegistry",
    "defaultImageRepository",
    "defaultImageTag",
    "logVolume",
    "logConfigMap",
    "logConfiguration",
    "logLevel",
    "tmpDirSizeLimit",
    "extraEnvs",
    "tolerations",
    "topologySpreadConstraints",
    "affinity",
    "annotations",
    "labels",
    "nodeSelector",
    "deploymentAnnotations",
    "deploymentLabels",
    "deploymentStrategy",
    "priorityClassName",
    "hostUsers",
    "enableServiceLinks",
    "podSecurityContext",
    "securityContext",
    "rbac",
    "serviceAccountCreate",
    "serviceAccount",
    "podDisruptionBudget",
    "operatorNetworkPolicy",
    "dashboards",
    "resources",
    "livenessProbe",
    "readinessProbe",
    "createGlobalResources",
    "createAggregateRoles",
];

/// Every variable Strimzi 1.2's install Deployment and Helm chart set is either read by the
/// operator (honoured) or in [`IGNORED_VARIABLES`] (named in a warning at start), never both;
/// every value of Strimzi's chart is classified above, so that a new one fails this test
/// until it is looked at.
#[test]
fn every_variable_strimzis_install_files_set_is_honoured_or_named_as_ignored() {
    let reference = reference_dir();
    let read = |path: &str| {
        let path = reference.join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    };
    let deployment: Deployment = serde_yaml_ng::from_str(&read(
        "install/cluster-operator/060-Deployment-strimzi-cluster-operator.yaml",
    ))
    .unwrap();
    let environment = container_environment(&deployment, PLACEHOLDER_NAMESPACE, "co-5d9f-x");
    let values: serde_yaml_ng::Mapping =
        serde_yaml_ng::from_str(&read("helm/values.yaml")).unwrap();
    let chart_values: BTreeSet<&str> = values.keys().filter_map(|key| key.as_str()).collect();
    let classified: BTreeSet<&str> = STRIMZI_CHART_VALUES_WITH_VARIABLES
        .iter()
        .map(|(value, _)| *value)
        .chain(STRIMZI_CHART_VALUES_WITHOUT_VARIABLES)
        .collect();
    assert_eq!(chart_values, classified, "the values of Strimzi's chart");

    // Read the Deployment's environment as the operator does, noting every variable asked.
    let asked = RefCell::new(BTreeSet::new());
    ClusterOperatorConfig::from_lookup(|name| {
        asked.borrow_mut().insert(name.to_owned());
        environment.get(name).cloned()
    })
    .unwrap();
    let asked = asked.into_inner();
    let ignored: BTreeSet<&str> = IGNORED_VARIABLES
        .iter()
        .map(|ignored| ignored.name)
        .collect();
    let set: BTreeSet<&str> = environment
        .keys()
        .map(String::as_str)
        .chain(
            STRIMZI_CHART_VALUES_WITH_VARIABLES
                .iter()
                .flat_map(|(_, variables)| variables.iter().copied()),
        )
        .collect();
    let unknown: Vec<&&str> = set
        .iter()
        .filter(|name| !asked.contains(**name) && !ignored.contains(**name))
        .collect();
    assert!(
        unknown.is_empty(),
        "neither honoured nor ignored: {unknown:?}"
    );
    let both: Vec<&&str> = ignored
        .iter()
        .filter(|name| asked.contains(**name))
        .collect();
    assert!(both.is_empty(), "read, yet named as ignored: {both:?}");
}

/// The version is stated once, in the workspace's `Cargo.toml`: every package takes it
/// (`version.workspace = true`), the code names it through `CARGO_PKG_VERSION` (the image in
/// the bundles and the CRDs' release annotation, checked above and by the CRD checks), and
/// the other places that state it must agree: the Helm chart's `version` and `appVersion` (its
/// operator image tag defaults to `appVersion`) and every image tag of ours
/// (`.../operator:<version>`) in the documentation and the `Dockerfile`.
#[test]
fn every_statement_of_our_version_is_the_workspace_version() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let metadata = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(
        metadata.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&metadata.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&metadata.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    assert!(packages.len() > 5, "{metadata}");
    for package in packages {
        assert_eq!(package["version"], VERSION, "package {}", package["name"]);
    }

    let chart_dir = helm_chart_dir();
    let read_yaml = |file: &str| -> serde_yaml_ng::Value {
        let path = chart_dir.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        serde_yaml_ng::from_str(&text).unwrap()
    };
    let chart = read_yaml("Chart.yaml");
    assert_eq!(
        chart["version"].as_str(),
        Some(VERSION),
        "Chart.yaml version"
    );
    assert_eq!(
        chart["appVersion"].as_str(),
        Some(VERSION),
        "Chart.yaml appVersion"
    );
    let default_tag = &read_yaml("values.yaml")["operatorImageDefaults"]["tag"];
    assert!(
        [Some(""), Some(VERSION)].contains(&default_tag.as_str()),
        "values.yaml operatorImageDefaults.tag {default_tag:?}: empty (the appVersion) or {VERSION}"
    );

    let mut documents = Vec::new();
    documentation(workspace_root(), &mut documents);
    assert!(documents.len() > 10, "{documents:?}");
    let mut disagreeing = Vec::new();
    for document in &documents {
        let text = std::fs::read_to_string(document).unwrap();
        for tag in our_image_tags(&text) {
            if tag != VERSION {
                disagreeing.push(format!("{}: operator:{tag}", document.display()));
            }
        }
    }
    assert!(
        disagreeing.is_empty(),
        "our image named with another version than {VERSION}: {disagreeing:#?}"
    );
}

/// The Markdown files and `Dockerfile`s under `dir`, leaving out hidden and `target` folders.
fn documentation(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                documentation(&path, found);
            }
        } else if name.ends_with(".md") || name == "Dockerfile" {
            found.push(path);
        }
    }
}

/// The version tags our operator image (`<registry>/<repository>/operator:<tag>`) has in
/// `text`: each `/operator:` followed by a version number, but for Strimzi's own image
/// (`quay.io/strimzi/operator:<version>`).
fn our_image_tags(text: &str) -> Vec<&str> {
    text.match_indices("/operator:")
        .filter(|(at, _)| !text[..*at].ends_with("/strimzi"))
        .map(|(at, prefix)| {
            let tag = &text[at + prefix.len()..];
            tag[..tag
                .find(|c: char| !c.is_ascii_digit() && c != '.')
                .unwrap_or(tag.len())]
                .trim_end_matches('.')
        })
        .filter(|tag| tag.split('.').count() == 3 && tag.split('.').all(|part| !part.is_empty()))
        .collect()
}

#[test]
fn our_image_tags_are_found_in_prose() {
    let text = "docker build -t localhost/strimzi-rs/operator:0.1.0 . then push \
                <registry>/<repository>/operator:1.2.3. Not ours: quay.io/strimzi/operator:1.2.0, \
                quay.io/strimzi/operator:latest";
    assert_eq!(our_image_tags(text), ["0.1.0", "1.2.3"]);
}

/// Every reason our operators can write into a status condition (`status.conditions[].reason`)
/// or give an Event is explained in a table row of `docs/user-guide/troubleshooting.md`, and
/// every reason a table row there explains is one the code can still set.
///
/// The reasons are read from the Rust sources of `api`, `kafka-model`, `operator-common`,
/// `certificate-manager`, `cluster-model` and the three operators, test modules and comments
/// left out, where
/// they are string literals or `&str` constants in one of these places:
/// - the body of `fn reason(&self) -> &'static str`, the stable reason of each error type (the
///   failure condition and its Warning Event), and of `RestartReason::name` (the Events of a
///   restarted pod);
/// - a `reason: ...` field (what a Kafka waits for, CA warnings);
/// - the reason argument of the calls in [`REASON_ARGUMENTS`] (`Reconciled::pending`,
///   `Reconciled::stalled`, `warn`, `ModelWarning::new`, the condition helpers of
///   `strimzi_operator_common::status`, the Event helpers);
/// - the first item of `warnings.push((reason, message))` and `why = Some((reason, message))`
///   (KafkaRebalance), the second of `(Severity::..., reason, action, note)` (its Events) and of
///   each pair of a `for (key, reason) in [...]` list (Kafka warnings).
///
/// A reason set in another way is not seen: set it in one of these ways, or add the way here.
#[test]
fn every_condition_reason_the_operators_can_set_is_explained_in_the_troubleshooting_guide() {
    let root = workspace_root();
    let in_code = reasons_in_code(&reason_sources(root));
    assert!(
        in_code.len() > 100,
        "only {} reasons found in the code, the scanner must have missed some: {in_code:#?}",
        in_code.len()
    );
    let page = std::fs::read_to_string(root.join("docs/user-guide/troubleshooting.md")).unwrap();
    let explained = reasons_in_table_rows(&page);
    let missing: Vec<String> = in_code
        .iter()
        .filter(|(reason, _)| !explained.contains(*reason))
        .map(|(reason, places)| {
            let places: Vec<&str> = places.iter().map(String::as_str).collect();
            format!("{reason} (set at {})", places.join(", "))
        })
        .collect();
    let stale: Vec<&String> = explained
        .iter()
        .filter(|reason| !in_code.contains_key(*reason))
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/user-guide/troubleshooting.md is out of date (one reason per table row, in \
         backticks in its first cell).\nReasons the code can set that no table row explains: \
         {missing:#?}\nReasons a table row explains that the code no longer sets: {stale:#?}"
    );
}

/// The reason scanner reads code only: what comments, strings and character literals hold is
/// not taken for code.
#[test]
fn the_reason_scanner_reads_code_not_comments_or_strings() {
    let text = r#"
/// Reconciled::pending(status, "InDocComment", "m", RECHECK)
const LATER: &str = "FromConstant";
fn reason(&self) -> &'static str {
    match self {
        Self::A => "FromBody", // "InTrailingComment"
        Self::B => LATER,
    }
}
fn other() {
    let quote = '"';
    let text = "warn(\"InString\", m)";
    let waiting = Waiting { reason: "FromField", message: m };
    reconciled.warn(LATER, "message, not a reason");
    Reconciled::stalled(status, "FromCall", &format!("{x}"), RECHECK);
    tell(variable, "Action", note);
    /* alert("InBlockComment", "a", "n") */
}
"#;
    let source = Source {
        path: "example.rs".to_owned(),
        code: blank_literals_and_comments(text),
        text: text.to_owned(),
    };
    let found: Vec<String> = reasons_in_code(&[source]).into_keys().collect();
    assert_eq!(found, ["FromBody", "FromCall", "FromConstant", "FromField"]);
}

/// The folders whose Rust sources set the reasons: the operators and the crates they use.
const REASON_SOURCE_DIRS: [&str; 8] = [
    "api/src",
    "kafka-model/src",
    "operator-common/src",
    "certificate-manager/src",
    "cluster-model/src",
    "cluster-operator/src",
    "topic-operator/src",
    "user-operator/src",
];

/// The calls that take a reason, by name, and the position of the reason among their
/// arguments.
const REASON_ARGUMENTS: [(&str, usize); 15] = [
    // `Reconciled::pending` and `Reconciled::stalled`, also as a `waiting` variable.
    ("pending", 1),
    ("stalled", 1),
    ("waiting", 1),
    // `Warning` conditions.
    ("warn", 0),
    ("ModelWarning::new", 0),
    // strimzi_operator_common::status.
    ("not_ready", 0),
    ("reconciling", 0),
    ("ready_false", 0),
    ("warning", 0),
    ("condition", 1),
    ("failure_condition", 0),
    // Events.
    ("tell", 0),
    ("alert", 0),
    ("publish", 1),
    ("publish_logged", 2),
];

/// What `.to_owned()` and the like turn into a `String`: seen through by [`reason_of`].
const CONVERSIONS: [&str; 3] = [".to_owned()", ".to_string()", ".into()"];

/// A non-test Rust source: its path from the workspace root, its text up to its test module,
/// and `code`, the same text with the comments and the contents of string and character
/// literals blanked out byte for byte, so that code is searched in `code` and a literal read
/// from `text` at the same place.
struct Source {
    path: String,
    text: String,
    code: String,
}

/// The `&str` constants of the sources by name: where each is defined, and its value.
type Constants = BTreeMap<String, Vec<(String, String)>>;

/// Each reason of the code, with the places (`path:line`) that set it.
type Reasons = BTreeMap<String, BTreeSet<String>>;

/// The Rust sources of [`REASON_SOURCE_DIRS`], without the files only tests compile.
fn reason_sources(root: &Path) -> Vec<Source> {
    let mut paths = Vec::new();
    for dir in REASON_SOURCE_DIRS {
        rust_files(&root.join(dir), &mut paths);
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = without_test_module(&std::fs::read_to_string(&path).unwrap());
            Source {
                path: path
                    .strip_prefix(root)
                    .unwrap_or(path.as_path())
                    .display()
                    .to_string(),
                code: blank_literals_and_comments(&text),
                text,
            }
        })
        .collect()
}

/// The `.rs` files under `dir`, but for `tests.rs` and `test_support.rs`, which only tests
/// compile.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            rust_files(&path, found);
        } else if name.ends_with(".rs") && name != "tests.rs" && name != "test_support.rs" {
            found.push(path);
        }
    }
}

/// `text` up to its test module (`#[cfg(test)]` on the line before `mod tests {`), which is
/// the last item of each of our files that has one.
fn without_test_module(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|pair| pair[0].trim() == "#[cfg(test)]" && opens_a_module(pair[1]))
        .unwrap_or(lines.len());
    lines[..end].join("\n")
}

/// Whether `line` opens an inline module (`mod tests {`, `pub(crate) mod tests {`).
fn opens_a_module(line: &str) -> bool {
    let line = line.trim();
    let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
    line.starts_with("mod ") && line.ends_with('{')
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Whether `name` is the name of a constant: `SCREAMING_SNAKE_CASE`, two characters at least.
fn is_constant_name(name: &str) -> bool {
    name.len() > 1
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `text` with its comments and the contents of its string and character literals replaced
/// by spaces (line ends kept), byte for byte; the quotes stay.
fn blank_literals_and_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut code = bytes.to_vec();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.starts_with(b"//") {
            let end = text[at..]
                .find('\n')
                .map_or(bytes.len(), |found| at + found);
            blank(&mut code, at..end);
            at = end;
        } else if rest.starts_with(b"/*") {
            let end = text[at + 2..]
                .find("*/")
                .map_or(bytes.len(), |found| at + 2 + found + 2);
            blank(&mut code, at..end);
            at = end;
        } else if bytes[at] == b'"' {
            let close = string_end(bytes, at + 1);
            blank(&mut code, at + 1..close);
            at = close + 1;
        } else if let Some((content, end)) = raw_string(bytes, at) {
            blank(&mut code, content);
            at = end;
        } else if bytes[at] == b'\'' {
            match char_literal_end(text, at) {
                Some(close) => {
                    blank(&mut code, at + 1..close);
                    at = close + 1;
                }
                // A lifetime or a label.
                None => at += 1,
            }
        } else {
            at += 1;
        }
    }
    String::from_utf8(code).unwrap()
}

/// Spaces for the bytes of `range` in `code`, line ends kept.
fn blank(code: &mut [u8], range: Range<usize>) {
    let end = range.end.min(code.len());
    for byte in &mut code[range.start.min(end)..end] {
        if *byte != b'\n' {
            *byte = b' ';
        }
    }
}

/// The position of the quote that ends the string literal whose contents start at `from`
/// (the end of `bytes` when there is none).
fn string_end(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The contents and the end of the raw string literal (`r"..."`, `r#"..."#`, `br"..."`)
/// starting at `at`, if one does.
fn raw_string(bytes: &[u8], at: usize) -> Option<(Range<usize>, usize)> {
    if bytes[at] != b'r' {
        return None;
    }
    let starts_a_token = at == 0
        || !is_ident_byte(bytes[at - 1])
        || (bytes[at - 1] == b'b' && (at == 1 || !is_ident_byte(bytes[at - 2])));
    if !starts_a_token {
        return None;
    }
    let hashes = bytes[at + 1..]
        .iter()
        .take_while(|byte| **byte == b'#')
        .count();
    let open = at + 1 + hashes;
    if bytes.get(open) != Some(&b'"') {
        return None;
    }
    let mut closing = vec![b'"'];
    closing.extend(std::iter::repeat_n(b'#', hashes));
    let content = open + 1;
    let close = bytes[content..]
        .windows(closing.len())
        .position(|window| window == closing.as_slice())
        .map_or(bytes.len(), |found| content + found);
    Some((content..close, (close + closing.len()).min(bytes.len())))
}

/// The position of the quote that ends the character literal whose opening quote is at `at`
/// in `text`; `None` for a lifetime or a label.
fn char_literal_end(text: &str, at: usize) -> Option<usize> {
    let rest = &text[at + 1..];
    if rest.starts_with('\\') {
        // An escape: `'\''`, `'\\'`, `'\n'`, `'\u{..}'`; the quote after the escaped character.
        return rest.get(2..)?.find('\'').map(|found| at + 3 + found);
    }
    let character = rest.chars().next()?;
    let close = at + 1 + character.len_utf8();
    (text.as_bytes().get(close) == Some(&b'\'')).then_some(close)
}

/// The ranges of the first `last + 1` arguments (or items) of the call, tuple or list whose
/// opening bracket is at `open` in `code`; fewer when it has fewer.
fn arguments(code: &str, open: usize, last: usize) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut depth = 0_usize;
    let mut start = open + 1;
    for (at, byte) in code.bytes().enumerate().skip(open + 1) {
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => {
                found.push(start..at);
                break;
            }
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                found.push(start..at);
                if found.len() > last {
                    break;
                }
                start = at + 1;
            }
            _ => {}
        }
    }
    found
}

/// `range` of `code` without the white space at its ends.
fn trimmed(code: &str, range: Range<usize>) -> Range<usize> {
    let text = &code[range.clone()];
    let start = range.start + (text.len() - text.trim_start().len());
    start..start + text.trim().len()
}

/// The position of the closing brace of the block whose opening brace is at `open`.
fn block_end(code: &str, open: usize) -> usize {
    let mut depth = 0_usize;
    for (at, byte) in code.bytes().enumerate().skip(open) {
        match byte {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The value of the constant `name` as `path` sees it: its own definition, else the one value
/// every definition of that name has.
fn resolve(constants: &Constants, name: &str, path: &str) -> Option<String> {
    let definitions = constants.get(name)?;
    if let Some((_, value)) = definitions.iter().find(|(at, _)| at.as_str() == path) {
        return Some(value.clone());
    }
    let values: BTreeSet<&String> = definitions.iter().map(|(_, value)| value).collect();
    assert_eq!(
        values.len(),
        1,
        "{path}: which constant {name} is meant? {definitions:?}"
    );
    values.into_iter().next().cloned()
}

/// The string literal whose opening quote is at `open` in `source`, if one is.
fn literal_at(source: &Source, open: usize) -> Option<String> {
    if source.code.as_bytes().get(open) != Some(&b'"') {
        return None;
    }
    let close = open + 1 + source.code[open + 1..].find('"')?;
    Some(source.text[open + 1..close].to_owned())
}

/// The reason the expression at `range` of `source` stands for: a string literal, or a `&str`
/// constant (by the last segment of its path), seen through `&`, `Some(...)` and
/// [`CONVERSIONS`]; `None` for anything else (a variable, a call). With `strict`, a constant
/// that is not a known `&str` constant fails the test.
fn reason_of(
    source: &Source,
    range: Range<usize>,
    constants: &Constants,
    strict: bool,
) -> Option<String> {
    let code = &source.code;
    let mut range = trimmed(code, range);
    loop {
        let expression = &code[range.clone()];
        if expression.starts_with('&') {
            range = trimmed(code, range.start + 1..range.end);
        } else if expression.starts_with("Some(") && expression.ends_with(')') {
            range = trimmed(code, range.start + "Some(".len()..range.end - 1);
        } else if let Some(suffix) = CONVERSIONS
            .iter()
            .find(|suffix| expression.ends_with(**suffix))
        {
            range = trimmed(code, range.start..range.end - suffix.len());
        } else {
            break;
        }
    }
    let expression = &code[range.clone()];
    if expression.starts_with('"') {
        let one_literal = expression.len() > 1
            && expression.ends_with('"')
            && expression.matches('"').count() == 2;
        return literal_at(source, range.start).filter(|_| one_literal);
    }
    let name = expression.rsplit("::").next().unwrap_or(expression);
    if !is_constant_name(name) {
        return None;
    }
    let value = resolve(constants, name, &source.path);
    assert!(
        value.is_some() || !strict,
        "{}:{}: {expression} is given as a reason but is no &str constant of the sources",
        source.path,
        line_of(source, range.start)
    );
    value
}

/// The line of position `at` of `source`, from 1.
fn line_of(source: &Source, at: usize) -> usize {
    source.code[..at].matches('\n').count() + 1
}

/// The `&str` constants the sources define (`const NAME: &str = "value";`).
fn str_constants(sources: &[Source]) -> Constants {
    let mut constants = Constants::new();
    for source in sources {
        for (at, keyword) in source.code.match_indices("const ") {
            if source.code[..at].ends_with(is_ident_char) {
                continue;
            }
            let name_at = at + keyword.len();
            let rest = &source.code[name_at..];
            let name = &rest[..rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len())];
            if !is_constant_name(name) {
                continue;
            }
            let after_name = &rest[name.len()..];
            let Some(typed) = [": &str = ", ": &'static str = "]
                .into_iter()
                .find(|typed| after_name.starts_with(*typed))
            else {
                continue;
            };
            if let Some(value) = literal_at(source, name_at + name.len() + typed.len()) {
                constants
                    .entry(name.to_owned())
                    .or_default()
                    .push((source.path.clone(), value));
            }
        }
    }
    constants
}

/// Every reason the sources set, in the ways listed on
/// [`every_condition_reason_the_operators_can_set_is_explained_in_the_troubleshooting_guide`].
fn reasons_in_code(sources: &[Source]) -> Reasons {
    let constants = str_constants(sources);
    let mut reasons = Reasons::new();
    for source in sources {
        let code = &source.code;
        let mut found = |reason: String, at: usize| {
            let place = format!("{}:{}", source.path, line_of(source, at));
            reasons.entry(reason).or_default().insert(place);
        };

        // The bodies of the reason functions: their literals, and the constants they name.
        let mut bodies = vec!["fn reason(&self) -> &'static str {"];
        if source.path.ends_with("rolling/reasons.rs") {
            bodies.push("fn name(&self) -> &'static str {");
        }
        for signature in bodies {
            for (at, _) in code.match_indices(signature) {
                let open = at + signature.len() - 1;
                let body = open..block_end(code, open);
                let quotes: Vec<usize> = code[body.clone()]
                    .match_indices('"')
                    .map(|(quote, _)| body.start + quote)
                    .collect();
                for pair in quotes.chunks(2) {
                    if let [start, end] = pair {
                        found(source.text[start + 1..*end].to_owned(), at);
                    }
                }
                for word in code[body.clone()].split(|c: char| !is_ident_char(c)) {
                    if is_constant_name(word)
                        && let Some(reason) = resolve(&constants, word, &source.path)
                    {
                        found(reason, at);
                    }
                }
            }
        }

        // `reason: ...` fields.
        for (at, field) in code.match_indices("reason:") {
            let after = at + field.len();
            let before = &code[..at];
            if before.ends_with(is_ident_char)
                || before.ends_with('.')
                || code[after..].starts_with(':')
            {
                continue;
            }
            let value_end = code[after..]
                .find([',', '\n', '}'])
                .map_or(code.len(), |end| after + end);
            if let Some(reason) = reason_of(source, after..value_end, &constants, false) {
                found(reason, at);
            }
        }

        // The reason arguments of calls.
        for (name, position) in REASON_ARGUMENTS {
            let call = format!("{name}(");
            for (at, _) in code.match_indices(&call) {
                let before = &code[..at];
                if before.ends_with(is_ident_char) || before.trim_end().ends_with("fn") {
                    continue;
                }
                let open = at + name.len();
                if let Some(argument) = arguments(code, open, position).get(position)
                    && let Some(reason) = reason_of(source, argument.clone(), &constants, true)
                {
                    found(reason, at);
                }
            }
        }

        // `(Severity::Normal, reason, action, note)`.
        for (at, _) in code.match_indices("Severity::") {
            let before = code[..at].trim_end();
            if before.ends_with('(')
                && let Some(argument) = arguments(code, before.len() - 1, 1).get(1)
                && let Some(reason) = reason_of(source, argument.clone(), &constants, true)
            {
                found(reason, at);
            }
        }

        // `warnings.push((reason, message))`, `why = Some((reason, message))`.
        for pattern in ["warnings.push((", "why = Some(("] {
            for (at, _) in code.match_indices(pattern) {
                let open = at + pattern.len() - 1;
                if let Some(argument) = arguments(code, open, 0).first()
                    && let Some(reason) = reason_of(source, argument.clone(), &constants, true)
                {
                    found(reason, at);
                }
            }
        }

        // `for (key, reason) in [(key, reason), ...]`.
        for (at, pattern) in code.match_indices(", reason) in [") {
            let open = at + pattern.len() - 1;
            for item in arguments(code, open, usize::MAX) {
                let item = trimmed(code, item);
                if code[item.clone()].starts_with('(')
                    && let Some(argument) = arguments(code, item.start, 1).get(1)
                    && let Some(reason) = reason_of(source, argument.clone(), &constants, true)
                {
                    found(reason, at);
                }
            }
        }
    }
    reasons
}

/// The reason each table row of `page` explains: its first cell, one word in backticks (a
/// header or separator row has none).
fn reasons_in_table_rows(page: &str) -> BTreeSet<String> {
    page.lines()
        .filter_map(|line| {
            let cell = line.trim().strip_prefix('|')?.split('|').next()?.trim();
            let word = cell.strip_prefix('`')?.strip_suffix('`')?;
            let is_word = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric());
            is_word.then(|| word.to_owned())
        })
        .collect()
}

/// The bundle's logging ConfigMap (`050-ConfigMap`) is mounted where the operator reads its
/// file (`LOGGING_FILE`), and the operator reads it as Strimzi's: the root level from
/// `STRIMZI_LOG_LEVEL`, looked at again every 30 seconds.
#[test]
fn the_bundles_logging_config_map_is_mounted_where_the_operator_reads_it() {
    use strimzi_cluster_operator::config::LOGGING_FILE;
    use strimzi_operator_common::config::LogLevel;
    use strimzi_operator_common::logging::LoggingFile;

    let bundle = Bundle::load("cluster-operator");
    let config_maps: Vec<_> = bundle.of_kind("ConfigMap").collect();
    assert_eq!(config_maps.len(), 1, "{config_maps:?}");
    let name = config_maps[0]["metadata"]["name"].as_str().unwrap();
    let text = config_maps[0]["data"]["log4j2.properties"]
        .as_str()
        .unwrap();
    let file = LoggingFile::parse(text, |variable| {
        (variable == "STRIMZI_LOG_LEVEL").then(|| "DEBUG".to_owned())
    })
    .unwrap();
    assert_eq!(file.root, LogLevel::Debug);
    assert_eq!(
        file.monitor_interval,
        Some(std::time::Duration::from_secs(30))
    );

    let pod = bundle.deployment().spec.unwrap().template.spec.unwrap();
    let volume = pod
        .volumes
        .unwrap_or_default()
        .into_iter()
        .find(|volume| {
            volume
                .config_map
                .as_ref()
                .is_some_and(|source| source.name == name)
        })
        .expect("a volume of the logging ConfigMap");
    let mount = pod.containers[0]
        .volume_mounts
        .iter()
        .flatten()
        .find(|mount| mount.name == volume.name)
        .expect("the logging ConfigMap mounted");
    let (dir, file_name) = LOGGING_FILE.rsplit_once('/').unwrap();
    assert_eq!(mount.mount_path.trim_end_matches('/'), dir);
    assert_eq!(file_name, "log4j2.properties");
}
