"""``rageval-min mtrag``: MT-RAG algorithmic metrics, IDK conditioning and summaries.

Subcommands:

``algorithmic``  streams task records, writes each back with its ``metrics`` (as
                 ``run_algorithmic.py``), reports the mean of each metric.
``condition``    IDK conditioning of RB_agg / RB_llm / RL_F given ``idk_eval`` values.
``summarize``    per-setting, per-model means by answerability from evaluated JSONL or
                 InspectorRAGet analytics files (reproduces the paper's Table 6).

``algorithmic`` and ``condition`` read and write one record at a time (constant memory);
their records file is written atomically, the report goes to stdout or ``--report``.
"""

import argparse
import json
import os
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _cli_judge, judges, mtrag, rouge
from ._cli_common import CliIO, add_report_options, emit_report, gold_samples_dir, selected_variants
from ._io import Problems, atomic_writer, iter_jsonl, read_json, read_text
from ._report import Report
from .errors import ScoringError

#: How many diagnostics a report keeps (the rest are counted), so memory stays constant.
MAX_DIAGNOSTICS = 50

#: Metrics averaged in the ``algorithmic`` report, in output order.
_ALGO_MEANS = mtrag.ALGORITHMIC_METRICS


class _Diagnostics:
    def __init__(self, limit: int = MAX_DIAGNOSTICS) -> None:
        self.limit = limit
        self.items: List[str] = []
        self.dropped = 0

    def extend(self, items: Sequence[str]) -> None:
        for item in items:
            if len(self.items) < self.limit:
                self.items.append(item)
            else:
                self.dropped += 1

    def final(self) -> List[str]:
        if self.dropped:
            return self.items + [f"... and {self.dropped} more diagnostics"]
        return list(self.items)


#: The variants that apply to each step.
STEP_VARIANTS = {
    "algorithmic": ("rb_agg_unguarded", "unicode_tokens"),
    "condition": ("paper_idk", "answerability_alias"),
    "summarize": ("answerability_alias",),
}


def _records_options(p: argparse.ArgumentParser, *, what: str, step: str) -> None:
    p.add_argument("--input", required=True, metavar="IN.jsonl", help=f"{what} (JSON Lines)")
    add_report_options(p, variants=STEP_VARIANTS[step])
    # --output is the records file here; the report goes to stdout or --report.
    p.add_argument(
        "--output",
        required=True,
        metavar="OUT.jsonl",
        help="write the records, each with its metrics, to this file (atomically)",
    )
    p.add_argument("--report", metavar="PATH", help="write the report to PATH (atomically) instead of stdout")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "mtrag",
        help="MT-RAG (IBM mt-rag-benchmark): algorithmic metrics, RB_agg, IDK conditioning, summaries",
        description="MT-RAG generation metrics with parity to IBM/mt-rag-benchmark@cc5b1d4.",
    )
    msub = p.add_subparsers(dest="mtrag_command", metavar="STEP")
    p.set_defaults(func=_run_help, _mtrag_parser=p)

    a = msub.add_parser(
        "algorithmic",
        conflict_handler="resolve",
        help="Recall, RougeL_stemFalse, Extractiveness_RougeL, Length (+ RB_agg from BERTScore values in the input)",
        description="Write every task record back with a 'metrics' object exactly as run_algorithmic.py. "
        "RB_agg is computed when the record already carries BertscoreR/BertKPrec in 'metrics'. "
        "The report holds the mean of each metric over the records (gate on them by name).",
    )
    _records_options(a, what="task records with predictions, targets, contexts", step="algorithmic")
    a.add_argument(
        "--backend",
        choices=("stdlib", "rapidfuzz"),
        default="stdlib",
        help="stdlib: the built-in LCS (default); rapidfuzz: the same numbers with the LCS of "
        "RougeL_stemFalse and Extractiveness_RougeL in compiled code (pip install 'rageval-min[fast]')",
    )
    _cli_judge.add_bertscore_options(a)
    a.set_defaults(func=run_algorithmic)

    c = msub.add_parser(
        "condition",
        conflict_handler="resolve",
        help="IDK conditioning of RB_agg, RB_llm, RL_F (needs metrics.idk_eval)",
        description="Add <metric>_idk_underspecified (or <metric>_idk with --variant paper_idk) for each "
        "metric. Floats in the written records are rounded to 10 decimals like the reference's pandas "
        "writer unless --full-precision is given.",
    )
    _records_options(c, what="evaluated records with metrics.idk_eval", step="condition")
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
        help="do not round floats to 10 decimals in the written records",
    )
    c.set_defaults(func=run_condition)

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
    add_report_options(s, variants=STEP_VARIANTS["summarize"])
    s.set_defaults(func=run_summarize)

    from ._judge_mtrag import register_mtrag_judge

    register_mtrag_judge(msub)


