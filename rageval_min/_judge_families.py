"""``judge`` subcommands of the families whose judged step exists: ``rgb judge``, ``pairwise judge``.

Each one is the family's own three steps run in one process: build the prompts
(the family's code), ask the judge through :class:`rageval_min.judges.JudgeRunner`
(cache, retries, concurrency, replay), then score with the family's scorer.  The
judged records are written to ``--output`` (the same records ``rgb label`` +
``rgb score --judged`` or ``pairwise prompts`` + ``pairwise score`` would read);
the family's report goes to stdout with the judge stats added to its metrics
(``judge_calls``, ``judge_cache_hits``, ``judge_failures``, ``judge_unparseable``)
and ``judge_model`` added to its signature.

A family wires its subcommand with two lines in its ``register``::

    from ._judge_families import register_rgb_judge
    register_rgb_judge(rsub)
"""

import argparse
import json
from typing import Any, Dict, List, Optional, Tuple

from . import _cli_judge, judges
from ._cli_common import CliIO, emit_report, selected_variants
from ._io import atomic_writer
from ._report import Report
from .errors import ScoringError

__all__ = ["register_rgb_judge", "run_rgb_judge", "register_pairwise_judge", "run_pairwise_judge"]

#: pairwise: the reference's call settings (one user message, temperature 0).  The reference's
#: max_tokens is min(1024, context window - prompt tokens); 1024 is sent here (no tokenizer).
PAIRWISE_PARAMS: Dict[str, Any] = {"temperature": 0, "max_tokens": 1024}

#: rgb: the reference sends the model and one user message, nothing else.
RGB_PARAMS: Dict[str, Any] = {}


def _add_report_options(parser: argparse.ArgumentParser, *, variants: Any, extra_formats: Any = ()) -> None:
    """``--format``, ``--report``, ``--gate``, ``--variant`` (``--output`` is the judged file here)."""
    from ._report import FORMATS

    g = parser.add_argument_group("report and gates")
    g.add_argument(
        "--format", choices=list(FORMATS) + list(extra_formats), default="json", help="report format (default: json)"
    )
    g.add_argument("--report", metavar="PATH", help="write the report to PATH atomically instead of stdout")
    g.add_argument(
        "--gate",
        action="append",
        default=[],
        metavar='"NAME OP VALUE"',
        help="on the family's metrics and judge_calls, judge_cache_hits, judge_failures, judge_unparseable; repeatable",
    )
    if variants:
        g.add_argument(
            "--variant",
            action="append",
            default=[],
            choices=list(variants),
            metavar="NAME",
            help="opt-in variant; repeatable; one of: " + ", ".join(variants),
        )


def _emit(report: Report, args: argparse.Namespace, io: CliIO, formatters: Any = None) -> int:
    ns = argparse.Namespace(format=args.format, output=args.report, gate=args.gate)
    return emit_report(report, ns, io, formatters=formatters)


def _one_template(values: Optional[List[str]]) -> Optional[str]:
    if not values:
        return None
    if len(values) > 1:
        raise ScoringError("give one --judge-template FILE")
    return values[0]


def _with_judge(report: Report, runner: judges.JudgeRunner) -> Report:
    metrics = dict(report.metrics)
    metrics.update(runner.stats.as_metrics())
    model = getattr(runner.judge, "model", "") or "none"
    return report._replace(signature=report.signature + f"|judge_model={model}", metrics=metrics)


def _write_jsonl(path: str, rows: List[Dict[str, Any]]) -> None:
    with atomic_writer(path) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- rgb


def register_rgb_judge(rsub: Any) -> None:
    """Add ``rgb judge`` to the ``rgb`` sub-parsers."""
    from . import rgb

    j = rsub.add_parser(
        "judge",
        help="LLM-judged rejection rate (reject) or error detection (fact): label, judge, score",
        description="Label the predictions, ask the judge the reference's question for each "
        "(reject_evalue: was the question addressed; fact_evalue: were the factual errors "
        "identified), write the judged records to --output and print the judged score object. "
        "A failed judge call is an error (exit 2) after the others are cached; rerun to resume.",
    )
    j.add_argument(
        "--input", required=True, metavar="PREDICTIONS.jsonl", help="records with query, prediction and ans/answer"
    )
    j.add_argument("--judged", required=True, choices=("reject", "fact"), help="reject = Rej*, fact = ED* and CR")
    j.add_argument("--dataset", metavar="NAME", help="dataset name; default: parsed from the file name")
    j.add_argument("--noise-rate", type=float, metavar="R", help="default: the records' noise_rate, else the file name")
    j.add_argument(
        "--output",
        required=True,
        metavar="JUDGED.jsonl",
        help="the labelled records with judge_prompt and evaluation (what rgb score --judged reads)",
    )
    _cli_judge.add_judge_options(j)
    _add_report_options(j, extra_formats=("rgb",), variants=rgb.VARIANTS)
    j.set_defaults(func=run_rgb_judge)


