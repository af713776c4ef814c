#!/usr/bin/env bash
# Shared by our start scripts of the Kafka image (kafka_run.sh, kafka_connect_run.sh): sourced,
# never run. Everything here follows tests/testenv/images/CONTRACT.md of the strimzi-rs
# repository; the section named in each comment is where the fact and its source are written
# down. Written for strimzi-rs; no line is taken from another project.

# clear_tmp: empties /tmp (CONTRACT 2.1: /tmp is a memory emptyDir that a container restart
# keeps). Files that cannot be deleted are left alone.
clear_tmp() {
    find /tmp -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null || true
}

# print_hidden <properties file>: prints a configuration with the values of sasl.jaas.config
# and of every key ending in "password" replaced by [hidden] (CONTRACT 2.1).
print_hidden() {
    sed -E -e 's/^([[:space:]]*[^#!=:[:space:]]*(sasl\.jaas\.config|password))([[:space:]]*[=:][[:space:]]*).*$/\1\3[hidden]/' "$1"
}

# require_file <file>: fails loudly when a file the operator mounts is missing or empty
# (CONTRACT 0, "fail loudly").
require_file() {
    if [[ ! -s $1 ]]; then
        echo "ERROR: $1 is missing or empty (it comes from the pod's ConfigMap)" >&2
        exit 1
    fi
}

# to_bytes <size>: a byte count from a number (decimals allowed) with an optional K/M/G/T
# suffix in binary units, as the operator writes STRIMZI_DYNAMIC_HEAP_MAX and as the JVM
# prints its estimated heap (e.g. 1.94G) (CONTRACT 2.2).
to_bytes() {
    if ! awk -v size="$1" 'BEGIN {
            unit = toupper(size)
            if (unit !~ /^[0-9]+(\.[0-9]+)?[KMGT]?B?$/) exit 1
            gsub(/[0-9.]/, "", unit)
            sub(/B$/, "", unit)
            factor = 1
            if (unit == "K") factor = 1024
            if (unit == "M") factor = 1024 ^ 2
            if (unit == "G") factor = 1024 ^ 3
            if (unit == "T") factor = 1024 ^ 4
            printf "%.0f\n", int((size + 0) * factor)
        }'; then
        echo "ERROR: '$1' is not a size in bytes (a number with an optional K, M, G or T)" >&2
        return 1
    fi
}

# set_heap <default>: CONTRACT 2.2. KAFKA_HEAP_OPTS given by the operator is used as it is.
# Otherwise, with STRIMZI_DYNAMIC_HEAP_PERCENTAGE, the heap is that share of the memory the JVM
# sees in its cgroup (asked from the JVM itself: -XX:MaxRAMPercentage with -XshowSettings:vm
# prints the maximum heap it would take), capped at STRIMZI_DYNAMIC_HEAP_MAX, in whole MiB, as
# -Xms and -Xmx. Without either, the launcher's default heap <default> applies.
set_heap() {
    local default=$1 heap max line
    if [[ -n ${KAFKA_HEAP_OPTS:-} ]]; then
        return 0
    fi
    if [[ -n ${STRIMZI_DYNAMIC_HEAP_PERCENTAGE:-} ]]; then
        line=$(java "-XX:MaxRAMPercentage=$STRIMZI_DYNAMIC_HEAP_PERCENTAGE" -XshowSettings:vm -version 2>&1 |
            grep 'Max. Heap Size (Estimated)' || true)
        heap=$(to_bytes "$(awk '{print $NF}' <<<"$line")") || exit 1
        if [[ -n ${STRIMZI_DYNAMIC_HEAP_MAX:-} ]]; then
            max=$(to_bytes "$STRIMZI_DYNAMIC_HEAP_MAX") || exit 1
            ((heap <= max)) || heap=$max
        fi
        heap=$((heap / 1048576))
        export KAFKA_HEAP_OPTS="-Xms${heap}m -Xmx${heap}m"
        echo "Heap of $STRIMZI_DYNAMIC_HEAP_PERCENTAGE% of the container's memory${STRIMZI_DYNAMIC_HEAP_MAX:+ (at most $STRIMZI_DYNAMIC_HEAP_MAX bytes)}: $KAFKA_HEAP_OPTS"
    else
        export KAFKA_HEAP_OPTS=$default
    fi
}

