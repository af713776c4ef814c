#!/usr/bin/env bash
# Our Kafka launcher (CONTRACT.md section 10, "Kafka bin/ launchers"): runs a Java main class of
# Kafka's with /opt/kafka/libs on the class path. Usage: kafka-run-class.sh <main class> [args].
# Every tool wrapper of bin/ and our start scripts go through it. Written for strimzi-rs.
#
# JVM options, in this order (CONTRACT 2.2): KAFKA_HEAP_OPTS (default -Xmx256M, the tools'
# heap), KAFKA_JVM_PERFORMANCE_OPTS (replaces the default G1 set as a whole), KAFKA_GC_LOG_OPTS,
# KAFKA_JMX_OPTS, KAFKA_LOG4J_OPTS (default: config/tools-log4j2.properties, console only),
# KAFKA_OPTS. CLASSPATH, when set, comes before the jars of libs/.
set -euo pipefail

if (($# < 1)); then
    echo "usage: $0 <main class> [arguments]" >&2
    exit 2
fi
main=$1
shift

home=${KAFKA_HOME:-/opt/kafka}
java=java
if [[ -n ${JAVA_HOME:-} ]]; then
    java=$JAVA_HOME/bin/java
fi

# Class path: every jar of libs/ except those Kafka's own launcher leaves out by name (the
# file connector, and test, sources and javadoc jars) (CONTRACT 3.2 step 11).
classpath=${CLASSPATH:-}
shopt -s nullglob
for jar in "$home"/libs/*.jar; do
    case ${jar##*/} in
        connect-file-* | *-test.jar | *-test-sources.jar | *-sources.jar | *-javadoc.jar) continue ;;
    esac
    classpath=${classpath:+$classpath:}$jar
done
shopt -u nullglob

heap=${KAFKA_HEAP_OPTS:-"-Xmx256M"}
performance=${KAFKA_JVM_PERFORMANCE_OPTS:-"-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true"}
logging=${KAFKA_LOG4J_OPTS:-"-Dlog4j2.configurationFile=$home/config/tools-log4j2.properties"}

# The option variables hold several words each: split on blanks on purpose, but never expand
# a word as a file pattern (-Xlog:gc* would vanish under nullglob).
set -f
# shellcheck disable=SC2086
exec "$java" $heap $performance ${KAFKA_GC_LOG_OPTS:-} ${KAFKA_JMX_OPTS:-} $logging ${KAFKA_OPTS:-} \
    -cp "$classpath" "$main" "$@"
