"""``rageval-min compare``: is the candidate worse than the baseline, beyond noise?"""

import argparse
import json
from typing import Any, Dict, Sequence

from .. import compare
from .._cli_common import CliIO, add_report_options, emit_report, prepare
from .._numbers import option_float, option_int
from ..errors import ScoringError
from .render import format_markdown, format_text

_positive_int = option_int(1, invalid="not an integer: {text}", outside="must be at least 1")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="paired comparison of two item-row files (baseline vs candidate) with exact statistics",
        description="Pair the rows of two --per-item files by their key and compare every numeric field: means, "
        "delta with a paired bootstrap interval, McNemar (binary) or paired t / randomization (continuous) "
        "p-values. --fail-on-regression exits 1 when a metric moved in its worse direction with p < alpha.",
    )
    p.add_argument("--baseline", required=True, metavar="BASE.jsonl", help="item rows of the baseline (e.g. main)")
    p.add_argument("--candidate", required=True, metavar="CAND.jsonl", help="item rows of the candidate")
    p.add_argument(
        "--key",
        metavar="NAME",
        help="the id field that pairs rows (qid, id, task_id...); rows rageval-min wrote need none: "
        "their first field is the key",
    )
    p.add_argument("--metric", action="append", default=[], metavar="NAME", help="compare only NAME; repeatable")
    p.add_argument("--test", choices=compare.TESTS, default="auto", help="test for continuous metrics (default auto)")
    p.add_argument("--resamples", type=_positive_int, default=compare.DEFAULT_RESAMPLES, metavar="N")
    p.add_argument(
        "--interval",
        choices=compare.INTERVALS,
        default="auto",
        help=f"intervals of the deltas: the paired bootstrap, the t / delta-method interval, or auto (default): "
        f"the bootstrap below {compare.SWITCH_N} pairs, t / delta method from there (recorded in the signature)",
    )
    p.add_argument(
        "--seed", type=option_int(plain=True), default=0, metavar="S", help="seed of the resampling (default 0)"
    )
    p.add_argument(
        "--alpha", type=option_float(plain=True), default=0.05, metavar="A", help="significance level (default 0.05)"
    )
    p.add_argument(
        "--min-n",
        type=_positive_int,
        default=compare.DEFAULT_MIN_N,
        metavar="N",
        help="fewer paired rows make significance gates fail as insufficient data (default 10)",
    )
    p.add_argument(
        "--lower-is-better",
        action="append",
        default=[],
        metavar="NAME",
        help="NAME improves when it goes down; repeatable",
    )
    p.add_argument(
        "--higher-is-better",
        action="append",
        default=[],
        metavar="NAME",
        help="NAME improves when it goes up; repeatable (for fields nobody declared a direction for)",
    )
    p.add_argument(
        "--neither",
        action="append",
        default=[],
        metavar="NAME",
        help="NAME is descriptive: its change is reported, never judged as a regression; repeatable",
    )
    p.add_argument(
        "--family",
        metavar="FAMILY[:COMMAND]",
        help="the family that wrote the rows, for rows that do not say it themselves (rageval-min's own "
        "--per-item rows do): its metric directions and aggregates (aggregate.NAME)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="an option of the family's accumulator (as in its state), e.g. k=5; repeatable",
    )
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when any metric regressed significantly (each named on stderr)",
    )
    add_report_options(p)
    p.set_defaults(func=run)


def _params(values: Sequence[str]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for v in values:
        name, sep, text = v.partition("=")
        if not sep or not name:
            raise ScoringError(f"--param {v!r}: expected NAME=JSON")
        try:
            out[name] = json.loads(text)
        except ValueError:
            out[name] = text
    return out


def run(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=[args.baseline, args.candidate])
    family, _, command = (args.family or "").partition(":")
    overrides = {
        **dict.fromkeys(args.higher_is_better, "higher"),
        **dict.fromkeys(args.lower_is_better, "lower"),
        **dict.fromkeys(args.neither, "neither"),
    }
    report = compare.compare_files(
        args.baseline,
        args.candidate,
        key=args.key,
        metrics=args.metric,
        test=args.test,
        resamples=args.resamples,
        seed=args.seed,
        alpha=args.alpha,
        direction_overrides=overrides,
        family=family or None,
        command=command or None,
        params=_params(args.param) or None,
        min_n=args.min_n,
        fail_on_regression=args.fail_on_regression,
        interval=args.interval,
    )
    return emit_report(
        report,
        args,
        io,
        formatters={"markdown": format_markdown, "text": format_text},
        undefined="insufficient data",
    )
