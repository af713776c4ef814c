#!/usr/bin/env bash
# Readiness probe of Kafka nodes (CONTRACT.md 3.3). Written for strimzi-rs.
#  - /tmp/strimzi.properties must exist: kafka_run.sh writes it, so a container that never ran
#    it (e.g. `sleep`) is never ready;
#  - a broker (process.roles holds "broker") is ready when our agent answers 2xx on
#    http://localhost:8080/v1/ready/ (it answers 204 once the broker state is RUNNING or later,
#    CONTRACT 3.6);
#  - a controller-only node is ready when something listens on TCP port 9090.
set -uo pipefail
config=/tmp/strimzi.properties
if [[ ! -f $config ]]; then
    echo "$config does not exist: no Kafka node was started in this container" >&2
    exit 1
fi
roles=$(sed -n 's/^[[:space:]]*process\.roles[[:space:]]*[=:][[:space:]]*//p' "$config" | tail -1)
if [[ ,${roles// /}, == *,broker,* ]]; then
    exec curl --silent --fail --max-time 4 --output /dev/null http://localhost:8080/v1/ready/
fi
# Controller only: a listening socket on 9090 in /proc/net/tcp or tcp6 (state 0A = LISTEN,
# port 9090 = 2382 in hex).
if awk '$2 ~ /:2382$/ && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
    exit 0
fi
echo "nothing listens on port 9090" >&2
exit 1
