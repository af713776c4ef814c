//! `strimzi-cluster-operator` and `strimzi-kafka-init` as a user runs them: `--version` answers
//! the workspace version without reading the environment, any other argument is refused.

#![allow(missing_docs)]

use strimzi_tests::command_line::{assert_prints_version, assert_refuses};

const CLUSTER_OPERATOR: &str = env!("CARGO_BIN_EXE_strimzi-cluster-operator");
const KAFKA_INIT: &str = env!("CARGO_BIN_EXE_strimzi-kafka-init");

#[test]
fn the_cluster_operator_prints_its_version() {
    assert_prints_version(
        CLUSTER_OPERATOR,
        "strimzi-cluster-operator",
        env!("CARGO_PKG_VERSION"),
    );
}

#[test]
fn the_cluster_operator_refuses_other_arguments() {
    for argument in ["--help", "--bogus", "run"] {
        assert_refuses(CLUSTER_OPERATOR, "strimzi-cluster-operator", argument);
    }
}

#[test]
fn the_kafka_init_program_prints_its_version() {
    assert_prints_version(KAFKA_INIT, "strimzi-kafka-init", env!("CARGO_PKG_VERSION"));
}

#[test]
fn the_kafka_init_program_refuses_other_arguments() {
    assert_refuses(KAFKA_INIT, "strimzi-kafka-init", "--bogus");
}
