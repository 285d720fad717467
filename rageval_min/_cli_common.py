"""Options and output handling shared by every family's subcommands."""

from __future__ import annotations

import argparse
import contextvars
import os
from contextlib import contextmanager

from ._contract import ItemRow, NonFiniteState, item_row_json, provenance
from ._output import atomic_writer, open_output
from .errors import ScoringError
from .gates import BOUNDS, Gate, GateOutcome, check_gate_names, evaluate_gates, parse_gate
from .report import FORMATS, Report, overall_pass, render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, TextIO

    from .report import Formatter
else:
    from ._namedtuple import NamedTuple

__all__ = [
    "add_variant_option",
    "bounds_of",
    "printable",
    "CliIO",
    "add_per_item_option",
    "add_records_option",
    "add_report_options",
    "apply_gate_rule",
    "check_paths",
    "emit_report",
    "execution",
    "format_value",
    "item_sink",
    "prepare",
    "report_gates",
    "report_targets",
    "selected_variants",
    "stream_output_path",
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
    """Add ``--format``, ``--output``, ``--gate``, ``--variant`` and, for scoring commands
    (``per_item=True``), ``--per-item``, ``--jobs``, ``--emit-partial``, ``--engine``,
    ``--scheduler`` and ``--intervals``.

    ``--output [FORMAT:]PATH`` is repeatable, so one run can write JSON,
    Markdown and JUnit without scoring twice; ``-`` is stdout.
    """
    formats = list(FORMATS) + list(extra_formats)
    group = parser.add_argument_group("output and gates")
    group.add_argument(
        "--format",
        choices=formats,
        default=default_format,
        help=f"output format (default: {default_format})",
    )
    group.add_argument(
        "--output",
        action="append",
        default=[],
        metavar="[FORMAT:]PATH",
        help="write the report to PATH atomically instead of stdout, in FORMAT (default: --format); "
        "repeatable, e.g. --output json:r.json --output junit:r.xml",
    )
    group.set_defaults(_formats=formats)
    group.add_argument(
        "--gate",
        action="append",
        default=[],
        metavar='"NAME OP VALUE"',
        help="fail (exit 1) unless the metric NAME satisfies OP VALUE; OP is one of >= <= > < ==; repeatable",
    )
    group.add_argument(
        "--strict",
        action="store_true",
        help="an input field that is missing, of another type or misspelled is an error (exit 2), not a diagnostic",
    )
    if per_item:
        add_per_item_option(group)
    if variants:
        add_variant_option(group, variants)


def add_variant_option(parser: Any, variants: Sequence[str], *, help: Optional[str] = None) -> None:
    """Add ``--variant NAME`` (repeatable, one of ``variants``; :func:`selected_variants` reads it)."""
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        choices=list(variants),
        metavar="NAME",
        help=help
        or "opt-in variant (changes numbers; recorded in the signature); repeatable; one of: " + ", ".join(variants),
    )


def add_records_option(parser: Any, *, what: str, required: bool = True) -> None:
    """Add ``--records PATH``: the data file a step writes beside its report (``what`` it holds)."""
    parser.add_argument(
        "--records",
        required=required,
        metavar="PATH",
        help=f"write {what} to PATH (JSON Lines, atomically)",
    )


def add_per_item_option(group: Any) -> None:
    """Add ``--per-item PATH`` (the item rows of the contract, JSONL in input order) and ``--intervals``."""
    group.add_argument(
        "--per-item",
        metavar="PATH",
        help="also write one item row per input record (JSON Lines, input order) to PATH",
    )
    group.add_argument(
        "--jobs",
        default="1",
        metavar="N|auto",
        help="score records in N worker processes (auto: one per CPU); the output is identical for every N",
    )
    group.add_argument(
        "--emit-partial",
        metavar="PATH",
        help="also write the accumulator's state (JSON) to PATH, for `rageval-min merge` of shards",
    )
    group.add_argument(
        "--engine",
        choices=("local", "dask"),
        default="local",
        help="local (this machine, --jobs) or dask (the dask extra; --scheduler ADDRESS, else a LocalCluster)",
    )
    group.add_argument("--scheduler", metavar="ADDRESS", help="the Dask scheduler of --engine dask")
    group.add_argument(
        "--intervals",
        action="store_true",
        help="add 95%% confidence intervals beside the result: Wilson for rates that are count ratios, "
        "bootstrap for means (keeps the item rows in memory)",
    )


