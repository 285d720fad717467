"""``rageval-min mtrag``: MT-RAG algorithmic metrics, LLM judges, IDK conditioning and summaries.

Subcommands (the scoring lives in :mod:`rageval_min.mtrag` and, for ``judge``,
:mod:`rageval_min.mtrag.judge`; this module only parses options):

``algorithmic``  streams task records, writes each back with its ``metrics`` (as
                 ``run_algorithmic.py``), reports the mean of each metric.
``judge``        asks an LLM judge for ``underspecified_eval``, ``idk_eval``, ``RL_F``, ``RB_llm``.
``condition``    IDK conditioning of RB_agg / RB_llm / RL_F given ``idk_eval`` values.
``summarize``    per-setting, per-model means by answerability from evaluated JSONL or
                 InspectorRAGet analytics files (reproduces the paper's Table 6).

``algorithmic``, ``judge`` and ``condition`` write a records file and a report:
``--records PATH`` (required) is the records file (``-``: stdout) and ``--output
[FORMAT:]PATH`` (repeatable) is always the report (stdout when absent; a file when the
records go to stdout).

Nothing is written when an option or the input is bad: the paths are checked first
(an output may not name an input or another output), gate names are checked before
the records file is committed, and ``judge`` reads and checks the whole input before
its first call.
"""

import argparse
from contextlib import contextmanager
from typing import Any, Iterator, Optional, Sequence

from .. import judges, mtrag, rouge
from .._cli_common import (
    CliIO,
    add_records_option,
    add_report_options,
    emit_report,
    item_sink,
    prepare,
    selected_variants,
)
from .._output import atomic_writer
from ..errors import ScoringError
from ..gates import check_gate_names
from ..judges import options as _cli_judge
from ..report import Report
from . import judge as _judge_mtrag


def _records_options(p: argparse.ArgumentParser, *, what: str, step: str, records: str) -> None:
    p.add_argument("--input", required=True, metavar="IN.jsonl", help=f"{what} (JSON Lines)")
    add_records_option(p, what=f"{records} (- is stdout; then give the report a file with --output)")
    add_report_options(p, variants=mtrag.STEP_VARIANTS[step], per_item=True)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "mtrag",
        help="MT-RAG (IBM mt-rag-benchmark): algorithmic metrics, RB_agg, LLM judges, IDK conditioning, summaries",
        description="MT-RAG generation metrics with parity to IBM/mt-rag-benchmark@cc5b1d4.",
    )
    msub = p.add_subparsers(dest="mtrag_command", metavar="STEP")
    p.set_defaults(func=_run_help, _mtrag_parser=p)
    _register_algorithmic(msub)
    _register_condition(msub)
    _register_summarize(msub)
    _register_judge(msub)
    from .retrieval import register_retrieval

    register_retrieval(msub)


def _register_algorithmic(msub: Any) -> None:
    a = msub.add_parser(
        "algorithmic",
        conflict_handler="resolve",
        help="Recall, RougeL_stemFalse, Extractiveness_RougeL, Length (+ RB_agg from BERTScore values in the input)",
        description="Write every task record back with a 'metrics' object exactly as run_algorithmic.py. "
        "RB_agg is computed when the record already carries BertscoreR/BertKPrec in 'metrics'. "
        "The report holds the mean of each metric over the records (gate on them by name).",
    )
    _records_options(
        a,
        what="task records with predictions, targets, contexts",
        step="algorithmic",
        records="every task record with its 'metrics'",
    )
    a.add_argument(
        "--backend",
        choices=("stdlib", "rapidfuzz"),
        default="stdlib",
        help="stdlib: the built-in LCS (default); rapidfuzz: the same numbers with the LCS of "
        "RougeL_stemFalse and Extractiveness_RougeL in compiled code (pip install 'rageval-min[fast]')",
    )
    _cli_judge.add_bertscore_options(a)
    a.set_defaults(func=run_algorithmic)


