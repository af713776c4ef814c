#!/usr/bin/env bash
# Removes every trace of one real-node test environment, from what it recorded in its folder:
#
#   sweep.sh DIR               sweep now
#   sweep.sh --after PID DIR   wait until process PID has exited, then sweep (the watchdog
#                              that cleans up after a test binary that was killed); it
#                              takes the real-node lock first, so it never sweeps while a
#                              newer environment holds it
#
# DIR holds: `netns` (the network namespace's name), `cgroup-root` (the cgroup folder name used
# in every hierarchy), `sysctl` (kernel settings as they were before the nodes started, one
# `key=value` a line) and `created` (host paths the environment created, one a line). Every
# step tolerates what is already gone, so sweeping twice is harmless. Prints one line per
# step that found something to do.
set -uo pipefail

if [[ ${1:-} == --after ]]; then
    owner=$2
    shift 2
    while kill -0 "$owner" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$owner/status" 2>/dev/null; do
        [[ -d ${1:-} ]] || exit 0
        sleep 1
    done
    exec 9>"${STRIMZI_TESTENV_NODE_LOCK:-/run/lock/strimzi-testenv-nodes.lock}"
    flock 9
fi
dir=${1:?usage: sweep.sh [--after PID] DIR}
[[ -d $dir ]] || exit 0
dir=$(cd "$dir" && pwd)

netns=$(cat "$dir/netns" 2>/dev/null || true)
cgroup_root=$(cat "$dir/cgroup-root" 2>/dev/null || true)

# cgroup_procs: every process in the environment's cgroups (the pods' containers).
cgroup_procs() {
    [[ -n $cgroup_root ]] || return 0
    local hierarchy
    for hierarchy in /sys/fs/cgroup/*/"$cgroup_root"; do
        [[ -d $hierarchy ]] && find "$hierarchy" -name cgroup.procs -exec cat {} + 2>/dev/null
    done
    return 0
}

# namespace_procs: every process in the environment's network namespace (control plane,
# containerd and its shims, kubelet, kube-proxy, CoreDNS, operators started inside).
namespace_procs() {
    [[ -n $netns && -e /run/netns/$netns ]] && ip netns pids "$netns" 2>/dev/null
    return 0
}

# Kill until nothing is left: a shim may start a process while we kill.
for round in 1 2 3 4 5 6 7 8 9 10; do
    pids=$( { cgroup_procs; namespace_procs; } | sort -u | grep -v "^$$\$" || true)
    [[ -z $pids ]] && break
    (( round == 1 )) && echo "sweep: stopping $(echo "$pids" | wc -l) processes"
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null
    sleep 0.5
done

# Unmount everything below DIR (container root filesystems, pod volumes, pod network
# namespaces), deepest first.
mounts=$(awk -v prefix="$dir/" 'index($5, prefix) == 1 { print $5 }' /proc/self/mountinfo | sort -r -u)
if [[ -n $mounts ]]; then
    echo "sweep: unmounting $(echo "$mounts" | wc -l) mounts"
    while read -r mount; do
        umount -l "$mount" 2>/dev/null || true
    done <<<"$mounts"
fi

if [[ -n $cgroup_root ]]; then
    for hierarchy in /sys/fs/cgroup/*/"$cgroup_root"; do
        [[ -d $hierarchy ]] && find "$hierarchy" -depth -type d -exec rmdir {} + 2>/dev/null
    done
fi

if [[ -n $netns ]]; then
    if [[ -e /run/netns/$netns ]]; then
        ip netns delete "$netns" 2>/dev/null || umount -l "/run/netns/$netns" 2>/dev/null
        rm -f "/run/netns/$netns"
    fi
    rm -rf "/etc/netns/$netns"
fi

if [[ -f $dir/sysctl ]]; then
    while IFS='=' read -r key value; do
        [[ -n $key ]] && sysctl -q -w "$key=$value" >/dev/null 2>&1
    done <"$dir/sysctl"
fi

# Host paths the nodes created (kubelet and the CNI plugins use a few fixed ones), deepest first.
if [[ -f $dir/created ]]; then
    sort -r "$dir/created" | while read -r path; do
        [[ -n $path && $path == /* ]] && rm -rf "$path"
    done
fi

rm -rf "$dir"
