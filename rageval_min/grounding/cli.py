"""``rageval-min grounding``: the WFGY grounding gate."""

import argparse
from typing import Any

from .. import grounding
from .._cli_common import (
    CliIO,
    add_report_options,
    apply_gate_rule,
    emit_report,
    item_sink,
    prepare,
    selected_variants,
)
from .._numbers import option_int


def register(sub: Any) -> None:
    p = sub.add_parser(
        "grounding",
        help="answered precision, citation hit rate, under/over-refusal, recall@k (WFGY score_eval)",
        description="Score a RAG trace against gold answers exactly as WFGY's score_eval does. "
        "Which gates decide the exit code: with --gate, exactly those; without --gate, the reference's "
        f"own gates (--gates, default {grounding.DEFAULT_GATES}). The reference's gates also decide when "
        "--gates is given explicitly or under --format wfgy. Exit 1 when a deciding gate fails.",
    )
    p.add_argument("--gold", required=True, metavar="GOLD.jsonl", help="gold records (qid, answerable, ...)")
    p.add_argument(
        "--trace", required=True, metavar="TRACE.jsonl", help="trace records (qid, retrieved_ids, answer_json)"
    )
    p.add_argument("--k", type=option_int(plain=True), default=5, help="cut-off for recall@k (default: 5)")
    p.add_argument(
        "--gates",
        default=None,
        help=f"the reference's gates, NAME=VALUE,... (default: {grounding.DEFAULT_GATES}); "
        "they decide pass when no --gate is given, or when --gates is given explicitly",
    )
    add_report_options(p, extra_formats=("wfgy",), variants=grounding.VARIANTS, per_item=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=[args.gold, args.trace], metric_names=grounding.GroundingAccumulator.metric_names())
    gates = args.gates if args.gates is not None else grounding.DEFAULT_GATES
    grounding.parse_reference_gates(gates)
    with item_sink(args.per_item) as on_item:
        report = grounding.score_file(
            args.gold, args.trace, k=args.k, gates=gates, variants=selected_variants(args), on_item=on_item
        )
    report = apply_gate_rule(report, args, reference_format="wfgy", explicit=args.gates is not None)
    return emit_report(report, args, io, formatters=grounding.REPORT_FORMATS)