def _register_condition(msub: Any) -> None:
    c = msub.add_parser(
        "condition",
        conflict_handler="resolve",
        help="IDK conditioning of RB_agg, RB_llm, RL_F (needs metrics.idk_eval)",
        description="Add <metric>_idk_underspecified (or <metric>_idk with --variant paper_idk) for each "
        "metric. The records are written like the reference's pandas writer: floats rounded to 10 decimals "
        "and each conditioned metric typed by its column (one float or null in it makes every 1/0 1.0/0.0; "
        "the input is read twice for that), unless --full-precision is given.",
    )
    _records_options(
        c,
        what="evaluated records with metrics.idk_eval",
        step="condition",
        records="the conditioned records",
    )
    c.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME",
        help="metric to condition (repeatable; default: RL_F, RB_llm, RB_agg)",
    )
    c.add_argument(
        "--full-precision",
        action="store_true",
        help="write plain JSON records: floats not rounded, each value with its own type",
    )
    c.set_defaults(func=run_condition)


def _register_summarize(msub: Any) -> None:
    s = msub.add_parser(
        "summarize",
        help="per-model means by answerability and setting (evaluated JSONL or analytics JSON)",
        description="Means of every numeric metric per setting, model and answerability group "
        "(Answerable, Partial, Unanswerable, ..., all; 'all' leaves out Conversational). "
        "Gate names are SETTING/MODEL/GROUP/METRIC.",
    )
    s.add_argument(
        "--input",
        action="append",
        required=True,
        metavar="FILE",
        help="evaluated records (.jsonl) or an InspectorRAGet analytics file (.json); repeatable, one per setting",
    )
    s.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="LABEL",
        help="setting label of the matching --input (default: the file name without extension)",
    )
    s.add_argument("--metric", action="append", default=[], metavar="NAME", help="only these metrics (repeatable)")
    s.add_argument(
        "--model",
        metavar="NAME",
        help="model name for JSONL records without a model_id field (default: the setting label)",
    )
    add_report_options(s, variants=mtrag.STEP_VARIANTS["summarize"], per_item=True)
    s.set_defaults(func=run_summarize)


def _register_judge(msub: Any) -> None:
    j = msub.add_parser(
        "judge",
        conflict_handler="resolve",
        help="LLM-judged metrics: idk_eval, RB_llm, RL_F (and underspecified_eval)",
        description="Ask the judge for every record and write the records back with metrics.underspecified_eval, "
        "idk_eval, RL_F and RB_llm filled (those asked for, in the reference pipeline's order); then run "
        "'mtrag condition'. Prompts are our own wording; --judge-template STEP=FILE (steps: "
        + ", ".join(_judge_mtrag.TEMPLATE_STEPS)
        + ") for a published one. --gate names: records, the judged metrics and judge_calls, "
        "judge_cache_hits, judge_failures, judge_unparseable.",
    )
    j.add_argument(
        "--input", required=True, metavar="IN.jsonl", help="records with input, predictions, targets, contexts"
    )
    j.add_argument(
        "--steps",
        default=",".join(_judge_mtrag.DEFAULT_STEPS),
        metavar="LIST",
        help=f"comma-separated, from {', '.join(_judge_mtrag.STEPS)} (default: {','.join(_judge_mtrag.DEFAULT_STEPS)})",
    )
    add_records_option(j, what="the judged records (- is stdout; then give the report a file with --output)")
    _cli_judge.add_judge_options(j)
    add_report_options(j, per_item=True)
    j.set_defaults(func=run_judge)


def _run_help(args: argparse.Namespace, io: CliIO) -> int:
    args._mtrag_parser.print_help()
    return 2


# ---------------------------------------------------------------------------
# records + report
# ---------------------------------------------------------------------------


def _check_records(args: argparse.Namespace) -> None:
    """``--records -`` puts the records on stdout, so the report needs a file of its own."""
    if args.records == "-":
        outputs = list(getattr(args, "output", None) or [])
        if not outputs or any(o == "-" or o.endswith(":-") for o in outputs):
            raise ScoringError("--records - writes the records to stdout: give the report a file, --output PATH")


