"""Pipeline step: ``judge agreement``, how well a judge agrees with human labels.

Reads the judge's labels and the human labels (JSON Lines, JSON, CSV or TSV
records), joins them by id and computes the statistics of
:mod:`rageval_min._agreement` with a seeded bootstrap interval for each.

The judge file is either a plain labels file (``source="labels"``: an id field
and a label field) or a family's judged records, read directly:

``rgb-reject``
    ``rgb judge`` records of the rejection judge: id ``id``, label 1 when
    ``evaluation`` says the question was not addressed (the family's
    :func:`rageval_min.rgb.parse_reject_judgement`), else 0.
``rgb-fact``
    ``rgb judge`` records of the error-detection judge: id ``id``, label 1
    when ``evaluation`` says the errors were identified
    (:func:`rageval_min.rgb.parse_fact_judgement`), else 0.
``mtrag-idk``
    MT-RAG judged records: id ``task_id``, label the first value of
    ``metrics.idk_eval`` (1, 0.5 or 0; the family's ``"unknown"`` is no verdict).
``pairwise``
    ``pairwise judge`` records: id ``cmp_index``, label the choice letter the
    family extracts from the judge column (``judge``); exact matches (``EM``)
    are not judged and are left out, as are failed calls.

A judged record without a verdict (no ``evaluation``, a null answer, an
unparseable choice) is a missing judge rating, not an error.

The human side is one label per item (``--human``: id and label fields), or
several raters (``--ratings``: id and ``labels``, a list with one entry per
rater, ``null`` for a missing rating).  Items are the ids of the human file,
in its order.  The statistics:

* two-rater statistics (``raw_agreement``, the confusion matrix, base rates,
  Cohen's ``kappa``, ``kappa_linear``, ``kappa_quadratic``) compare the judge
  with the *reference label*: the human label, or with several raters their
  plurality label (an item whose top labels tie has no reference and is left
  out of these statistics).  ``n`` counts the items with a judge label and a
  reference label;
* ``fleiss_kappa`` and ``fleiss_kappa_randolph`` use every rater (the judge
  first) on the items that every rater labelled;
* ``alpha`` is Krippendorff's alpha at ``level`` over every rater and item,
  missing ratings allowed.

The label domain (confusion-matrix order, the positions behind the weighted
kappas and ordinal alpha, the categories of Randolph's kappa) is the sorted
set of observed labels, or ``labels`` when given.  Each statistic's interval
resamples the items (:func:`rageval_min._agreement.bootstrap_intervals`).
Fewer than ``min_n`` items in ``n`` is a failed status of its own.
"""

import hashlib
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .._io import iter_records
from .._numbers import MAX_COUNT
from .._signature import make_signature
from ..errors import ScoringError
from ..gates import GateOutcome
from ..report import Report
from . import agreement as ag

__all__ = [
    "DEFAULT_MIN_N",
    "DEFAULT_RESAMPLES",
    "SOURCES",
    "STATISTICS",
    "agreement_report",
    "file_sha256",
    "metric_names",
    "read_human",
    "read_judge",
]

FAMILY = "judge-agreement"
REFERENCE = "rageval-min/agreement@none"
DEFAULT_MIN_N = 30
DEFAULT_RESAMPLES = 1000
#: The statistics with an interval (each also gateable as NAME.ci_low and NAME.ci_high).
STATISTICS = (
    "raw_agreement",
    "kappa",
    "kappa_linear",
    "kappa_quadratic",
    "fleiss_kappa",
    "fleiss_kappa_randolph",
    "alpha",
)
SOURCES = ("labels", "rgb-reject", "rgb-fact", "mtrag-idk", "pairwise")
#: The judge file's id and label fields by source (None: the family's own label).
SOURCE_FIELDS = {
    "rgb-reject": ("id", "evaluation"),
    "rgb-fact": ("id", "evaluation"),
    "mtrag-idk": ("task_id", None),
    "pairwise": ("cmp_index", "judge"),
}


def metric_names() -> List[str]:
    """Every gateable name: ``n``, the statistics and their interval bounds."""
    return ["n"] + list(STATISTICS) + [f"{s}.{b}" for s in STATISTICS for b in ("ci_low", "ci_high")]


