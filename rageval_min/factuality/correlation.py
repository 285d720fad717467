"""Mirrors google-deepmind/long-form-factuality@9d27158:eval/correlation_vs_factscore.py: the SAFE-vs-human study.

``factuality correlate`` has three modes (:data:`CORRELATE_MODES`): Pearson and
Spearman per line of ``{x, y}`` pairs, over two columns of a table, or the study
(:func:`correlation_study`) between FActScore's human labels and SAFE's
per-response metrics.  The statistics are :mod:`~rageval_min.factuality.scipy_stats`'s.
"""

import functools
import os
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from .._contract import Accumulator, ItemRow, finish, register_accumulator
from .._io import iter_records
from .._metrics import Input, InputField, Metric
from .._parallel import accumulate_items
from .._state_schema import Either, Fields, Flag, Items, Maybe, OneOf, Schema, Switch, Table, Text
from .._state_schema import Number as FiniteNumber
from ..errors import ScoringError
from ..report import Report
from ._common import (
    COMMAND_VARIANTS,
    FAMILY,
    IRRELEVANT_LABEL,
    NOT_SUPPORTED_LABEL,
    SUPPORTED_LABEL,
    Number,
    _clean,
    _is_number,
    _nan_none,
    _no_valid,
    _noting,
    _shard,
    check_variants,
    parse_number,
    signature,
)
from .factscorer import human_label_counts
from .metric_utils import calculate_metrics, round_to_sigfigs
from .scipy_stats import _NAN_RESULT, CorrelationResult, pearson, spearman


class StudyResult(NamedTuple):
    """One metric of the SAFE-vs-human study: pairs used and both correlations."""

    metric: str
    n: int
    pearson: CorrelationResult
    spearman: CorrelationResult


def study_metrics_human(counts: Mapping[str, int]) -> Dict[str, Number]:
    """FActScore-side metric dict of the study from ``{"S", "IR", "NS"}`` counts:
    ``supported``, ``irrelevant``, ``not_supported``, ``num_claims`` (= S+IR+NS,
    IR included) and ``f1_100`` (always the default K).

    >>> study_metrics_human({"S": 7, "IR": 9, "NS": 19})["f1_100"]
    0.1111111111111111
    """
    s, ir, ns = counts["S"], counts["IR"], counts["NS"]
    return {
        "supported": s,
        "irrelevant": ir,
        "not_supported": ns,
        "num_claims": s + ir + ns,
        "f1_100": calculate_metrics(s, ns),
    }


_SAFE_KEYS = (
    ("supported", ("supported", SUPPORTED_LABEL)),
    ("irrelevant", ("irrelevant", IRRELEVANT_LABEL)),
    ("not_supported", ("not_supported", NOT_SUPPORTED_LABEL)),
    ("num_claims", ("num_claims",)),
)


def study_metrics_safe(record: Mapping[str, Any], *, where: str = "") -> Dict[str, Number]:
    """SAFE-side metric dict of the study from a SAFE result (``Supported``,
    ``Not Supported``, ``Irrelevant``, ``num_claims``) or the same names in
    snake case; absent keys stay absent (``identify_facts`` only gives
    ``num_claims``).  ``f1_100`` is added when S and NS are both present.
    """
    out: Dict[str, Number] = {}
    for name, keys in _SAFE_KEYS:
        for key in keys:
            if key in record and record[key] is not None:
                value = record[key]
                if not _is_number(value):
                    raise ScoringError(f"expected a number, got {value!r}", record=where or None, field=key)
                out[name] = value
                break
    if "supported" in out and "not_supported" in out:
        try:
            out["f1_100"] = calculate_metrics(out["supported"], out["not_supported"])
        except ScoringError as exc:
            raise ScoringError(exc.msg, record=where or None) from None
    return out


