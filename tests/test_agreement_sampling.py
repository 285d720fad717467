"""Pass rules on hand-made vote vectors (ties included), self-consistency, flip rate and pass@k."""

import pytest
from conftest import need

from rageval_min.errors import ScoringError
from rageval_min.judges.sampling import (
    TIE_RULES,
    apply_rule,
    flip_rate,
    parse_pass_rule,
    pass_at_k,
    self_consistency,
)

T, F, N = True, False, None

# (votes, rule, {tie: expected})
CASES = [
    ([T, T, F], "majority", {"fail": T, "pass": T, "undetermined": T}),
    ([T, F, F], "majority", {"fail": F, "pass": F, "undetermined": F}),
    ([T, F], "majority", {"fail": F, "pass": T, "undetermined": N}),
    ([T, F, N, N], "majority", {"fail": F, "pass": T, "undetermined": N}),  # missing votes are left out
    ([T, T, F, F, N], "majority", {"fail": F, "pass": T, "undetermined": N}),
    ([N, N], "majority", {"fail": N, "pass": N, "undetermined": N}),  # no vote: undetermined under any tie rule
    ([], "all", {"fail": N, "pass": N, "undetermined": N}),
    ([T, T, T], "all", {"fail": T, "pass": T, "undetermined": T}),
    ([T, T, F], "all", {"fail": F, "pass": F, "undetermined": F}),
    ([T, N], "all", {"fail": T, "pass": T, "undetermined": T}),
    ([F, F, T], "any", {"fail": T, "pass": T, "undetermined": T}),
    ([F, F], "any", {"fail": F, "pass": F, "undetermined": F}),
    ([T, T, F, F], "at-least:2", {"fail": T, "pass": T, "undetermined": T}),
    ([T, F, F, F], "at-least:2", {"fail": F, "pass": F, "undetermined": F}),
    ([1, 0, 1], "at-least:2", {"fail": T, "pass": T, "undetermined": T}),  # 0/1 integers are votes
    ([T, T, F], "rate:0.66", {"fail": T, "pass": T, "undetermined": T}),
    ([T, T, F], "rate:0.67", {"fail": F, "pass": F, "undetermined": F}),
    ([T, F, F, F, F, F, F, F, F, F], "rate:0.1", {"fail": T, "pass": T, "undetermined": T}),  # exact boundary
    ([T, T, F], "rate:1", {"fail": F, "pass": F, "undetermined": F}),
    ([0.2, 0.9, 0.5], "median", {"fail": 0.5, "pass": 0.5, "undetermined": 0.5}),
    ([0.0, 1.0], "median", {"fail": 0.0, "pass": 1.0, "undetermined": N}),  # tie between the middle two
    ([0.5, 0.5, 1.0, 0.0], "median", {"fail": 0.5, "pass": 0.5, "undetermined": 0.5}),  # equal middles: no tie
    ([1, 0, 0.5, N], "median", {"fail": 0.5, "pass": 0.5, "undetermined": 0.5}),
    ([0.1, 0.2, 0.3], "mean", {"fail": 0.6 / 3, "pass": 0.6 / 3, "undetermined": 0.6 / 3}),  # fsum, then / n
    ([1.0, 0.0], "mean", {"fail": 0.5, "pass": 0.5, "undetermined": 0.5}),
    ([N], "mean", {"fail": N, "pass": N, "undetermined": N}),
]


@pytest.mark.parametrize("votes,rule,expected", CASES)
def test_pass_rules_on_hand_made_votes(votes, rule, expected):
    for tie in TIE_RULES:
        got = apply_rule(votes, parse_pass_rule(rule), tie)
        assert got == expected[tie] and type(got) is type(expected[tie]), (votes, rule, tie, got)


def test_bad_rules_votes_and_ties():
    for text in ("", "majority:2", "at-least:0", "at-least:x", "rate:0", "rate:1.01", "rate:nan", "best"):
        with pytest.raises(ScoringError):
            parse_pass_rule(text)
    with pytest.raises(ScoringError):
        apply_rule([T], parse_pass_rule("majority"), "coin")
    with pytest.raises(ScoringError):
        apply_rule([0.5], parse_pass_rule("majority"))
    with pytest.raises(ScoringError):
        apply_rule(["yes"], parse_pass_rule("mean"))
    with pytest.raises(ScoringError):
        apply_rule([True], parse_pass_rule("median"))
    assert parse_pass_rule("at-least:3").text == "at-least:3"


def test_self_consistency_and_flip_rate():
    items = [[T, T, T], [T, F, T], [F, F], [N, T], [T]]
    rule = parse_pass_rule("majority")
    verdicts = [apply_rule(v, rule, "undetermined") for v in items]
    assert verdicts == [T, T, F, T, T]
    assert self_consistency(items) == 2 / 3  # [N, T] and [T] have fewer than two votes
    assert flip_rate(items, verdicts) == 0.0  # every first vote equals the verdict ([N, T] has no first vote)
    items = [[F, T, T], [T, F, F], [T, F], [T, T]]
    verdicts = [apply_rule(v, rule, "undetermined") for v in items]
    assert verdicts == [T, F, N, T]
    assert flip_rate(items, verdicts) == 2 / 3  # the undetermined item is left out
    assert self_consistency([]) is None and flip_rate([], []) is None
    assert self_consistency([[0.5, 0.5], [0.5, 1.0]]) == 0.5


def _human_eval_estimator(np, n, c, k):
    # the arithmetic of human-eval's estimate_pass_at_k, reimplemented here
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))


def test_pass_at_k_equals_human_eval_over_a_grid():
    np = need("numpy", "dev", "the test extra: pip install scikit-learn (numpy)")
    checked = 0
    for n in list(range(1, 60)) + [100, 200, 500, 1000]:
        for c in sorted({0, 1, 2, n // 3, n // 2, n - 1, n} | set(range(0, n + 1, max(1, n // 17)))):
            if not 0 <= c <= n:
                continue
            for k in (1, 2, 3, 5, 10, 25, 100):
                assert pass_at_k(n, c, k) == float(_human_eval_estimator(np, n, c, k)), (n, c, k)
                checked += 1
    assert checked > 5000
    with pytest.raises(ScoringError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ScoringError):
        pass_at_k(3, 1, 0)
