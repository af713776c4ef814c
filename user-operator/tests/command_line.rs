//! `strimzi-user-operator` as a user runs it: `--version` answers the workspace version
//! without reading the environment, any other argument is refused.

#![allow(missing_docs)]

use strimzi_tests::command_line::{assert_prints_version, assert_refuses};

const USER_OPERATOR: &str = env!("CARGO_BIN_EXE_strimzi-user-operator");

#[test]
fn the_user_operator_prints_its_version() {
    assert_prints_version(
        USER_OPERATOR,
        "strimzi-user-operator",
        env!("CARGO_PKG_VERSION"),
    );
}

#[test]
fn the_user_operator_refuses_other_arguments() {
    assert_refuses(USER_OPERATOR, "strimzi-user-operator", "--bogus");
}
