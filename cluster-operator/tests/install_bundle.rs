//! `deploy/install/cluster-operator` against the code it installs: no wildcard rules, CRDs
//! identical to the generated ones, our image and program, and a Deployment whose every
//! variable the operator reads and accepts, with the defaults the code has.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use strimzi_cluster_operator::config::ClusterOperatorConfig;
use strimzi_cluster_operator::model::nodes::images::{DEFAULT_KAFKA_INIT_IMAGE, KafkaImages};
use strimzi_operator_common::OPERATOR_IMAGE;
use strimzi_operator_common::config::WatchedNamespaces;
use strimzi_tests::bundle::{
    Bundle, PLACEHOLDER_NAMESPACE, checked_bundle, container_environment, read_environment,
    rule_problems,
};

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
