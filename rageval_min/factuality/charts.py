"""The factuality section of the HTML report (``--format html``): drawn from the report's result."""

from typing import List, Mapping

from ..report.charts import Ctx, declared_range, figure
from ..report.svg import Bar, bar_chart, dot_plot, is_number
from .accumulators import F1kAccumulator, SafeAccumulator
from .correlation import CorrelateAccumulator
from .factscorer import FactScoreAccumulator
from .veriscore_metric import VeriScoreAccumulator

__all__ = ["section"]

#: Every factuality command's declared metrics (the charts' axes are clamped to their ranges).
_DECLARED = (
    F1kAccumulator.METRICS
    + SafeAccumulator.METRICS
    + FactScoreAccumulator.METRICS
    + VeriScoreAccumulator.METRICS
    + CorrelateAccumulator.METRICS
)


def section(c: Ctx) -> str:
    out = []
    r = c.result
    heads = [
        n
        for n in ("f1_mean", "precision_mean", "recall_mean", "score", "init_score", "respond_ratio")
        if is_number(r.get(n))
    ]
    if heads:
        caption = "error bars: the result's bootstrap interval" if any(n in c.intervals for n in heads) else ""
        domain = declared_range(_DECLARED, heads)
        svg = bar_chart([(n, [c.bar(r[n], n)]) for n in heads], title="factuality", domain=domain)
        out.append(figure(svg, caption))
    lines = r.get("lines")
    if isinstance(lines, list) and lines and all(isinstance(x, Mapping) for x in lines):
        if any("f1_at_k" in x for x in lines):
            vals = [(str(x.get("id", i)), x.get("f1_at_k")) for i, x in enumerate(lines)]
            k = r.get("max_claims")
            out.append(figure(dot_plot(vals, title=f"F1@K distribution (K={k}), one dot per line")))
        elif any(isinstance(x.get("pearson"), Mapping) for x in lines):
            groups = []
            for i, x in enumerate(lines):
                bars = []
                for j, name in enumerate(("pearson", "spearman")):
                    st = x.get(name)
                    bars.append(Bar(st.get("statistic") if isinstance(st, Mapping) else None, j, label=name))
                groups.append((str(x.get("id", i)), bars))
            domain = declared_range(_DECLARED, ["pearson", "spearman"])
            out.append(figure(bar_chart(groups, title="correlations", series=["pearson", "spearman"], domain=domain)))
    per_prompt = r.get("per_prompt_f1")
    if isinstance(per_prompt, Mapping):
        for side, vals in per_prompt.items():
            if isinstance(vals, list):
                out.append(
                    figure(
                        dot_plot([(f"prompt {i}", v) for i, v in enumerate(vals)], title=f"F1@K distribution: {side}")
                    )
                )
    scores = r.get("scores")
    if isinstance(scores, list) and scores and all(isinstance(x, Mapping) and "veriscore" in x for x in scores):
        models: List[str] = []
        domains: List[str] = []
        for x in scores:
            if str(x.get("model")) not in models:
                models.append(str(x.get("model")))
            if str(x.get("domain")) not in domains:
                domains.append(str(x.get("domain")))
        cell = {(str(x.get("domain")), str(x.get("model"))): x.get("veriscore") for x in scores}
        groups = [(d, [Bar(cell.get((d, m)), i, label=f"{m} {d}") for i, m in enumerate(models)]) for d in domains]
        domain = declared_range(_DECLARED, ["veriscore"])
        out.append(figure(bar_chart(groups, title="VeriScore by domain", series=models, domain=domain)))
    return "".join(out)
