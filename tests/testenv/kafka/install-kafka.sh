#!/usr/bin/env bash
# Installs the jars of a single-node Apache Kafka broker (and its CLI tools)
# for the integration tests, from Maven Central, into a cache outside the repo:
#
#   ${STRIMZI_TESTENV_CACHE:-$HOME/.cache/strimzi-testenv}/kafka-<version>/libs/
#
# Run the broker with `java -cp '<that dir>/*' kafka.Kafka server.properties`
# (see README.md next to this script).
#
# With a warm cache this does nothing. Output: one line on stdout,
#   cached <libs dir>
#   installed in <N>s <libs dir>
# or, on failure, one line on stderr naming the step and the log file, and a
# non-zero exit status.
#
# Environment:
#   STRIMZI_TESTENV_CACHE        cache root (default $HOME/.cache/strimzi-testenv)
#   STRIMZI_TESTENV_MAVEN_REPO   Maven local repository to use (default: Maven's own, ~/.m2/repository)
#   MVN, JAVA                    commands to run (default: mvn, java)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
: "${KAFKA_VERSION:?}" "${SCALA_BINARY_VERSION:?}" "${LOG4J2_VERSION:?}"

cache_root="${STRIMZI_TESTENV_CACHE:-$HOME/.cache/strimzi-testenv}"
install_dir="$cache_root/kafka-$KAFKA_VERSION"
libs_dir="$install_dir/libs"
# Written last: its presence means libs/ is complete. Its content records
# exactly what was installed, so a change of pins is noticed.
marker="$install_dir/.installed"
log="$cache_root/kafka-$KAFKA_VERSION.install.log"
mvn_cmd="${MVN:-mvn}"
java_cmd="${JAVA:-java}"

expected_marker() {
    printf 'kafka=%s scala=%s log4j2=%s pom=%s\n' \
        "$KAFKA_VERSION" "$SCALA_BINARY_VERSION" "$LOG4J2_VERSION" \
        "$(cksum < "$here/pom.xml" | cut -d' ' -f1)"
}

is_installed() {
    [[ -f "$marker" ]] && [[ "$(cat "$marker")" == "$(expected_marker)" ]]
}

fail() {
    echo "install-kafka: $1 failed (kafka $KAFKA_VERSION); see $log" >&2
    exit 1
}

if is_installed; then
    [[ ${STRIMZI_TESTENV_QUIET:-} == 1 ]] || echo "cached $libs_dir"
    exit 0
fi

mkdir -p "$cache_root"
# Several test binaries may start at once: let one install and the others wait.
if command -v flock > /dev/null; then
    exec 9> "$cache_root/.kafka-$KAFKA_VERSION.lock"
    flock 9
    if is_installed; then
        [[ ${STRIMZI_TESTENV_QUIET:-} == 1 ]] || echo "cached $libs_dir"
        exit 0
    fi
fi

start=$SECONDS
: > "$log"
tmp="$(mktemp -d "$cache_root/.kafka-$KAFKA_VERSION.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

command -v "$mvn_cmd" >> "$log" 2>&1 || fail "finding Maven ('$mvn_cmd')"
command -v "$java_cmd" >> "$log" 2>&1 || fail "finding Java ('$java_cmd')"

mvn_args=(-B -f "$here/pom.xml"
    "-Dkafka.version=$KAFKA_VERSION"
    "-Dscala.binary.version=$SCALA_BINARY_VERSION"
    "-Dlog4j2.version=$LOG4J2_VERSION")
if [[ -n "${STRIMZI_TESTENV_MAVEN_REPO:-}" ]]; then
    mvn_args+=("-Dmaven.repo.local=$STRIMZI_TESTENV_MAVEN_REPO")
fi

echo "== mvn dependency:copy-dependencies" >> "$log"
"$mvn_cmd" "${mvn_args[@]}" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$tmp/libs" >> "$log" 2>&1 \
    || fail "downloading the Kafka jars with Maven"

for jar in "kafka_$SCALA_BINARY_VERSION-$KAFKA_VERSION.jar" "kafka-tools-$KAFKA_VERSION.jar" \
           "log4j-core-$LOG4J2_VERSION.jar" "log4j-slf4j-impl-$LOG4J2_VERSION.jar"; do
    [[ -f "$tmp/libs/$jar" ]] || { echo "missing $jar" >> "$log"; fail "checking the downloaded jars"; }
done

# Smoke test: the storage tool loads from this classpath.
echo "== smoke test: kafka.tools.StorageTool random-uuid" >> "$log"
"$java_cmd" -Xmx128m -cp "$tmp/libs/*" \
    -Dlog4j2.configurationFile="$here/log4j2.properties" -Dkafka.logs.dir="$tmp" -Dkafka.log.name=smoke \
    kafka.tools.StorageTool random-uuid >> "$log" 2>&1 \
    || fail "running kafka.tools.StorageTool from the downloaded jars"

# Move into place, then write the marker.
rm -rf "$install_dir"
mkdir -p "$install_dir"
mv "$tmp/libs" "$libs_dir" || fail "moving the jars into $install_dir"
expected_marker > "$marker"

echo "installed in $((SECONDS - start))s $libs_dir"