# set_gc: CONTRACT 2.2. STRIMZI_KAFKA_GC_LOG_ENABLED=true logs the garbage collector to stdout
# with time stamps; false logs nothing. Never a GC log file (CONTRACT 2.1: stdout only).
set_gc() {
    if [[ ${STRIMZI_KAFKA_GC_LOG_ENABLED:-false} == true ]]; then
        export KAFKA_GC_LOG_OPTS="-Xlog:gc*:stdout:time"
    else
        export KAFKA_GC_LOG_OPTS=""
    fi
}

# set_jmx: CONTRACT 2.2. STRIMZI_JMX_ENABLED=true opens remote JMX on port 9999 (RMI on the same
# port, no TLS, RMI host name = the pod's first address); with STRIMZI_JMX_USERNAME that user,
# read-only, with STRIMZI_JMX_PASSWORD, from files under /tmp/jmx (password file mode 0400).
set_jmx() {
    local address opts
    KAFKA_JMX_OPTS=""
    if [[ ${STRIMZI_JMX_ENABLED:-false} == true ]]; then
        address=$(hostname -i 2>/dev/null | awk '{print $1}')
        opts="-Dcom.sun.management.jmxremote=true -Dcom.sun.management.jmxremote.port=9999"
        opts+=" -Dcom.sun.management.jmxremote.rmi.port=9999 -Dcom.sun.management.jmxremote.ssl=false"
        opts+=" -Djava.rmi.server.hostname=${address:-localhost}"
        if [[ -n ${STRIMZI_JMX_USERNAME:-} ]]; then
            mkdir -p /tmp/jmx
            printf '%s readonly\n' "$STRIMZI_JMX_USERNAME" >/tmp/jmx/jmx.access
            printf '%s %s\n' "$STRIMZI_JMX_USERNAME" "${STRIMZI_JMX_PASSWORD:-}" >/tmp/jmx/jmx.password
            chmod 0400 /tmp/jmx/jmx.password
            opts+=" -Dcom.sun.management.jmxremote.authenticate=true"
            opts+=" -Dcom.sun.management.jmxremote.access.file=/tmp/jmx/jmx.access"
            opts+=" -Dcom.sun.management.jmxremote.password.file=/tmp/jmx/jmx.password"
        else
            opts+=" -Dcom.sun.management.jmxremote.authenticate=false"
        fi
        KAFKA_JMX_OPTS=$opts
    fi
    export KAFKA_JMX_OPTS
}

# set_system_properties <jmx exporter switch>: CONTRACT 2.2 and 3.1. Appends
# STRIMZI_JAVA_SYSTEM_PROPERTIES to KAFKA_OPTS and, when the switch is "true", the Prometheus
# JMX exporter agent on 9404 with custom-config/metrics-config.json.
set_system_properties() {
    local exporter jar
    if [[ -n ${STRIMZI_JAVA_SYSTEM_PROPERTIES:-} ]]; then
        KAFKA_OPTS="${KAFKA_OPTS:-} $STRIMZI_JAVA_SYSTEM_PROPERTIES"
    fi
    if [[ $1 == true ]]; then
        for jar in /opt/prometheus-jmx-exporter/jmx_prometheus_javaagent-*.jar; do
            exporter=$jar
        done
        if [[ ! -f ${exporter:-} ]]; then
            echo "ERROR: no JMX exporter agent in /opt/prometheus-jmx-exporter" >&2
            exit 1
        fi
        require_file /opt/kafka/custom-config/metrics-config.json
        KAFKA_OPTS="${KAFKA_OPTS:-} -javaagent:$exporter=9404:/opt/kafka/custom-config/metrics-config.json"
    fi
    export KAFKA_OPTS
}

# set_logging: CONTRACT 3.2 step 3, 4 step 4: custom-config/log4j2.properties unless
# KAFKA_LOG4J_OPTS is set.
set_logging() {
    if [[ -z ${KAFKA_LOG4J_OPTS:-} ]]; then
        require_file /opt/kafka/custom-config/log4j2.properties
        export KAFKA_LOG4J_OPTS="-Dlog4j2.configurationFile=/opt/kafka/custom-config/log4j2.properties"
    fi
}
