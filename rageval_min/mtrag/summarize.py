"""Pipeline step: ``mtrag summarize``: means per setting, model and answerability group.

From evaluated JSONL files or InspectorRAGet analytics files (the paper's Table 6); its
file-level function is :func:`rageval_min.mtrag.files.summarize_files`.
"""

from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .._contract import Accumulator, ItemRow, register_accumulator
from .._metrics import Input, InputField, Metric
from .._numbers import as_float
from .._state_schema import Count, Fields, Items, Row, Schema, Text
from ..errors import ScoringError
from ..report import Report, render
from ._common import (
    ALGORITHMIC_METRICS,
    ANSWERABILITY_FIELDS,
    CONDITIONED_METRICS,
    EXCLUDED_FROM_ALL,
    FAMILY,
    GROUPS,
    STEP_VARIANTS,
    ExactMean,
    GroupMean,
    _is_number,
    _task_id,
    answerability_group,
    answerability_of,
    check_variants,
    exact_mean_state,
    is_number,
    signature,
)

__all__ = [
    "REPORT_FORMATS",
    "SummarizeAccumulator",
    "SummaryAccumulator",
    "format_summary_text",
    "summarize_item",
    "summarize_row",
    "summary_values",
]


class SummaryAccumulator:
    """Per-(setting, model, group, metric) means in constant memory per key.

    Means are exactly rounded sums divided by n (see :class:`ExactMean`).  Groups:
    Answerable, Partial, Unanswerable (+ Underspecified, Conversational, Unknown when
    present) and ``all``, which leaves out Conversational as the paper's tables do.
    """

    def __init__(self) -> None:
        self._data: Dict[Tuple[str, str, str, str], ExactMean] = {}
        self._order: Dict[str, Dict[str, None]] = {}
        self._metrics: Dict[str, None] = {}

    def add(self, setting: str, model: str, group: str, values: Dict[str, Any]) -> None:
        models = self._order.setdefault(setting, {})
        models.setdefault(model, None)
        groups = [group] if group in EXCLUDED_FROM_ALL else [group, "all"]
        for metric, value in values.items():
            self._metrics.setdefault(metric, None)
            for g in groups:
                acc = self._data.get((setting, model, g, metric))
                if acc is None:
                    acc = self._data[(setting, model, g, metric)] = ExactMean()
                acc.add(value)

    def data(self) -> Dict[str, Any]:
        """The state as plain JSON data."""
        return {
            "order": [[setting, list(models)] for setting, models in self._order.items()],
            "metrics": list(self._metrics),
            "means": [list(key) + [m.data()] for key, m in self._data.items()],
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> "SummaryAccumulator":
        acc = cls()
        for setting, models in data["order"]:
            acc._order[str(setting)] = dict.fromkeys(str(m) for m in models)
        acc._metrics = dict.fromkeys(str(m) for m in data["metrics"])
        for entry in data["means"]:
            key = (str(entry[0]), str(entry[1]), str(entry[2]), str(entry[3]))
            acc._data[key] = ExactMean.from_data(entry[4])
        return acc

    def merge(self, other: "SummaryAccumulator") -> None:
        """Fold in the accumulator of the next part of the input (exact; orders of first appearance kept)."""
        for setting, models in other._order.items():
            mine = self._order.setdefault(setting, {})
            for model in models:
                mine.setdefault(model, None)
        for metric in other._metrics:
            self._metrics.setdefault(metric, None)
        for key, m in other._data.items():
            if key in self._data:
                self._data[key].merge(m)
            else:
                self._data[key] = ExactMean.from_data(m.data())

    def result(self) -> Dict[str, Dict[str, Dict[str, Dict[str, GroupMean]]]]:
        """``{setting: {model: {group: {metric: GroupMean}}}}`` with groups in the order
        of :data:`GROUPS`, then Unknown, then ``all``; settings and models in order of
        first appearance, metrics in order of first appearance."""
        group_order = [name for _, name in GROUPS] + ["Unknown", "all"]
        out: Dict[str, Dict[str, Dict[str, Dict[str, GroupMean]]]] = {}
        for setting, models in self._order.items():
            per_model: Dict[str, Dict[str, Dict[str, GroupMean]]] = {}
            for model in models:
                per_group: Dict[str, Dict[str, GroupMean]] = {}
                for group in group_order:
                    per_metric: Dict[str, GroupMean] = {}
                    for metric in self._metrics:
                        acc = self._data.get((setting, model, group, metric))
                        if acc is not None:
                            per_metric[metric] = acc.result()
                    if per_metric:
                        per_group[group] = per_metric
                per_model[model] = per_group
            out[setting] = per_model
        return out


def summary_values(metrics: Dict[str, Any]) -> Dict[str, Any]:
    """The value of each metric of an evaluated record used in summaries.

    Per-passage metrics (``BertKPrec``, ``Extractiveness_RougeL``) use the maximum over
    passages (as the analytics files store ``Bert-KPrec``); every other metric uses the
    first entry (``[0]``, the first target, as RB_agg does).  Empty lists and
    non-list values are left out; ``idk_eval`` / ``underspecified_eval`` are included
    (``"unknown"`` counts as skipped).
    """
    out: Dict[str, Any] = {}
    for name, value in metrics.items():
        if not isinstance(value, list) or not value:
            continue
        if name in ("BertKPrec", "Extractiveness_RougeL"):
            numbers = [v for v in value if type(v) is float or _is_number(v)]
            out[name] = max(numbers) if numbers else None
        else:
            out[name] = value[0]
        first = out[name]
        if type(first) is not float and isinstance(first, int) and not isinstance(first, bool):  # 401 digits
            as_float(first, field=f"metrics.{name}")  # is an input error
    return out


#: What an evaluated record's metrics are, as their own steps declare them (the metrics an item row
#: of ``summarize`` carries): every MT-RAG metric is a score, higher is better, but for these.
_DESCRIPTIVE = ("Extractiveness_RougeL", "Length", "idk_eval", "underspecified_eval")
#: The declared ranges (charts clamp to them): token overlaps, judge verdicts and their conditioned
#: forms lie in 0..1, a length is not negative; BERTScore and RB_agg are open (negative components
#: are not guarded, as upstream).
_RANGES: Dict[str, Tuple[Optional[float], Optional[float]]] = dict.fromkeys(
    ("Recall", "RougeL_stemFalse", "Extractiveness_RougeL", "idk_eval", "underspecified_eval", "RL_F", "RB_llm")
    + tuple(m + s for m in ("RL_F", "RB_llm") for s in ("_idk_underspecified", "_idk")),
    (0.0, 1.0),
)
_RANGES["Length"] = (0.0, None)
_ROW_METRICS = tuple(
    Metric(
        name,
        "neither" if name in _DESCRIPTIVE else "higher",
        "mean",
        f"the record's {name}",
        per_item=True,
        lo=_RANGES.get(name, (None, None))[0],
        hi=_RANGES.get(name, (None, None))[1],
    )
    for name in dict.fromkeys(
        ALGORITHMIC_METRICS
        + ("idk_eval", "underspecified_eval", "RL_F", "RB_llm")
        + tuple(m + suffix for m in CONDITIONED_METRICS for suffix in ("_idk_underspecified", "_idk"))
    )
)


#: The plain fields of a ``summarize`` item row (every other key is a metric).
SUMMARY_FIELDS = ("task_id", "source", "setting", "input", "format", "model", "group")


@register_accumulator
class SummarizeAccumulator(Accumulator):
    """``mtrag summarize``: per (setting, model, group, metric) exact means (see :class:`SummaryAccumulator`).

    The sources (setting label, input path, format) come from the item rows, in
    input order; every input gives at least one row.
    """

    FAMILY = FAMILY
    COMMAND = "summarize"
    METRICS = (
        Metric(
            "{setting}/{model}/{group}/{metric}",
            "neither",
            "mean",
            "mean of one metric over one setting, model and answerability group (better as that metric is)",
        ),
        Metric("source", "neither", "count", "which --input the row comes from (0, 1, ...)", per_item=True),
    ) + _ROW_METRICS
    INPUTS = (
        Input(
            "--input",
            "evaluated records (.jsonl)",
            "task_id",
            (
                InputField("task_id", ("string", "integer"), False, "the row's task_id is null"),
                InputField("metrics", ("object",), True, "an input error"),
            )
            + ANSWERABILITY_FIELDS
            + (InputField("model_id", ("string", "integer", "number", "null"), False, "--model, else the setting"),),
        ),
        Input(
            "--input",
            "an InspectorRAGet analytics file (.json)",
            "task_id",
            (
                InputField("tasks", ("array",), True, "an input error (task_id and answerability per task)"),
                InputField("evaluations", ("array",), False, "results is read (schema 2)"),
                InputField("results", ("array",), False, "an input error when evaluations is missing too"),
            ),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "metrics": Items(Text(max_len=1000), unique=True),
                "variants": Items(Text(choices=STEP_VARIANTS["summarize"]), unique=True),
            }
        ),
        data=Fields(
            {
                # [input index, setting, input path, format]
                "sources": Items(Row((Count(), Text(), Text(), Text(max_len=100)))),
                "table": Fields(
                    {
                        "order": Items(Row((Text(), Items(Text(), unique=True)))),
                        "metrics": Items(Text(), unique=True),
                        # [setting, model, group, metric, mean]
                        "means": Items(Row((Text(), Text(), Text(), Text(), exact_mean_state()))),
                    }
                ),
            }
        ),
    )

    def __init__(self, *, metrics: Sequence[str] = (), variants: Sequence[str] = ()) -> None:
        super().__init__(metrics=list(metrics), variants=list(check_variants(variants)))
        self.table = SummaryAccumulator()
        self.sources: List[List[Any]] = []

    def add(self, item: ItemRow) -> None:
        index = int(item["source"])
        if not self.sources or self.sources[-1][0] != index:
            if all(s[0] != index for s in self.sources):
                self.sources.append([index, item["setting"], item["input"], item["format"]])
        values = {k: v for k, v in item.items() if k not in SUMMARY_FIELDS}
        self.table.add(str(item["setting"]), str(item["model"]), str(item["group"]), values)

    def _data(self) -> Dict[str, Any]:
        return {"sources": [list(s) for s in self.sources], "table": self.table.data()}

    def _load(self, data: Mapping[str, Any]) -> None:
        self.sources = [[int(s[0]), str(s[1]), str(s[2]), str(s[3])] for s in data["sources"]]
        self.table = SummaryAccumulator.from_data(data["table"])

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, SummarizeAccumulator)
        for s in other.sources:
            if all(mine[0] != s[0] for mine in self.sources):
                self.sources.append(list(s))
        self.table.merge(other.table)

    def missing_metrics(self) -> List[str]:
        """The ``metrics`` asked for that no row had."""
        seen = set(self.table._metrics)
        return sorted(set(self.params["metrics"]) - seen)

    def finalize(self) -> Report:
        table = self.table.result()
        result_settings = []
        gate_metrics: Dict[str, Any] = {}
        for _, label, path, kind in sorted(self.sources, key=lambda s: s[0]):
            models = table.get(label, {})
            result_settings.append(
                {
                    "setting": label,
                    "input": path,
                    "format": kind,
                    "models": {
                        mo: {g: {m: gm._asdict() for m, gm in per.items()} for g, per in groups.items()}
                        for mo, groups in models.items()
                    },
                }
            )
            for mo, groups in models.items():
                for g, per in groups.items():
                    for m, gm in per.items():
                        gate_metrics["/".join(_gate_label(x) for x in (label, mo, g, m))] = gm.mean
        return Report(
            family=FAMILY,
            signature=signature(variants=self.params["variants"], params=[("step", "summarize"), ("mean", "fsum")]),
            result={"settings": result_settings},
            metrics=gate_metrics,
            diagnostics=self.notes(),
        )


