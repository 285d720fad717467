"""Pipeline step: is the candidate worse than the baseline?  Paired comparison of two item-row files.

The inputs are two JSON Lines files of item rows (what ``--per-item`` writes,
or any JSONL with a key field and numeric fields).  Rows are paired by
``key``; ids present on one side only are counted and the first 20 listed in
the diagnostics; a duplicate id on either side is an input error naming both
lines.

Every numeric field present on both sides is compared (or those named in
``metrics``).  A field whose values are all 0/1 (integers or booleans) is
**binary**; any other numeric field is **continuous**.  For each metric, over
the ``n`` pairs with a value on both sides:

* ``baseline``, ``candidate``: the means; ``delta = candidate - baseline``;
* ``ci_low``, ``ci_high``: the paired bootstrap percentile interval of the
  mean difference at level ``1 - alpha`` (``resamples`` draws through
  ``random.Random(seed)``; linear interpolation between order statistics);
  from :data:`SWITCH_N` pairs (``interval="auto"``) Student's t interval
  instead, see :mod:`rageval_min.compare.large_n`;
* ``p_value`` and ``test``: binary metrics use the exact two-sided McNemar test
  on the discordant pairs (``mcnemar_exact``); continuous metrics the
  two-sided paired t-test (``paired_t``, as ``scipy.stats.ttest_rel``; None
  where scipy gives NaN) or approximate randomization by seeded sign flips
  (``randomization``: ``p = (1 + #extreme) / (1 + resamples)``);
* binary only: ``improved`` and ``regressed`` (discordant pairs in the
  metric's better and worse direction) and the Wilson score intervals
  ``baseline_ci`` / ``candidate_ci`` of each rate.

Which direction is better comes from the declarations (``METRICS``) of the
command that wrote the rows: named in the rows themselves (their
``_rageval_min`` field, see :mod:`rageval_min.compare.writer`) or by
``family``; ``direction_overrides`` (``--higher-is-better``,
``--lower-is-better``, ``--neither``) come first.  A metric with no known
direction is an input error.  A ``neither`` metric (a descriptive count) gets
``increased``/``decreased`` instead of ``improved``/``regressed`` and the
verdict ``changed`` or ``no significant change``, never ``regressed``.  With a
family, its aggregates that are not means of item rows (grounding precision =
correct / answered, CHR, win rates, ...) are
compared too, under ``aggregate.NAME``: the family's accumulator recomputes
them from the paired rows, and the paired bootstrap resamples ids and
recomputes both sides through the accumulator (from :data:`SWITCH_N` pairs:
the delta method where the aggregate is a declared ratio of item fields).

Statistics are implemented with the standard library in
:mod:`rageval_min._stats` and checked against scipy and statsmodels in the
tests.
"""

import gc
import heapq
import json
import math
import operator
import random
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .. import _numbers, _stats
from .._contract import PROVENANCE_FIELD
from .._io import _escape_hit, iter_jsonl
from .._signature import make_signature
from .._speedups_loader import kernels
from ..errors import ScoringError
from ..gates import GateOutcome
from ..report import Report
from .columns import MISSING, Columns, LineView, RowView, columns_of
from .large_n import INTERVALS, SWITCH_N, aggregate_note, delta_method_interval, ratio_fields, uses_t
from .writer import declared_directions, resolve, sniff

__all__ = [
    "DEFAULT_MIN_N",
    "DEFAULT_RESAMPLES",
    "FAMILY",
    "INTERVALS",
    "REFERENCE",
    "SWITCH_N",
    "TESTS",
    "CompareOptions",
    "compare_files",
    "compare_rows",
    "compare_with_options",
    "read_item_rows",
]

FAMILY = "compare"
#: compare mirrors no upstream scorer; its statistics are checked against scipy and statsmodels.
REFERENCE = "rageval-min/compare@none"
TESTS = ("auto", "paired_t", "randomization")
DEFAULT_RESAMPLES = 10_000
DEFAULT_MIN_N = 10
MAX_RESAMPLES = 1_000_000
_SHOWN_IDS = 20


