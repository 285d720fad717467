"""Every family's HTML charts keep their axes within the metrics' declared ranges (issue #24 item 5).

Each case takes a real report of a gold sample, pushes one drawn value just past its declared range
(``1.0000000000000002``, the last bit of a rate) and gives it an interval poking out on both sides,
renders the HTML page and parses every chart: each numeric axis tick lies in the declared range,
both ends of it are ticks when the data reach them, and every bar, whisker, dot, line and gate mark
stays inside the plot band the axis' grid lines span.  The exact value still reaches the page.
"""

import copy
import os
import re
import xml.etree.ElementTree as ET
from typing import Any, Callable, Dict, List, Tuple

import pytest
from conftest import ROOT

import rageval_min
from rageval_min import factuality, grounding, ir, mtrag, pairwise, rgb, rouge
from rageval_min.report import Report
from rageval_min.report.charts import declared_range

G = os.path.join(ROOT, "gold_samples")
OVER = 1.0000000000000002
UNDER = -2.220446049250313e-16
SVG = "{http://www.w3.org/2000/svg}"


def _poke(report: Report, set_value: Callable[[Dict[str, Any]], None], interval: str = "") -> Report:
    result = copy.deepcopy(report.result)
    set_value(result)
    intervals = dict(report.intervals or {})
    if interval:
        intervals[interval] = {"low": UNDER, "high": OVER}
    return report._replace(result=result, intervals=intervals)


def _grounding(tmp_path) -> Tuple[Report, Tuple[float, float]]:
    r = grounding.score_file(os.path.join(G, "grounding", "gold.jsonl"), os.path.join(G, "grounding", "trace.jsonl"))
    return _poke(r, lambda res: res.__setitem__("precision", OVER), "precision"), (0.0, 1.0)


def _rouge(tmp_path):
    r = rouge.score_file(os.path.join(G, "rouge", "pairs.jsonl"), rouge_types=["rougeL"])

    def set_value(res):
        res["mean"]["rougeL"]["fmeasure"] = OVER

    return _poke(r, set_value, "rougeL.fmeasure"), declared_range(rouge.RougeAccumulator.METRICS, ["rougeL.fmeasure"])


def _ir(tmp_path):
    r = ir.score_file(os.path.join(G, "ir", "run.txt"), os.path.join(G, "ir", "qrels.txt"), topics=True)

    def set_value(res):
        res["measures"]["nDCG@10"] = OVER
        res["topics"][0]["nDCG@10"] = OVER

    return _poke(r, set_value, "nDCG@10"), declared_range(ir.IrAccumulator.METRICS, ["nDCG@10"])


def _factuality_f1k(tmp_path):
    r = factuality.f1k_file(os.path.join(G, "factuality", "counts.jsonl"))

    def set_value(res):
        res["f1_mean"], res["f1_mean_ci_low"], res["f1_mean_ci_high"] = OVER, UNDER, OVER

    return _poke(r, set_value), (0.0, 1.0)


def _factuality_correlate(tmp_path):
    r = factuality.correlate_file(os.path.join(G, "factuality", "pairs.jsonl"))

    def set_value(res):
        res["lines"][0]["pearson"]["statistic"] = -OVER
        res["lines"][-1]["spearman"]["statistic"] = OVER

    return _poke(r, set_value), declared_range(factuality.CorrelateAccumulator.METRICS, ["pearson", "spearman"])


def _rgb_score(tmp_path):
    path = os.path.join(G, "rgb", "prediction_en_demo_temp0.2_noise0.4_passage5_correct0.0.json")
    r = rgb.score_file(path)
    return _poke(r, lambda res: res.__setitem__("all_rate", OVER), "all_rate"), (0.0, 1.0)


def _rgb_report(tmp_path):
    names = sorted(f for f in os.listdir(os.path.join(G, "rgb")) if f.startswith("prediction_"))
    r = rgb.report_files([os.path.join(G, "rgb", f) for f in names if not f.endswith("_result.json")])

    def set_value(res):
        en = res["abilities"]["demo"]["en"]
        first, *rest = en["noise_robustness"]
        en["noise_robustness"][first] = OVER
        en["noise_robustness"][rest[-1] if rest else first] = UNDER
        for m in en["counterfactual_robustness"].values():
            m["accuracy"], m["error_detection_rate"] = OVER, UNDER

    return _poke(r, set_value), declared_range(rgb.ScoreAccumulator.METRICS, ["all_rate"])


def _pairwise(tmp_path):
    r = pairwise.score_file(
        os.path.join(G, "pairwise", "record_fakejudge_2.tsv"), nopt=2, refm="ref", extras=["unparseable_share"]
    )

    def set_value(res):
        table = res["old_version"]["win+halfdraw"]
        j = table["columns"].index("Overall-lang")
        table["rows"][0][j] = OVER
        table["rows"][-1][j] = UNDER

    first_model = r.result["old_version"]["win+halfdraw"]["rows"][0][0]
    return _poke(r, set_value, f"win+halfdraw;{first_model};Overall-lang"), (0.0, 1.0)


def _mtrag_algorithmic(tmp_path):
    r = mtrag.algorithmic_file(os.path.join(G, "mtrag", "tasks.jsonl"), str(tmp_path / "out.jsonl"))
    return _poke(r, lambda res: res["means"].__setitem__("Recall", OVER), "Recall"), (0.0, 1.0)


def _mtrag_summarize(tmp_path):
    r = mtrag.summarize_files([os.path.join(G, "mtrag", "expected_conditioned.jsonl")])

    def set_value(res):
        for groups in res["settings"][0]["models"].values():
            for g in groups.values():
                if "RL_F_idk_underspecified" in g:
                    g["RL_F_idk_underspecified"]["mean"] = OVER

    return _poke(r, set_value), (0.0, 1.0)