def _run_help(args: argparse.Namespace, io: CliIO) -> int:
    args._mtrag_parser.print_help()
    return 2


# ---------------------------------------------------------------------------
# algorithmic / condition: streaming
# ---------------------------------------------------------------------------


def _one(
    path: str, line_no: int, record: Any, step: Any, writer: Any, fh: Any, problems: Problems, diagnostics: _Diagnostics
) -> int:
    if not isinstance(record, dict):
        problems.add("expected a JSON object", path=path, line=line_no)
        return 0
    rid = f"{path}:{line_no}"
    task_id = record.get("task_id")
    if isinstance(task_id, (str, int)) and not isinstance(task_id, bool):
        rid = f"task_id={task_id}"
    try:
        result = step(record, rid)
    except ScoringError as exc:
        problems.add(
            exc.msg, path=path, line=line_no, field=exc.field, record=rid if rid.startswith("task_id=") else None
        )
        return 0
    if not problems:
        fh.write(writer(result.record))
        fh.write("\n")
    diagnostics.extend(result.diagnostics)
    return 1


def _means_report(n: int, output: Optional[str], means: Mapping[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The ``result`` payload and the gateable metrics of a streamed step."""
    present = {k: v for k, v in means.items() if v.n or v.skipped}
    result = {
        "records": n,
        "output": output,
        "means": {k: v.mean for k, v in present.items()},
        "counts": {k: v.n for k, v in present.items()},
    }
    metrics: Dict[str, Any] = {"records": n}
    metrics.update((k, v.mean) for k, v in present.items())
    return result, metrics


def _stream(path: str, output: str, step: Any, writer: Any) -> Tuple[int, _Diagnostics]:
    """Read ``path`` one record at a time, apply ``step(record, rid) -> RecordResult``,
    write with ``writer(record) -> str``.  Bad records are collected and raised together;
    the output file is then not created."""
    problems = Problems()
    diagnostics = _Diagnostics()
    n = 0
    if os.path.abspath(path) == os.path.abspath(output):
        raise ScoringError("--output must differ from --input", path=output)
    with atomic_writer(output) as fh:
        try:
            for line_no, record in iter_jsonl(path):
                n += _one(path, line_no, record, step, writer, fh, problems, diagnostics)
                if problems.full:
                    break
        except ScoringError as exc:  # the reader's problems (bad JSON, encoding, ...)
            problems.add_error(exc)
        problems.raise_if_any()
    return n, diagnostics


def _json_algorithmic(record: Dict[str, Any]) -> str:
    # run_algorithmic.py writes with json.dump: ASCII escapes, full repr, NaN kept.
    return json.dumps(record)


def _json_pandas(record: Dict[str, Any]) -> str:
    # close to pandas to_json(orient="records", lines=True): compact, ASCII, "\/".
    return json.dumps(record, separators=(",", ":"), allow_nan=False).replace("/", "\\/")


def algorithmic_file(
    path: str,
    output: str,
    *,
    variants: Sequence[str] = (),
    bertscore: Optional[mtrag.BertScorer] = None,
    lcs: Optional[rouge.LcsFn] = None,
    backend: str = "stdlib",
) -> Report:
    """Run the algorithmic step on a JSONL file (streaming) and return the report.

    ``bertscore`` is the hook for a BERTScore scorer (see :data:`mtrag.BertScorer`); ``lcs``
    an exact LCS-length function for the ROUGE-L metrics, named ``backend`` in the signature.
    """
    means = {name: mtrag.ExactMean() for name in _ALGO_MEANS}

    def step(record: Dict[str, Any], rid: str) -> mtrag.RecordResult:
        result = mtrag.score_record(record, variants=variants, bertscore=bertscore, record_id=rid, lcs=lcs)
        for name, value in mtrag.summary_values(result.record["metrics"]).items():
            if name in means:
                means[name].add(value)
        return result

    n, diagnostics = _stream(path, output, step, _json_algorithmic)
    result, metrics = _means_report(n, output, means)
    params: List[Tuple[str, object]] = [
        ("step", "algorithmic"),
        ("bertscore", "input" if bertscore is None else "scorer"),
    ]
    if backend != "stdlib":
        params.append(("backend", backend))
    return Report(
        family="mtrag",
        signature=mtrag.signature(variants, params),
        result=result,
        metrics=metrics,
        diagnostics=diagnostics.final(),
    )


def condition_file(
    path: str,
    output: str,
    *,
    metrics: Sequence[str] = mtrag.CONDITIONED_METRICS,
    variants: Sequence[str] = (),
    digits: Optional[int] = 10,
) -> Report:
    """IDK-condition every record of a JSONL file (streaming) and return the report."""
    paper = "paper_idk" in variants
    keys = [mtrag.conditioned_key(m, paper_idk=paper) for m in metrics]
    means = {k: mtrag.ExactMean() for k in keys}

    def step(record: Dict[str, Any], rid: str) -> mtrag.RecordResult:
        if digits is not None:
            record = mtrag.round_floats(record, digits)  # values as the reference reads them
        result = mtrag.condition_record(record, metrics=metrics, variants=variants, record_id=rid)
        m = result.record["metrics"]
        for key in keys:
            if key in m:
                means[key].add(m[key][0])
        return result

    def writer(record: Dict[str, Any]) -> str:
        if digits is None:
            return json.dumps(record)
        return _json_pandas(record)  # already rounded in step()

    n, diagnostics = _stream(path, output, step, writer)
    result, gate_metrics = _means_report(n, output, means)
    params = [("step", "condition"), ("metrics", ",".join(metrics)), ("float_digits", digits)]
    return Report(
        family="mtrag",
        signature=mtrag.signature(variants, params),
        result=result,
        metrics=gate_metrics,
        diagnostics=diagnostics.final(),
    )


def _emit_with_report_path(report: Report, args: argparse.Namespace, io: CliIO) -> int:
    ns = argparse.Namespace(**vars(args))
    ns.output = args.report
    return emit_report(report, ns, io)


def run_algorithmic(args: argparse.Namespace, io: CliIO) -> int:
    scorer = _cli_judge.scorer_from_args(args)
    bertscore = judges.as_pair_scorer(scorer) if scorer is not None else None
    lcs, backend = rouge.lcs_backend(args.backend)
    report = algorithmic_file(
        args.input, args.output, variants=selected_variants(args), bertscore=bertscore, lcs=lcs, backend=backend
    )
    if scorer is not None:
        report = report._replace(
            signature=report.signature.replace("|bertscore=scorer", "|bertscore=" + scorer.identity)
        )
    return _emit_with_report_path(report, args, io)


def run_condition(args: argparse.Namespace, io: CliIO) -> int:
    metrics = list(dict.fromkeys(args.metric)) or list(mtrag.CONDITIONED_METRICS)
    report = condition_file(
        args.input,
        args.output,
        metrics=metrics,
        variants=selected_variants(args),
        digits=None if args.full_precision else 10,
    )
    return _emit_with_report_path(report, args, io)


# ---------------------------------------------------------------------------
# summarize
# ---------------------------------------------------------------------------


def _analytics_rows(
    path: str, data: Dict[str, Any], variants: Sequence[str]
) -> Iterator[Tuple[str, str, Dict[str, Any]]]:
    """``(model, group, values)`` for each evaluation of an InspectorRAGet analytics file.

    Evaluations are under ``evaluations`` (``annotations``) or, in schema 2, under
    ``results`` (``scores``).  A metric's value is the ``value`` of its only annotator
    (``system``/``composite``) when numeric or null; human (multi-annotator) and
    categorical metrics are left out.  Answerability comes from the task's
    ``Answerability`` or ``answerability`` (list or string)."""
    tasks = data.get("tasks")
    if not isinstance(tasks, list):
        raise ScoringError("analytics file without a 'tasks' list", path=path, field="tasks")
    answer: Dict[str, Optional[str]] = {}
    for i, task in enumerate(tasks):
        if not isinstance(task, dict) or "task_id" not in task:
            raise ScoringError("task without task_id", path=path, field=f"tasks[{i}]")
        label = (
            mtrag.answerability_of(task, alias=True) if "answerability" not in task else mtrag.answerability_of(task)
        )
        answer[str(task["task_id"])] = label
    evals = data.get("evaluations")
    key = "annotations"
    if evals is None:
        evals, key = data.get("results"), "scores"
    if not isinstance(evals, list):
        raise ScoringError("analytics file without 'evaluations' or 'results'", path=path)
    for i, ev in enumerate(evals):
        if not isinstance(ev, dict) or not isinstance(ev.get(key), dict):
            raise ScoringError(f"evaluation without '{key}'", path=path, field=f"evaluations[{i}]")
        task_id = str(ev.get("task_id"))
        if task_id not in answer:
            raise ScoringError(f"unknown task_id {task_id!r}", path=path, field=f"evaluations[{i}].task_id")
        values: Dict[str, Any] = {}
        for metric, by_annotator in ev[key].items():
            if not isinstance(by_annotator, dict) or len(by_annotator) != 1:
                continue
            (entry,) = by_annotator.values()
            value = entry.get("value") if isinstance(entry, dict) else None
            if value is None or mtrag._is_number(value):
                values[metric] = value
        yield str(ev.get("model_id")), mtrag.answerability_group(answer[task_id]), values


def _jsonl_rows(path: str, model: str, variants: Sequence[str]) -> Iterator[Tuple[str, str, Dict[str, Any]]]:
    alias = "answerability_alias" in variants
    problems = Problems()
    for line_no, record in iter_jsonl(path):
        if not isinstance(record, dict) or not isinstance(record.get("metrics"), dict):
            problems.add("expected an object with a 'metrics' object", path=path, line=line_no, field="metrics")
            if problems.full:
                break
            continue
        label = mtrag.answerability_of(record, alias=alias)
        name = record.get("model_id")
        yield (
            (str(name) if name is not None else model),
            mtrag.answerability_group(label),
            mtrag.summary_values(record["metrics"]),
        )
    problems.raise_if_any()


def _gate_label(text: str) -> str:
    return "_".join(text.split()).replace("<", "_").replace(">", "_").replace("=", "_")


def summarize_files(
    inputs: Sequence[str],
    *,
    settings: Sequence[str] = (),
    metrics: Sequence[str] = (),
    model: Optional[str] = None,
    variants: Sequence[str] = (),
) -> Report:
    """Summaries of evaluated JSONL files and/or analytics files, one setting per input."""
    if settings and len(settings) != len(inputs):
        raise ScoringError(f"{len(settings)} --setting labels for {len(inputs)} --input files", field="--setting")
    wanted = set(metrics)
    acc = mtrag.SummaryAccumulator()
    sources = []
    for i, path in enumerate(inputs):
        label = settings[i] if settings else os.path.splitext(os.path.basename(path))[0]
        if path.endswith(".jsonl"):
            kind = "jsonl"
            rows: Iterator[Tuple[str, str, Dict[str, Any]]] = _jsonl_rows(path, model or label, variants)
        else:
            data = read_json(path)
            if isinstance(data, dict):
                kind = "analytics"
                rows = _analytics_rows(path, data, variants)
            else:
                raise ScoringError(
                    "expected an analytics object (or use a .jsonl file of evaluated records)", path=path
                )
        sources.append({"setting": label, "input": path, "format": kind})
        for row_model, group, values in rows:
            if wanted:
                values = {k: v for k, v in values.items() if k in wanted}
            acc.add(label, row_model, group, values)
    table = acc.result()
    missing = wanted - {m for s in table.values() for mo in s.values() for g in mo.values() for m in g}
    if missing:
        raise ScoringError(f"no values for metric(s) {', '.join(sorted(missing))}", field="--metric")
    result_settings = []
    gate_metrics: Dict[str, Any] = {}
    for source in sources:
        label = source["setting"]
        models = table.get(label, {})
        result_settings.append(
            dict(
                source,
                models={
                    mo: {g: {m: gm._asdict() for m, gm in per.items()} for g, per in groups.items()}
                    for mo, groups in models.items()
                },
            )
        )
        for mo, groups in models.items():
            for g, per in groups.items():
                for m, gm in per.items():
                    gate_metrics["/".join(_gate_label(x) for x in (label, mo, g, m))] = gm.mean
    params: List[Tuple[str, object]] = [("step", "summarize"), ("mean", "fsum")]
    return Report(
        family="mtrag",
        signature=mtrag.signature(variants, params),
        result={"settings": result_settings},
        metrics=gate_metrics,
        diagnostics=[],
    )


def _fmt(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def format_summary_text(report: Report, outcomes: Sequence[Any] = ()) -> str:
    """Tables per setting: one row per model and group, one column per metric (mean, n)."""
    lines = ["rageval-min mtrag summarize", f"signature: {report.signature}"]
    for setting in report.result["settings"]:
        lines.append("")
        lines.append(f"setting {setting['setting']} ({setting['format']}: {setting['input']})")
        metric_names: List[str] = []
        for groups in setting["models"].values():
            for per in groups.values():
                for m in per:
                    if m not in metric_names:
                        metric_names.append(m)
        rows = [["model", "group", "n"] + metric_names]
        for mo, groups in setting["models"].items():
            for g, per in groups.items():
                n = max((v["n"] for v in per.values()), default=0)
                rows.append([mo, g, str(n)] + [_fmt(per[m]["mean"]) if m in per else "" for m in metric_names])
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)
    if outcomes:
        lines.append("")
        for o in outcomes:
            status = {True: "pass", False: "FAIL", None: "skipped"}[o.passed]
            lines.append(f"gate {o.text}: {_fmt(o.value) if o.value is not None else 'n/a'} {status}")
        ok = all(o.passed is not False for o in outcomes)
        lines.append("result: " + ("PASS" if ok else "FAIL"))
    return "\n".join(lines) + "\n"


def run_summarize(args: argparse.Namespace, io: CliIO) -> int:
    report = summarize_files(
        args.input,
        settings=args.setting,
        metrics=list(dict.fromkeys(args.metric)),
        model=args.model,
        variants=selected_variants(args),
    )
    return emit_report(report, args, io, formatters={"text": format_summary_text})


# ---------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------


def _read(path: str) -> str:
    return read_text(path, what="gold sample")


def demo(io: CliIO) -> str:
    """Run the three steps on ``gold_samples/mtrag`` and compare with the stored outputs."""
    import tempfile

    base = gold_samples_dir("mtrag")
    out: List[str] = []
    with tempfile.TemporaryDirectory(prefix="rageval-mtrag-") as tmp:
        algo_out = os.path.join(tmp, "algorithmic.jsonl")
        report = algorithmic_file(os.path.join(base, "tasks.jsonl"), algo_out)
        if _read(algo_out) != _read(os.path.join(base, "expected_algorithmic.jsonl")):
            raise ScoringError("algorithmic output differs from expected_algorithmic.jsonl", path=base)
        out.append(f"algorithmic: {report.result['records']} records")
        for name, mean in report.result["means"].items():
            out.append(f"  mean {name:<22} {_fmt(mean)}")
        cond_out = os.path.join(tmp, "conditioned.jsonl")
        creport = condition_file(os.path.join(base, "judged.jsonl"), cond_out)
        if _read(cond_out) != _read(os.path.join(base, "expected_conditioned.jsonl")):
            raise ScoringError("condition output differs from expected_conditioned.jsonl", path=base)
        out.append(f"condition: {creport.result['records']} records")
        for name, mean in creport.result["means"].items():
            out.append(f"  mean {name:<26} {_fmt(mean)}")
        sreport = summarize_files(
            [os.path.join(base, "expected_conditioned.jsonl")],
            settings=["demo"],
            metrics=[mtrag.conditioned_key(m) for m in mtrag.CONDITIONED_METRICS],
        )
        expected = json.loads(_read(os.path.join(base, "expected_summary.json")))
        got = json.loads(json.dumps(sreport.result))
        for setting in got["settings"]:
            setting["input"] = os.path.basename(setting["input"])
        if got != expected:
            raise ScoringError("summary differs from expected_summary.json", path=base)
        text = format_summary_text(sreport).rstrip("\n")
        out.append(text.replace(os.path.join(base, ""), "gold_samples/mtrag/"))
    out.append("(matches gold_samples/mtrag/expected_*.jsonl and expected_summary.json)")
    return "\n".join(out) + "\n"
