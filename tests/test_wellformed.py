"""Every output well-formed whatever the names in the data (issue #23 item 5): JUnit is XML 1.0 that
a strict parser reads, and names reach the terminal with control characters escaped."""

import io
import xml.etree.ElementTree as ET

from rageval_min._cli_common import CliIO, printable, report_gates
from rageval_min.gates import GateOutcome
from rageval_min.report import Report, render

NASTY = "model\x00\x07\x1b[2J\ud800\ufffe\u2028end"


def _report() -> Report:
    gate = GateOutcome(f"win;{NASTY}", ">=", 0.5, 0.25, False, f"win;{NASTY}>=0.5")
    return Report("pairwise", f"sig\x01{NASTY}", {"x": NASTY}, {f"win;{NASTY}": 0.25}, [f"note {NASTY}"], None, [gate])


def test_junit_is_well_formed_xml_whatever_the_names():
    text = render(_report(), "junit")
    root = ET.fromstring(text.encode("utf-8"))  # raises on any character XML 1.0 cannot hold
    case = root.find("testsuite/testcase")
    assert case is not None and "\\x07" in case.get("name", "") and "\\ud800" in case.get("name", "")
    assert "\x07" not in text and "\x1b" not in text


def test_gate_lines_escape_control_characters():
    err = io.StringIO()
    assert report_gates(_report(), [], CliIO(io.StringIO(), err)) == 1
    line = err.getvalue()
    assert line.count("\n") == 1 and "\x1b" not in line and "\\x1b[2J" in line and "\\u2028" in line
    assert printable("plain text, ünïcode ✓") == "plain text, ünïcode ✓"


def test_gates_the_reference_did_not_evaluate_show_their_own_outcome():
    """grounding's reference stops at its first failing gate; a later gate that fails on its own value
    is shown failing (with the short-circuit said beside it), never as merely 'not evaluated'."""
    import os

    from conftest import ROOT, run_cli

    g = os.path.join(ROOT, "gold_samples", "grounding")
    argv = ["grounding", "--gold", os.path.join(g, "gold.jsonl"), "--trace", os.path.join(g, "trace.jsonl")]
    text = run_cli(argv + ["--format", "text"])
    assert text.code == 1
    assert "chr>=0.75            0.666667  FAIL (not evaluated by the reference: an earlier gate failed)" in text.out
    assert "under_refusal<=0.05  0         pass (not evaluated by the reference" in text.out
    junit = ET.fromstring(run_cli(argv + ["--format", "junit"]).out.encode("utf-8"))
    assert junit.get("failures") == "2" and junit.get("skipped") == "2"
    html = run_cli(argv + ["--format", "html"]).out
    assert '<span class="st-fail">FAIL (not evaluated by the reference' in html
