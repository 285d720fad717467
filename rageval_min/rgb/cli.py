"""``rageval-min rgb mix|label|score|judge|report``: the RGB benchmark (see :mod:`rageval_min.rgb`).

A thin layer: options in, :mod:`rageval_min.rgb` functions called with plain keyword
arguments, reports out.  All input files are JSON Lines (the reference's ``.json`` files are
JSON Lines too).  Instances the reference would drop in its catch-all ``try`` are left out
here as well, and each one is named in a diagnostic; malformed input is a ScoringError
(exit 2).  ``score`` and ``judge`` are the scoring commands (``--per-item`` writes their item
rows); ``mix`` and ``label`` write data streams to ``--output``; ``report`` groups several
prediction files into the four abilities.
"""

import argparse
from typing import Any, Dict, Optional

from .. import judges, rgb
from .._cli_common import (
    CliIO,
    add_records_option,
    add_report_options,
    add_variant_option,
    emit_report,
    item_sink,
    prepare,
    selected_variants,
    stream_output_path,
)
from .._io import dumps, read_text
from .._numbers import option_float, option_int
from .._output import open_output
from ..errors import ScoringError
from ..gates import check_gate_names
from ..judges import options as _cli_judge
from ..judges.stats_metrics import TRUST_METRIC_NAMES
from . import judge as rgb_judge
from .abilities import REPORT_RENDERERS

#: The most passages ``rgb mix --passage-num`` accepts.
MAX_PASSAGES = 10**6

_FACTCHECKING_MSG = (
    "--factchecking is not offered: the reference's fact-checking mode reads "
    "config/instruction_fact.yaml, which the reference does not ship (it fails with FileNotFoundError)"
)


# --------------------------------------------------------------------------- parsers

#: mix and label write a data stream to --output (no report formats).
_STREAM: Dict[str, Any] = {"format": "jsonl", "_formats": ["jsonl"]}


def _add_factchecking(p: argparse.ArgumentParser) -> None:
    p.add_argument("--factchecking", nargs="?", const="True", default=None, help=argparse.SUPPRESS)


def _add_dataset(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument(
        "--dataset",
        required=required,
        metavar="NAME",
        help="dataset name (en, zh, en_int, zh_int, en_fact, zh_fact, en_refine, zh_refine, ...); "
        "'zh' in NAME removes spaces from predictions, '_int'/'_fact' in NAME select the mixing "
        "branch, '_fact' adds the counterfactual keys"
        + ("" if required else "; default: parsed from the reference's prediction file name"),
    )


def _add_stream_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", metavar="PATH", help="write to PATH atomically instead of stdout")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "rgb",
        help="RGB benchmark: answer labels, noise robustness, negative rejection, integration, counterfactuals",
        description="RGB (chen700564/RGB@65ec39e) with bit-for-bit parity: seeded document mixing, "
        "per-answer labels and the reference's score object.",
    )
    rsub = p.add_subparsers(dest="rgb_command", metavar="SUBCOMMAND")
    rsub.required = True
    _register_mix(rsub)
    _register_label(rsub)
    _register_score(rsub)
    _register_report(rsub)
    _register_judge(rsub)


def _register_mix(rsub: Any) -> None:
    m = rsub.add_parser(
        "mix",
        help="pick and order the passages for each instance exactly as the reference does",
        description="Write one JSON line per instance, in input order: {id, query, answer, docs}. "
        "Reproduces random.seed(SEED) + processdata per instance bit for bit.",
    )
    m.add_argument(
        "--input",
        required=True,
        metavar="DATA.jsonl",
        help="dataset records (id, query, answer, positive, negative[, positive_wrong])",
    )
    _add_dataset(m, True)
    m.add_argument(
        "--noise-rate",
        type=option_float(plain=True),
        default=0.0,
        metavar="R",
        help="share of negative passages (default: 0.0)",
    )
    m.add_argument(
        "--passage-num",
        type=option_int(high=MAX_PASSAGES, what="a number of passages"),
        default=5,
        metavar="N",
        help="passages per instance (default: 5)",
    )
    m.add_argument(
        "--correct-rate",
        type=option_float(plain=True),
        default=0.0,
        metavar="C",
        help="share of correct passages in _fact sets (default: 0.0)",
    )
    m.add_argument(
        "--seed",
        type=option_int(plain=True),
        default=rgb.DEFAULT_SEED,
        help=f"seed set before each instance (default: {rgb.DEFAULT_SEED})",
    )
    _add_stream_output(m)
    _add_factchecking(m)
    m.set_defaults(func=run_mix, **_STREAM)


