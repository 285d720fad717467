"""Pipeline step: the compare section of the HTML report (``--format html``): drawn from the report's result."""

from typing import Any, List, Mapping, Tuple

from ..report.charts import MAX_ROWS, Ctx, figure, more, num, pair, table, tree
from ..report.svg import Bar, bar_chart, esc, forest_plot, is_number

__all__ = ["OWN_GATES", "section"]

#: where the gates compare adds itself come from (shown in the page's gate table)
OWN_GATES = "--fail-on-regression"


_HEAD = [
    "metric",
    "kind",
    "direction",
    "n",
    "baseline",
    "candidate",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "test",
    "verdict",
]


def _bars(name: str, m: Mapping) -> List[Bar]:
    """The baseline and candidate bars of one metric, each with its interval when there is one."""
    out = []
    for side, x in (("baseline", 0), ("candidate", 1)):
        lo, hi = pair(m.get(side + "_ci")) or (None, None)
        value = m.get(side) if is_number(m.get(side)) else None
        out.append(Bar(value, x, lo, hi, f"{name} {side}"))
    return out


def _status(m: Mapping) -> str:
    """``improved``, ``regressed`` or "": the colour follows the verdict (the decision the exit code
    comes from), never the raw counts of moved pairs."""
    verdict = m.get("verdict")
    if isinstance(verdict, str):
        return verdict if verdict in ("improved", "regressed") else ""
    return "regressed" if m.get("regressed") else ("improved" if m.get("improved") else "")


def _row(name: str, m: Mapping, status: str) -> List[str]:
    verdict = m.get("verdict")
    shown = verdict if isinstance(verdict, str) else (status or "no change")
    cls = {"regressed": "fail", "improved": "pass"}.get(status, "")
    return (
        [f"<code>{esc(name)}</code>"]
        + [num(m.get(k)) for k in ("kind", "direction", "n", "baseline", "candidate", "delta", "ci_low", "ci_high")]
        + [num(m.get("p_value")), num(m.get("test")), f'<span class="st-{cls}">{esc(shown)}</span>']
    )


def _figures(groups: List[Tuple[str, List[Bar]]], forest: List[Tuple[str, Any, Any, Any, str]]) -> List[str]:
    vals = [float(v) for _, bs in groups for b in bs for v in (b.value, b.high) if v is not None and is_number(v)]
    ymax = 1.0 if vals and max(vals) <= 1.0 + 1e-9 and min(vals) >= 0 else None  # a 0..1 rate, last-bit noise
    return [
        figure(bar_chart(groups, title="baseline vs candidate", series=["baseline", "candidate"], ymax=ymax)),
        figure(
            forest_plot(forest, title="delta (candidate - baseline) with its interval"),
            "green: improved; red: regressed",
        ),
    ]


def _regressions(regs: Any) -> List[str]:
    if not isinstance(regs, list):
        return []
    out = [f"<h3>Per-item regressions ({len(regs)})</h3>"]
    if regs:
        out.append(tree(regs[:MAX_ROWS]) + more(len(regs)))
    else:
        out.append('<p class="muted">none</p>')
    return out


def section(c: Ctx) -> str:
    """The counts, the baseline/candidate bars, the forest plot of the deltas, the table and the regressions."""
    metrics = c.result.get("metrics")
    if not isinstance(metrics, Mapping):
        return ""
    out = []
    counts = [(k, c.result.get(k)) for k in ("key", "paired", "only_baseline", "only_candidate") if k in c.result]
    if counts:
        out.append(table([k for k, _ in counts], [[num(v) for _, v in counts]]))
    groups: List[Tuple[str, List[Bar]]] = []
    rows = []
    forest: List[Tuple[str, Any, Any, Any, str]] = []
    for name, m in metrics.items():
        if not isinstance(m, Mapping):
            continue
        groups.append((name, _bars(name, m)))
        status = _status(m)
        forest.append((name, m.get("delta"), m.get("ci_low"), m.get("ci_high"), status))
        rows.append(_row(name, m, status))
    if groups:
        out += _figures(groups, forest)
        out.append(table(_HEAD, rows))
    out += _regressions(c.result.get("regressions"))
    return "".join(out)