def file_sha256(path: str) -> str:
    """The sha256 hex digest of a file's bytes."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise ScoringError(f"cannot read: {exc.strerror or exc}", path=path) from None
    return h.hexdigest()


def _id(rec: Dict[str, Any], field: str, path: str, line: int) -> Any:
    if field not in rec:
        raise ScoringError("missing id", path=path, line=line, field=field)
    value = rec[field]
    if value is None or isinstance(value, (list, dict, bool)):
        raise ScoringError(f"an id must be a string or a number, got {value!r}", path=path, line=line, field=field)
    return value


def _label(value: Any, path: str, line: int, field: str) -> Optional[ag.Label]:
    try:
        return ag.normalize_label(value)
    except TypeError as exc:
        raise ScoringError(str(exc), path=path, line=line, field=field) from None


def _family_label(rec: Dict[str, Any], source: str, field: str, path: str, line: int) -> Optional[ag.Label]:
    if source == "mtrag-idk":
        metrics = rec.get("metrics")
        values = metrics.get("idk_eval") if isinstance(metrics, dict) else None
        if values is None or values == []:
            return None
        if not isinstance(values, list):
            raise ScoringError("expected a list", path=path, line=line, field="metrics.idk_eval")
        if isinstance(values[0], str):
            return None  # the family's mark of an unparseable judge answer ("unknown")
        return _label(values[0], path, line, "metrics.idk_eval")
    text = rec.get(field)
    if not isinstance(text, str):
        return None
    if source == "pairwise":
        from .. import pairwise

        return None if text == pairwise.FAIL_MESSAGE else pairwise.extract_choice(text)
    from .. import rgb

    parse = rgb.parse_reject_judgement if source == "rgb-reject" else rgb.parse_fact_judgement
    return int(parse(text))


def _exact_match(rec: Dict[str, Any], field: str) -> bool:
    from .. import pairwise

    return rec.get(field) == pairwise.EM_MARKER


class _Labels(Dict[Any, Any]):
    """id -> label, with the line of each id (for errors that name it)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: Dict[Any, int] = {}


def read_judge(
    path: str, *, source: str = "labels", id_field: str = "id", label_field: str = "label"
) -> Dict[Any, Any]:
    """id -> the judge's label (None: no verdict) of a labels file or a family's judged records."""
    if source not in SOURCES:
        raise ScoringError(f"--from must be one of {', '.join(SOURCES)}, got {source!r}")
    out = _Labels()
    lines = out.lines
    for line, rec in iter_records(path):
        if source == "pairwise" and _exact_match(rec, label_field):
            continue  # never judged; ref-vs-ref comparisons even share their cmp_index
        rid = _id(rec, id_field, path, line)
        if rid in out:
            raise ScoringError(
                f"duplicate id {rid!r} (first at line {lines[rid]})", path=path, line=line, field=id_field
            )
        lines[rid] = line
        if source == "labels":
            if label_field not in rec:
                raise ScoringError("missing label", path=path, line=line, field=label_field)
            out[rid] = _label(rec[label_field], path, line, label_field)
        else:
            out[rid] = _family_label(rec, source, label_field, path, line)
    return out


class Human(NamedTuple):
    """The human side: the ids in file order and their ratings (one list per item)."""

    ids: List[Any]
    ratings: List[List[Optional[ag.Label]]]
    raters: int
    lines: Dict[Any, int] = {}  # id -> its line


def read_human(path: str, *, several: bool, id_field: str = "id", label_field: str = "label") -> Human:
    """The human labels: one per item (``several=False``), or a ``labels`` list per item of equal length."""
    ids: List[Any] = []
    ratings: List[List[Optional[ag.Label]]] = []
    seen: Dict[Any, int] = {}
    field = "labels" if several else label_field
    for line, rec in iter_records(path):
        rid = _id(rec, id_field, path, line)
        if rid in seen:
            raise ScoringError(
                f"duplicate id {rid!r} (first at line {seen[rid]})", path=path, line=line, field=id_field
            )
        seen[rid] = line
        if field not in rec:
            raise ScoringError("missing", path=path, line=line, field=field)
        value = rec[field]
        if several:
            if not isinstance(value, list) or not value:
                raise ScoringError("expected a non-empty list of labels", path=path, line=line, field=field)
            if ratings and len(value) != len(ratings[0]):
                raise ScoringError(
                    f"expected {len(ratings[0])} ratings (as on line {seen[ids[0]]}), got {len(value)}",
                    path=path,
                    line=line,
                    field=field,
                )
            row = [_label(v, path, line, f"{field}[{i}]") for i, v in enumerate(value)]
        else:
            row = [_label(value, path, line, field)]
        ids.append(rid)
        ratings.append(row)
    return Human(ids, ratings, len(ratings[0]) if ratings else 0, seen)


def plurality(ratings: Sequence[Optional[ag.Label]]) -> Optional[ag.Label]:
    """The most frequent non-missing label, or None when there is none or the top labels tie.

    >>> plurality(["a", "b", "a", None]), plurality(["a", "b"]), plurality([None])
    ('a', None, None)
    """
    counts: Dict[ag.Label, int] = {}
    for v in ratings:
        if v is not None:
            counts[v] = counts.get(v, 0) + 1
    if not counts:
        return None
    top = max(counts.values())
    best = [v for v, c in counts.items() if c == top]
    return best[0] if len(best) == 1 else None


