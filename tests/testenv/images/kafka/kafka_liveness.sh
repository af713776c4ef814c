#!/usr/bin/env bash
# Liveness probe of Kafka nodes (CONTRACT.md 3.3): passes while a process of this container
# runs a java executable, fails when none does. Written for strimzi-rs.
set -uo pipefail
for exe in /proc/[0-9]*/exe; do
    target=$(readlink "$exe" 2>/dev/null) || continue
    if [[ ${target##*/} == java ]]; then
        exit 0
    fi
done
echo "no java process runs in this container" >&2
exit 1
