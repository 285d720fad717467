"""Pipeline step: ``--samples N`` -- the N answers of each item turned into one result by the pass rule.

The runner asks each prompt of a sampled step ``N`` times (sample ``s`` cached
under :func:`~rageval_min.judges.cache.sample_key`), parses every answer with
the step's parser, and this module turns each item's samples into the one
result the family reads, so a family's code after the runner does not change:

* each parsed answer becomes a *vote* through the step's ``vote`` function; an
  unparseable answer is no vote (``None``);
* the votes give the item's *verdict* (:func:`decide`) by the vote kind of the
  step: ``bool`` votes (pass/fail verdicts) follow
  :func:`~rageval_min.judges.sampling.apply_rule` (``majority``, ``all``,
  ``any``, ``at-least:K``, ``rate:R``); ``number`` votes (scores) take
  ``median``, ``mean`` (``apply_rule``) or ``majority``, the most frequent
  value; ``label`` votes (choices, free text) take ``majority`` only, the most
  frequent label;
* the item's answer and parsed value are those of its first sample whose vote
  equals the verdict (the *representative*), so a family that stores the
  answer text (and parses it again later) reads the verdict back; when no
  sample voted the verdict (``mean``; ``bool`` votes with unparseable samples)
  the parsed value is the verdict itself and the answer ``None``.

Ties: ``bool`` and ``median`` ties follow ``--tie`` (``apply_rule``); a
``majority`` tie of ``number`` votes takes the lowest (``fail``) or highest
(``pass``) tied value; a ``majority`` tie of ``label`` votes is undetermined
under every ``--tie`` (no label is a pass or a fail).  An undetermined item
has no answer and no value and the error ``undetermined: ...``, so a family
treats it as it treats a failed call; it is counted in ``judge_undetermined``,
not in ``judge_failures``.  An item with a failed sample is failed (its first
error); an item whose samples are all unparseable keeps sample 0's answer and
fallback, as an unsampled run does.
"""

from collections import Counter
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple

from ..errors import ScoringError
from .interface import UnparseableAnswer
from .sampling import TIE_RULES, PassRule, apply_rule, flip_rate, parse_pass_rule, self_consistency

__all__ = ["KINDS", "SampleStats", "Sampling", "combine_item", "decide", "rules_for"]

#: The kinds of vote a sampled step declares.
KINDS = ("bool", "number", "label")


class Sampling(NamedTuple):
    """``--samples N``, ``--pass-rule`` and ``--tie`` of one command line."""

    samples: int = 1
    rule: PassRule = PassRule("majority")
    tie: str = "fail"

    def checked(self) -> "Sampling":
        """These options, if consistent (``at-least:K`` needs ``K <= N``); else a ScoringError."""
        if self.samples < 1:
            raise ScoringError("--samples must be at least 1")
        if self.tie not in TIE_RULES:
            raise ScoringError(f"--tie must be one of {', '.join(TIE_RULES)}")
        if self.rule.name == "at-least" and (self.rule.param or 0) > self.samples:
            raise ScoringError(f"--pass-rule {self.rule.text} asks more passes than --samples {self.samples}")
        return self

    @staticmethod
    def parse(samples: int, rule: str, tie: str) -> "Sampling":
        """From the option texts (:func:`~rageval_min.judges.sampling.parse_pass_rule`)."""
        return Sampling(samples, parse_pass_rule(rule), tie).checked()


def rules_for(kind: str) -> Tuple[str, ...]:
    """The pass rules a vote kind allows.

    >>> rules_for("label")
    ('majority',)
    """
    if kind == "bool":
        return ("majority", "all", "any", "at-least", "rate")
    if kind == "number":
        return ("majority", "median", "mean")
    return ("majority",)


def _plurality(votes: Sequence[Any], kind: str, tie: str) -> Any:
    counts = Counter(votes)
    top = max(counts.values())
    tied = [v for v in counts if counts[v] == top]  # in order of first appearance
    if len(tied) == 1:
        return tied[0]
    if kind == "number" and tie in ("fail", "pass"):
        return min(tied) if tie == "fail" else max(tied)
    return None


def decide(votes: Sequence[Any], kind: str, rule: PassRule, tie: str) -> Any:
    """The verdict of one item's votes (``None`` votes left out); ``None`` when undetermined.

    >>> r = parse_pass_rule
    >>> decide([True, False, True], "bool", r("majority"), "fail"), decide([1, 3, 3], "number", r("majority"), "fail")
    (True, 3)
    >>> decide(["A", "B"], "label", r("majority"), "pass"), decide([0.5, 1.0], "number", r("majority"), "pass")
    (None, 1.0)
    """
    if rule.name not in rules_for(kind):
        raise ScoringError(
            f"--pass-rule {rule.text} does not apply to {kind} votes (use {' or '.join(rules_for(kind))})"
        )
    present = [v for v in votes if v is not None]
    if not present:
        return None
    if kind == "bool":
        return apply_rule([bool(v) for v in present], rule, tie)
    if rule.name in ("median", "mean"):
        return apply_rule(present, rule, tie)
    return _plurality(present, kind, tie)


class SampleStats:
    """The sampled items of a command: their votes and verdicts, and the undetermined ones."""

    def __init__(self, samples: int) -> None:
        self.samples = samples
        self.votes: List[List[Any]] = []
        self.verdicts: List[Any] = []
        self.undetermined = 0

    def metrics(self) -> dict:
        """``judge_samples``, ``judge_self_consistency``, ``judge_flip_rate``, ``judge_undetermined``."""
        return {
            "judge_samples": self.samples,
            "judge_self_consistency": self_consistency(self.votes),
            "judge_flip_rate": flip_rate(self.votes, self.verdicts),
            "judge_undetermined": self.undetermined,
        }


class Item(NamedTuple):
    """One item's result: what the family reads."""

    answer: Optional[str]
    parsed: Any
    error: Optional[str]
    unparseable: int


def _parse_one(answer: str, parse: Optional[Callable[[str], Any]]) -> Tuple[Any, bool]:
    if parse is None:
        return answer, False
    try:
        return parse(answer), False
    except UnparseableAnswer as exc:
        return exc.fallback, True


def combine_item(
    answers: Sequence[Optional[str]],
    errors: Sequence[Optional[str]],
    *,
    parse: Optional[Callable[[str], Any]],
    vote: Callable[[Any], Any],
    kind: str,
    sampling: Sampling,
    stats: SampleStats,
) -> Item:
    """One item's result from its samples (see the module docstring); ``stats`` gains the item."""
    for e in errors:
        if e is not None:
            return Item(None, None, e, 0)
    parsed: List[Any] = []
    votes: List[Any] = []
    bad = 0
    for a in answers:
        value, unreadable = _parse_one(str(a), parse)
        bad += unreadable
        parsed.append(value)
        votes.append(None if unreadable else vote(value))
    if all(v is None for v in votes):
        return Item(answers[0], parsed[0], None, bad)
    verdict = decide(votes, kind, sampling.rule, sampling.tie)
    stats.votes.append(list(votes))
    stats.verdicts.append(verdict)
    if verdict is None:
        stats.undetermined += 1
        shown = ", ".join("-" if v is None else str(v) for v in votes)
        msg = f"undetermined: {len(votes)} samples, votes {shown} ({sampling.rule.text}, --tie {sampling.tie})"
        return Item(None, None, msg, bad)
    for a, p, v in zip(answers, parsed, votes):
        if v is not None and (bool(v) if kind == "bool" else v) == verdict:
            return Item(a, p, None, bad)
    return Item(None, verdict, None, bad)
