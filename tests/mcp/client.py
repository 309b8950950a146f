"""Drive `toolgate serve` with the official Python MCP SDK (the `mcp` package).

Run by tests/mcp_python.rs:

    python3 tests/mcp/client.py --toolgate target/debug/toolgate \
        --config tests/fixtures/mcp/toolgate.yaml --workspace WS \
        --schema tests/fixtures/mcp/mcp-schema-2025-11-25.json

It checks, and exits non-zero with the reason on the first failure:
  1. `tools/list`, spoken as raw JSON-RPC lines, validates against the MCP 2025-11-25 schema
     (#/$defs/ListToolsResult); order is deterministic; every annotation hint is explicit;
     no toolgate-only `x-` keywords; an unknown tool is an observation: an isError result
     (UNKNOWN_TOOL) naming the close tools of the served set, not a JSON-RPC error.
  2. Through the SDK's Client (legacy handshake, elicitation declared): a read tool succeeds with
     structuredContent; a denied call and bad arguments are isError results; an `ask` is
     answered through elicitation (allow-once, and an allow-for-session grant that holds for the
     connection); a cancelled long call's process tree disappears.
  3. A client without elicitation gets APPROVAL_UNAVAILABLE for the same `ask`.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import anyio

try:
    import mcp.types as types
    from mcp import Client, StdioServerParameters
except ImportError as e:  # pragma: no cover - the Rust test checks this first
    sys.exit(f"the Python package `mcp` is not importable ({e}); run `pip install mcp`")

# A bound on every wait for something that must happen (a pid file, a process exit), so a
# broken server fails the test instead of hanging it. Not a timing assertion.
WAIT_LIMIT_S = 60


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(cond, message):
    if not cond:
        fail(message)


def server_argv(args):
    return [
        args.toolgate,
        "serve",
        # The test vouches for its fixture (the SDK passes the server few variables).
        "--trust-policy",
        "--config",
        args.config,
        "--workspace",
        args.workspace,
        # A journal of this run's own (the fixture's state_dir would be shared by every run).
        "--state-dir",
        os.path.join(args.workspace, ".toolgate"),
    ]


def raw_exchange(args):
    """tools/list and an unknown tool, as raw newline-delimited JSON-RPC over stdio."""
    proc = subprocess.Popen(
        server_argv(args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:

        def send(msg):
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()

        def reply(want_id):
            while True:
                line = proc.stdout.readline()
                check(line != "", "the server closed stdout before answering")
                msg = json.loads(line)  # stdout must hold only JSON-RPC messages
                if msg.get("id") == want_id:
                    return msg

        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        init = reply(1)
        check("result" in init, f"initialize failed: {init}")
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        listed = reply(2)
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "read_files", "arguments": {}},
            }
        )
        unknown = reply(3)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=WAIT_LIMIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            fail("toolgate serve did not exit when its stdin closed")
    return listed, unknown


def check_listing(listed, unknown, schema_path):
    import jsonschema

    with open(schema_path) as f:
        schema = json.load(f)
    result = listed.get("result")
    check(result is not None, f"tools/list failed: {listed}")
    validator = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/ListToolsResult"})
    errors = sorted(validator.iter_errors(result), key=lambda e: list(e.path))
    check(not errors, "tools/list does not validate: " + "; ".join(e.message for e in errors[:5]))
    names = [t["name"] for t in result["tools"]]
    check(names == sorted(names), f"tools are not in a deterministic (sorted) order: {names}")
    check({"read_file", "write_file", "long_sleep"} <= set(names), f"missing tools: {names}")
    hints = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    for t in result["tools"]:
        a = t.get("annotations", {})
        check(all(isinstance(a.get(h), bool) for h in hints), f"{t['name']}: hints not explicit: {a}")
        text = json.dumps(t)
        check('"x-' not in text, f"{t['name']} carries an x- keyword: {text}")
    rf = next(t for t in result["tools"] if t["name"] == "read_file")
    got = {h: rf["annotations"][h] for h in hints}
    want = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    check(got == want, f"read_file annotations: {rf['annotations']}")
    check(rf.get("outputSchema", {}).get("type") == "object", "read_file has no object outputSchema")
    res = unknown.get("result")
    check(res is not None and res.get("isError") is True, f"an unknown tool is not an isError result: {unknown}")
    meta = res.get("_meta") or {}
    check(meta.get("io.toolgate/error_type") == "UNKNOWN_TOOL", f"unknown tool: {unknown}")
    text = "".join(c.get("text", "") for c in res.get("content", []))
    check("read_file" in text, f"the unknown tool's result names no close tool: {text}")
    return names


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def wait_for(predicate, what):
    with anyio.fail_after(WAIT_LIMIT_S):
        while not predicate():
            await anyio.sleep(0.05)
    return True


def pids_in(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


async def governed_calls(args):
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        decision = "allow_session" if "session.txt" in params.message else "allow_once"
        return types.ElicitResult(action="accept", content={"decision": decision})

    params = StdioServerParameters(command=args.toolgate, args=server_argv(args)[1:])
    async with Client(params, mode="legacy", elicitation_callback=elicit) as client:
        r = await client.call_tool("read_file", {"path": "notes.txt"})
        check(not r.is_error, f"read_file failed: {text_of(r)}")
        check(r.structured_content is not None, "read_file returned no structuredContent")
        check("hello from the workspace" in r.structured_content["content"], f"{r.structured_content}")
        check("hello from the workspace" in text_of(r), "the text block lacks the file content")

        r = await client.call_tool("read_file", {"path": ".env"})
        check(r.is_error, "reading .env was not refused")
        check("denied POLICY_DENIED" in text_of(r), f"not a policy denial: {text_of(r)}")

        r = await client.call_tool("read_file", {"path": "notes.txt", "end_line": 0})
        check(r.is_error, "end_line 0 was accepted")
        check("INVALID_ARGUMENTS" in text_of(r), f"not INVALID_ARGUMENTS: {text_of(r)}")

        r = await client.call_tool("write_file", {"path": "approved.txt", "content": "yes\n"})
        check(len(asked) == 1 and "write_file" in asked[0], f"elicitation not used: {asked}")
        check(not r.is_error, f"the approved write failed: {text_of(r)}")
        check(os.path.exists(os.path.join(args.workspace, "approved.txt")), "approved.txt missing")

        # allow-for-session: the same call again in this connection is not asked again.
        again = {"path": "session.txt", "content": "s\n", "overwrite": True}
        for _ in range(2):
            r = await client.call_tool("write_file", again)
            check(not r.is_error, f"the session-approved write failed: {text_of(r)}")
        check(len(asked) == 2, f"a session grant did not hold: asked {len(asked)} times")

        pidfile = os.path.join(args.workspace, "pids")
        outcome = {}
        async with anyio.create_task_group() as tg:
            async with anyio.create_task_group() as inner:

                async def long_call():
                    outcome["result"] = await client.call_tool("long_sleep", {"pidfile": "pids"})

                inner.start_soon(long_call)
                await wait_for(lambda: len(pids_in(pidfile)) >= 3, "the pid file")
                # Abandoning the request makes the SDK send notifications/cancelled.
                inner.cancel_scope.cancel()
            tg.cancel_scope.cancel()
        check("result" not in outcome, "the long call finished instead of being cancelled")
        pids = pids_in(pidfile)
        await wait_for(lambda: not any(os.path.exists(f"/proc/{p}") for p in pids), "the processes to exit")

        r = await client.call_tool("read_file", {"path": "notes.txt"})
        check(not r.is_error, "the server did not serve a call after the cancellation")
    return pids


async def no_elicitation(args):
    params = StdioServerParameters(command=args.toolgate, args=server_argv(args)[1:])
    async with Client(params, mode="legacy") as client:
        r = await client.call_tool("write_file", {"path": "unapproved.txt", "content": "no\n"})
        check(r.is_error, "a write was allowed without anyone to ask")
        check("APPROVAL_UNAVAILABLE" in text_of(r), f"not APPROVAL_UNAVAILABLE: {text_of(r)}")
        check(not os.path.exists(os.path.join(args.workspace, "unapproved.txt")), "the write happened")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolgate", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--workspace", required=True)
    p.add_argument("--schema", required=True)
    args = p.parse_args()
    listed, unknown = raw_exchange(args)
    names = check_listing(listed, unknown, args.schema)
    pids = anyio.run(governed_calls, args)
    anyio.run(no_elicitation, args)
    print(json.dumps({"tools": names, "cancelled_pids": pids, "ok": True}))


if __name__ == "__main__":
    main()
