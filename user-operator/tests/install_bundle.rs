//! `deploy/install/user-operator` against the code it installs: no wildcard rules, the
//! KafkaUser CRD identical to the generated one, our image and program, and a Deployment
//! whose every variable the user operator reads and accepts.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use strimzi_operator_common::OPERATOR_IMAGE;
use strimzi_tests::bundle::checked_bundle;
use strimzi_user_operator::config::UserOperatorConfig;

#[test]
fn the_user_operator_bundle_matches_the_operator() {
    let (_, config) = checked_bundle(
        "user-operator",
        OPERATOR_IMAGE,
        "/opt/strimzi/bin/user_operator_run.sh",
        |lookup| UserOperatorConfig::from_lookup(lookup),
    );
    assert_eq!(config.operator.http_port, 8081);
    assert_eq!(config.ca.cert_secret, "my-cluster-clients-ca-cert");
}
