#!/usr/bin/env python3
"""Figures of a CI run, for .ci/run.

  report.py sample DIR      samples CPU use every 5 s into DIR/cpu.tsv until killed: the
                            host's busy cores (and how many of them ran niced work) and the
                            cores used by the real nodes' pods (their cgroups)
  report.py check-lanes F   fails unless every integration test program of the workspace
                            is in exactly one lane of F (.ci/lanes)
  report.py summary DIR     prints the phases with their times and CPU use, every test
                            program's time, the 15 slowest tests and a CPU timeline

.ci/run writes DIR/phases.tsv (`start|end <TAB> name <TAB> seconds since CI started`),
DIR/programs.tsv (`lane <TAB> program <TAB> seconds <TAB> result`) and each program's
output in DIR/programs/*.log, whose `test NAME ... ok <12.345s>` lines come from
.ci/test-runner.
"""

import glob
import json
import os
import re
import subprocess
import sys
import time

SAMPLE_SECONDS = 5
# The real nodes' cgroup roots: strimzi-testenv-<pid> in each hierarchy (tests/src/nodes.rs).
NODE_CGROUPS_V1 = "/sys/fs/cgroup/cpuacct/strimzi-testenv-*/cpuacct.usage"
NODE_CGROUPS_V2 = "/sys/fs/cgroup/strimzi-testenv-*/cpu.stat"


