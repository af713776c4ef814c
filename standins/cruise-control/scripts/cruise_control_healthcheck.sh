#!/usr/bin/env bash
# Liveness and readiness check of the Cruise Control stand-in (CONTRACT.md 5.3): GET
# $API_HEALTHCHECK_PATH on localhost:$API_PORT, over HTTPS trusting the REST API's own
# certificate chain when STRIMZI_CC_API_SSL_ENABLED=true, as $API_HEALTHCHECK_USERNAME with the
# mounted healthcheck.password when STRIMZI_CC_API_AUTH_ENABLED=true. Passes on 2xx.
set -euo pipefail

CC_CERTS="${CRUISE_CONTROL_CC_CERTS_DIR:-/etc/cruise-control/cc-certs}"
API_AUTH="${CRUISE_CONTROL_API_AUTH_DIR:-/opt/cruise-control/api-auth-config}"

scheme=http
args=(--silent --show-error --fail --max-time 5 --output /dev/null)
if [ "${STRIMZI_CC_API_SSL_ENABLED:-false}" = "true" ]; then
    scheme=https
    args+=(--cacert "${CC_CERTS}/cruise-control.crt")
fi
url="${scheme}://localhost:${API_PORT}${API_HEALTHCHECK_PATH}"
if [ "${STRIMZI_CC_API_AUTH_ENABLED:-false}" = "true" ]; then
    password="$(cat "${API_AUTH}/healthcheck.password")"
    credentials="${API_HEALTHCHECK_USERNAME}:${password}"
    credentials="${credentials//\\/\\\\}"
    credentials="${credentials//\"/\\\"}"
    # The credentials reach curl on its standard input, not on its command line.
    exec curl "${args[@]}" --config - "${url}" <<<"user = \"${credentials}\""
fi
exec curl "${args[@]}" "${url}"
