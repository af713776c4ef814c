//! `deploy/install/cluster-operator` against the code it installs: no wildcard rules, CRDs
//! identical to the generated ones, our image and program, and a Deployment whose every
//! variable the operator reads and accepts, with the defaults the code has. And Strimzi's own
//! install files against the variables the operator reads or names as ignored. And every
//! other place that states our version (the packages, the Helm chart, the documentation)
//! against the workspace's.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::cell::RefCell;
use std::collections::BTreeSet;

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
