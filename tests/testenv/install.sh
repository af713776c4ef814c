#!/usr/bin/env bash
# Builds the binaries of the local test Kubernetes from Go modules into a cache outside the
# repository: the control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler), kwok's fake nodes, and what a real node runs (kubelet, kube-proxy,
# kubectl, containerd with ctr and its runc shim, CoreDNS), and helm for the chart check:
#
#   ${STRIMZI_TESTENV_CACHE:-$HOME/.cache/strimzi-testenv}/<component>-<version>/bin/<binary>
#
# Versions come from versions.env next to this script. A component whose binaries are
# all present is not rebuilt, so a warm cache makes this script a no-op. Each build runs
# in a temporary directory inside the cache and is moved into place with a single rename,
# so an interrupted build never looks complete. Build output goes to <cache>/logs/<component>.log.
#
# Missing Debian packages that the real nodes, the image build and the tests (promtool, skopeo)
# need are installed first (as root). `install.sh --packages` installs only those; `install.sh --without-helm` builds
# everything but helm (CI builds helm later, beside the tests, since only the chart check and
# the Helm install test need it).
#
# Needs: go (the version named by the Kubernetes go.mod `go` line or newer) and access
# to a Go module proxy.
set -Eeuo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

cache=${STRIMZI_TESTENV_CACHE:-$HOME/.cache/strimzi-testenv}
logs=$cache/logs

export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOFLAGS=-buildvcs=false
export GOWORK=off

kube_dir=$cache/kubernetes-$KUBERNETES_VERSION
etcd_dir=$cache/etcd-$ETCD_VERSION
kwok_dir=$cache/kwok-$KWOK_VERSION
containerd_dir=$cache/containerd-$CONTAINERD_VERSION
coredns_dir=$cache/coredns-$COREDNS_VERSION
helm_dir=$cache/helm-$HELM_VERSION
# Built together in one wrapper module, so the packages they share compile once.
kube_bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
containerd_bins=(containerd ctr containerd-shim-runc-v2)

current_component=""
current_log=""
on_error() {
    local rc=$?
    if [[ -n $current_component ]]; then
        rm -rf "${work:-}"
        echo "install.sh: building $current_component failed (exit $rc); log: $current_log" >&2
    else
        echo "install.sh: failed (exit $rc) outside a component build" >&2
    fi
    exit "$rc"
}
trap on_error ERR

# complete <dir> <binary>...: true when every binary exists and is executable.
complete() {
    local dir=$1 b
    shift
    for b in "$@"; do
        [[ -x $dir/bin/$b ]] || return 1
    done
}

# start <component>: opens the log and a temp dir ($work) inside the cache.
start() {
    current_component=$1
    current_log=$logs/$1.log
    work=$(mktemp -d "$cache/.build-$1.XXXXXX")
    mkdir -p "$work/out/bin"
    : >"$current_log"
    build_started=$SECONDS
}

# finish <final dir>: moves $work/out to the final dir in one rename.
finish() {
    local final=$1
    rm -rf "$final"
    mv "$work/out" "$final"
    rm -rf "$work"
    echo "$current_component: built in $((SECONDS - build_started))s"
    current_component=""
}

# log <command...>: runs a command with its output appended to the component log.
log() {
    echo "+ $*" >>"$current_log"
    "$@" >>"$current_log" 2>&1
}

