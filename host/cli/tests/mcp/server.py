"""An MCP server on the official Python SDK, for the tests of Cordon as an
MCP client: over stdio by default, over streamable HTTP with `--http PORT`.

Its tools: `echo` (text back), `add` (structured output), `fail` (a tool
error), `environment` (the names of the variables it sees), `where` (its
working directory), `authorization` (the bearer token it received, over
HTTP), and two a hostile server would offer: `flood` (a result of `kib`
KiB) and `stall` (an answer after `seconds`).
"""

import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings

server = MCPServer("fixture")


@server.tool(description="Return the text.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two numbers.")
def add(a: int, b: int) -> dict:
    return {"sum": a + b}


@server.tool(description="Fail with the reason.")
def fail(reason: str) -> str:
    raise ToolError(reason)


@server.tool(description="The names of the environment variables the server sees.")
def environment() -> list[str]:
    return sorted(os.environ)


@server.tool(description="The server's working directory.")
def where() -> str:
    return os.getcwd()


@server.tool(description="The Authorization header of the request, over HTTP.")
def authorization(ctx: Context) -> str:
    request = ctx.request_context.request
    if request is None:
        return ""
    return request.headers.get("authorization", "")


@server.tool(description="A result of `kib` KiB.")
def flood(kib: int) -> str:
    return "x" * (kib * 1024)


@server.tool(description="Answer after `seconds`.")
async def stall(seconds: float) -> str:
    import anyio

    await anyio.sleep(seconds)
    return "late"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        import anyio

        anyio.run(
            lambda: server.run_streamable_http_async(
                port=int(sys.argv[2]),
                transport_security=TransportSecuritySettings(
                    enable_dns_rebinding_protection=False
                ),
            )
        )
    else:
        server.run()
