//! `deploy/install/topic-operator` against the code it installs: no wildcard rules, the
//! KafkaTopic CRD identical to the generated one, our image and program, and a Deployment
//! whose every variable the topic operator reads and accepts.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use strimzi_operator_common::OPERATOR_IMAGE;
use strimzi_tests::bundle::{Bundle, common_problems, container_environment, read_environment};
use strimzi_topic_operator::config::TopicOperatorConfig;

#[test]
fn the_topic_operator_bundle_matches_the_operator() {
    let bundle = Bundle::load("topic-operator");
    let problems = common_problems(
        &bundle,
        OPERATOR_IMAGE,
        "/opt/strimzi/bin/topic_operator_run.sh",
    );
    assert!(problems.is_empty(), "{problems:#?}");
    let environment = container_environment(
        &bundle.deployment(),
        "myproject",
        "strimzi-topic-operator-x",
    );
    let (config, unread) = read_environment(&environment, |lookup| {
        TopicOperatorConfig::from_lookup(lookup)
    });
    let config = config.unwrap();
    assert!(unread.is_empty(), "set but never read: {unread:?}");
    assert!(config.operator.leader_election.is_none());
    assert!(config.use_finalizers);
}