def _register_label(rsub: Any) -> None:
    lab = rsub.add_parser(
        "label",
        help="label model outputs (1 found / 0 not found per answer, [-1] rejection) and the factual-error flag",
        description="Read records with 'prediction' and the ground truth ('ans' or 'answer'); write each "
        "record back with the normalized 'prediction', 'label' and 'factlabel'. A record the reference "
        "would drop is kept with label/factlabel null and 'rgb_skipped' giving the reason.",
    )
    lab.add_argument(
        "--input", required=True, metavar="PREDICTIONS.jsonl", help="records with prediction and ans/answer"
    )
    _add_dataset(lab, False)
    add_variant_option(lab, rgb.VARIANTS, help="opt-in variant; repeatable; one of: " + ", ".join(rgb.VARIANTS))
    lab.add_argument(
        "--judge",
        choices=rgb.JUDGED,
        help="also add 'judge_prompt' (and 'judge_template') for the LLM-judged evaluation",
    )
    lab.add_argument(
        "--judge-template",
        metavar="FILE",
        help="judge prompt template (placeholders {QUESTION} and {ANSWER}); default: the project's own wording",
    )
    _add_stream_output(lab)
    _add_factchecking(lab)
    lab.set_defaults(func=run_label, **_STREAM)


def _register_score(rsub: Any) -> None:
    sc = rsub.add_parser(
        "score",
        help="the reference's score object (all_rate, noise_rate, tt, nums[, fact_*])",
        description="Label the predictions (or use stored labels with --use-labels) and print the score "
        "object with the reference's keys, key order and value types. --format rgb prints the "
        "reference's _result.json text. With --judged, score stored judge outputs ('evaluation').",
    )
    sc.add_argument(
        "--input", required=True, metavar="PREDICTIONS.jsonl", help="records with prediction and ans/answer (or label)"
    )
    _add_dataset(sc, False)
    sc.add_argument(
        "--noise-rate",
        type=option_float(plain=True),
        metavar="R",
        help="noise rate written to the output and deciding the noise-1 rule; default: the records' "
        "'noise_rate', else the file name",
    )
    sc.add_argument("--use-labels", action="store_true", help="use a record's stored 'label'/'factlabel' when present")
    sc.add_argument(
        "--judged",
        choices=rgb.JUDGED,
        help="score stored judge outputs: reject = reject_evalue (Rej*), fact = fact_evalue (ED*, CR)",
    )
    add_report_options(sc, extra_formats=("rgb",), variants=rgb.VARIANTS, per_item=True)
    _add_factchecking(sc)
    sc.set_defaults(func=run_score)


def _register_report(rsub: Any) -> None:
    rp = rsub.add_parser(
        "report",
        help="the four RGB abilities from several prediction files, per model",
        description="Score several reference prediction files (prediction_{dataset}_{model}_temp{T}_noise{N}"
        "_passage{P}_correct{C}.json) and show noise robustness (accuracy per noise rate), negative "
        "rejection (noise 1.0), information integration (_int) and counterfactual robustness "
        "(_fact: error detection and correction rates) in one table. --format abilities prints the "
        "abilities object alone (JSON, indent 2).",
    )
    rp.add_argument(
        "--input",
        required=True,
        nargs="+",
        metavar="FILE",
        help="prediction files (names as the reference writes them)",
    )
    rp.add_argument("--use-labels", action="store_true", help="use stored 'label'/'factlabel' when present")
    add_report_options(rp, extra_formats=("abilities",), variants=rgb.VARIANTS, default_format="text")
    rp.set_defaults(func=run_report)


def _register_judge(rsub: Any) -> None:
    j = rsub.add_parser(
        "judge",
        help="LLM-judged rejection rate (reject) or error detection (fact): label, judge, score",
        description="Label the predictions, ask the judge the reference's question for each "
        "(reject_evalue: was the question addressed; fact_evalue: were the factual errors "
        "identified) and report the judged score object (--output; --records keeps the judged "
        "records). Every option and the whole input are checked before the first judge call. "
        "A failed judge call is an error (exit 2) after the others are cached; rerun to resume.",
    )
    j.add_argument(
        "--input", required=True, metavar="PREDICTIONS.jsonl", help="records with query, prediction and ans/answer"
    )
    j.add_argument("--judged", required=True, choices=rgb.JUDGED, help="reject = Rej*, fact = ED* and CR")
    j.add_argument("--dataset", metavar="NAME", help="dataset name; default: parsed from the file name")
    j.add_argument(
        "--noise-rate",
        type=option_float(plain=True),
        metavar="R",
        help="default: the records' noise_rate, else the file name",
    )
    add_records_option(
        j,
        what="the labelled records with judge_prompt and evaluation (what rgb score --judged --use-labels reads)",
        required=False,
    )
    _cli_judge.add_judge_options(j)
    add_report_options(j, extra_formats=("rgb",), variants=rgb.VARIANTS, per_item=True)
    j.set_defaults(func=run_judge)


# --------------------------------------------------------------------------- helpers


def _check_factchecking(args: argparse.Namespace) -> None:
    if getattr(args, "factchecking", None) is not None:
        raise ScoringError(_FACTCHECKING_MSG, field="--factchecking")


def _check_noise_option(args: argparse.Namespace) -> None:
    if args.noise_rate is not None:
        rgb.check_noise_rate(args.noise_rate, field="--noise-rate")


def _check_mix_options(args: argparse.Namespace) -> None:
    """Parameter errors first (before reading), as a usage error; NaN fails the comparison."""
    for name, value in (("--noise-rate", args.noise_rate), ("--correct-rate", args.correct_rate)):
        if not (0.0 <= value <= 1.0):
            raise ScoringError(f"must be in [0, 1], got {value}", field=name)
    if args.passage_num < 0:
        raise ScoringError(f"must be >= 0, got {args.passage_num}", field="--passage-num")


