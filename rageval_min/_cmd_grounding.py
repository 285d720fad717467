"""``rageval-min grounding``: the WFGY grounding gate."""

import argparse
import os
from typing import Any

from . import grounding
from ._cli_common import CliIO, add_report_options, emit_report, gold_samples_dir, selected_variants
from ._io import read_text
from ._report import Report, render_text
from .errors import ScoringError


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
    add_report_options(p, extra_formats=("wfgy",), variants=grounding.VARIANTS)
    p.set_defaults(func=run)


def compute(gold: str, trace: str, *, k: int, gates: str, variants: Any) -> Report:
    gates_dict = grounding.parse_reference_gates(gates)
    scores = grounding.score_files(gold, trace, k=k, variants=variants)
    passed, outcomes = grounding.evaluate_reference_gates(scores, gates_dict, variants=variants)
    return Report(
        family="grounding",
        signature=grounding.signature(k=k, variants=variants),
        result=grounding.reference_output(scores, gates_dict, passed),
        metrics=scores.metrics(),
        diagnostics=list(scores.diagnostics),
        reference_pass=passed,
        family_gates=outcomes,
    )


def _wfgy(report: Report, outcomes: Any) -> str:
    return grounding.format_wfgy(report.result)


def run(args: argparse.Namespace, io: CliIO) -> int:
    report = compute(args.gold, args.trace, k=args.k, gates=args.gates, variants=selected_variants(args))
    return emit_report(report, args, io, formatters={"wfgy": _wfgy})


def demo(io: CliIO) -> str:
    base = gold_samples_dir("grounding")
    report = compute(
        os.path.join(base, "gold.jsonl"),
        os.path.join(base, "trace.jsonl"),
        k=5,
        gates=grounding.DEFAULT_GATES,
        variants=(),
    )
    expected = read_text(os.path.join(base, "expected_wfgy.json"), what="gold sample")
    got = grounding.format_wfgy(report.result)
    if got != expected:
        raise ScoringError("output differs from expected_wfgy.json", path=base)
    return render_text(report, ()) + "(matches gold_samples/grounding/expected_wfgy.json)\n"