#: The item rows of the running command, kept when ``--intervals`` asks for them (set by prepare()).
_COLLECTED: "contextvars.ContextVar[Optional[List[ItemRow]]]" = contextvars.ContextVar(
    "rageval_min_item_rows", default=None
)


@contextmanager
def item_sink(path: Optional[str]) -> Iterator[Optional[Callable[[ItemRow], None]]]:
    """An ``on_item`` callback writing item rows to ``path`` atomically (None: no callback).

    The file appears only when the block ends normally, so a failed run leaves
    no partial item file.  Each row written ends with the field
    ``_rageval_min``: the family, command and parameter digest of the
    accumulator that made it, which ``compare`` reads to know the metrics'
    directions and to refuse files of different commands or parameters.
    """
    rows = _COLLECTED.get()
    if not path:
        yield rows.append if rows is not None else None
        return
    with atomic_writer(path) as fh:
        write = fh.write
        writer: List[Optional[str]] = []

        def on_item(row: ItemRow) -> None:
            if not writer:  # decided once, at the first row: the command's accumulator exists by then
                writer.append(provenance())
            write(item_row_json(row, writer[0]))
            if rows is not None:
                rows.append(row)

        yield on_item


def selected_variants(args: argparse.Namespace) -> Sequence[str]:
    """The sorted, de-duplicated ``--variant`` names."""
    return sorted(set(getattr(args, "variant", None) or []))


def parse_gates(args: argparse.Namespace) -> List[Gate]:
    return [parse_gate(g) for g in getattr(args, "gate", None) or []]


class Target(NamedTuple):
    """One report destination: a format and a path (``None`` is stdout)."""

    fmt: str
    path: Optional[str]


def report_targets(args: argparse.Namespace) -> List[Target]:
    """The ``--output [FORMAT:]PATH`` destinations (stdout in ``--format`` when none is given)."""
    formats = getattr(args, "_formats", None) or list(FORMATS)
    values = getattr(args, "output", None)
    if values is None or values == []:
        return [Target(args.format, None)]
    if isinstance(values, str):  # a Namespace built by code, not by add_report_options
        values = [values]
    out: List[Target] = []
    for value in values:
        fmt, sep, rest = value.partition(":")
        if sep and fmt in formats and rest:
            out.append(Target(fmt, None if rest == "-" else rest))
        elif sep and rest and len(fmt) > 1 and fmt.replace("_", "").replace("-", "").isalnum():
            raise ScoringError(_unknown_format(fmt, value, formats))
        else:
            out.append(Target(args.format, None if value == "-" else value))
    if sum(1 for t in out if t.path is None) > 1:
        raise ScoringError("--output: only one report can go to stdout")
    return out


def _unknown_format(fmt: str, value: str, formats: Sequence[str]) -> str:
    """The message for ``--output WORD:PATH`` whose WORD is no format (a typo writes no file)."""
    import difflib

    near = difflib.get_close_matches(fmt, formats, n=1)
    hint = f"did you mean {near[0]}:? " if near else ""
    return (
        f"--output {value}: {fmt!r} is not a format ({hint}formats: {', '.join(formats)}); "
        f"a path that contains a colon is written ./{value}"
    )


def stream_output_path(args: argparse.Namespace) -> Optional[str]:
    """The one ``--output PATH`` of a command whose output is a data stream, not a report (None: stdout)."""
    targets = report_targets(args)
    if len(targets) != 1 or targets[0].fmt != args.format:
        raise ScoringError("--output: this output is a data stream; give one PATH without FORMAT:")
    return targets[0].path


#: Options that name files a command writes (checked against its inputs and each other).
OUTPUT_OPTIONS = ("per_item", "records", "emit_partial")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def check_paths(args: argparse.Namespace, inputs: Sequence[Optional[str]] = ()) -> None:
    """Refuse (exit 2) an output that names an input, the judge cache, or another output,
    or whose directory does not exist.

    Compared with :func:`os.path.samefile`, so links and relative paths are
    caught; nothing has been written (and no judge call made) when this raises.
    """
    outputs = [(f"--output {t.path}", t.path) for t in report_targets(args) if t.path]
    for name in OUTPUT_OPTIONS:
        value = getattr(args, name, None)
        if value and value != "-":
            outputs.append((f"--{name.replace('_', '-')} {value}", value))
    protected = [(f"input {p}", p) for p in inputs if p and p != "-"]
    cache = getattr(args, "judge_cache", None)
    if cache:
        protected.append((f"the judge cache {cache}", cache))
    for i, (label, path) in enumerate(outputs):
        if not os.path.isdir(os.path.dirname(os.path.realpath(path))):
            raise ScoringError("cannot write: the directory does not exist", path=path)
        for other, opath in protected + outputs[:i]:
            if _same_file(path, opath):
                raise ScoringError(f"{label} names the same file as {other}; refusing to overwrite it")


