//! `strimzi-topic-operator` as a user runs it: `--version` answers the workspace version
//! without reading the environment, any other argument is refused.

#![allow(missing_docs)]

use strimzi_tests::command_line::{assert_prints_version, assert_refuses};

const TOPIC_OPERATOR: &str = env!("CARGO_BIN_EXE_strimzi-topic-operator");

#[test]
fn the_topic_operator_prints_its_version() {
    assert_prints_version(
        TOPIC_OPERATOR,
        "strimzi-topic-operator",
        env!("CARGO_PKG_VERSION"),
    );
}

#[test]
fn the_topic_operator_refuses_other_arguments() {
    assert_refuses(TOPIC_OPERATOR, "strimzi-topic-operator", "--bogus");
}
