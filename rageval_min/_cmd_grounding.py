"""``rageval-min grounding``: the WFGY grounding gate."""

import argparse
from typing import Any

from . import grounding
from ._cli_common import CliIO, add_report_options, emit_report, item_sink, selected_variants
from ._report import Report


def register(sub: Any) -> None:
    p = sub.add_parser(
        "grounding",
        help="answered precision, citation hit rate, under/over-refusal, recall@k (WFGY score_eval)",
        description="Score a RAG trace against gold answers exactly as WFGY's score_eval does. "
        "The reference's --gates decide 'pass'; exit code 1 when pass is false or a --gate fails.",
    )
    p.add_argument("--gold", required=True, metavar="GOLD.jsonl", help="gold records (qid, answerable, ...)")
    p.add_argument(
        "--trace", required=True, metavar="TRACE.jsonl", help="trace records (qid, retrieved_ids, answer_json)"
    )
    p.add_argument("--k", type=int, default=5, help="cut-off for recall@k (default: 5)")
    p.add_argument(
        "--gates",
        default=grounding.DEFAULT_GATES,
        help=f"the reference's gates, NAME=VALUE,... (default: {grounding.DEFAULT_GATES})",
    )
    add_report_options(p, extra_formats=("wfgy",), variants=grounding.VARIANTS, per_item=True)
    p.set_defaults(func=run)


def _wfgy(report: Report, outcomes: Any) -> str:
    return grounding.format_wfgy(report.result)


def run(args: argparse.Namespace, io: CliIO) -> int:
    with item_sink(args.per_item) as on_item:
        report = grounding.score_file(
            args.gold, args.trace, k=args.k, gates=args.gates, variants=selected_variants(args), on_item=on_item
        )
    return emit_report(report, args, io, formatters={"wfgy": _wfgy})
