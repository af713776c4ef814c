#!/usr/bin/env bash
# Prints the workspace version: `version` in the `[workspace.package]` table of the workspace's
# Cargo.toml, which every crate inherits and which tags the operator image, the install
# bundles' and the chart's references to it, and the release artifacts. One line naming the
# file and exit status 1 when it is not there.
set -euo pipefail
manifest=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/Cargo.toml
version=$(awk '/^\[/ { section = $1 }
    section == "[workspace.package]" && /^version[[:space:]]*=/ { sub(/^[^"]*"/, ""); sub(/".*/, ""); print; exit }' \
    "$manifest")
if [[ -z $version ]]; then
    echo "workspace-version.sh: no version in [workspace.package] of $manifest" >&2
    exit 1
fi
echo "$version"
