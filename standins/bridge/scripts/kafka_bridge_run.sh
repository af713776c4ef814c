#!/usr/bin/env bash
# Start script of the HTTP Bridge stand-in (CONTRACT.md section 8): the pod's args[0],
# /opt/strimzi/bin/docker/kafka_bridge_run.sh in the test environment's bridge image. Empties
# /tmp, copies the mounted application.properties to /tmp/kafka-bridge.properties (where
# Strimzi's bridge image keeps it) and runs the stand-in on that copy under tini. The stand-in
# prints the configuration with secrets hidden, resolves its placeholders, and exits 2 naming
# the file, key or Secret it cannot use. The JVM variables of the pod (heap, GC, Java options)
# have no meaning for it and are ignored.
set -euo pipefail

STRIMZI_HOME="${STRIMZI_HOME:-/opt/strimzi}"
config="${STRIMZI_HOME}/custom-config/application.properties"
properties=/tmp/kafka-bridge.properties

# A restarted container keeps /tmp (a memory emptyDir): start from an empty one, ignoring
# what cannot be deleted.
rm -rf /tmp/* 2>/dev/null || true

if [[ ! -f $config ]]; then
    echo "kafka_bridge_run.sh: $config not found (the ConfigMap <bridge>-bridge-config is mounted at ${STRIMZI_HOME}/custom-config)" >&2
    exit 1
fi
cp "$config" "$properties"

exec /usr/bin/tini -w -e 143 -s -- "${STRIMZI_HOME}/bin/strimzi-bridge-standin" "--config-file=${properties}"
