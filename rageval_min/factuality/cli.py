"""``rageval-min factuality f1k|safe|factscore|veriscore|correlate|judge`` (thin CLI).

Scoring lives in :mod:`rageval_min.factuality` (``f1k_file``, ``safe_evaluate``,
``factscore_file``, ``veriscore_file``, ``correlate_file``,
``correlate_table_file``, ``study_file``, and the reference formats
``REPORT_FORMATS``); the search-free SAFE judge in
:mod:`rageval_min.factuality.judge` (``judge_file``).

``jsonl`` outputs (``f1k``, ``correlate``) are data streams: one line per input
line.  When a ``--gate`` is given, one last line ``{"gates": [...], "pass": ...}``
(the objects of the JSON report's ``gates``) shows the values the gates read, so
a gated run never decides on a number its output does not show.  ``f1k`` writes
its lines while it reads, in constant memory (an ``--output`` file appears
atomically at the end; stdout gets the lines, spooled to a temporary file, only
when the run succeeds, so a run that exits 2 prints nothing).
"""

import argparse
import contextlib
import shutil
import tempfile
from typing import Any, Callable, Dict, List, Optional, TextIO

from .. import factuality as F
from .._cli_common import (
    CliIO,
    add_records_option,
    add_report_options,
    emit_report,
    item_sink,
    prepare,
    report_gates,
    report_targets,
    selected_variants,
)
from .._numbers import option_float, option_int
from .._output import atomic_writer
from ..errors import ScoringError
from ..gates import check_gate_names, evaluate_gates
from ..judges.options import add_judge_options, judge_from_args
from ..report import Report, overall_pass
from .judge import JUDGE_METRICS, TEMPLATE_STEPS, judge_run, read_judge_input

# --------------------------------------------------------------------------- option types


def _int_option(name: str, low: Optional[int] = None, high: Optional[int] = None) -> Callable[[str], int]:
    bounds = f"from {low} to {high}" if high is not None else f">= {low}"
    return option_int(
        low, high, invalid=f"{name}: not an integer: {{text}}", outside=f"{name} must be {bounds}, got {{value}}"
    )


def _open_unit_float(name: str) -> Callable[[str], float]:
    """A number strictly between 0 and 1."""
    rule = "a number between 0 and 1"
    return option_float(
        0.0,
        1.0,
        low_open=True,
        high_open=True,
        invalid=f"{name}: not a number: {{text}}",
        outside=f"{name} must be {rule}, got {{text}}",
    )


_SEED_MAX = 2**63 - 1


def _add_boot_options(p: argparse.ArgumentParser, what: str) -> None:
    g = p.add_argument_group("confidence interval")
    g.add_argument(
        "--bootstrap",
        type=_int_option("--bootstrap", 0, F.MAX_BOOTSTRAP),
        default=1000,
        metavar="B",
        help=f"bootstrap resamples for the CI of {what} (default: 1000; 0 disables it; at most "
        f"{F.MAX_BOOTSTRAP}; the cost grows with B times the number of responses; run only when the "
        "interval is written or gated)",
    )
    g.add_argument(
        "--confidence",
        type=_open_unit_float("--confidence"),
        default=0.95,
        help="CI level (default: 0.95)",
    )
    g.add_argument(
        "--seed", type=_int_option("--seed", -_SEED_MAX, _SEED_MAX), default=0, help="bootstrap seed (default: 0)"
    )


#: The formats that do not show the bootstrap interval (data streams and run_eval's own document).
_NO_CI_FORMATS = ("jsonl", "safe")


def _ci_needed(args: argparse.Namespace) -> bool:
    """The bootstrap runs only when a report format shows it (every report format: json, text,
    markdown, junit's properties, html) or a gate reads it."""
    if any(t.fmt not in _NO_CI_FORMATS for t in report_targets(args)):
        return True
    return any("_ci_" in g for g in getattr(args, "gate", None) or [])


def _boot_kwargs(args: argparse.Namespace) -> Dict[str, Any]:
    """The options of :func:`_add_boot_options`, and ``with_ci``, as keyword arguments of the scoring call."""
    return {"bootstrap": args.bootstrap, "confidence": args.confidence, "seed": args.seed, "with_ci": _ci_needed(args)}


def _no_subcommand(args: argparse.Namespace, io: CliIO) -> int:
    raise ScoringError(
        "factuality: choose a subcommand: f1k, safe, factscore, veriscore, correlate, judge (see --help)"
    )


