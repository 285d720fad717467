"""Threshold gates: ``NAME OP VALUE`` checks over a result's numeric outputs.

A gate is written ``"precision>=0.8"`` (spaces allowed around the operator).
``OP`` is one of ``>= <= > < ==``; ``NAME`` is any numeric output key of the
family (the keys of :attr:`Report.metrics`); ``VALUE`` is a decimal number.
Gates compare the **unrounded** value.  A gate whose name the family does not
produce is a usage error listing the valid names.  ``==`` compares exactly, so
it is meant for counts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from ._numbers import float_text
from .errors import ScoringError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, List, NamedTuple, Optional, Sequence, Union
else:
    from ._namedtuple import NamedTuple

__all__ = ["BOUNDS", "Gate", "GateOutcome", "OPERATORS", "evaluate_gates", "parse_gate"]

if TYPE_CHECKING:
    Number = Union[int, float]

OPERATORS = (">=", "<=", "==", ">", "<")

# compiled by re's cache when a gate is first parsed, not at start-up
_GATE_RE = r"^\s*(?P<name>[^<>=\s]+)\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>\S+)\s*$"


class Gate(NamedTuple):
    """A parsed gate."""

    name: str
    op: str
    threshold: float
    text: str


class GateOutcome(NamedTuple):
    """The outcome of one gate.

    ``passed`` is None when the gate was not evaluated (a reference gate after
    an earlier one failed, which the reference short-circuits).
    """

    name: str
    op: str
    threshold: float
    value: Optional[Number]
    passed: Optional[bool]
    text: str


def parse_gate(text: str) -> Gate:
    """Parse ``"NAME OP VALUE"``.

    >>> parse_gate("precision >= 0.8")
    Gate(name='precision', op='>=', threshold=0.8, text='precision>=0.8')
    >>> parse_gate("recall@k<0.5").name
    'recall@k'
    >>> parse_gate("precision=0.8")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: --gate 'precision=0.8': expected NAME OP VALUE with OP one of >= <= == > <; ...
    """
    m = re.match(_GATE_RE, text)
    if not m:
        raise ScoringError(f"--gate {text!r}: expected NAME OP VALUE with OP one of {' '.join(OPERATORS)}{_hint(text)}")
    threshold = float_text(m.group("value"))
    if threshold is None:
        raise ScoringError(f"--gate {text!r}: {m.group('value')!r} is not a number")
    if not math.isfinite(threshold):
        raise ScoringError(f"--gate {text!r}: the threshold must be a finite number")
    canonical = f"{m.group('name')}{m.group('op')}{m.group('value')}"
    return Gate(m.group("name"), m.group("op"), threshold, canonical)


def _hint(text: str) -> str:
    """What probably went wrong with a gate that has no operator."""
    if text.strip() and not any(c in text for c in "<>="):
        return (
            '; quote the whole gate, as in --gate "precision>=0.8": unquoted, the shell takes > as a '
            "redirection (and may have written a file named after the threshold)"
        )
    if "=" in text and not any(op in text for op in OPERATORS):
        return "; for equality write =="
    return ""


def compare(value: Number, op: str, threshold: float) -> bool:
    """Apply ``op``; a NaN value never passes."""
    if isinstance(value, float) and math.isnan(value):
        return False
    if op == ">=":
        return value >= threshold
    if op == "<=":
        return value <= threshold
    if op == ">":
        return value > threshold
    if op == "<":
        return value < threshold
    if op == "==":
        return value == threshold
    raise ScoringError(f"unknown gate operator {op!r}")


#: The suffixes that name a bound of a metric's ``--intervals`` interval in a gate (``precision.ci_low>=0.7``).
BOUNDS = (".ci_low", ".ci_high")


def check_gate_names(gates: Iterable[Gate], names: Iterable[str]) -> None:
    """Raise a usage error if a gate names no known metric, nor a bound (:data:`BOUNDS`) of one."""
    valid = list(names)
    known = set(valid)
    for gate in gates:
        base = gate.name[: -len(gate.name.split(".")[-1]) - 1] if gate.name.endswith(BOUNDS) else None
        if gate.name not in known and base not in known:
            # the first 30 names: a line of bounded length
            shown = valid if len(valid) <= 30 else valid[:30] + [f"... ({len(valid) - 30} more)"]
            raise ScoringError(
                f"--gate {gate.text!r}: unknown metric {gate.name!r}; valid names: "
                + ", ".join(shown)
                + " (and NAME.ci_low, NAME.ci_high: the bounds of a metric's interval)"
            )


def evaluate_gates(
    gates: Sequence[Union[Gate, str]], metrics: Union[Mapping[str, Optional[Number]], Any]
) -> List[GateOutcome]:
    """Evaluate every gate against ``metrics``: a mapping, or any family's report (its ``.metrics``).

    Gates may be given parsed or as ``"NAME OP VALUE"`` text.  A metric whose
    value is None (undefined for this input) fails its gate.

    >>> [o.passed for o in evaluate_gates([parse_gate("chr>=0.75")], {"chr": 0.5})]
    [False]
    >>> [o.passed for o in evaluate_gates(["chr>=0.25"], {"chr": 0.5})]
    [True]
    """
    if not isinstance(metrics, Mapping):
        metrics = metrics.metrics
    parsed = [parse_gate(g) if isinstance(g, str) else g for g in gates]
    check_gate_names(parsed, metrics)
    out = []
    for gate in parsed:
        value = metrics[gate.name]
        passed = value is not None and compare(value, gate.op, gate.threshold)
        out.append(GateOutcome(gate.name, gate.op, gate.threshold, value, passed, gate.text))
    return out
