"""The ``rageval-min`` command line.

``main(argv=None, *, stdout=None, stderr=None) -> int`` parses ``argv``, runs the
subcommand and returns the exit code; it never raises and never prints a
traceback:

====  =====================================================================
code  meaning
====  =====================================================================
0     success; every gate passed
1     a gate failed (the results were still written)
2     usage or input error (a one-line message on stderr)
3     internal error: a bug in rageval-min (a one-line message on stderr;
      set ``RAGEVAL_MIN_TRACEBACK=1`` to see the traceback)
130   interrupted (Ctrl-C); 143 / 129 after SIGTERM / SIGHUP (console script)
====  =====================================================================

The commands are the rows of :mod:`rageval_min.registry`; only the module of
the command being run is imported (its ``register(subparsers)`` adds it).  Its
gold-sample cases, which ``demo`` runs, are data in
``gold_samples/<name>/cases.json`` (see ``docs/adding-a-family.md``).
"""

from __future__ import annotations

import argparse
import contextvars
import gc
import importlib
import os
import re
import sys

from . import registry
from ._cli_common import CliIO
from ._io import forget_parsed
from ._version import __version__
from .errors import ScoringError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, NoReturn, Optional, Sequence, TextIO

__all__ = ["main"]

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130

_COMMAND_NAMES = frozenset(c.name for c in registry.COMMANDS)

_IO: "contextvars.ContextVar[CliIO]" = contextvars.ContextVar("rageval_min_cli_io")
#: Whether the running command turns the garbage collector back on once started (main_entry).
_COLLECT: "contextvars.ContextVar[bool]" = contextvars.ContextVar("rageval_min_cli_collect", default=False)


class _Signalled(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (so temporary files are removed), then exit 128 + signum."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_signalled(signum: int, frame: Any) -> None:
    raise _Signalled(signum)


def install_signal_handlers() -> None:
    """Turn SIGTERM and SIGHUP into an orderly exit (for the console script, not for embedding)."""
    try:  # the C module signal.py wraps: the same calls, without the enums it builds (start-up time)
        signal: Any = importlib.import_module("_signal")
    except ImportError:
        import signal

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, _raise_signalled)


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that prints to the injected writers and never exits.

    ``add_argument`` checks each metavar with a help formatter, which asks the terminal's width
    (``shutil``, a few milliseconds of start-up to import); that formatter prints nothing, so
    there it gets a fixed width instead.  Help and usage text still take the terminal's.
    """

    _checking = False

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        self._checking = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._checking = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if self._checking and self.formatter_class is argparse.HelpFormatter:
            return argparse.HelpFormatter(prog=self.prog, width=80)
        return super()._get_formatter()

    def _print_message(self, message: str, file: Optional[Any] = None) -> None:
        if not message:
            return
        io = _IO.get()
        (io.stderr if file is sys.stderr else io.stdout).write(message)

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        if message:
            _IO.get().stderr.write(message)
        raise _Exit(status)

    def error(self, message: str) -> NoReturn:
        command = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        raise ScoringError(f"{command + ': ' if command else ''}{message}{_did_you_mean(self, message)} (see --help)")


def _command_of(argv: Sequence[str]) -> Optional[str]:
    """The subcommand named by ``argv`` (its first non-option word), if any."""
    for word in argv:
        if not word.startswith("-"):
            return word
        if word in ("-h", "--help", "--version"):
            return None
    return None


def _option_strings(parser: argparse.ArgumentParser) -> List[str]:
    """Every option string of ``parser`` and of its subcommands."""
    out = list(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _option_strings(sub)
    return out


def _did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    """``; did you mean --gate?`` for an unrecognized option close to a known one."""
    if not message.startswith("unrecognized arguments:"):
        return ""
    import difflib

    known = sorted(set(_option_strings(parser)))
    for word in message.split(":", 1)[1].split():
        near = difflib.get_close_matches(word.split("=", 1)[0], known, n=1) if word.startswith("--") else []
        if near:
            return f"; did you mean {near[0]}?"
    return ""


class _HelpWithMetrics(argparse.HelpFormatter):
    """Help text wrapped as usual, except the table of declared metrics (kept as laid out)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(_METRICS_HEAD):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


_METRICS_HEAD = "metrics (direction: which way is better; [item]: also in --per-item rows):"


