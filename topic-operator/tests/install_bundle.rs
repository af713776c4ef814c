//! `deploy/install/topic-operator` against the code it installs: no wildcard rules, the
//! KafkaTopic CRD identical to the generated one, our image and program, and a Deployment
//! whose every variable the topic operator reads and accepts.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use strimzi_operator_common::OPERATOR_IMAGE;
use strimzi_tests::bundle::checked_bundle;
use strimzi_topic_operator::config::TopicOperatorConfig;

#[test]
fn the_topic_operator_bundle_matches_the_operator() {
    let (_, config) = checked_bundle(
        "topic-operator",
        OPERATOR_IMAGE,
        "/opt/strimzi/bin/topic_operator_run.sh",
        |lookup| TopicOperatorConfig::from_lookup(lookup),
    );
    assert!(config.operator.leader_election.is_none());
    assert!(config.use_finalizers);
}
