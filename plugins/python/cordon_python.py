"""Cordon's Python interpreter: CPython 3.14 as componentize-py builds it for
WASI, exporting `cordon:plugin/interpreter`. A sandbox backend's shell runs
`python3 SCRIPT ARGS` through the host, which gives each run a fresh instance
whose only file system is the calling command's workspace (`/workspace`,
whose changes go back to the command), the active skills' folders
(`/skills/NAME`, read-only) and a `/tmp` of its own.

componentize-py keeps the modules imported while it builds the component and
no others, so the standard library modules a script may import are imported
here, below. A script's own modules (files beside it) are read from the
file system at run time as usual.
"""

import sys
import os
import io
import runpy
import traceback

# The standard library a script may use: imported now, so that they are in
# the component (componentize-py snapshots the interpreter after this module
# is imported). Modules that need the network, processes, threads or native
# libraries the WASI build lacks are not here and fail to import.
import abc, argparse, array, ast, base64, binascii, bisect, calendar, cmath  # noqa: E401,F401
import codecs, collections, collections.abc, colorsys, configparser  # noqa: E401,F401
import contextlib, copy, copyreg, csv, dataclasses, datetime, decimal  # noqa: E401,F401
import difflib, enum, errno, fnmatch, fractions, functools, getopt, glob  # noqa: E401,F401
import gzip, hashlib, heapq, hmac, html, html.entities, html.parser  # noqa: E401,F401
import inspect, ipaddress, itertools, json, json.decoder, json.encoder  # noqa: E401,F401
import keyword, linecache, locale, math, numbers, operator, optparse  # noqa: E401,F401
import pathlib, posixpath, pprint, queue, random, re, reprlib, secrets  # noqa: E401,F401
import shlex, statistics, string, struct, textwrap, time, tokenize  # noqa: E401,F401
import tomllib, types, typing, unicodedata, urllib.parse, uuid, warnings  # noqa: E401,F401
import weakref, zlib, zipfile  # noqa: E401,F401
import xml.etree.ElementTree, xml.dom.minidom  # noqa: E401,F401
import email, email.message, email.parser, email.utils  # noqa: E401,F401
import encodings.ascii, encodings.latin_1, encodings.utf_16, encodings.utf_32  # noqa: E401,F401
import encodings.cp1252, encodings.utf_8_sig, encodings.idna, stringprep  # noqa: E401,F401
# Imported lazily by the modules above, or by running a script at all.
import pkgutil, importlib.machinery, importlib.util, gettext, shutil, _strptime  # noqa: E401,F401
import logging, platform, socket, tempfile, threading, subprocess  # noqa: E401,F401
import xml.parsers.expat  # noqa: E401,F401

from wit_world import exports

VERSION = "Python %d.%d.%d (sandboxed: Cordon)" % sys.version_info[:3]

USAGE = """usage: python3 [-c CMD | -m MOD | FILE | -] [ARG]...
Options: -c CMD (program passed as string), -m MOD (run a standard library
module as a script), - (program read from stdin), -V (version); -B -E -I -O
-s -S -u and -W/-X with their argument are accepted and ignored.
"""

# Options that take no argument and change nothing here.
IGNORED = {"-B", "-E", "-I", "-O", "-OO", "-s", "-S", "-u", "-q", "-b", "-bb", "-d", "-R", "-P"}
# Options that take an argument and change nothing here.
IGNORED_WITH_ARGUMENT = {"-W", "-X"}


def _exit_status(code):
    """The exit status `sys.exit(code)` means."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _run(args):
    """Run the command line `args` as `python3` would; its exit status."""
    rest = list(args)
    while rest:
        option = rest[0]
        if option in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        if option in ("-V", "--version"):
            print(VERSION)
            return 0
        if option == "-c":
            if len(rest) < 2:
                print("Argument expected for the -c option", file=sys.stderr)
                return 2
            sys.argv = ["-c"] + rest[2:]
            code = compile(rest[1], "<string>", "exec")
            exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
            return 0
        if option == "-m":
            if len(rest) < 2:
                print("Argument expected for the -m option", file=sys.stderr)
                return 2
            sys.argv = [rest[1]] + rest[2:]
            runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
            return 0
        if option in IGNORED_WITH_ARGUMENT:
            rest = rest[2:]
            continue
        if option in IGNORED or (option.startswith("-W") or option.startswith("-X")):
            rest = rest[1:]
            continue
        break
    if not rest or rest[0] == "-":
        sys.argv = ["-"] + rest[1:]
        source = sys.stdin.read()
        exec(compile(source, "<stdin>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        return 0
    if rest[0].startswith("-"):
        print("Unknown option: %s\n%s" % (rest[0], USAGE), file=sys.stderr)
        return 2
    script = rest[0]
    sys.argv = rest
    folder = os.path.dirname(os.path.abspath(script))
    sys.path.insert(0, folder)
    runpy.run_path(script, run_name="__main__")
    return 0


class Interpreter(exports.Interpreter):
    def run(self, args, cwd, env):
        os.environ.clear()
        os.environ.update(dict(env))
        try:
            os.chdir(cwd)
        except OSError as error:
            print("python3: cannot enter %s: %s" % (cwd, error), file=sys.stderr)
            return 1
        try:
            status = _run(args)
        except SystemExit as stop:
            status = _exit_status(stop.code)
        except BaseException:
            traceback.print_exc()
            status = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        return status
