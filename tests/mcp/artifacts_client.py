"""Read cut output as MCP resources with the official Python MCP SDK (the `mcp` package).

Run by tests/mcp_python.rs:

    python3 tests/mcp/artifacts_client.py --toolgate target/debug/toolgate \
        --config tests/fixtures/mcp_artifacts/toolgate.yaml --workspace WS --state-dir STATE

Serves the `bare` toolset (no read_artifact), has `print_lines` print 20,000 bytes, which the
16 KiB limit cuts, and checks, exiting non-zero with the reason on the first failure: the result
links one `toolgate-artifact:` resource and its text names it; `resources/read` of it returns the
whole output, and of `?start_line=99` the last two lines and a footer; the resource is listed.
Prints a JSON summary.
"""

import argparse
import json
import sys

import anyio

try:
    from mcp import Client, StdioServerParameters
except ImportError as e:  # pragma: no cover - the Rust test checks this first
    sys.exit(f"the Python package `mcp` is not importable ({e}); run `pip install mcp`")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(cond, message):
    if not cond:
        fail(message)


EXPECTED = "".join(f"line {i:03d} {'x' * 190}\n" for i in range(1, 101))


async def read_cut_output(args):
    params = StdioServerParameters(
        command=args.toolgate,
        args=[
            "serve",
            # The test vouches for its fixture (the SDK passes the server few variables).
            "--trust-policy",
            "--config",
            args.config,
            "--workspace",
            args.workspace,
            "--state-dir",
            args.state_dir,
            "--toolset",
            "bare",
        ],
    )
    async with Client(params, mode="legacy") as client:
        r = await client.call_tool("print_lines", {"count": 100, "width": 200})
        text = "\n".join(c.text for c in r.content if getattr(c, "type", "") == "text")
        check(not r.is_error, f"print_lines failed: {text}")
        links = [str(c.uri) for c in r.content if getattr(c, "type", "") == "resource_link"]
        check(len(links) == 1, f"one resource link expected: {r.content}")
        uri = links[0]
        check(uri.startswith("toolgate-artifact:blake3:"), f"not an artifact URI: {uri}")
        check(f"as the resource {uri}" in text, f"the text does not name the resource: {text}")
        check("read_artifact" not in text, f"the text names a tool the toolset lacks: {text}")

        whole = await client.read_resource(uri)
        check(len(whole.contents) == 1, f"one content expected: {whole.contents}")
        check(whole.contents[0].text == EXPECTED, "resources/read did not return the whole output")

        part = await client.read_resource(f"{uri}?start_line=99")
        last_two = "".join(EXPECTED.splitlines(keepends=True)[98:])
        artifact_id = uri.removeprefix("toolgate-artifact:")
        want = f"{last_two}[{artifact_id}: lines 99-100 of 100]\n"
        check(part.contents[0].text == want, f"the part is not lines 99-100: {part.contents[0].text!r}")

        listed = await client.list_resources()
        check([str(x.uri) for x in listed.resources] == [uri], f"listed: {listed.resources}")
    return {"uri": uri, "bytes": len(whole.contents[0].text), "ok": True}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolgate", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--workspace", required=True)
    p.add_argument("--state-dir", required=True)
    args = p.parse_args()
    print(json.dumps(anyio.run(read_cut_output, args)))


if __name__ == "__main__":
    main()
