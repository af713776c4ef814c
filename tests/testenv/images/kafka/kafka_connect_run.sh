#!/usr/bin/env bash
# Start script of Kafka Connect and MirrorMaker 2 workers: the `args[0]` of their containers
# (CONTRACT.md section 4, whose numbered steps this follows). Written for strimzi-rs.
#
# Reads: the ConfigMap at /opt/kafka/custom-config/ (kafka-connect.properties,
# log4j2.properties, metrics-config.json), KAFKA_CONNECT_JMX_EXPORTER_ENABLED,
# STRIMZI_TRACING, the JVM variables of CONTRACT 2.2. KAFKA_MIRRORMAKER_2_CLUSTERS is accepted
# and not used (step 7). Writes /tmp/strimzi-connect.properties and /tmp/kafka/.
set -euo pipefail

kafka_home=/opt/kafka
config_dir=$kafka_home/custom-config
# shellcheck source=kafka_common.sh
source "$kafka_home/kafka_common.sh"

# 1. Empty /tmp.
clear_tmp
mkdir -p /tmp/kafka

# 2. The worker's REST address: the first four labels of <pod>.<service>.<namespace>.svc...
fqdn=$(hostname -f 2>/dev/null || true)
ADVERTISED_HOSTNAME=$(cut -d . -f 1-4 <<<"${fqdn:-${HOSTNAME:-$(hostname)}}")
export ADVERTISED_HOSTNAME
echo "ADVERTISED_HOSTNAME=$ADVERTISED_HOSTNAME"

# 3. The worker configuration.
require_file "$config_dir/kafka-connect.properties"
cp "$config_dir/kafka-connect.properties" /tmp/strimzi-connect.properties
echo "Starting Kafka Connect with configuration:"
print_hidden /tmp/strimzi-connect.properties
echo ""

# 4. Logging, JMX exporter, JMX, system properties, heap (Connect's launcher default), GC.
set_logging
set_jmx
set_system_properties "${KAFKA_CONNECT_JMX_EXPORTER_ENABLED:-false}"
set_heap "-Xms256M -Xmx2G"
set_gc

# 5. Tracing: there is no tracing agent in this image yet (CONTRACT 10): refuse loudly.
if [[ -n ${STRIMZI_TRACING:-} ]]; then
    echo "ERROR: STRIMZI_TRACING=$STRIMZI_TRACING is set, but this image has no tracing agent" >&2
    exit 1
fi

# 6. The worker, under tini.
exec /usr/bin/tini -w -e 143 -- "$kafka_home/bin/kafka-run-class.sh" \
    org.apache.kafka.connect.cli.ConnectDistributed /tmp/strimzi-connect.properties