build_kubernetes() {
    start kubernetes
    local mod=$work/mod minor staging gomod m line
    minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
    # Staging modules are published as v0.<minor>.<patch>.
    staging=v0.${KUBERNETES_VERSION#v1.}
    mkdir -p "$mod"
    cd "$mod"
    log go mod init strimzi-testenv/kubernetes
    log go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION"
    gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' "$current_log" | tail -1)
    [[ -f $gomod ]] || { echo "go.mod of k8s.io/kubernetes@$KUBERNETES_VERSION not found" >>"$current_log"; false; }
    # Same language version and GODEBUG defaults as the upstream build.
    log go mod edit -go="$(awk '$1 == "go" { print $2; exit }' "$gomod")"
    while read -r line; do
        log go mod edit -godebug="$line"
    done < <(awk '$1 == "godebug" && $2 != "(" { print $2 }' "$gomod")
    # Every `k8s.io/x => ./staging/src/k8s.io/x` that the module actually requires
    # becomes `k8s.io/x => k8s.io/x v0.<minor>.<patch>`.
    for m in $(awk '$2 == "=>" && $3 ~ /^\.\/staging\/src\// { print $1 }' "$gomod"); do
        if grep -qE "^[[:space:]]*(require[[:space:]]+)?${m//./\\.}[[:space:]]+v[^ ]*[[:space:]]*(//.*)?$" "$gomod"; then
            log go mod edit -replace="$m=$m@$staging"
        fi
    done
    local pkgs=()
    for m in "${kube_bins[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$m"); done
    log go get "${pkgs[@]/%/@$KUBERNETES_VERSION}"
    # What /version reports. The proxy does not say which commit the tag is, so gitCommit
    # stays empty; buildDate is the tag's time from the proxy, so builds are reproducible.
    local info build_date ldflags="-s -w"
    info=$(sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p' "$current_log" | tail -1)
    build_date=$(sed -n 's/.*"Time": *"\([0-9T:-]*\)[^"]*Z".*/\1Z/p' "$info")
    for m in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags+=" -X $m.gitVersion=$KUBERNETES_VERSION -X $m.gitMajor=1 -X $m.gitMinor=$minor"
        ldflags+=" -X $m.gitTreeState=clean -X $m.gitCommit= -X $m.buildDate=${build_date:-1970-01-01T00:00:00Z}"
    done
    log go build -trimpath -ldflags "$ldflags" -o "$work/out/bin/" "${pkgs[@]}"
    log go version -m "$work/out/bin/kube-apiserver"
    cd "$here"
    finish "$kube_dir"
}

build_etcd() {
    start etcd
    local mod=$work/mod
    mkdir -p "$mod"
    cd "$mod"
    log go mod init strimzi-testenv/etcd
    cat >main.go <<'EOF'
// The etcd server, as built by etcd's own top-level main package.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
EOF
    log go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    log go mod tidy
    log go build -trimpath -ldflags "-s -w" -o "$work/out/bin/etcd" .
    log "$work/out/bin/etcd" --version
    cd "$here"
    finish "$etcd_dir"
}

build_kwok() {
    start kwok
    log env GOBIN="$work/out/bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
    log "$work/out/bin/kwok" --version
    finish "$kwok_dir"
}

build_containerd() {
    start containerd
    local mod=$work/mod module=github.com/containerd/containerd/v2 ldflags
    mkdir -p "$mod"
    cd "$mod"
    log go mod init strimzi-testenv/containerd
    log go get "$module/cmd/containerd@$CONTAINERD_VERSION" "$module/cmd/ctr@$CONTAINERD_VERSION" \
        "$module/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION"
    ldflags="-s -w -X $module/version.Version=$CONTAINERD_VERSION -X $module/version.Package=$module"
    # Static, without the btrfs snapshotter (needs C headers) or generated CLI docs.
    local tags="urfave_cli_no_docs osusergo netgo static_build no_btrfs"
    log go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$work/out/bin/" "$module/cmd/containerd" "$module/cmd/ctr"
    log go build -trimpath -tags "$tags no_grpc" -ldflags "$ldflags" -o "$work/out/bin/" "$module/cmd/containerd-shim-runc-v2"
    log "$work/out/bin/containerd" --version
    cd "$here"
    finish "$containerd_dir"
}

build_coredns() {
    start coredns
    log env GOBIN="$work/out/bin" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
    log "$work/out/bin/coredns" -version
    finish "$coredns_dir"
}

build_helm() {
    start helm
    # helm's Makefile stamps the version the same way (the git commit stays empty: the
    # proxy does not say which one the tag is).
    log env GOBIN="$work/out/bin" go install -trimpath \
        -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
    log "$work/out/bin/helm" version
    finish "$helm_dir"
}

# Debian packages the real nodes, the image build and the tests use, as "<file it provides>
# <package>"; promtool (Prometheus's rule tester, from the `prometheus` package) evaluates
# Strimzi's alert rules and dashboard queries over our operators' metrics; skopeo reads the
# release's image archive as a docker archive and as an OCI archive (the `release` test) and
# pushes the Kafka image to the real nodes' registry, which is Debian's docker-registry (the
# Connect build test pushes to it and the nodes pull from it).
debian_packages=(
    "/usr/bin/promtool prometheus"
    "/usr/sbin/runc runc"
    "/usr/lib/cni/bridge containernetworking-plugins"
    "/usr/sbin/iptables iptables"
    "/usr/sbin/conntrack conntrack"
    "/usr/bin/socat socat"
    "/usr/sbin/debootstrap debootstrap"
    "/usr/bin/nsenter util-linux"
    "/usr/bin/setpriv util-linux"
    "/usr/sbin/ip iproute2"
    "/usr/sbin/sysctl procps"
    "/usr/bin/openssl openssl"
    "/usr/bin/gcc gcc"
    "/usr/bin/skopeo skopeo"
    "/usr/bin/docker-registry docker-registry"
)
install_debian_packages() {
    local entry file package missing=()
    for entry in "${debian_packages[@]}"; do
        read -r file package <<<"$entry"
        [[ -e $file ]] || missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
    if [[ $(id -u) != 0 ]]; then
        echo "install.sh: missing Debian packages; run as root: apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "debian packages: installing ${missing[*]} (cold: about 1 minute)"
    current_component="debian packages"
    current_log=$logs/debian-packages.log
    local started=$SECONDS
    log apt-get update
    log env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    current_component=""
    echo "debian packages: installed in $((SECONDS - started))s"
}

with_helm=true
case ${1:-} in
    --packages)
        mkdir -p "$logs"
        install_debian_packages
        exit 0
        ;;
    --without-helm) with_helm=false ;;
    "") ;;
    *)
        echo "install.sh: unknown argument '$1' (usage: install.sh [--packages | --without-helm])" >&2
        exit 2
        ;;
