"""An MCP server whose one tool returns the idempotency key its request carried in `_meta`.

tests/mcp_upstream.rs calls it through toolgate's MCP backend: the key toolgate derived for the
call must arrive under `io.toolgate/idempotency-key`, so that a real upstream could deduplicate.
Uses the official Python SDK (`mcp` 2.x: FastMCP is `mcp.server.mcpserver.MCPServer`).
"""

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer

KEY = "io.toolgate/idempotency-key"


class Seen(BaseModel):
    key: str


server = MCPServer("meta-echo", log_level="WARNING")


@server.tool(name="seen_key", description="Return the idempotency key the request carried.")
def seen_key(ctx: Context) -> Seen:
    meta = ctx.request_context.meta
    if isinstance(meta, dict):
        fields = meta
    elif meta is not None:
        fields = {**meta.model_dump(), **(meta.model_extra or {})}
    else:
        fields = {}
    return Seen(key=str(fields.get(KEY, "")))


if __name__ == "__main__":
    server.run()
