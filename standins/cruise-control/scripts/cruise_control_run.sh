#!/usr/bin/env bash
# Start script of the Cruise Control stand-in (CONTRACT.md 5.1, 5.7): the pod's args[0],
# /opt/cruise-control/cruise_control_run.sh in the test environment's Kafka image. Empties the
# stand-in's part of /tmp (a restarted container keeps /tmp) and runs the stand-in under tini,
# which as PID 1 passes SIGTERM on and reports 143 as 0; the stand-in reads the environment and
# the mounted files itself and exits 1 naming what is missing or malformed. The JVM variables
# of the pod (heap, GC) have no meaning for it and are ignored.
set -euo pipefail

CRUISE_CONTROL_HOME="${CRUISE_CONTROL_HOME:-/opt/cruise-control}"
rm -rf /tmp/cruise-control 2>/dev/null || true

exec /usr/bin/tini -w -e 143 -- "${CRUISE_CONTROL_HOME}/strimzi-cruise-control-standin"
