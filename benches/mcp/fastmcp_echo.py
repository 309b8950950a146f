"""`echo(text) -> text` served by the Python SDK's high-level server over stdio.

In `mcp` 2.x FastMCP is `mcp.server.mcpserver.MCPServer` (renamed; same decorator API). The tool
has the same schema as toolgate's `echo` (benches/fixtures/mcp/echo.yaml): a structured result
`{"text": ...}` and a text block.
"""

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer


class EchoResult(BaseModel):
    text: str


server = MCPServer("fastmcp-echo", log_level="WARNING")


@server.tool(name="echo", description="Return the given text unchanged.")
def echo(text: str) -> EchoResult:
    return EchoResult(text=text)


if __name__ == "__main__":
    server.run()
