"""The MCP server's figures, driven by the official Python MCP SDK over stdio:
the round trip of `tools/call` for a trivial tool (`test_echo`) beside the
same client's `ping`, p50 and p99 of 1,000 each, so the cost of a call above
the protocol's own floor shows, and the bundled `jq_query` (`.`) for a real
tool, once with each step commit on disk before its answer and once with
`--durability process`. The same pairs again from a client with no SDK of
its own, writing JSON-RPC lines to the server's stdin and reading its
answers, so the server's share shows without the SDK's; and the cold start
from spawning
`cordon mcp` to the answer of its first `tools/list`, with the compile cache
warm. The server gets this process's environment, so `CORDON_STORE` moves
its store (onto tmpfs, say, to see the call without the disk's flush).

usage: bench_mcp.py CORDON PROJECT_DIR
"""

import asyncio
import json
import os
import subprocess
import statistics
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CALLS = 1000
STARTS = 10


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def micros(seconds):
    return f"{seconds * 1e6:8.0f} us"


DURABILITIES = ("disk", "process")


def server_parameters(binary, project, durability="disk"):
    return StdioServerParameters(
        command=binary,
        args=["mcp", "--permissions", "permissions.toml", "--durability", durability],
        cwd=project,
        env=dict(os.environ),
    )


async def round_trips(binary, project, durability):
    server = server_parameters(binary, project, durability)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for _ in range(50):
                await session.send_ping()
                await session.call_tool("test_echo", {"n": 1})
                await session.call_tool("jq_query", {"filter": ".", "input": 1})
            pings, calls, jq = [], [], []
            for _ in range(CALLS):
                started = time.perf_counter()
                await session.send_ping()
                pings.append(time.perf_counter() - started)
                started = time.perf_counter()
                result = await session.call_tool("test_echo", {"n": 1})
                calls.append(time.perf_counter() - started)
                assert not result.is_error, result
                started = time.perf_counter()
                result = await session.call_tool("jq_query", {"filter": ".", "input": 1})
                jq.append(time.perf_counter() - started)
                assert not result.is_error, result
    return pings, calls, jq


class Lines:
    """A client that speaks JSON-RPC lines over the server's stdio."""

    def __init__(self, binary, project, durability):
        parameters = server_parameters(binary, project, durability)
        self.server = subprocess.Popen(
            [parameters.command, *parameters.args],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.id = 0
        self.ask("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.server.stdin.write(json.dumps(message).encode() + b"\n")
        self.server.stdin.flush()

    def ask(self, method, params=None):
        self.id += 1
        message = {"jsonrpc": "2.0", "id": self.id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            line = self.server.stdout.readline()
            if not line:
                raise SystemExit(f"the server closed its output during {method}")
            answer = json.loads(line)
            if answer.get("id") == self.id:
                if "error" in answer:
                    raise SystemExit(f"{method}: {answer['error']}")
                return answer["result"]

    def close(self):
        self.server.stdin.close()
        self.server.wait()


def line_round_trips(binary, project, durability):
    client = Lines(binary, project, durability)
    echo = {"name": "test_echo", "arguments": {"n": 1}}
    for _ in range(200):
        client.ask("ping")
        client.ask("tools/call", echo)
    pings, calls = [], []
    for _ in range(CALLS):
        started = time.perf_counter()
        client.ask("ping")
        pings.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = client.ask("tools/call", echo)
        calls.append(time.perf_counter() - started)
        assert not result.get("isError"), result
    client.close()
    return pings, calls


def report(pings, calls):
    above = percentile(calls, 0.5) - percentile(pings, 0.5)
    print(f"  ping            p50 {micros(percentile(pings, 0.5))}  p99 {micros(percentile(pings, 0.99))}")
    print(f"  test_echo       p50 {micros(percentile(calls, 0.5))}  p99 {micros(percentile(calls, 0.99))}")
    print(f"  call above ping p50 {micros(above)}  ({percentile(calls, 0.5) / percentile(pings, 0.5):.1f}x ping)")


async def cold_start(binary, project):
    server = server_parameters(binary, project)
    started = time.perf_counter()
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            return time.perf_counter() - started


async def main():
    binary, project = sys.argv[1:]
    for durability in DURABILITIES:
        pings, calls, jq = await round_trips(binary, project, durability)
        print(f"--durability {durability}, the Python SDK")
        report(pings, calls)
        print(f"  jq_query        p50 {micros(percentile(jq, 0.5))}  p99 {micros(percentile(jq, 0.99))}")
    for durability in DURABILITIES:
        print(f"--durability {durability}, JSON-RPC lines")
        report(*line_round_trips(binary, project, durability))
    starts = [await cold_start(binary, project) for _ in range(STARTS)]
    print(
        f"cold start to the first tools/list answer: median {statistics.median(starts) * 1e3:.0f} ms"
        f" (min {min(starts) * 1e3:.0f}, max {max(starts) * 1e3:.0f}; {STARTS} starts, cache warm)"
    )


asyncio.run(main())
