"""Usage extraction and exact cost arithmetic on recorded answers of both shapes."""

import json
import os
from fractions import Fraction

import pytest
from conftest import DATA

from rageval_min.errors import ScoringError
from rageval_min.judges.cost import (
    Usage,
    UsageTotals,
    cost,
    extract_usage,
    format_usd,
    load_price_table,
    parse_price_table,
)

USAGE = os.path.join(DATA, "judge_usage")


def _answers(name):
    with open(os.path.join(USAGE, name), encoding="utf-8") as fh:
        return json.load(fh)


def _totals(name, prices):
    totals = UsageTotals()
    for answer in _answers(name):
        totals.add(extract_usage(answer), model=answer["model"], prices=prices)
    return totals


def test_openai_answers():
    got = [extract_usage(a) for a in _answers("openai_chat.json")]
    assert got == [Usage(210, 1024, 0, 3, "openai"), Usage(987, 0, 0, 2, "openai"), None]
    totals = _totals("openai_chat.json", load_price_table(os.path.join(USAGE, "prices.json")))
    # 210 * 0.15 + 1024 * 0.075 + 3 * 0.60 = 110.1 and 987 * 0.15 + 2 * 0.60 = 149.25 (per 1M tokens)
    assert totals.cost == Fraction("0.00025935")
    assert totals.metrics() == {
        "judge_prompt_tokens": 2221,
        "judge_completion_tokens": 5,
        "judge_cached_tokens": 1024,
        "judge_usage_missing": 1,  # the answer without usage is missing, not zero
        "judge_cost": 0.00025935,
    }
    assert format_usd(totals.cost) == "0.0002593500"


def test_anthropic_answers():
    got = [extract_usage(a) for a in _answers("anthropic_messages.json")]
    assert got == [
        Usage(210, 0, 2048, 4, "anthropic"),
        Usage(198, 2048, 0, 3, "anthropic"),
        Usage(201, 0, 0, 3, "anthropic"),  # no cache fields: no cached tokens
    ]
    totals = _totals("anthropic_messages.json", load_price_table(os.path.join(USAGE, "prices.json")))
    # 630 + 7680 + 60 = 8370; 594 + 614.4 + 45 = 1253.4; 603 + 45 = 648 (dollars per 1M tokens)
    assert totals.cost == Fraction("0.0102714")
    assert totals.metrics()["judge_prompt_tokens"] == 2258 + 2246 + 201
    assert totals.metrics()["judge_usage_missing"] == 0


def test_exact_sums_where_floats_drift():
    table = parse_price_table('{"models": {"m": {"prompt": 0.1, "completion": 0.2}}}')
    totals = UsageTotals()
    for _ in range(10):
        totals.add(Usage(1, 0, 0, 1, "openai"), model="m", prices=table)
    assert totals.cost == Fraction(3, 1_000_000)
    assert sum([(0.1 + 0.2) / 1e6] * 10) != 3e-6  # what float arithmetic would have given
    assert totals.metrics()["judge_cost"] == 3e-6
    assert format_usd(Fraction(1, 8), 2) == "0.12" and format_usd(Fraction(3, 8), 2) == "0.38"  # half-even


def test_bad_usage_and_price_tables():
    assert extract_usage({"usage": None}) is None
    assert extract_usage({"usage": {"total_tokens": 5}}) is None
    assert extract_usage({"usage": {"prompt_tokens": 5}}) is None  # no completion count: missing
    for bad in (
        {"prompt_tokens": -1, "completion_tokens": 1},
        {"prompt_tokens": 1.5, "completion_tokens": 1},
        {"prompt_tokens": 1, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 2}},
    ):
        with pytest.raises(ScoringError):
            extract_usage({"usage": bad})
    for text in (
        "[]",
        '{"models": {}}',
        '{"models": {"m": {"prompt": -1}}}',
        '{"models": {"m": {"input": 1}}}',
        '{"models": {"m": {"prompt": "abc"}}}',
        '{"models": {"m": {"prompt": true}}}',
        "{",
    ):
        with pytest.raises(ScoringError):
            parse_price_table(text)
    table = parse_price_table('{"models": {"m": {"prompt": 1}}}')
    with pytest.raises(ScoringError, match="no 'completion' price"):
        cost(Usage(1, 0, 0, 1, "openai"), "m", table)
    with pytest.raises(ScoringError, match="no model"):
        cost(Usage(1, 0, 0, 0, "openai"), "other", table)
    assert cost(Usage(2, 0, 0, 0, "openai"), "m", table) == Fraction(2, 1_000_000)  # unused prices not needed
