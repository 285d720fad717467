"""Issue #23 item 1, second pass: the number texts and option readers routed through
``rageval_min/_numbers.py`` keep their messages, and the few that gained a check say what is wrong
in one line naming the file or the option.  (The readers themselves: their doctests.)"""

import argparse
import json
import os

import pytest
from conftest import ROOT, run_cli

from rageval_min import _numbers
from rageval_min._parallel import jobs_from_text
from rageval_min.compare.cli import _positive_int
from rageval_min.errors import ScoringError
from rageval_min.factuality.cli import _int_option, _open_unit_float
from rageval_min.gates import parse_gate
from rageval_min.judges.agreement_cli import _int_at_least
from rageval_min.judges.options import _concurrency, _timeout
from rageval_min.judges.sampling import parse_pass_rule
from rageval_min.judges.trust_options import _samples, _tokens


def _message(read, text):
    with pytest.raises(argparse.ArgumentTypeError) as info:
        read(text)
    return str(info.value)


@pytest.mark.parametrize(
    "read,text,message",
    [
        (_positive_int, "x", "not an integer: 'x'"),
        (_positive_int, "0", "must be at least 1"),
        (_int_at_least(2), "1", "must be at least 2"),
        (_samples, "1001", "must be between 1 and 1000"),
        (_tokens, "-1", "must be >= 0"),
        (_concurrency, "1.5", "not an integer: '1.5'"),
        (_timeout, "0", "must be a number of seconds in (0, 3600]"),
        (_timeout, "inf", "must be a number of seconds in (0, 3600]"),
        (_timeout, "soon", "not a number: 'soon'"),
        (_int_option("--gamma", 0, 10**6), "-1", "--gamma must be from 0 to 1000000, got -1"),
        (_int_option("--gamma", 0, 10**6), "1e3", "--gamma: not an integer: '1e3'"),
        (
            _int_option("--gamma", 0, 10**6),
            "9" * 5000,
            "--gamma must be from 0 to 1000000, got a number of 5000 digits",
        ),
        (_open_unit_float("--confidence"), "1", "--confidence must be a number between 0 and 1, got '1'"),
        (_open_unit_float("--confidence"), "nan", "--confidence must be a number between 0 and 1, got 'nan'"),
        (_open_unit_float("--confidence"), "x", "--confidence: not a number: 'x'"),
        (_positive_int, "9" * 5000, "an integer of more than 30 digits is not supported, got a number of 5000 digits"),
    ],
)
def test_option_wrappers_keep_their_wording(read, text, message):
    assert _message(read, text) == message


def test_option_wrappers_accept_what_they_accepted():
    assert _positive_int(" 7 ") == 7 and _samples("1000") == 1000 and _tokens("0") == 0
    assert _timeout("3600") == 3600.0 and _open_unit_float("--confidence")("0.95") == 0.95
    assert _int_option("--seed", -(2**63) + 1, 2**63 - 1)(str(2**63 - 1)) == 2**63 - 1


def test_number_texts_read_through_the_shared_readers():
    assert jobs_from_text("4") == 4
    with pytest.raises(ScoringError, match=r"--jobs must be a number or auto, got 'x'"):
        jobs_from_text("x")
    assert parse_gate("f1>=0.5").threshold == 0.5
    with pytest.raises(ScoringError, match="is not a number"):
        parse_gate("f1>=half")
    assert parse_pass_rule("at-least:3").param == 3 and parse_pass_rule("rate:0.5").param == 0.5
    with pytest.raises(ScoringError, match="K must be an integer >= 1"):
        parse_pass_rule("at-least:" + "9" * 5000)
    assert _numbers.int_text("9" * 4301) is None and _numbers.int_text("9" * 4300) == int("9" * 4300)


@pytest.mark.parametrize(
    "extra,field,problem",
    [
        ({"rel_tol": "x"}, "[0].rel_tol", "must be a finite number >= 0"),
        ({"rel_tol": -1}, "[0].rel_tol", "must be a finite number >= 0"),
        ({"exit": "1"}, "[0].exit", "must be an exit code (an integer from 0 to 255)"),
        ({"exit": 10**400}, "[0].exit", "must be an exit code (an integer from 0 to 255)"),
    ],
)
def test_demo_case_numbers_are_checked(tmp_path, extra, field, problem):
    src = os.path.join(ROOT, "gold_samples", "grounding", "cases.json")
    with open(src, encoding="utf-8") as fh:
        case = json.load(fh)[0]
    (tmp_path / "grounding").mkdir()
    (tmp_path / "grounding" / "cases.json").write_text(json.dumps([dict(case, **extra)]), encoding="utf-8")
    r = run_cli(["demo", "--samples", str(tmp_path)])
    assert r.code == 2 and r.err.count("\n") == 1, (r.code, r.err)
    assert f"cases.json: {field}: {problem}" in r.err, r.err


def test_plain_options_keep_argparse_wording():
    """Options that were argparse's bare ``type=int`` / ``type=float`` read through ``_numbers`` now
    and keep argparse's message."""
    b, c = (os.path.join(ROOT, "gold_samples", "compare", n) for n in ("baseline.jsonl", "candidate.jsonl"))
    base = ["compare", "--baseline", b, "--candidate", c, "--key", "qid"]
    r = run_cli(base + ["--seed", "x"])
    assert r.code == 2 and "argument --seed: invalid int value: 'x'" in r.err and r.err.count("\n") == 1, r.err
    r = run_cli(base + ["--alpha", "1,5"])
    assert r.code == 2 and "argument --alpha: invalid float value: '1,5'" in r.err, r.err
