#!/usr/bin/env python3
"""Every figure of docs/benchmarks.md, before and after, side by side, in one run.

    benches/all.py --save target/bench-before        # on the earlier commit: keep its binaries
    benches/all.py --before target/bench-before      # on this one: measure both, print the table
    benches/all.py --before target/bench-before --write docs/benchmarks.md

A binary set is `toolgate`, `toolgate-shim` and the criterion benches `exec`, `journal`,
`runtime` (release). `--save DIR` builds them from the current tree and copies them to DIR; a
run builds the current tree's set (--no-build takes what target/release holds, the newest
bench binaries in its deps/) and, with --before, runs each benchmark
of the two sets one after the other, round by round, so both see the same machine. Figures are
medians (criterion's median estimate; for whole processes the median of the rounds).

What runs:
  exec     spawn_true/direct/tokio, spawn_true/runtime/no_profile
  journal  device/commit, per_call/sqlite/slow_edit, sixteen_concurrent/sqlite
  runtime  per_call/pipeline/echo
  output   `toolgate call` of a tool printing SIZE_MIB (1024) MiB, head and tail kept (in a
           project whose per-call artifact budget is 0), and streamed into the artifact
           store, against `cat FILE > /dev/null`, `cat FILE | cat > /dev/null` (a pipe) and
           `dd … conv=fsync` (a file written and flushed); and peak RSS
  e2e      benches/e2e.py: `toolgate run --calls FILE` with 200 calls
The MCP row (server CPU per call against a bare rmcp server) is benches/mcp/bench.py; it needs
the Python MCP SDK (scripts/test sets one up) and is run with --mcp.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import e2e  # noqa: E402

BENCHES = {
    "exec": ["spawn_true/direct/tokio", "spawn_true/runtime/no_profile"],
    "journal": ["device/commit", "per_call/sqlite/slow_edit", "sixteen_concurrent/sqlite"],
    "runtime": ["per_call/pipeline/echo"],
}
UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def build(benches=True):
    """Builds the current tree's set; returns {name: path}."""
    subprocess.run(["cargo", "build", "--release", "--bin", "toolgate", "--bin", "toolgate-shim"],
                   cwd=REPO, check=True)
    paths = {"toolgate": os.path.join(REPO, "target/release/toolgate"),
             "toolgate-shim": os.path.join(REPO, "target/release/toolgate-shim")}
    if not benches:
        return paths
    out = subprocess.run(
        ["cargo", "bench", "--no-run", "--message-format=json"]
        + [a for b in BENCHES for a in ("--bench", b)],
        cwd=REPO, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        if m.get("reason") == "compiler-artifact" and m.get("executable") \
                and m["target"]["name"] in BENCHES and "bench" in m["target"]["kind"]:
            paths[m["target"]["name"]] = m["executable"]
    return paths


def saved(folder):
    """A saved set; the criterion benches may be missing (then only whole processes run)."""
    return {n: os.path.join(folder, n) for n in ["toolgate", "toolgate-shim", *BENCHES]}


def built_benches():
    """The newest release build of each criterion bench in target/ (cargo names them
    `deps/NAME-HASH`), for --no-build."""
    deps = os.path.join(REPO, "target/release/deps")
    found = {}
    for f in os.listdir(deps) if os.path.isdir(deps) else []:
        name, _, rest = f.partition("-")
        path = os.path.join(deps, f)
        if name in BENCHES and rest and "." not in rest and os.access(path, os.X_OK):
            if name not in found or os.path.getmtime(path) > os.path.getmtime(found[name]):
                found[name] = path
    return found


def criterion(binary, bench, names):
    """Runs one criterion bench binary on exact names; {name: median seconds}."""
    filt = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    p = subprocess.run([binary, "--bench", filt, "--noplot"], cwd=REPO, capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit(f"{binary} failed:\n{p.stderr[-3000:]}")
    found = {}
    for m in re.finditer(r"^(\S+)\s*\n?\s*time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", p.stdout, re.M):
        found[m.group(1)] = float(m.group(2)) * UNITS[m.group(3)]
    missing = [n for n in names if n not in found]
    if missing:
        sys.exit(f"{bench}: no figure for {missing} in:\n{p.stdout[-3000:]}")
    return found


# The head-and-tail run's project: the same tool with a per-call artifact budget of 0, so
# that nothing of the cut output is kept on disk (a cut output is otherwise kept as an
# artifact within the budgets, and this row would measure the store as the next one does).
HEAD_TAIL_PROJECT = """# benches/all.py: cat_file_head_tail with nothing kept but head and tail.
specs: ["../cat_file_head_tail.yaml"]
workspace: ..
defaults:
  timeout: 60s
contexts:
  ci: {ask: deny}
budgets: {call_artifacts: 0}
targets: [anthropic]
"""


def output_run(binary, work, tool):
    """Wall seconds and peak RSS (MiB) of `toolgate call TOOL` on the big log."""
    # Outside the workspace, which a sandboxed tool of the project could write; a fresh one
    # per run, so that every run streams a new artifact.
    state = tempfile.mkdtemp(prefix="toolgate-output-state-", dir=os.path.dirname(work))
    try:
        timing = os.path.join(work, "time.txt")
        cmd = ["/usr/bin/time", "-v", "-o", timing, binary, "call", tool,
               "--config", os.path.join(work, "head_tail" if tool == "cat_file_head_tail"
                                        else "", "toolgate.yaml"), "--workspace", work,
               "--state-dir", state, "--context", "ci", "--args", '{"path": "big.log"}',
               "--format", "json"]
        t = time.perf_counter()
        # The benchmark wrote this project: it vouches for its policy (docs/protect.md, Trust).
        p = subprocess.run(cmd, capture_output=True, text=True,
                           env={**os.environ, "TOOLGATE_TRUST_POLICY": "1"})
        wall = time.perf_counter() - t
        if p.returncode != 0 or json.loads(p.stdout).get("status") != "success":
            sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
        with open(timing) as f:
            rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", f.read()).group(1))
        return wall, rss / 1024
    finally:
        shutil.rmtree(state, ignore_errors=True)


def output(sets, size_mib, rounds):
    work = tempfile.mkdtemp(prefix="toolgate-output-", dir=os.environ.get("TMPDIR"))
    try:
        for f in os.listdir(os.path.join(HERE, "fixtures")):
            if f.endswith(".yaml"):
                shutil.copy(os.path.join(HERE, "fixtures", f), work)
        os.mkdir(os.path.join(work, "head_tail"))
        with open(os.path.join(work, "head_tail", "toolgate.yaml"), "w") as f:
            f.write(HEAD_TAIL_PROJECT)
        line = b"INFO [build] compiling module core::exec::capture (lines are 64 bytes long)\n"
        big = os.path.join(work, "big.log")
        with open(big, "wb") as f:
            chunk = line * (1 << 14)
            left = size_mib << 20
            while left > 0:
                f.write(chunk[:left])
                left -= len(chunk)
        res = {k: [] for k in ["cat", "pipe", "disk"] + [f"{s}/{t}" for s in sets for t in
                                                           ("cat_file_head_tail", "cat_file")]}
        rss = {}
        copy = os.path.join(work, "copy.log")
        # The limit, then what a pipe alone and a file written and flushed alone reach.
        peers = {"cat": f"cat {big} > /dev/null", "pipe": f"cat {big} | cat > /dev/null",
                 "disk": f"dd if={big} of={copy} bs=1M conv=fsync status=none; rm {copy}"}
        for _ in range(rounds):
            for k, cmd in peers.items():
                t = time.perf_counter()
                subprocess.run(["sh", "-c", cmd], check=True)
                res[k].append(time.perf_counter() - t)
            for tool in ("cat_file_head_tail", "cat_file"):
                for s, paths in sets.items():
                    wall, r = output_run(paths["toolgate"], work, tool)
                    res[f"{s}/{tool}"].append(wall)
                    rss[f"{s}/{tool}"] = max(rss.get(f"{s}/{tool}", 0), r)
        mib = size_mib
        return {k: mib / statistics.median(v) for k, v in res.items()}, rss
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--save", metavar="DIR", help="build this tree's set and copy it to DIR")
    ap.add_argument("--before", metavar="DIR", help="a saved set to measure beside this tree's")
    ap.add_argument("--no-build", action="store_true", help="use target/ as it is")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of the criterion benches")
    ap.add_argument("--e2e-rounds", type=int, default=3)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--mcp", action="store_true", help="also run benches/mcp/bench.py")
    ap.add_argument("--no-criterion", action="store_true",
                    help="whole-process figures only (no cargo bench build or run)")
    ap.add_argument("--write", metavar="FILE", help="write the table (markdown) there too")
    ap.add_argument("--only", metavar="GROUPS", default="exec,journal,runtime,output,e2e",
                    help="comma-separated groups to run (exec, journal, runtime, output, e2e); "
                         "the others' rows say 'not run'")
    a = ap.parse_args()

    if a.save:
        paths = build(not a.no_criterion)
        os.makedirs(a.save, exist_ok=True)
        for n, p in paths.items():
            shutil.copy2(p, os.path.join(a.save, n))
        print(f"saved {', '.join(paths)} to {a.save}")
        return
    if a.no_build:
        after = saved(os.path.join(REPO, "target/release"))
        after.update(built_benches())
    else:
        after = build(not a.no_criterion)
    if a.no_criterion:
        after = {n: p for n, p in after.items() if n not in BENCHES}
    sets = {"after": after}
    if a.before:
        sets = {"before": saved(os.path.abspath(a.before)), "after": after}
    load = [loadavg()]

    # A saved set without bench binaries (a release build of the binaries alone) gets the
    # whole-process figures only.
    only = set(a.only.split(","))
    crit = {s: {} for s in sets}
    for _ in range(a.rounds):
        for bench, names in BENCHES.items():
            if bench not in only:
                continue
            for s, paths in sets.items():
                if os.path.exists(paths.get(bench, "")):
                    for n, v in criterion(paths[bench], bench, names).items():
                        crit[s].setdefault(n, []).append(v)
    med = {s: {n: statistics.median(v) for n, v in crit.get(s, {}).items()} for s in sets}
    speeds, rss = (output(sets, a.size_mib, max(1, a.rounds)) if "output" in only
                   else (None, None))
    e2e_rows = (e2e.measure({s: p["toolgate"] for s, p in sets.items()}, 200, a.e2e_rounds)
                if "e2e" in only else None)
    mcp = None
    if a.mcp:
        args = [sys.executable, os.path.join(HERE, "mcp/bench.py"), "--json", "--rounds", "3"]
        if a.before:
            args += ["--before", sets["before"]["toolgate"]]
        mcp = json.loads(subprocess.run(args, cwd=REPO, check=True, capture_output=True,
                                        text=True).stdout)
    load.append(loadavg())
    table = render(sets, med, speeds, rss, e2e_rows, mcp, load, a)
    print(table)
    if a.write:
        with open(a.write) as f:
            text = f.read()
        start, end = "<!-- all.py:begin -->", "<!-- all.py:end -->"
        i, j = text.find(start), text.find(end)
        if i < 0 or j < 0:
            sys.exit(f"{a.write} has no {start} … {end} section")
        with open(a.write, "w") as f:
            f.write(text[:i + len(start)] + "\n" + table + "\n" + text[j:])


def fmt_t(s):
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.2f} µs"


def render(sets, med, speeds, rss, e2e_rows, mcp, load, a):
    """One table: every figure, before and after, its limit or peer, its goal, and the command
    that measures it alone."""
    names = list(sets)
    head = ("| figure | " + " | ".join(names)
            + " | limit or peer (same run) | goal | met | regenerate |")
    rows = [head, "|" + "---|" * (len(names) + 5)]

    def row(fig, vals, limit, goal, met, cmd):
        rows.append(f"| {fig} | " + " | ".join(vals) + f" | {limit} | {goal} | {met} | {cmd} |")

    last = names[-1]

    def crit_row(fig, needs, cell, limit, goal, met, cmd):
        have = {s: all(n in med.get(s, {}) for n in needs) for s in names}
        vals = [cell(med[s]) if have[s] else "not measured" for s in names]
        row(fig, vals, limit(med[last]) if have[last] else "—", goal,
            yes(met(med[last])) if have[last] else "—", cmd)

    def spawn_ratio(m):
        return m["spawn_true/runtime/no_profile"] / m["spawn_true/direct/tokio"]

    crit_row("command tool `true` through the runtime",
             ["spawn_true/runtime/no_profile", "spawn_true/direct/tokio"],
             lambda m: f"{fmt_t(m['spawn_true/runtime/no_profile'])}, {spawn_ratio(m):.1f}× direct",
             lambda m: f"direct tokio spawn {fmt_t(m['spawn_true/direct/tokio'])}", "≤ 1.3×",
             lambda m: spawn_ratio(m) <= 1.3, "`cargo bench --bench exec -- spawn_true`")

    def flush_ratio(m):
        return m["per_call/sqlite/slow_edit"] / m["device/commit"]

    crit_row("side-effecting call, SQLite journal (`synchronous=FULL`)",
             ["per_call/sqlite/slow_edit", "device/commit"],
             lambda m: f"{fmt_t(m['per_call/sqlite/slow_edit'])}, {flush_ratio(m):.1f}× a flush",
             lambda m: f"one flush {fmt_t(m['device/commit'])}", "≤ 1.5× one flush",
             lambda m: flush_ratio(m) <= 1.5,
             "`cargo bench --bench journal -- 'sqlite/slow_edit$\\|device'`")
    crit_row("16 concurrent side-effecting calls", ["sixteen_concurrent/sqlite"],
             lambda m: f"{fmt_t(m['sixteen_concurrent/sqlite'] / 16)} per call, "
                       f"{16 / m['sixteen_concurrent/sqlite']:,.0f} calls/s",
             lambda m: "group commit", "≥ 10,000 calls/s",
             lambda m: 16 / m["sixteen_concurrent/sqlite"] >= 10_000,
             "`cargo bench --bench journal -- sixteen_concurrent/sqlite`")
    for tool, what, goal in (("cat_file_head_tail", "head and tail kept", 0.5),
                             ("cat_file", "streamed into the artifact store", 0.4)):
        fig = f"{a.size_mib} MiB of tool output, {what} (`toolgate call {tool}`)"
        want = f"≥ {goal}× cat" + (", RSS ≤ 64 MiB" if tool == "cat_file_head_tail" else "")
        cmd = f"`SIZE_MIB={a.size_mib} benches/exec_output.sh`"
        if speeds is None:
            row(fig, ["not run" for _ in names], "`cat > /dev/null`", want, "—", cmd)
            continue
        cat = speeds["cat"]
        v = {s: speeds[f"{s}/{tool}"] for s in names}
        peer = (f"`cat > /dev/null` {cat:,.0f} MiB/s; through a pipe (`cat \\| cat`) "
                f"{speeds['pipe']:,.0f} MiB/s")
        if tool == "cat_file":
            peer += f"; to a file and fsync (`dd bs=1M conv=fsync`) {speeds['disk']:,.0f} MiB/s"
        row(fig, [f"{v[s]:,.0f} MiB/s, {v[s] / cat:.2f}× cat, RSS {rss[f'{s}/{tool}']:.0f} MiB"
                  for s in names], peer, want,
            yes(v[last] / cat >= goal and (tool == "cat_file" or rss[f"{last}/{tool}"] <= 64)),
            cmd)
    crit_row("pipeline overhead per builtin call (`echo`, in-memory journal)",
             ["per_call/pipeline/echo"],
             lambda m: fmt_t(m["per_call/pipeline/echo"]),
             lambda m: "JSON Schema ≈ 0.07 µs + CEL ≈ 1–3 µs", "≤ 5 µs",
             lambda m: m["per_call/pipeline/echo"] <= 5e-6,
             "`cargo bench --bench runtime -- per_call/pipeline/echo`")
    if mcp:
        by = {r["server"]: r for r in mcp}
        bare = by["bare-rmcp"]["server_cpu_us_per_call"]
        key = {"before": "before", "after": "toolgate"}
        row("MCP server CPU per call vs bare rmcp",
            [f"{by[key[s]]['server_cpu_us_per_call'] / bare:.2f}×" for s in names],
            f"bare rmcp {bare:.0f} µs", "≤ 1.1×",
            yes(by["toolgate"]["server_cpu_us_per_call"] / bare <= 1.1),
            "`benches/mcp/bench.py`")
    else:
        row("MCP server CPU per call vs bare rmcp", ["not run" for _ in names], "bare rmcp",
            "≤ 1.1×", "—", "`benches/mcp/bench.py` (`all.py --mcp`)")
    what = {"write_file": "sequential `write_file` (one file, `overwrite: true`)",
            "process": "sequential command tool (`/bin/true`, `sandbox: none`, group `max: 1`)",
            "process_read": "the same tool declared `read_only`"}
    if e2e_rows is None:
        for w, text in what.items():
            row(f"{text}, `toolgate run`, 200 calls", ["not run" for _ in names],
                "—", "—", "—", f"`benches/e2e.py --workload {w}`")
    else:
        for r in e2e_rows["rows"]:
            vals = [f"{r[f'{s}_ms']:.2f} ms per call ({r[f'{s}_x_limit']:.1f}×)" for s in names]
            row(f"{what[r['workload']]}, `toolgate run`, 200 calls", vals,
                f"{r['limit']} {r['limit_ms']:.2f} ms", f"≤ {r['goal']}×",
                yes(r[f"{last}_x_limit"] <= r["goal"]),
                f"`benches/e2e.py --workload {r['workload']}`")
    rows.append("")
    rows.append(f"Load average (1, 5, 15 min) at the start and the end: {load[0]}; {load[1]}. "
                f"Criterion medians of {a.rounds} alternating rounds; whole-process figures "
                f"medians of {max(1, a.rounds)} (output) and {a.e2e_rounds} (e2e) rounds. "
                f"Command: `benches/all.py {' '.join(sys.argv[1:])}`.")
    return "\n".join(rows)


def yes(b):
    return "yes" if b else "no"


if __name__ == "__main__":
    main()