def correlation_study(
    factscore_side: Sequence[Mapping[str, Number]],
    safe_side: Sequence[Mapping[str, Number]],
    *,
    variants: Iterable[str] = (),
) -> List[StudyResult]:
    """``eval/correlation_vs_factscore.compute_correlation``.

    For each metric name present in both sides (sorted here; the reference
    iterates a set), build the two columns with -1 for a missing value, drop
    every index where either side is -1 (a genuine -1 is dropped too), and
    correlate FActScore first.  With <= 1 pair left the result is nan/nan.
    """
    if len(factscore_side) != len(safe_side):
        raise ScoringError(f"{len(factscore_side)} human responses but {len(safe_side)} SAFE responses")
    metric_names: Set[str] = set()
    for d in factscore_side:
        metric_names |= set(d)
    safe_names: Set[str] = set()
    for d in safe_side:
        safe_names |= set(d)
    results = []
    for metric in sorted(metric_names & safe_names):
        xs: List[Number] = []
        ys: List[Number] = []
        for fd, sd in zip(factscore_side, safe_side):
            a = fd.get(metric, -1)
            b = sd.get(metric, -1)
            if a == -1 or b == -1:
                continue
            xs.append(a)
            ys.append(b)
        if len(xs) <= 1:
            results.append(StudyResult(metric, len(xs), _NAN_RESULT, _NAN_RESULT))
            continue
        results.append(StudyResult(metric, len(xs), pearson(xs, ys, variants=variants), spearman(xs, ys)))
    return results


CORRELATE_MODES = ("pairs", "table", "study")


def _corr_dict(res: CorrelationResult) -> Dict[str, Any]:
    return {"statistic": _clean(res.statistic), "pvalue": _clean(res.pvalue)}


def correlate_item(record: Mapping[str, Any], *, line: int, variants: Iterable[str] = ()) -> ItemRow:
    """One ``correlate`` pairs-mode item row: ``{"line", "id"?, "pearson", "pearson_pvalue", "spearman",
    "spearman_pvalue"}`` (null where undefined), or ``{"line", "id"?, "error"}``."""
    row: ItemRow = {"line": line}
    if "id" in record:
        row["id"] = record["id"]
    x, y = record.get("x"), record.get("y")
    if not isinstance(x, list) or not isinstance(y, list):
        row["error"] = "x and y must be lists of numbers"
        return row
    try:
        p, s = pearson(x, y, variants=variants), spearman(x, y)
    except ScoringError as exc:
        row["error"] = str(exc)
        return row
    row.update(
        pearson=_clean(p.statistic),
        pearson_pvalue=_clean(p.pvalue),
        spearman=_clean(s.statistic),
        spearman_pvalue=_clean(s.pvalue),
    )
    return row


