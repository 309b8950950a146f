"""Eight clients of the official Python MCP SDK against two `toolgate serve --http` processes
that share one journal (run by tests/fleet.rs, which signs the tokens and kills server `a`
mid-run):

    python3 tests/mcp/fleet_client.py --a http://127.0.0.1:P1/mcp --b http://127.0.0.1:P2/mcp \
        --tokens '{"c0": JWT, ...}' --core c0,c1,c2,c3,c4,c5 --calls 12 --run RUN --refused FILE

Every call opens a session of its own (Streamable HTTP: initialize, then tools/call), so that
a server that dies takes only the calls in flight on it. A core client calls `mark` `--calls`
times, alternating the servers, each call with an idempotency key of its own in
`_meta["io.toolgate/idempotency-key"]`, and `ledger` after each mark (on the other server). A call that
fails at the transport (the server was killed) is *cut*: the client takes that server for dead
and sends the same call, with the same key, to the other server once. The other clients first
try `mark` on both servers (their tokens do not allow it), add their name to the `--refused`
file, then call `ledger` `--calls` times.

Prints one JSON object: per client, per mark call, its key and what happened
({"first": "a"|"b", "outcome": "success"|"cut"|TEXT, "retry": "success"|TEXT}); the refusals
of the denied clients per server; and the ledger calls' outcomes.
"""

import argparse
import json
import sys

import anyio

try:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
except ImportError as e:  # pragma: no cover - the Rust test checks this first
    sys.exit(f"the Python package `mcp` is not importable ({e}); run `pip install mcp`")

KEY_META = "io.toolgate/idempotency-key"
# A call on a live server ends well within this (a mark sleeps 0.4 s); one on a killed server
# ends with a transport error, or at the latest here.
CALL_LIMIT = 15


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


def outcome(result):
    return "success" if not result.is_error else text_of(result)


async def call(url, token, tool, args, key=None):
    """One call in a session of its own: its outcome, or None when the transport failed."""
    meta = {KEY_META: key} if key else None
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    try:
        with anyio.fail_after(CALL_LIMIT):
            async with http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, mode="legacy") as client:
                    result = await client.call_tool(tool, args, meta=meta)
                    return outcome(result)
    except Exception:  # noqa: BLE001 - any transport failure (connection refused, reset, timeout)
        return None


class Fleet:
    def __init__(self, urls):
        self.urls = urls
        self.dead = set()

    def pick(self, preferred):
        """The preferred server, or the other one when it is known dead."""
        if preferred in self.dead:
            return "b" if preferred == "a" else "a"
        return preferred


async def core_client(name, token, fleet, calls, run, out):
    marks = []
    ledger = []
    for seq in range(calls):
        key = f"{run}-{name}-{seq}"
        args = {"client": name, "seq": seq}
        first = fleet.pick("a" if (seq + int(name[1:])) % 2 == 0 else "b")
        got = await call(fleet.urls[first], token, "mark", args, key)
        entry = {"key": key, "seq": seq, "first": first}
        if got is None:
            fleet.dead.add(first)
            entry["outcome"] = "cut"
            other = "b" if first == "a" else "a"
            retry = await call(fleet.urls[other], token, "mark", args, key)
            entry["retry"] = "transport failed" if retry is None else retry
        else:
            entry["outcome"] = got
        marks.append(entry)
        where = fleet.pick("b" if first == "a" else "a")
        got = await call(fleet.urls[where], token, "ledger", args)
        if got is None:
            fleet.dead.add(where)
            got = "cut"
        ledger.append(got)
    out[name] = {"marks": marks, "ledger": ledger}


async def denied_client(name, token, fleet, calls, refused_file, out):
    refusals = {}
    for server in ("a", "b"):
        got = await call(fleet.urls[server], token, "mark", {"client": name, "seq": 0})
        refusals[server] = "transport failed" if got is None else got
    # Tells the test that this client's refusals are in (it kills server a only then).
    with open(refused_file, "a") as f:
        f.write(name + "\n")
    ledger = []
    for seq in range(calls):
        where = fleet.pick("b" if seq % 2 == 0 else "a")
        got = await call(fleet.urls[where], token, "ledger", {"client": name, "seq": seq})
        if got is None:
            fleet.dead.add(where)
            got = "cut"
        ledger.append(got)
    out[name] = {"refusals": refusals, "ledger": ledger}


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--a", required=True)
    p.add_argument("--b", required=True)
    p.add_argument("--tokens", required=True, help="JSON: client name -> JWT")
    p.add_argument("--core", required=True, help="comma-separated names allowed to mark")
    p.add_argument("--calls", type=int, default=12)
    p.add_argument("--run", required=True, help="makes the idempotency keys of this run unique")
    p.add_argument("--refused", required=True, help="a file each denied client adds its name to")
    args = p.parse_args()
    tokens = json.loads(args.tokens)
    core = set(args.core.split(","))
    fleet = Fleet({"a": args.a, "b": args.b})
    out = {}
    with anyio.fail_after(240):
        async with anyio.create_task_group() as tg:
            for name in sorted(tokens):
                if name in core:
                    tg.start_soon(core_client, name, tokens[name], fleet, args.calls, args.run, out)
                else:
                    tg.start_soon(
                        denied_client, name, tokens[name], fleet, args.calls, args.refused, out
                    )
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    anyio.run(main)