def _dumps(obj: Any) -> str:
    return dumps(obj, ensure_ascii=False)  # strict: a NaN read from the input is written as null


def _read_template(path: Optional[str]) -> Optional[str]:
    return None if path is None else read_text(path, what="judge template")


# --------------------------------------------------------------------------- handlers


def run_mix(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=[args.input])
    _check_factchecking(args)
    _check_mix_options(args)
    with open_output(stream_output_path(args), io.stdout) as fh:
        summary = rgb.mix_file(
            args.input,
            dataset=args.dataset,
            noise_rate=args.noise_rate,
            passage_num=args.passage_num,
            correct_rate=args.correct_rate,
            seed=args.seed,
            on_instance=lambda inst: fh.write(_dumps(inst) + "\n"),
        )
    io.stderr.write(
        f"rageval-min: rgb mix: {summary.signature}: {summary.written} instances, {len(summary.notes)} skipped\n"
    )
    for n in summary.notes:
        io.stderr.write(f"rageval-min: rgb mix: note: {n}\n")
    return 0


def run_label(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=[args.input])
    _check_factchecking(args)
    variants = rgb.check_variants(args.variant)
    if args.judge_template and not args.judge:
        raise ScoringError("--judge-template needs --judge reject|fact", field="--judge-template")
    template = _read_template(args.judge_template)
    dataset = rgb.resolve_dataset(args.input, args.dataset)
    with open_output(stream_output_path(args), io.stdout) as fh:
        summary = rgb.label_file(
            args.input,
            dataset=dataset,
            variants=variants,
            judge=args.judge,
            template=template,
            on_record=lambda rec: fh.write(_dumps(rec) + "\n"),
        )
    io.stderr.write(f"rageval-min: rgb label: {summary.signature}\n")
    for n in summary.notes:
        io.stderr.write(f"rageval-min: rgb label: note: {n}\n")
    return 0


def run_score(args: argparse.Namespace, io: CliIO) -> int:
    gates = prepare(args, inputs=[args.input])
    _check_factchecking(args)
    _check_noise_option(args)
    variants = rgb.check_variants(selected_variants(args))
    dataset = rgb.resolve_dataset(args.input, args.dataset)
    check_gate_names(gates, rgb.ScoreAccumulator.metric_names(dataset=dataset, judged=args.judged))
    with item_sink(args.per_item) as on_item:
        report = rgb.score_file(
            args.input,
            dataset=dataset,
            noise_rate=args.noise_rate,
            use_labels=args.use_labels,
            judged=args.judged,
            variants=variants,
            on_item=on_item,
        )
    if args.format == "rgb":
        for d in report.diagnostics:
            io.stderr.write(f"rageval-min: rgb score: note: {d}\n")
    return emit_report(report, args, io, formatters=rgb.REPORT_FORMATS, stdout_suffix=rgb.STDOUT_SUFFIX)


def run_judge(args: argparse.Namespace, io: CliIO) -> int:
    """Check everything, label and build every prompt, then ask the judge (:mod:`.judge`), then score."""
    gates = prepare(args, inputs=[args.input])
    names = rgb.JudgeAccumulator.metric_names(judged=args.judged) + list(judges.JudgeStats().as_metrics())
    names += list(TRUST_METRIC_NAMES)
    check_gate_names(gates, names)
    _check_noise_option(args)
    variants = rgb.check_variants(selected_variants(args))
    template = _read_template(judges.templates_from_args(args.judge_template).get(""))
    dataset = rgb.resolve_dataset(args.input, args.dataset)
    noise_rate = rgb.resolve_noise_rate(args.input, args.noise_rate)
    runner_args = argparse.Namespace(**vars(args))
    runner_args.judge_template = None  # the template is rgb's prompt wording, applied by rgb itself
    records, runner = rgb_judge.judge_file(
        args.input,
        judged=args.judged,
        dataset=dataset,
        variants=variants,
        template=template,
        make_runner=lambda: _cli_judge.judge_from_args(
            runner_args, stderr=io.stderr, template_files=args.judge_template
        ),
        records_path=args.records,
    )
    with item_sink(args.per_item) as on_item:
        report = rgb_judge.score_judge_run(
            records,
            runner,
            path=args.records or args.input,
            dataset=dataset,
            noise_rate=noise_rate,
            judged=args.judged,
            variants=variants,
            on_item=on_item,
        )
    return emit_report(report, args, io, formatters=rgb.REPORT_FORMATS, stdout_suffix=rgb.STDOUT_SUFFIX)


def run_report(args: argparse.Namespace, io: CliIO) -> int:
    gates = prepare(args, inputs=list(args.input))
    check_gate_names(gates, rgb.report_metric_names(args.input))
    report = rgb.report_files(args.input, use_labels=args.use_labels, variants=selected_variants(args))
    return emit_report(report, args, io, formatters=REPORT_RENDERERS)
