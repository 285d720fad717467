"""The ir section of the HTML report: per-measure means and per-topic distributions.

Mirrors no upstream code: it draws the report with the report layer's chart pieces
(``rageval_min.report.charts``, ``rageval_min.report.svg``), as every family's section does.
"""

from typing import Any, List, Mapping

from ..report.charts import Ctx, declared_range, figure
from ..report.svg import bar_chart, dot_plot, is_number
from .scoring import IrAccumulator

__all__ = ["section"]


def _rates(measures: Mapping[str, Any]) -> List[str]:
    """The measures drawn as bars: the float means with a declared range (the counts are listed instead)."""
    return [
        k
        for k, v in measures.items()
        if isinstance(v, float) and is_number(v) and None not in declared_range(IrAccumulator.METRICS, [k])
    ]


def section(c: Ctx) -> str:
    """HTML for an ir report: one bar per measure mean (with its gate), then one dot plot per measure.

    The per-topic plots need the per-topic values,
    which the report holds when it was made for ``--format html`` or
    ``--format trec_eval`` (``topics=True``); otherwise a note says so.
    """
    measures = c.result.get("measures")
    if not isinstance(measures, Mapping):
        return ""
    names = _rates(measures)
    counts = [k for k in measures if k not in names]
    caption = f"means over {c.result.get('num_q')} topics; summed counts: " + (
        ", ".join(f"{k} = {measures[k]}" for k in counts) or "none"
    )
    out = []
    if names:
        bars = [(k, [c.bar(measures[k], k)]) for k in names]
        domain = declared_range(IrAccumulator.METRICS, names)
        out.append(figure(bar_chart(bars, title="mean over topics", domain=domain), caption))
    topics = c.result.get("topics")
    if not isinstance(topics, list):
        out.append('<p class="note">per-topic distributions: score with --format html to include them</p>')
        return "".join(out)
    for k in names:
        dots = [(str(t.get("qid")), t.get(k)) for t in topics if isinstance(t, Mapping)]
        lo, hi = declared_range(IrAccumulator.METRICS, [k])
        svg = dot_plot(dots, title=f"{k} per topic ({len(dots)} topics)", lo=lo or 0.0, hi=1.0 if hi is None else hi)
        out.append(figure(svg, "one dot per topic"))
    return "".join(out)