def _metrics_table(metrics: Sequence[Any]) -> str:
    width = min(max(len(m.name) for m in metrics), 28)
    rows = [
        f"  {m.name:<{width}}  {m.direction:<7}  {m.kind:<9}  {m.meaning}{' [item]' if m.per_item else ''}"
        for m in metrics
    ]
    return "\n".join([_METRICS_HEAD] + rows)


def _describe_metrics(parser: Optional[argparse.ArgumentParser], family: str) -> None:
    """Put each command's declared metrics (its accumulator's ``METRICS``) at the end of its --help."""
    from ._contract import family_accumulators

    if parser is None:
        return
    nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for cls in family_accumulators(family):
        target = nested[0].choices.get(cls.COMMAND) if nested else parser
        if target is not None and cls.METRICS:
            target.epilog = _metrics_table(cls.METRICS)
            target.formatter_class = _HelpWithMetrics


def build_parser(command: Optional[str] = None, words: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The argument parser; with ``command``, only that family's module is imported (start-up cost)."""
    parser = _Parser(
        prog="rageval-min",
        description="Deterministic RAG/LLM evaluation metrics with reference parity. "
        "Exit codes: 0 gates pass, 1 a gate failed, 2 usage or input error, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"rageval-min {__version__}")
    # prog as argparse would make it (the usage of a parser with no positionals: its name alone),
    # without asking the terminal's width
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", prog=parser.prog)
    if command is not None and command in _COMMAND_NAMES:
        registry.cli_module(command).register(sub)
        if "-h" in words or "--help" in words:
            _describe_metrics(sub.choices.get(command), command)
    else:  # no command, --help or a typo: list the commands without importing them
        for row in registry.COMMANDS:
            sub.add_parser(row.name, help=row.summary, add_help=False)
    return parser


class _GuardedStdout:
    """Standard output that records its first write error (its reader gone, closed with ``>&-``,
    full) and drops what follows, so that the command still runs to its verdict: a failed gate is
    exit 1 whatever happens to standard output, and a write error is otherwise exit 2."""

    def __init__(self, stream: Optional[TextIO]) -> None:
        self._stream = stream
        self.error: Optional[str] = None

    def write(self, text: str) -> int:
        if self.error is None and self._stream is None:
            self.error = "standard output is closed"
        if self.error is None and self._stream is not None:
            try:
                return self._stream.write(text)
            except OSError as exc:
                self.error = exc.strerror or str(exc)
        return len(text)

    def flush(self) -> None:
        if self.error is None and self._stream is not None:
            try:
                self._stream.flush()
            except OSError as exc:
                self.error = exc.strerror or str(exc)


class _HeldNotes:
    """Standard error that holds the ``rageval-min: note: ...`` lines written while the command
    runs (a judge cache that lost its last line, ...): written when the command ends, or, when it
    ends with an input error, folded into that one error line."""

    PREFIX = "rageval-min: note: "

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.notes: List[str] = []

    def write(self, text: str) -> int:
        if text.startswith(self.PREFIX) and text.endswith("\n") and text.count("\n") == 1:
            self.notes.append(text)
            return len(text)
        return self._stream.write(text)

    def flush(self) -> None:
        self._stream.flush()

    def release(self) -> None:
        """Write the held notes (the command ran to its end)."""
        notes, self.notes = self.notes, []
        for note in notes:
            self._stream.write(note)

    def error_line(self, message: str) -> str:
        """The one line of an input error, with the held notes (dropped from the stream) after it."""
        held = "; ".join(n[len(self.PREFIX) :].rstrip("\n") for n in self.notes)
        self.notes = []
        return f"rageval-min: error: {one_line(message)}" + (f" (note: {held})" if held else "") + "\n"


# patterns, compiled (by re's cache) only when a message needs them: not at start-up
_LONG_DIGITS = r"[0-9]{41,}"
_LONG_WORD = r"[^\s/]{201,}"


def _digits(match: "re.Match[str]") -> str:
    run = match.group()
    return f"{run[:8]}...{run[-4:]} ({len(run)} digits)"


def _word(match: "re.Match[str]") -> str:
    run = match.group()
    return f"{run[:80]}...{run[-20:]} ({len(run)} characters)"


def one_line(message: str) -> str:
    """``message`` as one printable line of bounded length: control characters (and other
    unprintable ones, lone surrogates included) escaped, a number of more than 40 digits described
    by its ends and length, any other run of more than 200 characters (no space, no ``/``) by its
    ends and length.  A message without such parts is returned unchanged.

    >>> one_line("bad: " + "9" * 5000)
    'bad: 99999999...9999 (5000 digits)'
    >>> one_line("name 'a\\x1b[2J\\nb'")
    "name 'a\\\\x1b[2J\\\\x0ab'"
    >>> one_line("gold.jsonl:3: k: must be an integer, got '12'")
    "gold.jsonl:3: k: must be an integer, got '12'"
    """
    from ._cli_common import printable

    return re.sub(_LONG_WORD, _word, re.sub(_LONG_DIGITS, _digits, printable(message)))


def _started(collect: bool) -> None:
    """End of the console script's start-up (see :func:`main_entry`): its objects (modules,
    classes, the parser) live as long as the process, so they are frozen out of every later
    collection (``gc.freeze``) and the collector, off until now, is turned back on."""
    if collect and not gc.isenabled():
        gc.freeze()
        gc.enable()


def _run(words: Sequence[str], io: CliIO) -> int:
    parser = build_parser(_command_of(words), words)
    args = parser.parse_args(words)
    _started(_COLLECT.get())
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return EXIT_USAGE
    from ._output import commit_together

    with commit_together() as outputs:  # every output file of the run appears at its end, or none does
        if hasattr(args, "jobs"):  # a scoring command: its engine and partial-state sink
            from ._cli_common import execution

            with execution(args):
                code = int(func(args, io))
        else:
            code = int(func(args, io))
        io.stdout.flush()
        if code == EXIT_OK and getattr(io.stdout, "error", None):  # exit 2 after all: no output file
            outputs.discard()
        return code


def _after_stdout_error(code: int, error: str, io: CliIO) -> int:
    """The exit code once standard output failed: a failed gate stays 1; a success becomes 2."""
    if code != EXIT_OK:  # the command's own outcome (its lines already written) stands
        return code
    io.stderr.write(f"rageval-min: error: cannot write to standard output: {error}\n")
    return EXIT_USAGE


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    stdout: Optional[TextIO] = None,
    stderr: Optional[TextIO] = None,
) -> int:
    """Run the CLI and return its exit code (see the module docstring)."""
    out = _GuardedStdout(stdout if stdout is not None else sys.stdout)
    err = _HeldNotes(stderr or sys.stderr)
    io = CliIO(out, err)  # type: ignore[arg-type]
    token = _IO.set(io)
    try:
        code = _run(list(sys.argv[1:] if argv is None else argv), io)
        err.release()
        out.flush()  # a full stdout shows now, while the exit code can still say so
        return code if out.error is None else _after_stdout_error(code, out.error, io)
    except _Exit as exc:
        err.release()
        return exc.status if out.error is None else _after_stdout_error(exc.status, out.error, io)
    except ScoringError as exc:
        err.write(err.error_line(str(exc)))
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.release()
        io.stderr.write("rageval-min: interrupted\n")
        return EXIT_INTERRUPTED
    except _Signalled as exc:
        err.release()
        io.stderr.write(f"rageval-min: terminated by signal {exc.signum}\n")
        return 128 + exc.signum
    except Exception as exc:  # a bug in rageval-min: one line, distinct code
        err.release()
        if os.environ.get("RAGEVAL_MIN_TRACEBACK"):
            import traceback

            traceback.print_exc(file=io.stderr)
        io.stderr.write(
            f"rageval-min: internal error: {type(exc).__name__}: {exc} "
            "(this is a bug; set RAGEVAL_MIN_TRACEBACK=1 for details)\n"
        )
        return EXIT_INTERNAL
    finally:
        _IO.reset(token)
        forget_parsed()  # records the input check kept and no reader took (see _io.remember_parsed)


def main_entry(collect: Optional[bool] = None) -> None:
    """Console-script entry point: ``sys.exit(main())``, with SIGTERM/SIGHUP handled.

    The garbage collector is off while the command starts (``python -m rageval_min`` turns it
    off before importing this module) and back on when it runs: start-up makes only objects
    that live as long as the process, which collecting would walk again and again.
    ``collect`` says whether it was on before (``None``: look now).
    """
    if collect is None:
        collect = gc.isenabled()
    gc.disable()
    _COLLECT.set(collect)
    install_signal_handlers()
    code = main()
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError:  # already reported by main(); keep the interpreter's exit from printing it again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(code)