@contextmanager
def _records_target(path: str, io: CliIO) -> Iterator[Any]:
    if path == "-":
        yield io.stdout
        return
    with atomic_writer(path) as fh:
        yield fh


def _begin(args: argparse.Namespace, names: Optional[Sequence[str]] = None) -> Any:
    """The parsed gates, with every option checked before any work (paths, gate names, --records -)."""
    gates = prepare(args, inputs=[args.input], metric_names=names)
    _check_records(args)
    return gates


def _finish(args: argparse.Namespace, gates: Any, io: CliIO, run: Any) -> int:
    """Run ``run(records_fh, on_item) -> Report`` with the records file and ``--per-item``
    open (both committed only if every gate name exists), then emit the report."""
    with _records_target(args.records, io) as fh, item_sink(args.per_item) as on_item:
        report: Report = run(fh, on_item)
        check_gate_names(gates, report.metrics)
    return emit_report(report, args, io, formatters=mtrag.REPORT_FORMATS)


def run_algorithmic(args: argparse.Namespace, io: CliIO) -> int:
    gates = _begin(args)
    scorer = _cli_judge.scorer_from_args(args)
    bertscore = judges.as_pair_scorer(scorer) if scorer is not None else None
    lcs, backend = rouge.lcs_backend(args.backend)

    def run(fh: Any, on_item: Any) -> Report:
        return mtrag.algorithmic_file(
            args.input,
            fh,
            variants=selected_variants(args),
            bertscore=bertscore,
            bertscore_name=scorer.identity if scorer is not None else None,
            lcs=lcs,
            backend=backend,
            on_item=on_item,
            output_name=args.records,
        )

    return _finish(args, gates, io, run)


def run_condition(args: argparse.Namespace, io: CliIO) -> int:
    gates = _begin(args)
    metrics = list(dict.fromkeys(args.metric)) or list(mtrag.CONDITIONED_METRICS)

    def run(fh: Any, on_item: Any) -> Report:
        return mtrag.condition_file(
            args.input,
            fh,
            metrics=metrics,
            variants=selected_variants(args),
            digits=None if args.full_precision else 10,
            on_item=on_item,
            output_name=args.records,
        )

    return _finish(args, gates, io, run)


def run_judge(args: argparse.Namespace, io: CliIO) -> int:
    steps = _judge_mtrag.parse_steps(args.steps)
    gates = _begin(args, _judge_mtrag.gate_names(steps))
    checked = _judge_mtrag.read_judge_input(args.input, steps)  # the whole input, before any call
    runner = _cli_judge.judge_from_args(args, steps=_judge_mtrag.TEMPLATE_STEPS, stderr=io.stderr)
    try:
        with _records_target(args.records, io) as fh, item_sink(args.per_item) as on_item:
            report = _judge_mtrag.run_judge_step(
                args.input, fh, runner=runner, steps=steps, records=checked, on_item=on_item, output_name=args.records
            )
            check_gate_names(gates, report.metrics)
    finally:
        runner.close()
    return emit_report(report, args, io, formatters=mtrag.REPORT_FORMATS)


# ---------------------------------------------------------------------------
# summarize
# ---------------------------------------------------------------------------


def run_summarize(args: argparse.Namespace, io: CliIO) -> int:
    gates = prepare(args, inputs=list(args.input))
    with item_sink(args.per_item) as on_item:
        report = mtrag.summarize_files(
            args.input,
            settings=args.setting,
            metrics=list(dict.fromkeys(args.metric)),
            model=args.model,
            variants=selected_variants(args),
            on_item=on_item,
        )
        check_gate_names(gates, report.metrics)  # the names depend on the data: checked before --per-item is kept
    return emit_report(report, args, io, formatters=mtrag.REPORT_FORMATS)
