"""Three clients of the official Python MCP SDK against `toolgate serve --http`, at once, each
with its own bearer token (run by tests/serve_http.rs, which signs the tokens):

    python3 tests/mcp/http_principals.py --url http://127.0.0.1:PORT/mcp \
        --alice JWT --bob JWT --carol JWT

Each client lists the tools, reads readme.txt and writes notes/<name>.md through team_note.
Prints one JSON object: per client, the tools listed and how the read and the write ended
("success", or the text of the isError result).
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


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


def outcome(result):
    return "success" if not result.is_error else text_of(result)


async def one(name, url, token, out):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy") as client:
            listed = await client.list_tools()
            tools = sorted(t.name for t in listed.tools)
            read = await client.call_tool("read_file", {"path": "readme.txt"})
            write = await client.call_tool(
                "team_note", {"path": f"notes/{name}.md", "content": f"from {name}\n"}
            )
            out[name] = {"tools": tools, "read": outcome(read), "write": outcome(write)}


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--alice", required=True)
    p.add_argument("--bob", required=True)
    p.add_argument("--carol", required=True)
    args = p.parse_args()
    out = {}
    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            for name in ("alice", "bob", "carol"):
                tg.start_soon(one, name, args.url, getattr(args, name), out)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    anyio.run(main)
