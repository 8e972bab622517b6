"""The ``ldpopt`` command (entry point ``ldpopt.cli:main``).

Notes: docs/notes/cli.md, "ldpopt.cli"."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from ._args import InputError
from ._version import version_line

__all__ = ["InputError", "build_parser", "main", "read_counts", "write_table"]


def __getattr__(name):  # read_counts / write_table without importing pandas for `ldpopt --version`
    if name in ("read_counts", "write_table"):
        from . import _io

        return getattr(_io, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``ldpopt`` parser. ``command``: build that subcommand's full parser only, the others as
    their one-line help (:mod:`._commands`) — what ``main`` does, so that ``ldpopt --help`` or a usage
    error imports no subcommand module (numpy, pandas, scipy); ``None``: every subcommand in full."""
    import importlib

    from ._commands import COMMANDS

    ap = argparse.ArgumentParser(prog="ldpopt", description="Post-processing of LDP frequency estimates.")
    ap.add_argument("--version", action=_Version, nargs=0, help="print the version (and the git commit of a checkout) and exit")
    ap.add_argument("--plugin", action="append", default=[], metavar="FILE.py|MODULE",
                    help="import this file or module first, so that the methods, oracles, objectives and "
                         "constraints it registers are known by name to the command (repeatable; worker "
                         "processes load it too)")
    ap.add_argument("--debug", action="store_true",
                    help="on an error, print the traceback (your own code's included) above the one-line message")
    sub = ap.add_subparsers(dest="command", required=True)
    for name, (module, help_line) in COMMANDS.items():
        if command is None or name == command:
            importlib.import_module(f".{module}", __name__).add_parser(sub)
        else:
            sub.add_parser(name, help=help_line)
    return ap


class _Version(argparse.Action):
    """``--version``: the line of :func:`._version.version_line`, asked of git only when given."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())
        parser.exit()


def _command_of(argv) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option), or "" if none: ``main``
    then builds only the top-level parser, which prints the help or the usage error."""
    from ._commands import COMMANDS

    words = iter(argv)
    for a in words:
        if a == "--plugin":  # its value is not the command
            next(words, None)
        elif not a.startswith("-"):
            return a if a in COMMANDS else ""
    return ""


def main(argv=None) -> int:
    """Run the command; a user error (bad input, a file that cannot be read or written, a missing
    dataset, not enough memory) is one line on stderr and exit status 2, never a traceback; Ctrl-C is
    one line and exit status 130, with no output half-written; a Python warning raised while it runs
    is one line, ``ldpopt COMMAND: warning: MESSAGE``, without source paths."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # what the parser would print, without importing every subcommand
        print(version_line())
        return 0
    early = _plugins_of(argv)
    if early:  # before the parser: what they register is in the command's --help and choices too
        from types import SimpleNamespace

        try:
            _load_plugins(SimpleNamespace(plugin=early))
        except (ValueError, OSError) as exc:
            print(f"ldpopt: error: {_one_line(exc)}", file=sys.stderr)
            return 2
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    with warnings.catch_warnings(), _terminate_as_interrupt():  # both restored when the command returns
        warnings.showwarning = _warning_line(args.command)
        return _call(args)


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill PID``, a job scheduler's stop) raised as an interrupt: the temporary outputs
    (``.NAME.<host>-<pid>-<hex>.tmp``, removed by :mod:`ldpopt._atomic` on any exception) go as on Ctrl-C, where
    the signal's default action would leave them behind."""


