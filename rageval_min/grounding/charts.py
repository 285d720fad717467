"""The grounding section of the HTML report (``--format html``): drawn from the report's result."""

from ..report.charts import Ctx, figure
from ..report.svg import bar_chart

__all__ = ["section"]


def section(c: Ctx) -> str:
    names = [n for n in ("precision", "chr", "under_refusal", "over_refusal", "recall@k") if n in c.result]
    if not names:
        return ""
    svg = bar_chart(
        [(n, [c.bar(c.result[n], n)]) for n in names],
        title="grounding rates against their gates",
        ymax=1.0,
    )
    return figure(
        svg, "bars: the result's rates; dashed marks: gate thresholds (green pass, red fail, amber not evaluated)"
    )