class ItemRows(NamedTuple):
    """The rows of one item-row file, by id, in file order.

    :func:`read_item_rows` gives read-only mappings over the rows kept by field
    (:mod:`rageval_min.compare.columns`); plain dicts work too.
    """

    path: str
    rows: Mapping[Any, Dict[str, Any]]
    lines: Mapping[Any, int]


def _hashable_id(value: Any, path: str, line: int, key: str) -> Any:
    if isinstance(value, (list, dict)) or value is None:
        raise ScoringError(f"must be a string or number, got {type(value).__name__}", path=path, line=line, field=key)
    return value


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside (restored after): the rows are acyclic JSON values, and
    collecting while hundreds of thousands of them are created costs a third of the reading time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_item_rows(path: str, key: str) -> ItemRows:
    """Read an item-row JSONL file; a missing key or a duplicate id is an input error."""
    with _gc_paused():
        return _read_item_rows(path, key)


#: the C scanner json.loads calls (the same decoder), without its Python-level wrapping
_SCAN: Callable[[str, int], Tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _records(path: str) -> Iterator[Tuple[int, Any]]:
    """``iter_jsonl(path)``'s ``(line, value)`` pairs, the same values and the same errors.

    Each stripped line is parsed by the C speedups' ``flat_object`` (a record of scalars: the dict
    ``json.loads`` makes) or else by the C scanner ``json.loads`` calls; at the first line it
    does not read whole (or that may hold an escaped surrogate), or at any problem of the file,
    the rest (and the error) comes from ``iter_jsonl`` itself, skipping the lines already given.
    """
    c = kernels()
    flat = c.flat_object if c is not None else None  # a dict equal to json.loads(text) for flat records, or None
    done = 0
    try:
        for line, raw in iter_jsonl(path, deferred=True):
            text = raw.text
            value = flat(text) if flat is not None else None
            if value is None:  # (a flat_object text has no backslash: no escape to look for)
                value, end = _SCAN(text, 0)
                if end != len(text) or _escape_hit(text):
                    break
            done = line
            yield line, value
        else:
            return
    except (ScoringError, StopIteration, ValueError, RecursionError):
        pass
    for line, value in iter_jsonl(path):
        if line > done:
            yield line, value


def _read_item_rows(path: str, key: str) -> ItemRows:
    cols = Columns()
    seen, tuples, line_of = cols.index, cols.tuples, cols.line_of
    writers: set = set()
    shared: Any = None
    for line, rec in _records(path):
        if type(rec) is not dict and not isinstance(rec, dict):
            raise ScoringError(f"expected a JSON object, got {type(rec).__name__}", path=path, line=line)
        if key not in rec:
            raise ScoringError("missing (the --key field)", path=path, line=line, field=key)
        rid = rec[key]
        if rid is None or isinstance(rid, (list, dict)):
            _hashable_id(rid, path, line, key)
        writer = rec.get(PROVENANCE_FIELD)
        if writer is not None and not isinstance(writer, str):
            raise ScoringError(
                f"must be a string, got {type(writer).__name__}", path=path, line=line, field=PROVENANCE_FIELD
            )
        if writers:
            if writer not in writers:
                raise ScoringError(
                    f"rows of another writer ({writer!r}, line 1 has {shared!r}): one file, one run",
                    path=path,
                    line=line,
                    field=PROVENANCE_FIELD,
                )
            if writer is not None:
                rec[PROVENANCE_FIELD] = shared  # the equal string of line 1: one object, not one per row
        else:
            writers.add(writer)
            shared = writer
        if rid in seen:
            raise ScoringError(
                f"duplicate id {rid!r} (first at line {line_of[seen[rid]]})", path=path, line=line, field=key
            )
        seen[rid] = len(tuples)
        cols.add_shape(rec)
        tuples.append(tuple(rec.values()))
        line_of.append(line)
    return ItemRows(path, RowView(cols), LineView(cols))


#: The largest magnitude of a compared value: the statistics square differences and sum them.
MAX_VALUE = 1e150


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v))


def _numeric_fields(side: Columns, key: str) -> Dict[str, bool]:
    """field -> True when every non-null value is a number (bools count as 0/1) and there is one.

    A field that is null in every row (a metric that does not apply to this run) is not numeric.
    Fields in the order they first appear in the file.
    """
    out: Dict[str, bool] = {}
    for name in side.fields:
        if name == key:
            continue
        types = set(map(type, side.column(name)))
        types.discard(type(MISSING))
        ok = all(t is _NONE or issubclass(t, (bool, int, float)) for t in types)
        out[name] = ok and any(t is not _NONE for t in types)
    return out


