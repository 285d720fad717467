"""The rouge section of the HTML report (``--format html``): drawn from the report's result."""

from typing import Mapping

from ..report.charts import Ctx, figure
from ..report.svg import bar_chart

__all__ = ["section"]


def section(c: Ctx) -> str:
    mean = c.result.get("mean")
    if not isinstance(mean, Mapping):
        return ""
    measures = ["precision", "recall", "fmeasure"]
    groups = []
    for rtype, scores in mean.items():
        if isinstance(scores, Mapping):
            groups.append(
                (rtype, [c.bar(scores.get(m), f"{rtype}.{m}", i, f"{rtype} {m}") for i, m in enumerate(measures)])
            )
    if not groups:
        return ""
    return figure(bar_chart(groups, title="mean ROUGE over records", series=measures, ymax=1.0))