# --------------------------------------------------------------------------- register


def register(sub: Any) -> None:
    top = sub.add_parser(
        "factuality",
        help="long-form factuality: SAFE F1@K, FActScore, VeriScore, correlations",
        description="Long-form factuality metrics with reference parity: SAFE (google-deepmind/"
        "long-form-factuality), FActScore and VeriScore aggregation, and the SAFE-vs-human "
        "correlation study. The LLM claim splitting/rating is not run here (see 'factuality judge').",
    )
    top.set_defaults(func=_no_subcommand)
    fs = top.add_subparsers(dest="factuality_command", metavar="SUBCOMMAND")
    for add in (
        register_f1k,
        register_safe,
        register_factscore,
        register_veriscore,
        register_correlate,
        register_judge,
    ):
        add(fs)


def register_f1k(fs: Any) -> None:
    """Add ``factuality f1k`` to the ``factuality`` sub-parsers."""
    p = fs.add_parser(
        "f1k",
        help="SAFE precision, recall@K and F1@K per line of counts",
        description="One output line per input line {supported, not_supported, "
        "max_claims?}, exactly as SAFE's calculate_metrics. A per-line max_claims "
        "overrides --max-claims (null = SAFE's default 100). Bad lines get an "
        "'error' key instead of aborting; a file without any valid line is an error. "
        "Default output: JSON Lines, written while reading; with --gate a last line "
        '{"gates": [...], "pass": ...} shows the gated values.',
    )
    p.add_argument("--input", required=True, metavar="COUNTS.jsonl", help="counts (JSONL, JSON, CSV or TSV)")
    p.add_argument(
        "--max-claims",
        default=str(F.DEFAULT_MAX_CLAIMS),
        metavar="K|median|max|pNN",
        help="K (default: 100, SAFE's code default) or a rule over the lines' S+NS: "
        "median (upper median), max, pNN (nearest-rank percentile)",
    )
    _add_boot_options(p, "the mean F1@K")
    add_report_options(p, extra_formats=("jsonl",), default_format="jsonl", per_item=True)
    p.set_defaults(func=run_f1k)


def register_safe(fs: Any) -> None:
    """Add ``factuality safe`` to the ``factuality`` sub-parsers."""
    p = fs.add_parser(
        "safe",
        help="SAFE run_eval aggregation (f1_<K>, side*_avg_*, side*_std_*)",
        description="Reproduce eval/run_eval.py's aggregation of an experiment result "
        "that already holds SAFE ratings; the default output is the exact JSON text "
        "run_eval writes. As run_eval, every side rated in prompt 0 is summarised "
        "(the --no-eval-side flags apply with --variant sides_by_flags).",
    )
    p.add_argument("--input", required=True, metavar="SAFE_RESULTS.json", help="experiment result JSON")
    p.add_argument(
        "--max-claim",
        "--max-claims",
        dest="max_claim",
        default="-1",
        metavar="K|median|max|pNN",
        help="run_eval's --max_claim (default: -1, i.e. K=100 with key f1_-1), or a rule over the rated prompts' S+NS",
    )
    p.add_argument("--no-eval-side1", dest="eval_side1", action="store_false", help="with sides_by_flags: skip side 1")
    p.add_argument("--no-eval-side2", dest="eval_side2", action="store_false", help="with sides_by_flags: skip side 2")
    _add_boot_options(p, "each side's mean F1@K")
    add_report_options(
        p, extra_formats=("safe",), default_format="safe", variants=F.COMMAND_VARIANTS["safe"], per_item=True
    )
    p.set_defaults(func=run_safe)


def register_factscore(fs: Any) -> None:
    """Add ``factuality factscore`` to the ``factuality`` sub-parsers."""
    p = fs.add_parser(
        "factscore",
        help="FActScore with length penalty, init score, respond ratio",
        description="FActScore (FactScorer.get_score) from per-fact labels: FActScore's "
        'labelled format (annotations -> human-atomic-facts labels) or {"labels": '
        '["S","NS","IR",...]}. S counts as supported, NS and IR as not.',
    )
    p.add_argument("--input", required=True, metavar="LABELED.jsonl", help="labelled responses")
    p.add_argument(
        "--gamma",
        type=_int_option("--gamma", 0, 10**6),
        default=10,
        help="length-penalty gamma; 0 disables it (default: 10)",
    )
    _add_boot_options(p, "the score")
    add_report_options(p, variants=F.COMMAND_VARIANTS["factscore"], per_item=True)
    p.set_defaults(func=run_factscore)