@contextlib.contextmanager
def _terminate_as_interrupt():
    """While the command runs, SIGTERM raises :class:`Terminated` (main thread only: a signal
    handler can be installed nowhere else; a command run from another thread keeps the default)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise Terminated()

    old = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _plugins_of(argv) -> list[str]:
    """The ``--plugin`` values given before the subcommand (``--plugin X`` or ``--plugin=X``)."""
    out, words = [], iter(argv)
    for a in words:
        if a == "--plugin":
            value = next(words, None)
            if value is not None:
                out.append(value)
        elif a.startswith("--plugin="):
            out.append(a.split("=", 1)[1])
        elif not a.startswith("-"):
            break
    return out


def _load_plugins(args) -> None:
    """Import ``--plugin`` files and modules (their registrations by decorator), before any work, and
    name them in :data:`ldpopt._userfunc.PLUGINS_ENV` for worker processes."""
    if not getattr(args, "plugin", None):
        return
    from .._userfunc import PLUGINS_ENV, load_plugins

    loaded = load_plugins(args.plugin, error=InputError)
    known = [r for r in os.environ.get(PLUGINS_ENV, "").split(os.pathsep) if r]
    os.environ[PLUGINS_ENV] = os.pathsep.join(dict.fromkeys(known + loaded))


def _warning_line(command: str):
    """A ``warnings.showwarning`` that prints ``ldpopt COMMAND: warning: MESSAGE`` as one line on
    stderr: no source path or line (they name ldpopt's or a library's file, not the user's input);
    the category is named unless it is a plain UserWarning."""
    def show(message, category, filename, lineno, file=None, line=None):
        kind = "" if category is UserWarning else f"{category.__name__}: "
        print(f"ldpopt {command}: warning: {kind}{_one_line(message)}", file=sys.stderr)

    return show


@contextlib.contextmanager
def _results_only_on_stdout():
    """While the command runs, file descriptor 1 is stderr's, and ``sys.stdout`` writes to the real
    standard output: what a solver's C code prints (OSQP's ``printf``), or a child process that
    inherits fd 1, lands on stderr, and standard output holds only what the command writes through
    ``sys.stdout`` (its CSV or JSON). C's own stdio buffer is flushed before fd 1 is put back, so
    nothing buffered there reaches standard output at exit. Left as is where ``sys.stdout`` is not
    the process's fd 1 (a caller capturing it in Python)."""
    try:
        real = sys.stdout is sys.__stdout__ and sys.stdout.fileno() == 1
    except (AttributeError, ValueError, OSError):
        real = False
    if not real:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    old = sys.stdout
    os.dup2(2, 1)
    sys.stdout = open(saved, "w", encoding=old.encoding, errors=old.errors, closefd=False,  # noqa: SIM115
                      newline=None, buffering=1 if old.line_buffering else -1)
    try:
        yield
    finally:
        try:
            sys.stdout.flush()
        finally:
            _flush_c_stdio()
            sys.stdout = old
            os.dup2(saved, 1)
            os.close(saved)


def _flush_c_stdio() -> None:
    """``fflush(NULL)``: the C library's buffered output written out (where libc can be loaded)."""
    import ctypes
    import ctypes.util

    try:
        ctypes.CDLL(ctypes.util.find_library("c") or None).fflush(None)
    except (OSError, AttributeError, TypeError):
        pass


def _call(args) -> int:
    try:
        _load_plugins(args)
        with _results_only_on_stdout():
            code = args.func(args)
        note = getattr(args, "recorded_note", None)  # what the counts' record filled: said once the command
        if note:  # has run, so that an error stays one line
            print(note, file=sys.stderr)
        return code
    except BrokenPipeError:  # `ldpopt experiment list | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except OSError as exc:  # includes DataNotFoundError (a FileNotFoundError): its message says what to do
        _traceback(args, exc)
        what = f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else str(exc)
        print(f"ldpopt {args.command}: error: {_one_line(what)}", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as exc:
        _traceback(args, exc)
        print(f"ldpopt {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:  # a size no check foresaw: one line, not numpy's traceback
        print(f"ldpopt {args.command}: error: not enough memory for this run; ask for less (a smaller --d, "
              f"fewer --repeats or reports)", file=sys.stderr)
        return 2
    except Terminated:  # SIGTERM: as Ctrl-C, with the status of a process the signal ended (128 + 15)
        print(f"ldpopt {args.command}: terminated; outputs not finished were not written", file=sys.stderr)
        return 143
    except KeyboardInterrupt:  # Ctrl-C: every output is written whole or not at all (atomic writes)
        print(f"ldpopt {args.command}: interrupted; outputs not finished were not written", file=sys.stderr)
        return 130


def _traceback(args, exc: BaseException) -> None:
    """Under ``--debug``, the whole traceback (the user's code's, chained as the cause) on stderr."""
    if getattr(args, "debug", False):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)


def _one_line(message) -> str:
    """An error message on one line: a library's multi-line text (pyarrow's reader errors) joined."""
    return " ".join(part.strip() for part in str(message).strip().splitlines() if part.strip())