def summarize_row(
    task_id: Optional[str],
    values: Mapping[str, Any],
    *,
    source: int,
    setting: str,
    input: str,
    format: str,
    model: str,
    group: str,
) -> ItemRow:
    """A ``summarize`` item row: ``task_id``, the metric values, then the plain fields (:data:`SUMMARY_FIELDS`)."""
    clash = [k for k in values if k in SUMMARY_FIELDS]
    if clash:
        raise ScoringError(f"a metric is named {clash[0]!r}, a reserved item-row field", path=input)
    row: ItemRow = {"task_id": task_id}
    row.update(values)
    row.update(source=source, setting=setting, input=input, format=format, model=model, group=group)
    return row


def summarize_item(
    record: Mapping[str, Any],
    *,
    setting: str,
    input: str = "-",
    source: int = 0,
    model: Optional[str] = None,
    metrics: Sequence[str] = (),
    variants: Sequence[str] = (),
) -> ItemRow:
    """The ``summarize`` item row of one evaluated JSONL record (``model``: the name used when the
    record has no ``model_id``; default the setting label).

    >>> rec = {"task_id": "t", "answerability": ["PARTIAL"], "metrics": {"RB_llm": [0.8], "BertKPrec": [0.1, 0.3]}}
    >>> summarize_item(rec, setting="demo")
    {'task_id': 't', 'RB_llm': 0.8, 'BertKPrec': 0.3, 'source': 0, 'setting': 'demo', 'input': '-', \
'format': 'jsonl', 'model': 'demo', 'group': 'Partial'}
    """
    variants = check_variants(variants)
    if not isinstance(record.get("metrics"), dict):
        raise ScoringError("expected an object with a 'metrics' object", field="metrics")
    values = summary_values(record["metrics"])
    if metrics:
        values = {k: v for k, v in values.items() if k in metrics}
    name = record.get("model_id")
    return summarize_row(
        _task_id(record),
        values,
        source=source,
        setting=setting,
        input=input,
        format="jsonl",
        model=str(name) if name is not None else (model or setting),
        group=answerability_group(answerability_of(dict(record), alias="answerability_alias" in variants)),
    )