class Inputs(NamedTuple):
    """The joined ratings: per item the judge first, then the human raters; and the reference label."""

    ids: List[Any]
    rows: List[List[Optional[ag.Label]]]
    refs: List[Optional[ag.Label]]
    only_judge: int
    judge_absent: int
    lines: Tuple[Dict[Any, int], Dict[Any, int]] = ({}, {})  # id -> line, in the judge and human files


def join(judge: Dict[Any, Any], human: Human) -> Inputs:
    """Join by id: the items of the human file, each with the judge's label (None when absent)."""
    rows = [[judge.get(rid)] + list(r) for rid, r in zip(human.ids, human.ratings)]
    refs = [r[0] if human.raters == 1 else plurality(r) for r in human.ratings]
    known = set(human.ids)
    only_judge = sum(1 for rid in judge if rid not in known)
    absent = sum(1 for rid in human.ids if rid not in judge)
    return Inputs(list(human.ids), rows, refs, only_judge, absent, (getattr(judge, "lines", {}), human.lines))


def _culprit(data: Inputs, order: Optional[Sequence[ag.Label]], paths: Optional[Sequence[str]]) -> Dict[str, Any]:
    """Where the first label outside ``order`` (or, without it, of the other kind) is: the file of
    its rater (the judge's or the human one) and its id, for the error message."""
    first = next((x for r in data.rows for x in r if x is not None), None)
    for rid, row in zip(data.ids, data.rows):
        for col, x in enumerate(row):
            odd = x not in set(order) if order is not None else isinstance(x, str) != isinstance(first, str)
            if x is not None and odd and paths:
                line = data.lines[0 if col == 0 else 1].get(rid)
                return {"path": paths[0 if col == 0 else 1], "line": line, "record": f"id={rid!r}"}
    return {}


def _domain(data: Inputs, order: Optional[Sequence[ag.Label]], level: str, paths: Optional[Sequence[str]]) -> List[Any]:
    values = [x for r in data.rows for x in r]
    try:
        domain = ag.label_domain(values, order)
    except ValueError as exc:
        raise ScoringError(f"{exc} (--labels)", **_culprit(data, order, paths)) from None
    if level in ("interval", "ratio") and any(isinstance(x, str) for x in domain):
        raise ScoringError(f"--level {level} needs numeric labels")
    return domain


def statistics(
    rows: Sequence[Sequence[Optional[ag.Label]]],
    refs: Sequence[Optional[ag.Label]],
    domain: Sequence[ag.Label],
    level: str,
) -> Dict[str, Optional[float]]:
    """Every statistic of :data:`STATISTICS` on these items (see the module docstring)."""
    judge = [r[0] for r in rows]
    complete = [r for r in rows if all(x is not None for x in r)]
    table = ag.fleiss_table(complete, domain)
    return {
        "raw_agreement": ag.raw_agreement(judge, refs),
        "kappa": ag.cohen_kappa(judge, refs, domain=domain),
        "kappa_linear": ag.cohen_kappa(judge, refs, weights="linear", domain=domain),
        "kappa_quadratic": ag.cohen_kappa(judge, refs, weights="quadratic", domain=domain),
        "fleiss_kappa": ag.fleiss_kappa(table, "fleiss") if table else None,
        "fleiss_kappa_randolph": ag.fleiss_kappa(table, "randolph") if table else None,
        "alpha": ag.krippendorff_alpha(rows, level, domain),
    }


def _intervals(
    data: Inputs, domain: Sequence[ag.Label], level: str, *, resamples: int, seed: int, alpha: float
) -> Dict[str, Tuple[Optional[float], Optional[float]]]:
    def draw(positions: Sequence[int]) -> Dict[str, Optional[float]]:
        return statistics([data.rows[i] for i in positions], [data.refs[i] for i in positions], domain, level)

    return ag.bootstrap_intervals(len(data.rows), draw, resamples=resamples, seed=seed, alpha=alpha)


def _base_rates(data: Inputs, domain: Sequence[ag.Label]) -> List[Dict[str, Any]]:
    pairs = [(r[0], ref) for r, ref in zip(data.rows, data.refs) if r[0] is not None and ref is not None]
    judge = ag.base_rates([p[0] for p in pairs], domain)
    human = ag.base_rates([p[1] for p in pairs], domain)
    return [{"label": label, "judge": judge[label], "human": human[label]} for label in domain]


class Options(NamedTuple):
    """What changes the numbers of ``judge agreement`` (all recorded in the signature)."""

    level: str = "nominal"
    labels: Optional[Sequence[ag.Label]] = None
    min_n: int = DEFAULT_MIN_N
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    alpha: float = 0.05
    source: str = "labels"


