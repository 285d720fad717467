"""The pairwise section of the HTML report (``--format html``): drawn from the report's result."""

from typing import Any, Dict, List, Mapping, Tuple

from ..report.charts import Ctx, declared_range, figure
from ..report.svg import bar_chart, heatmap, is_number, stacked_bar
from .sub_eval import PairwiseAccumulator

__all__ = ["section"]


def section(c: Ctx) -> str:
    """The swap-consistency bars, the new-version win-rate heatmaps and the old-version bar chart."""
    out = _consistency(c.result)
    maps = _win_rate_maps(c.result.get("new_version"))
    if maps:
        out.append('<div class="figs">' + "".join(maps) + "</div>")
    out += _old_version_bars(c, c.result.get("old_version"))
    return "".join(out)


def _consistency(result: Mapping[str, Any]) -> List[str]:
    out = []
    counts = result.get("counts")
    if isinstance(counts, Mapping) and is_number(counts.get("extracted")) and is_number(counts.get("consistent")):
        ext, con = counts["extracted"], counts["consistent"]
        out.append(
            figure(
                stacked_bar(
                    [("consistent", con, con), ("inconsistent", max(ext - con, 0), None)],
                    title=f"swap consistency over {ext} extracted judgement pairs",
                    rate=counts.get("consistency_rate"),
                    rate_label="consistency_rate",
                ),
                "a pair is consistent when the judge's verdicts agree after swapping the answer order",
            )
        )
    per_model = result.get("per_model_consistency")
    if isinstance(per_model, Mapping):
        splits = []
        for model, m in per_model.items():
            if isinstance(m, Mapping) and is_number(m.get("extracted")) and is_number(m.get("consistent")):
                ext, con = m["extracted"], m["consistent"]
                splits.append(
                    figure(
                        stacked_bar(
                            [("consistent", con, con), ("inconsistent", max(ext - con, 0), None)],
                            title=f"{model}: swap consistency over {ext} pairs",
                            rate=m.get("consistency_rate"),
                            rate_label="consistency_rate",
                        )
                    )
                )
        if splits:
            out.append('<div class="figs">' + "".join(splits) + "</div>")
    return out


def _win_rate_maps(new: Any) -> List[str]:
    maps: List[str] = []
    if isinstance(new, Mapping):
        for mode, table in new.items():
            if not isinstance(table, Mapping):
                continue
            by_aspect: Dict[str, Dict[Tuple[str, str], Any]] = {}
            for key, v in table.items():
                parts = str(key).split(";")
                if len(parts) == 3:
                    by_aspect.setdefault(parts[0], {})[(parts[1], parts[2])] = v
            for aspect, cells in by_aspect.items():
                models: List[str] = []
                for a, b in cells:
                    models += [m for m in (a, b) if m not in models]
                maps.append(
                    figure(
                        heatmap(
                            models,
                            models,
                            cells,
                            title=f"win rate, {mode.replace('_', ' ')}: {aspect}",
                            row_title="row model's win rate against the column model",
                        )
                    )
                )
    return maps


def _old_version_bars(c: Ctx, old: Any) -> List[str]:
    if not isinstance(old, Mapping):
        return []
    series = [k for k, v in old.items() if isinstance(v, Mapping) and isinstance(v.get("rows"), list)]
    if not series:
        return []
    cols = old[series[0]].get("columns") or []
    col = "Overall-lang" if "Overall-lang" in cols else (cols[1] if len(cols) > 1 else None)
    if col is None:
        return []
    j = cols.index(col)
    names: List[str] = []
    vals: Dict[Tuple[str, int], Any] = {}
    for i, s in enumerate(series):
        for row in old[s]["rows"]:
            if isinstance(row, list) and len(row) > j:
                if str(row[0]) not in names:
                    names.append(str(row[0]))
                vals[(str(row[0]), i)] = row[j]
    groups = [
        (m, [c.bar(vals.get((m, i)), f"{s};{m};{col}", i, f"{s} {m}") for i, s in enumerate(series)]) for m in names
    ]
    domain = declared_range(PairwiseAccumulator.METRICS, [f"{s};{m};{col}" for s in series for m in names])
    title = f"{col} win rate against the reference"
    return [figure(bar_chart(groups, title=title, series=series, ymax=1.0, domain=domain))]