def _judge_agreement(tmp_path):
    """``judge agreement`` declares no metrics: its charts are the generic ones, whose axis tops at 1
    and reaches down to -1 at most, the range of kappa and alpha."""
    import json

    from conftest import run_cli

    s = os.path.join(G, "judge")
    argv = ["judge", "agreement", "--judge", os.path.join(s, "agreement_judge.jsonl"), "--human"]
    argv += [os.path.join(s, "agreement_human.jsonl"), "--level", "ordinal", "--labels", "no,partial,yes"]
    out = json.loads(run_cli(argv).out)
    r = Report(out["family"], out["signature"], out["result"], {})

    def set_value(res):
        res["intervals"]["kappa"] = {"low": -OVER, "high": 0.9}
        res["intervals"]["raw_agreement"] = {"low": 0.7, "high": OVER}

    return _poke(r, set_value), (-1.0, 1.0)


CASES = {
    "grounding": _grounding,
    "rouge": _rouge,
    "ir": _ir,
    "factuality-f1k": _factuality_f1k,
    "factuality-correlate": _factuality_correlate,
    "rgb-score": _rgb_score,
    "rgb-report": _rgb_report,
    "pairwise": _pairwise,
    "mtrag-algorithmic": _mtrag_algorithmic,
    "mtrag-summarize": _mtrag_summarize,
    "judge-agreement": _judge_agreement,
}


def _charts(html: str) -> List[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg .*?</svg>", html, re.S)]


def _number(text: str):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _ys(el: ET.Element) -> List[float]:
    """The y coordinates of a drawn mark."""
    tag = el.tag.replace(SVG, "")
    if tag == "rect":
        y, h = float(el.get("y", "0")), float(el.get("height", "0"))
        return [y, y + h]
    if tag == "line":
        return [float(el.get("y1", "0")), float(el.get("y2", "0"))]
    if tag == "circle":
        return [float(el.get("cy", "0"))]
    if tag == "polyline":
        return [float(p.split(",")[1]) for p in el.get("points", "").split()]
    return []


def check_chart(svg: ET.Element, lo: float, hi: float) -> List[str]:
    """What in one chart lies outside ``lo..hi`` (its ticks) or outside its plot band (its marks)."""
    wrong = []
    ticks = [_number(t.text or "") for t in svg.iter(SVG + "text") if "tick" in t.get("class", "").split()]
    values = [t for t in ticks if t is not None]
    wrong += [f"tick {t}" for t in values if not lo - 1e-9 <= t <= hi + 1e-9]
    grid = [y for line in svg.iter(SVG + "line") if line.get("class") == "grid" for y in _ys(line)]
    if grid:
        top, bottom = min(grid), max(grid)
        for el in _marks(svg):
            for y in _ys(el):
                if not top - 0.01 <= y <= bottom + 0.6:  # a zero-height bar is drawn 0.5 high
                    wrong.append(f"{el.tag.replace(SVG, '')}.{el.get('class')} at y={y} outside {top}..{bottom}")
    return wrong


def _marks(svg: ET.Element) -> List[ET.Element]:
    """The shapes that draw data: inside a datum, interval or gate group, and the lines of a line chart."""
    marks = [p for p in svg.iter(SVG + "polyline")]
    for g in svg.iter(SVG + "g"):
        if g.get("class", "").split()[:1] in (["datum"], ["interval"], ["gate-pass"], ["gate-fail"], ["gate-skip"]):
            marks += [el for el in g.iter() if el is not g and el.get("class") != "halo"]
    return marks


@pytest.mark.parametrize("name", list(CASES))
def test_axes_stay_in_the_declared_range(name, tmp_path):
    report, (lo, hi) = CASES[name](tmp_path)
    assert lo is not None and hi is not None, f"{name}: the drawn metric declares no range"
    html = rageval_min.render(report, "html")
    charts = _charts(html)
    assert charts, f"{name}: no chart drawn"
    ranged = [c for c in charts if any(line.get("class") == "grid" for line in c.iter(SVG + "line"))]
    assert ranged or name == "ir", f"{name}: no chart with an axis"
    wrong = {i: w for i, c in enumerate(charts) if (w := check_chart(c, lo, hi))}
    assert not wrong, f"{name}: {wrong}"
    drawn = "".join(re.findall(r"<svg .*?</svg>", html, re.S))
    assert re.search(r'data-v="-?1\.0000000000000002"', drawn), f"{name}: the value past the range is not drawn"


def test_the_check_sees_a_stretched_axis():
    """The parse-based check fails an axis drawn to 2 and a bar drawn above the top grid line."""
    from rageval_min.report.svg import Bar, bar_chart

    stretched = ET.fromstring(bar_chart([("p", [Bar(OVER, 0, UNDER, OVER)])], title="t"))
    assert check_chart(stretched, 0.0, 1.0)
    drawn = bar_chart([("p", [Bar(0.5, 0)])], title="t", ymax=1.0)
    over = ET.fromstring(re.sub(r'(<rect class="s0" x="[^"]*") y="[^"]*"', r'\1 y="2"', drawn))
    assert any("outside" in w for w in check_chart(over, 0.0, 1.0)), drawn
    clamped = ET.fromstring(bar_chart([("p", [Bar(OVER, 0, UNDER, OVER)])], title="t", domain=(0.0, 1.0)))
    assert check_chart(clamped, 0.0, 1.0) == []
