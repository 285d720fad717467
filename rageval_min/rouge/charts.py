"""The rouge section of the HTML report (``--format html``): drawn from the report's result."""

from typing import Mapping

from ..report.charts import Ctx, declared_range, figure
from ..report.svg import bar_chart
from .accumulator import RougeAccumulator

__all__ = ["section"]


def section(c: Ctx) -> str:
    mean = c.result.get("mean")
    if not isinstance(mean, Mapping):
        return ""
    measures = ["precision", "recall", "fmeasure"]
    groups, names = [], []
    for rtype, scores in mean.items():
        if isinstance(scores, Mapping):
            names += [f"{rtype}.{m}" for m in measures]
            groups.append(
                (rtype, [c.bar(scores.get(m), f"{rtype}.{m}", i, f"{rtype} {m}") for i, m in enumerate(measures)])
            )
    if not groups:
        return ""
    domain = declared_range(RougeAccumulator.METRICS, names)
    return figure(bar_chart(groups, title="mean ROUGE over records", series=measures, domain=domain))
