"""Mirrors openai/human-eval@9d3aa8b:human_eval/evaluation.py (pass@k); pipeline step: repeated judge sampling.

Pass rules over the votes of one item, self-consistency and flip-rate
statistics, and the unbiased pass@k estimator.

A judge asked ``N`` times about one item gives a *vote vector*: booleans for a
pass/fail judge, numbers for a scoring judge, ``None`` for a sample without a
verdict (a failed call or an unparseable answer; such votes are left out of
every rule).  A pass rule turns the vector into the item's verdict; the tie
rule says what a tie becomes.  These are pure functions: the judge runner
(which asks, caches and replays the samples) calls them.

pass@k is the unbiased estimator of Chen et al. (2021), "Evaluating Large
Language Models Trained on Code", as openai/human-eval@9d3aa8b:human_eval/evaluation.py
(``estimate_pass_at_k``) computes it; the tests compare it with ``==``
against that arithmetic in numpy over a grid.
"""

import math
from typing import List, NamedTuple, Optional, Sequence, Union

from .._numbers import float_text, int_text
from ..errors import ScoringError

__all__ = [
    "PASS_RULES",
    "TIE_RULES",
    "PassRule",
    "Vote",
    "Verdict",
    "apply_rule",
    "flip_rate",
    "parse_pass_rule",
    "pass_at_k",
    "self_consistency",
]

Vote = Union[bool, int, float, None]
#: An item's verdict: pass/fail (bool), a number (median, mean), or None (undetermined).
Verdict = Union[bool, float, None]

PASS_RULES = ("majority", "all", "any", "at-least:K", "rate:R", "median", "mean")
TIE_RULES = ("fail", "pass", "undetermined")


class PassRule(NamedTuple):
    """A parsed pass rule: ``name`` and its parameter (``K`` of at-least, ``R`` of rate, else None)."""

    name: str
    param: Optional[float] = None

    @property
    def text(self) -> str:
        """The rule as written on the command line (and in a signature)."""
        if self.name == "at-least":
            return f"at-least:{int(self.param or 0)}"
        if self.name == "rate":
            return f"rate:{self.param!r}"
        return self.name


def parse_pass_rule(text: str) -> PassRule:
    """Parse ``majority``, ``all``, ``any``, ``at-least:K`` (K >= 1), ``rate:R`` (0 < R <= 1), ``median`` or ``mean``.

    >>> parse_pass_rule("at-least:2"), parse_pass_rule("rate:0.75").text
    (PassRule(name='at-least', param=2), 'rate:0.75')
    >>> parse_pass_rule("rate:1.5")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: --pass-rule 'rate:1.5': R must be in (0, 1]
    """
    name, sep, raw = text.strip().partition(":")
    if not sep and name in ("majority", "all", "any", "median", "mean"):
        return PassRule(name)
    if name == "at-least" and sep:
        k = int_text(raw) or 0
        if k < 1:
            raise ScoringError(f"--pass-rule {text!r}: K must be an integer >= 1")
        return PassRule(name, k)
    if name == "rate" and sep:
        read = float_text(raw)
        r = math.nan if read is None else read
        if not 0 < r <= 1:
            raise ScoringError(f"--pass-rule {text!r}: R must be in (0, 1]")
        return PassRule(name, r)
    raise ScoringError(f"--pass-rule {text!r}: expected one of {', '.join(PASS_RULES)}")


def _check_tie(tie: str) -> None:
    if tie not in TIE_RULES:
        raise ScoringError(f"--tie must be one of {', '.join(TIE_RULES)}, got {tie!r}")


def _tie(tie: str) -> Optional[bool]:
    return {"fail": False, "pass": True}.get(tie)


def _numbers(votes: Sequence[Vote], rule: str) -> List[float]:
    out = []
    for v in votes:
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ScoringError(f"pass rule {rule} needs numeric scores, got {v!r}")
        out.append(float(v))
    return out


