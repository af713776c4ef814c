//! `strimzi-crd-generator --version` answers the workspace version (clap's `version`).

#![allow(missing_docs)]

use strimzi_tests::command_line::assert_prints_version;

#[test]
fn the_crd_generator_prints_its_version() {
    assert_prints_version(
        env!("CARGO_BIN_EXE_strimzi-crd-generator"),
        "strimzi-crd-generator",
        env!("CARGO_PKG_VERSION"),
    );
}