_NONE = type(None)


def _kind(base: Sequence[Any], cand: Sequence[Any]) -> str:
    """``binary`` when every value is 0 or 1 and none is a float (bools count), else ``continuous``."""
    if set(map(type, base)) | set(map(type, cand)) <= {int, bool}:  # the same rule at C speed
        return "binary" if set(base) <= {0, 1} and set(cand) <= {0, 1} else "continuous"
    values = list(base) + list(cand)
    return "binary" if all(v in (0, 1) and not isinstance(v, float) for v in values) else "continuous"


def _mean(values: Sequence[float]) -> Optional[float]:
    return math.fsum(values) / len(values) if values else None


def _metric(
    raw: Tuple[Sequence[Any], Sequence[Any]],
    *,
    direction: str,
    opts: "CompareOptions",
) -> Tuple[Dict[str, Any], List[float]]:
    """One metric's comparison over the paired values as read (baseline, candidate); and their differences."""
    test, resamples, seed, alpha = opts.test, opts.resamples, opts.seed, opts.alpha
    base = list(map(float, raw[0]))
    cand = list(map(float, raw[1]))
    d = list(map(operator.sub, cand, base))
    kind = _kind(raw[0], raw[1])
    n = len(d)
    mb, mc = _mean(base), _mean(cand)
    t_used = uses_t(opts.interval, n)
    # mean and variance of d, once for the t interval and the paired t-test, and only where one of them runs
    wanted = t_used or (kind != "binary" and test not in ("randomization",))
    moments = _stats.mean_var(d) if n >= 2 and wanted else None
    if t_used:
        lo, hi = _stats.t_interval(d, alpha=alpha, moments=moments)
    else:
        lo, hi = _stats.bootstrap_delta_interval(d, resamples=resamples, seed=seed, alpha=alpha)
    out: Dict[str, Any] = {
        "kind": kind,
        "direction": direction,
        "n": n,
        "baseline": mb,
        "candidate": mc,
        "delta": None if mb is None or mc is None else mc - mb,
        "ci_low": lo,
        "ci_high": hi,
    }
    if t_used:
        out["interval"] = "t"
    if kind == "binary":
        up = sum(1 for x in d if x > 0)  # 0 -> 1
        down = sum(1 for x in d if x < 0)  # 1 -> 0
        out["p_value"] = _stats.mcnemar_exact(up, down) if n else None
        out["test"] = "mcnemar_exact"
        if direction == "neither":  # a descriptive count: moves are reported, never judged
            out["increased"], out["decreased"] = up, down
        else:
            better, worse = (up, down) if direction == "higher" else (down, up)
            out["improved"] = better
            out["regressed"] = worse
        out["baseline_ci"] = list(_stats.wilson_interval(int(sum(base)), n, alpha))
        out["candidate_ci"] = list(_stats.wilson_interval(int(sum(cand)), n, alpha))
    elif test == "randomization":
        out["p_value"] = _stats.sign_flip_test(d, resamples=resamples, seed=seed)
        out["test"] = "randomization"
    else:
        out["p_value"] = _stats.paired_t(d, moments=moments)
        out["test"] = "paired_t"
    return out, d


def _aggregate_metrics(
    family: str,
    command: str,
    params: Mapping[str, Any],
    rows: Iterable[Dict[str, Any]],
    where: Optional[Tuple[str, Columns, Sequence[int]]] = None,
) -> Dict[str, Any]:
    """The family accumulator's numeric aggregates over ``rows``.  With ``where`` (the file, its
    columns and the row index of each of ``rows``), a row the accumulator cannot take (not one of
    the family's item rows) is an input error naming its file and line; rows the accumulator cannot
    finalize (a declared field missing from every row) name the file and the field."""
    from .._contract import accumulator_class

    acc = accumulator_class(family, command)(**params)
    for n, row in enumerate(rows):
        if where is None:
            acc.add(row)
            continue
        try:
            acc.add(row)
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            path, cols, index = where
            raise ScoringError(
                f"not a {family} {command} item row ({type(exc).__name__}: {exc}); "
                "compare --family needs the rows that command wrote with --per-item",
                path=path,
                line=cols.line_of[index[n]],
            ) from None
    try:
        metrics = acc.finalize().metrics
    except (KeyError, TypeError, ValueError, OverflowError, ZeroDivisionError) as exc:
        if where is None:
            raise
        raise ScoringError(
            f"not {family} {command} item rows ({type(exc).__name__}: {exc}); "
            "compare --family needs the rows that command wrote with --per-item",
            path=where[0],
            field=exc.args[0] if isinstance(exc, KeyError) and isinstance(exc.args[0], str) else None,
        ) from None
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


