"""``rageval-min pairwise``: DevBench SubEval pairwise judge (prompts, score, judge).

Thin handlers: parse the options, call the library, emit.  The comparisons are
built by :mod:`.construct_util`, records are scored by :mod:`.sub_eval`, the
reference's output files are written by :mod:`.output_files`, and the judge run
of ``pairwise judge`` (prompts, the runner, the judged record) is :mod:`.judge`.
"""

import argparse
import json
from typing import Any, List, Optional, Sequence, Tuple

from .. import pairwise
from .._cli_common import (
    CliIO,
    add_records_option,
    add_report_options,
    emit_report,
    item_sink,
    prepare,
    selected_variants,
    stream_output_path,
)
from .._extras import pip_hint
from .._io import read_text
from .._numbers import option_int
from .._output import open_output
from ..errors import ScoringError
from ..gates import check_gate_names
from ..judges import options as _cli_judge
from . import judge
from .construct_util import comparisons_from_file
from .output_files import write_output_dir
from .util import load_token_length


def _add_extra_option(p: argparse.ArgumentParser) -> None:
    """``--extra``, the same for ``score`` and ``judge``."""
    p.add_argument(
        "--extra",
        action="append",
        default=[],
        choices=list(pairwise.EXTRAS),
        metavar="NAME",
        help="opt-in extra output, repeatable: " + ", ".join(pairwise.EXTRAS),
    )


def _add_failure_limit_option(p: argparse.ArgumentParser) -> None:
    """``--failure-limit``, the same for ``score`` and ``judge``."""
    p.add_argument(
        "--failure-limit",
        type=option_int(plain=True),
        default=5,
        metavar="N",
        help="error out when N (at least 1) or more judge calls failed (default: 5, the reference's)",
    )


def register(sub: Any) -> None:
    """The ``pairwise`` command and its subcommands."""
    p = sub.add_parser(
        "pairwise",
        help="pairwise LLM-judge win rates with swap consistency (DevBench SubEval)",
        description="Build pairwise judge inputs from an answer table, and score judge outputs "
        "exactly as DevBench SubEval does (old float32 tables and the paper's new win rates).",
    )
    psub = p.add_subparsers(dest="pairwise_command", metavar="SUBCOMMAND")
    psub.required = True

    _register_prompts(psub)
    _register_score(psub)
    _register_judge(psub)


def _register_prompts(psub: Any) -> None:
    """``pairwise prompts``: one judge input per comparison."""
    pr = psub.add_parser(
        "prompts",
        help="write one judge input per comparison (cmp_index, both orders, EM rows marked)",
        description="Read the input table (question, index, evaluating_guidance, task, "
        "reference_answer, answer-{model}) and write one comparison per line. Exact-match rows "
        "are marked (exact_match: true, prompt: null) and must not be sent to a judge.",
    )
    pr.add_argument(
        "--input", required=True, metavar="TABLE", help="input table: .xlsx (first sheet), .csv, .tsv, .jsonl or .json"
    )
    pr.add_argument("--refm", required=True, metavar="MODEL", help="the reference model")
    pr.add_argument(
        "--model",
        action="append",
        default=None,
        metavar="MODEL",
        help="model to compare with refm; repeatable (default: every answer-* column except refm, in column order)",
    )
    pr.add_argument(
        "--nopt",
        type=option_int(plain=True),
        choices=(2, 3, 4),
        default=2,
        help="number of answer options in the prompt (default: 2)",
    )
    pr.add_argument(
        "--mode",
        choices=("dual", "random"),
        default="dual",
        help="dual: both presentation orders (default); random: one order drawn "
        "with numpy's legacy generator (the reference's CLI default)",
    )
    pr.add_argument(
        "--seed",
        type=option_int(plain=True),
        default=2680,
        help="seed of random mode; negative swaps model and refm (default: 2680)",
    )
    pr.add_argument(
        "--judge-template",
        metavar="FILE",
        help="judge prompt template (placeholders: <Evaluating Guidance>, "
        "{{question}}, {{answer1}}, {{answer2}}, {{reference_answer}}, "
        "{{#reference_answer}}...{{/reference_answer}}); default: our own wording",
    )
    pr.add_argument("--dump-template", action="store_true", help="print the built-in template for --nopt and exit")
    pr.add_argument(
        "--output",
        metavar="PATH",
        help="write here (atomically) instead of stdout; a .tsv path gets the "
        "reference's 9-column infer-input table instead of JSONL",
    )
    pr.add_argument(
        "--variant",
        action="append",
        default=[],
        choices=["strict_ids"],
        help="strict_ids: reject ';' inside index or model names",
    )
    pr.set_defaults(func=run_prompts, format=None)


