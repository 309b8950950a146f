#!/usr/bin/env python3
"""End to end, as a user runs it: `toolgate run --calls FILE` with N calls (default 200) in one
process, against the physical limit of each workload. Medians of ROUNDS rounds (default 3).

  write_file      sequential write_file of one file (overwrite: true)   vs one fdatasync
  process         /bin/true, process_execution, sandbox none, group max 1 vs a bash loop
  process_read    the same tool declared read_only (and pure)            vs a bash loop

Per call is the whole run's wall time divided by N (start-up, loading the specs and opening the
journal included; `startup` is a run of one call, for scale). Every run gets a fresh workspace
and state folder under TMPDIR (the disk being measured).

Usage:
  benches/e2e.py [--bin target/release/toolgate] [--before OTHER/toolgate] [--calls 200]
                 [--before-env NAME=VALUE] [--rounds 3] [--format text|json]
With --before, each round runs the two binaries one after the other (before, after) for every
workload, so both see the same machine; the table shows both and their ratio. --before-env
NAME=VALUE makes the before the same binary with a variable set (TOOLGATE_FORK_SERVER=0: every
command tool through a shim started for it rather than forked by the fork server). The binaries
need their `toolgate-shim` beside them. The script builds nothing: `cargo build --release
--bin toolgate --bin toolgate-shim` first.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "e2e")

WORKLOADS = {
    "write_file": lambda i: {
        "name": "write_file",
        "arguments": {"path": "out.txt", "content": f"line {i}\n" * 8, "overwrite": True},
    },
    "process": lambda i: {"name": "true_process", "arguments": {}},
    "process_read": lambda i: {"name": "true_read", "arguments": {}},
}


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def fdatasync_seconds(folder, n):
    """The median time of one small write + fdatasync of one file (what a flush costs now)."""
    path = os.path.join(folder, "sync.bin")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    times = []
    try:
        for i in range(n):
            os.pwrite(fd, f"{i:08d}".encode() * 512, 0)
            t = time.perf_counter()
            os.fdatasync(fd)
            times.append(time.perf_counter() - t)
    finally:
        os.close(fd)
        os.unlink(path)
    return statistics.median(times)


def bash_loop_seconds(n):
    """A bash loop spawning /bin/true n times, per spawn."""
    t = time.perf_counter()
    subprocess.run(["bash", "-c", f"for ((i = 0; i < {n}; i++)); do /bin/true; done"], check=True)
    return (time.perf_counter() - t) / n


def toolgate_run(binary, workload, n, scratch):
    """Wall seconds of one `toolgate run` of n calls in a fresh workspace. `binary` is a path,
    or a path and environment variables to set for it."""
    binary, extra_env = binary if isinstance(binary, tuple) else (binary, {})
    ws = tempfile.mkdtemp(dir=scratch)
    try:
        for f in os.listdir(FIXTURES):
            shutil.copy(os.path.join(FIXTURES, f), ws)
        calls = os.path.join(ws, "calls.jsonl")
        with open(calls, "w") as f:
            for i in range(n):
                line = WORKLOADS[workload](i)
                line["call_id"] = f"c{i}"
                f.write(json.dumps(line) + "\n")
        cmd = [binary, "run", "--calls", calls, "--config", os.path.join(ws, "toolgate.yaml"),
               "--workspace", ws, "--context", "ci", "--format", "json"]
        t = time.perf_counter()
        p = subprocess.run(cmd, cwd=ws, capture_output=True, text=True,
                           env={**os.environ, **extra_env})
        wall = time.perf_counter() - t
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}\n{p.stdout[-2000:]}")
        out = json.loads(p.stdout)
        bad = [r for r in out["results"] if r.get("status") != "success"]
        if bad or len(out["results"]) != n:
            sys.exit(f"{workload}: {len(bad)} of {len(out['results'])} calls failed: {bad[:1]}")
        return wall
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def measure(bins, calls, rounds, workloads=None):
    """Runs the workloads (all by default) with each binary ({name: path}), alternately."""
    workloads = workloads or list(WORKLOADS)
    scratch = tempfile.mkdtemp(prefix="toolgate-e2e-", dir=os.environ.get("TMPDIR"))
    load = [loadavg()]
    runs = {(w, b): [] for w in workloads for b in bins}
    startup = {b: [] for b in bins}
    sync, loop = [], []
    try:
        for _ in range(rounds):
            sync.append(fdatasync_seconds(scratch, 100))
            loop.append(bash_loop_seconds(calls))
            for b, path in bins.items():
                startup[b].append(toolgate_run(path, "write_file", 1, scratch))
            for w in workloads:
                for b, path in bins.items():
                    runs[(w, b)].append(toolgate_run(path, w, calls, scratch) / calls)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load.append(loadavg())
    med = {k: statistics.median(v) for k, v in runs.items()}
    limits = {"write_file": ("one fdatasync", statistics.median(sync), 2.0),
              "process": ("bash loop /bin/true", statistics.median(loop), 1.5),
              "process_read": ("bash loop /bin/true", statistics.median(loop), 1.5)}
    rows = []
    for w in workloads:
        name, limit, goal = limits[w]
        row = {"workload": w, "limit": name, "limit_ms": limit * 1e3, "goal": goal}
        for b in bins:
            row[f"{b}_ms"] = med[(w, b)] * 1e3
            row[f"{b}_x_limit"] = med[(w, b)] / limit
            row[f"{b}_rounds_ms"] = [x * 1e3 for x in runs[(w, b)]]
        rows.append(row)
    return {"calls": calls, "rounds": rounds, "loadavg": load, "rows": rows,
            "startup_ms": {b: statistics.median(v) * 1e3 for b, v in startup.items()}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "toolgate"))
    ap.add_argument("--before", help="a second toolgate binary, run alternately with --bin")
    ap.add_argument("--before-env", metavar="NAME=VALUE",
                    help="without --before: the before is --bin itself with this variable set "
                         "(e.g. TOOLGATE_FORK_SERVER=0, a shim started per call)")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--format", choices=["text", "json"], default="text")
    ap.add_argument("--workload", action="append", choices=list(WORKLOADS),
                    help="run only this workload (repeatable)")
    a = ap.parse_args()
    bins = {"after": os.path.abspath(a.bin)}
    if a.before:
        bins = {"before": os.path.abspath(a.before), **bins}
    elif a.before_env:
        name, _, value = a.before_env.partition("=")
        bins = {"before": (os.path.abspath(a.bin), {name: value}), **bins}
        a.before = a.before_env
    report = measure(bins, a.calls, a.rounds, a.workload)
    if a.format == "json":
        print(json.dumps(report, indent=2))
        return
    load = report["loadavg"]
    print(f"toolgate run --calls FILE, {a.calls} calls, medians of {a.rounds} rounds; "
          f"load average {load[0]} -> {load[1]}")
    head = f"{'workload':<14}" + "".join(f"{b + ' ms/call':>18}{'x limit':>9}" for b in bins)
    if a.before:
        head += f"{'after/before':>14}"
    print(head + f"{'limit':>24}{'ms':>8}{'goal':>7}")
    for r in report["rows"]:
        line = f"{r['workload']:<14}"
        for b in bins:
            line += f"{r[f'{b}_ms']:>18.3f}{r[f'{b}_x_limit']:>8.1f}x"
        if a.before:
            line += f"{r['after_ms'] / r['before_ms']:>14.2f}"
        print(line + f"{r['limit']:>24}{r['limit_ms']:>8.3f}{'<=' + str(r['goal']) + 'x':>7}")
    print("one-call run (start-up): " + ", ".join(
        f"{b} {v:.1f} ms" for b, v in report["startup_ms"].items()))


if __name__ == "__main__":
    main()