def _median(values: List[float], tie: str) -> Optional[float]:
    values = sorted(values)
    n = len(values)
    if n % 2:
        return values[n // 2]
    low, high = values[n // 2 - 1], values[n // 2]
    if low == high:
        return low
    return {"fail": low, "pass": high}.get(tie)


def apply_rule(votes: Sequence[Vote], rule: PassRule, tie: str = "fail") -> Verdict:
    """The verdict of one item's ``votes`` under ``rule``; ``None`` votes are left out.

    With ``p`` passing and ``f`` failing votes (``n = p + f``):

    * ``majority``: pass when ``p > f``, fail when ``p < f``; ``p == f`` is a tie;
    * ``all``: pass when ``f == 0``; ``any``: pass when ``p >= 1``;
    * ``at-least:K``: pass when ``p >= K``; ``rate:R``: pass when ``p / n >= R``
      (compared exactly as ``p >= R * n`` in fractions of the decimal ``R``);
    * ``median``: the median score; with an even count whose two middle scores
      differ (a tie) the lower one (``tie=fail``) or the higher one (``tie=pass``);
    * ``mean``: the mean score (``math.fsum / n``).

    A tie becomes fail, pass or ``None`` (undetermined) by ``tie``.  No vote at
    all is undetermined (``None``) under every rule.  The boolean rules need
    booleans (0/1 integers count); median and mean need numbers.

    >>> r = parse_pass_rule
    >>> [apply_rule([True, False], r("majority"), t) for t in TIE_RULES]
    [False, True, None]
    >>> apply_rule([True, None, True, False], r("rate:0.66")), apply_rule([None], r("any"))
    (True, None)
    >>> apply_rule([0.5, 1.0], r("median"), "pass"), apply_rule([0.5, 1.0, 1.0], r("mean"))
    (1.0, 0.8333333333333334)
    """
    _check_tie(tie)
    if rule.name in ("median", "mean"):
        values = _numbers(votes, rule.name)
        if not values:
            return None
        return _median(values, tie) if rule.name == "median" else math.fsum(values) / len(values)
    flags = []
    for v in votes:
        if v is None:
            continue
        if v not in (0, 1) or isinstance(v, float) and not isinstance(v, bool):
            raise ScoringError(f"pass rule {rule.text} needs pass/fail votes, got {v!r}")
        flags.append(bool(v))
    if not flags:
        return None
    p = sum(flags)
    n = len(flags)
    if rule.name == "majority":
        return p > n - p if 2 * p != n else _tie(tie)
    if rule.name == "all":
        return p == n
    if rule.name == "any":
        return p >= 1
    if rule.name == "at-least":
        return p >= (rule.param or 0)
    from fractions import Fraction

    return Fraction(p, n) >= Fraction(str(rule.param))


def _present(votes: Sequence[Vote]) -> List[Vote]:
    return [v for v in votes if v is not None]


def self_consistency(items: Sequence[Sequence[Vote]]) -> Optional[float]:
    """Share of items whose samples all agree, among the items with at least two votes (``None`` votes left out).

    ``None`` when no item has two votes.

    >>> self_consistency([[True, True], [True, False, True], [False], [0.5, 0.5, None]])
    0.6666666666666666
    """
    eligible = [p for p in (_present(v) for v in items) if len(p) >= 2]
    if not eligible:
        return None
    return sum(1 for p in eligible if all(x == p[0] for x in p)) / len(eligible)


def flip_rate(items: Sequence[Sequence[Vote]], verdicts: Sequence[Verdict]) -> Optional[float]:
    """Share of items whose first vote differs from the item's verdict: how often one sample
    would have decided otherwise than the rule over all samples.

    Counted over the items with a first vote and a verdict (neither ``None``);
    ``None`` when there is none.

    >>> votes = [[True, False, False], [True, True, False], [None, True]]
    >>> flip_rate(votes, [False, True, True])
    0.5
    """
    pairs = [(v[0], d) for v, d in zip(items, verdicts) if v and v[0] is not None and d is not None]
    if not pairs:
        return None
    return sum(1 for first, d in pairs if first != d) / len(pairs)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate from ``n`` samples of which ``c`` are correct::

        pass@k = 1                                         if n - c < k
               = 1 - prod_{i = n-c+1}^{n} (1 - k / i)      otherwise

    multiplied left to right from 1.0, as human-eval's ``estimate_pass_at_k``
    (``1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))``).

    >>> pass_at_k(10, 0, 1), pass_at_k(10, 10, 5), pass_at_k(5, 2, 1)
    (0.0, 1.0, 0.3999999999999999)
    """
    if not (0 <= c <= n) or k < 1:
        raise ScoringError(f"pass@k needs 0 <= c <= n and k >= 1, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod
