"""Pipeline step: the opt-in extras (``--extra``), which the reference does not compute.

``conservative_win_rate`` (FastChat / MT-Bench rule: one outcome per complete
swapped pair, disagreement or C/D a tie), ``per_model_consistency`` and
``unparseable_share``; each adds a result object and its gateable values.
"""

from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Set

from ._common import _Row
from .analyze_util import Partition

__all__ = ["add_extras"]


def _conservative(rows: Sequence[_Row], refm: str) -> "OrderedDict[str, Any]":
    # FastChat / MT-Bench: one outcome per complete swapped pair; the second
    # verdict is mapped back to model names; disagreement or C/D -> tie.
    by_key: Dict[str, _Row] = {}
    for r in rows:
        by_key[r.cmp_index] = r
    tallies: Dict[str, List[int]] = {}
    seen: Set[str] = set()
    for k, r in by_key.items():
        if r.A != refm and r.B != refm:
            continue
        partner = f"{r.idx};{r.part2};{r.part1}"
        if k in seen or partner not in by_key or partner == k:
            continue
        seen.add(k)
        seen.add(partner)
        p = by_key[partner]

        def winner(x: _Row) -> Optional[str]:
            return x.A if x.choice == "A" else x.B if x.choice == "B" else None

        g1, g2 = winner(r), winner(p)
        model = r.B if r.A == refm else r.A
        t = tallies.setdefault(model, [0, 0, 0])
        if g1 is None or g1 != g2:
            t[2] += 1
        elif g1 == model:
            t[0] += 1
        else:
            t[1] += 1
    out: "OrderedDict[str, Any]" = OrderedDict()
    for model in sorted(tallies):
        w, lo, ti = tallies[model]
        n = w + lo + ti
        out[model] = OrderedDict(
            [
                ("win", w),
                ("loss", lo),
                ("tie", ti),
                ("win_rate", w / n if n else None),
                ("win_rate_adjusted", (w + 0.5 * ti) / n if n else None),
            ]
        )
    return out


def _per_model_consistency(
    rows: Sequence[_Row], status: Sequence[Optional[bool]], refm: str
) -> "OrderedDict[str, Any]":
    acc: Dict[str, List[int]] = {}
    for r, s in zip(rows, status):
        if s is None:
            continue
        for m in {r.A, r.B}:
            if m == refm:
                continue
            a = acc.setdefault(m, [0, 0])
            a[1] += 1
            if s:
                a[0] += 1
    return OrderedDict(
        (m, OrderedDict([("consistent", c), ("extracted", t), ("consistency_rate", c / t if t else None)]))
        for m, (c, t) in sorted(acc.items())
    )


def add_extras(
    result: "OrderedDict[str, Any]",
    metrics: "OrderedDict[str, Any]",
    *,
    extras: Sequence[str],
    part: Partition,
    failed: int,
    refm: str,
) -> None:
    """Append the requested extras to ``result`` and their gateable values to ``metrics``."""
    if "conservative_win_rate" in extras:
        cons = _conservative(part.extracted, refm)
        result["conservative_win_rate"] = cons
        for m, d in cons.items():
            for k in ("win_rate", "win_rate_adjusted"):
                if d[k] is not None:
                    metrics[f"conservative_{k};{m}"] = d[k]
    if "per_model_consistency" in extras:
        pmc = _per_model_consistency(part.extracted, part.status, refm)
        result["per_model_consistency"] = pmc
        for m, d in pmc.items():
            if d["consistency_rate"] is not None:
                metrics[f"consistency_rate;{m}"] = d["consistency_rate"]
    if "unparseable_share" in extras:
        unparseable = sum(1 for r in part.non_em if r.choice is None and not r.failed)
        answered = len(part.non_em) - failed
        share = unparseable / answered if answered else None
        result["unparseable_share"] = OrderedDict(
            [("unparseable", unparseable), ("answered", answered), ("share", share)]
        )
        if share is not None:
            metrics["unparseable_share"] = share
