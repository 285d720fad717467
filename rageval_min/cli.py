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

Each command lives in ``_cmd_<name>.py`` with ``register(subparsers)``; only
the module of the command being run is imported.  Its gold-sample cases, which
``demo`` runs, are data in ``gold_samples/<name>/cases.json``.  Adding a family
means adding its name to :data:`_COMMANDS` and a line to ``_SUMMARIES``
(see ``docs/adding-a-family.md``).
"""

import argparse
import contextvars
import importlib
import os
import sys
from types import ModuleType
from typing import Any, List, NoReturn, Optional, Sequence, TextIO

from ._cli_common import CliIO
from ._version import __version__
from .errors import ScoringError

__all__ = ["main"]

#: Family command modules, in the order ``--help`` and ``demo`` show them.
_COMMANDS = ("grounding", "rgb", "pairwise", "factuality", "rouge", "mtrag", "judge", "compare", "merge")

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130

_IO: "contextvars.ContextVar[CliIO]" = contextvars.ContextVar("rageval_min_cli_io")


class _Signalled(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (so temporary files are removed), then exit 128 + signum."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_signalled(signum: int, frame: Any) -> None:
    raise _Signalled(signum)


def install_signal_handlers() -> None:
    """Turn SIGTERM and SIGHUP into an orderly exit (for the console script, not for embedding)."""
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
    """An ArgumentParser that prints to the injected writers and never exits."""

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
        raise ScoringError(f"{command + ': ' if command else ''}{message} (see --help)")


#: One line per command for the top-level --help, so that listing them imports no family.
_SUMMARIES = {
    "grounding": "answered precision, citation hit rate, under/over-refusal, recall@k (WFGY score_eval)",
    "rgb": "RGB: answer labels, the four robustness abilities, seeded document mixing, judged rates",
    "pairwise": "DevBench SubEval pairwise LLM-judge win rates (both orders, consistency)",
    "factuality": "SAFE / LongFact F1@K, FActScore, VeriScore, correlation with human labels",
    "rouge": "ROUGE exactly as Google's rouge-score computes it",
    "mtrag": "MT-RAG generation metrics: Recall, ROUGE-L, extractiveness, RB_agg, IDK conditioning",
    "judge": "ask an LLM judge (OpenAI-compatible server, openai:, cmd:, replay:) with cache and retries",
    "compare": "is the candidate worse than the baseline? paired per-item statistics as CI gates",
    "merge": "one report from the partial states of shards (--emit-partial), byte for byte",
}


def _command_modules(only: Optional[str] = None) -> List[ModuleType]:
    names = [only] if only in _COMMANDS else list(_COMMANDS)
    return [importlib.import_module(f"._cmd_{name}", __package__) for name in names]


def _command_of(argv: Sequence[str]) -> Optional[str]:
    """The subcommand named by ``argv`` (its first non-option word), if any."""
    for word in argv:
        if not word.startswith("-"):
            return word
        if word in ("-h", "--help", "--version"):
            return None
    return None


def _run_demo(args: argparse.Namespace, io: CliIO) -> int:
    """Run every family's gold-sample cases (``gold_samples/<family>/cases.json``) and report."""
    from . import _demo

    root = _demo.samples_root(args.samples)
    failed: List[str] = []
    io.stdout.write(f"rageval-min {__version__} demo: every family on its gold samples ({root})\n")
    for name in _COMMANDS:
        cases = _demo.load_cases(root, name)
        if not cases:  # a command with no gold samples of its own (merge)
            continue
        io.stdout.write(f"\n== {name} ==\n")
        for case in cases:
            res = _demo.run_case(root, name, case, main)
            io.stdout.write(f"{'ok  ' if res.ok else 'FAIL'}  {res.name}: {res.detail}\n")
            if res.shown:
                io.stdout.write(res.shown if res.shown.endswith("\n") else res.shown + "\n")
            if not res.ok:
                failed.append(f"{name}: {res.name}")
    if failed:
        io.stdout.write("\nFAILED: " + "; ".join(failed) + "\n")
        io.stderr.write(f"rageval-min: error: demo: {len(failed)} case(s) did not reproduce their expected output\n")
        return EXIT_USAGE if args.samples else EXIT_INTERNAL
    io.stdout.write("\nall families reproduce their expected outputs\n")
    return EXIT_OK


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The argument parser; with ``command``, only that family's module is imported (start-up cost)."""
    parser = _Parser(
        prog="rageval-min",
        description="Deterministic RAG/LLM evaluation metrics with reference parity. "
        "Exit codes: 0 gates pass, 1 a gate failed, 2 usage or input error, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"rageval-min {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="run every family on the bundled gold samples")
    demo.add_argument("--samples", metavar="DIR", help="the gold_samples folder (default: the checkout's)")
    demo.set_defaults(func=_run_demo)
    if command in _COMMANDS:
        for mod in _command_modules(command):
            mod.register(sub)
    else:  # no command, --help or a typo: list the commands without importing them
        for name in _COMMANDS:
            sub.add_parser(name, help=_SUMMARIES[name], add_help=False)
    return parser


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    stdout: Optional[TextIO] = None,
    stderr: Optional[TextIO] = None,
) -> int:
    """Run the CLI and return its exit code (see the module docstring)."""
    io = CliIO(stdout or sys.stdout, stderr or sys.stderr)
    token = _IO.set(io)
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        parser = build_parser(_command_of(words))
        args = parser.parse_args(words)
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            return EXIT_USAGE
        if hasattr(args, "jobs"):  # a scoring command: its engine and partial-state sink
            from ._cli_common import execution

            with execution(args):
                return int(func(args, io))
        return int(func(args, io))
    except _Exit as exc:
        return exc.status
    except ScoringError as exc:
        io.stderr.write(f"rageval-min: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        io.stderr.write("rageval-min: interrupted\n")
        return EXIT_INTERRUPTED
    except _Signalled as exc:
        io.stderr.write(f"rageval-min: terminated by signal {exc.signum}\n")
        return 128 + exc.signum
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug in rageval-min: one line, distinct code
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


def main_entry() -> None:
    """Console-script entry point: ``sys.exit(main())``, with SIGTERM/SIGHUP handled."""
    install_signal_handlers()
    sys.exit(main())
