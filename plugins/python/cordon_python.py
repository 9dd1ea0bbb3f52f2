"""Cordon's Python interpreter: CPython 3.14 as componentize-py builds it for
WASI, exporting `cordon:plugin/interpreter`. A sandbox backend's shell runs
`python3 SCRIPT ARGS` through the host, which gives each run a fresh instance
whose only file system is the calling command's workspace (`/workspace`,
whose changes go back to the command), the active skills' folders
(`/skills/NAME`, read-only) and a `/tmp` of its own.

componentize-py keeps the modules imported while it builds the component and
no others, so this module imports the whole standard library when the
component is built: every module and submodule this WASI build can import.
Those needing processes, threads, sockets or native libraries it lacks fail
to import and are left out. A script's own modules, and the packages a
skill is given, are read from the file system at run time as usual.
"""

import importlib
import os
import pkgutil
import runpy
import sys
import traceback

from wit_world import exports

# Modules left out on purpose: ones that act when imported (`this` prints,
# `antigravity` opens a browser, `__hello__` greets), GUI toolkits, the test
# suite, and installers that would fetch from the network.
LEFT_OUT = {
    "__hello__", "__phello__", "antigravity", "this", "idlelib", "tkinter",
    "turtle", "turtledemo", "test", "tests", "ensurepip", "venv", "lib2to3",
}


def _left_out(name):
    """Whether the module `name` stays out of the component."""
    return any(part in LEFT_OUT for part in name.split("."))


def _import_standard_library():
    """Import every module of the standard library this build holds, so that
    componentize-py keeps it in the component; the names of those kept."""
    kept = []
    for name in sorted(sys.stdlib_module_names):
        if _left_out(name):
            continue
        try:
            module = importlib.import_module(name)
        except BaseException:
            continue
        kept.append(name)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
            if _left_out(info.name):
                continue
            try:
                importlib.import_module(info.name)
            except BaseException:
                continue
            kept.append(info.name)
    return kept


STANDARD_LIBRARY = _import_standard_library()

VERSION = "Python %d.%d.%d (sandboxed: Cordon)" % sys.version_info[:3]

USAGE = """usage: python3 [-c CMD | -m MOD | FILE | -] [ARG]...
Options: -c CMD (program passed as string), -m MOD (run a module of the
working directory or of PYTHONPATH as a script), - (program read from
stdin), -V (version); -B -E -I -O -s -S -u and -W/-X with their argument
are accepted and ignored.
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
    # The packages approved for the active skills (`/packages/NAME`) and any
    # folder the command names, ahead of the standard library, as python3
    # reads PYTHONPATH.
    for entry in reversed(os.environ.get("PYTHONPATH", "").split(":")):
        if entry:
            sys.path.insert(0, entry)
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
            sys.path.insert(0, "")
            code = compile(rest[1], "<string>", "exec")
            exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
            return 0
        if option == "-m":
            if len(rest) < 2:
                print("Argument expected for the -m option", file=sys.stderr)
                return 2
            sys.argv = [rest[1]] + rest[2:]
            # As python3 does, `-m` finds modules in the working directory
            # first: `cd /skills/NAME && python3 -m scripts.package`.
            sys.path.insert(0, os.getcwd())
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
        sys.path.insert(0, "")
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
        # Imports write no bytecode caches: a skill's folder and its packages
        # are read-only, and a cache in the workspace would be a change the
        # command never asked for.
        sys.dont_write_bytecode = True
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