#: the paired rows of one side: its columns and the row index of each paired id
_Side = Tuple[Columns, Sequence[int]]
_Interval = Tuple[Optional[float], Optional[float]]


def _bootstrap_intervals(
    family: str, sides: Tuple[_Side, _Side], names: Sequence[str], opts: "CompareOptions"
) -> Dict[str, _Interval]:
    """The paired bootstrap: resample ids, recompute both sides through the accumulator, percentile interval."""
    command, params, alpha = opts.command, dict(opts.params or {}), opts.alpha
    (bcols, brows), (ccols, crows) = sides
    base_rows = [bcols.row(r) for r in brows]
    cand_rows = [ccols.row(r) for r in crows]
    n = len(base_rows)
    draws: Dict[str, List[float]] = {k: [] for k in names}
    rng = random.Random(opts.seed)
    idx = range(n)
    for _ in range(opts.resamples if n else 0):
        pick = rng.choices(idx, k=n)
        rb = _aggregate_metrics(family, command, params, [base_rows[i] for i in pick])
        rc = _aggregate_metrics(family, command, params, [cand_rows[i] for i in pick])
        for k in names:
            if rb.get(k) is not None and rc.get(k) is not None:
                draws[k].append(float(rc[k]) - float(rb[k]))
    out: Dict[str, _Interval] = {}
    for k in names:
        vals = sorted(draws[k])
        lo = _stats.percentile(vals, alpha / 2) if vals else None
        hi = _stats.percentile(vals, 1 - alpha / 2) if vals else None
        out[k] = (lo, hi)
    return out


def _delta_method_intervals(
    family: str,
    sides: Tuple[_Side, _Side],
    values: Tuple[Mapping[str, Any], Mapping[str, Any]],
    names: Sequence[str],
    opts: "CompareOptions",
) -> Dict[str, _Interval]:
    """The delta-method interval of each aggregate that is a declared ratio of item fields (else ``(None, None)``)."""
    from .._contract import accumulator_class

    declared = accumulator_class(family, opts.command).METRICS
    (bcols, brows), (ccols, crows) = sides
    out: Dict[str, _Interval] = {}
    for k in names:
        fields = ratio_fields(declared, k)
        got = None
        if fields is not None:
            pair = ((bcols, brows, float(values[0][k])), (ccols, crows, float(values[1][k])))
            got = delta_method_interval(pair, fields, alpha=opts.alpha)
        out[k] = got if got is not None else (None, None)
    return out


def _aggregates(
    family: str, sides: Tuple[_Side, _Side], opts: "CompareOptions", paths: Tuple[str, str]
) -> Tuple[Dict[str, Dict[str, Any]], List[str]]:
    """Each non-count aggregate of the family, recomputed from the paired rows, with its interval; the notes."""
    command, params = opts.command, dict(opts.params or {})
    (bcols, brows), (ccols, crows) = sides
    bcols.forget_columns()  # the item metrics' columns: memory for the accumulator's rows
    ccols.forget_columns()
    b = _aggregate_metrics(family, command, params, bcols.rows(brows), (paths[0], bcols, brows))
    c = _aggregate_metrics(family, command, params, ccols.rows(crows), (paths[1], ccols, crows))
    # counts (integers on both sides) are sums of item rows, which the per-item comparison covers
    names = [k for k in b if k in c and not (isinstance(b[k], int) and isinstance(c[k], int))]
    n = len(brows)
    large = uses_t(opts.interval, n)
    if large:
        intervals = _delta_method_intervals(family, sides, (b, c), names, opts)
    else:
        intervals = _bootstrap_intervals(family, sides, names, opts)
    out: Dict[str, Dict[str, Any]] = {}
    directions = declared_directions(family, command, [f"aggregate.{k}" for k in names], opts.overrides())
    for k in names:
        lo, hi = intervals[k]
        out[f"aggregate.{k}"] = {
            "kind": "aggregate",
            "direction": directions[f"aggregate.{k}"],
            "n": n,
            "baseline": b[k],
            "candidate": c[k],
            "delta": None if b[k] is None or c[k] is None else c[k] - b[k],
            "ci_low": lo,
            "ci_high": hi,
            "p_value": None,
            "test": "delta_method" if large else "bootstrap",
        }
    bare = [f"aggregate.{k}" for k in names if large and intervals[k][0] is None]
    return out, [aggregate_note(bare, n)] if bare else []


