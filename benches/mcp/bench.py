"""One client, three servers, the same trivial tool: `echo(text) -> text`.

    cargo build --release --bin toolgate --example bare_rmcp_echo
    python3 benches/mcp/bench.py --calls 2000 --warmup 200 --rounds 5

Servers (all over stdio, each started by the Python SDK's client, legacy handshake):
  toolgate  `toolgate serve` on benches/fixtures/mcp (the builtin echo: the whole governed
            pipeline — validation, permission, scheduling, normalization, projection, trace)
  fastmcp   the Python SDK's high-level server (`MCPServer`, FastMCP's name in mcp 2.x)
  bare-rmcp the same tool on a bare rmcp server, no governance (examples/bare_rmcp_echo.rs)

With --http, a toolgate server over Streamable HTTP (`toolgate serve --http 127.0.0.1:0`, started
here; the SDK's streamable_http_client) runs in the same rounds as `toolgate-http`: calls/s and
server CPU per call over HTTP against stdio.

With --before PATH, a fourth server — another toolgate binary, e.g. a build of an earlier commit —
runs in the same interleaved rounds, so a change is measured before and after under one load.

Each round starts each server afresh: warm-up calls, then N sequential calls; calls per second (client wall time), and the
server process's CPU time per call from /proc/<pid>/stat (utime + stime, before and after). The
client's own CPU per call is printed too: it bounds the calls/s any server can reach here.
"""

import argparse
import subprocess
import json
import os
import resource
import statistics
import sys
import tempfile
import time

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLK_TCK = os.sysconf("SC_CLK_TCK")
# The benchmark starts toolgate on its own fixture: it vouches for that policy as it stands
# (docs/protect.md, Trust), as a harness passing --trust-policy would; older builds ignore it.
TRUST = {"TOOLGATE_TRUST_POLICY": "1"}


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def children():
    me = str(os.getpid())
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[1] == me:
                    out.append(int(d))
        except OSError:
            pass
    return out


async def measure(name, command, args, calls, warmup):
    before_children = set(children())
    # The SDK passes a server only a few variables of its own environment; add the trust one.
    from mcp.client.stdio import get_default_environment
    params = StdioServerParameters(command=command, args=args, cwd=REPO,
                                   env={**get_default_environment(), **TRUST})
    async with Client(params, mode="legacy") as client:
        spawned = [p for p in children() if p not in before_children]
        if len(spawned) != 1:
            sys.exit(f"{name}: expected one server process, found {spawned}")
        return await calls_on(name, client, spawned[0], calls, warmup)