esac

command -v go >/dev/null || { echo "install.sh: go not found in PATH: install Go 1.26 or newer (https://go.dev/doc/install) and put its bin folder on PATH" >&2; exit 1; }
mkdir -p "$cache" "$logs"

# One installer at a time per cache (parallel test runs may all call this script).
exec 9>"$cache/.lock"
flock 9

# Leftovers of interrupted builds.
rm -rf "$cache"/.build-*

install_debian_packages

# cached <what>: says a component is already built (not with STRIMZI_TESTENV_QUIET=1, which
# the test environment sets so that a warm start prints nothing).
cached() {
    [[ ${STRIMZI_TESTENV_QUIET:-} == 1 ]] || echo "$1: cached"
}

if complete "$etcd_dir" etcd; then cached "etcd $ETCD_VERSION"; else echo "etcd $ETCD_VERSION: building (cold: about 2 minutes)"; build_etcd; fi
if complete "$kwok_dir" kwok; then cached "kwok $KWOK_VERSION"; else echo "kwok $KWOK_VERSION: building (cold: about 2 minutes)"; build_kwok; fi
if complete "$kube_dir" "${kube_bins[@]}"; then
    cached "kubernetes $KUBERNETES_VERSION"
else
    echo "kubernetes $KUBERNETES_VERSION: building ${kube_bins[*]} (cold: about 15 minutes on 2 cores)"
    build_kubernetes
fi
if complete "$containerd_dir" "${containerd_bins[@]}"; then
    cached "containerd $CONTAINERD_VERSION"
else
    echo "containerd $CONTAINERD_VERSION: building ${containerd_bins[*]} (cold: about 5 minutes)"
    build_containerd
fi
if complete "$coredns_dir" coredns; then
    cached "coredns $COREDNS_VERSION"
else
    echo "coredns $COREDNS_VERSION: building (cold: about 3 minutes)"
    build_coredns
fi
if ! $with_helm; then
    :
elif complete "$helm_dir" helm; then
    cached "helm $HELM_VERSION"
else
    echo "helm $HELM_VERSION: building (cold: about 2 minutes)"
    build_helm
fi

[[ ${STRIMZI_TESTENV_QUIET:-} == 1 ]] && exit 0
echo "etcd:                    $etcd_dir/bin/etcd"
for b in "${kube_bins[@]}"; do
    printf '%-24s %s\n' "$b:" "$kube_dir/bin/$b"
done
echo "kwok:                    $kwok_dir/bin/kwok"
for b in "${containerd_bins[@]}"; do
    printf '%-24s %s\n' "$b:" "$containerd_dir/bin/$b"
done
echo "coredns:                 $coredns_dir/bin/coredns"
! $with_helm || echo "helm:                    $helm_dir/bin/helm"
