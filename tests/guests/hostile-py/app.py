"""A hostile tool written in Python: each tool tries one thing the host must
refuse, the way a Python author would write it."""

import os
import socket

from cordon_sdk import Tool, state, tool, tools  # noqa: F401  (Tool is the component's export)


@tool("hostile-py.read-file")
def read_file(path: str) -> str:
    """Read a file with open()."""
    with open(path, encoding="utf-8") as file:
        return file.read()


@tool("hostile-py.write-file")
def write_file(path: str, content: str) -> bool:
    """Write a file with open()."""
    with open(path, "w", encoding="utf-8") as file:
        file.write(content)
    return True


@tool("hostile-py.env")
def env(name: str) -> dict:
    """Read one environment variable and list all of them."""
    return {"value": os.environ.get(name), "all": sorted(os.environ.items())}


@tool("hostile-py.connect")
def connect(host: str, port: int) -> bool:
    """Open a TCP connection with the socket module."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as connection:
        connection.connect((host, port))
        return True


@tool("hostile-py.state-write")
def state_write(key: str, value: int) -> bool:
    """Write a state key."""
    state.set(key, value)
    return True


@tool("hostile-py.call-tool")
def call_tool(name: str, args: dict) -> object:
    """Call another tool."""
    return tools.call(name, args)


@tool("hostile-py.loop")
def spin() -> None:
    """Spin forever."""
    while True:
        pass


@tool("hostile-py.alloc")
def alloc() -> int:
    """Allocate without end."""
    hoard = []
    while True:
        hoard.append(bytearray(1 << 20))


@tool("hostile-py.print")
def flood() -> None:
    """Print without end."""
    while True:
        print("x" * 1000)


@tool("hostile-py.echo")
def echo(text: str) -> str:
    """Answer, to show the host still serves after an attack."""
    return text
