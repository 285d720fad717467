"""``--intervals``: confidence intervals for a report's metrics, from its item rows.

Written beside ``result`` (never inside it, so reference-parity output does not
change), as ``{metric: {"method", "level", "low", "high", "n"}}``:

* a metric that is a **count ratio** gets the Wilson score interval of
  ``successes / trials``: either a rate the family declares in its
  accumulator's ``RATES`` (metric -> numerator field, denominator field; a
  denominator of None counts the rows where the numerator is not null: how
  ``grounding``'s ``precision = correct / answered`` is declared), or the mean
  of a 0/1 item field of the same name;
* a metric that is the **mean** of a non-binary item field of the same name
  gets a bootstrap percentile interval of that mean (``resamples`` draws with
  ``random.Random(seed)``);
* any other metric (a count, a maximum, a metric computed across items in a
  way that is neither) gets no interval.

A metric is matched to a same-named item field only when the mean of that
field over the rows where it is not null equals the reported value (within
1e-9 relative), so a field that merely shares a name is never mistaken for it.
"""

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ._stats import bootstrap_delta_interval, wilson_interval

__all__ = ["DEFAULT_LEVEL", "DEFAULT_RESAMPLES", "compute_intervals"]

DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 2000


def _family_rates(family: str) -> Dict[str, Tuple[str, Optional[str]]]:
    from ._contract import family_accumulators

    rates: Dict[str, Tuple[str, Optional[str]]] = {}
    for cls in family_accumulators(family):
        rates.update(getattr(cls, "RATES", {}) or {})
    return rates


def _numbers(rows: Sequence[Mapping[str, Any]], field: str) -> List[float]:
    out = []
    for r in rows:
        v = r.get(field)
        if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
            out.append(v)
    return out


def _wilson(successes: float, trials: float, level: float) -> Optional[Dict[str, Any]]:
    if trials <= 0 or successes != int(successes) or trials != int(trials):
        return None
    low, high = wilson_interval(int(successes), int(trials), 1 - level)
    return {"method": "wilson", "level": level, "low": low, "high": high, "n": int(trials)}


def compute_intervals(
    family: str,
    metrics: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    *,
    level: float = DEFAULT_LEVEL,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Dict[str, Dict[str, Any]]:
    """The intervals of ``metrics`` (a report's) that the item ``rows`` support (see the module docstring)."""
    rates = _family_rates(family)
    fields: set = set()
    for r in rows:
        fields.update(r)
    out: Dict[str, Dict[str, Any]] = {}
    for name, value in metrics.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            continue
        if name in rates:
            num, den = rates[name]
            nums = [r.get(num) for r in rows]
            if den is None:
                present = [v for v in nums if isinstance(v, (int, float))]
                found = _wilson(sum(present), len(present), level)
            else:
                found = _wilson(sum(_numbers(rows, num)), sum(_numbers(rows, den)), level)
            if found is not None:
                out[name] = found
            continue
        if name not in fields:
            continue
        values = _numbers(rows, name)
        if not values or not math.isclose(math.fsum(values) / len(values), value, rel_tol=1e-9, abs_tol=1e-12):
            continue
        if all(v in (0, 1) and not isinstance(v, float) for v in values):
            found = _wilson(sum(values), len(values), level)
            if found is not None:
                out[name] = found
            continue
        low, high = bootstrap_delta_interval(values, resamples=resamples, seed=seed, alpha=1 - level)
        out[name] = {
            "method": "bootstrap",
            "level": level,
            "low": low,
            "high": high,
            "n": len(values),
            "resamples": resamples,
            "seed": seed,
        }
    return out