def host_ticks():
    """(busy, niced, total) jiffies of all CPUs since boot."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    user, nice, system, idle, iowait = fields[:5]
    total = sum(fields[:8])
    return total - idle - iowait, nice, total


def node_cpu_seconds():
    """CPU seconds used so far by the real nodes' pods (every environment's cgroup root)."""
    used = 0.0
    for path in glob.glob(NODE_CGROUPS_V1):
        try:
            with open(path) as usage:
                used += int(usage.read()) / 1e9
        except (OSError, ValueError):
            pass
    for path in glob.glob(NODE_CGROUPS_V2):
        try:
            with open(path) as stat:
                for line in stat:
                    key, value = line.split()
                    if key == "usage_usec":
                        used += int(value) / 1e6
        except (OSError, ValueError):
            pass
    return used


def sample(out_dir):
    cores = os.cpu_count() or 1
    started = time.monotonic()
    last_host, last_node, last_time = host_ticks(), node_cpu_seconds(), time.monotonic()
    with open(os.path.join(out_dir, "cpu.tsv"), "a") as out:
        while True:
            time.sleep(SAMPLE_SECONDS)
            host, node, now = host_ticks(), node_cpu_seconds(), time.monotonic()
            ticks = max(host[2] - last_host[2], 1)
            busy = (host[0] - last_host[0]) / ticks * cores
            niced = (host[1] - last_host[1]) / ticks * cores
            # A node's cgroup disappears with its environment: usage then drops; count 0.
            node_cores = max(node - last_node, 0.0) / max(now - last_time, 1e-6)
            out.write(f"{now - started:.0f}\t{busy:.2f}\t{niced:.2f}\t{node_cores:.2f}\n")
            out.flush()
            last_host, last_node, last_time = host, node, now


def workspace_test_programs():
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    return {
        (package["name"], target["name"])
        for package in metadata["packages"]
        for target in package["targets"]
        if "test" in target["kind"]
    }


def read_lanes(path):
    lanes = {}
    with open(path) as table:
        for number, line in enumerate(table, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) != 3 or words[0] not in ("plain", "kube", "real") or not words[2].isdigit():
                sys.exit(f"{path}:{number}: expected `<plain|kube|real> <test program> <seconds>`, found: {line.strip()}")
            lane, program, _ = words
            if program in lanes:
                sys.exit(f"{path}:{number}: test program {program} is in two lanes")
            lanes[program] = lane
    return lanes


def check_lanes(path):
    lanes = read_lanes(path)
    programs = workspace_test_programs()
    names = {name for _, name in programs}
    missing = sorted(f"{name} (package {package})" for package, name in programs if name not in lanes)
    unknown = sorted(set(lanes) - names)
    for name in missing:
        print(f"CI: test program {name} is in no lane: add it to {path}", file=sys.stderr)
    for name in unknown:
        print(f"CI: {path} names test program {name}, which no package of the workspace has", file=sys.stderr)
    if missing or unknown:
        sys.exit(1)
    counts = {lane: sum(1 for value in lanes.values() if value == lane) for lane in ("plain", "kube", "real")}
    print(f"   {len(programs)} test programs in lanes: " + ", ".join(f"{lane} {count}" for lane, count in counts.items()))


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as table:
        return [line.rstrip("\n").split("\t") for line in table if line.strip()]


def cpu_between(samples, start, end):
    """Average (host busy, niced, pods) cores over the samples taken within [start, end]."""
    if end - start < SAMPLE_SECONDS:
        return None
    inside = [row for row in samples if start + SAMPLE_SECONDS <= row[0] <= end]
    if not inside:
        return None
    count = len(inside)
    return tuple(sum(row[index] for row in inside) / count for index in (1, 2, 3))


def summary(out_dir):
    samples = [tuple(float(value) for value in row) for row in read_tsv(os.path.join(out_dir, "cpu.tsv"))]
    phases, started, failed = [], {}, []
    for event, name, seconds in read_tsv(os.path.join(out_dir, "phases.tsv")):
        if event == "start":
            started[name] = int(seconds)
        elif event == "fail" and name in started:
            failed.append((started.pop(name), int(seconds), name))
        elif name in started:
            phases.append((started.pop(name), int(seconds), name))
    print("== figures of this run (seconds since CI started; cores of 2: host busy / of it niced / real nodes' pods)")
    print(f"   {'phase':<58} {'from':>6} {'to':>6} {'took':>6}  {'host':>5} {'niced':>5} {'pods':>5}")
    for start, end, name in sorted(phases):
        cpu = cpu_between(samples, start, end)
        figures = "  ".join(f"{value:5.2f}" for value in cpu) if cpu else "    -      -      -"
        print(f"   {name:<58} {start:>6} {end:>6} {end - start:>6}  {figures}")
    for start, end, name in failed:
        print(f"   {name:<58} {start:>6} {end:>6} {end - start:>6}  FAILED")
    for name, start in started.items():
        print(f"   {name:<58} {start:>6}      -  (did not end)")

    programs = read_tsv(os.path.join(out_dir, "programs.tsv"))
    if programs:
        print("== test programs, slowest first")
        for lane, program, seconds, result in sorted(programs, key=lambda row: -int(row[2])):
            print(f"   {lane:<6} {program:<28} {int(seconds):>6}s  {result}")

    tests = []
    program = "?"
    # `Running tests/kafka.rs (target/debug/deps/kafka-0123456789abcdef)`
    running = re.compile(r"^\s*Running .*\((?:.*/)?([^/]+?)(?:-[0-9a-f]{16})?\)$")
    finished = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)(?: <([0-9.]+)s>)?")
    for log in sorted(glob.glob(os.path.join(out_dir, "programs", "*.log"))):
        with open(log, errors="replace") as lines:
            for line in lines:
                match = running.match(line)
                if match:
                    program = match.group(1)
                    continue
                match = finished.match(line)
                if match and match.group(3):
                    tests.append((float(match.group(3)), program, match.group(1), match.group(2)))
    if tests:
        print(f"== the 15 slowest of {len(tests)} tests (their own time; programs share one environment each)")
        for seconds, program, name, result in sorted(tests, reverse=True)[:15]:
            print(f"   {seconds:8.1f}s  {program}: {name}  {result}")

    if samples:
        print("== CPU use by 5 minutes (cores of 2: host busy / niced / real nodes' pods)")
        window = 300
        for start in range(0, int(samples[-1][0]) + 1, window):
            cpu = cpu_between(samples, start, start + window - SAMPLE_SECONDS)
            if cpu:
                print(f"   {start:>5}-{start + window:<5}s  {cpu[0]:4.2f} / {cpu[1]:4.2f} / {cpu[2]:4.2f}")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("sample", "check-lanes", "summary"):
        sys.exit(__doc__)
    command, argument = sys.argv[1], sys.argv[2]
    if command == "sample":
        sample(argument)
    elif command == "check-lanes":
        check_lanes(argument)
    else:
        summary(argument)


if __name__ == "__main__":
    main()
