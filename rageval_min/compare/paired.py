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
recomputes both sides through the accumulator.

Statistics are implemented with the standard library in
:mod:`rageval_min._stats` and checked against scipy and statsmodels in the
tests.
"""

import math
import random
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .. import _stats
from .._contract import PROVENANCE_FIELD
from .._io import iter_jsonl
from .._signature import make_signature
from ..errors import ScoringError
from ..gates import GateOutcome
from ..report import Report
from .writer import declared_directions, resolve, sniff

__all__ = [
    "DEFAULT_MIN_N",
    "DEFAULT_RESAMPLES",
    "FAMILY",
    "REFERENCE",
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
    """The rows of one item-row file, by id, in file order."""

    path: str
    rows: Dict[Any, Dict[str, Any]]
    lines: Dict[Any, int]


def _hashable_id(value: Any, path: str, line: int, key: str) -> Any:
    if isinstance(value, (list, dict)) or value is None:
        raise ScoringError(f"must be a string or number, got {type(value).__name__}", path=path, line=line, field=key)
    return value


def read_item_rows(path: str, key: str) -> ItemRows:
    """Read an item-row JSONL file; a missing key or a duplicate id is an input error."""
    rows: Dict[Any, Dict[str, Any]] = {}
    lines: Dict[Any, int] = {}
    writers: set = set()
    for line, rec in iter_jsonl(path):
        if not isinstance(rec, dict):
            raise ScoringError(f"expected a JSON object, got {type(rec).__name__}", path=path, line=line)
        if key not in rec:
            raise ScoringError("missing (the --key field)", path=path, line=line, field=key)
        rid = _hashable_id(rec[key], path, line, key)
        writer = rec.get(PROVENANCE_FIELD)
        if writers and writer not in writers:
            raise ScoringError(
                f"rows of another writer ({writer!r}, line 1 has {next(iter(writers))!r}): one file, one run",
                path=path,
                line=line,
                field=PROVENANCE_FIELD,
            )
        writers.add(writer)
        if rid in rows:
            raise ScoringError(f"duplicate id {rid!r} (first at line {lines[rid]})", path=path, line=line, field=key)
        rows[rid] = rec
        lines[rid] = line
    return ItemRows(path, rows, lines)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v))


def _numeric_fields(side: ItemRows, key: str) -> Dict[str, bool]:
    """field -> True when every non-null value is a number (bools count as 0/1) and there is one.

    A field that is null in every row (a metric that does not apply to this run) is not numeric.
    """
    ok: Dict[str, bool] = {}
    seen: Dict[str, bool] = {}
    for rec in side.rows.values():
        for name, v in rec.items():
            if name == key:
                continue
            ok[name] = ok.get(name, True) and (v is None or isinstance(v, (bool, int, float)))
            seen[name] = seen.get(name, False) or v is not None
    return {name: ok[name] and seen[name] for name in ok}


def _kind(values: Iterable[Any]) -> str:
    return "binary" if all(v in (0, 1) and not isinstance(v, float) for v in values) else "continuous"


def _mean(values: Sequence[float]) -> Optional[float]:
    return math.fsum(values) / len(values) if values else None


def _metric(
    name: str,
    pairs: List[Tuple[Any, float, float]],
    *,
    direction: str,
    test: str,
    resamples: int,
    seed: int,
    alpha: float,
) -> Dict[str, Any]:
    base = [float(b) for _, b, _ in pairs]
    cand = [float(c) for _, _, c in pairs]
    d = [c - b for b, c in zip(base, cand)]
    kind = _kind([b for _, b, _ in pairs] + [c for _, _, c in pairs])
    n = len(pairs)
    mb, mc = _mean(base), _mean(cand)
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
        out["p_value"] = _stats.paired_t(d)
        out["test"] = "paired_t"
    return out


def _aggregate_metrics(
    family: str, command: str, params: Mapping[str, Any], rows: Sequence[Dict[str, Any]]
) -> Dict[str, Any]:
    from .._contract import accumulator_class

    acc = accumulator_class(family, command)(**params)
    for row in rows:
        acc.add(row)
    metrics = acc.finalize().metrics
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _aggregates(
    family: str,
    base_rows: List[Dict[str, Any]],
    cand_rows: List[Dict[str, Any]],
    opts: "CompareOptions",
) -> Dict[str, Dict[str, Any]]:
    command, params, alpha = opts.command, dict(opts.params or {}), opts.alpha
    b = _aggregate_metrics(family, command, params, base_rows)
    c = _aggregate_metrics(family, command, params, cand_rows)
    # counts (integers on both sides) are sums of item rows, which the per-item comparison covers
    names = [k for k in b if k in c and not (isinstance(b[k], int) and isinstance(c[k], int))]
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
    out: Dict[str, Dict[str, Any]] = {}
    directions = declared_directions(family, command, [f"aggregate.{k}" for k in names], opts.overrides())
    for k in names:
        vals = sorted(draws[k])
        lo = _stats.percentile(vals, alpha / 2) if vals else None
        hi = _stats.percentile(vals, 1 - alpha / 2) if vals else None
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
            "test": "bootstrap",
        }
    return out


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
    ``aggregates``: whether the family's aggregates are compared.
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

    def overrides(self) -> Dict[str, str]:
        """The user's directions: ``lower_is_better`` and ``direction_overrides`` (which wins)."""
        return {**dict.fromkeys(self.lower_is_better, "lower"), **dict(self.direction_overrides or {})}

    def checked(self) -> "CompareOptions":
        """These options, if valid; else a :class:`~rageval_min.errors.ScoringError`."""
        if self.test not in TESTS:
            raise ScoringError(f"--test must be one of {', '.join(TESTS)}, got {self.test!r}")
        if not 0 < self.alpha < 1:
            raise ScoringError(f"--alpha must be between 0 and 1, got {self.alpha!r}")
        if not 1 <= self.resamples <= MAX_RESAMPLES:
            raise ScoringError(f"--resamples must be between 1 and {MAX_RESAMPLES}, got {self.resamples!r}")
        return self