def prepare(
    args: argparse.Namespace,
    *,
    inputs: Sequence[Optional[str]] = (),
    metric_names: Optional[Sequence[str]] = None,
) -> List[Gate]:
    """Check the options before any work: gate syntax, gate names (when known), output paths.

    ``metric_names`` are the gateable names the command will produce; pass
    None when they depend on the data (then the names are checked as soon as
    they are known, and always before any judge call or output).
    """
    gates = parse_gates(args)
    if metric_names is not None:
        check_gate_names(gates, metric_names)
    report_targets(args)
    check_paths(args, inputs)
    wanted = getattr(args, "intervals", False) or any(g.name.endswith(BOUNDS) for g in gates)
    _COLLECTED.set([] if wanted else None)
    _SCHEMA_NOTES.set(_input_diagnostics(args))
    return gates


#: The running command's input diagnostics (see :mod:`rageval_min._schema`), added to its report.
_SCHEMA_NOTES: "contextvars.ContextVar[List[str]]" = contextvars.ContextVar("rageval_min_schema_notes", default=[])


def _input_diagnostics(args: argparse.Namespace) -> List[str]:
    """What the running command's input files hold against the fields its accumulator declares."""
    from ._schema import check_inputs

    cls = _accumulator_of(args)
    if cls is None:  # not a scoring command
        return []
    return check_inputs(cls.INPUTS, _input_paths(args), strict=bool(getattr(args, "strict", False)))


def _accumulator_of(args: argparse.Namespace) -> Any:
    """The running scoring command's accumulator class (None for other commands)."""
    from ._contract import accumulator_class

    family = getattr(args, "command", None)
    try:
        return accumulator_class(str(family), getattr(args, f"{family}_command", None) or "score")
    except ScoringError:
        return None


def _input_paths(args: argparse.Namespace) -> Dict[str, str]:
    """``{option: path}`` of the input files the running command declares and was given."""
    cls = _accumulator_of(args)
    if cls is None:
        return {}
    paths = {i.option: getattr(args, i.option.lstrip("-").replace("-", "_"), None) for i in cls.INPUTS}
    return {k: v for k, v in paths.items() if isinstance(v, str)}


def bounds_of(intervals: Mapping[str, Mapping[str, Any]]) -> Dict[str, Any]:
    """The gateable ``NAME.ci_low`` / ``NAME.ci_high`` values of ``--intervals``' intervals."""
    out: Dict[str, Any] = {}
    for name, iv in intervals.items():
        out[name + ".ci_low"], out[name + ".ci_high"] = iv.get("low"), iv.get("high")
    return out


def emit_report(
    report: Report,
    args: argparse.Namespace,
    io: CliIO,
    formatters: Optional[Mapping[str, Formatter]] = None,
    *,
    stdout_suffix: Optional[Mapping[str, str]] = None,
    undefined: str = "undefined",
) -> int:
    """Evaluate ``--gate``s, render ``report`` to every ``--output`` target; return the exit code.

    The exit code is 0 when the family's own gates (if any) and every
    ``--gate`` pass, 1 otherwise; each failed gate is named on stderr in one
    line.  ``stdout_suffix`` is text added after a format written to stdout
    (a reference whose file output lacks a final newline); ``undefined`` is
    what that line says of a gate whose value is undefined.
    """
    gates = parse_gates(args)
    intervals = report.intervals
    rows = _COLLECTED.get()
    if rows is not None and intervals is None:  # --intervals, or a gate on an interval bound
        from ._intervals import compute_intervals

        intervals = compute_intervals(report.family, report.metrics, rows)
    if getattr(args, "intervals", False):
        report = report._replace(intervals=intervals)
    metrics = dict(report.metrics, **bounds_of(intervals or {}))
    check_gate_names(gates, metrics)
    outcomes: Sequence[GateOutcome] = evaluate_gates(gates, metrics)
    notes = _SCHEMA_NOTES.get()
    if notes:
        report = report._replace(diagnostics=list(report.diagnostics) + notes)
    for target in report_targets(args):
        text = render(report, target.fmt, outcomes, formatters)
        if target.path is None and stdout_suffix:
            text += stdout_suffix.get(target.fmt, "")
        with open_output(target.path, io.stdout) as fh:
            fh.write(text)
    return report_gates(report, outcomes, io, undefined=undefined)


