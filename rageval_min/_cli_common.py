"""Options and output handling shared by every family's subcommands."""

import argparse
import contextvars
import os
from contextlib import contextmanager
from typing import Any, Callable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, TextIO

from ._contract import ItemRow, item_row_json
from ._io import atomic_writer, open_output
from ._report import FORMATS, Formatter, Report, overall_pass, render
from .errors import ScoringError
from .gates import Gate, GateOutcome, check_gate_names, evaluate_gates, parse_gate

__all__ = [
    "CliIO",
    "add_per_item_option",
    "add_report_options",
    "emit_report",
    "gold_samples_dir",
    "item_sink",
    "selected_variants",
]


class CliIO(NamedTuple):
    """The writers a command prints to (injected, so tests can capture them)."""

    stdout: TextIO
    stderr: TextIO


def add_report_options(
    parser: argparse.ArgumentParser,
    *,
    extra_formats: Sequence[str] = (),
    variants: Sequence[str] = (),
    default_format: str = "json",
    per_item: bool = False,
) -> None:
    """Add ``--format``, ``--output``, ``--gate``, ``--per-item`` (scoring commands) and ``--variant``."""
    group = parser.add_argument_group("output and gates")
    group.add_argument(
        "--format",
        choices=list(FORMATS) + list(extra_formats),
        default=default_format,
        help=f"output format (default: {default_format})",
    )
    group.add_argument(
        "--output",
        metavar="PATH",
        help="write the output to PATH atomically instead of stdout",
    )
    group.add_argument(
        "--gate",
        action="append",
        default=[],
        metavar='"NAME OP VALUE"',
        help="fail (exit 1) unless the metric NAME satisfies OP VALUE; OP is one of >= <= > < ==; repeatable",
    )
    if per_item:
        add_per_item_option(group)
    if variants:
        group.add_argument(
            "--variant",
            action="append",
            default=[],
            choices=list(variants),
            metavar="NAME",
            help="opt-in variant (changes numbers; recorded in the signature); repeatable; one of: "
            + ", ".join(variants),
        )


def add_per_item_option(group: Any) -> None:
    """Add ``--per-item PATH`` (the item rows of the contract, JSONL in input order)."""
    group.add_argument(
        "--per-item",
        metavar="PATH",
        help="also write one item row per input record (JSON Lines, input order) to PATH",
    )


@contextmanager
def item_sink(path: Optional[str]) -> Iterator[Optional[Callable[[ItemRow], None]]]:
    """An ``on_item`` callback writing item rows to ``path`` atomically (None: no callback).

    The file appears only when the block ends normally, so a failed run leaves
    no partial item file.
    """
    if not path:
        yield None
        return
    with atomic_writer(path) as fh:
        write = fh.write

        def on_item(row: ItemRow) -> None:
            write(item_row_json(row))

        yield on_item


def selected_variants(args: argparse.Namespace) -> Sequence[str]:
    """The sorted, de-duplicated ``--variant`` names."""
    return sorted(set(getattr(args, "variant", None) or []))


def parse_gates(args: argparse.Namespace) -> List[Gate]:
    return [parse_gate(g) for g in getattr(args, "gate", None) or []]


def emit_report(
    report: Report,
    args: argparse.Namespace,
    io: CliIO,
    formatters: Optional[Mapping[str, Formatter]] = None,
) -> int:
    """Evaluate ``--gate``s, render ``report`` in ``--format``, write it; return the exit code.

    The exit code is 0 when the family's own gates (if any) and every
    ``--gate`` pass, 1 otherwise.
    """
    gates = parse_gates(args)
    check_gate_names(gates, report.metrics)
    outcomes: Sequence[GateOutcome] = evaluate_gates(gates, report.metrics)
    text = render(report, args.format, outcomes, formatters)
    with open_output(args.output, io.stdout) as fh:
        fh.write(text)
    return 0 if overall_pass(report, outcomes) else 1


#: Set by ``rageval-min demo --samples DIR``.
SAMPLES_OVERRIDE: "contextvars.ContextVar[Optional[str]]" = contextvars.ContextVar("rageval_min_samples", default=None)


def gold_samples_dir(family: str) -> str:
    """The ``gold_samples/<family>`` folder used by ``demo``.

    Looked up in ``demo --samples DIR``, then next to the package (a source
    checkout), then in the current directory.
    """
    override = SAMPLES_OVERRIDE.get()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates = [override] if override else [os.path.join(here, "gold_samples"), "gold_samples"]
    for base in candidates:
        path = os.path.join(base, family)
        if os.path.isdir(path):
            return path
    raise ScoringError(
        f"cannot find gold_samples/{family} (looked in {', '.join(candidates)}); "
        "run from a source checkout or pass demo --samples DIR"
    )
