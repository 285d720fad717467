"""``rageval-min merge``: one report from the partial states of shards (``--emit-partial``)."""

import argparse
from typing import Any, Dict, List

from . import registry
from ._cli_common import CliIO, add_report_options, apply_gate_rule, emit_report, prepare
from ._contract import Accumulator, accumulator_from_state, state_digest
from ._io import read_json
from .errors import ScoringError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "merge",
        help="merge the partial states of shards (--emit-partial) into the report of one pass",
        description="Each scoring command can write its accumulator's state with --emit-partial PATH. "
        "merge reads those states, in the order given (the order of the shards in the input), and "
        "writes the report one pass over the concatenated shards gives, byte for byte.",
    )
    p.add_argument("partials", nargs="+", metavar="PARTIAL.json", help="partial states, in shard order")
    add_report_options(
        p,
        extra_formats=registry.family_formats(),
        per_item=False,
    )
    p.set_defaults(func=run)


def merge_files(paths: List[str]) -> Accumulator:
    """The accumulator of the states in ``paths`` merged in order (all of one family, command and options)."""
    merged: Any = None
    seen: Dict[str, str] = {}
    for path in paths:
        try:
            state = read_json(path, what="partial state")
            acc = accumulator_from_state(state)
            digest = state_digest(state)
        except ScoringError as exc:
            raise ScoringError(exc.msg, path=path, line=exc.line, field=exc.field) from None
        if digest in seen:
            raise ScoringError(
                f"the same shard as {seen[digest]}: merging it twice would count its items twice", path=path
            )
        seen[digest] = path
        try:
            merged = acc if merged is None else merged.merge(acc)
        except ScoringError as exc:  # options or family differ: name the state that does not fit
            if exc.path is not None:
                raise
            before = ", ".join(p for p in seen.values() if p != path)
            raise ScoringError(f"{exc.msg} (merging it into {before})", path=path) from None
    return merged


def run(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=args.partials)
    acc = merge_files(args.partials)
    try:
        report = acc.finalize()
    except ScoringError as exc:  # a problem of the merged data: name the states it came from
        if exc.path is not None:
            raise
        raise ScoringError(exc.msg, path=", ".join(args.partials), field=exc.field) from None
    family = registry.package_module(acc.FAMILY)
    formatters = getattr(family, "REPORT_FORMATS", {})
    for target_fmt in {t for t in [args.format] + [o.split(":", 1)[0] for o in args.output]}:
        if target_fmt in registry.family_formats() and target_fmt not in formatters:
            raise ScoringError(f"--format {target_fmt} is not a format of a {acc.FAMILY} report")
    report = apply_gate_rule(report, args, reference_format=next(iter(formatters), ""))
    return emit_report(report, args, io, formatters=formatters, stdout_suffix=getattr(family, "STDOUT_SUFFIX", None))