def _regressed(m: Mapping[str, Any], alpha: float) -> bool:
    """Worse direction and significant: p < alpha (or, for aggregates, the interval excludes 0)."""
    delta = m.get("delta")
    if delta is None or delta == 0 or m["direction"] == "neither":
        return False
    worse = delta < 0 if m["direction"] == "higher" else delta > 0
    if not worse:
        return False
    if m["kind"] == "aggregate":
        lo, hi = m.get("ci_low"), m.get("ci_high")
        if lo is None or hi is None:
            return False
        return hi < 0 if m["direction"] == "higher" else lo > 0
    p = m.get("p_value")
    return p is not None and p < alpha


def _verdict(m: Mapping[str, Any], alpha: float) -> str:
    if m["direction"] == "neither":
        moved = dict(m, direction="higher")
        flipped = dict(m, direction="lower")
        return "changed" if _regressed(moved, alpha) or _regressed(flipped, alpha) else "no significant change"
    if _regressed(m, alpha):
        return "regressed"
    flipped = dict(m, direction="lower" if m["direction"] == "higher" else "higher")
    if _regressed(flipped, alpha):
        return "improved"
    return "no significant change"


class CompareOptions(NamedTuple):
    """How two item-row files are compared: the keywords of :func:`compare_rows` in one frozen object.

    ``metrics``: the fields to compare (every numeric field on both sides when
    empty); ``test``: one of :data:`TESTS` for continuous metrics;
    ``resamples``, ``seed``, ``alpha``: the bootstrap / randomization draws,
    their seed and the significance level; ``lower_is_better``: fields that
    improve when they go down; ``family``, ``command``, ``params``: the
    family accumulator that wrote the rows (its directions and aggregates);
    ``min_n``: fewer pairs make a metric "insufficient data";
    ``fail_on_regression``: a failed family gate per regressed metric;
    ``direction_overrides``: which way is better, before the declarations;
    ``aggregates``: whether the family's aggregates are compared;
    ``interval``: how the intervals are computed (see :mod:`rageval_min.compare.large_n`).
    """

    metrics: Sequence[str] = ()
    test: str = "auto"
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    alpha: float = 0.05
    lower_is_better: Sequence[str] = ()
    family: Optional[str] = None
    command: str = "score"
    params: Optional[Mapping[str, Any]] = None
    min_n: int = DEFAULT_MIN_N
    fail_on_regression: bool = False
    #: NAME -> "higher" | "lower" | "neither", before the declared directions (``--higher-is-better`` ...)
    direction_overrides: Optional[Mapping[str, str]] = None
    #: compute the family's aggregates (False when the rows' options are unknown)
    aggregates: bool = True
    #: one of :data:`~rageval_min.compare.large_n.INTERVALS`: the bootstrap, the t / delta-method
    #: intervals, or ``auto`` (the bootstrap below ``SWITCH_N`` pairs)
    interval: str = "auto"

    def overrides(self) -> Dict[str, str]:
        """The user's directions: ``lower_is_better`` and ``direction_overrides`` (which wins)."""
        return {**dict.fromkeys(self.lower_is_better, "lower"), **dict(self.direction_overrides or {})}

    def checked(self) -> "CompareOptions":
        """These options, if valid; else a :class:`~rageval_min.errors.ScoringError`."""
        if self.test not in TESTS:
            raise ScoringError(f"--test must be one of {', '.join(TESTS)}, got {self.test!r}")
        if not 0 < self.alpha < 1:
            raise ScoringError(f"--alpha must be between 0 and 1, got {self.alpha!r}")
        if self.interval not in INTERVALS:
            raise ScoringError(f"--interval must be one of {', '.join(INTERVALS)}, got {self.interval!r}")
        if not 1 <= self.resamples <= MAX_RESAMPLES:
            raise ScoringError(f"--resamples must be between 1 and {MAX_RESAMPLES}, got {self.resamples!r}")
        return self


