"""What each metric and each input field *is*, declared once by the family that owns it.

Every scoring command declares, on its accumulator class (see
:class:`rageval_min._contract.Accumulator`):

``METRICS``
    a tuple of :class:`Metric`: every metric the command can emit, in its
    report (gateable ``Report.metrics``) and in its item rows (``per_item``),
    with its direction (which way is better, or ``neither``), its kind and a
    one-line meaning.  A name may hold ``{placeholders}`` for the parts that
    depend on the data (``win_rate;{model}``); :func:`find_metric` matches them.
``INPUTS``
    a tuple of :class:`Input`: for each input file option, the fields a record
    has, which are required, and what the reference's reading makes of a
    missing one.

``compare``, ``--intervals``, gates, the HTML charts and ``--help`` read these
declarations instead of keeping tables of their own.

>>> m = Metric("under_refusal", "lower", "rate", "shipped answers to unanswerable questions / unanswerable",
...            per_item=True, numerator="under", denominator="unanswerable", lo=0.0, hi=1.0)
>>> find_metric((m,), "under_refusal").direction
'lower'
>>> find_metric((Metric("win_rate;{model}", "higher", "rate", "wins / comparisons"),), "win_rate;gpt-4").name
'win_rate;{model}'
>>> find_metric((m,), "unknown") is None
True
"""

from __future__ import annotations

import re
from functools import lru_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Iterable, NamedTuple, Optional, Pattern, Sequence, Tuple
else:
    from ._namedtuple import NamedTuple

__all__ = [
    "DIRECTIONS",
    "Input",
    "InputField",
    "KINDS",
    "Metric",
    "check_declarations",
    "find_metric",
    "per_item_directions",
    "rate_fields",
]

#: Which way a metric is better: ``neither`` for descriptive numbers (``answered``, ``Length``).
DIRECTIONS = ("higher", "lower", "neither")

#: What a metric is: a 0/1 outcome per item, a rate (numerator / denominator), a mean of item
#: values, a count, or a statistic of the whole sample (a correlation, a kappa, a p-value).
KINDS = ("outcome", "rate", "mean", "count", "statistic")


class Metric(NamedTuple):
    """One metric a command can emit."""

    #: canonical name, as in gates and outputs; ``{x}`` stands for a data-dependent part
    name: str
    #: ``higher``, ``lower`` or ``neither`` is better
    direction: str
    #: one of :data:`KINDS`
    kind: str
    #: one line: what it measures
    meaning: str
    #: True when item rows (``--per-item``) carry it, so ``compare`` can pair it
    per_item: bool = False
    #: for a rate computed from item rows: the item field counted and the one counting the trials
    numerator: str = ""
    denominator: str = ""
    #: the declared range (charts clamp their axes to it); None where it is open
    lo: Optional[float] = None
    hi: Optional[float] = None


class InputField(NamedTuple):
    """One field of an input record."""

    name: str
    #: the JSON types the reference reads: "string", "number", "integer", "boolean", "array", "object", "null"
    types: Tuple[str, ...]
    required: bool
    #: what a missing field becomes in the reference's reading (for the diagnostics), e.g. "read as a refusal"
    when_missing: str = ""


class Input(NamedTuple):
    """The records of one input file of a command."""

    #: the command-line option that names the file (``--gold``)
    option: str
    #: what the file holds, in a few words (``gold answers``)
    what: str
    #: the field that identifies a record, if any
    key: str
    fields: Tuple[InputField, ...]


@lru_cache(maxsize=None)
def _pattern(name: str) -> Pattern[str]:
    parts = re.split(r"(\{[^{}]*\})", name)
    return re.compile("".join(".+" if p.startswith("{") and p.endswith("}") else re.escape(p) for p in parts) + r"\Z")


def find_metric(metrics: Iterable[Metric], name: str) -> Optional[Metric]:
    """The declaration of ``name``: an exact name first, then a name with placeholders."""
    declared = list(metrics)
    for m in declared:
        if m.name == name:
            return m
    for m in declared:
        if "{" in m.name and _pattern(m.name).match(name):
            return m
    return None


def per_item_directions(metrics: Iterable[Metric]) -> Dict[str, str]:
    """``{name: direction}`` of the per-item metrics whose direction is known (the old ``DIRECTIONS``)."""
    return {m.name: m.direction for m in metrics if m.per_item and m.direction != "neither"}


def rate_fields(metrics: Iterable[Metric]) -> Dict[str, Tuple[str, Optional[str]]]:
    """``{name: (numerator field, denominator field or None)}`` of the rates computed from item rows."""
    return {m.name: (m.numerator, m.denominator or None) for m in metrics if m.kind == "rate" and m.numerator}


def check_declarations(metrics: Sequence[Metric], inputs: Sequence[Input] = ()) -> None:
    """Raise ``ValueError`` naming the first malformed declaration (a test calls it for every command)."""
    seen = set()
    for m in metrics:
        if m.direction not in DIRECTIONS or m.kind not in KINDS or not m.meaning.strip():
            raise ValueError(f"metric {m.name!r}: direction, kind and meaning must be declared")
        if m.name in seen:
            raise ValueError(f"metric {m.name!r} declared twice")
        if (m.lo is not None and m.hi is not None) and not m.lo < m.hi:
            raise ValueError(f"metric {m.name!r}: empty range")
        seen.add(m.name)
    for inp in inputs:
        if not inp.option.startswith("--") and inp.option != "INPUT":
            raise ValueError(f"input {inp.option!r}: name the command-line option")
        names = [f.name for f in inp.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"input {inp.option!r}: a field declared twice")