def _register_score(psub: Any) -> None:
    """``pairwise score``: score a judge record."""
    sc = psub.add_parser(
        "score",
        help="score judge outputs: counts, consistency, old tables, new win rates, lengths",
        description="Score a judge record (the reference's record TSV, or JSONL rows with the "
        "comparison columns and a judge column) exactly as DevBench SubEval does.",
    )
    sc.add_argument(
        "--record",
        required=True,
        metavar="RECORD",
        help="judge record: .tsv (the reference's), .csv, .jsonl, .json or .xlsx",
    )
    sc.add_argument(
        "--nopt",
        type=option_int(plain=True),
        choices=(2, 3, 4),
        required=True,
        help="number of options the judge was given",
    )
    sc.add_argument("--refm", metavar="MODEL", help="reference model (default: the one model in every comparison)")
    sc.add_argument(
        "--judge-column",
        metavar="NAME",
        help="column holding the judge output (default: the only non-comparison column)",
    )
    _add_extra_option(sc)
    sc.add_argument(
        "--lengths",
        choices=("chars", "tokens"),
        default="chars",
        help="answer length unit: chars (default) or tiktoken cl100k tokens as the "
        f"reference ({pip_hint('tokens')}; tiktoken downloads its BPE file on first use)",
    )
    _add_failure_limit_option(sc)
    sc.add_argument(
        "--judge-template",
        metavar="FILE",
        help="the template the judge inputs were built with (recorded in the signature)",
    )
    sc.add_argument(
        "--output-dir",
        metavar="DIR",
        help="also write the reference's files: log.txt, length_stats.csv, "
        "consistent_cmp.tsv/inconsistent_cmp.tsv, win+halfdraw.xlsx, "
        "win+bothgood.xlsx, win_rate_with_tie.csv, win_rate_without_tie.csv",
    )
    add_report_options(sc, variants=pairwise.VARIANTS, per_item=True)
    sc.set_defaults(func=run_score)


def _register_judge(psub: Any) -> None:
    """``pairwise judge``: prompts, the judge and score in one run."""
    j = psub.add_parser(
        "judge",
        help="build every comparison (both orders), ask the judge, score the win rates",
        description="pairwise prompts + a judge + pairwise score in one run. Exact matches are never "
        "sent; a call that still fails after the retries is recorded as the reference's "
        f"'{pairwise.FAIL_MESSAGE}' and counted by --failure-limit as the reference does. "
        "The judged record (comparison columns + the judge column) is written to --records; "
        "--output is the report. Every option, the table and the gates are checked before the first call.",
    )
    j.add_argument("--input", required=True, metavar="TABLE", help="input table: .xlsx, .csv, .tsv, .jsonl or .json")
    j.add_argument("--refm", required=True, metavar="MODEL", help="the reference model")
    j.add_argument(
        "--model", action="append", default=None, metavar="MODEL", help="model to compare with refm; repeatable"
    )
    j.add_argument(
        "--nopt",
        type=option_int(plain=True),
        choices=(2, 3, 4),
        default=2,
        help="answer options in the prompt (default: 2)",
    )
    j.add_argument(
        "--mode",
        choices=("dual", "random"),
        default="dual",
        help="dual: both orders (default); random: one drawn order",
    )
    j.add_argument("--seed", type=option_int(plain=True), default=2680, help="seed of random mode (default: 2680)")
    j.add_argument(
        "--judge-column", default="judge", metavar="NAME", help="name of the judge column in --records (default: judge)"
    )
    _add_extra_option(j)
    _add_failure_limit_option(j)
    add_records_option(j, what="the judged record (comparison columns + the judge column)")
    _cli_judge.add_judge_options(j)
    add_report_options(j, variants=pairwise.VARIANTS, per_item=True)
    j.set_defaults(func=run_judge)


# --------------------------------------------------------------------------- prompts


