#!/usr/bin/env bash
# Builds the operator image's root filesystem into <root> (an empty or missing folder):
#
#   /usr/local/bin/strimzi-cluster-operator, strimzi-topic-operator, strimzi-user-operator,
#   strimzi-kafka-init          static binaries (glibc linked in), symbols stripped
#   /opt/strimzi/bin/*_run.sh   links to them under the names Strimzi's pods and Deployments
#                               start (cluster_operator_run.sh, topic_operator_run.sh,
#                               user_operator_run.sh, kafka_init_run.sh)
#   /etc/passwd, /etc/group     root and strimzi (uid 1001, group 0, home /tmp)
#   /tmp                        mode 1777
#
# Usage: build-root.sh [--also <package>]... [--also-into <dir>] <root>
#                                  (from anywhere; cargo runs in the workspace root)
#   --also <package>   also build that workspace package's binary (named as the package) in
#                      the same cargo invocation, with the same settings, and copy it to the
#                      --also-into folder (not into <root>). The test environment builds its
#                      stand-ins this way (tests/testenv/images/build-images.sh): one
#                      invocation resolves one set of dependency features, so nothing is
#                      compiled twice, and the operators' binaries come out the same as without.
# Environment: CARGO (cargo program), CARGO_TARGET_DIR (target folder; the binaries land in
# <target>/<triple>/<profile folder>), STRIMZI_OPERATOR_PROFILE (cargo profile: `release`,
# the default and what the Dockerfile builds; the test environment builds `dev`, the same
# code unoptimised, in a fraction of the time). Run by the Dockerfile's build stage and by
# the test environment.
set -euo pipefail

usage="usage: build-root.sh [--also <package>]... [--also-into <dir>] <root>"
also=()
also_into=""
while (($# > 1)); do
    case $1 in
        --also) also+=("${2:?$usage}") ;;
        --also-into) also_into=${2:?$usage} ;;
        *) echo "build-root.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
    esac
    shift 2
done
root=${1:?$usage}
if ((${#also[@]} > 0)) && [[ -z $also_into ]]; then
    echo "build-root.sh: --also needs --also-into ($usage)" >&2
    exit 2
fi
workspace=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cargo=${CARGO:-cargo}
command -v "$cargo" >/dev/null || { echo "build-root.sh: cargo not found: install Rust (https://rustup.rs)" >&2; exit 1; }

triple=$(uname -m)-unknown-linux-gnu
binaries=(strimzi-cluster-operator strimzi-topic-operator strimzi-user-operator strimzi-kafka-init)
# Static glibc: nothing to load at run time, so the image needs no libraries. An explicit
# --target keeps the static flag off build scripts and procedural macros.
cd "$workspace"
# Cargo sets these for the programs it runs (a test that provisions this image inherits them),
# and CI's test runner sets RUSTC_BOOTSTRAP for test programs (.ci/test-runner). Build scripts
# that declare `rerun-if-env-changed` on one of them (CARGO_MANIFEST_DIR, CARGO_PKG_NAME,
# RUSTC_BOOTSTRAP, ...) are compared with the caller's value, so a build from a test and one
# from a shell would each find the other's artifacts stale and rebuild everything (minutes).
for variable in $(compgen -e); do
    case $variable in
        CARGO_MANIFEST_* | CARGO_PKG_* | CARGO_CRATE_NAME | CARGO_BIN_NAME | CARGO_PRIMARY_PACKAGE | \
            CARGO_TARGET_TMPDIR | CARGO_CFG_* | CARGO_FEATURE_* | OUT_DIR | RUSTC_BOOTSTRAP) unset "$variable" ;;
    esac
done
profile=${STRIMZI_OPERATOR_PROFILE:-release}
case $profile in
    dev) profile_dir=debug ;;
    *) profile_dir=$profile ;;
esac
profile_variable=$(echo "$profile" | tr 'a-z-' 'A-Z_')
# Incremental compilation fixed off: a caller's CARGO_INCREMENTAL (CI sets 0, a shell leaves
# the dev profile's default on) would otherwise make each build find the other's stale.
env RUSTFLAGS="-C target-feature=+crt-static" "CARGO_PROFILE_${profile_variable}_STRIP=symbols" CARGO_INCREMENTAL=0 \
    "$cargo" build --profile "$profile" --locked --target "$triple" \
    -p strimzi-cluster-operator -p strimzi-topic-operator -p strimzi-user-operator \
    "${also[@]/#/--package=}" --bins
target=${CARGO_TARGET_DIR:-$workspace/target}
[[ $target == /* ]] || target=$workspace/$target

# install_static <binary> <folder>: copies a binary cargo built (unless an identical one is
# there already: a root built before is updated in place), which must not ask for a program
# interpreter (dynamic loader).
install_static() {
    install -C -m 0755 "$target/$triple/$profile_dir/$1" "$2/$1"
    if readelf --program-headers "$2/$1" | grep -q 'program interpreter'; then
        echo "build-root.sh: $1 is not statically linked" >&2
        exit 1
    fi
}
mkdir -p "$root/usr/local/bin" "$root/opt/strimzi/bin" "$root/etc" "$root/tmp"
for binary in "${binaries[@]}"; do
    install_static "$binary" "$root/usr/local/bin"
done
if ((${#also[@]} > 0)); then
    mkdir -p "$also_into"
    for binary in "${also[@]}"; do
        install_static "$binary" "$also_into"
    done
fi
ln -sfn ../../../usr/local/bin/strimzi-cluster-operator "$root/opt/strimzi/bin/cluster_operator_run.sh"
ln -sfn ../../../usr/local/bin/strimzi-topic-operator "$root/opt/strimzi/bin/topic_operator_run.sh"
ln -sfn ../../../usr/local/bin/strimzi-user-operator "$root/opt/strimzi/bin/user_operator_run.sh"
ln -sfn ../../../usr/local/bin/strimzi-kafka-init "$root/opt/strimzi/bin/kafka_init_run.sh"
printf '%s\n' 'root:x:0:0:root:/:/sbin/nologin' 'strimzi:x:1001:0:strimzi:/tmp:/sbin/nologin' >"$root/etc/passwd"
printf '%s\n' 'root:x:0:' >"$root/etc/group"
chmod 0644 "$root/etc/passwd" "$root/etc/group"
find "$root" -type d -exec chmod 0755 {} +
chmod 1777 "$root/tmp"
