"""The ``--format html`` report (issue #17): self-contained, escaped, exact numbers, renders in Chromium.

Pages are produced by the CLI on the gold samples of every family (and on a
``compare`` of two ``--per-item`` files).  The static checks always run; the
browser checks need ``/usr/bin/chromium`` (``apt-get install chromium``) and
write PNG screenshots under ``$RAGEVAL_MIN_ARTIFACTS`` (default: a pytest
temporary directory).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest
from conftest import ROOT, need_program, run_cli

from rageval_min.gates import GateOutcome
from rageval_min.report import Report, render
from rageval_min.report import charts as _charts
from rageval_min.report import render_html as _html

GOLD = os.path.join(ROOT, "gold_samples")

RGB_FILES = [
    "prediction_en_demo_temp0.2_noise0.4_passage5_correct0.0.json",
    "prediction_en_demo_temp0.2_noise1.0_passage5_correct0.0.json",
    "prediction_en_fact_demo_temp0.2_noise0.0_passage5_correct0.0.json",
    "prediction_zh_demo_temp0.2_noise0.0_passage5_correct0.0.json",
    "prediction_zh_int_demo_temp0.2_noise0.2_passage5_correct0.0.json",
]

#: name -> (gold_samples folder, argv); paths are relative to the folder.
CASES: Dict[str, Tuple[str, List[str]]] = {
    "grounding": ("grounding", ["grounding", "--gold", "gold.jsonl", "--trace", "trace.jsonl"]),
    "grounding-user-gates": (
        "grounding",
        [
            "grounding",
            "--gold",
            "gold.jsonl",
            "--trace",
            "trace.jsonl",
            "--gate",
            "precision>=0.5",
            "--gate",
            "chr>=0.9",
        ],
    ),
    "rouge": ("rouge", ["rouge", "--input", "pairs.jsonl", "--summary"]),
    "pairwise": (
        "pairwise",
        [
            "pairwise",
            "score",
            "--record",
            "record_fakejudge_2.tsv",
            "--nopt",
            "2",
            "--refm",
            "ref",
            "--extra",
            "unparseable_share",
            "--extra",
            "per_model_consistency",
        ],
    ),
    "rgb-score": ("rgb", ["rgb", "score", "--input", RGB_FILES[2]]),
    "rgb-report": ("rgb", ["rgb", "report", "--input"] + RGB_FILES),
    "factuality-f1k": ("factuality", ["factuality", "f1k", "--input", "counts.jsonl", "--max-claims", "64"]),
    "factuality-safe": ("factuality", ["factuality", "safe", "--input", "safe_results.json", "--max-claim", "64"]),
    "factuality-factscore": ("factuality", ["factuality", "factscore", "--input", "labels.jsonl"]),
    "factuality-veriscore": ("factuality", ["factuality", "veriscore", "--input", "veriscore.jsonl"]),
    "factuality-correlate": ("factuality", ["factuality", "correlate", "--input", "pairs.jsonl"]),
    "mtrag-summarize": (
        "mtrag",
        [
            "mtrag",
            "summarize",
            "--input",
            "expected_conditioned.jsonl",
            "--setting",
            "demo",
            "--metric",
            "RB_agg_idk_underspecified",
        ],
    ),
    "mtrag-algorithmic": ("mtrag", ["mtrag", "algorithmic", "--input", "tasks.jsonl", "--records", "{tmp}/alg.jsonl"]),
    "mtrag-condition": ("mtrag", ["mtrag", "condition", "--input", "judged.jsonl", "--records", "{tmp}/cond.jsonl"]),
    "compare": ("", []),  # built from two --per-item files in the fixture
}


def artifacts_dir(tmp_factory: Any) -> str:
    path = os.environ.get("RAGEVAL_MIN_ARTIFACTS") or str(tmp_factory.mktemp("html-artifacts"))
    os.makedirs(path, exist_ok=True)
    return path


class Page:
    def __init__(self, name: str, code: int, err: str, html: str, data: Any, report: Optional[Report]) -> None:
        self.name, self.code, self.err, self.html, self.data, self.report = name, code, err, html, data, report
        self.path = ""


def _run_captured(argv: List[str], cwd: str) -> Tuple[Any, Optional[Report]]:
    """Run the CLI in ``cwd``; also capture the Report handed to the HTML renderer."""
    seen: Dict[str, Report] = {}
    real = _html.render_html

    def spy(report: Report, outcomes: Any) -> str:
        seen["report"] = report
        return real(report, outcomes)

    old = os.getcwd()
    _html.render_html = spy  # type: ignore[assignment]
    try:
        os.chdir(cwd)
        result = run_cli(argv)
    finally:
        os.chdir(old)
        _html.render_html = real  # type: ignore[assignment]
    return result, seen.get("report")


def _compare_inputs(tmp: str) -> List[str]:
    """Rouge item rows of the gold sample as the baseline; a candidate worse on rouge2, better on rouge1."""
    items = os.path.join(tmp, "rouge_items.jsonl")
    res, _ = _run_captured(
        ["rouge", "--input", "pairs.jsonl", "--summary", "--per-item", items, "--output", os.devnull],
        os.path.join(GOLD, "rouge"),
    )
    assert res.code == 0, res.err
    rows = [json.loads(line) for line in open(items, encoding="utf-8")]
    base, cand = [], []
    for rep in range(3):
        for row in rows:
            b = dict(row, id=f"{row['id']}-{rep}")
            c = dict(b)
            for k, v in c.items():
                if k.startswith("rouge2."):
                    c[k] = max(0.0, v - 0.1 - 0.01 * rep)
                elif k.startswith("rouge1."):
                    c[k] = min(1.0, v + 0.02)
            base.append(b)
            cand.append(c)
    paths = [os.path.join(tmp, "<base>.jsonl"), os.path.join(tmp, "cand.jsonl")]
    for path, data in zip(paths, (base, cand)):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in data))
    return ["compare", "--baseline", paths[0], "--candidate", paths[1], "--key", "id", "--fail-on-regression"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: Any) -> Dict[str, Page]:
    out = artifacts_dir(tmp_path_factory)
    work = str(tmp_path_factory.mktemp("html-work"))
    made: Dict[str, Page] = {}
    for name, (folder, argv) in CASES.items():
        cwd = os.path.join(GOLD, folder)
        if name == "compare":
            argv, cwd = _compare_inputs(work), work
        argv = [a.replace("{tmp}", work) for a in argv]
        html_path = os.path.join(out, f"{name}.html")
        json_path = os.path.join(work, f"{name}.json")
        res, report = _run_captured(argv + ["--output", f"html:{html_path}", "--output", f"json:{json_path}"], cwd)
        html = open(html_path, encoding="utf-8").read() if os.path.exists(html_path) else ""
        data = json.load(open(json_path, encoding="utf-8")) if os.path.exists(json_path) else None
        page = Page(name, res.code, res.err, html, data, report)
        page.path = html_path
        made[name] = page
    return made


def _page(pages: Dict[str, Page], name: str) -> Page:
    page = pages[name]
    assert page.code in (0, 1), f"{name}: exit {page.code}: {page.err}"
    assert page.html and page.data is not None
    return page


def json_numbers(obj: Any, acc: Optional[Set[float]] = None) -> Set[float]:
    acc = set() if acc is None else acc
    if isinstance(obj, bool):
        return acc
    if isinstance(obj, (int, float)):
        acc.add(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            json_numbers(v, acc)
    elif isinstance(obj, list):
        for v in obj:
            json_numbers(v, acc)
    return acc


class Collect(HTMLParser):
    """Tags, attributes, text and a nesting check."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
    SVG_SELF = {"rect", "line", "circle", "polyline", "path"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: List[Tuple[str, Dict[str, Optional[str]]]] = []
        self.stack: List[str] = []
        self.errors: List[str] = []
        self.text: List[str] = []
        self.scripts: List[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = True
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        (self.scripts if self._in_script else self.text).append(data)


def parse(html: str) -> Collect:
    c = Collect()
    c.feed(html)
    c.close()
    return c


URL_ATTRS = {"src", "href", "xlink:href", "srcset", "action", "formaction", "poster", "data", "background", "ping"}


def assert_self_contained(html: str) -> None:
    doc = parse(html)
    for tag, attrs in doc.tags:
        assert tag not in ("link", "img", "iframe", "object", "embed", "audio", "video", "source", "base", "form")
        for name, value in attrs.items():
            assert name not in URL_ATTRS, f"<{tag} {name}={value!r}> loads or links a resource"
            assert not name.startswith("on"), f"inline handler <{tag} {name}>"
        if tag == "script":
            assert "src" not in attrs
    css = "".join(re.findall(r"<style>(.*?)</style>", html, flags=re.S))
    assert "url(" not in css and "@import" not in css and "@font-face" not in css
    # The only "://" allowed is the SVG namespace (a name, never fetched).
    for m in re.finditer(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]*", html):
        assert m.group(0) == "http://www.w3.org/2000/svg", f"URL in the page: {m.group(0)}"
    assert "default-src 'none'" in html  # the Content-Security-Policy


@pytest.mark.parametrize("name", list(CASES))
def test_page_is_self_contained_and_well_formed(pages: Dict[str, Page], name: str) -> None:
    page = _page(pages, name)
    assert page.html.startswith("<!DOCTYPE html>")
    doc = parse(page.html)
    assert not doc.errors, doc.errors[:5]
    assert not doc.stack, doc.stack
    assert_self_contained(page.html)
    assert len([t for t, _ in doc.tags if t == "script"]) == 1
    assert "prefers-color-scheme: dark" in page.html


@pytest.mark.parametrize("name", list(CASES))
def test_page_numbers_equal_the_json_output(pages: Dict[str, Page], name: str) -> None:
    page = _page(pages, name)
    numbers = json_numbers(page.data)
    values = re.findall(r'data-v="([^"]*)"', page.html)
    assert values, "the page shows no number"
    for v in values:
        assert json.loads(v) in numbers, f"{v} is not a number of the JSON output"
        assert v == json.dumps(json.loads(v)), f"{v} is not written as json.dumps writes it"
    # Table cells: the shown text is rounded for reading (issue #24); the exact value is the title.
    from rageval_min.report import format_number

    for v, title, text in re.findall(r'<span class="n" data-v="([^"]*)" title="([^"]*)">([^<]*)</span>', page.html):
        value = json.loads(v)
        assert title == v and text == (format_number(value) if isinstance(value, float) else v)
    # Every gate of the JSON output is in the page with its value and threshold.
    for gate in page.data["gates"]:
        assert _html.esc(gate["gate"]) in page.html
        if gate["value"] is not None:
            assert f'data-v="{json.dumps(gate["value"])}"' in page.html
    assert f'data-pass="{json.dumps(page.data["pass"])}"' in page.html
    assert _html.esc(page.data["signature"]) in page.html
    for d in page.data["diagnostics"]:
        assert _html.esc(d) in page.html


@pytest.mark.parametrize("name", list(CASES))
def test_page_metric_values_are_the_reports(pages: Dict[str, Page], name: str) -> None:
    page = _page(pages, name)
    assert page.report is not None
    shown = re.findall(r'data-metric="([^"]*)"', page.html)
    metrics = {v for v in page.report.metrics.values() if v is not None}
    assert len(shown) == len([v for v in page.report.metrics.values() if isinstance(v, (int, float)) and v == v])
    for v in shown:
        assert json.loads(v) in metrics


def test_family_charts_are_drawn(pages: Dict[str, Page]) -> None:
    expect = {
        "grounding": ["grounding rates against their gates", 'class="gate-fail"'],
        "rouge": ["mean ROUGE over records"],
        "pairwise": ["swap consistency", "win rate, with tie", "win rate, without tie"],
        "rgb-report": ["RGB abilities of demo", "<polyline" if False else "noise rate", "counterfactual robustness"],
        "rgb-score": ["RGB rates"],
        "factuality-factscore": ['class="interval"'],
        "factuality-f1k": ['class="interval"'],
        "factuality-veriscore": ["VeriScore by domain"],
        "factuality-correlate": ["correlations"],
        "factuality-safe": ["F1@K distribution: side2"],
        "mtrag-summarize": ["MT-RAG means by answerability"],
        "mtrag-algorithmic": ["MT-RAG means over records", "not drawn (not in 0..1): Length"],
        "mtrag-condition": ["MT-RAG means over records"],
        "compare": ["baseline vs candidate", "delta (candidate - baseline)", "Per-item regressions", "regressed"],
    }
    for name, needles in expect.items():
        page = _page(pages, name)
        for needle in needles:
            assert needle in page.html, f"{name}: {needle!r} missing"


def test_user_gates_are_marked_on_the_chart(pages: Dict[str, Page]) -> None:
    page = _page(pages, "grounding-user-gates")
    assert "gate chr&gt;=0.9" in page.html
    assert page.data["pass"] is False


# ---------------------------------------------------------------------------
# rendering from Report objects (no CLI)

EVIL = '<script>alert("x")</script>'


def _evil_report() -> Report:
    return Report(
        family="pairwise",
        signature=f"sig|model={EVIL}",
        result={
            "counts": {"extracted": 4, "consistent": 3, "consistency_rate": 0.75},
            "new_version": {"with_tie": {f"general;{EVIL};ref": 0.25, f"general;ref;{EVIL}": 0.75}},
            "old_version": {"win+halfdraw": {"columns": ["model", "Overall-lang"], "rows": [[EVIL, 0.5]]}},
            EVIL: [{"a&b": "<img src=x onerror=alert(1)>"}],
        },
        metrics={f"{EVIL};x": 0.5},
        diagnostics=['"><img src=x onerror=alert(1)>'],
    )


def test_strings_are_escaped() -> None:
    outcomes = [GateOutcome(f"{EVIL};x", ">=", 0.9, 0.5, False, f"{EVIL};x>=0.9")]
    html = render(_evil_report(), "html", outcomes)
    assert "<script>alert" not in html
    assert "<img" not in html
    doc = parse(html)
    assert not doc.errors and not doc.stack
    assert [t for t, _ in doc.tags if t == "script"] == ["script"]
    assert EVIL in "".join(doc.text)  # shown as text
    assert_self_contained(html)


def test_intervals_from_result_and_attribute() -> None:
    base = dict(
        family="grounding",
        signature="s",
        result={"precision": 0.5, "chr": 0.25, "intervals": {"precision": {"low": 0.375, "high": 0.625}}},
        metrics={"precision": 0.5, "chr": 0.25},
        diagnostics=[],
        reference_pass=None,
        family_gates=(),
    )
    html = render(Report(**base), "html")
    assert 'data-v="0.375"' in html and 'data-v="0.625"' in html and 'class="interval"' in html
    assert _charts.intervals_of(Report(**base)) == {"precision": (0.375, 0.625)}
    # an object with an ``intervals`` attribute (e.g. a future Report field)
    obj = SimpleNamespace(
        **dict(base, result={"precision": 0.5, "chr": 0.25}), intervals={"chr": {"low": 0.125, "high": 0.5}}
    )
    assert _charts.intervals_of(obj) == {"chr": (0.125, 0.5)}  # type: ignore[arg-type]
    assert 'data-v="0.125"' in _html.render_html(obj, [])  # type: ignore[arg-type]
    # none: plain bars
    plain = render(Report(**dict(base, result={"precision": 0.5, "chr": 0.25})), "html")
    assert 'class="interval"' not in plain


def test_ci_pairs_in_the_result_are_intervals() -> None:
    r = Report("factuality", "s", {"score": 0.5, "score_ci_low": 0.25, "score_ci_high": 0.75}, {"score": 0.5})
    assert _charts.intervals_of(r) == {"score": (0.25, 0.75)}


def test_odd_values_do_not_break_the_page() -> None:
    r = Report(
        "grounding",
        "s",
        {
            "precision": None,
            "chr": float("nan"),
            "under_refusal": 1e-300,
            "over_refusal": 12.5,
            "weird": [[1, [2]], {}],
        },
        {"precision": None, "chr": float("nan")},
        reference_pass=False,
    )
    html = render(r, "html", [GateOutcome("precision", ">=", 0.8, None, False, "precision>=0.8")])
    assert "FAIL" in html
    assert not parse(html).errors
    for family in ("rgb", "mtrag", "factuality", "compare", "pairwise", "rouge", "unknown"):
        junk = Report(family, "s", {"abilities": [1], "settings": {"x": 1}, "metrics": [2], "mean": 3, "lines": 4}, {})
        html = render(junk, "html")
        assert html.endswith("</body></html>\n")


def test_long_lists_are_truncated_with_a_note() -> None:
    r = Report("rouge", "s", {"rows": [{"i": i} for i in range(_charts.MAX_ROWS + 5)]}, {})
    html = render(r, "html")
    assert f"showing the first {_charts.MAX_ROWS} of {_charts.MAX_ROWS + 5} entries" in html


def test_html_renderer_is_imported_lazily() -> None:
    code = "import sys, rageval_min.cli, rageval_min.report; print('rageval_min.report.render_html' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


# ---------------------------------------------------------------------------
# a real browser

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
    "--window-size=1200,1600",
]


def chromium_screenshot(browser: str, html_path: str, png: str, dark: bool = False) -> List[str]:
    """One Chromium launch: screenshot ``html_path`` to ``png``; return the page's console lines."""
    with tempfile.TemporaryDirectory() as profile:
        argv = [browser] + CHROMIUM_FLAGS + [f"--user-data-dir={profile}", f"--screenshot={png}"]
        if dark:
            argv += ["--force-dark-mode", "--blink-settings=preferredColorScheme=0"]
        env = dict(os.environ, HOME=profile)
        for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            env.pop(var, None)
        proc = subprocess.run(
            argv + ["file://" + os.path.abspath(html_path)],
            capture_output=True,
            text=True,
            timeout=90,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@pytest.mark.parametrize("name", list(CASES))
def test_page_renders_in_chromium(pages: Dict[str, Page], name: str, tmp_path_factory: Any) -> None:
    browser = need_program("chromium", "browser", "apt-get install chromium")
    page = _page(pages, name)
    png = os.path.join(artifacts_dir(tmp_path_factory), f"{name}.png")
    console = chromium_screenshot(browser, page.path, png)
    rendered = [line for line in console if "rageval-min-html: rendered" in line]
    others = [line for line in console if "rageval-min-html: rendered" not in line]
    assert rendered, "the page's script did not run"
    assert not others, others
    with open(png, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(head[16:20], "big") == 1200


def test_dark_scheme_renders_in_chromium(pages: Dict[str, Page], tmp_path_factory: Any) -> None:
    browser = need_program("chromium", "browser", "apt-get install chromium")
    page = _page(pages, "pairwise")
    png = os.path.join(artifacts_dir(tmp_path_factory), "pairwise-dark.png")
    console = chromium_screenshot(browser, page.path, png, dark=True)
    assert [line for line in console if "rageval-min-html: rendered" not in line] == []
    assert os.path.getsize(png) > 1000


def test_escaped_page_runs_only_its_own_script(tmp_path: Any, tmp_path_factory: Any) -> None:
    browser = need_program("chromium", "browser", "apt-get install chromium")
    path = tmp_path / "evil.html"
    outcomes = [GateOutcome(f"{EVIL};x", ">=", 0.9, 0.5, False, f"{EVIL};x>=0.9")]
    path.write_text(render(_evil_report(), "html", outcomes), encoding="utf-8")
    console = chromium_screenshot(browser, str(path), os.path.join(artifacts_dir(tmp_path_factory), "escaping.png"))
    assert [line for line in console if "rageval-min-html: rendered" not in line] == []
    assert any("rageval-min-html: rendered" in line for line in console)


def test_merge_writes_the_same_page(tmp_path: Any) -> None:
    gold = os.path.join(GOLD, "grounding")
    direct, merged, partial = (str(tmp_path / n) for n in ("direct.html", "merged.html", "p.json"))
    argv = ["grounding", "--gold", os.path.join(gold, "gold.jsonl"), "--trace", os.path.join(gold, "trace.jsonl")]
    res = run_cli(argv + ["--emit-partial", partial, "--output", f"html:{direct}"])
    if res.code == 2 and "--emit-partial" in res.err:
        pytest.skip("--emit-partial is not available in this tree")
    assert res.code == 1, res.err
    res = run_cli(["merge", partial, "--output", f"html:{merged}"])
    assert res.code == 1, res.err
    assert open(direct, encoding="utf-8").read() == open(merged, encoding="utf-8").read()


def test_large_distributions_become_histograms() -> None:
    from rageval_min.report.svg import MAX_STACK, dot_plot

    few = dot_plot([(str(i), i / 10) for i in range(10)], title="few")
    assert few.count("<circle") == 10 and few.count('class="datum"') == 10
    many = dot_plot([(str(i), 0.5) for i in range(MAX_STACK * 4)] + [("x", None)], title="many")
    assert "<circle" not in many and f"{MAX_STACK * 4} values in [0.5, 0.55)" in many
    assert "undefined (not drawn): x" in many


def test_pairwise_page_splits_consistency_per_model(tmp_path):
    out = tmp_path / "p.html"
    record = os.path.join(ROOT, "gold_samples", "pairwise", "record_fakejudge_2.tsv")
    argv = ["pairwise", "score", "--record", record, "--nopt", "2", "--refm", "ref"]
    argv += ["--extra", "per_model_consistency", "--format", "html", "--output", str(out)]
    assert run_cli(argv).code == 0
    page = out.read_text(encoding="utf-8")
    for model in ("m1", "m2", "m3"):
        assert f"{model}: swap consistency over" in page


def test_compare_colours_follow_the_verdict_and_axes_ignore_last_bit_noise() -> None:
    """A metric whose verdict is "no significant change" is not drawn red because some pairs moved
    down, and an interval bound of 1.0000000000000002 does not stretch a 0..1 axis to 2."""
    m = {
        "kind": "binary",
        "direction": "higher",
        "n": 20,
        "baseline": 0.5,
        "candidate": 0.5,
        "delta": 0.0,
        "ci_low": -0.1,
        "ci_high": 0.1,
        "p_value": 1.0,
        "test": "mcnemar_exact",
        "improved": 2,
        "regressed": 2,
        "baseline_ci": [0.3, 1.0000000000000002],
        "candidate_ci": [0.3, 0.7],
        "verdict": "no significant change",
    }
    result = {"key": "id", "paired": 20, "only_baseline": 0, "only_candidate": 0, "metrics": {"hit": m}}
    page = render(Report("compare", "sig", result, {"hit.delta": 0.0}), "html")
    assert '<span class="st-fail">' not in page and "no significant change" in page
    ticks = re.findall(r'class="tick"[^>]*>([^<]*)</text>', page)
    assert "1" in ticks and "2" not in ticks, ticks