def report_gates(report: Report, outcomes: Sequence[GateOutcome], io: CliIO, *, undefined: str = "undefined") -> int:
    """Name each failed gate (the family's and the user's) in one stderr line; return the exit code."""
    for o in list(report.family_gates) + list(outcomes):
        if o.passed is False:
            value = undefined if o.value is None else format_value(o.value)
            io.stderr.write(f"gate {printable(o.text)} failed: {value}\n")
    if report.reference_pass is False and not any(o.passed is False for o in report.family_gates):
        io.stderr.write("gate reference failed\n")
    return 0 if overall_pass(report, outcomes) else 1


def printable(text: str) -> str:
    """``text`` for a terminal line: control characters (which could move the cursor or
    end the line) are written as ``\\xNN`` escapes.

    >>> printable("model\\x1b[2J\\nnext")
    'model\\\\x1b[2J\\\\x0anext'
    """
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" if ord(c) < 0x100 else repr(c)[1:-1] for c in text
    )


def format_value(value: Any) -> str:
    """A gate value for a one-line message (4 significant decimals for floats).

    >>> format_value(2 / 3), format_value(None), format_value(3), format_value(5.0535e-10)
    ('0.6667', 'undefined', '3', '5.054e-10')
    """
    if value is None:
        return "undefined"
    if isinstance(value, float):
        if value != value or abs(value) >= 1e6:
            return repr(value)
        if value != 0 and abs(value) < 0.001:
            return f"{value:.4g}"
        return f"{value:.4f}".rstrip("0").rstrip(".")
    return str(value)


@contextmanager
def execution(args: argparse.Namespace) -> Iterator[None]:
    """The engine (``--jobs``, ``--engine``) and the partial-state sink (``--emit-partial``) of a command."""
    from ._contract import emit_states_to, record_provenance
    from ._parallel import Engine, jobs_from_text, make_engine, use_engine

    engine: Engine
    if getattr(args, "engine", "local") == "dask":
        from ._extras import load_extra

        engine = load_extra("dask").DaskEngine(getattr(args, "scheduler", None))
    elif getattr(args, "scheduler", None):
        raise ScoringError("--scheduler goes with --engine dask")
    else:
        engine = make_engine(jobs_from_text(str(getattr(args, "jobs", "1") or "1")))
    path = getattr(args, "emit_partial", None)

    def sink(state: Any) -> None:
        import json

        with atomic_writer(path or "") as fh:
            fh.write(json.dumps(state, ensure_ascii=False, allow_nan=False) + "\n")

    try:
        with use_engine(engine), emit_states_to(sink if path else None), record_provenance():
            yield
    except NonFiniteState:
        inputs = ", ".join(_input_paths(args).values()) or None
        raise ScoringError(
            "a value read from it is NaN or infinity (an id, a label), which the partial state "
            "(--emit-partial, strict JSON) cannot hold",
            path=inputs,
        ) from None


def apply_gate_rule(
    report: Report, args: argparse.Namespace, *, reference_format: str = "", explicit: bool = False
) -> Report:
    """Who decides pass: with ``--gate``, exactly the user's gates; without, the reference's own rule.

    The reference's gates (``report.family_gates`` / ``reference_pass``) also
    decide when the user asked for them (``explicit``, e.g. grounding's
    ``--gates``) or under the reference's own output format.  The report says
    which rule applied.
    """
    if report.reference_pass is None and not report.family_gates:
        return report
    own = [g.text for g in report.family_gates] or ["the reference's pass rule"]
    wants_reference = explicit or any(t.fmt == reference_format for t in report_targets(args) if reference_format)
    if not getattr(args, "gate", None):
        note = f"pass is decided by the reference's gates ({', '.join(own)}); give --gate to decide with your own"
        return report._replace(diagnostics=list(report.diagnostics) + [note])
    if wants_reference:
        return report
    note = f"the reference's gates ({', '.join(own)}) were not applied: --gate decides"
    return report._replace(reference_pass=None, family_gates=(), diagnostics=list(report.diagnostics) + [note])
