"""Mirrors open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/calculate_winrate_new.py: the paper's win rates.

Per metric (text after the last ``-`` of the index) the rate with ties
``(win + tie/2) / total`` and without ties ``win / (total - tie)``, where an
inconsistent row is a tie for both sides and ``D`` is a loss for both (plain
float64, int ``0`` on a zero denominator).  The reference's assertions (both
partitions non-empty) become diagnostics.
"""

from collections import OrderedDict
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ._common import _metric_of, _Row

__all__ = ["new_version_rates"]


def _count_new(
    consistent: Sequence[_Row], inconsistent: Sequence[_Row]
) -> Tuple[Dict[str, int], Dict[str, int], Dict[str, int]]:
    cnt: Dict[str, int] = {}
    tie: Dict[str, int] = {}
    tot: Dict[str, int] = {}

    def add(d: Dict[str, int], k: str) -> None:
        d[k] = d.get(k, 0) + 1

    for r in consistent:
        k12 = f"{r.idx};{r.A};{r.B}"
        k21 = f"{r.idx};{r.B};{r.A}"
        if r.choice == "A":
            add(cnt, k12)
        elif r.choice == "B":
            add(cnt, k21)
        elif r.choice == "C":
            add(tie, k12)
            add(tie, k21)
        add(tot, k12)
        add(tot, k21)
    for r in inconsistent:
        k12 = f"{r.idx};{r.A};{r.B}"
        k21 = f"{r.idx};{r.B};{r.A}"
        add(tie, k12)
        add(tie, k21)
        add(tot, k12)
        add(tot, k21)
    return cnt, tie, tot


def _rates(
    cnt: Mapping[str, float], tie: Mapping[str, float], tot: Mapping[str, float], keys: Iterable[str]
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    wt: Dict[str, Any] = {}
    wo: Dict[str, Any] = {}
    for k in keys:
        c, t, n = cnt.get(k, 0), tie.get(k, 0), tot.get(k, 0)
        wt[k] = (c + 0.5 * t) / n if n > 0 else 0
        wo[k] = c / (n - t) if n - t > 0 else 0
    return wt, wo


def new_version_rates(
    consistent: Sequence[_Row],
    inconsistent: Sequence[_Row],
    *,
    refm: str,
    macro_average: bool = False,
    diagnostics: Optional[List[str]] = None,
) -> "OrderedDict[str, Any]":
    """DevBench paper rates ``{"with_tie": {...}, "without_tie": {...}}``.

    Mirrors ``calculate_winrate_new.py`` step by step (its assertions become
    diagnostics), so it stays in one piece.

    Per row (keys ``idx;X;Y``): a consistent row adds 1 to ``tot`` in both
    directions and a win (A: slot A, B: slot B) or, for C, a tie in both
    directions; D adds nothing else (a loss for both).  An inconsistent row is
    a tie in both directions.  Counts are summed per ``metric;X;Y`` (metric =
    text after the last ``-`` of the index) and reported for every key
    containing refm as a substring: with tie ``(cnt + tie/2)/tot``, without
    tie ``cnt/(tot - tie)``, int ``0`` on a zero denominator.  Keys sorted.
    ``macro_average``: the per-index rates (where defined) are averaged
    uniformly instead of summing counts.
    """
    if diagnostics is not None:
        if not consistent and not inconsistent:
            diagnostics.append(
                "new version: no consistent and no inconsistent rows; rate maps "
                "are empty (the reference fails an assertion)"
            )
        elif not inconsistent:
            diagnostics.append(
                "new version: no inconsistent rows; rates come from the "
                "consistent rows alone (the reference fails an assertion)"
            )
        elif not consistent:
            diagnostics.append(
                "new version: no consistent rows; rates come from the "
                "inconsistent rows alone (the reference fails an assertion)"
            )
    cnt, tie, tot = _count_new(consistent, inconsistent)
    if not macro_average:
        mc: Dict[str, int] = {}
        mt: Dict[str, int] = {}
        mn: Dict[str, int] = {}
        for src, dst in ((cnt, mc), (tie, mt), (tot, mn)):
            for k, v in src.items():
                prefix, model_part = k.split(";", 1)
                nk = f"{_metric_of(prefix)};{model_part}"
                dst[nk] = dst.get(nk, 0) + v
        keys = sorted(k for k in mn if refm in k)
        wt, wo = _rates(mc, mt, mn, keys)
    else:
        per_wt, per_wo = _rates(cnt, tie, tot, tot.keys())
        groups: Dict[str, List[str]] = {}
        for k in tot:
            prefix, model_part = k.split(";", 1)
            groups.setdefault(f"{_metric_of(prefix)};{model_part}", []).append(k)
        keys = sorted(k for k in groups if refm in k)
        wt, wo = {}, {}
        for nk in keys:
            a = [per_wt[k] for k in groups[nk] if tot[k] > 0]
            b = [per_wo[k] for k in groups[nk] if tot[k] - tie.get(k, 0) > 0]
            wt[nk] = sum(a) / len(a) if a else 0
            wo[nk] = sum(b) / len(b) if b else 0
    return OrderedDict(
        [("with_tie", OrderedDict((k, wt[k]) for k in keys)), ("without_tie", OrderedDict((k, wo[k]) for k in keys))]
    )
