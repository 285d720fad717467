"""``rageval-min judge agreement``: does the judge agree with human labels?

The computation is :mod:`rageval_min._judge_agreement`; calibration records are
:mod:`rageval_min._judge_calibration`.
"""

import argparse
import json
import math
import os
from typing import Any, List, Optional

from .._cli_common import CliIO, add_report_options, emit_report, parse_gates, prepare, report_targets
from .._numbers import option_float, option_int
from ..errors import ScoringError
from ..gates import evaluate_gates
from ..report import overall_pass
from . import agreement_report as ja
from . import calibration as jc
from .agreement import LEVELS, Label, normalize_label

__all__ = ["register_agreement", "run", "parse_labels"]


def _int_at_least(low: int) -> Any:
    return option_int(low, invalid="not an integer: {text}", outside=f"must be at least {low}")


def register_agreement(jsub: Any) -> None:
    """Add ``agreement`` to the ``judge`` subcommands."""
    p = jsub.add_parser(
        "agreement",
        help="agreement of a judge with human labels: kappa, Fleiss, Krippendorff's alpha, with intervals",
        description="Join the judge's labels (--judge) with human labels (--human: one label per id; or --ratings: "
        "a 'labels' list per id, null = missing) and report raw agreement, base rates, the confusion matrix, "
        "Cohen's kappa (unweighted, linear, quadratic), Fleiss' and Randolph's kappa and Krippendorff's alpha, "
        "each with a seeded bootstrap interval. Fewer than --min-n labelled items is a failed status (exit 1). "
        "--from reads a family's judged records directly.",
    )
    p.add_argument("--judge", required=True, metavar="JUDGED", help="the judge's labels, or a family's judged records")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--human", metavar="LABELS", help="human labels: records with an id and a label")
    who.add_argument("--ratings", metavar="RATINGS", help="several raters: records with an id and a 'labels' list")
    p.add_argument(
        "--from",
        dest="source",
        choices=ja.SOURCES,
        default="labels",
        help="what --judge holds: a labels file (default), rgb judge records (rgb-reject, rgb-fact), MT-RAG "
        "judged records (mtrag-idk: metrics.idk_eval) or pairwise judge records (pairwise: the choice letter)",
    )
    p.add_argument("--id-field", default="id", metavar="NAME", help="id field of the human file (default: id)")
    p.add_argument("--label-field", default="label", metavar="NAME", help="label field of --human (default: label)")
    p.add_argument(
        "--judge-id-field",
        metavar="NAME",
        help="id field of --judge (default: --id-field; id for rgb, task_id for mtrag-idk, cmp_index for pairwise)",
    )
    p.add_argument(
        "--judge-label-field",
        metavar="NAME",
        help="label field of --judge (default: --label-field; evaluation for rgb, judge for pairwise)",
    )
    p.add_argument("--level", choices=LEVELS, default="nominal", help="scale of the labels (default: nominal)")
    p.add_argument(
        "--labels",
        metavar="L1,L2,...",
        help="the label order (confusion matrix, weighted kappas, ordinal alpha); numbers are read as numbers",
    )
    p.add_argument("--min-n", type=_int_at_least(1), default=ja.DEFAULT_MIN_N, metavar="N", help="default 30")
    p.add_argument("--resamples", type=_int_at_least(1), default=ja.DEFAULT_RESAMPLES, metavar="N")
    p.add_argument(
        "--seed", type=option_int(plain=True), default=0, metavar="S", help="seed of the bootstrap (default 0)"
    )
    p.add_argument(
        "--alpha", type=option_float(plain=True), default=0.05, metavar="A", help="1 - interval level (default 0.05)"
    )
    g = p.add_argument_group("calibration record")
    g.add_argument("--emit-calibration", metavar="FILE", help="write the calibration record (JSON) to FILE")
    g.add_argument("--judge-spec", metavar="SPEC", help="the judge spec the labels came from (as given to --judge)")
    g.add_argument("--judge-model", metavar="NAME", help="the judge model")
    g.add_argument("--judge-template", metavar="FILE|builtin", help="the judge template (default: builtin)")
    add_report_options(p)
    p.set_defaults(func=run)


def parse_labels(text: Optional[str]) -> Optional[List[Label]]:
    """``--labels``: comma-separated; an item that reads as a JSON number or boolean is that number.

    >>> parse_labels("no,partial,yes"), parse_labels("0,0.5,1"), parse_labels(None)
    (['no', 'partial', 'yes'], [0, 0.5, 1], None)
    """
    if text is None:
        return None
    out: List[Label] = []
    for raw in text.split(","):
        item = raw.strip()
        try:
            value = json.loads(item)
        except ValueError:
            value = item
        if isinstance(value, bool) or (isinstance(value, (int, float)) and math.isfinite(value)):
            label = normalize_label(value)
        else:
            label = item
        if label is None or label in out:
            raise ScoringError(f"--labels: {item!r} is empty or repeated")
        out.append(label)
    return out


def _check_calibration_options(args: argparse.Namespace, inputs: List[str]) -> None:
    path = args.emit_calibration
    if path is None:
        return
    if args.judge_spec is None or args.judge_model is None:
        raise ScoringError("--emit-calibration needs --judge-spec and --judge-model")
    if not os.path.isdir(os.path.dirname(os.path.realpath(path))):
        raise ScoringError("cannot write: the directory does not exist", path=path)
    others = inputs + [t.path for t in report_targets(args) if t.path]
    if args.judge_template not in (None, "builtin"):
        others.append(args.judge_template)
    for other in others:
        if _same_file(path, other):
            raise ScoringError(f"--emit-calibration {path} names the same file as {other}; refusing to overwrite it")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def run(args: argparse.Namespace, io: CliIO) -> int:
    human = args.human if args.human is not None else args.ratings
    prepare(args, inputs=[args.judge, human], metric_names=ja.metric_names())
    _check_calibration_options(args, [args.judge, human])
    template = jc.template_hash(args.judge_template) if args.emit_calibration else None
    options = ja.Options(
        level=args.level,
        labels=parse_labels(args.labels),
        min_n=args.min_n,
        resamples=args.resamples,
        seed=args.seed,
        alpha=args.alpha,
        source=args.source,
    )
    report = ja.agreement_files(
        args.judge,
        human,
        options,
        several=args.ratings is not None,
        id_field=args.id_field,
        label_field=args.label_field,
        judge_id_field=args.judge_id_field,
        judge_label_field=args.judge_label_field,
    )
    if args.emit_calibration:
        outcomes = evaluate_gates(parse_gates(args), report.metrics)
        record = jc.calibration_record(
            spec=args.judge_spec,
            model=args.judge_model,
            template=template or "builtin",
            labels_sha256=ja.file_sha256(human),
            judged_sha256=ja.file_sha256(args.judge),
            signature=report.signature,
            result=report.result,
            metrics=report.metrics,
            outcomes=list(report.family_gates) + list(outcomes),
            passed=overall_pass(report, outcomes),
        )
        jc.write_calibration(args.emit_calibration, record)
    return emit_report(report, args, io)
