"""The compare section of the HTML report (``--format html``): drawn from the report's result."""

from typing import Mapping

from ..report.charts import MAX_ROWS, Ctx, figure, more, num, pair, table, tree
from ..report.svg import Bar, bar_chart, esc, forest_plot, is_number

__all__ = ["OWN_GATES", "section"]

#: where the gates compare adds itself come from (shown in the page's gate table)
OWN_GATES = "--fail-on-regression"


def section(c: Ctx) -> str:
    metrics = c.result.get("metrics")
    if not isinstance(metrics, Mapping):
        return ""
    out = []
    counts = [(k, c.result.get(k)) for k in ("key", "paired", "only_baseline", "only_candidate") if k in c.result]
    if counts:
        out.append(table([k for k, _ in counts], [[num(v) for _, v in counts]]))
    groups = []
    rows = []
    forest = []
    for name, m in metrics.items():
        if not isinstance(m, Mapping):
            continue
        b_iv = pair(m.get("baseline_ci")) or (None, None)
        c_iv = pair(m.get("candidate_ci")) or (None, None)
        groups.append(
            (
                name,
                [
                    Bar(
                        m.get("baseline") if is_number(m.get("baseline")) else None,
                        0,
                        b_iv[0],
                        b_iv[1],
                        f"{name} baseline",
                    ),
                    Bar(
                        m.get("candidate") if is_number(m.get("candidate")) else None,
                        1,
                        c_iv[0],
                        c_iv[1],
                        f"{name} candidate",
                    ),
                ],
            )
        )
        verdict = m.get("verdict")
        if verdict in ("improved", "regressed"):
            status = str(verdict)
        else:
            status = "regressed" if m.get("regressed") else ("improved" if m.get("improved") else "")
        shown = verdict if isinstance(verdict, str) else (status or "no change")
        forest.append((name, m.get("delta"), m.get("ci_low"), m.get("ci_high"), status))
        cls = {"regressed": "fail", "improved": "pass"}.get(status, "")
        rows.append(
            [f"<code>{esc(name)}</code>"]
            + [num(m.get(k)) for k in ("kind", "direction", "n", "baseline", "candidate", "delta", "ci_low", "ci_high")]
            + [
                num(m.get("p_value")),
                num(m.get("test")),
                f'<span class="st-{cls}">{esc(shown)}</span>',
            ]
        )
    if groups:
        vals = [float(v) for _, bs in groups for b in bs for v in (b.value, b.high) if v is not None and is_number(v)]
        ymax = 1.0 if vals and max(vals) <= 1.0 and min(vals) >= 0 else None
        out.append(
            figure(bar_chart(groups, title="baseline vs candidate", series=["baseline", "candidate"], ymax=ymax))
        )
        out.append(
            figure(
                forest_plot(forest, title="delta (candidate - baseline) with its interval"),
                "green: improved; red: regressed",
            )
        )
        head = [
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
        out.append(table(head, rows))
    regs = c.result.get("regressions")
    if isinstance(regs, list):
        out.append(f"<h3>Per-item regressions ({len(regs)})</h3>")
        if regs:
            out.append(tree(regs[:MAX_ROWS]) + more(len(regs)))
        else:
            out.append('<p class="muted">none</p>')
    return "".join(out)