def _row_line(row: Mapping[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if "id" in row:
        out["id"] = row["id"]
    if "error" in row:
        out["error"] = row["error"]
        return out
    out["pearson"] = {"statistic": row["pearson"], "pvalue": row["pearson_pvalue"]}
    out["spearman"] = {"statistic": row["spearman"], "pvalue": row["spearman_pvalue"]}
    return out


#: What an id read from an input line may be (any JSON scalar).
_ID = Either((Text(), FiniteNumber(), Flag(), OneOf((None,))))
_STATISTIC = Fields({"statistic": Maybe(FiniteNumber(lo=-1, hi=1)), "pvalue": Maybe(FiniteNumber(lo=0, hi=1))})
#: A pairs-mode line of the state: an error, or the two correlations (see :func:`_row_line`).
_ERROR_LINE = Fields({"id": _ID, "error": Text()}, optional=("id",))
_CORRELATION_LINE = Fields({"id": _ID, "pearson": _STATISTIC, "spearman": _STATISTIC}, optional=("id",))


@register_accumulator
class CorrelateAccumulator(Accumulator):
    """``factuality correlate``: Pearson and Spearman with p-values, in three modes.

    ``pairs``: one correlation per input line (the item row holds it; the state
    keeps the output lines).  ``table``: the item rows are ``{"line", "x",
    "y"}`` and the state keeps the pairs (ranks and numpy means need all of
    them).  ``study``: one row per labelled response, ``human.<metric>`` and
    ``safe.<metric>`` values; the state keeps them.
    """

    FAMILY = FAMILY
    COMMAND = "correlate"
    METRICS = (
        Metric("pearson", "higher", "statistic", "Pearson's r (scipy 1.12 pearsonr)", True, lo=-1.0, hi=1.0),
        Metric("spearman", "higher", "statistic", "Spearman's rho (scipy 1.12 spearmanr)", True, lo=-1.0, hi=1.0),
        Metric("pearson_pvalue", "neither", "statistic", "two-sided p-value of Pearson's r", True, lo=0.0, hi=1.0),
        Metric("spearman_pvalue", "neither", "statistic", "two-sided p-value of Spearman's rho", True, lo=0.0, hi=1.0),
        Metric("x", "neither", "statistic", "table mode: the row's x value", True),
        Metric("y", "neither", "statistic", "table mode: the row's y value", True),
        Metric("human.{metric}", "neither", "count", "study: the response's metric from its human labels", True),
        Metric("safe.{metric}", "neither", "count", "study: the response's metric from SAFE", True),
        Metric("n_lines", "neither", "count", "output lines (pairs mode: input lines; table mode: 1)"),
        Metric("n_errors", "lower", "count", "pairs-mode lines without a valid x/y pair"),
        Metric("n_responses", "neither", "count", "study: labelled responses"),
        Metric("n.{metric}", "neither", "count", "study: pairs left for the metric after dropping -1 (missing)"),
        Metric(
            "pearson.{metric}",
            "higher",
            "statistic",
            "study: Pearson's r of human vs SAFE for the metric",
            lo=-1.0,
            hi=1.0,
        ),
        Metric("spearman.{metric}", "higher", "statistic", "study: Spearman's rho of human vs SAFE", lo=-1.0, hi=1.0),
        Metric("pearson_pvalue.{metric}", "neither", "statistic", "study: p-value of pearson.{metric}", lo=0.0, hi=1.0),
        Metric(
            "spearman_pvalue.{metric}", "neither", "statistic", "study: p-value of spearman.{metric}", lo=0.0, hi=1.0
        ),
    )
    INPUTS = (
        Input(
            "--input",
            "pairs mode: {x: [...], y: [...]} per line; table mode: the --x and --y columns of a table",
            "id",
            (
                InputField("id", ("string", "integer"), False, "the output line has no id"),
                InputField(
                    "x", ("array",), True, "an error line (pairs mode); table mode: the --x column, an input error"
                ),
                InputField(
                    "y", ("array",), True, "an error line (pairs mode); table mode: the --y column, an input error"
                ),
            ),
        ),
        Input(
            "--labeled",
            "FActScore labelled files (the study's human side)",
            "topic",
            (
                InputField("topic", ("string",), False, "matched by line only"),
                InputField("annotations", ("array", "null"), False, "not a labelled response: skipped"),
                InputField(
                    "annotations[].human-atomic-facts[].label", ("string",), True, "an input error (S, NS or IR)"
                ),
            ),
        ),
        Input(
            "--safe",
            "SAFE per-response metrics (the study's SAFE side)",
            "line",
            (
                InputField("model_name", ("string",), True, "matched as the model 'None': an input error"),
                InputField("line", ("integer",), False, "matched by topic"),
                InputField("topic", ("string",), False, "an input error when line is missing too"),
                InputField("supported", ("number", "null"), False, "Supported, else left out of the study"),
                InputField("not_supported", ("number", "null"), False, "Not Supported, else left out"),
                InputField("irrelevant", ("number", "null"), False, "Irrelevant, else left out"),
                InputField("num_claims", ("number", "null"), False, "left out of the study"),
            ),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "mode": Text(choices=CORRELATE_MODES),
                "variants": Items(Text(choices=COMMAND_VARIANTS["correlate"]), unique=True),
            }
        ),
        data=Fields(
            {
                "rows": Switch(
                    "params.mode",
                    {
                        "pairs": Items(Either((_ERROR_LINE, _CORRELATION_LINE))),
                        "table": Items(Fields({"x": FiniteNumber(), "y": FiniteNumber()})),
                        "study": Items(Table(Maybe(FiniteNumber()), key_pattern=r"(?s)(human|safe)\..+")),
                    },
                )
            }
        ),
    )

    def __init__(self, *, mode: str = "pairs", variants: Sequence[str] = ()) -> None:
        if mode not in CORRELATE_MODES:
            raise ScoringError(f"unknown correlate mode {mode!r}")
        super().__init__(mode=mode, variants=list(check_variants(variants, "correlate")))
        self.rows: List[Dict[str, Any]] = []

    def add(self, item: ItemRow) -> None:
        mode = self.params["mode"]
        if mode == "pairs":
            self.rows.append(_row_line(item))
        elif mode == "table":
            self.rows.append({"x": item["x"], "y": item["y"]})
        else:
            self.rows.append({k: v for k, v in item.items() if k.startswith(("human.", "safe."))})

    def _data(self) -> Dict[str, Any]:
        return {"rows": self.rows}

    def _load(self, data: Mapping[str, Any]) -> None:
        self.rows = list(data["rows"])

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, CorrelateAccumulator)
        self.rows.extend(other.rows)

    def finalize(self) -> Report:
        mode = self.params["mode"]
        variants = self.params["variants"]
        if mode == "study":
            return self._study()
        if mode == "table":
            xs = [r["x"] for r in self.rows]
            ys = [r["y"] for r in self.rows]
            p, s = pearson(xs, ys, variants=variants), spearman(xs, ys)
            lines = [{"pearson": _corr_dict(p), "spearman": _corr_dict(s)}]
        else:
            lines = list(self.rows)
        metrics: Dict[str, Any] = {"n_lines": len(lines), "n_errors": sum(1 for d in lines if "error" in d)}
        if len(lines) == 1 and "error" not in lines[0]:
            for name in ("pearson", "spearman"):
                metrics[name] = lines[0][name]["statistic"]
                metrics[f"{name}_pvalue"] = lines[0][name]["pvalue"]
        sig = signature(command="correlate", variants=variants, params=[("mode", mode), ("alternative", "two-sided")])
        return Report(FAMILY, sig, {"lines": lines}, metrics, self.notes())

    def _study(self) -> Report:
        human = [{k[6:]: v for k, v in r.items() if k.startswith("human.")} for r in self.rows]
        safe = [{k[5:]: v for k, v in r.items() if k.startswith("safe.")} for r in self.rows]
        results = correlation_study(human, safe, variants=self.params["variants"])
        lines = []
        metrics: Dict[str, Any] = {"n_responses": len(human)}
        for r in results:
            lines.append(
                {"metric": r.metric, "n": r.n, "pearson": _corr_dict(r.pearson), "spearman": _corr_dict(r.spearman)}
            )
            for name, res in (("pearson", r.pearson), ("spearman", r.spearman)):
                metrics[f"{name}.{r.metric}"] = _nan_none(res.statistic)
                metrics[f"{name}_pvalue.{r.metric}"] = _nan_none(res.pvalue)
            metrics[f"n.{r.metric}"] = r.n
        display = {
            r.metric: {
                "pearson": [round(r.pearson.statistic, 3), round_to_sigfigs(r.pearson.pvalue, 3)],
                "spearman": [round(r.spearman.statistic, 3), round_to_sigfigs(r.spearman.pvalue, 3)],
            }
            for r in results
        }
        notes = self.notes()
        missing = sum(1 for d in safe if not d)
        if missing:
            notes.append(f"{missing} of {len(human)} labelled responses have no SAFE line (dropped per metric)")
        result = {"n_responses": len(human), "lines": lines, "display": _clean(display)}
        sig = signature(
            command="correlate",
            variants=self.params["variants"],
            params=[("mode", "study"), ("order", "sorted_files"), ("alternative", "two-sided")],
        )
        return Report(FAMILY, sig, result, metrics, notes)