def register_veriscore(fs: Any) -> None:
    """Add ``factuality veriscore`` to the ``factuality`` sub-parsers."""
    p = fs.add_parser(
        "veriscore",
        help="VeriScore per-domain K (upper median, max) and F1@K",
        description="VeriScore from per-response counts {model?, domain (or "
        "prompt_source), supported, total_claims, abstained?}.",
    )
    p.add_argument("--input", required=True, metavar="COUNTS.jsonl", help="per-response counts")
    add_report_options(p, variants=F.COMMAND_VARIANTS["veriscore"], per_item=True)
    p.set_defaults(func=run_veriscore)


def register_correlate(fs: Any) -> None:
    """Add ``factuality correlate`` to the ``factuality`` sub-parsers."""
    p = fs.add_parser(
        "correlate",
        help="Pearson/Spearman with two-sided p-values (scipy parity)",
        description="Per line of {x: [...], y: [...]}: Pearson and Spearman with p-values "
        "(null where undefined); or two columns of a table (--x COL --y COL); or the "
        "SAFE-vs-human study (--labeled ... --safe SAFE.jsonl). Default output: JSON Lines "
        '(with --gate, a last line {"gates": [...], "pass": ...}).',
    )
    p.add_argument("--input", metavar="PAIRS.jsonl", help="pairs per line, or a table with --x/--y")
    p.add_argument("--x", metavar="COL", help="column for x (table mode; passed first, like FActScore)")
    p.add_argument("--y", metavar="COL", help="column for y (table mode)")
    p.add_argument(
        "--labeled",
        action="append",
        default=[],
        metavar="PATH",
        help="FActScore labelled file, or a folder of them (names without '_', *.jsonl); repeatable",
    )
    p.add_argument(
        "--safe",
        metavar="SAFE.jsonl",
        help="SAFE per-response metrics {model_name, line|topic, Supported/supported, ...}",
    )
    add_report_options(
        p,
        extra_formats=("jsonl",),
        default_format="jsonl",
        variants=F.COMMAND_VARIANTS["correlate"],
        per_item=True,
    )
    p.set_defaults(func=run_correlate)


# --------------------------------------------------------------------------- f1k


def run_f1k(args: argparse.Namespace, io: CliIO) -> int:
    gates = prepare(args, inputs=[args.input], metric_names=F.F1kAccumulator.metric_names())
    targets = report_targets(args)
    streams = [t for t in targets if t.fmt == "jsonl"]
    others = [t for t in targets if t.fmt != "jsonl"]
    with contextlib.ExitStack() as stack:
        # a file target is written atomically; stdout is spooled to a temporary file and
        # copied at the end, so a run that fails (exit 2) prints nothing and memory stays flat
        sinks: List[TextIO] = []
        spool: Optional[TextIO] = None
        for t in streams:
            if t.path is None:
                spool = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
                sinks.append(spool)
            else:
                sinks.append(stack.enter_context(atomic_writer(t.path)))
        per_item = stack.enter_context(item_sink(args.per_item))

        def on_line(text: str) -> None:
            for fh in sinks:
                fh.write(text)

        report = F.f1k_file(
            args.input,
            max_claims=args.max_claims,
            on_item=per_item,
            on_line=on_line if sinks else None,
            **_boot_kwargs(args),
        )
        check_gate_names(gates, report.metrics)
        outcomes = evaluate_gates(gates, report.metrics)
        if outcomes:
            trailer = F.gate_trailer(outcomes, overall_pass(report, outcomes))
            for fh in sinks:
                fh.write(trailer)
        if spool is not None:
            spool.seek(0)
            shutil.copyfileobj(spool, io.stdout)
    if others:
        ns = argparse.Namespace(**vars(args))
        ns.output = [f"{t.fmt}:{t.path if t.path is not None else '-'}" for t in others]
        return emit_report(report, ns, io, formatters=F.REPORT_FORMATS)
    return report_gates(report, outcomes, io)


# --------------------------------------------------------------------------- safe