def _metric_names(sides: Tuple[Columns, Columns], path: str, key: str, metrics: Sequence[str]) -> List[str]:
    """The fields to compare: ``metrics`` (each numeric in both files), else every numeric field of both.

    ``path`` (the candidate's) names the file in the errors."""
    nb, nc = _numeric_fields(sides[0], key), _numeric_fields(sides[1], key)
    if not metrics:
        return [n for n in nb if nb[n] and nc.get(n)]
    for name in metrics:
        if name not in nb or name not in nc:
            raise ScoringError(f"--metric {name!r} is not a field of both files", path=path)
        if not (nb[name] and nc[name]):
            raise ScoringError(f"--metric {name!r} is not numeric in both files", path=path)
    return list(metrics)


def _unpaired(only_b: Sequence[Any], only_c: Sequence[Any]) -> List[str]:
    """The diagnostics naming the first ids present on one side only."""
    out: List[str] = []
    if only_b:
        out.append(f"{len(only_b)} id(s) only in the baseline: " + ", ".join(map(repr, only_b[:_SHOWN_IDS])))
    if only_c:
        out.append(f"{len(only_c)} id(s) only in the candidate: " + ", ".join(map(repr, only_c[:_SHOWN_IDS])))
    return out


_Loss = Tuple[float, Any, str, float, float]
_TOP = 10


def _numeric_pairs(bv: Sequence[Any], cv: Sequence[Any]) -> Optional[List[int]]:
    """The positions where both values are numbers (not NaN); None when that is every position."""
    if set(map(type, bv)) | set(map(type, cv)) <= {int, float, bool}:
        try:
            if not (any(map(math.isnan, bv)) or any(map(math.isnan, cv))):
                return None
        except OverflowError:  # an integer beyond the float range: the slow check below
            pass
    return [
        k
        for k, (b, c) in enumerate(zip(bv, cv))
        if isinstance(b, (int, float)) and isinstance(c, (int, float)) and _is_number(b) and _is_number(c)
    ]


def _check_range(
    name: str,
    values: Tuple[Sequence[Any], Sequence[Any]],
    sides: Tuple[_Side, _Side],
    paths: Tuple[str, str],
    keep: Optional[List[int]],
) -> None:
    """A value beyond :data:`MAX_VALUE` (1e400, 401 digits, 1e300) is an input error naming file:line: field."""
    for v, (cols, rows), path in zip(values, sides, paths):
        if not v or -MAX_VALUE <= min(v) and max(v) <= MAX_VALUE:
            continue
        for k, x in enumerate(v):
            line = cols.line_of[rows[keep[k] if keep is not None else k]]
            _numbers.finite_float(x, bools=True, limit=MAX_VALUE, path=path, line=line, field=name)


def _worst_moves(
    d: Sequence[float], sign: float, name: str, ids: Sequence[Any], raw: Tuple[Sequence[Any], Sequence[Any]]
) -> List[_Loss]:
    """The per-item moves of one metric that can be among the 10 largest losses (ties at the 10th kept).

    ``loss = sign * (float(b) - float(c))`` is ``-sign * d`` exactly (IEEE subtraction is antisymmetric).
    """
    if sign > 0:
        worse = [k for k, x in enumerate(d) if x < 0]
        loss = [-x for x in d] if worse else d
    else:
        worse = [k for k, x in enumerate(d) if x > 0]
        loss = d
    if len(worse) > _TOP:
        floor = heapq.nlargest(_TOP, [loss[k] for k in worse])[-1]
        worse = [k for k in worse if loss[k] >= floor]
    return [(loss[k], ids[k], name, raw[0][k], raw[1][k]) for k in worse]