def _gate_label(text: str) -> str:
    return "_".join(text.split()).replace("<", "_").replace(">", "_").replace("=", "_")


def _analytics_rows(path: str, data: Dict[str, Any]) -> Iterator[Tuple[Optional[str], str, str, Dict[str, Any]]]:
    """``(task_id, model, group, values)`` for each evaluation of an InspectorRAGet analytics file.

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
        label = answerability_of(task, alias=True) if "answerability" not in task else answerability_of(task)
        answer[str(task["task_id"])] = label
    evals = data.get("evaluations")
    key = "annotations"
    if evals is None:
        evals, key = data.get("results"), "scores"
    if not isinstance(evals, list):
        raise ScoringError("analytics file without 'evaluations' or 'results'", path=path)
    if not evals:
        raise ScoringError("analytics file holds no evaluations", path=path)
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
            if value is None or is_number(value):
                values[metric] = value
        yield task_id, str(ev.get("model_id")), answerability_group(answer[task_id]), values


def _fmt(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def format_summary_text(report: Report, outcomes: Sequence[Any] = ()) -> str:
    """The ``text`` format of a ``summarize`` report: tables per setting, one row per model and
    group, one column per metric (means); any other mtrag report in the common text format."""
    if "settings" not in report.result:
        return render(report, "text", outcomes)
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


#: The family's own renderings (format name -> renderer), used by the CLI and ``rageval-min merge``.
REPORT_FORMATS = {"text": format_summary_text}
