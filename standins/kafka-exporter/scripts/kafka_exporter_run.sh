#!/usr/bin/env bash
# Start script of the Kafka Exporter stand-in (CONTRACT.md section 6): the pod's args[0],
# /opt/kafka-exporter/kafka_exporter_run.sh in the test environment's Kafka image. The
# stand-in (strimzi-kafka-exporter-standin, installed as /opt/kafka-exporter/kafka_exporter)
# turns the operator's KAFKA_EXPORTER_* variables and the mounted certificates into Kafka
# Exporter's flags itself when started without arguments, so each regular expression stays one
# argument (no shell word splitting of user text); it prints those flags, and exits 2 naming a
# variable or file it cannot use. tini, as PID 1, passes SIGTERM on and reports 143 as 0.
set -euo pipefail

# A restarted container keeps /tmp (a memory emptyDir): start from an empty one, ignoring
# what cannot be deleted.
rm -rf /tmp/* 2>/dev/null || true

exec /usr/bin/tini -w -e 143 -- "${KAFKA_EXPORTER_HOME:-/opt/kafka-exporter}/kafka_exporter"
