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
