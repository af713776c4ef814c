#!/usr/bin/env bash
# Start script of Kafka nodes (brokers, controllers, combined): the `args[0]` of the `kafka`
# container our cluster operator creates (CONTRACT.md 3.1, 3.2). Written for strimzi-rs; the
# steps and their order are those of CONTRACT 3.2, where each fact's source is named.
#
# Reads: HOSTNAME (= pod name, CONTRACT 2.1), KAFKA_CLUSTER_NAME, STRIMZI_KAFKA_GC_LOG_ENABLED,
# KAFKA_JMX_EXPORTER_ENABLED and the JVM variables of CONTRACT 2.2; the ConfigMap mounted at
# /opt/kafka/custom-config/ (server.config, log4j2.properties, cluster.id, metadata.version,
# metrics-config.json); the service account files for the agent (CONTRACT 3.6).
# Writes (all under /tmp, CONTRACT 2.1): /tmp/strimzi.properties, /tmp/kafka/,
# /tmp/kafka-agent.properties, /tmp/jmx/ with JMX authentication.
set -euo pipefail

kafka_home=/opt/kafka
config_dir=$kafka_home/custom-config
# shellcheck source=kafka_common.sh
source "$kafka_home/kafka_common.sh"

# 1. Empty /tmp.
clear_tmp

# 2. Node ID: the last "-"-separated field of the host name (pod <cluster>-<pool>-<id>).
pod=${HOSTNAME:-$(hostname)}
node_id=${pod##*-}
if [[ ! $node_id =~ ^[0-9]+$ ]]; then
    echo "ERROR: the node ID '$node_id' taken from the host name '$pod' is not a number" >&2
    exit 1
fi
echo "STRIMZI_BROKER_ID=$node_id"

for key in server.config cluster.id metadata.version; do
    require_file "$config_dir/$key"
done

# 3. Logging.
set_logging

# 4. JMX, system properties and the JMX exporter agent.
set_jmx
set_system_properties "${KAFKA_JMX_EXPORTER_ENABLED:-false}"

# 5. The configuration Kafka starts with, where the readiness script looks for it.
cp "$config_dir/server.config" /tmp/strimzi.properties
mkdir -p /tmp/kafka
echo "Starting Kafka with configuration:"
print_hidden /tmp/strimzi.properties
echo ""

# The Strimzi metrics reporter has no release on Maven Central and is not in our image
# (CONTRACT 10): refuse a configuration that names it rather than fail deep in Kafka.
if grep -q 'io\.strimzi\.kafka\.metrics\.prometheus\.' /tmp/strimzi.properties; then
    echo "ERROR: server.config names io.strimzi.kafka.metrics.prometheus classes (metricsConfig type strimziMetricsReporter), which this image does not have" >&2
    exit 1
fi

# property <key>: the last value of a key of /tmp/strimzi.properties (empty when absent).
property() {
    sed -n "s/^[[:space:]]*${1//./\\.}[[:space:]]*[=:][[:space:]]*//p" /tmp/strimzi.properties | tail -1
}

# 6. Heap (the broker's launcher default is 1 GiB).
set_heap "-Xmx1G -Xms1G"

# 7. Format the storage, leaving directories that are formatted already (-g). The cluster ID
# is passed as --cluster-id=<id> since it may start with "-".
cluster_id=$(tr -d '\n' <"$config_dir/cluster.id")
metadata_version=$(tr -d '\n' <"$config_dir/metadata.version")
echo "Formatting the storage of node $node_id (cluster ID $cluster_id, metadata version $metadata_version)"
if ! KAFKA_HEAP_OPTS="-Xmx256M" KAFKA_OPTS="" KAFKA_JMX_OPTS="" KAFKA_GC_LOG_OPTS="" \
    "$kafka_home/bin/kafka-storage.sh" format "--cluster-id=$cluster_id" \
    "--release-version=$metadata_version" --config /tmp/strimzi.properties --ignore-formatted; then
    echo "ERROR: formatting the storage failed (kafka-storage.sh format)" >&2
    exit 1
fi

# 8. The KRaft metadata directory. A __cluster_metadata-0 of this node in another data volume
# than metadata.log.dir is left from before the metadata moved: delete it. Otherwise delete the
# quorum state, so a voter set changed by scaling does not stop the node.
metadata_dir=$(property metadata.log.dir)
if [[ -z $metadata_dir ]]; then
    metadata_dir=$(property log.dirs)
    metadata_dir=${metadata_dir%%,*}
fi
moved=false
for old in /var/lib/kafka/data-*/kafka-log"$node_id"/__cluster_metadata-0; do
    if [[ -d $old && ${old%/__cluster_metadata-0} != "$metadata_dir" ]]; then
        echo "Deleting $old: the metadata log now lives in $metadata_dir"
        rm -rf "$old"
        moved=true
    fi
done
if ! $moved && [[ -n $metadata_dir && -f $metadata_dir/__cluster_metadata-0/quorum-state ]]; then
    echo "Deleting $metadata_dir/__cluster_metadata-0/quorum-state"
    rm -f "$metadata_dir/__cluster_metadata-0/quorum-state"
fi

# 9. The broker-state agent inside the Kafka JVM (CONTRACT 3.6), with what it needs to read its
# certificates from the Kubernetes API.
agent_jar=""
for jar in "$kafka_home"/libs/strimzi-rs-kafka-agent-*.jar; do
    agent_jar=$jar
done
if [[ ! -f $agent_jar ]]; then
    echo "ERROR: the broker-state agent is missing from $kafka_home/libs" >&2
    exit 1
fi
if [[ -z ${KAFKA_CLUSTER_NAME:-} ]]; then
    echo "ERROR: KAFKA_CLUSTER_NAME is not set" >&2
    exit 1
fi
service_account=/var/run/secrets/kubernetes.io/serviceaccount
namespace=$(cat "$service_account/namespace" 2>/dev/null || true)
{
    echo "node.name=$pod"
    echo "namespace=$namespace"
    echo "ca.secret=$KAFKA_CLUSTER_NAME-cluster-ca-cert"
    echo "node.secret=$pod"
    echo "api.url=https://${KUBERNETES_SERVICE_HOST:-kubernetes.default.svc}:${KUBERNETES_SERVICE_PORT:-443}"
    echo "api.token=$service_account/token"
    echo "api.ca=$service_account/ca.crt"
} >/tmp/kafka-agent.properties
KAFKA_OPTS="${KAFKA_OPTS:-} -javaagent:$agent_jar=/tmp/kafka-agent.properties"
export KAFKA_OPTS

# 10. GC logging; Kafka's own GC log file is never used.
set_gc
export GC_LOG_ENABLED=false

# 11. The server, under tini (PID 1 work: signals passed on, zombies reaped, 143 reported as 0).
echo "Starting Kafka node $node_id"
exec /usr/bin/tini -w -e 143 -- "$kafka_home/bin/kafka-run-class.sh" kafka.Kafka /tmp/strimzi.properties
