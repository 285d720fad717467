"""The rgb section of the HTML report (``--format html``): drawn from the report's result."""

from typing import Mapping, Sequence

from ..report.charts import Ctx, declared_range, figure
from ..report.svg import Bar, Domain, bar_chart, is_number, line_chart
from .accumulators import ScoreAccumulator

__all__ = ["section"]

#: The score keys the abilities table takes its counterfactual values from (``abilities_table``).
_FROM = {"accuracy": "all_rate", "error_detection_rate": "fact_check_rate", "error_correction_rate": "correct_rate"}


def _domain(names: Sequence[str]) -> Domain:
    """The declared range of these result keys (abilities hold ``all_rate`` values)."""
    return declared_range(ScoreAccumulator.METRICS, [_FROM.get(n, n) for n in names])


def section(c: Ctx) -> str:
    out = []
    abilities = c.result.get("abilities")
    if isinstance(abilities, Mapping):
        for model, langs in abilities.items():
            if not isinstance(langs, Mapping):
                continue
            series = []
            cf_groups = []
            for lang, abil in langs.items():
                if not isinstance(abil, Mapping):
                    continue
                for name, by_noise in abil.items():
                    if not isinstance(by_noise, Mapping):
                        continue
                    if name == "counterfactual_robustness":
                        for setting, m in by_noise.items():
                            if isinstance(m, Mapping):
                                keys = [k for k in m if is_number(m[k]) or m[k] is None]
                                cf_groups.append(
                                    (f"{lang} {setting}", [Bar(m[k], i, label=k) for i, k in enumerate(keys)])
                                )
                        continue
                    pts = []
                    for noise, v in by_noise.items():
                        try:
                            pts.append((float(noise), v))
                        except ValueError:
                            continue
                    if pts:
                        series.append((f"{lang} {name.replace('_', ' ')}", pts))
            if series:
                out.append(
                    figure(
                        line_chart(
                            series,
                            title=f"RGB abilities of {model}",
                            xlabel="noise rate",
                            ylabel="rate",
                            ymax=1.0,
                            domain=_domain(["all_rate"]),
                        )
                    )
                )
            if cf_groups:
                names = ["accuracy", "error_detection_rate", "error_correction_rate"]
                out.append(
                    figure(
                        bar_chart(
                            cf_groups,
                            title=f"counterfactual robustness of {model}",
                            series=names,
                            ymax=1.0,
                            domain=_domain(names),
                        )
                    )
                )
        return "".join(out)
    names = [n for n in ("all_rate", "reject_rate", "fact_check_rate", "correct_rate", "accuracy") if n in c.result]
    if names:
        bars = [(n, [c.bar(c.result[n], n)]) for n in names]
        out.append(figure(bar_chart(bars, title="RGB rates", ymax=1.0, domain=_domain(names))))
    return "".join(out)
