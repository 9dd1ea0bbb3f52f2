"""Drive `cordon mcp` over stdio with the official Python MCP SDK, as an MCP
client (Claude Code, Codex, ...) would, and print what it saw as one JSON
object for the Rust test to check.

usage: client.py CORDON_BINARY CWD ARG... (the arguments after `cordon`)
The elicitation answer comes from the environment: APPROVE=yes|no|none
(none: the client declares no elicitation at all). ADD_BUNDLES=FROM:TO;...
moves bundle folders into the plugins folder before a last listing.
ACTIVATE_SKILL=NAME calls the `skill` tool to activate NAME and lists again.
"""

import asyncio
import json
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


def content_text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


async def main():
    binary, cwd, *args = sys.argv[1:]
    approve = os.environ.get("APPROVE", "none")
    asked = []
    changed = asyncio.Event()

    async def elicit(context, params):
        asked.append(params.message)
        fields = params.requested_schema.get("properties", {})
        if "name" in fields:
            # A tool's own question: the person answers it.
            return types.ElicitResult(action="accept", content={"name": "Ada"})
        if approve == "yes":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    logged = []

    async def log(params):
        logged.append({"level": params.level, "logger": params.logger, "data": params.data})

    async def messages(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    server = StdioServerParameters(command=binary, args=args, cwd=cwd, env=dict(os.environ))
    seen = {}
    async with stdio_client(server) as (read, write):
        session = ClientSession(
            read,
            write,
            elicitation_callback=elicit if approve != "none" else None,
            message_handler=messages,
            logging_callback=log,
        )
        async with session:
            init = await session.initialize()
            seen["server"] = init.server_info.name
            seen["protocol"] = init.protocol_version
            listed = await session.list_tools()
            seen["tools"] = [
                {
                    "name": tool.name,
                    "title": tool.title,
                    "read_only": tool.annotations.read_only_hint if tool.annotations else None,
                    "destructive": tool.annotations.destructive_hint if tool.annotations else None,
                    "required": tool.input_schema.get("required", []),
                    "has_output_schema": tool.output_schema is not None,
                }
                for tool in listed.tools
            ]

            ok = await session.call_tool("jq_query", {"filter": ".a + 1", "input": {"a": 41}})
            seen["jq"] = {"error": ok.is_error, "structured": ok.structured_content, "text": content_text(ok)}

            bad = await session.call_tool("jq_query", {"filter": ".a +", "input": {}})
            seen["jq_bad"] = {"error": bad.is_error, "text": content_text(bad)}

            for key, name, arguments in [
                ("unknown", "jq_qeury", {"filter": "."}),
                ("schema", "jq_query", {"filter": 7}),
            ]:
                try:
                    await session.call_tool(name, arguments)
                    seen[key] = {"protocol_error": False}
                except MCPError as error:
                    seen[key] = {"protocol_error": True, "code": error.error.code, "message": error.error.message}

            denied = await session.call_tool("notes_list", {})
            seen["denied"] = {"error": denied.is_error, "text": content_text(denied)}

            asking = await session.call_tool("notes_add", {"title": "Milk", "body": "buy milk"})
            seen["asking"] = {"error": asking.is_error, "text": content_text(asking), "asked": list(asked)}

            if os.environ.get("ACTIVATE_SKILL"):
                changed.clear()
                activated = await session.call_tool("skill", {"name": os.environ["ACTIVATE_SKILL"]})
                try:
                    await asyncio.wait_for(changed.wait(), timeout=20)
                    told = True
                except asyncio.TimeoutError:
                    told = False
                relisted = await session.list_tools()
                seen["skill"] = {
                    "error": activated.is_error,
                    "text": content_text(activated),
                    "list_changed": told,
                    "tools_after": sorted(tool.name for tool in relisted.tools),
                }

            if os.environ.get("ADD_BUNDLES"):
                for move in os.environ["ADD_BUNDLES"].split(";"):
                    source, target = move.split(":", 1)
                    os.rename(source, target)
                try:
                    await asyncio.wait_for(changed.wait(), timeout=20)
                    seen["list_changed"] = True
                except asyncio.TimeoutError:
                    seen["list_changed"] = False
                relisted = await session.list_tools()
                seen["tools_after"] = sorted(tool.name for tool in relisted.tools)

            names = {tool["name"] for tool in seen["tools"]}
            if "read" in names:
                read = await session.call_tool("read", {"path": "README.md"})
                seen["read"] = {"error": read.is_error, "structured": read.structured_content}
            if "test_tool_with_progress" in names:
                progress = []

                async def report(done, total, message):
                    progress.append([done, total, message])

                await session.call_tool("test_tool_with_progress", {}, progress_callback=report)

                # A tool that asks its own question, during the call.
                before = len(asked)
                greeted = await session.call_tool("test_input_required_result_elicitation", {})
                seen["tool_question"] = {
                    "error": greeted.is_error,
                    "text": content_text(greeted),
                    "asked": asked[before:],
                }

                # A tool that asks without end.
                before = len(asked)
                endless = await session.call_tool("test_ask_forever", {})
                seen["endless_questions"] = {
                    "error": endless.is_error,
                    "text": content_text(endless),
                    "asked": len(asked) - before,
                }
                seen["progress"] = progress
                quiet = await session.call_tool("test_tool_with_logging", {})
                seen["logged_unasked"] = list(logged)
                await session.set_logging_level("info")
                loud = await session.call_tool("test_tool_with_logging", {})
                seen["logged"] = list(logged)
                seen["logging_results"] = [quiet.is_error, loud.is_error]

                # Cancel a long call; the next call must not wait for it.
                started = time.monotonic()
                waiting = asyncio.create_task(session.call_tool("test_wait", {"ms": 20000}))
                await asyncio.sleep(1.0)
                waiting.cancel()
                try:
                    await waiting
                except asyncio.CancelledError:
                    pass
                after = await session.call_tool("jq_query", {"filter": ".", "input": 1})
                seen["after_cancel"] = {"error": after.is_error, "seconds": time.monotonic() - started}

            ping = await session.send_ping()
            seen["ping"] = ping is not None
    print(json.dumps(seen))


asyncio.run(main())