def run_safe(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=[args.input])
    with item_sink(args.per_item) as on_item:
        res = F.safe_evaluate(
            args.input,
            max_claim=args.max_claim,
            eval_side1=args.eval_side1,
            eval_side2=args.eval_side2,
            variants=selected_variants(args),
            on_item=on_item,
            **_boot_kwargs(args),
        )
    text = F.dumps_reference(res.result)
    assert res.report is not None

    def _safe(rep: Report, outcomes: Any) -> str:
        return text

    return emit_report(res.report, args, io, formatters={**F.REPORT_FORMATS, "safe": _safe})


# --------------------------------------------------------------------------- factscore


def run_factscore(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=[args.input], metric_names=F.FactScoreAccumulator.metric_names(gamma=args.gamma))
    with item_sink(args.per_item) as on_item:
        report = F.factscore_file(
            args.input, gamma=args.gamma, variants=selected_variants(args), on_item=on_item, **_boot_kwargs(args)
        )
    return emit_report(report, args, io, formatters=F.REPORT_FORMATS)


# --------------------------------------------------------------------------- veriscore


def run_veriscore(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=[args.input])
    with item_sink(args.per_item) as on_item:
        report = F.veriscore_file(args.input, variants=selected_variants(args), on_item=on_item)
    return emit_report(report, args, io, formatters=F.REPORT_FORMATS)


# --------------------------------------------------------------------------- correlate


def run_correlate(args: argparse.Namespace, io: CliIO) -> int:
    inputs: List[Optional[str]] = [args.input, args.safe] + list(args.labeled)
    prepare(args, inputs=inputs)
    variants = selected_variants(args)
    if args.labeled or args.safe:
        if not (args.labeled and args.safe):
            raise ScoringError("the study needs both --labeled and --safe")
        if args.input:
            raise ScoringError("use either --input or --labeled/--safe")
    elif not args.input:
        raise ScoringError("give --input PAIRS.jsonl (or --labeled ... --safe ...)")
    elif (args.x is None) != (args.y is None):
        raise ScoringError("table mode needs both --x and --y")
    with item_sink(args.per_item) as on_item:
        if args.labeled:
            report = F.study_file(args.labeled, args.safe, variants=variants, on_item=on_item)
        elif args.x is not None:
            report = F.correlate_table_file(args.input, x=args.x, y=args.y, variants=variants, on_item=on_item)
        else:
            report = F.correlate_file(args.input, variants=variants, on_item=on_item)
    return emit_report(report, args, io, formatters=F.REPORT_FORMATS)


# --------------------------------------------------------------------------- judge


def register_judge(fsub: Any) -> None:
    """Add ``factuality judge`` to the ``factuality`` sub-parsers."""
    j = fsub.add_parser(
        "judge",
        help="search-free SAFE: atomic facts rated Supported / Not Supported / Irrelevant against given passages",
        description="Rate every response's atomic facts with an LLM judge against the record's own passages "
        "(SAFE steps 1-4 with the search replaced by the passages) and write per-response counts for "
        "'factuality f1k' to --records. The report (--output, --format) holds the summed counts. "
        "Prompts are our own wording; --judge-template STEP=FILE for steps " + ", ".join(TEMPLATE_STEPS) + ".",
    )
    j.add_argument("--input", required=True, metavar="RESPONSES.jsonl", help="records {id, prompt, response, passages}")
    add_records_option(
        j, what="the judged counts, per response {id, supported, not_supported, irrelevant, num_claims, dropped, facts}"
    )
    j.add_argument("--response-field", default="response", metavar="NAME")
    j.add_argument("--prompt-field", default="prompt", metavar="NAME")
    j.add_argument(
        "--passages-field", default="passages", metavar="NAME", help="list of passage strings (or one string)"
    )
    add_judge_options(j)
    add_report_options(j, per_item=True)
    j.set_defaults(func=run_judge)


def run_judge(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=[args.input], metric_names=JUDGE_METRICS)
    records = read_judge_input(args.input)  # the whole input, before any call
    runner = judge_from_args(args, steps=TEMPLATE_STEPS, stderr=io.stderr)
    report = judge_run(
        args.input,
        runner,
        records_path=args.records,
        records=records,
        open_items=lambda: item_sink(args.per_item),
        response_field=args.response_field,
        prompt_field=args.prompt_field,
        passages_field=args.passages_field,
    )
    return emit_report(report, args, io, formatters=F.REPORT_FORMATS)