def _metric_names(baseline: ItemRows, candidate: ItemRows, key: str, metrics: Sequence[str]) -> List[str]:
    """The fields to compare: ``metrics`` (each numeric in both files), else every numeric field of both."""
    nb, nc = _numeric_fields(baseline, key), _numeric_fields(candidate, key)
    if not metrics:
        return [n for n in nb if nb[n] and nc.get(n)]
    for name in metrics:
        if name not in nb or name not in nc:
            raise ScoringError(f"--metric {name!r} is not a field of both files", path=candidate.path)
        if not (nb[name] and nc[name]):
            raise ScoringError(f"--metric {name!r} is not numeric in both files", path=candidate.path)
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


def _item_metrics(
    names: Sequence[str],
    paired_ids: Sequence[Any],
    baseline: ItemRows,
    candidate: ItemRows,
    directions: Mapping[str, str],
    opts: CompareOptions,
) -> Tuple[Dict[str, Dict[str, Any]], List[_Loss]]:
    """Each metric's comparison over its numeric pairs, and every per-item move in the worse direction."""
    result: Dict[str, Dict[str, Any]] = {}
    losses: List[_Loss] = []
    for name in names:
        pairs: List[Tuple[Any, float, float]] = []
        for i in paired_ids:
            b, c = baseline.rows[i].get(name), candidate.rows[i].get(name)
            if isinstance(b, (int, float)) and isinstance(c, (int, float)) and _is_number(b) and _is_number(c):
                pairs.append((i, b, c))
        direction = directions[name]
        result[name] = _metric(
            name, pairs, direction=direction, test=opts.test, resamples=opts.resamples, seed=opts.seed, alpha=opts.alpha
        )
        if direction == "neither":  # a descriptive count: no item moved the worse way
            continue
        sign = 1.0 if direction == "higher" else -1.0
        for i, b, c in pairs:
            loss = sign * (float(b) - float(c))
            if loss > 0:
                losses.append((loss, i, name, b, c))
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


def _signature(key: str, opts: CompareOptions) -> str:
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
    )
    return compare_with_options(baseline, candidate, key, opts)


def compare_with_options(baseline: ItemRows, candidate: ItemRows, key: str, opts: CompareOptions) -> Report:
    """:func:`compare_rows` with its options as one :class:`CompareOptions`."""
    opts = opts.checked()
    paired_ids = [i for i in baseline.rows if i in candidate.rows]
    only_b = [i for i in baseline.rows if i not in candidate.rows]
    only_c = [i for i in candidate.rows if i not in baseline.rows]
    if not paired_ids:
        raise ScoringError(
            f"no id is present in both files (key {key!r}): {len(only_b)} baseline-only, {len(only_c)} candidate-only",
            path=candidate.path,
        )
    names = _metric_names(baseline, candidate, key, opts.metrics)
    directions = declared_directions(opts.family, opts.command, names, opts.overrides())
    diagnostics = _unpaired(only_b, only_c)
    result_metrics, per_item = _item_metrics(names, paired_ids, baseline, candidate, directions, opts)
    if opts.family and opts.aggregates:
        base_rows = [baseline.rows[i] for i in paired_ids]
        cand_rows = [candidate.rows[i] for i in paired_ids]
        result_metrics.update(_aggregates(opts.family, base_rows, cand_rows, opts))
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
        signature=_signature(key, opts),
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