def correlate_file(
    path: str,
    *,
    variants: Iterable[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
    allow_empty: Optional[bool] = None,
) -> Report:
    """``correlate`` pairs mode: one ``{x: [...], y: [...]}`` per line; a bad line is an error line.

    ``allow_empty`` (a shard, see :func:`f1k_file`) accepts a file without a valid pair.
    """
    names = check_variants(variants, "correlate")
    acc = CorrelateAccumulator(mode="pairs", variants=names)
    accumulate_items(
        acc,
        functools.partial(_correlate_record, variants=names),
        iter_records(path),
        on_item=_noting(acc, path, on_item),
    )
    if all("error" in row for row in acc.rows) and not _shard(allow_empty):
        raise _no_valid(path, f"none of the {len(acc.rows)} line(s) holds a valid x/y pair")
    return finish(acc)


def _correlate_record(numbered: Tuple[int, Mapping[str, Any]], *, variants: Sequence[str]) -> ItemRow:
    """The per-item work of ``correlate`` pairs mode (picklable)."""
    lineno, rec = numbered
    return correlate_item(rec, line=lineno, variants=variants)


def _table_record(numbered: Tuple[int, Mapping[str, Any]], *, x: str, y: str, path: str) -> ItemRow:
    """The item row of one table row (picklable): ``{"line", "x", "y"}``."""
    lineno, rec = numbered
    values = []
    for col in (x, y):
        if col not in rec:
            raise ScoringError(f"no column {col!r}", path=path, line=lineno)
        try:
            values.append(parse_number(rec[col], col))
        except ValueError as exc:
            raise ScoringError(str(exc), path=path, line=lineno) from None
    return {"line": lineno, "x": values[0], "y": values[1]}


def _study_record(joined: Tuple[Tuple[str, int, str], Mapping[str, Any], Mapping[str, Any]]) -> ItemRow:
    """The study item row of one labelled response and its SAFE metrics (picklable)."""
    (model, line, topic), human, safe = joined
    row: ItemRow = {"model": model, "line": line, "topic": topic}
    row.update({f"human.{k}": v for k, v in human.items()})
    row.update({f"safe.{k}": v for k, v in safe.items()})
    return row


def correlate_table_file(
    path: str,
    *,
    x: str,
    y: str,
    variants: Iterable[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
    allow_empty: Optional[bool] = None,
) -> Report:
    """``correlate`` table mode: columns ``x`` and ``y`` of a JSONL/JSON/CSV/TSV table (x first).

    ``allow_empty`` (a shard, see :func:`f1k_file`) accepts an empty table.
    """
    names = check_variants(variants, "correlate")
    acc = CorrelateAccumulator(mode="table", variants=names)
    accumulate_items(acc, functools.partial(_table_record, x=x, y=y, path=path), iter_records(path), on_item=on_item)
    if not acc.rows and not _shard(allow_empty):
        raise _no_valid(path, "the table has no row")
    return finish(acc)


def labeled_files(paths: Sequence[str]) -> List[str]:
    """FActScore labelled files: each path, or the ``*.jsonl`` files without ``_`` of a folder (sorted)."""
    files: List[str] = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if n.endswith(".jsonl") and "_" not in n)
            if not names:
                raise ScoringError("no *.jsonl labelled files (without '_') here", path=path)
            files.extend(os.path.join(path, n) for n in names)
        else:
            files.append(path)
    return files


def study_file(
    labeled: Sequence[str],
    safe_path: str,
    *,
    variants: Iterable[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """The SAFE-vs-human study (``correlate --labeled ... --safe ...``).

    The item rows are the labelled responses (sorted files, then line order):
    ``{"model", "line", "topic", "human.<metric>"..., "safe.<metric>"...}``.
    The SAFE file is indexed first (by ``model_name`` and ``line`` or ``topic``).
    """
    names = check_variants(variants, "correlate")
    keys: List[Tuple[str, int, str]] = []
    human: List[Dict[str, Any]] = []
    for path in labeled_files(labeled):
        model = os.path.basename(path).split(".")[0]
        for lineno, rec in iter_records(path):
            counts = human_label_counts(rec, where=f"{path}:{lineno}")
            if counts is None:
                continue
            keys.append((model, lineno - 1, str(rec.get("topic", ""))))
            human.append(study_metrics_human(counts))
    if not human:
        raise _no_valid(", ".join(labeled), "no labelled response with human labels")
    by_line = {(m, line): i for i, (m, line, _) in enumerate(keys)}
    by_topic: Dict[Tuple[str, str], int] = {}
    for i, (m, _, topic) in enumerate(keys):
        by_topic.setdefault((m, topic), i)
    safe: List[Dict[str, Any]] = [{} for _ in human]
    for lineno, rec in iter_records(safe_path):
        where = f"{safe_path}:{lineno}"
        model = str(rec.get("model_name"))
        if "line" in rec:
            idx = by_line.get((model, rec["line"]))
        elif "topic" in rec:
            idx = by_topic.get((model, rec["topic"]))
        else:
            raise ScoringError("needs model_name and line (0-based) or topic", path=safe_path, line=lineno)
        if idx is None:
            raise ScoringError(
                f"no labelled response for model_name={model!r} "
                f"{'line' if 'line' in rec else 'topic'}={rec.get('line', rec.get('topic'))!r}",
                path=safe_path,
                line=lineno,
            )
        safe[idx] = study_metrics_safe(rec, where=where)
    acc = CorrelateAccumulator(mode="study", variants=names)
    accumulate_items(acc, _study_record, zip(keys, human, safe), on_item=on_item)
    return finish(acc)