def _item_metrics(
    names: Sequence[str],
    paired_ids: Sequence[Any],
    sides: Tuple[_Side, _Side],
    directions: Mapping[str, str],
    opts: CompareOptions,
    paths: Tuple[str, str],
) -> Tuple[Dict[str, Dict[str, Any]], List[_Loss]]:
    """Each metric's comparison over its numeric pairs, and the per-item moves in the worse direction
    that can be among the 10 largest (all of them that the report's top 10 could show)."""
    (bcols, brows), (ccols, crows) = sides
    result: Dict[str, Dict[str, Any]] = {}
    losses: List[_Loss] = []
    for name in names:
        bv, cv = bcols.values(name, brows), ccols.values(name, crows)
        keep = _numeric_pairs(bv, cv)
        ids = paired_ids
        if keep is not None:
            bv, cv, ids = [bv[k] for k in keep], [cv[k] for k in keep], [paired_ids[k] for k in keep]
        _check_range(name, (bv, cv), sides, paths, keep)
        direction = directions[name]
        result[name], d = _metric((bv, cv), direction=direction, opts=opts)
        if direction == "neither":  # a descriptive count: no item moved the worse way
            continue
        losses.extend(_worst_moves(d, 1.0 if direction == "higher" else -1.0, name, ids, (bv, cv)))
    return result, losses


_GATE_FIELDS = ("n", "baseline", "candidate", "delta", "ci_low", "ci_high", "p_value", "improved", "regressed")


def _verdicts(
    result_metrics: Dict[str, Dict[str, Any]], gate_metrics: Dict[str, Any], opts: CompareOptions
) -> Tuple[List[GateOutcome], List[str]]:
    """Set each metric's verdict and its gateable ``NAME.FIELD`` values; the regression gates and the short metrics."""
    family_gates: List[GateOutcome] = []
    short: List[str] = []
    for name, m in result_metrics.items():
        small = m["n"] < opts.min_n
        for field in _GATE_FIELDS:
            if field not in m:
                continue
            value = m[field]
            if small and field in ("p_value", "ci_low", "ci_high"):
                value = None  # a significance-based gate fails on insufficient data
            gate_metrics[f"{name}.{field}"] = value
        if small:
            short.append(f"{name} (n={m['n']})")
        m["verdict"] = "insufficient data" if small else _verdict(m, opts.alpha)
        if opts.fail_on_regression and (small or _regressed(m, opts.alpha)):
            value = m.get("p_value") if m["kind"] != "aggregate" else m.get("delta")
            family_gates.append(
                GateOutcome(name, "regression", opts.alpha, None if small else value, False, f"no-regression:{name}")
            )
    return family_gates, short


def _signature(key: str, opts: CompareOptions, t_used: bool) -> str:
    params_sig: List[Tuple[str, object]] = [
        ("key", key),
        ("test", opts.test),
        ("resamples", opts.resamples),
        ("seed", opts.seed),
        ("alpha", opts.alpha),
        ("min_n", opts.min_n),
    ]
    if opts.family:
        params_sig.append(("of", f"{opts.family}:{opts.command}"))
    if t_used:  # below the switch (and with --interval bootstrap) the bootstrap ran: no field, as before
        params_sig.append(("interval", "t"))
    return make_signature(FAMILY, REFERENCE, (), params_sig)


def compare_rows(
    baseline: ItemRows,
    candidate: ItemRows,
    *,
    key: str,
    metrics: Sequence[str] = (),
    test: str = "auto",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
    lower_is_better: Sequence[str] = (),
    family: Optional[str] = None,
    command: str = "score",
    params: Optional[Mapping[str, Any]] = None,
    min_n: int = DEFAULT_MIN_N,
    fail_on_regression: bool = False,
    direction_overrides: Optional[Mapping[str, str]] = None,
    aggregates: bool = True,
    interval: str = "auto",
) -> Report:
    """Compare two sets of item rows (see the module docstring); the Report's ``result`` is the comparison.

    The keywords after ``key`` are the fields of :class:`CompareOptions`;
    :func:`compare_with_options` takes them as one object.
    """
    opts = CompareOptions(
        metrics,
        test,
        resamples,
        seed,
        alpha,
        lower_is_better,
        family,
        command,
        params,
        min_n,
        fail_on_regression,
        direction_overrides,
        aggregates,
        interval,
    )
    return compare_with_options(baseline, candidate, key, opts)