async def measure_http(name, command, args, calls, warmup):
    # The server prints its URL (the port the system chose) on stderr when it listens.
    proc = subprocess.Popen([command, *args], cwd=REPO, env={**os.environ, **TRUST},
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in proc.stderr:
            if "http://" in line:
                url = line[line.index("http://"):].split()[0]
                break
        if url is None:
            sys.exit(f"{name}: the server printed no URL")
        async with Client(streamable_http_client(url), mode="legacy") as client:
            return await calls_on(name, client, proc.pid, calls, warmup)
    finally:
        proc.terminate()
        proc.wait()


async def calls_on(name, client, pid, calls, warmup):
    tools = await client.list_tools()
    assert [t.name for t in tools.tools] == ["echo"], tools
    for i in range(warmup):
        r = await client.call_tool("echo", {"text": f"warm {i}"})
        assert not r.is_error and r.structured_content == {"text": f"warm {i}"}, r
    cpu0 = cpu_seconds(pid)
    me0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    for i in range(calls):
        r = await client.call_tool("echo", {"text": f"hello {i}"})
        if r.is_error or r.structured_content != {"text": f"hello {i}"}:
            sys.exit(f"{name}: bad result {r}")
    wall = time.perf_counter() - t0
    me1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu1 = cpu_seconds(pid)
    client_cpu = (me1.ru_utime + me1.ru_stime) - (me0.ru_utime + me0.ru_stime)
    return {
        "server": name,
        "calls": calls,
        "calls_per_s": round(calls / wall, 1),
        "server_cpu_us_per_call": round((cpu1 - cpu0) / calls * 1e6, 1),
        "client_cpu_us_per_call": round(client_cpu / calls * 1e6, 1),
        "wall_s": round(wall, 3),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds; medians are reported")
    p.add_argument("--profile", default="release", help="cargo profile folder under target/")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--http", action="store_true", help="also toolgate over Streamable HTTP")
    p.add_argument(
        "--before",
        metavar="TOOLGATE",
        help="another toolgate binary (e.g. a build of an earlier commit) run in the same rounds",
    )
    a = p.parse_args()
    target = os.path.join(REPO, "target", a.profile)
    # Each toolgate gets a state folder (journal) of its own: an older build may not read a
    # newer journal schema.
    state = tempfile.mkdtemp(prefix="toolgate-mcp-bench-")
    config = os.path.join(REPO, "benches/fixtures/mcp/toolgate.yaml")
    servers = [
        (
            "toolgate",
            os.path.join(target, "toolgate"),
            ["serve", "--config", config, "--state-dir", os.path.join(state, "toolgate")],
        ),
        ("fastmcp", sys.executable, [os.path.join(REPO, "benches/mcp/fastmcp_echo.py")]),
        ("bare-rmcp", os.path.join(target, "examples", "bare_rmcp_echo"), []),
    ]
    if a.http:
        servers.insert(
            1,
            (
                "toolgate-http",
                os.path.join(target, "toolgate"),
                ["serve", "--http", "127.0.0.1:0", "--config", config, "--state-dir", os.path.join(state, "http")],
            ),
        )
    if a.before:
        servers.insert(
            1,
            (
                "before",
                os.path.abspath(a.before),
                ["serve", "--config", config, "--state-dir", os.path.join(state, "before")],
            ),
        )
    # Rounds interleave the servers, so a burst of load from elsewhere on a shared machine
    # lands on all three; each figure is the median over the rounds.
    runs = {n: [] for n, _, _ in servers}
    for _ in range(a.rounds):
        for n, c, args in servers:
            how = measure_http if n == "toolgate-http" else measure
            runs[n].append(anyio.run(how, n, c, args, a.calls, a.warmup))
    rows = []
    for n, rs in runs.items():
        row = {"server": n, "calls": a.calls, "rounds": a.rounds}
        for k in ("calls_per_s", "server_cpu_us_per_call", "client_cpu_us_per_call", "wall_s"):
            row[k] = statistics.median(r[k] for r in rs)
            row[k + "_all"] = [r[k] for r in rs]
        rows.append(row)
    if a.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"medians of {a.rounds} interleaved rounds of {a.calls} calls")
    print(f"{'server':<10} {'calls/s':>9} {'server CPU µs/call':>19} {'client CPU µs/call':>19}")
    for r in rows:
        print(
            f"{r['server']:<10} {r['calls_per_s']:>9} {r['server_cpu_us_per_call']:>19} {r['client_cpu_us_per_call']:>19}"
        )
    by = {r["server"]: r for r in rows}
    speed = by["toolgate"]["calls_per_s"] / by["fastmcp"]["calls_per_s"]
    cpu = by["toolgate"]["server_cpu_us_per_call"] / max(by["bare-rmcp"]["server_cpu_us_per_call"], 1e-9)
    print(f"toolgate vs fastmcp calls/s: {speed:.2f}x (goal >= 3x)")
    print(f"toolgate vs bare rmcp server CPU per call: {cpu:.2f}x (goal <= 1.5x)")
    if "toolgate-http" in by:
        h = by["toolgate-http"]
        print(
            f"toolgate over HTTP vs stdio: calls/s {h['calls_per_s'] / by['toolgate']['calls_per_s']:.2f}x, "
            f"server CPU per call {h['server_cpu_us_per_call'] / max(by['toolgate']['server_cpu_us_per_call'], 1e-9):.2f}x"
        )
    if "before" in by:
        b = by["before"]
        print(
            f"toolgate vs before: calls/s {by['toolgate']['calls_per_s'] / b['calls_per_s']:.2f}x, "
            f"server CPU per call {by['toolgate']['server_cpu_us_per_call'] / max(b['server_cpu_us_per_call'], 1e-9):.2f}x"
        )


if __name__ == "__main__":
    main()
