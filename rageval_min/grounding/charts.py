"""The grounding section of the HTML report (``--format html``): drawn from the report's result."""

from ..report.charts import Ctx, declared_range, figure
from ..report.svg import bar_chart
from .score_eval import GroundingAccumulator

__all__ = ["section"]


def section(c: Ctx) -> str:
    """The declared rates (``METRICS`` of kind rate) as bars on their declared range, with their gates."""
    rates = [m for m in GroundingAccumulator.METRICS if m.kind == "rate" and m.name in c.result]
    if not rates:
        return ""
    svg = bar_chart(
        [(m.name, [c.bar(c.result[m.name], m.name)]) for m in rates],
        title="grounding rates against their gates",
        domain=declared_range(rates, [m.name for m in rates]),
    )
    return figure(
        svg, "bars: the result's rates; dashed marks: gate thresholds (green pass, red fail, amber not evaluated)"
    )
