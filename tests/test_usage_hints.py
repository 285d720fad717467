"""Typos that used to succeed or to say nothing useful (issues #23 and #24): each is exit 2 with one line
saying what to do, and nothing is written."""

import os

from conftest import ROOT, run_cli

GOLD = os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl")
TRACE = os.path.join(ROOT, "gold_samples", "grounding", "trace.jsonl")
BASE = ["grounding", "--gold", GOLD, "--trace", TRACE]


def test_an_unknown_output_format_word_is_exit_2_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run_cli(BASE + ["--output", "junt:r.xml"])
    assert r.code == 2 and r.err.count("\n") == 1 and not os.listdir(tmp_path)
    assert "'junt' is not a format (did you mean junit:?" in r.err and "./junt:r.xml" in r.err
    assert "json, text, markdown, junit, html, wfgy" in r.err
    r = run_cli(BASE + ["--output", "./junt:r.xml", "--gate", "chr>=0"])  # a path that really has a colon
    assert r.code == 0 and os.listdir(tmp_path) == ["junt:r.xml"]


def test_gate_syntax_mistakes_say_what_to_do():
    r = run_cli(BASE + ["--gate", "precision"])  # `--gate precision>=0.8` unquoted: the shell ate ">=0.8"
    assert r.code == 2 and "quote the whole gate" in r.err and "redirection" in r.err
    r = run_cli(BASE + ["--gate", "precision=0.8"])
    assert r.code == 2 and "for equality write ==" in r.err
    for bad in ("precision>=inf", "precision>=-inf", "precision<=nan", "precision>=1e999"):
        r = run_cli(BASE + ["--gate", bad])
        assert r.code == 2 and r.err.count("\n") == 1, bad


def test_a_near_miss_option_gets_a_did_you_mean():
    r = run_cli(["rouge", "--input", os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl"), "--gates", "x>=0"])
    assert r.code == 2 and r.err.count("\n") == 1 and "did you mean --gate?" in r.err
    r = run_cli(BASE + ["--per-items", "x.jsonl"])
    assert r.code == 2 and "did you mean --per-item?" in r.err