def _read_template(path: Optional[str]) -> Optional[str]:
    if path is None:
        return None
    return pairwise.load_template(read_text(path, what="judge template"), path=path)


def _comparisons(args: argparse.Namespace, variants: Sequence[str]) -> Tuple[List[pairwise.Comparison], List[str]]:
    """The comparisons of ``--input`` (every row checked) and the notes about the table."""
    return comparisons_from_file(
        args.input,
        refm=args.refm,
        models=args.model,
        mode=args.mode,
        seed=args.seed,
        strict_ids="strict_ids" in variants,
    )


def run_prompts(args: argparse.Namespace, io: CliIO) -> int:
    prepare(args, inputs=[args.input, args.judge_template])
    out_path = stream_output_path(args)
    if args.dump_template:
        with open_output(out_path, io.stdout) as fh:
            fh.write(pairwise.builtin_template(args.nopt))
        return 0
    template = _read_template(args.judge_template)
    comps, diags = _comparisons(args, pairwise.check_variants(args.variant or []))
    n_em = sum(1 for c in comps if c.exact_match)
    with open_output(out_path, io.stdout) as fh:
        if out_path and out_path.lower().endswith(".tsv"):
            pairwise.infer_input_tsv(comps, fh)
        else:
            for c in comps:
                rec = c.as_record()
                rec["prompt"] = None if c.exact_match else pairwise.render_prompt(c, nopt=args.nopt, template=template)
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    for d in diags:
        io.stderr.write(f"note: {d}\n")
    io.stderr.write(
        f"{len(comps)} comparisons ({n_em} exact matches, not for the judge); "
        f"template={pairwise.template_id(template)}\n"
    )
    return 0


# --------------------------------------------------------------------------- score


def _check_failure_limit(n: int) -> int:
    if n < 1:
        raise ScoringError(f"--failure-limit must be at least 1, got {n}")
    return n


def run_score(args: argparse.Namespace, io: CliIO) -> int:
    gates = prepare(args, inputs=[args.record, args.judge_template])
    variants = pairwise.check_variants(selected_variants(args))
    failure_limit = _check_failure_limit(args.failure_limit)
    template = _read_template(args.judge_template)
    length = load_token_length() if args.lengths == "tokens" else None
    with item_sink(args.per_item) as on_item:
        res = pairwise.score_record_file(
            args.record,
            nopt=args.nopt,
            refm=args.refm,
            judge_column=args.judge_column,
            variants=variants,
            extras=args.extra or [],
            length=length,
            lengths=args.lengths,
            failure_limit=failure_limit,
            judge_template=template,
            on_item=on_item,
        )
    check_gate_names(gates, res.report.metrics)
    if args.output_dir:
        write_output_dir(args.output_dir, res)
    return emit_report(res.report, args, io, formatters=pairwise.REPORT_FORMATS)


# --------------------------------------------------------------------------- judge


def _one_template(values: Optional[List[str]]) -> Optional[str]:
    if not values:
        return None
    if len(values) > 1:
        raise ScoringError("give one --judge-template FILE")
    return values[0]


def run_judge(args: argparse.Namespace, io: CliIO) -> int:
    gates = prepare(args, inputs=[args.input] + list(args.judge_template or []))
    template_path = _one_template(args.judge_template)
    variants = pairwise.check_variants(selected_variants(args))
    extras = pairwise.check_extras(args.extra or [])
    failure_limit = _check_failure_limit(args.failure_limit)
    template = _read_template(template_path)
    comps, diags = _comparisons(args, variants)
    check_gate_names(gates, judge.gate_names(comps, refm=args.refm, extras=extras))
    files, args.judge_template = args.judge_template, None  # the template is the family's, not a judge step's
    records, runner = judge.judge_records(
        comps,
        lambda: _cli_judge.judge_from_args(args, stderr=io.stderr, template_files=files),
        nopt=args.nopt,
        template=template,
        judge_column=args.judge_column,
        path=args.records,
    )
    with item_sink(args.per_item) as on_item:
        report = judge.score_judged(
            records,
            runner,
            nopt=args.nopt,
            refm=args.refm,
            judge_column=args.judge_column,
            variants=variants,
            extras=extras,
            failure_limit=failure_limit,
            template=template,
            notes=diags,
            on_item=on_item,
        )
    return emit_report(report, args, io, formatters=pairwise.REPORT_FORMATS)