def run_rgb_judge(args: argparse.Namespace, io: CliIO) -> int:
    from . import _cmd_rgb, rgb

    variants = rgb.check_variants(selected_variants(args))
    template_path = _one_template(args.judge_template)
    template = _cmd_rgb._read_template(template_path)
    args.judge_template = None
    runner = _cli_judge.judge_from_args(args, stderr=io.stderr)
    try:
        dataset = _cmd_rgb._dataset(args, args.input)
        notes: List[str] = []
        label_args = argparse.Namespace(input=args.input, judge=args.judged)
        records = [
            _cmd_rgb._labelled_record(label_args, line, rec, lab, reason, template)
            for line, rec, lab, reason in _cmd_rgb._label_rows(
                _cmd_rgb._read(args.input), args.input, notes, dataset=dataset, variants=variants, use_labels=False
            )
        ]
        asked = [i for i, r in enumerate(records) if isinstance(r.get("judge_prompt"), str)]
        res = runner.run(
            [records[i]["judge_prompt"] for i in asked], params=RGB_PARAMS, label=f"rgb judge {args.judged}"
        )
    finally:
        runner.close()
    failed: List[str] = []
    for k, i in enumerate(asked):
        records[i]["evaluation"] = res.answers[k]
        if res.errors[k] is not None:
            records[i]["judge_error"] = res.errors[k]
            failed.append(f"id={records[i].get('id', i + 1)}: {res.errors[k]}")
    _write_jsonl(args.output, records)
    if failed:
        raise ScoringError(
            f"{len(failed)} judge call(s) failed (first: {failed[0]}); the judged records are in "
            f"{args.output} and the answers so far are cached: rerun to retry the failed ones"
        )
    report = _cmd_rgb.compute_score(
        args.output, dataset=dataset, noise_rate=args.noise_rate, use_labels=True, judged=args.judged, variants=variants
    )
    report = _with_judge(report, runner)
    to_file = args.report not in (None, "-")

    def _rgb(rep: Report, outcomes: Any) -> str:
        return rgb.format_result_json(rep.result) + ("" if to_file else "\n")

    return _emit(report, args, io, formatters={"rgb": _rgb})


# --------------------------------------------------------------------------- pairwise


def register_pairwise_judge(psub: Any) -> None:
    """Add ``pairwise judge`` to the ``pairwise`` sub-parsers."""
    from . import pairwise

    j = psub.add_parser(
        "judge",
        help="build every comparison (both orders), ask the judge, score the win rates",
        description="pairwise prompts + a judge + pairwise score in one run. Exact matches are never "
        "sent; a call that still fails after the retries is recorded as the reference's "
        f"'{pairwise.FAIL_MESSAGE}' and counted by --failure-limit as the reference does. "
        "The judged record (comparison columns + the judge column) is written to --output.",
    )
    j.add_argument("--input", required=True, metavar="TABLE", help="input table: .xlsx, .csv, .tsv, .jsonl or .json")
    j.add_argument("--refm", required=True, metavar="MODEL", help="the reference model")
    j.add_argument(
        "--model", action="append", default=None, metavar="MODEL", help="model to compare with refm; repeatable"
    )
    j.add_argument("--nopt", type=int, choices=(2, 3, 4), default=2, help="answer options in the prompt (default: 2)")
    j.add_argument(
        "--mode",
        choices=("dual", "random"),
        default="dual",
        help="dual: both orders (default); random: one drawn order",
    )
    j.add_argument("--seed", type=int, default=2680, help="seed of random mode (default: 2680)")
    j.add_argument(
        "--judge-column", default="judge", metavar="NAME", help="name of the judge column in --output (default: judge)"
    )
    j.add_argument(
        "--extra",
        action="append",
        default=[],
        choices=list(pairwise.EXTRAS),
        metavar="NAME",
        help="opt-in extra output, repeatable: " + ", ".join(pairwise.EXTRAS),
    )
    j.add_argument(
        "--failure-limit",
        type=int,
        default=5,
        metavar="N",
        help="error out when N or more judge calls failed (default: 5, the reference's)",
    )
    j.add_argument("--output", required=True, metavar="JUDGED.jsonl", help="the judged record (JSONL)")
    _cli_judge.add_judge_options(j)
    _add_report_options(j, variants=pairwise.VARIANTS)
    j.set_defaults(func=run_pairwise_judge)


def run_pairwise_judge(args: argparse.Namespace, io: CliIO) -> int:
    from . import _cmd_pairwise, pairwise

    variants = selected_variants(args)
    template_path = _one_template(args.judge_template)
    template = _cmd_pairwise._read_template(template_path)
    args.judge_template = None
    runner = _cli_judge.judge_from_args(args, stderr=io.stderr)
    try:
        rows = [r for _, r in pairwise.read_table(args.input)]
        diags: List[str] = []
        comps = pairwise.build_comparisons(
            rows,
            refm=args.refm,
            models=args.model,
            mode=args.mode,
            seed=args.seed,
            strict_ids="strict_ids" in variants,
            diagnostics=diags,
        )
        prompts: List[Tuple[int, str]] = [
            (i, pairwise.render_prompt(c, nopt=args.nopt, template=template))
            for i, c in enumerate(comps)
            if not c.exact_match
        ]
        nopt = args.nopt

        def parse(answer: str) -> Any:
            choice = pairwise.extract_choice(answer, nopt=nopt)
            if choice is None:
                raise judges.UnparseableAnswer(None)
            return choice

        res = runner.run([p for _, p in prompts], params=PAIRWISE_PARAMS, parse=parse, label="pairwise judge")
    finally:
        runner.close()
    records: List[Dict[str, Any]] = []
    for c in comps:
        rec: Dict[str, Any] = dict(c.as_record())
        rec[args.judge_column] = pairwise.EM_MARKER if c.exact_match else None
        records.append(rec)
    for k, (i, _) in enumerate(prompts):
        answer = res.answers[k]
        records[i][args.judge_column] = pairwise.FAIL_MESSAGE if answer is None else answer
    _write_jsonl(args.output, records)
    scored = pairwise.score(
        records,
        nopt=args.nopt,
        refm=args.refm,
        judge_column=args.judge_column,
        variants=variants,
        extras=args.extra,
        failure_cnt=args.failure_limit,
        judge_template=template,
    )
    report = Report(
        family="pairwise",
        signature=scored.signature,
        result=scored.result,
        metrics=dict(scored.metrics),
        diagnostics=diags + list(scored.diagnostics),
    )
    return _emit(_with_judge(report, runner), args, io)