def _check(options: Options) -> None:
    ag.check_level(options.level)
    if not 0 < options.alpha < 1:
        raise ScoringError(f"--alpha must be between 0 and 1, got {options.alpha!r}")
    if not 1 <= options.resamples <= 1_000_000:
        raise ScoringError(f"--resamples must be between 1 and 1000000, got {options.resamples!r}")
    if options.min_n < 1:
        raise ScoringError(f"--min-n must be at least 1, got {options.min_n!r}")
    if options.min_n > MAX_COUNT:
        raise ScoringError(f"--min-n must be at most 2**53, got a number of {len(str(options.min_n))} digits")


def agreement_report(data: Inputs, options: Options, *, raters: int, paths: Optional[Sequence[str]] = None) -> Report:
    """The report of ``judge agreement`` on joined inputs (``paths``: the judge's and the human file,
    named by an error about a label)."""
    _check(options)
    if data.rows and data.judge_absent == len(data.rows):
        raise ScoringError("no id of the labels file is in the judge file (check --id-field / --judge-id-field)")
    domain = _domain(data, options.labels, options.level, paths)
    values = statistics(data.rows, data.refs, domain, options.level)
    bounds = _intervals(
        data, domain, options.level, resamples=options.resamples, seed=options.seed, alpha=options.alpha
    )
    n = sum(1 for r, ref in zip(data.rows, data.refs) if r[0] is not None and ref is not None)
    enough = n >= options.min_n
    metrics: Dict[str, Any] = {"n": n}
    metrics.update(values)
    for name in STATISTICS:
        metrics[f"{name}.ci_low"], metrics[f"{name}.ci_high"] = bounds[name]
    judge = [r[0] for r in data.rows]
    result: Dict[str, Any] = {
        "status": "ok" if enough else "insufficient data",
        "items": len(data.rows),
        "n": n,
        "min_n": options.min_n,
        "raters": raters,
        "level": options.level,
        "judge_missing": sum(1 for x in judge if x is None),
        "no_reference": sum(1 for x in data.refs if x is None),
        "only_in_judge_file": data.only_judge,
        "fleiss_items": sum(1 for r in data.rows if all(x is not None for x in r)),
        "labels": list(domain),
        "base_rates": _base_rates(data, domain),
        "confusion_matrix": {
            "rows": "judge",
            "columns": "human",
            "counts": ag.confusion_matrix(judge, data.refs, domain),
        },
    }
    result.update(values)
    result["intervals"] = {name: {"low": bounds[name][0], "high": bounds[name][1]} for name in STATISTICS}
    result["bootstrap"] = {"resamples": options.resamples, "seed": options.seed, "level": 1 - options.alpha}
    diagnostics = []
    if not enough:
        diagnostics.append(f"insufficient data: {n} labelled item(s), fewer than --min-n {options.min_n}")
    if data.judge_absent:
        diagnostics.append(f"{data.judge_absent} item(s) of the labels file are not in the judge file")
    if data.only_judge:
        diagnostics.append(f"{data.only_judge} id(s) of the judge file have no human label")
    gate = GateOutcome("n", ">=", float(options.min_n), n, enough, f"n>={options.min_n}")
    return Report(
        family=FAMILY,
        signature=make_signature(FAMILY, REFERENCE, (), _signature_params(options, raters)),
        result=result,
        metrics=metrics,
        diagnostics=diagnostics,
        reference_pass=None,
        family_gates=[gate],
    )


def _signature_params(options: Options, raters: int) -> List[Tuple[str, object]]:
    labels = "observed" if options.labels is None else ",".join(str(x) for x in options.labels)
    return [
        ("from", options.source),
        ("raters", raters),
        ("level", options.level),
        ("labels", labels),
        ("min_n", options.min_n),
        ("resamples", options.resamples),
        ("seed", options.seed),
        ("alpha", options.alpha),
    ]


def agreement_files(
    judge_path: str,
    human_path: str,
    options: Options,
    *,
    several: bool,
    id_field: str = "id",
    label_field: str = "label",
    judge_id_field: Optional[str] = None,
    judge_label_field: Optional[str] = None,
) -> Report:
    """Read, join and report (``several``: ``human_path`` holds a ``labels`` list per item)."""
    default_id, default_label = SOURCE_FIELDS.get(options.source, (id_field, label_field))
    judge = read_judge(
        judge_path,
        source=options.source,
        id_field=judge_id_field or default_id,
        label_field=judge_label_field or default_label or "",
    )
    human = read_human(human_path, several=several, id_field=id_field, label_field=label_field)
    return agreement_report(join(judge, human), options, raters=1 + human.raters, paths=(judge_path, human_path))