def _rows_of(index: Mapping[Any, int], ids: Sequence[Any]) -> Sequence[int]:
    """The row index of each id; a ``range`` when that is every row in file order (the common case)."""
    rows = [index[i] for i in ids]
    return range(len(rows)) if len(rows) == len(index) and rows == list(range(len(rows))) else rows


def _t_interval(m: Mapping[str, Any]) -> bool:
    return m.get("interval") == "t" or m.get("test") == "delta_method"


def compare_with_options(baseline: ItemRows, candidate: ItemRows, key: str, opts: CompareOptions) -> Report:
    """:func:`compare_rows` with its options as one :class:`CompareOptions`."""
    with _gc_paused():
        return _compare(baseline, candidate, key, opts.checked())


def _compare(baseline: ItemRows, candidate: ItemRows, key: str, opts: CompareOptions) -> Report:
    bcols, ccols = columns_of(baseline.rows, baseline.lines), columns_of(candidate.rows, candidate.lines)
    bidx, cidx = bcols.index, ccols.index
    paired_ids = [i for i in bidx if i in cidx]
    only_b = [i for i in bidx if i not in cidx]
    only_c = [i for i in cidx if i not in bidx]
    if not paired_ids:
        raise ScoringError(
            f"no id is present in both files (key {key!r}): {len(only_b)} baseline-only, {len(only_c)} candidate-only",
            path=candidate.path,
        )
    names = _metric_names((bcols, ccols), candidate.path, key, opts.metrics)
    directions = declared_directions(opts.family, opts.command, names, opts.overrides())
    diagnostics = _unpaired(only_b, only_c)
    sides = ((bcols, _rows_of(bidx, paired_ids)), (ccols, _rows_of(cidx, paired_ids)))
    paths = (baseline.path, candidate.path)
    result_metrics, per_item = _item_metrics(names, paired_ids, sides, directions, opts, paths)
    if opts.family and opts.aggregates:
        aggregates, notes = _aggregates(opts.family, sides, opts, paths)
        result_metrics.update(aggregates)
        diagnostics.extend(notes)
    per_item.sort(key=lambda t: (-t[0], str(t[1]), t[2]))
    regressions = [{"key": i, "metric": name, "baseline": b, "candidate": c} for _, i, name, b, c in per_item[:10]]
    result = {
        "key": key,
        "paired": len(paired_ids),
        "only_baseline": len(only_b),
        "only_candidate": len(only_c),
        "metrics": result_metrics,
        "regressions": regressions,
    }
    gate_metrics: Dict[str, Any] = {"paired": len(paired_ids)}
    family_gates, short = _verdicts(result_metrics, gate_metrics, opts)
    if short:
        diagnostics.append(
            f"insufficient data (fewer than --min-n {opts.min_n} pairs), so significance gates fail, for: "
            + ", ".join(short)
        )
    return Report(
        family=FAMILY,
        signature=_signature(key, opts, any(_t_interval(m) for m in result_metrics.values())),
        result=result,
        metrics=gate_metrics,
        diagnostics=diagnostics,
        reference_pass=None,
        family_gates=family_gates,
    )


def compare_files(
    baseline: str,
    candidate: str,
    *,
    key: Optional[str] = None,
    family: Optional[str] = None,
    command: Optional[str] = None,
    params: Optional[Mapping[str, Any]] = None,
    **options: Any,
) -> Report:
    """:func:`compare_rows` on two item-row files.

    Files rageval-min wrote say which command wrote them (see
    :mod:`rageval_min.compare.writer`): the family, command and key then need no
    option, and files of different commands or options are refused.
    """
    found = resolve(sniff(baseline), sniff(candidate), key=key, family=family, command=command, params=params)
    report = compare_rows(
        read_item_rows(baseline, found.key),
        read_item_rows(candidate, found.key),
        key=found.key,
        family=found.family,
        command=found.command,
        params=found.params,
        aggregates=found.params is not None,
        **options,
    )
    if found.diagnostics:
        report.diagnostics.extend(found.diagnostics)
    return report
