"""``rageval-min ir``: retrieval quality as trec_eval computes it (the command; the work is in the package)."""

import argparse
from typing import Any

from .. import ir
from .._cli_common import CliIO, add_report_options, emit_report, item_sink, prepare, report_targets
from .._numbers import option_int
from . import formats

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ir",
        help="nDCG, AP, RR, P/R@k, success, R-prec, bpref exactly as trec_eval / pytrec_eval compute them",
        description="Score a run against relevance judgments exactly as NIST trec_eval does (9.0.8, the code "
        "pytrec_eval embeds, by default). Inputs: TREC run/qrels, BEIR/MTEB qrels TSV, {qid: {doc: score}} JSON, "
        "JSON Lines with ranked id lists (RAGAS, grounding traces, MT-RAG contexts). Exit 1 when a --gate fails.",
    )
    p.add_argument("--run", required=True, metavar="RUN", help="the ranked results (trec, json or jsonl)")
    p.add_argument(
        "--qrels",
        metavar="QRELS",
        help="the judgments (trec, tsv, json or jsonl); optional when the JSON Lines run has reference_context_ids",
    )
    p.add_argument(
        "--measure",
        action="append",
        default=[],
        metavar="NAME",
        help="repeatable: P@k R@k AP AP@k nDCG nDCG@k RR Success@k Rprec Bpref NumRel NumRet NumRelRet, or "
        f"trec_eval names (map, ndcg_cut.10, P.5,10, recip_rank...); default: {' '.join(ir.DEFAULT_MEASURES)}",
    )
    p.add_argument(
        "--relevance-level",
        type=option_int(plain=True),
        default=1,
        metavar="L",
        help="grades >= L are relevant (trec_eval -l; default 1)",
    )
    p.add_argument(
        "--trec-eval",
        choices=ir.VERSIONS,
        default="9.0.8",
        help="9.0.8 (default; compares scores in single precision, as pytrec_eval) or 10.0 (double precision)",
    )
    p.add_argument(
        "--missing",
        choices=ir.MISSING,
        default="skip",
        help="a qrels topic absent from the run: skip (default; 9.0.8 and pytrec_eval) or zero (trec_eval -c, "
        "ir_measures)",
    )
    p.add_argument(
        "--duplicates",
        choices=formats.DUPLICATES,
        default="error",
        help="a document twice in one topic: error (exit 2, as trec_eval refuses it) or first (keep the first)",
    )
    p.add_argument("--run-format", choices=ir.RUN_FORMATS, default="auto", help="default: by extension, then content")
    p.add_argument(
        "--qrels-format", choices=ir.QRELS_FORMATS, default="auto", help="default: by extension, then content"
    )
    add_report_options(p, extra_formats=("trec_eval",), per_item=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, io: CliIO) -> int:
    measures = args.measure or list(ir.DEFAULT_MEASURES)
    prepare(args, inputs=[args.run, args.qrels], metric_names=ir.IrAccumulator.metric_names(measures=measures))
    topics = any(t.fmt in ("trec_eval", "html") for t in report_targets(args))  # per-topic values in the report
    with item_sink(args.per_item) as on_item:
        report = ir.score_file(
            args.run,
            args.qrels,
            measures=measures,
            relevance_level=args.relevance_level,
            trec_eval=args.trec_eval,
            missing=args.missing,
            duplicates=args.duplicates,
            run_format=args.run_format,
            qrels_format=args.qrels_format,
            topics=topics,
            on_item=on_item,
        )
    return emit_report(report, args, io, formatters=ir.REPORT_FORMATS)
